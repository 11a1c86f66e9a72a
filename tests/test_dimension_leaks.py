"""An analyst attacks every published object of a release, for every hierarchy kind, on both backends
(docs/publication.md §1: "no published object narrows a row below its released label, nor tells which source
values occur").

The adversary is written from the docs: it knows everyone's quasi-identifiers and sensitive values (the source,
as a voter list and a registry would give them) and each column's hierarchy, reads every table and view of the
release's schema (and every string inside a JSON document there), and looks for
- a label *finer* than a version's released level of a column (a source value under a generalized label), and
- a label at the released level, or a sensitive value, that no version published (a suppressed block's, a held
  row's): its presence tells which source values occur.
Either, anywhere, fails the test.  ``test_the_adversary_finds_a_legacy_content_then_the_next_release_redacts_it``
shows the adversary catching what Veil published before (every leaf under each label).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil.errors import NoSolutionError
from veil.hierarchy import ValueKind, build
from veil.release import init, release
from tests.conftest import Db, ReleaseSchemas

NATIONS = {
    "Russian": ("European", "*"),
    "American": ("Americas", "*"),
    "Japanese": ("Asian", "*"),
    "Indian": ("Asian", "*"),
    "Martian": ("Other", "*"),
}
DEPTS = {
    "cardio": ("internal", "*"),
    "neuro": ("internal", "*"),
    "onco": ("internal", "*"),
    "derm": ("surgery", "*"),
    "ortho": ("surgery", "*"),
    "pedia": ("surgery", "*"),
    "space": ("other", "*"),
}
REGIONS = {
    "north-1": ("north", "*"),
    "north-2": ("north", "*"),
    "south-1": ("south", "*"),
    "south-2": ("south", "*"),
    "moon-1": ("moon", "*"),
    "moon-2": ("moon", "*"),
}
DISEASES = {
    "flu": ("respiratory", "*"),
    "cold": ("respiratory", "*"),
    "hiv": ("blood", "*"),
    "cancer": ("blood", "*"),
    "gastritis": ("digestive", "*"),
    "ulcer": ("digestive", "*"),
    "rare-x": ("other", "*"),
    "rare-y": ("other", "*"),
}
COLUMNS = {
    "id": sa.Integer,
    "zip": sa.Text,
    "age": sa.Integer,
    "born": sa.Date,
    "nat": sa.Text,
    "sex": sa.Text,
    "dept": sa.Text,
    "region": sa.Text,
    "disease": sa.Text,
}
KINDS = {  # kind → (column, hierarchy TOML, value kind)
    "mask": ("zip", "{ mask = true }", ValueKind.TEXT),
    "intervals": ("age", "{ intervals = [10, 20] }", ValueKind.INTEGER),
    "dates": ("born", "{ dates = true }", ValueKind.DATE),
    "csv": ("nat", '{ csv = "nat.csv" }', ValueKind.TEXT),
    "suppress": ("sex", "{ suppress = true }", ValueKind.TEXT),
    "taxonomy": (
        "dept",
        "{ taxonomy = { " + ", ".join(f"{k} = {json.dumps(list(v))}" for k, v in DEPTS.items()) + " } }",
        ValueKind.TEXT,
    ),
    "table": ("region", '{ table = "SCHEMA.regions" }', ValueKind.TEXT),
}


def people() -> list[tuple[Any, ...]]:
    """48 people in 4 regular groups, one outlier (suppressed or generalized away)."""
    rows = []
    for i in range(48):
        rows.append(
            (
                i + 1,
                f"1{3 + i % 2}0{5 + (i // 2) % 3}{i % 10}",
                20 + (i * 7) % 45,
                dt.date(1960 + i % 30, 1 + i % 12, 1 + i % 28),
                list(NATIONS)[i % 4],
                "MF"[i % 2],
                list(DEPTS)[i % 6],
                list(REGIONS)[i % 4],
                list(DISEASES)[(i * 5 + i // 6) % 6],
            )
        )
    rows.append((49, "99999", 99, dt.date(1900, 1, 1), "Martian", "X", "space", "moon-1", "rare-x"))
    return rows


def setup(db: Db, schemas: ReleaseSchemas, kind: str) -> Path:
    """The people table, the hierarchy files and tables, and a release of ``kind``'s column as the
    quasi-identifier: k=13 (every kind but ``suppress`` must generalize), distinct 2-diversity and a hierarchical
    EMD of the disease (its hierarchy is published too), up to 5% suppressed (the outlier)."""
    db.create_table("people", COLUMNS, people())
    db.create_table(
        "regions", {"level_0": sa.Text, "level_1": sa.Text, "level_2": sa.Text}, [(k, *v) for k, v in REGIONS.items()]
    )
    (db.workdir / "nat.csv").write_text("".join(f"{k};{';'.join(v)}\n" for k, v in NATIONS.items()))
    (db.workdir / "disease.csv").write_text("".join(f"{k};{';'.join(v)}\n" for k, v in DISEASES.items()))
    column, spec, _kind = KINDS[kind]
    body = f"""
[[quasi_identifiers]]
column = "{column}"
hierarchy = {spec.replace("SCHEMA", db.schema)}

[sensitive]
columns = ["disease"]

[[models]]
type = "k-anonymity"
k = 13

[[models]]
type = "distinct-l-diversity"
l = 2

[[models]]
type = "t-closeness"
t = 1.0
attribute = "disease"
distance = "hierarchical"
hierarchy = {{ csv = "disease.csv" }}

[search]
max_suppression = 0.05
""" + schemas.section("people", json.dumps([c for c in COLUMNS if c not in (column, "disease")]))
    path = db.write_config("people", body)
    init(cfg.load(path))
    return path


class Adversary:
    """What an analyst can do with the release's schema and the source's quasi-identifiers (docs)."""

    def __init__(self, db: Db, out: str, name: str) -> None:
        self.db, self.out, self.name = db, out, name

    def objects(self) -> list[str]:
        return sorted(t for s, t in self.db.objects() if s == self.out)

    def strings(self) -> Iterator[tuple[str, str]]:
        """(object, string) for every string in every published object, JSON documents opened."""
        for obj in self.objects():
            for row in self.db.query(f'SELECT * FROM "{self.out}"."{obj}"'):
                for cell in row:
                    for s in _strings(cell):
                        yield obj, s

    def versions(self) -> dict[int, list[int]]:
        """Each version's node, as ``<name>_releases`` shows it."""
        return {
            int(v): json.loads(n)
            for v, n in self.db.query(f'SELECT version, node FROM "{self.out}"."{self.name}_releases"')
        }

    def published(self, column: str) -> set[str]:
        """Every value ``column`` showed in any version still readable (or kept by the analyst): the versions'
        rows, in one table (``<name>_rows``) or one a version (``<name>_rows_v<N>``, the autocommit layout)."""
        tables = [t for t in self.objects() if re.fullmatch(rf"{self.name}_rows(_v\d+)?", t)]
        assert tables, f"no rows table of {self.name!r} in {self.out}"
        return {str(v) for t in tables for (v,) in self.db.query(f'SELECT DISTINCT "{column}" FROM "{self.out}"."{t}"')}


def _strings(cell: Any) -> Iterator[str]:
    if isinstance(cell, str):
        yield cell
        if cell[:1] in "[{":
            try:
                yield from _strings(json.loads(cell))
            except ValueError:
                pass
    elif isinstance(cell, list):
        for x in cell:
            yield from _strings(x)
    elif isinstance(cell, dict):
        for k, x in cell.items():
            yield from _strings(k)
            yield from _strings(x)


def leaks(db: Db, out: str, config: Path) -> list[str]:
    """Every leak the adversary finds: narrowed values and labels nobody published."""
    conf = cfg.load(config)
    source = db.query(f'SELECT * FROM "{db.schema}".people')
    names = list(COLUMNS)
    attack = Adversary(db, out, "people")
    nodes = attack.versions()
    found: dict[str, str] = {}
    for i, qi in enumerate(conf.quasi_identifiers):
        kind = next(k for c, _s, k in KINDS.values() if c == qi.column)
        values = sorted({r[names.index(qi.column)] for r in source}, key=repr)
        h = build(_resolved(qi.hierarchy, db), qi.column, values, kind)
        chains = [
            (str(leaf) if kind is not ValueKind.DATE else leaf.isoformat(), *h.labels_of(leaf)[1:]) for leaf in values
        ]
        shown = attack.published(qi.column)
        for node in nodes.values():
            level = node[i]
            upper = {c[j] for c in chains for j in range(level, h.height + 1)}
            for c in chains:
                found.update({c[j]: f"{qi.column} below level {level}" for j in range(level) if c[j] not in upper})
                found[c[level]] = f"{qi.column} label never published"
        found = {s: why for s, why in found.items() if s not in shown}  # what some version showed is public
    diseases = {r[names.index("disease")] for r in source} | set(DISEASES)
    found.update({d: "disease never published" for d in diseases - attack.published("disease")})
    forbidden = found
    return sorted({f"{obj}: {s!r} ({forbidden[s]})" for obj, s in attack.strings() if s in forbidden})


def _resolved(spec: Any, db: Db) -> Any:
    """A table-backed hierarchy as the run resolves it (the adversary knows the hierarchy)."""
    from veil.hierarchy import TableSpec, TaxonomySpec

    if isinstance(spec, TableSpec):
        return TaxonomySpec(tuple((k, v) for k, v in REGIONS.items()))
    return spec


@pytest.mark.backend
@pytest.mark.notimpl(
    ["spark"],
    raises=NoSolutionError,
    reason=(
        'the second version (one person leaves, one joins) is refused under series = "refuse", the only policy on '
        "Spark (docs/spark.md §7); the first version's objects are attacked before that"
    ),
)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_published_object_narrows_a_row_or_tells_which_values_occur(
    db: Db, release_schemas: ReleaseSchemas, kind: str
) -> None:
    config = setup(db, release_schemas, kind)
    first = release(cfg.load(config))
    assert first.status == "published" and first.rows_published
    assert leaks(db, release_schemas.out, config) == []
    # a second version: someone leaves, someone with new labels joins (held back or published as the series says)
    joiner = (50, "77777", 61, dt.date(1931, 5, 5), "Martian", "X", "space", "moon-2", "rare-y")
    db.replace_rows("people", COLUMNS, [r for r in people() if r[0] != 7] + [joiner])
    second = release(cfg.load(config))
    assert second.version == 2
    assert leaks(db, release_schemas.out, config) == []
    assert first.node is not None and (first.node[0] > 0 or kind == "suppress")  # there was something to hide
    assert first.rows_suppressed or second.rows_deferred or kind != "suppress"


@pytest.mark.backend
@pytest.mark.notimpl(
    ["spark"],
    raises=KeyError,
    reason="Spark's releases publish no dimension tables (docs/spark.md §8): there is no legacy content to redact",
)
def test_the_adversary_finds_a_legacy_content_then_the_next_release_redacts_it(
    db: Db, release_schemas: ReleaseSchemas
) -> None:
    """Contents published before levels were recorded listed every leaf: simulated here as Veil wrote them, they
    are caught by the adversary, and the next release redacts them in place (catalog revision 0006)."""
    out, cat = release_schemas.out, release_schemas.cat
    config = setup(db, release_schemas, "mask")
    v1 = release(cfg.load(config))
    assert v1.node is not None and v1.node[0] > 0
    digests = dict(db.query(f'SELECT attribute, digest FROM "{cat}".publication_dimensions'))
    zips = sorted({r[1] for r in people()})
    full = build(cfg.load(config).quasi_identifiers[0].hierarchy, "zip", zips, ValueKind.TEXT)
    chains = {"zip": [full.labels_of(z) for z in zips], "disease": [(k, *v) for k, v in DISEASES.items()]}
    for column, rows in chains.items():  # every leaf with its labels, as Veil wrote them before revision 0006
        db.execute(
            f'DELETE FROM "{out}".people_dim_{column}_rows',
            *(
                f"INSERT INTO \"{out}\".people_dim_{column}_rows VALUES ('{digests[column]}', "
                + ", ".join(f"'{x}'" for x in chain)
                + ")"
                for chain in rows
            ),
        )
    db.execute(f'UPDATE "{cat}".publication_dimensions SET level = NULL')
    found = leaks(db, out, config)
    assert any("13050" in f and "below level" in f for f in found), found  # the adversary can win
    assert any("99999" in f for f in found) and any("rare-x" in f for f in found), found
    db.execute(f'DELETE FROM "{db.schema}".people WHERE id = 7')
    v2 = release(cfg.load(config))
    assert v2.version == 2
    assert leaks(db, out, config) == []
    assert db.query(f'SELECT count(*) FROM "{cat}".publication_dimensions WHERE level IS NULL') == [(0,)]
    level = v1.node[0]
    rows = db.query(f'SELECT * FROM "{out}".people_v1_dim_zip')
    assert rows and all(r[j] is None for r in rows for j in range(level))  # v1's view: its levels only


@pytest.mark.backend
@pytest.mark.notimpl(
    ["spark"],
    raises=IndexError,
    reason="Spark's releases publish no dimension tables (docs/spark.md §8): there is no legacy content to redact",
)
def test_a_legacy_content_shared_by_versions_at_two_levels_shows_the_coarser(
    db: Db, release_schemas: ReleaseSchemas
) -> None:
    """Two kept versions at different levels of zip shared one legacy content (Veil reused a content by hash
    before revision 0006): it is redacted to the coarser level, with the labels either version published."""
    out, cat = release_schemas.out, release_schemas.cat
    config = setup(db, release_schemas, "mask")
    v1 = release(cfg.load(config))
    config.write_text(config.read_text().replace("k = 13", "k = 25"))
    conf = cfg.load(config)
    assert conf.release is not None
    v2 = release(replace(conf, release=replace(conf.release, new_series=True)))  # another node: a new series
    assert v1.node and v2.node and v2.node[0] > v1.node[0]
    (digest,) = db.query(
        f"SELECT digest FROM \"{cat}\".publication_dimensions WHERE version = 1 AND attribute = 'zip'"
    )[0]
    zips = sorted({r[1] for r in people()})
    full = build(cfg.load(config).quasi_identifiers[0].hierarchy, "zip", zips, ValueKind.TEXT)
    db.execute(
        f'DELETE FROM "{out}".people_dim_zip_rows',
        *(
            f"INSERT INTO \"{out}\".people_dim_zip_rows VALUES ('{digest}', "
            + ", ".join(f"'{x}'" for x in full.labels_of(z))
            + ")"
            for z in zips
        ),
        f"UPDATE \"{cat}\".publication_dimensions SET level = NULL, digest = '{digest}' WHERE attribute = 'zip'",
        f'CREATE OR REPLACE VIEW "{out}".people_v2_dim_zip AS SELECT * FROM "{out}".people_v1_dim_zip',
    )
    assert any("below level" in f for f in leaks(db, out, config))
    assert release(cfg.load(config), force=True).version == 3
    assert leaks(db, out, config) == []
    for version in (1, 2):
        rows = db.query(f'SELECT * FROM "{out}".people_v{version}_dim_zip')
        assert rows and all(r[j] is None for r in rows for j in range(v2.node[0]))
        assert {r[v2.node[0]] for r in rows} == {
            r for (r,) in db.query(f'SELECT DISTINCT zip FROM "{out}".people_v2')
        }  # the coarser version's labels
