"""Hierarchy builders and validation (no database)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from engine.errors import HierarchyError
from engine.hierarchy import (CsvSpec, DatesSpec, IntervalsSpec, MaskSpec, SuppressSpec, TaxonomySpec, ValueKind,
                              build, check_spec)


def test_mask_builder_follows_the_papers_zip_example() -> None:
    h = build(MaskSpec(), "zip", ["13053", "14850", "13068"], ValueKind.TEXT)
    assert h.height == 5
    assert h.labels_of("13053") == ("13053", "1305*", "130**", "13***", "1****", "*")
    assert h.domain(2) == ["130**", "148**"]
    assert h.parents(1).tolist() == [0, 0, 1]          # 1305*, 1306* → 130**; 1485* → 148**
    assert h.leaf_counts(3).tolist() == [2, 1]         # 13*** covers 13053, 13068; 14*** covers 14850


def test_mask_on_integer_codes() -> None:
    h = build(MaskSpec(), "zip", [13053, 13068], ValueKind.INTEGER)
    assert h.labels_of(13053)[1:3] == ("1305*", "130**")


def test_intervals_builder_and_labels() -> None:
    h = build(IntervalsSpec(widths=(10, 20)), "age", [28, 35, 41, 19], ValueKind.INTEGER)
    assert h.height == 3
    assert h.labels_of(28) == (28, "[20, 30)", "[20, 40)", "*")
    assert h.labels_of(41) == (41, "[40, 50)", "[40, 60)", "*")
    assert h.domain(1) == ["[10, 20)", "[20, 30)", "[30, 40)", "[40, 50)"]  # numeric order


def test_intervals_widths_must_nest() -> None:
    with pytest.raises(HierarchyError, match="not a multiple"):
        build(IntervalsSpec(widths=(10, 25)), "age", [1], ValueKind.INTEGER)
    with pytest.raises(HierarchyError, match="numeric column"):
        build(IntervalsSpec(widths=(10,)), "name", ["a"], ValueKind.TEXT)


def test_intervals_with_start_and_fractions() -> None:
    h = build(IntervalsSpec(widths=(0.5,), start=0.25), "x", [0.3, 1.0], ValueKind.FLOAT)
    assert h.labels_of(0.3)[1] == "[0.25, 0.75)" and h.labels_of(1.0)[1] == "[0.75, 1.25)"


def test_suppress_builder() -> None:
    h = build(SuppressSpec(), "nationality", ["Russian", "American"], ValueKind.TEXT)
    assert h.height == 1 and h.labels_of("Russian") == ("Russian", "*")


def test_dates_builder() -> None:
    d = dt.date(2024, 3, 17)
    h = build(DatesSpec(), "admitted", [d, dt.date(2023, 12, 1)], ValueKind.DATE)
    assert h.labels_of(d) == (d, "2024-03", "2024", "*")
    h2 = build(DatesSpec(steps=("quarter", "decade")), "admitted", [d], ValueKind.DATE)
    assert h2.labels_of(d) == (d, "2024-Q1", "2020s", "*")
    with pytest.raises(HierarchyError, match="fine to coarse"):
        build(DatesSpec(steps=("year", "month")), "admitted", [d], ValueKind.DATE)


def test_taxonomy_builder_parses_values_into_the_column_type() -> None:
    spec = TaxonomySpec(mapping=(("1", ("low", "*")), ("2", ("low", "*")), ("3", ("high", "*"))))
    h = build(spec, "grade", [1, 3], ValueKind.INTEGER)
    assert h.leaves == (1, 2, 3) and h.labels_of(3) == (3, "high", "*")


def test_csv_hierarchy(tmp_path: Path) -> None:
    f = tmp_path / "h.csv"
    f.write_text("Private;Non-Government;*\nSelf-emp;Non-Government;*\nFederal-gov;Government;*\n")
    h = build(CsvSpec(f), "workclass", ["Private", "Federal-gov"], ValueKind.TEXT)
    assert h.leaves == ("Federal-gov", "Private", "Self-emp")
    assert h.domain(1) == ["Government", "Non-Government"]


def test_csv_values_are_parsed_into_the_column_type(tmp_path: Path) -> None:
    f = tmp_path / "age.csv"
    f.write_text("39;30-39;*\n40;40-49;*\n")
    h = build(CsvSpec(f), "age", [39, 40], ValueKind.INTEGER)
    assert h.leaves == (39, 40)
    bad = tmp_path / "bad.csv"
    bad.write_text("39;30-39;*\nforty;40-49;*\n")
    with pytest.raises(HierarchyError, match=r"line 2: value 'forty' is not a valid integer"):
        build(CsvSpec(bad), "age", [39], ValueKind.INTEGER)


def test_missing_values_are_counted_and_listed(tmp_path: Path) -> None:
    f = tmp_path / "h.csv"
    f.write_text("a;*\n")
    with pytest.raises(HierarchyError) as info:
        build(CsvSpec(f), "c", ["a"] + [f"v{i:02d}" for i in range(25)], ValueKind.TEXT)
    msg = str(info.value)
    assert "misses 25 value(s)" in msg and "first 20 shown" in msg and "'v19'" in msg and "'v20'" not in msg


def test_not_a_function_chain(tmp_path: Path) -> None:
    f = tmp_path / "h.csv"
    f.write_text("1;a;x;*\n2;a;y;*\n")
    with pytest.raises(HierarchyError, match=r"level 1 value 'a' maps to two level-2 values 'x' and 'y'"):
        check_spec(CsvSpec(f), "c")


def test_value_with_two_generalizations(tmp_path: Path) -> None:
    f = tmp_path / "h.csv"
    f.write_text("1;a;*\n1;b;*\n")
    with pytest.raises(HierarchyError, match=r"value '1' \(lines 1 and 2\) has two generalizations"):
        check_spec(CsvSpec(f), "c")


def test_one_height_per_hierarchy(tmp_path: Path) -> None:
    f = tmp_path / "h.csv"
    f.write_text("1;a;*\n2;*\n")
    with pytest.raises(HierarchyError, match="line 2 has 1 level"):
        check_spec(CsvSpec(f), "c")


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(HierarchyError, match="cannot read hierarchy file"):
        check_spec(CsvSpec(tmp_path / "nope.csv"), "c")


def test_ancestors_compose() -> None:
    h = build(MaskSpec(), "zip", ["13053", "13068", "14850", "14853"], ValueKind.TEXT)
    for a in range(h.height + 1):
        for b in range(a, h.height + 1):
            step = list(range(h.cardinality(a)))
            for j in range(a, b):
                step = [h.parents(j)[c] for c in step]
            assert h.ancestors(a, b).tolist() == step
