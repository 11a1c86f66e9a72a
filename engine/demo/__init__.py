"""Bundled demo data: the inpatient table of Machanavajjhala et al.,
"l-Diversity: Privacy Beyond k-Anonymity", ICDE 2006 (Figure 1), with its hierarchies, and the seeded
synthetic census generator (``sql/census.sql``, run inside DuckDB)."""

from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path

DATA = Path(str(resources.files("veil.demo") / "data"))
HIERARCHIES = DATA / "hierarchies"


def census_sql() -> str:
    """The census generator's SELECT (parameters ``$rows`` and ``$seed``)."""
    return (resources.files("veil.sql") / "census.sql").read_text(encoding="utf-8")


def inpatient_rows() -> list[tuple[int, str, int, str, str]]:
    """The 12 rows of the l-diversity paper's Figure 1: (id, zip, age, nationality, condition)."""
    with (DATA / "inpatient.csv").open(newline="") as fh:
        return [(int(r["id"]), r["zip"], int(r["age"]), r["nationality"], r["condition"]) for r in csv.DictReader(fh)]
