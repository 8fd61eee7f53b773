"""Hostile strings in a result (OWASP CSV injection, an escape character, a right-to-left
override) through the real writers: XLSX cells hold text, never a formula, and no control
character (the only formulas are the Scorecard's own, over cell references); the CSV prefixes
a formula-like cell with an apostrophe; no output carries a bidi control."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
from openpyxl import load_workbook

from reports.cells import plain, plain_all, plain_json, spreadsheet_text
from reports.files.outputs import write_outputs
from reports.files.xlsx import write_xlsx
from tests.reports.conftest import FIXTURES, typed

FORMULA = '=HYPERLINK("http://x","y")'
DDE = "=cmd|' /C calc'!A0"


def hostile(result: dict[str, Any]) -> dict[str, Any]:
    result["proposal"] = FORMULA
    # an id with DDE, an escape character (crashed openpyxl) and a right-to-left override
    result["candidates"][0]["id"] = DDE + "\x1b[31m\u202etxt.exe"
    return result


def test_spreadsheet_text_rules() -> None:
    # = + - @ tab CR start a formula: prefixed; bidi and control characters removed
    assert [spreadsheet_text(s) for s in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx")] == [
        "'=1+1", "'+1", "'-1", "'@SUM(A1)", "'\tx", "'\rx"]
    assert spreadsheet_text("a\u202eb\u2066c\x00d\x1b") == "abcd"
    assert spreadsheet_text("plain label") == "plain label"


def test_the_json_text_tells_whether_a_value_holds_unsafe_text() -> None:
    """plain_json(JSON text of v) is True exactly when plain_all(v) == v, for every character
    up to U+2100 (the bidi controls are below U+206A), in a value and in a key, written raw
    (ensure_ascii=False, as scorecard.json) or escaped (ensure_ascii=True: \\u202e, \\b),
    but for a backslash before a "b" or "f" (JSON \\\\b), which it errs on: False, walk."""
    missed, walked = [], set()
    for code in range(0x2100):
        char = chr(code)
        for value in ({"k": f"a{char}b"}, {f"k{char}": [1.5, None, f"{char}"]}):
            for ascii_only in (False, True):
                said = plain_json(json.dumps(value, ensure_ascii=ascii_only, indent=2))
                if said and plain_all(value) != value:
                    missed.append((hex(code), ascii_only))
                elif not said and plain_all(value) == value:
                    walked.add(char)
    assert missed == []
    assert walked == {"\\"}
    assert [c for c in map(chr, range(0x2100)) if plain(c) != c][-1] == "\u2069"  # PDI


def test_a_result_s_json_text_is_plain_unless_it_holds_hostile_text(full: dict[str, Any]
                                                                    ) -> None:
    assert plain_json(json.dumps(full, ensure_ascii=False, indent=2))
    bad = hostile(full)
    assert not plain_json(json.dumps(bad, ensure_ascii=False, indent=2))
    assert plain_json(json.dumps(plain_all(bad), ensure_ascii=False, indent=2))


def test_no_output_runs_or_reorders_hostile_text(full: dict[str, Any], tmp_path: Path) -> None:
    written = write_outputs(typed(hostile(full)), tmp_path)
    names = [p.name for p in written]
    assert names == ["scorecard.html", "scorecard.xlsx", "scorecard.csv", "scorecard.parquet"]

    book = load_workbook(tmp_path / "scorecard.xlsx")
    formulas = [(ws.title, c.coordinate) for ws in book for row in ws.iter_rows() for c in row
                if c.data_type == "f"]
    assert formulas == []  # the hand-made result carries no inputs: values only
    assert book["About"]["B1"].value == "'" + FORMULA
    ids = [row[0].value for row in book["Scorecard"].iter_rows(min_row=2)]
    assert "'" + DDE + "[31mtxt.exe" in ids  # ESC and RLO gone, the rest kept as text

    with (tmp_path / "scorecard.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["id"] == "'" + DDE + "[31mtxt.exe"

    page = (tmp_path / "scorecard.html").read_text("utf-8")
    assert "\u202e" not in page and "\x1b" not in page
    parquet = pl.read_parquet(tmp_path / "scorecard.parquet")
    assert parquet["id"][0] == DDE + "[31mtxt.exe"  # data, not a spreadsheet: no apostrophe


#: what the Scorecard's own formulas are made of: references, numbers, the step templates'
#: functions and operators, and "" / the two cost-model and capacity words
_OWN_FORMULA = re.compile(r'^=(?:(?:Inputs|Demand)!\$[A-Z]+\$\d+|\$B\$\d+|[A-Z]{1,3}\d+|'
                          r'Scorecard!\$[A-Z]+\$\d+:\$[A-Z]+\$\d+|\$A\d+|'
                          r'\d+(?:\.\d+)?|IF|OR|IFERROR|CEILING|PMT|MAX|MIN|INDEX|MATCH|'
                          r'"(?:tco|elastic|per_token|goodput|Little\'s law)?"|'
                          r'"[A-Za-z0-9][A-Za-z0-9_.-]*"|[-+*/^(),=<>])+$')


def test_a_computing_workbook_keeps_hostile_text_as_text(tmp_path: Path) -> None:
    """The engine's result (with inputs: the Scorecard computes) with hostile id and label:
    every formula is one of the Scorecard's own, none carries the text; the id and label
    cells on Scorecard and Inputs are text with the apostrophe."""
    result = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))
    result["candidates"][0]["id"] = DDE + "\x1b[31m\u202etxt.exe"
    result["candidates"][0]["label"] = FORMULA
    path = tmp_path / "s.xlsx"
    write_xlsx(typed(result), path)
    book = load_workbook(path)
    formulas = [(ws.title, c.value) for ws in book for row in ws.iter_rows() for c in row
                if c.data_type == "f"]
    assert formulas and {title for title, _ in formulas} <= {"Scorecard", "Demand", "Sizing",
                                                             "Recommendation"}
    assert [f for _, f in formulas if not _OWN_FORMULA.match(f)] == []
    for sheet in ("Scorecard", "Inputs"):
        assert book[sheet]["A2"].value == "'" + DDE + "[31mtxt.exe"
        assert book[sheet]["A2"].data_type == "s"
        assert book[sheet]["B2"].value == "'" + FORMULA and book[sheet]["B2"].data_type == "s"


def test_text_that_looks_like_rich_text_markup_stays_text(tmp_path: Path) -> None:
    """xlsxwriter writes a shared string that starts with <r> and ends with </r> into the XML
    unescaped (its rich-text markup): such a label broke the workbook (openpyxl: "mismatched
    tag") or could rewrite other cells. It is written as an inline string, exactly."""
    result = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))
    broken, styled = "<r></si><si><t>x</t></r>", "<r><rPr><b/></rPr><t>bold</t></r>"
    result["proposal"] = styled
    result["candidates"][0]["label"] = broken
    result["candidates"][1]["label"] = styled
    path = tmp_path / "s.xlsx"
    write_xlsx(typed(result), path)
    book = load_workbook(path)
    assert book["About"]["B1"].value == styled
    assert [book["Scorecard"][f"B{r}"].value for r in (2, 3)] == [broken, styled]
    assert book["Inputs"]["B2"].value == broken and book["Inputs"]["B2"].data_type == "s"
    assert book["Scorecard"]["B4"].value == result["candidates"][2]["label"]  # the rest kept
