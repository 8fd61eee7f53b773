"""The workbook's presentation, read back with openpyxl: a number format per unit (EUR with
thousands separators, shares and probabilities as %, tokens/s whole, small figures with their
decimals; never the old blanket `0.0000`), frozen header rows, filter buttons (but on Inputs,
which the Scorecard reads by position), column widths, and header comments saying which
columns are formulas and which are the engine's values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter
from openpyxl.workbook.workbook import Workbook

from reports.files.xlsx import write_xlsx
from schemas.outputs import OUTPUTS
from tests.reports.conftest import FIXTURES


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Workbook:
    result = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))
    path = tmp_path_factory.mktemp("format") / "example.xlsx"
    write_xlsx(result, path)
    return load_workbook(path)


def column(book: Workbook, sheet: str, label: str) -> str:
    headers = [c.value for c in book[sheet][1]]
    return get_column_letter(headers.index(label) + 1)


def fmt(book: Workbook, sheet: str, name: str, row: int = 2) -> str:
    label = OUTPUTS[name].label if name in OUTPUTS else name
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
    ("Inputs", "headroom", "0.0%"),
    ("Inputs", "cost_of_capital_per_year", "0.0%"),
    ("Inputs", "demand_tokens_per_day", "#,##0"),
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

    assert "Formula over Inputs: cost_eur_per_hour / (served_tokens_per_s" in comment(
        "cpm_eur_per_mtok")
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
    write_xlsx(result, path)
    assert load_workbook(path, read_only=True)["Scorecard"].max_row == 1 + 30 * 7


def test_cost_model_and_capacity_cells_offer_their_words(book: Workbook) -> None:
    # the words the formulas test for (pipeline/engine/metrics.py COST_MODELS, CAPACITIES)
    lists = {str(v.sqref): v.formula1 for v in book["Inputs"].data_validations.dataValidation}
    model, capacity = column(book, "Inputs", "Cost model"), column(
        book, "Inputs", "Capacity (provisioned or elastic)")
    assert lists[f"{model}2:{model}8"] == '"declared,on_demand,reserved,tco"'
    assert lists[f"{capacity}2:{capacity}8"] == '"provisioned,elastic"'
