"""Hierarchy builders and validation (no database)."""

from __future__ import annotations

import datetime as dt
import decimal
import doctest
import importlib
from pathlib import Path

import pytest

from veil.errors import HierarchyError
from veil.hierarchy import (
    CsvSpec,
    DatesSpec,
    IntervalsSpec,
    MaskSpec,
    RowsSpec,
    SuppressSpec,
    TableSpec,
    TaxonomySpec,
    ValueKind,
    build,
    check_spec,
    construct,
    to_arx_csv,
)


def test_mask_builder_follows_the_papers_zip_example() -> None:
    h = build(MaskSpec(), "zip", ["13053", "14850", "13068"], ValueKind.TEXT)
    assert h.height == 5
    assert h.labels_of("13053") == ("13053", "1305*", "130**", "13***", "1****", "*")
    assert h.domain(2) == ["130**", "148**"]
    assert h.parents(1).tolist() == [0, 0, 1]  # 1305*, 1306* → 130**; 1485* → 148**
    assert h.leaf_counts(3).tolist() == [2, 1]  # 13*** covers 13053, 13068; 14*** covers 14850


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


def test_intervals_with_a_decimal_width_are_exact() -> None:
    # width 0.1: 0.3 lies in [0.3, 0.4) (floor(0.3/0.1) in binary floats is 2, giving [0.2, 0.30000000000000004))
    h = build(IntervalsSpec(widths=(0.1, 0.2)), "x", [0.2, 0.3, 0.35, 0.1, 0.7], ValueKind.FLOAT)
    assert h.labels_of(0.3) == (0.3, "[0.3, 0.4)", "[0.2, 0.4)", "*")
    assert h.labels_of(0.2)[1] == "[0.2, 0.3)" and h.labels_of(0.1)[1:3] == ("[0.1, 0.2)", "[0, 0.2)")
    assert h.labels_of(0.7)[1:3] == ("[0.7, 0.8)", "[0.6, 0.8)")
    assert h.domain(1) == ["[0.1, 0.2)", "[0.2, 0.3)", "[0.3, 0.4)", "[0.7, 0.8)"]
    # decimals as decimals; a start off the grid; negative values
    d = build(
        IntervalsSpec(widths=(0.25,), start=-0.5),
        "y",
        [decimal.Decimal("-0.5"), decimal.Decimal("0.74")],
        ValueKind.DECIMAL,
    )
    assert d.labels_of(decimal.Decimal("-0.5"))[1] == "[-0.5, -0.25)"
    assert d.labels_of(decimal.Decimal("0.74"))[1] == "[0.5, 0.75)"
    # widths nest exactly: 0.3 is 3 × 0.1 (0.3 / 0.1 = 2.9999999999999996 in floats)
    assert build(IntervalsSpec(widths=(0.1, 0.3)), "x", [0.55], ValueKind.FLOAT).labels_of(0.55)[1:3] == (
        "[0.5, 0.6)",
        "[0.3, 0.6)",
    )
    # integer values of epoch-millisecond size stay exact
    big = build(IntervalsSpec(widths=(10,)), "t", [10**15 + 9, 10**15 + 10], ValueKind.INTEGER)
    assert big.labels_of(10**15 + 9)[1] == "[1000000000000000, 1000000000000010)"
    assert big.labels_of(10**15 + 10)[1] == "[1000000000000010, 1000000000000020)"


@pytest.mark.parametrize(
    "spec",
    [
        IntervalsSpec(widths=(float("nan"),)),
        IntervalsSpec(widths=(float("inf"),)),
        IntervalsSpec(widths=(10,), start=float("-inf")),
        IntervalsSpec(widths=(0,)),
        IntervalsSpec(widths=(-5,)),
        IntervalsSpec(widths=()),
    ],
)
def test_intervals_reject_non_finite_or_non_positive_widths(spec) -> None:
    with pytest.raises(HierarchyError, match=r"hierarchy for column 'age'.*(finite|positive)"):
        build(spec, "age", [1, 2], ValueKind.INTEGER)
    with pytest.raises(HierarchyError, match=r"(finite|positive)"):
        check_spec(spec, "age")


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


# --- rows from a table or a DataFrame, export, the kinds' coercion ------------------------------------------


def rows_spec(rows, columns=("v", "l1", "l2")) -> RowsSpec:
    return RowsSpec(rows=tuple((v, tuple(labels)) for v, *labels in rows), origin="table dims.t", columns=columns)


def test_rows_are_typed_like_the_source_column() -> None:
    spec = rows_spec([(28, "<30", "*"), (31.0, "3*", "*"), ("45", ">=40", "*")])
    h = build(spec, "age", [28, 45], ValueKind.INTEGER)
    assert h.leaves == (28, 31, 45) and h.labels_of(31) == (31, "3*", "*") and h.source == "table dims.t"
    as_text = build(rows_spec([(13053, 1305, "*")]), "zip", ["13053"], ValueKind.TEXT)
    assert as_text.leaves == ("13053",) and as_text.labels_of("13053") == ("13053", "1305", "*")  # labels as text
    days = build(rows_spec([(dt.datetime(2024, 3, 17), dt.date(2024, 3, 1), "*")]), "d", [], ValueKind.DATE)
    assert days.leaves == (dt.date(2024, 3, 17),) and days.labels[0] == ("2024-03-01",)


@pytest.mark.parametrize(
    "rows,message",
    [
        ([(28, "<30", "*"), (28.5, "<30", "*")], r"row 2: value 28\.5 in column 'v' is not a valid integer"),
        ([(None, "<30", "*")], r"row 1 has no value \(NULL in column 'v'\)"),
        (
            [(28, "<30", None)],
            r"row 1: value 28 has no level-2 label \(NULL in column 'l2'\); a hierarchy has one height",
        ),
        ([(28, "<30", "*"), (28, "3*", "*")], r"value 28 \(rows 1 and 2\) has two generalizations"),
        ([(28, "<30", "a"), (29, "<30", "b")], r"level 1 value '<30' \(column 'l1'\) maps to two level-2 values"),
        ([], r"\(table dims\.t\) is empty"),
    ],
)
def test_bad_rows_name_the_row_and_the_column(rows, message) -> None:
    with pytest.raises(HierarchyError, match=r"hierarchy for column 'age' \(table dims\.t\)"):
        build(rows_spec(rows), "age", [], ValueKind.INTEGER)
    with pytest.raises(HierarchyError, match=message):
        build(rows_spec(rows), "age", [], ValueKind.INTEGER)


def test_coercion_of_typed_values() -> None:
    assert ValueKind.INTEGER.coerce(decimal.Decimal("28")) == 28
    assert ValueKind.INTEGER.parse("9007199254740993") == 9007199254740993  # no float rounding
    assert ValueKind.DECIMAL.coerce(1.5) == decimal.Decimal("1.5")
    assert ValueKind.TIMESTAMP.coerce(dt.date(2024, 1, 2)) == dt.datetime(2024, 1, 2)
    assert ValueKind.BOOLEAN.coerce(True) is True and ValueKind.FLOAT.coerce(2) == 2.0
    for kind, value in [
        (ValueKind.DATE, dt.datetime(2024, 1, 2, 10)),
        (ValueKind.BOOLEAN, 1),
        (ValueKind.INTEGER, True),
        (ValueKind.DATE, 20240102),
    ]:
        with pytest.raises(ValueError):
            kind.coerce(value)


def test_construct_keeps_what_build_would_reject() -> None:
    spec = rows_spec([(28, "<30", "*")])
    assert construct(spec, "age", [28, 99], ValueKind.INTEGER).missing([28, 99]) == [99]
    with pytest.raises(HierarchyError, match="misses 1 value"):
        build(spec, "age", [28, 99], ValueKind.INTEGER)
    with pytest.raises(HierarchyError, match=r"\(table dims\.z\) must be read from the warehouse"):
        build(TableSpec("dims.z"), "age", [28], ValueKind.INTEGER)


def test_table_spec() -> None:
    assert (TableSpec("a.b.zip").schema, TableSpec("a.b.zip").table) == ("a.b", "zip")
    assert (TableSpec("zip").schema, TableSpec("zip").describe()) == (None, "table zip")
    with pytest.raises(HierarchyError, match="at least one level"):
        TableSpec("zip", ("level_0",))


def test_arx_export_reads_back_into_the_same_hierarchy(tmp_path: Path) -> None:
    spec = TaxonomySpec(mapping=(("a;b", ('x "quoted"', "*")), ("c", ("y", "*")), ("d", ("y", "*"))))
    h = build(spec, "c", ["c"], ValueKind.TEXT)
    f = tmp_path / "h.csv"
    f.write_text(to_arx_csv(h), encoding="utf-8")
    back = build(CsvSpec(f), "c", ["c"], ValueKind.TEXT)
    assert (back.leaves, back.labels) == (h.leaves, h.labels)
    days = build(DatesSpec(), "d", [dt.date(2024, 3, 17)], ValueKind.DATE)
    assert to_arx_csv(days) == "2024-03-17;2024-03;2024;*\n"
    f.write_text(to_arx_csv(days), encoding="utf-8")
    assert build(CsvSpec(f), "d", [dt.date(2024, 3, 17)], ValueKind.DATE).labels == days.labels


@pytest.mark.parametrize("module", ["veil.hierarchy", "veil.queries.hierarchy", "veil.config"])
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0 and result.failed == 0
