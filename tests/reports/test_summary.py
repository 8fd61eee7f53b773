"""The terminal summary `scorecard run` prints (reports/summary.py): a plain text table whose
columns line up within 80 columns (a long id wraps in its column, no other cell is folded),
colour only on a terminal, foreign text without control characters; and a run's imports
leave rich out (the summary was rendered with it)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reports.summary import print_summary, table_lines
from tests.reports.conftest import typed


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_table_s_columns_line_up_under_a_two_line_header() -> None:
    blocks = table_lines(["id", "CPM\nEUR/Mtok"], [["a", "1.000"], ["long-id", "12.5"]],
                         [False, True])
    # widths: id 7 ("long-id"), CPM 8 ("EUR/Mtok"); a line is one space, the cells two
    # spaces apart (id left-aligned, the figure right-aligned), no trailing space; the rule is
    # 7 + 2 + 8 = 17 wide; one block for the header and rule, one per row
    assert blocks == [
        [" " + " " * 7 + "  " + "     CPM",
         " id" + " " * 5 + "  " + "EUR/Mtok",
         " " + "\u2500" * 17],
        [" a" + " " * 6 + "  " + "   1.000"],
        [" long-id" + "  " + "    12.5"],
    ]


def test_a_long_id_wraps_within_its_column_and_the_table_fits() -> None:
    # width 30: the figure column takes 8, the gap 2, the first space 1, so the id 19; the id
    # of 35 characters wraps after a hyphen onto two lines of its row ("scaleway-h100x8-",
    # 16, since "fp8-" would make 20; then "fp8-36m-reserved-eu", 19), the figure on the first
    long = "scaleway-h100x8-fp8-36m-reserved-eu"
    head, row = table_lines(["id", "CPM\nEUR/Mtok"], [[long, "3.767"]], [False, True],
                            width=30)
    assert head[-1] == " " + "\u2500" * 29
    assert row == [" scaleway-h100x8-" + " " * 3 + "  " + "   3.767", " fp8-36m-reserved-eu"]
    assert all(len(line) <= 30 for line in [*head, *row])


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


def test_a_run_s_whole_output_fits_an_80_column_terminal(tmp_path: Path) -> None:
    """`scorecard run` at COLUMNS=80, in a process of its own, of the example with one id
    made 56 characters long: every line of stdout fits in 80 columns (the table was 87
    wide), and the long id is all there, wrapped within its column."""
    from importlib import resources

    long = "onprem-fr-h100-fp16-with-a-very-long-descriptive-suffix"
    example = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")
    proposal = tmp_path / "p.toml"
    proposal.write_text(example.replace('id = "onprem-fr-h100-fp16"', f'id = "{long}"'),
                        encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pipeline", "run", str(proposal), "--db",
                           str(tmp_path / "s.duckdb")], capture_output=True, text=True,
                          timeout=300, check=False, cwd=tmp_path,
                          env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, [x for x in lines if len(x) > 80]
    # the id column is 80 - 56 (figures, gaps, the first space) = 24 wide: the id wraps after
    # its hyphens, "onprem-fr-h100-fp16-" on the row's first line with its figures
    first = next(i for i, line in enumerate(lines) if line.startswith(" onprem-fr-h100-fp16-"))
    assert lines[first].split()[1:] != []  # its figures beside it
    # then "with-a-very-long-" (17) and "descriptive-suffix" (18) alone on their lines
    assert [line[1:25].strip() for line in lines[first:first + 3]] == [
        "onprem-fr-h100-fp16-", "with-a-very-long-", "descriptive-suffix"]
