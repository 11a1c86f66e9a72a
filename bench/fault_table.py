"""Faults after a release's commit (issue 33), as a table: every post-commit step boundary × backend × fault
(a raised error, SIGINT, SIGTERM), run as ``tests/test_release_faults.py`` runs them (``run_case``): the
inpatient release with ``keep_versions = 1``, version 1 published, version 2 faulted after its commit, then the
next run — a skipped one (nothing changed) after an error or SIGINT, a release of a changed source after SIGTERM.

Columns: the faulted run's exit code, its stderr (one warning line, no traceback) and catalog status, the pointer, the rows the published view returns
(against the version's ``rows_published``), whether ``<name>_releases`` lists version 2, what version 1 left
(views not dropped yet), then the next run's outcome and exit code, what version 1 left after it, and version
1's catalog status.

    .venv/bin/python bench/fault_table.py            # DuckDB and PostgreSQL (VEIL_TEST_PG_URL); a table on stdout
    .venv/bin/python bench/fault_table.py --out bench/results/fault_table.md
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import INPATIENT_COLUMNS, PG_URL, Db, ReleaseSchemas, pg_problem  # noqa: E402
from tests.test_release_faults import FAULTS, STEPS, Case, run_case, warning_line  # noqa: E402
from veil.demo import inpatient_rows  # noqa: E402

HEADER = (
    "step",
    "backend",
    "fault",
    "exit",
    "stderr",
    "status",
    "pointer",
    "rows readable",
    "v2 listed",
    "v1 views left",
    "next run",
    "next exit",
    "v1 views after",
    "v1 status",
)


@contextmanager
def backend(kind: str, workdir: Path) -> Iterator[tuple[Db, ReleaseSchemas]]:
    """A fresh inpatient table, as the ``db`` and ``release_schemas`` fixtures make it."""
    if kind == "duckdb":
        db = Db("duckdb", f"duckdb:///{workdir / 'warehouse.duckdb'}", "raw", workdir)
        db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
        yield db, ReleaseSchemas("published", "veil")
        return
    schema = f"veil_test_{uuid.uuid4().hex[:10]}"
    db = Db("postgres", PG_URL, schema, workdir)
    schemas = ReleaseSchemas(f"{schema}_pub", f"{schema}_cat")
    db.execute(f'CREATE SCHEMA "{schema}"')
    try:
        db.create_table("patients", INPATIENT_COLUMNS, inpatient_rows())
        yield db, schemas
    finally:
        db.execute(*(f'DROP SCHEMA IF EXISTS "{s}" CASCADE' for s in (schema, schemas.out, schemas.cat)))


def stderr(text: str) -> str:
    """The faulted run's stderr in a word: its one warning line (``warning_line``), or what else it was."""
    try:
        warning_line(text)
    except AssertionError:
        return "NOT one warning line: " + " ".join(text.split())[-80:]
    return "1 warning"


def row(case: Case, kind: str) -> tuple[str, ...]:
    readable = f"{case.rows} of {case.rows_published}"
    return (
        case.step,
        kind,
        case.fault,
        str(case.exit_code),
        stderr(case.stderr),
        case.status,
        f"v{case.pointer}",
        readable,
        "yes" if 2 in case.listed else "no",
        ", ".join(case.left_behind) or "-",
        f"{case.next_run} → {case.next_status}",
        str(case.next_exit),
        ", ".join(case.left_after) or "-",
        case.expired,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    kinds = ["duckdb"] + ([] if pg_problem() else ["postgres"])
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for step in STEPS:
        for kind in kinds:
            for fault in FAULTS:
                with tempfile.TemporaryDirectory() as tmp, backend(kind, Path(tmp)) as (db, schemas):
                    case = run_case(db, schemas, step, fault, "changed" if fault == "SIGTERM" else "skipped")
                lines.append("| " + " | ".join(row(case, kind)) + " |")
                print(lines[-1], file=sys.stderr, flush=True)
    table = "\n".join(lines)
    print(table)
    if args.out is not None:
        args.out.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
