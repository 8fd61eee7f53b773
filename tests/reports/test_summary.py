"""The terminal summary `scorecard run` prints (reports/summary.py): a plain text table whose
columns line up, no cell cut or folded, colour only on a terminal, foreign text without
control characters; and a run's imports leave rich out (the summary was rendered with it)."""

from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

import pytest

from reports.summary import print_summary, table_lines
from tests.reports.conftest import typed


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_table_s_columns_line_up_under_a_two_line_header() -> None:
    lines = table_lines(["id", "CPM\nEUR/Mtok"], [["a", "1.000"], ["long-id", "12.5"]],
                        [False, True])
    # widths: id 7 ("long-id"), CPM 8 ("EUR/Mtok"); a line is one space, the cells three
    # spaces apart (id left-aligned, the figure right-aligned), no trailing space; the rule is
    # 7 + 3 + 8 + 1 = 19 wide
    assert lines == [
        " " + " " * 7 + "   " + "     CPM",
        " id" + " " * 5 + "   " + "EUR/Mtok",
        " " + "\u2500" * 19,
        " a" + " " * 6 + "   " + "   1.000",
        " long-id" + "   " + "    12.5",
    ]


def test_the_summary_of_the_example(full: dict[str, Any]) -> None:
    out = io.StringIO()
    print_summary(typed(full), out)
    lines = out.getvalue().splitlines()
    assert lines[0].strip() == f"{full['proposal']} (vintage {full['vintage']})"
    assert lines[2].split() == ["CPM", "energy", "carbon", "sov.", "P"]
    assert lines[3].split() == ["id", "EUR/Mtok", "J/token", "gCO2e/Mtok", "0-4", "front.",
                                "status"]
    rows = {line.split()[0]: line.split() for line in lines[5:5 + len(full["candidates"])]}
    assert len(rows) == len(full["candidates"])  # every candidate of the example, one line
    fr = next(c for c in full["candidates"] if c["id"] == "ovhcloud-h100x4-fp8")
    # the figures at their declared decimals (CPM 3, energy 3, carbon 1), P as a percentage
    assert rows["ovhcloud-h100x4-fp8"] == [
        "ovhcloud-h100x4-fp8", f"{fr['cpm_eur_per_mtok']:.3f}",
        f"{fr['energy_j_per_token']:.3f}", f"{fr['carbon_gco2e_per_mtok']:.1f}",
        str(fr["sovereignty_level"]), f"{fr['p_frontier']:.0%}", "frontier"]
    azure = next(c for c in full["candidates"] if c["id"] == "azure-nd-h100-v5-fp8")
    p = azure["p_frontier"]
    assert rows["azure-nd-h100-v5-fp8"][-2:] == ["-" if p is None else f"{p:.0%}", "excluded"]
    # each row as wide as the header above it: the right-aligned status column ends where
    # the header's does, the figures' columns end under their units
    header = lines[3]
    for row in lines[5:5 + len(rows)]:
        for unit in ("EUR/Mtok", "J/token", "gCO2e/Mtok", "0-4", "front."):
            end = header.index(unit) + len(unit)
            assert row[end - 1] != " " and (len(row) == end or row[end] == " ")
    text = out.getvalue()
    assert "azure-nd-h100-v5-fp8 excluded: sovereignty level 1" in text
    assert f"Recommended: {full['recommendation']['candidate']}" in text.splitlines()
    assert "\x1b[" not in text  # no colour off a terminal


def test_colour_on_a_terminal_only(full: dict[str, Any],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    out = _Terminal()
    print_summary(typed(full), out)
    lines = out.getvalue().splitlines()
    first = next(c["id"] for c in full["candidates"] if c["pareto_rank"] == 1)
    row = next(line for line in lines if line.startswith(("\x1b[32m ", " ")) and first in line)
    assert row.startswith(f"\x1b[32m {first} ") and row.endswith("\x1b[0m")  # green
    excluded = next(line for line in lines if " excluded" in line and "\x1b[2m " in line)
    assert excluded.endswith("excluded\x1b[0m")  # an excluded row dim
    assert f"\x1b[1;32mRecommended: {full['recommendation']['candidate']}\x1b[0m" in lines
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Terminal()
    print_summary(typed(full), plain)
    assert "\x1b[" not in plain.getvalue()


def test_foreign_text_is_written_without_control_characters(full: dict[str, Any]) -> None:
    full["proposal"] = "evil\x1b[2J\u202ename"
    out = io.StringIO()
    print_summary(typed(full), out)
    text = out.getvalue()
    assert "\x1b" not in text and "\u202e" not in text
    assert "evil[2Jname (vintage" in text


def test_a_run_imports_no_rich() -> None:
    code = ("import sys; from pipeline.cli import frozen_imports\n"
            "with frozen_imports('pipeline.run'): import pipeline.run\n"
            "print(sorted(m for m in sys.modules if m == 'rich' or m.startswith('rich.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
