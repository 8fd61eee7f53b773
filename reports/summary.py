"""A readable terminal summary of the scorecard (rich ships with typer)."""

from __future__ import annotations

import sys

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from reports.frames import (
    GLANCE_ROWS,
    METRICS,
    in_sentence,
    recommendation_lines,
    shortlist,
    shortlist_note,
    value,
)
from reports.freshness import freshness
from reports.page import figure_text
from reports.scans import scan_sentence
from schemas.outputs import columns_for
from schemas.result import Result


def _header(column: str) -> str:
    """Two lines, name over unit, since the terminal is narrow: lower case like the other
    headers, an acronym (CPM) kept as it is."""
    return f"{in_sentence(column)}\n{METRICS[column].unit}"


#: column -> its terminal header ("CPM\nEUR/Mtok", "energy\nJ/token", ...): the figures
#: declared shown in the summary (schemas/outputs.toml)
_SHOWN = {k: _header(k) for k in columns_for("summary")}


def print_summary(result: Result, console: Console | None = None) -> None:
    # piped output (CI logs, files) gets room for the whole table instead of 80 columns
    console = console or Console(width=None if sys.stdout.isatty() else 100)
    table = Table(title=f"{result.proposal} (vintage {result.vintage})",
                  caption=f"per million {result.token_basis} tokens",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("id", no_wrap=True)
    for header in _SHOWN.values():
        table.add_column(header, justify="right", no_wrap=True,
                         min_width=max(len(line) for line in header.split("\n")))
    table.add_column("sov.\n0-4", justify="right", no_wrap=True, min_width=4)
    table.add_column("P\nfront.", justify="right", no_wrap=True, min_width=6)
    table.add_column("status", no_wrap=True, min_width=8)
    shown, left_out = shortlist(result, GLANCE_ROWS)
    for c in shown:
        values = [figure_text(value(c, k), f".{METRICS[k].decimals}f") for k in _SHOWN]
        status = ("frontier" if c.pareto_rank == 1 else
                  f"rank {c.pareto_rank}" if c.eligible else "excluded")
        p = c.p_frontier
        table.add_row(c.id, *values, str(c.sovereignty_level),
                      "-" if p is None else f"{p:.0%}", status,
                      style="green" if c.pareto_rank == 1 else
                      None if c.eligible else "dim")
    console.print(table)
    if left_out:
        console.print(Text(shortlist_note(len(shown), left_out, "the report lists more, the "
                                          "CSV every one"), style="dim"))
    # foreign text (ids, reasons) goes in as Text, never as rich markup
    for c in shown:
        if not c.eligible:
            console.print(Text(f"{c.id} excluded: {c.exclusion_reason}", style="dim"))
            if "not computable" in (c.exclusion_reason or ""):  # "(see notes)": shown here
                for note in c.notes:
                    console.print(Text(f"  - {note}", style="dim"))
    for scan in result.scans:
        console.print(Text(scan_sentence(scan)))
    headline, lines = recommendation_lines(result)
    console.print(Text(headline, style="bold green"))
    for line in lines:
        console.print(Text(f"  {line}"))
    if result.example_data:
        console.print("[yellow]EXAMPLE DATA: declared figures from the bundled example.[/]")
    stale = [f for f in freshness(result) if f.stale]
    if stale:
        console.print(f"[yellow]{len(stale)} source figure(s) stale at vintage "
                      f"{result.vintage}: {', '.join(f.subject for f in stale)} "
                      "(see the report's data freshness table)[/]")

