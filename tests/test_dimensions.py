"""Every hierarchy a release used, published as a dimension table (docs/publication.md §1), on both backends:
only the levels at and above the version's level, only labels it published; the release's generalized values
join to every level shown; an unchanged content is not copied again, a changed one is; expiry keeps what a kept
version uses; rollback repoints the dimension views with the release's.  tests/test_dimension_leaks.py attacks
them."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from veil import config as cfg
from veil.errors import ReleaseError
from veil.hierarchy import Hierarchy
from veil.queries import dimensions as qd
from veil.release import init, release, rollback
from veil.release.dimensions import QUASI, Dimension, _unique
from tests.conftest import Db
from tests.test_series_db import change, cleanup, people_db  # noqa: F401 (fixture)
from tests.test_series_world import AGES, ZIPS

pytestmark = pytest.mark.notimpl(
    ["spark"],
    reason=(
        "no dimension views <name>_dim_<column> on Spark: their tables are pruned with DELETE (docs/spark.md §8), so "
        "the views these tests read are not found; hierarchy tables' columns come from information_schema, which "
        "Spark lacks"
    ),
)

DISEASES = {"flu": ("respiratory", "*"), "cold": ("respiratory", "*"), "hiv": ("blood", "*"), "cancer": ("blood", "*")}
TCLOSE = """
[[models]]
type = "t-closeness"
t = 1.0
attribute = "disease"
distance = "hierarchical"
hierarchy = {{ csv = "{path}" }}
"""


def setup(db: Db, extra: str = "", emd: bool = False) -> tuple[str, str, str]:
    if emd:
        path = db.workdir / "disease.csv"
        path.write_text("".join(f"{d};{';'.join(up)}\n" for d, up in DISEASES.items()))
        extra += TCLOSE.format(path=path)
    config, out, cat = people_db(db, "off", extra)
    init(cfg.load(config))
    return str(config), out, cat


def shown(levels: dict[str, tuple[str, ...]], level: int, published: set[str]) -> list[tuple]:
    """What a dimension may show of ``levels`` (leaf → labels) at ``level``: the chains of the published labels,
    from that level up, each once."""
    chains = [(leaf, *up) for leaf, up in levels.items()]
    return sorted({(None,) * level + c[level:] for c in chains if c[level] in published}, key=repr)


def published(db: Db, out: str, column: str, view: str = "people") -> set[str]:
    return {v for (v,) in db.query(f'SELECT DISTINCT {column} FROM "{out}".{view}')}


def dim(db: Db, out: str, view: str) -> list[tuple]:
    return sorted(db.query(f'SELECT * FROM "{out}".{view}'), key=repr)


def contents(db: Db, out: str, column: str) -> list[tuple]:
    """(content hash, rows) of ``people_dim_<column>_rows``."""
    return sorted(db.query(f'SELECT veil_dim, count(*) FROM "{out}".people_dim_{column}_rows GROUP BY veil_dim'))


def used(db: Db, cat: str) -> dict[int, dict[str, str]]:
    found: dict[int, dict[str, str]] = {}
    for v, a, d in db.query(f'SELECT version, attribute, digest FROM "{cat}".publication_dimensions'):
        found.setdefault(v, {})[a] = d
    return found


def test_a_release_publishes_every_hierarchy_and_its_values_join_to_every_level(db: Db, cleanup) -> None:
    config, out, cat = setup(db, emd=True)
    outcome = release(cfg.load(config))
    z, a = outcome.node
    assert dim(db, out, "people_dim_zip") == shown(ZIPS, z, published(db, out, "zip"))
    assert dim(db, out, "people_dim_age") == shown(AGES, a, published(db, out, "age"))  # level_0 as printed: text
    assert {z, a} & {1, 2}  # some column is generalized: its leaves are not shown
    assert sorted(db.query(f'SELECT * FROM "{out}".people_dim_disease')) == sorted(
        (k, *up) for k, up in DISEASES.items()
    )  # the hierarchical EMD's hierarchy: every value published
    # every published row joins to exactly one chain of levels at the version's node
    zl = ", ".join(f"level_{j}" for j in range(z, 3))
    al = ", ".join(f"level_{j}" for j in range(a, 3))
    joined = db.query(
        f'SELECT p.zip, p.age, p.disease, dz.level_2, da.level_2, dd.level_1 FROM "{out}".people p '
        f'JOIN (SELECT DISTINCT {zl} FROM "{out}".people_dim_zip) dz ON p.zip = dz.level_{z} '
        f'JOIN (SELECT DISTINCT {al} FROM "{out}".people_dim_age) da ON p.age = da.level_{a} '
        f'JOIN "{out}".people_dim_disease dd ON p.disease = dd.level_0'
    )
    assert len(joined) == len(db.query(f'SELECT * FROM "{out}".people')) == 16
    assert {(r[3], r[4]) for r in joined} == {("*", "*")}
    assert all(r[5] == DISEASES[r[2]][0] for r in joined)
    # pinned per version, recorded in the catalog with role and height
    assert sorted(db.query(f'SELECT * FROM "{out}".people_v1_dim_age')) == sorted(
        db.query(f'SELECT * FROM "{out}".people_dim_age')
    )
    roles = db.query(f'SELECT attribute, role, height, dim_table FROM "{cat}".publication_dimensions ORDER BY 1')
    assert roles == [
        ("age", "quasi-identifier", 2, "people_dim_age_rows"),
        ("disease", "sensitive", 2, "people_dim_disease_rows"),
        ("zip", "quasi-identifier", 2, "people_dim_zip_rows"),
    ]


def test_unchanged_hierarchies_are_reused_and_a_changed_one_is_copied(db: Db, cleanup) -> None:
    config, out, cat = setup(db)
    release(cfg.load(config))
    first = contents(db, out, "age")
    assert len(first) == 1 and first[0][1] == len(dim(db, out, "people_dim_age"))
    change(db, add=[(17, "a1", 20, "cancer")])
    assert release(cfg.load(config)).version == 2
    assert contents(db, out, "age") == first  # no new copy
    assert used(db, cat)[2] == used(db, cat)[1]
    ages = db.workdir / "age.csv"  # a new level-1 label: a new content
    ages.write_text(ages.read_text().replace("<30", "under 30"))
    assert release(cfg.load(config)).version == 3
    now = contents(db, out, "age")
    assert len(now) == 2 and first[0] in now
    assert used(db, cat)[3]["age"] != used(db, cat)[2]["age"] and used(db, cat)[3]["zip"] == used(db, cat)[2]["zip"]
    assert any(r[1:] == ("under 30", "*") for r in dim(db, out, "people_dim_age"))
    assert any(r[1:] == ("<30", "*") for r in dim(db, out, "people_v2_dim_age"))


def test_expiry_keeps_the_contents_kept_versions_use_and_rollback_repoints(db: Db, cleanup) -> None:
    config, out, cat = setup(db, "keep_versions = 2")
    release(cfg.load(config))  # v1: age A
    ages = db.workdir / "age.csv"
    ages.write_text(ages.read_text().replace("<30", "young"))
    release(cfg.load(config))  # v2: age B
    change(db, add=[(17, "a1", 20, "cancer")])
    release(cfg.load(config))  # v3: age B; v1 expires, so does content A
    digests = used(db, cat)
    assert [d for d, _ in contents(db, out, "age")] == [digests[3]["age"]]
    assert [d for d, _ in contents(db, out, "zip")] == [digests[1]["zip"]]  # unchanged, used by v2 and v3
    names = {r[0] for r in db.query(f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{out}'")}
    assert "people_v1_dim_age" not in names and {"people_v2_dim_age", "people_v3_dim_age"} <= names
    ages.write_text(ages.read_text().replace("young", "junior"))
    change(db, add=[(18, "b2", 35, "flu")])
    release(cfg.load(config))  # v4: age C; v2 expires, B still used by v3
    assert sorted(d for d, _ in contents(db, out, "age")) == sorted({used(db, cat)[3]["age"], used(db, cat)[4]["age"]})
    assert any(r[1:] == ("junior", "*") for r in dim(db, out, "people_dim_age"))
    rollback(cfg.load(config), 3)
    assert any(r[1:] == ("young", "*") for r in dim(db, out, "people_dim_age"))  # with the pointer
    assert len(db.query(f'SELECT * FROM "{out}".people')) == 17
    rollback(cfg.load(config), 4)
    assert any(r[1:] == ("junior", "*") for r in dim(db, out, "people_dim_age"))


def test_long_names_are_fitted_without_colliding() -> None:
    a, b = "c" * 60 + "_one", "c" * 60 + "_two"
    fa, fb = qd.fit(a), qd.fit(b)
    assert len(fa.encode()) == len(fb.encode()) == 63 and fa != fb and fa[:54] == fb[:54]
    assert qd.fit("é" * 40).encode().__len__() <= 63  # whole UTF-8 characters
    names = qd.names("people", "x" * 70, 2_147_483_647)
    assert all(len(n.encode()) <= 63 for n in names.values()) and len(set(names.values())) == 3


def test_two_columns_whose_objects_would_share_a_name_are_refused() -> None:
    found = [Dimension(c, QUASI, Hierarchy(c, ("v",), (("*",),)), sa.Text(), None, "x") for c in ("a", "a_rows")]
    with pytest.raises(ReleaseError, match="'people_dim_a_rows'"):
        _unique("people", found, 1)


def test_a_shorter_hierarchy_leaves_nulls_and_a_taller_one_is_refused_with_nothing_published(db: Db, cleanup) -> None:
    config, out, cat = setup(db)
    release(cfg.load(config))
    ages = db.workdir / "age.csv"
    ages.write_text("".join(f"{a};*\n" for a in AGES))  # height 1 of 2
    a = release(cfg.load(config)).node[1]
    flat = {k: ("*",) for k in AGES}
    assert dim(db, out, "people_dim_age") == [(*r, None) for r in shown(flat, a, published(db, out, "age"))]
    assert dim(db, out, "people_v2_dim_age") == shown(flat, a, published(db, out, "age"))
    ages.write_text("".join(f"{a};{';'.join(up)};**\n" for a, up in AGES.items()))  # height 3 of 2
    with pytest.raises(
        ReleaseError,
        match=r"hierarchy of column 'age' now has 3 levels above the value, the "
        r"published dimension .*people_dim_age has 2",
    ):
        release(cfg.load(config))
    assert db.query(f'SELECT current_version FROM "{cat}".publications') == [(2,)]
    assert sorted(db.query(f'SELECT DISTINCT version FROM "{cat}".publication_dimensions')) == [(1,), (2,)]


def test_a_long_column_name_gets_fitted_objects_that_work(db: Db, cleanup) -> None:
    config, out, cat = setup(db)
    long = "postal_code_of_the_patients_home_address_as_registered_at_adm"  # 60 bytes: PostgreSQL's columns fit
    db.execute(
        f'CREATE TABLE "{db.schema}".people2 AS SELECT id, zip AS {long}, age, disease FROM "{db.schema}".people'
    )
    text = open(config).read().replace('column = "zip"', f'column = "{long}"')
    path = db.write_config("people2", text.split("\n", 3)[3], name="long.toml")
    outcome = release(cfg.load(path))
    names = qd.names("people", long, outcome.version)
    assert all(len(n.encode()) <= 63 for n in names.values())
    expected = shown(ZIPS, outcome.node[0], published(db, out, f'"{long}"'))
    assert dim(db, out, f'"{names["view"]}"') == expected
    assert dim(db, out, f'"{names["version_view"]}"') == expected
    assert db.query(f"SELECT dim_table FROM \"{cat}\".publication_dimensions WHERE attribute = '{long}'") == [
        (names["rows"],)
    ]


def test_hierarchies_read_from_warehouse_tables_are_published_too(db: Db, cleanup) -> None:
    db.create_table(
        "zip_levels", {"level_0": sa.Text, "level_1": sa.Text, "level_2": sa.Text}, [(k, *up) for k, up in ZIPS.items()]
    )
    db.create_table(
        "disease_levels", {"d": sa.Text, "grp": sa.Text, "top": sa.Text}, [(k, *up) for k, up in DISEASES.items()]
    )
    model = TCLOSE.format(path="X").replace(
        '{ csv = "X" }', f'{{ table = "{db.schema}.disease_levels", columns = ["d", "grp", "top"] }}'
    )
    path, out, cat = people_db(db, "off", model)
    path.write_text(
        path.read_text().replace(f'{{ csv = "{db.workdir / "zip.csv"}" }}', f'{{ table = "{db.schema}.zip_levels" }}')
    )
    assert "zip_levels" in path.read_text() and "disease_levels" in path.read_text()
    init(cfg.load(path))
    z = release(cfg.load(path)).node[0]
    assert dim(db, out, "people_dim_zip") == shown(ZIPS, z, published(db, out, "zip"))
    assert sorted(db.query(f'SELECT * FROM "{out}".people_dim_disease')) == sorted(
        (k, *up) for k, up in DISEASES.items()
    )
    db.execute(f"UPDATE \"{db.schema}\".disease_levels SET grp = 'lungs' WHERE grp = 'respiratory'")
    release(cfg.load(path))  # the table's rows changed: a new content
    assert ("flu", "lungs", "*") in db.query(f'SELECT * FROM "{out}".people_dim_disease')
    assert len(contents(db, out, "disease")) == 2 and len(contents(db, out, "zip")) == 1
