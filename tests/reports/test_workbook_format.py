"""The workbook's presentation, read back with openpyxl: a number format per unit (EUR with
thousands separators, shares and probabilities as %, tokens/s whole, small figures with their
decimals; never the old blanket `0.0000`), frozen header rows, filter buttons (but on Inputs,
which the Scorecard reads by position), column widths, and header comments saying which
columns are formulas and which are the engine's values."""

from __future__ import annotations

import json
import math
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter
from openpyxl.workbook.workbook import Workbook

from reports.files.xlsx import write_xlsx
from schemas.outputs import OUTPUTS
from tests.reports.conftest import FIXTURES, typed


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Workbook:
    result = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))
    path = tmp_path_factory.mktemp("format") / "example.xlsx"
    write_xlsx(typed(result), path)
    return load_workbook(path)


def column(book: Workbook, sheet: str, label: str) -> str:
    headers = [c.value for c in book[sheet][1]]
    return get_column_letter(headers.index(label) + 1)


def fmt(book: Workbook, sheet: str, name: str, row: int = 2) -> str:
    label = OUTPUTS[name].label if name in OUTPUTS else name
    if sheet == "Demand":  # one row per input: its value in column B
        labels = [r[0].value for r in book["Demand"].iter_rows()]
        return str(book["Demand"][f"B{labels.index(label) + 1}"].number_format)
    return str(book[sheet][f"{column(book, sheet, label)}{row}"].number_format)


@pytest.mark.parametrize(("sheet", "name", "expected"), [
    ("Scorecard", "cpm_eur_per_mtok", "#,##0.000"),
    ("Scorecard", "monthly_cost_eur", "#,##0.00"),
    ("Scorecard", "cost_eur_per_hour", "#,##0.00"),
    ("Scorecard", "billed_utilisation", "0.0%"),
    ("Scorecard", "tokens_per_s", "#,##0"),
    ("Scorecard", "served_tokens_per_s", "#,##0"),
    ("Scorecard", "energy_j_per_token", "#,##0.000"),
    ("Scorecard", "electricity_eur_per_mtok", "#,##0.0000"),
    ("Scorecard", "carbon_gco2e_per_mtok", "#,##0.0"),
    ("Scorecard", "p_frontier", "0.0%"),
    ("Scorecard", "instances", "#,##0"),
    ("Inputs", "price_eur_per_hour", "#,##0.00"),
    ("Inputs", "capex_eur", "#,##0.00"),
    ("Demand", "headroom", "0.0%"),
    ("Inputs", "cost_of_capital_per_year", "0.0%"),
    ("Demand", "demand_tokens_per_day", "#,##0"),
    ("Inputs", "wholesale_eur_per_kwh", "0.00000"),
    ("Inputs", "busy_power_w", "#,##0"),
    ("Inputs", "pue", "0.00"),
])
def test_number_format_per_unit(book: Workbook, sheet: str, name: str, expected: str) -> None:
    assert fmt(book, sheet, name) == expected


def test_other_sheets_are_formatted_by_unit(book: Workbook) -> None:
    assert fmt(book, "Sizing", "Cost (EUR/month)") == "#,##0.00"
    assert fmt(book, "Sizing", "Facility energy (MWh/year)") == "#,##0.0"
    assert fmt(book, "Sizing", "Billed utilisation (share of billed hours)") == "0.0%"
    assert fmt(book, "Break-even", "Volume (tokens/day)") == "#,##0"
    # Assumptions: each row in its own unit (headroom is a share, a price EUR/h)
    sheet = book["Assumptions"]
    unit, value = column(book, "Assumptions", "Unit"), column(book, "Assumptions",
                                                              "Value (point)")
    formats = {sheet[f"{unit}{r}"].value: sheet[f"{value}{r}"].number_format
               for r in range(2, sheet.max_row + 1)}
    assert formats["share"] == "0.0%" and formats["EUR/h"] == "#,##0.00"
    blanket = [(ws.title, c.coordinate) for ws in book for row in ws.iter_rows() for c in row
               if c.number_format == "0.0000"]
    assert blanket == []


def test_frozen_headers_filters_and_widths(book: Workbook) -> None:
    for ws in book:
        if ws.title == "About":
            continue
        if ws.title == "Demand":  # a list of inputs: the header row frozen, nothing to sort
            assert ws.freeze_panes == "A2" and ws.auto_filter.ref is None
            continue
        if ws.title == "Recommendation":  # three rows, no header: nothing to freeze or sort
            assert ws.max_row == 3 and ws.auto_filter.ref is None
            continue
        if ws.max_row > 1:
            assert ws.freeze_panes == "B2", ws.title
        if ws.title == "Inputs":
            assert ws.auto_filter.ref is None  # read by position: no sorting buttons
        elif ws.max_row > 1:
            assert ws.auto_filter.ref == f"A1:{get_column_letter(ws.max_column)}{ws.max_row}"
    scorecard = book["Scorecard"]
    assert all((scorecard.column_dimensions[get_column_letter(i)].width or 0) >= 10
               for i in range(1, scorecard.max_column + 1))


def test_headers_say_formula_or_value(book: Workbook) -> None:
    def comment(name: str) -> Any:
        label = OUTPUTS[name].label
        return book["Scorecard"][f"{column(book, 'Scorecard', label)}1"].comment.text

    # the example plans 48 months: its CPM is the horizon's value, a row's cost a formula
    assert "The plan's figure over the horizon" in comment("cpm_eur_per_mtok")
    assert "Formula over Inputs: cost_eur_per_hour x billed_instances x 730 h" in comment(
        "monthly_cost_eur")
    assert "not a formula" in comment("p_frontier")
    assert "not a formula" in comment("sovereignty_level")
    assert "Do not sort this sheet" in book["Inputs"]["A1"].comment.text


def test_written_in_a_fraction_of_a_second_is_not_asserted(tmp_path: Path) -> None:
    """No timed assertion (timings live in benchmarks/workbook.py); the 1,000-candidate
    result it times writes here too, with one Scorecard row per candidate."""
    result = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))
    result["candidates"] = [dict(c, id=f"{c['id']}-{i}") for i in range(30)
                            for c in result["candidates"]]
    path = tmp_path / "many.xlsx"
    write_xlsx(typed(result), path)
    assert load_workbook(path, read_only=True)["Scorecard"].max_row == 1 + 30 * 10


def test_cost_model_and_capacity_cells_offer_their_words(book: Workbook) -> None:
    # the words the formulas test for (schemas/steps.py COST_MODELS, CAPACITIES)
    lists = {str(v.sqref): v.formula1 for v in book["Inputs"].data_validations.dataValidation}
    model, capacity = column(book, "Inputs", "Cost model"), column(
        book, "Inputs", "Capacity (provisioned or elastic)")
    # rows 2 to 11: the example's 10 candidates
    assert lists[f"{model}2:{model}11"] == '"declared,on_demand,reserved,tco,per_token"'
    assert lists[f"{capacity}2:{capacity}11"] == '"provisioned,elastic"'


def _cells(path: Path, data_only: bool = False) -> list[tuple[Any, ...]]:
    sheet = load_workbook(path, data_only=data_only)["T"]
    return [(c.coordinate, c.value, c.data_type, c.number_format, c.font.bold)
            for row in sheet.iter_rows() for c in row if c.value is not None or c.has_style]


def test_a_body_written_by_column_reads_back_as_xlsxwriter_writes_it(tmp_path: Path) -> None:
    """reports.files.xlsx writes each sheet's body as text, column by column (xlsxwriter's
    per-cell objects were most of a 1,000-candidate workbook's time); read back, it is the
    sheet xlsxwriter's own write_number/string/boolean/blank/formula calls write: the same
    values, types, formats and formulas (but no cached result), a None or non-finite number
    an empty cell (with its format only), text never a formula, a text beyond Excel's 32,767
    characters cut there."""
    import xlsxwriter

    from reports.files.xlsx import _Sheet, _text

    long = "x" * 40_000
    columns: list[tuple[list[Any], str | None, str | None]] = [  # items, format, formula
        ([0.5, 2800.0, -3.25, 1e-7, 12, None, math.nan, math.inf, True, False],
         "#,##0.00", None),
        (["a", "=HYPERLINK(\"x\")", "+1", "\u202eexe.pdf", "", None, long, "<&>", "b", "a"],
         None, None),
        # numpy's float64 is a float subclass: a number, as write_number writes it
        ([1.5, None, 2.0, np.float64(2.5), 3.0, None, 4.0, None, 5.0, None], None, None),
        ([0.5, None, True, "", 7, 1.25, None, 2.0, 3.0, "text"], "0.0%",
         '=IF(A{row}="","",A{row}*2)&"<>"'),
    ]
    per_row = ["0.000", None] * 5  # the third column: a format per row (Assumptions' units)

    def formats(book: Any) -> tuple[list[Any], list[Any]]:
        made = {f: book.add_format({"num_format": f}) for f in ("#,##0.00", "0.0%", "0.000")}
        return ([made.get(f) if f else None for _, f, _ in columns],
                [made[f] if f else None for f in per_row])

    ours, theirs = tmp_path / "ours.xlsx", tmp_path / "theirs.xlsx"
    options = {"strings_to_formulas": False, "strings_to_urls": False,
               "strings_to_numbers": False}
    book = xlsxwriter.Workbook(str(ours), options)
    sheet = book.add_worksheet("T", worksheet_class=_Sheet)
    fixed, rows = formats(book)
    sheet.write_string(0, 0, "header", book.add_format({"bold": True}))
    for col, ((items, _, formula), fmt) in enumerate(zip(columns, fixed, strict=True)):
        sheet.write_column(col, items, rows if col == 2 else fmt, formula=formula)
    book.close()

    book = xlsxwriter.Workbook(str(theirs), options)
    plain = book.add_worksheet("T")
    fixed, rows = formats(book)
    plain.write_string(0, 0, "header", book.add_format({"bold": True}))
    for col, ((items, _, formula), fmt) in enumerate(zip(columns, fixed, strict=True)):
        for row, item in enumerate(items, start=1):
            cell_fmt = rows[row - 1] if col == 2 else fmt
            if formula is not None:
                plain.write_formula(row, col, formula.replace("{row}", str(row + 1)),
                                    cell_fmt, "" if item is None else item)
            elif item is None or (isinstance(item, float) and not math.isfinite(item)):
                if cell_fmt is not None:
                    plain.write_blank(row, col, None, cell_fmt)
            elif isinstance(item, bool):
                plain.write_boolean(row, col, item, cell_fmt)
            elif isinstance(item, int | float):
                plain.write_number(row, col, item, cell_fmt)
            else:
                plain.write_string(row, col, _text(item), cell_fmt)
    book.close()

    assert _cells(ours) == _cells(theirs)

    def values(path: Path) -> list[tuple[Any, ...]]:  # column D holds the formulas
        return [c for c in _cells(path, data_only=True) if not c[0].startswith("D")]

    assert values(ours) == values(theirs)
    # a formula cell holds no cached result (xlsxwriter's write_formula writes one): Excel
    # and LibreOffice compute it on opening
    assert [c[1] for c in _cells(ours, data_only=True) if c[0].startswith("D")] == [None] * 10
    got = {c[0]: c for c in _cells(ours)}
    # text, never a formula; no bidi override; cut at Excel's limit
    assert got["B3"][1] == "'=HYPERLINK(\"x\")" and got["B4"][1] == "'+1"
    assert got["B5"][1] == "exe.pdf" and len(got["B8"][1]) == 32_767
    assert got["A7"][1:4] == (None, "n", "#,##0.00")  # NaN: an empty cell, formatted
    assert got["C2"][3] == "0.000" and "C3" not in got  # a None without a format: no cell
    assert got["C5"][1] == 2.5  # np.float64(2.5), once written as an empty cell
    assert got["D2"][1] == '=IF(A2="","",A2*2)&"<>"'


def test_numbers_read_back_as_the_engine_s_doubles(tmp_path: Path) -> None:
    """Every float is written as the shortest text that reads back as the same double:
    3.1679999999999997 (a CPM of the example) stays itself; written with 16 significant
    digits (xlsxwriter's write_number) it would read back as 3.168."""
    result = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))
    path = tmp_path / "exact.xlsx"
    write_xlsx(typed(result), path)
    breakdown = load_workbook(path, read_only=True)["Breakdown"]
    rows = list(breakdown.iter_rows(values_only=True))
    cpm = rows[0].index(OUTPUTS["cpm_eur_per_mtok"].label)
    engine = {c["id"]: c["cpm_eur_per_mtok"] for c in result["candidates"]}
    assert {r[0]: r[cpm] for r in rows[1:]} == engine
    assert any(len(repr(v)) > 17 for v in engine.values() if v is not None)  # 17 digits


def test_xlsxwriter_is_the_release_the_private_api_was_checked_against() -> None:
    """reports.files.xlsx._Sheet overrides xlsxwriter's private Worksheet._write_rows and
    calls its private _check_dimensions, _get_xf_index and the shared-string table's
    _get_shared_string_index (its public write_number rounds a double to 16 digits, and
    writing cell by cell is several times slower: benchmarks/workbook.py), so pyproject.toml
    pins xlsxwriter exactly. Before moving the pin, check those against the new release's
    source and run the workbook tests, then change `checked` below."""
    checked = "3.3.1"
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text("utf-8"))
    assert f"xlsxwriter=={checked}" in pyproject["project"]["dependencies"]
    assert version("xlsxwriter") == checked
