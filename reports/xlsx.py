"""The workbook procurement teams open: About, Scorecard, Breakdown, Assumptions, Sources,
Sizing, Break-even, P(frontier), Pairwise. Numbers are written as numbers (formatted, not
turned into text), headers carry units, a sheet whose figures the result lacks says so in its
first row. Every string is written as text, never as a formula (`reports.cells`: a label
starting with = + - @, tab or CR gets a leading apostrophe; control and bidi characters are
removed).

The document's created/modified stamps are the result's generated_at, so two runs on the same
result give the same workbook contents.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
from openpyxl import Workbook, load_workbook
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

from reports.cells import spreadsheet_value
from reports.frames import (
    BREAK_EVEN_HEADERS,
    HEADERS,
    PAIRWISE_COLUMNS,
    SIZING_HEADERS,
    assumptions_frame,
    break_even_frame,
    breakdown_frame,
    pairwise_frame,
    scorecard_frame,
    sizing_frame,
    sources_frame,
)
from reports.scorecard_table import NOT_COMPUTED

_OTHER_HEADERS = {
    "input": "Input", "column": "Key", "value": "Value (point)", "low": "Low", "high": "High",
    "unit": "Unit", "grade": "Grade", "source": "Source", "kind": "Kind",
    "subject": "Subject", "url": "URL", "date": "Date", "licence": "Licence and attribution",
    "snapshot_sha256": "Content sha256", "a": "A", "b": "B", "metric": "Metric",
    "p_a_lower": "P(A lower) (probability)",
}


def sheets(result: dict[str, Any]) -> dict[str, pl.DataFrame]:
    """Sheet name -> frame, in workbook order (the About sheet is written separately)."""
    probabilities = pl.DataFrame(
        [{"id": c["id"], "p_frontier": c.get("p_frontier")} for c in result["candidates"]],
        schema={"id": pl.String(), "p_frontier": pl.Float64()})
    return {
        "Scorecard": scorecard_frame(result),
        "Breakdown": breakdown_frame(result),
        "Assumptions": assumptions_frame(result),
        "Sources": sources_frame(result),
        "Sizing": sizing_frame(result),
        "Break-even": break_even_frame(result),
        "P(frontier)": probabilities,
        "Pairwise": pairwise_frame(result).select(list(PAIRWISE_COLUMNS)),
    }


#: sheet -> its own headers, looked up first (Break-even's CPM is an on-prem candidate's at
#: one volume, not the scorecard's CPM)
_SHEET_HEADERS = {"Sizing": SIZING_HEADERS, "Break-even": BREAK_EVEN_HEADERS}


def header(column: str, sheet: str = "") -> str:
    return (_SHEET_HEADERS.get(sheet, {}).get(column) or HEADERS.get(column)
            or SIZING_HEADERS.get(column) or _OTHER_HEADERS.get(column, column))


def about_rows(result: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("Proposal", result["proposal"]), ("Vintage", result["vintage"]),
        ("Generated at", result["generated_at"]), ("Code version", result["code_version"]),
        ("Example data", "yes: illustrative declarations, not measurements"
         if result.get("example_data") else "no"),
        ("Units", "in every column header; numbers are numbers"),
    ]


def write_xlsx(result: dict[str, Any], path: Path) -> None:
    book = Workbook()
    about = book.active
    about.title = "About"
    for row in about_rows(result):
        about.append([spreadsheet_value(v) for v in row])
    about.column_dimensions["A"].width = 16
    about.column_dimensions["B"].width = 70
    bold = Font(bold=True)
    fill = PatternFill("solid", fgColor="E3F2E1")
    for name, frame in sheets(result).items():
        sheet = book.create_sheet(name)
        if frame.is_empty() or (name == "P(frontier)" and frame["p_frontier"].is_null().all()):
            sheet.append([f"{name}: {NOT_COMPUTED}"])
            continue
        sheet.append([spreadsheet_value(header(c, name)) for c in frame.columns])
        for cell in sheet[1]:
            cell.font = bold
        for row in frame.iter_rows():  # every string as text: never a formula
            sheet.append([spreadsheet_value(v) for v in row])
        sheet.freeze_panes = "B2"
        for i, column in enumerate(frame.columns, start=1):
            width = max(len(header(column, name)),
                        *(len(str(v)) for v in frame[column].head(50)))
            sheet.column_dimensions[get_column_letter(i)].width = min(60, max(10, width + 2))
            if frame.schema[column] == pl.Float64():
                for (cell,) in sheet.iter_rows(min_row=2, min_col=i, max_col=i):
                    cell.number_format = "0.0000"
        if name == "Scorecard":
            rank = frame.columns.index("pareto_rank") + 1
            for row_cells in sheet.iter_rows(min_row=2):
                if row_cells[rank - 1].value == 1:
                    for cell in row_cells:
                        cell.fill = fill
    stamp = datetime.fromisoformat(result["generated_at"]).replace(tzinfo=None)
    book.properties.created = stamp
    book.properties.modified = stamp
    book.properties.creator = "inference-scorecard"
    book.save(path)


def read_values(path: Path) -> dict[str, list[list[Any]]]:
    """Every sheet's cell values (for tests and for checking a workbook by hand)."""
    book = load_workbook(path, read_only=True)
    return {ws.title: [list(r) for r in ws.iter_rows(values_only=True)] for ws in book}
