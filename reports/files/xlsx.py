"""The workbook procurement teams open, written with xlsxwriter: About, Scorecard, Inputs,
Demand, Breakdown, Assumptions, Evidence, Sources, Sizing, Break-even, P(frontier), Pairwise.

The workbook computes. Inputs holds one row per candidate (same order as the Scorecard): its
cost model and capacity, then every input column some candidate's figures use, at the engine's
point values (the modes of ranges), an empty cell where the input is null; the proposal's
demand, the same for every candidate, is one cell per input on the Demand sheet. The
Scorecard's CPM, cost per hour, monthly cost, energy, facility energy, electricity, carbon and
embodied carbon, and the steps between (billed instances, billed utilisation, served tokens/s,
average power, the TCO lines, ...) are Excel formulas over Inputs, filled from the `excel`
template each step declares in schemas/steps.py (the engine computes the same declared steps),
so changing an input on Inputs moves them. A formula over a null input gives "" (an empty
cell), never #DIV/0! or 0. The columns no formula can give (Monte Carlo ranges, P(frontier),
Pareto rank, sovereignty, time-matched figures; under a plan the horizon's CPM, J/token and
carbon and the steps reading them) hold the engine's values, and their headers say so, as the
Sizing and Recommendation sheets say which of their figures are values. References to Inputs
are absolute (Inputs!$E$2), references within a Scorecard row relative, so sorting the
Scorecard keeps every row's figures its own; Inputs is read by position, so it has no filter
buttons (sorting it would mix candidates), as its header comment says.

A formula cell stores no cached result and the workbook names this project as its producer
(`_Packager`), so Excel (`fullCalcOnLoad`) and LibreOffice compute every figure on opening,
from the Inputs as they are then; a viewer that does not calculate (a file previewer, openpyxl's
`data_only`) shows those cells empty: the CSV and Parquet files hold the figures as values.

Numbers are written as numbers (each the engine's double exactly) with a format per unit (EUR
with thousands separators, shares and probabilities as %, tokens/s as whole numbers, small
figures with their decimals), headers carry units, every table has a frozen header row and (but
Inputs) filter buttons. A sheet whose figures the result lacks says so in its first row. Every
string is written as text, never as a formula (`reports.cells`: a label starting with = + - @,
tab or CR gets a leading apostrophe; control and bidi characters are removed; strings go into
the shared-string table, xlsxwriter's `strings_to_formulas` is off).

Below its header row, each sheet is written column by column as the sheet's XML text
(`_Sheet.write_column`), not cell by cell through xlsxwriter's cell objects (docs/performance.md
has the figures); `_Sheet` uses xlsxwriter's private API, so pyproject.toml pins xlsxwriter
exactly.

The document's created/modified stamps are the result's generated_at, so two runs on the same
result give the same workbook contents.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import polars as pl
import xlsxwriter
from xlsxwriter.format import Format
from xlsxwriter.packager import Packager
from xlsxwriter.utility import xl_col_to_name
from xlsxwriter.worksheet import Worksheet

from reports.cells import spreadsheet_text
from reports.frames import (
    BREAK_EVEN_HEADERS,
    HEADERS,
    METRICS,
    PAIRWISE_COLUMNS,
    SIZING_HEADERS,
    Frames,
    frames_of,
    value,
)
from reports.freshness import partial_sentence
from reports.html.scorecard_table import NOT_COMPUTED
from schemas.outputs import OUTPUTS
from schemas.result import PLAN_FIGURES, CandidateResult, Result
from schemas.steps import CAPACITIES, COST_MODELS, HOUR_DEMAND_RATIOS, INPUT_COLUMNS, STEPS

_OTHER_HEADERS = {
    "input": "Input", "column": "Key", "value": "Value (point)", "low": "Low", "high": "High",
    "unit": "Unit", "grade": "Grade", "source": "Source", "kind": "Kind", "key": "Key",
    "files": "Files (sha256)", "checks": "Checks",
    "subject": "Subject", "url": "URL", "date": "Date", "licence": "Licence and attribution",
    "snapshot_sha256": "Content sha256", "a": "A", "b": "B", "metric": "Metric",
    "p_a_lower": "P(A lower) (probability)", "cost_model": "Cost model",
    "capacity": "Capacity (provisioned or elastic)",
    "objective": "Objective (EU Cloud Sovereignty Framework)", "title": "Title",
    "weight_pct": "Weight (%)", "seal": "SEAL supported (0-4)", "evidence": "Evidence",
    "gate": "Gate", "legal_basis": "Legal basis", "requirement": "Requirement",
    "status": "Outcome", "reason": "Reason", "source_url": "Source URL",
    "source_date": "Source date",
}


def sheets(result: Result, frames: Frames) -> dict[str, pl.DataFrame]:
    """Sheet name -> frame of the sheets written from the result's values, in workbook order
    (About, the Scorecard's formulas and Inputs are written apart; the Scorecard frame is the
    one its value columns come from)."""
    probabilities = pl.DataFrame(
        [{"id": c.id, "p_frontier": c.p_frontier} for c in result.candidates],
        schema={"id": pl.String(), "p_frontier": pl.Float64()})
    return {
        "Scorecard": frames.scorecard,
        "Breakdown": frames.breakdown,
        "Assumptions": frames.assumptions,
        "Evidence": frames.evidence,
        "Sources": frames.sources,
        "Sizing": frames.sizing,
        "Break-even": frames.break_even,
        "P(frontier)": probabilities,
        "Pairwise": frames.pairwise.select(list(PAIRWISE_COLUMNS)),
        "Sovereignty rubric": frames.rubric,
        "Gates": frames.gates,
        **({} if result.plan is None else {"Plan": plan_frame(result)}),
    }


def plan_frame(result: Result) -> pl.DataFrame:
    """Each month of each purchase plan of the result (the recommended candidate's first)."""
    assert result.plan is not None
    return pl.DataFrame([{"candidate": s.candidate, "fallback": s.fallback,
                          **m.model_dump()} for s in result.plan.schedules for m in s.months],
                        schema={"candidate": pl.String(), "fallback": pl.String(),
                                "month": pl.Int64(),
                                **{k: pl.Float64() for k in (
                                    "demand_tokens_per_day", "serving_instances", "own_share",
                                    "own_cost_eur", "fallback_cost_eur", "unserved_mtok",
                                    "own_capacity_tokens_per_day")}})


#: sheet -> its own headers, looked up first (Break-even's CPM is an on-prem candidate's at
#: one volume, not the scorecard's CPM)
_SHEET_HEADERS = {"Sizing": SIZING_HEADERS, "Break-even": BREAK_EVEN_HEADERS, "Plan": {
    "candidate": "Candidate", "fallback": "Fallback", "month": "Month",
    "demand_tokens_per_day": "Demand (tokens/day)",
    "serving_instances": "Own nodes serving (count)", "own_share": "Own share of the month",
    "own_cost_eur": "Own cost (EUR)", "fallback_cost_eur": "Fallback cost (EUR)",
    "unserved_mtok": "Unserved (Mtok)",
    "own_capacity_tokens_per_day": "Own nodes' goodput (tokens/day)"}}


def header(column: str, sheet: str = "") -> str:
    declared = OUTPUTS[column].label if column in OUTPUTS else None
    if sheet in ("Inputs", "Scorecard") and declared:
        return declared  # the figure of that name (Sizing's "utilisation" is the billed one)
    return (_SHEET_HEADERS.get(sheet, {}).get(column) or HEADERS.get(column)
            or SIZING_HEADERS.get(column) or _OTHER_HEADERS.get(column) or declared or column)


# --- number formats, per unit

#: unit (schemas/outputs.toml) -> Excel number format
UNIT_FORMATS = {
    "EUR": "#,##0.00", "EUR/h": "#,##0.00", "EUR/month": "#,##0.00", "EUR/year": "#,##0.00",
    "EUR/(kW month)": "#,##0.00", "EUR/Mtok": "#,##0.000", "EUR/kWh": "0.00000",
    "share": "0.0%", "probability": "0.0%", "1/year": "0.0%",
    "tokens/s": "#,##0", "tokens/day": "#,##0", "tokens": "#,##0", "requests/s": "#,##0.00",
    "W": "#,##0", "ratio": "0.00", "count": "#,##0.00", "level 0-4": "0",
    "J/token": "0.000", "kWh/Mtok": "0.000", "gCO2e/Mtok": "#,##0.0", "gCO2e/kWh": "#,##0.0",
    "kgCO2e": "#,##0", "MWh/year": "#,##0.0", "tCO2e/year": "#,##0.00", "s": "0.000",
    "months": "0", "years": "0.0",
}
#: columns whose format is not their unit's: whole counts (the counts declared `integer`, the
#: GPU count, the Pareto rank), and the metrics at the decimals the report tables print them
#: with (reports.frames.METRICS)
COLUMN_FORMATS = {
    **{k: "#,##0" for k, o in OUTPUTS.items() if o.integer and o.unit == "count"},
    "gpu_count": "0", "pareto_rank": "0",
    **{k: "#,##0" + ("." + "0" * m.decimals if m.decimals else "") for k, m in METRICS.items()},
}
#: per sheet, columns that are not the declared figure of their name
_SHEET_UNITS = {
    "Sizing": {"utilisation": "share"},
    "Break-even": {"versus_cpm_eur_per_mtok": "EUR/Mtok", "break_even_tokens_per_day":
                   "tokens/day"},
    "Pairwise": {"p_a_lower": "probability"},
    "Plan": {"month": "count", "demand_tokens_per_day": "tokens/day",
             "serving_instances": "count", "own_share": "share", "own_cost_eur": "EUR",
             "fallback_cost_eur": "EUR", "unserved_mtok": "Mtok",
             "own_capacity_tokens_per_day": "tokens/day"},
}


def unit_of(column: str, sheet: str = "") -> str | None:
    """The unit of a column: a sheet's own, the declared one (schemas/outputs.toml), a range
    column's metric's (`cpm_eur_per_mtok_p95`), the GPU count's; None for names, flags and
    ranks (the Parquet file's field metadata too)."""
    if column in _SHEET_UNITS.get(sheet, {}):
        return _SHEET_UNITS[sheet][column]
    base = re.sub(r"_p(5|50|95)$", "", column)
    if base in OUTPUTS:
        return OUTPUTS[base].unit
    return "count" if column == "gpu_count" else None


def number_format(column: str, sheet: str = "", dtype: pl.DataType | None = None) -> str | None:
    """The Excel number format of a numeric column (None: General)."""
    if sheet not in _SHEET_UNITS or column not in _SHEET_UNITS[sheet]:
        base = re.sub(r"_p(5|50|95)$", "", column)
        if base in COLUMN_FORMATS:
            return COLUMN_FORMATS[base]
    unit = unit_of(column, sheet)
    if unit in UNIT_FORMATS:
        return UNIT_FORMATS[unit]
    return "#,##0" if dtype is not None and dtype.is_integer() else None


class _Styles:
    """The workbook's formats, made once each (xlsxwriter keeps every Format object)."""

    HEADER: ClassVar[dict[str, Any]] = {"bold": True, "text_wrap": True, "valign": "top",
                                         "border": 1}
    FILLS: ClassVar[dict[str, str | None]] = {"value": "#EDEDED", "formula": "#DDEBF7",
                                              "input": "#FFF2CC", "plain": None}

    def __init__(self, book: xlsxwriter.Workbook) -> None:
        self.book = book
        self._made: dict[tuple[Any, ...], Format] = {}

    def get(self, **props: Any) -> Format:
        key = tuple(sorted(props.items()))
        if key not in self._made:
            self._made[key] = self.book.add_format(props)
        return self._made[key]

    def header(self, kind: str = "plain") -> Format:
        fill = self.FILLS[kind]
        return self.get(**self.HEADER, **({"bg_color": fill} if fill else {}))

    def number(self, fmt: str | None, **props: Any) -> Format | None:
        if fmt is None and not props:
            return None
        return self.get(**({"num_format": fmt} if fmt else {}), **props)


#: spreadsheet_text, remembered across sheets: a workbook repeats its strings (ids, units,
#: grades, sources per candidate)
_text = lru_cache(maxsize=1 << 16)(spreadsheet_text)


#: Excel's limit on the text of a cell, in UTF-16 units (xlsxwriter's `xls_strmax`)
_STRMAX = 32767


def _excel_text(text: str) -> str:
    """`text` cut to Excel's limit as xlsxwriter's write_string cuts it (in UTF-16 units,
    never inside a character beyond U+FFFF)."""
    if len(text) <= _STRMAX // 2 or len(text.encode("utf-16-le", "surrogatepass")) <= (
            2 * _STRMAX):
        return text
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > _STRMAX:
            return text[:index]
    return text


def _float_texts(columns: Sequence[list[Any]]) -> list[list[str | None]]:
    """For each column, each float of its items as the shortest text that reads back as the
    same double, a whole number without its ".0" (formatted by polars), None for anything
    else. (xlsxwriter's write_number writes 16 significant digits, which can round the last
    bit away: 3.1679999999999997 reads back as 3.168.) The columns of a sheet are formatted
    together, in one Series: a Series per column cost more than the formatting."""
    floats = [[item if type(item) is float else None for item in items] for items in columns]
    having = [i for i, items in enumerate(floats) if any(v is not None for v in items)]
    texts: list[list[str | None]] = [[None] * len(items) for items in floats]
    if not having:
        return texts
    series = pl.Series([v for i in having for v in floats[i]], dtype=pl.Float64())
    flat: list[str | None] = series.cast(pl.String()).str.strip_suffix(".0").to_list()
    start = 0
    for i in having:
        texts[i] = flat[start:start + len(floats[i])]
        start += len(floats[i])
    return texts


def _xml_text(text: str) -> str:
    """Text in an XML element, escaped as xlsxwriter escapes a formula (& < >)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


#: the items `_Sheet.write_column` writes without their `str()`
_PLAIN_TYPES = frozenset({str, float, int, bool, type(None)})


class _Sheet(Worksheet):
    """A worksheet whose body, every row under its header, is given column by column
    (`write_column`) and goes into the sheet's XML as text when the book closes.

    xlsxwriter keeps each cell as an object and writes it out through a dozen Python calls
    (type dispatch, dimension checks, attribute escaping, at writing and again at closing), and
    formats each number in Python. Here a cell is one string, made when its column is written,
    holding what xlsxwriter's own `write_number`, `write_string`, `write_boolean`,
    `write_blank` and `write_formula` write: numbers (the floats formatted by polars, each read
    back as the same double), strings through `spreadsheet_text` into the shared-string table
    (cut to Excel's 32,767 units), a formula with no cached result, a None or non-finite
    number as a formatted empty cell (no cell without a format).
    tests/reports/test_workbook_format.py reads a sheet written both ways back and finds the
    same cells. The header row above the body is xlsxwriter's (cells, row height, comments).

    It overrides xlsxwriter's private `_write_rows` and calls its private
    `_check_dimensions`, `_get_xf_index` and `_get_shared_string_index`, and reads its state
    (`dim_rowmax`, `table`, `row_info`, `comments`, `fh`, `str_table`): pyproject.toml pins
    xlsxwriter exactly, and tests/reports/test_workbook_format.py fails on another release.

    Formulas are written as given: xlsxwriter's write_formula runs its regular expressions
    over every formula to prefix dynamic-array functions, none of which the step templates
    use (TEMPLATE_FUNCTIONS)."""

    def __init__(self) -> None:
        super().__init__()
        self._first: int | None = None  # the body's first row
        self._body: dict[int, list[str]] = {}  # column -> its cells' XML, row by row
        self._styles: dict[int, str] = {}  # id(format) -> its ` s="n"` attribute
        self._texts: dict[str, str] = {}  # a string item -> the end of its cell

    def _shared(self, item: str) -> str:
        """The end of a text cell: its type and its index in the shared-string table (which
        counts every use, as write_string does). A text that starts with <r> and ends with
        </r> is an inline string instead: xlsxwriter writes such a shared string into the
        XML unescaped, as its own rich-text markup, so a label `<r></si>...</r>` would break
        the workbook or rewrite other cells' text."""
        table = self.str_table
        tail = self._texts.get(item)
        if tail is not None:
            if tail.startswith(' t="s"'):
                table.count += 1
            return tail
        text = _excel_text(_text(item))
        if text.startswith("<r>") and text.endswith("</r>"):
            space = ' xml:space="preserve"' if text != text.strip() else ""
            tail = f' t="inlineStr"><is><t{space}>{_xml_text(text)}</t></is></c>'
        else:
            tail = f' t="s"><v>{table._get_shared_string_index(text)}</v></c>'
        self._texts[item] = tail
        return tail

    def _shared_all(self, items: list[Any]) -> dict[str, str] | None:
        """`_shared` of every string item, each distinct string looked up once (in the order
        they first appear, so the shared-string table's indexes are those of one lookup per
        cell), the table's use count raised by every further use. None for a column holding
        items written through their `str()`: looked up cell by cell, in its order."""
        kinds = set(map(type, items))
        if not kinds <= _PLAIN_TYPES:
            return None
        if str not in kinds:
            return {}
        uses = Counter(items if len(kinds) == 1 else [i for i in items if type(i) is str])
        tails = {text: self._shared(text) for text in uses}
        self.str_table.count += sum(n - 1 for text, n in uses.items()
                                    if tails[text].startswith(' t="s"'))
        return tails

    def _style(self, fmt: Format | None) -> str:
        if fmt is None:
            return ""
        if id(fmt) not in self._styles:
            self._styles[id(fmt)] = f' s="{fmt._get_xf_index()}"'
        return self._styles[id(fmt)]

    def write_column(self, col: int, items: list[Any],
                     fmt: Format | list[Format | None] | None = None, *,
                     formula: str | None = None, first_row: int = 1,
                     values_at: frozenset[int] = frozenset(),
                     texts: list[str | None] | None = None) -> None:
        """Column `col` of the body, from row `first_row` (0-based) down, one item a row:
        `fmt` for each (or one format per row). With `formula` (its row number written
        ROW), each row's cell is that formula, with no cached result (the items size the
        column only): Excel and LibreOffice compute it on opening (see `_Packager`); but the
        items at `values_at` (their indices) are written as values (a row no formula over
        Inputs gives: a mix's). `texts`: the items' float texts when the sheet formatted its
        columns together (`_float_texts`)."""
        if not items:
            return
        if self._first is None:
            self._first = first_row
        if first_row != self._first or col in self._body:
            raise ValueError(f"sheet {self.name!r}: the body starts at row {self._first}, "
                             f"column {col} once")
        last = first_row + len(items) - 1
        if self._check_dimensions(first_row, col) or self._check_dimensions(last, col):
            raise ValueError(f"sheet {self.name!r}: row {last + 1} or column {col + 1} is "
                             "beyond an Excel sheet")
        styles = ([self._style(f) for f in fmt] if isinstance(fmt, list)
                  else [self._style(fmt)] * len(items))
        if len(styles) != len(items):
            raise ValueError(f"sheet {self.name!r}: {len(items)} rows, {len(styles)} formats")
        letter = xl_col_to_name(col)
        rows = range(first_row + 1, last + 2)  # Excel's row numbers
        cells: list[str] = []
        add = cells.append
        if formula is not None:  # no cached result: every reader that calculates computes it
            parts = _xml_text(formula[1:] if formula.startswith("=") else formula).split(ROW)
            if texts is None and values_at:
                texts = _float_texts([items])[0]
            for i, (row, s) in enumerate(zip(rows, styles, strict=True)):
                if i in values_at:
                    assert texts is not None
                    self._value_cell(add, letter, row, items[i], texts[i], s)
                else:
                    add(f'<c r="{letter}{row}"{s}><f>{str(row).join(parts)}</f></c>')
            self._body[col] = cells
            return
        if texts is None:
            texts = _float_texts([items])[0]
        if all(type(item) is float and math.isfinite(item) for item in items):
            self._body[col] = [f'<c r="{letter}{row}"{s}><v>{text}</v></c>'
                               for row, text, s in zip(rows, texts, styles, strict=True)]
            return
        tails = self._shared_all(items)
        for row, item, text, s in zip(rows, items, texts, styles, strict=True):
            self._value_cell(add, letter, row, item, text, s, tails)
        self._body[col] = cells

    def _value_cell(self, add: Callable[[str], None], letter: str, row: int, item: Any,
                    text: str | None, s: str, tails: Mapping[str, str] | None = None
                    ) -> None:
        """One cell holding `item` as its value (`text`: a float's as _float_texts gives;
        `tails`: the column's strings already looked up, `_shared_all`)."""
        shared = self._shared
        of = type(item)
        if of is str:
            add(f'<c r="{letter}{row}"{s}{shared(item) if tails is None else tails[item]}')
        elif of is float and math.isfinite(item):
            add(f'<c r="{letter}{row}"{s}><v>{text}</v></c>')
        elif of is int:
            add(f'<c r="{letter}{row}"{s}><v>{item}</v></c>')
        elif item is None or (isinstance(item, float) and not math.isfinite(item)):
            add(f'<c r="{letter}{row}"{s}/>' if s else "")
        elif isinstance(item, bool):
            add(f'<c r="{letter}{row}"{s} t="b"><v>{int(item)}</v></c>')
        elif isinstance(item, int | float):  # a subclass (numpy's float64 is one)
            add(f'<c r="{letter}{row}"{s}><v>{float(item)!r}</v></c>')
        else:
            add(f'<c r="{letter}{row}"{s}{shared(str(item))}')

    def _write_rows(self) -> None:
        """The rows above the body as xlsxwriter writes them, then the body's rows."""
        first = self._first
        if first is None:
            super()._write_rows()
            return
        last: int = self.dim_rowmax  # type: ignore[has-type]  # (untyped in xlsxwriter)
        if any(r >= first for r in (*self.comments, *self.row_info)) or any(
                self.table.get(r) for r in range(first, last + 1)):
            raise ValueError(f"sheet {self.name!r}: a cell, comment or row format in the body")
        self.dim_rowmax = first - 1  # xlsxwriter writes the rows above the body
        try:
            super()._write_rows()
        finally:
            self.dim_rowmax = last
        write = self.fh.write
        for row, cells in enumerate(zip(*(self._body[c] for c in sorted(self._body)),
                                        strict=True), start=first + 1):
            line = "".join(cells)
            if line:
                write(f'<row r="{row}">{line}</row>')


def _width(title: str, items: list[Any], numeric: bool) -> float:
    """A column's width: wide enough for its values (the first 50) and for its header on
    at most three lines."""
    if numeric:
        return min(24.0, max(11.0, len(title) / 3 + 2))
    longest = max([len(str(v)) for v in items[:50] if v is not None] or [0])
    return min(60.0, max(10.0, longest + 2, len(title) / 3 + 2))


def _header_row(sheet: Worksheet, titles: list[str], formats: list[Format]) -> None:
    sheet.set_row(0, 45)
    for col, (title, fmt) in enumerate(zip(titles, formats, strict=True)):
        sheet.write_string(0, col, spreadsheet_text(title), fmt)


def _comment(sheet: Worksheet, col: int, text: str) -> None:
    sheet.write_comment(0, col, spreadsheet_text(text), {"x_scale": 2.5, "y_scale": 2})


def _add_sheet(book: xlsxwriter.Workbook, name: str) -> _Sheet:
    sheet = book.add_worksheet(name, worksheet_class=_Sheet)
    assert isinstance(sheet, _Sheet)
    return sheet


# --- the Scorecard and its Inputs

#: a placeholder of a Step.excel template: {name}, {name?} or {name:default}
_PLACEHOLDER = re.compile(r"\{(\w+)(\?|:[-0-9.]+)?\}")


def fill(template: str, cell: Callable[[str], str | None]) -> str:
    """A Step.excel template as a formula, `cell(name)` giving the reference of column
    `name` in this row (None: the workbook has no such column, every value of it is null).

    `{name}` enters the guard IF(OR(ref="",...),"",...): a null input gives "" (the step is
    "" outright when the workbook has no such column); `{name?}` is the bare reference ("" for
    a missing column); `{name:d}` is IF(ref="",d,ref) (d for a missing column). The whole is
    wrapped in IFERROR(...,""): a division by zero is null, as in the engine."""
    guard: list[str] = []
    missing = False

    def place(match: re.Match[str]) -> str:
        nonlocal missing
        name, mode = match.group(1), match.group(2)
        ref = cell(name)
        if mode and mode.startswith(":"):
            return mode[1:] if ref is None else f'IF({ref}="",{mode[1:]},{ref})'
        if ref is None:
            missing = missing or mode is None
            return '""'
        if mode is None and ref not in guard:
            guard.append(ref)
        return ref

    body = _PLACEHOLDER.sub(place, template)
    if missing:
        return '=""'
    formula = f'IFERROR({body},"")'
    if guard:
        tests = ",".join(f'{ref}=""' for ref in guard)
        formula = f'IF(OR({tests}),"",{formula})'
    return "=" + formula


#: inputs always on the Inputs sheet, even when every candidate leaves them null, so a reader
#: can fill them in
_CORE_INPUTS = ("tokens_per_s", "utilisation", "busy_power_w", "idle_power_w", "pue",
                "grid_gco2e_per_kwh")
_FIRST_COLUMNS = ("id", "label", "cost_model", "capacity")
#: the proposal's [demand], the same for every candidate: one cell each on the Demand sheet,
#: which every candidate's formulas read
DEMAND_INPUTS = ("demand_tokens_per_day", "demand_requests_per_s", "request_output_tokens",
                 "request_output_tokens_p95", "peak_factor", "headroom",
                 "redundancy_instances")
#: the Scorecard's columns that name the candidate (no header comment)
_IDENTITY = ("id", "label", "deployment", "provider", "zone", "gpu", "gpu_count")
_STEP = {s.name: s for s in STEPS}


def _reads(step: str) -> frozenset[str]:
    """The columns a step's Excel formula reads (its template's placeholders)."""
    return frozenset(m.group(1) for m in _PLACEHOLDER.finditer(_STEP[step].excel or ""))


def _planned_steps() -> frozenset[str]:
    """The plan's figures (PLAN_FIGURES) and every step whose formula reads one of them,
    directly or through other steps: under a plan the first are the horizon's, so a formula
    over them would mix the horizon's figure with one month's inputs (energy per Mtok from the
    horizon's J/token, say); the workbook writes all of them as the engine's values."""
    found = set(PLAN_FIGURES)
    for step in STEPS:  # in computing order: a step reads earlier steps only
        if _reads(step.name) & found:
            found.add(step.name)
    return frozenset(found)


#: `_planned_steps()`, found once (the steps do not change)
PLANNED_STEPS = _planned_steps()


#: the row number in a column's formula pattern, replaced per row (no formula has braces)
ROW = "{row}"


@dataclass(frozen=True)
class Layout:
    """Where each column of the Inputs and Scorecard sheets is: column letters by name."""

    inputs: list[str]  # Inputs sheet columns, in order
    scorecard: list[str]  # Scorecard sheet columns, in order
    demand: list[str]  # the Demand sheet's rows, in order (from its row 2)
    #: whether the Scorecard's figures are formulas: every candidate carries the evaluated
    #: row (`detail`, with its cost model), as the engine writes it; a result without (a
    #: hand-made one) gets its values only
    computes: bool

    def input_ref(self, name: str, row: str = ROW) -> str | None:
        """Absolute reference to an Inputs cell in Excel row `row` (sorting the Scorecard
        keeps it), or to the Demand sheet's one cell of a demand input."""
        if name in self.demand:
            return f"Demand!$B${self.demand.index(name) + 2}"
        if name not in self.inputs:
            return None
        return f"Inputs!${xl_col_to_name(self.inputs.index(name))}${row}"

    def ref(self, name: str, row: str = ROW) -> str | None:
        """A column's cell in Excel row `row`: a Scorecard step relative (a formula, or the
        engine's value of a step without an Excel form), an input on Inputs absolute."""
        if name in self.scorecard and name in _STEP:
            return f"{xl_col_to_name(self.scorecard.index(name))}{row}"
        return self.input_ref(name, row)


class Points:
    """Each candidate's point value of a column (an input or a step), by name: the evaluated
    row's (`detail`), else the mode of the engine's `inputs` list; each column found once."""

    def __init__(self, candidates: list[CandidateResult]) -> None:
        self.candidates = candidates
        self._modes: list[dict[str, Any]] | None = None
        self._columns: dict[str, list[Any]] = {}

    def __call__(self, name: str) -> list[Any]:
        if name not in self._columns:
            if self._modes is None:  # input -> mode, the first entry of each input
                self._modes = [{} for _ in self.candidates]
                for modes, c in zip(self._modes, self.candidates, strict=True):
                    for i in reversed(c.inputs):
                        modes[i.input] = i.mode
            # reports.frames.value, inlined: it runs for every candidate and column
            self._columns[name] = [
                found if (found := getattr(c, name) if name in c.model_fields_set
                          else c.detail.get(name)) is not None else modes.get(name)
                for c, modes in zip(self.candidates, self._modes, strict=True)]
        return self._columns[name]


def layout(result: Result, card: pl.DataFrame, points: Points) -> Layout:
    """The columns of Inputs (the first columns, then every input some candidate has a value
    for, and the core inputs) and of the Scorecard (the scorecard table's columns, the
    monthly cost after CPM, then every other step some candidate has a value for)."""
    candidates = result.candidates

    def used(name: str) -> bool:
        return any(item is not None for item in points(name))

    # one value for all: one cell (a mix has no inputs of its own: it has no say)
    plain = [c.deployment != "mix" for c in candidates]
    demand = [n for n in DEMAND_INPUTS
              if used(n) and len({v for v, p in zip(points(n), plain, strict=True) if p}) == 1]
    inputs = [*_FIRST_COLUMNS,
              *[n for n in INPUT_COLUMNS
                if (n in _CORE_INPUTS or used(n)) and n not in demand]]
    main = list(card.columns)
    if used("monthly_cost_eur"):
        main.insert(main.index("cpm_eur_per_mtok") + 1, "monthly_cost_eur")
    extra = [s.name for s in STEPS if s.name not in main and used(s.name)]
    computes = all(value(c, "cost_model") is not None for c in candidates)
    return Layout(inputs, main + extra, demand, computes)


#: the string inputs and the values the formulas know
_CHOICES = {"cost_model": COST_MODELS, "capacity": CAPACITIES}
_INPUT_NOTE = ("Do not sort this sheet: the Scorecard reads it row by row (row 2 here is "
               "row 2 there).")
#: inputs a formula reads only in some cases
_INPUT_NOTES = {
    "utilisation": "Read only without a demand: with one, the billed utilisation follows "
                   "from the sizing (change the demand, peak factor or headroom instead).",
    "min_instances": "Read only with a demand: an elastic fleet's floor, or a term's minimum "
                     "commitment in instances.",
    **{name: "Read only by an elastic fleet with a floor: each hour is billed at least "
             "min_instances." for name in HOUR_DEMAND_RATIOS},
}


def _write_inputs(book: xlsxwriter.Workbook, styles: _Styles, places: Layout,
                  points: Points) -> None:
    sheet = _add_sheet(book, "Inputs")
    names = places.inputs
    _header_row(sheet, [header(n, "Inputs") for n in names],
                [styles.header("plain" if n in _FIRST_COLUMNS else "input") for n in names])
    columns = [points(name) for name in names]
    for col, (name, items, texts) in enumerate(zip(names, columns, _float_texts(columns),
                                                   strict=True)):
        meaning = OUTPUTS[name].meaning if name in OUTPUTS else {
            "id": "the candidate's id", "label": "the candidate",
            "cost_model": "tco (the TCO lines) or a price per hour (declared, on_demand, "
                          "reserved)",
            "capacity": "provisioned (every sized instance billed every hour) or elastic "
                        "(busy instance-hours billed, at least the minimum instances)"}[name]
        note = {0: _INPUT_NOTE}.get(col, _INPUT_NOTES.get(
            name, "Change it and the Scorecard's formulas move."))
        _comment(sheet, col, f"{header(name, 'Inputs')}: {meaning}. {note}")
        numeric = name not in _FIRST_COLUMNS
        fmt = styles.number(number_format(name), font_color="#1F4E79") if numeric else None
        sheet.write_column(col, items, fmt, texts=texts)
        sheet.set_column(col, col, _width(header(name, "Inputs"), items, numeric))
        if name in _CHOICES and items:  # a drop-down of the words the formulas test for
            sheet.data_validation(1, col, len(items), col, {
                "validate": "list", "source": list(_CHOICES[name])})
    sheet.freeze_panes(1, 1)


def _derived_demand(result: Result, places: Layout) -> dict[str, str]:
    """The demand input the engine derived from the other (tokens/day from a request rate,
    or the request rate from tokens/day with the request's shape), as a formula over it on
    the Demand sheet, so changing the given one moves both. The tokens per request (output,
    or prompt + output on a total token basis) is their ratio, as the engine set it."""
    names = ("demand_tokens_per_day", "demand_requests_per_s")
    if not result.candidates or not all(n in places.demand for n in names):
        return {}
    given = {i.input: i for i in result.candidates[0].inputs if i.input in names}
    tokens, rate = (given[n].mode for n in names)
    if not tokens or not rate:
        return {}
    per_request = f"{tokens / (rate * 86_400):.12g}"
    row = {n: places.demand.index(n) + 2 for n in names}
    if given["demand_tokens_per_day"].key == "demand.requests_per_s":  # from the rate
        return {"demand_tokens_per_day":
                f"=$B${row['demand_requests_per_s']}*86400*{per_request}"}
    return {"demand_requests_per_s":
            f"=$B${row['demand_tokens_per_day']}/86400/{per_request}"}


def _write_demand(book: xlsxwriter.Workbook, styles: _Styles, result: Result,
                  places: Layout, points: Points) -> None:
    """The proposal's demand, one cell per input, which every candidate's formulas read."""
    if not places.demand:
        return
    sheet = book.add_worksheet("Demand")  # a few cells: xlsxwriter's own, cell by cell
    _header_row(sheet, ["Demand input", "Value", "Meaning"],
                [styles.header("plain"), styles.header("input"), styles.header("plain")])
    _comment(sheet, 1, "Change a value and every candidate's sizing and figures on the "
             "Scorecard move.")
    derived = _derived_demand(result, places)
    for row, name in enumerate(places.demand, start=1):
        fmt = styles.number(number_format(name), font_color="#1F4E79")
        sheet.write_string(row, 0, spreadsheet_text(header(name, "Inputs")),
                           styles.get(bold=True))
        if name in derived:
            sheet.write_formula(row, 1, derived[name], fmt, "")  # no cached result: computed
        else:
            sheet.write_number(row, 1, points(name)[0], fmt)
        sheet.write_string(row, 2, spreadsheet_text(
            OUTPUTS[name].meaning + (" (computed from the other demand input)"
                                     if name in derived else "")))
    sheet.set_column(0, 0, 36)
    sheet.set_column(1, 1, 16)
    sheet.set_column(2, 2, 90)
    sheet.freeze_panes(1, 0)


#: the only functions the step templates use: none needs xlsxwriter's future-function
#: expansion (the `_xlfn.` prefixes of Excel 2010+ functions), so `_Sheet` writes formulas
#: as they are
TEMPLATE_FUNCTIONS = ("IF", "OR", "IFERROR", "CEILING", "PMT", "MAX", "MIN")


def _write_scorecard(book: xlsxwriter.Workbook, styles: _Styles, result: Result,
                     card: pl.DataFrame, places: Layout, points: Points,
                     planned: frozenset[str]) -> None:
    """The Scorecard; `planned`: the steps written as the engine's values (a plan's)."""
    sheet = _add_sheet(book, "Scorecard")
    names = places.scorecard

    def kind(name: str) -> str:
        if name in _IDENTITY:
            return "plain"
        if name in planned:
            return "value"  # the horizon's, or read from it: not one row's formula
        formula = (name in _STEP and _STEP[name].excel) or name in places.inputs
        return "formula" if places.computes and formula else "value"

    kinds = [kind(n) for n in names]
    # a mix's figures come from its parts' rows, not from Inputs: its values, not formulas
    mixes = frozenset(i for i, c in enumerate(result.candidates) if c.deployment == "mix")
    _header_row(sheet, [header(n, "Scorecard") for n in names],
                [styles.header(k) for k in kinds])
    columns = [card[name].to_list() if name in card.columns else points(name)
               for name in names]
    for col, (name, k, items, texts) in enumerate(zip(names, kinds, columns,
                                                      _float_texts(columns), strict=True)):
        title = header(name, "Scorecard")
        meaning = f"{title}: {OUTPUTS[name].meaning}. " if name in OUTPUTS else f"{title}. "
        if k == "formula" and name in _STEP:
            _comment(sheet, col, f"{meaning}Formula over Inputs: {_STEP[name].formula}.")
        elif k == "formula":
            _comment(sheet, col, f"{meaning}The Inputs sheet's value.")
        elif k == "value" and planned and name in PLAN_FIGURES:
            _comment(sheet, col, f"{meaning}The plan's figure over the horizon (the Plan "
                     "sheet), the engine's value, not a formula: it does not move when an "
                     "input changes.")
        elif k == "value" and name in planned:
            _comment(sheet, col, f"{meaning}The engine's value, not a formula: its formula "
                     "reads a figure the plan makes the horizon's (CPM, J/token or carbon), "
                     "so it does not move when an input changes.")
        elif k == "value":
            _comment(sheet, col, f"{meaning}The engine's value, not a formula: it does not "
                     "move when an input changes.")
        dtype = card.schema.get(name, pl.Float64())
        numeric = dtype.is_numeric()
        fmt = styles.number(number_format(name, "Scorecard", dtype)) if numeric else None
        # the column's formula, filled once with ROW for the row number
        pattern = fill(_STEP[name].excel or "", places.ref) if name in _STEP else (
            '=IF({ref}="","",{ref})'.format(ref=places.input_ref(name)))
        sheet.write_column(col, items, fmt, formula=pattern if k == "formula" else None,
                           values_at=mixes, texts=texts)
        sheet.set_column(col, col, _width(title, items, numeric))
    last = len(result.candidates)
    sheet.freeze_panes(1, 1)
    sheet.autofilter(0, 0, last, len(names) - 1)
    if "pareto_rank" in names and last:
        rank = xl_col_to_name(names.index("pareto_rank"))
        sheet.conditional_format(1, 0, last, len(names) - 1, {
            "type": "formula", "criteria": f"=${rank}2=1",
            "format": styles.get(bg_color="#E3F2E1")})


# --- the other sheets

def _write_table(book: xlsxwriter.Workbook, styles: _Styles, name: str,
                 frame: pl.DataFrame, formulas: dict[str, str] | None = None,
                 notes: Mapping[str, str] | None = None) -> None:
    """A sheet of `frame`'s values; a column of `formulas` is that formula on every row (its
    row number written ROW), the frame's values only sizing the column, under a blue header;
    a column of `notes` gets that header comment (with formulas, a grey header: a value)."""
    sheet = _add_sheet(book, name)
    if frame.is_empty() or (name == "P(frontier)" and frame["p_frontier"].is_null().all()):
        sheet.write_string(0, 0, f"{name}: {NOT_COMPUTED}")
        sheet.set_column(0, 0, 50)
        return
    columns = frame.columns
    notes = notes or {}
    _header_row(sheet, [header(c, name) for c in columns], [styles.header(
        "formula" if c in (formulas or {}) else "value" if formulas and c in notes
        else "plain") for c in columns])
    for col, column in enumerate(columns):
        if column in notes:
            _comment(sheet, col, f"{header(column, name)}: {notes[column]}")
    per_row_unit = name == "Assumptions"  # value, low, high: each row in its own unit
    units = frame["unit"].to_list() if per_row_unit else []
    by_unit = {u: styles.number(UNIT_FORMATS.get(u or "")) for u in set(units)}
    values = [frame[column].to_list() for column in columns]
    for col, (column, items, texts) in enumerate(zip(columns, values, _float_texts(values),
                                                     strict=True)):
        dtype = frame.schema[column]
        numeric = dtype.is_numeric()
        fmt = styles.number(number_format(column, name, dtype)) if numeric else None
        formats = ([by_unit[u] for u in units] if per_row_unit and column in
                   ("value", "low", "high") else fmt)
        sheet.write_column(col, items, formats, formula=(formulas or {}).get(column),
                           texts=texts)
        sheet.set_column(col, col, _width(header(column, name), items, numeric))
    sheet.freeze_panes(1, 1)
    sheet.autofilter(0, 0, frame.height, len(columns) - 1)


#: the Sizing sheet's columns that are the Scorecard's figures of the same candidate (its
#: "utilisation" is the billed one)
_SIZING_STEPS = {"utilisation": "billed_utilisation"}
_MTOK_PER_YEAR = "*365/1000000"
#: Sizing's yearly totals: a Scorecard figure per Mtok x the demand's Mtok a year, / 1,000
_SIZING_YEARLY = {"annual_mwh": ("facility_kwh_per_mtok", "/1000"),
                  "annual_tco2e": ("carbon_gco2e_per_mtok", "/1000000")}


def _scorecard_lookup(places: Layout, step: str, count: int, key: str) -> str | None:
    """The Scorecard's `step` in the row whose id is `key` (a cell or a quoted id), by
    INDEX/MATCH: sorting the Scorecard keeps it right; None when the step has no column."""
    if step not in places.scorecard or step not in _STEP:
        return None
    col, last = xl_col_to_name(places.scorecard.index(step)), count + 1
    return (f"INDEX(Scorecard!${col}$2:${col}${last},"
            f"MATCH({key},Scorecard!$A$2:$A${last},0))")


def _sizing_formulas(frame: pl.DataFrame, places: Layout, count: int,
                     static: frozenset[str] = frozenset()) -> dict[str, str]:
    """The Sizing sheet's figures as formulas reading the Scorecard's row of the same
    candidate by its id (INDEX/MATCH, so sorting the Scorecard keeps them right) and the
    Demand sheet's tokens/day: they move with the inputs. `count`: the candidates; a figure
    reading a Scorecard step of `static` (a plan's horizon figures, which are not the first
    month's the sizing is) stays the engine's value."""
    if not places.computes or "candidate" not in frame.columns:
        return {}

    def look_up(step: str) -> str | None:
        if step in static:
            return None
        return _scorecard_lookup(places, step, count, f"$A{ROW}")

    out: dict[str, str] = {}
    demand = places.input_ref("demand_tokens_per_day")
    for column in frame.columns:
        if column in _SIZING_YEARLY and demand is not None:
            step, scale = _SIZING_YEARLY[column]
            found = look_up(step)
            if found is not None:
                out[column] = (f'=IFERROR(IF({found}="","",'
                               f'{found}*{demand}{_MTOK_PER_YEAR}{scale}),"")')
        elif (found := look_up(_SIZING_STEPS.get(column, column))) is not None:
            out[column] = f'=IFERROR({found},"")'
    goodput, littles = look_up("goodput_instances"), look_up("littles_law_instances")
    if "binding" in frame.columns and goodput is not None and littles is not None:
        out["binding"] = (f'=IFERROR(IF({goodput}="","",IF({littles}="","goodput",'
                          f'IF({littles}>{goodput},"Little\'s law","goodput"))),"")')
    return out


def _sizing_notes(frame: pl.DataFrame, formulas: Mapping[str, str],
                  static: frozenset[str]) -> dict[str, str]:
    """The Sizing sheet's header comments when it computes: which figures are formulas and
    which the engine's values (a figure reading a Scorecard step of `static`, the plan's)."""
    if not formulas:
        return {}
    out = {}
    for column in frame.columns:
        if column in ("candidate", "capacity"):
            continue
        if column in formulas:
            out[column] = ("a formula over the Scorecard's row of the same candidate (by its "
                           "id) and the Demand sheet: it moves with the inputs.")
            continue
        reads = _SIZING_YEARLY.get(column, (_SIZING_STEPS.get(column, column), ""))[0]
        why = "" if reads not in static else (
            f" (it reads the Scorecard's {header(reads, 'Scorecard')}, under the plan the "
            "horizon's, not the first month's this sizing is)" if reads in PLAN_FIGURES else
            f" (it reads the Scorecard's {header(reads, 'Scorecard')}, the first month's, "
            "which the Scorecard holds as a value under the plan: its formula would read the "
            "horizon's J/token)")
        out[column] = (f"the engine's value, not a formula{why}: it does not move when an "
                       "input changes (re-run scorecard run).")
    return out


def about_rows(result: Result, computes: bool = True) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = [
        ("Proposal", result.proposal), ("Vintage", result.vintage),
    ]
    if result.partial_month is not None:  # as the report's first screen and the terminal
        rows.append(("Partial month", partial_sentence(result.vintage, result.partial_month)))
    if result.proposal_sha256:
        rows.append(("Proposal sha256", result.proposal_sha256))
    plan = result.plan
    return [
        *rows,
        ("Generated at", result.generated_at), ("Code version", result.code_version),
        ("Example data", "yes: illustrative declarations, not measurements"
         if result.example_data else "no"),
        ("Units", "in every column header; numbers are numbers"),
        ("Scorecard", ("blue headers are Excel formulas over the Inputs sheet (change an "
         "input there and they move: " + (
             "cost, monthly cost and the steps of the first month" if plan else
             "CPM, cost, monthly cost, energy, electricity, carbon and the steps between")
         + "; a mix's row holds the engine's values); grey headers are the engine's values "
         "(ranges, P(frontier), Pareto rank, sovereignty, time-matched figures" + (
             f"; under the plan, the horizon's CPM, J/token and carbon over its {plan.months} "
             "months, and the first month's figures whose formulas would read them (facility "
             "energy and electricity per Mtok, energy and carbon per request): values, not "
             "recomputed" if plan else "")
         + "), which do not move") if computes else
         "the engine's values: this result carries no evaluated inputs per candidate, so no "
         "formula is written"),
        ("Inputs", "one row per candidate, in the Scorecard's order, at the engine's point "
         "values; an empty cell is an input not given (the figures it feeds stay empty). "
         "Do not sort it: the Scorecard reads it row by row"),
        ("Demand", "with a demand: one cell per demand input, which every candidate's "
         "formulas read (change it there, once)"),
        ("Sizing", "with a demand" + (": the first month's" if plan else "") + ": blue "
         "headers are formulas over the Scorecard's row of each candidate and the Demand "
         "sheet: they move with the inputs" + (
             "; the MWh a year (from the first month's facility energy per Mtok) and the "
             "tCO2e a year (from the horizon's carbon per Mtok), grey, are the engine's "
             "values" if plan else "")),
        ("Other sheets", "the engine's values as computed, for the record"),
    ]


#: the producer the workbook names (docProps/app.xml `Application`)
GENERATOR = "inference-scorecard"


class _Packager(Packager):
    """xlsxwriter's packager, naming this project as the workbook's producer instead of
    "Microsoft Excel". LibreOffice keeps the cached formula results of a file Microsoft Excel
    (or LibreOffice) wrote and by default never recalculates it on load; a file from another
    producer with no cached result but 0 it recalculates in full (sc/source/filter/oox/
    workbookhelper.cxx `mbGeneratorKnownGood`, workbookfragment.cxx `recalcFormulaCells`),
    and a formula cell without a cached result (as `_Sheet` writes them) it computes on load
    in any case. Excel recalculates on load either way (`fullCalcOnLoad`, which xlsxwriter
    writes)."""

    def _write_app_file(self) -> None:
        super()._write_app_file()
        buffer, name, _ = self.filenames[-1]  # in memory: the app.xml just written
        assert name == "docProps/app.xml"
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        buffer.write(text.replace("<Application>Microsoft Excel</Application>",
                                  f"<Application>{GENERATOR}</Application>", 1))


class _Book(xlsxwriter.Workbook):
    def _get_packager(self) -> Packager:
        return _Packager()


#: a candidate id as a proposal may write it (schemas/proposal.py Candidate.id)
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _write_recommendation(book: xlsxwriter.Workbook, styles: _Styles, result: Result,
                          places: Layout, planned: frozenset[str]) -> None:
    """The Recommendation sheet: the engine's choice (static: it comes with the Monte Carlo
    and the rank; re-run to choose again) and its CPM and monthly cost as formulas reading
    its Scorecard row by id (INDEX/MATCH), so they move with the inputs; but a figure the
    Scorecard holds as a value (of `planned`, the plan's horizon figures, or a mix's) is that
    value, labelled so. Only for an id as a proposal may write it (a hand-made result's id is
    never put inside a formula)."""
    chosen = result.recommendation.candidate if result.recommendation else None
    candidate = next((c for c in result.candidates if c.id == chosen), None)
    if candidate is None or not places.computes or not _PLAIN_ID.fullmatch(candidate.id):
        return
    sheet = book.add_worksheet("Recommendation")  # a few cells: xlsxwriter's own
    bold = styles.get(bold=True)
    sheet.write_string(0, 0, "Recommended", bold)
    sheet.write_string(0, 1, candidate.id)
    sheet.write_string(0, 2, "the engine's choice by the policy's rule, with the Monte Carlo "
                       "and the rank: it does not move when an input changes (re-run to "
                       "choose again)")
    row = 1
    for step in ("cpm_eur_per_mtok", "monthly_cost_eur"):
        found = _scorecard_lookup(places, step, len(result.candidates), f'"{candidate.id}"')
        if found is None:
            continue
        sheet.write_string(row, 0, header(step, "Scorecard"), bold)
        fmt = styles.number(number_format(step))
        static = ("the mix's, from its parts" if candidate.deployment == "mix" else
                  f"the horizon's CPM over the plan's {result.plan.months} months"
                  if step in planned and result.plan is not None else None)
        if static is None:
            sheet.write_formula(row, 1, f'=IFERROR({found},"")', fmt, "")  # on opening
            sheet.write_string(row, 2, "a formula over the candidate's Scorecard row: it "
                               "moves with the inputs" + (
                                   " (the first month's)" if result.plan is not None else ""))
        else:
            figure = value(candidate, step)
            if figure is not None:
                sheet.write_number(row, 1, figure, fmt)
            sheet.write_string(row, 2, f"{static}: a value, not recomputed (it does not move "
                               "when an input changes; re-run to recompute)")
        row += 1
    sheet.set_column(0, 0, 24)
    sheet.set_column(1, 1, 24)
    sheet.set_column(2, 2, 90)


def write_xlsx(result: Result, path: Path, frames: Frames | None = None) -> None:
    """The workbook of `result`; `frames`: the result's, when the caller has built them
    (`write_outputs` does)."""
    book = _Book(str(path), {
        "strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False,
        "in_memory": True})
    stamp = datetime.fromisoformat(result.generated_at).replace(tzinfo=None)
    book.set_properties({"created": stamp, "author": "inference-scorecard"})
    styles = _Styles(book)
    about = _add_sheet(book, "About")
    tables = sheets(result, frames_of(result) if frames is None else frames)
    card = tables.pop("Scorecard")
    points = Points(result.candidates)
    places = layout(result, card, points)
    keys, items = zip(*about_rows(result, places.computes), strict=True)
    about.write_column(0, list(keys), styles.get(bold=True), first_row=0)
    about.write_column(1, list(items), styles.get(text_wrap=True, valign="top"), first_row=0)
    about.set_column(0, 0, 16)
    about.set_column(1, 1, 90)
    # under a plan, the Scorecard's steps written as the engine's values (none without one)
    planned = PLANNED_STEPS if result.plan is not None else frozenset()
    _write_scorecard(book, styles, result, card, places, points, planned)
    _write_inputs(book, styles, places, points)
    _write_demand(book, styles, result, places, points)
    _write_recommendation(book, styles, result, places, planned)
    for name, frame in tables.items():
        if name != "Sizing":
            _write_table(book, styles, name, frame)
            continue
        formulas = _sizing_formulas(frame, places, len(result.candidates), planned)
        _write_table(book, styles, name, frame, formulas,
                     _sizing_notes(frame, formulas, planned))
    book.close()
