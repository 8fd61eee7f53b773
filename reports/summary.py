"""A readable terminal summary of the scorecard: a plain text table and lines, coloured on a
terminal. Written by hand rather than with rich: a run prints one small table, and importing
and driving rich for it cost a `scorecard run` about 40 ms of CPU (docs/performance.md)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from reports.cells import plain
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

#: SGR codes of the few styles the summary uses, written only to a terminal
_STYLES = {"green": "32", "dim": "2", "bold green": "1;32", "yellow": "33"}


def _header(column: str) -> str:
    """Two lines, name over unit, since the terminal is narrow: lower case like the other
    headers, an acronym (CPM) kept as it is."""
    return f"{in_sentence(column)}\n{METRICS[column].unit}"


#: column -> its terminal header ("CPM\nEUR/Mtok", "energy\nJ/token", ...): the figures
#: declared shown in the summary (schemas/outputs.toml)
_SHOWN = {k: _header(k) for k in columns_for("summary")}


def coloured(out: TextIO) -> bool:
    """Whether `out` takes colour: a terminal, unless NO_COLOR is set (no-color.org) or the
    terminal is dumb."""
    isatty = getattr(out, "isatty", None)
    return (bool(isatty and isatty()) and not os.environ.get("NO_COLOR")
            and os.environ.get("TERM") != "dumb")


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]],
                right: Sequence[bool]) -> list[str]:
    """A table as lines of text: each column as wide as its widest cell, a header of one or
    more lines (cells split at newlines, aligned to the bottom), a rule under it, columns
    apart by three spaces, each cell right-aligned where `right` says (figures) and
    left-aligned otherwise. No cell is ever cut or folded: a long id widens its column."""
    heads = [h.split("\n") for h in header]
    depth = max(len(h) for h in heads)
    heads = [[""] * (depth - len(h)) + h for h in heads]
    widths = [max(len(x) for x in [*h, *(r[i] for r in rows)]) for i, h in enumerate(heads)]

    def line(cells: Sequence[str]) -> str:
        return " " + "   ".join(c.rjust(w) if r else c.ljust(w)
                                for c, w, r in zip(cells, widths, right, strict=True)).rstrip()

    lines = [line([h[k] for h in heads]) for k in range(depth)]
    lines.append(" " + "\u2500" * (sum(widths) + 3 * (len(widths) - 1) + 1))
    return lines + [line(r) for r in rows]


def print_summary(result: Result, out: TextIO | None = None) -> None:
    """The shortlist's table (id, the figures declared for the summary, sovereignty level,
    P(frontier), status) under the proposal's name, then the excluded and why, the scans, the
    recommendation and the warnings (example data, stale sources). Foreign text (ids,
    reasons) is written without control or bidi characters (`reports.cells.plain`)."""
    out = sys.stdout if out is None else out
    colour = coloured(out)

    def say(text: str, style: str | None = None) -> None:
        code = _STYLES.get(style or "") if colour else None
        out.write(f"\x1b[{code}m{text}\x1b[0m\n" if code else text + "\n")

    shown, left_out = shortlist(result, GLANCE_ROWS)
    header = ["id", *_SHOWN.values(), "sov.\n0-4", "P\nfront.", "status"]
    right = [False, *(True for _ in _SHOWN), True, True, False]
    rows = []
    for c in shown:
        values = [figure_text(value(c, k), f".{METRICS[k].decimals}f") for k in _SHOWN]
        status = ("frontier" if c.pareto_rank == 1 else
                  f"rank {c.pareto_rank}" if c.eligible else "excluded")
        p = c.p_frontier
        rows.append([plain(c.id), *values, str(c.sovereignty_level),
                     "-" if p is None else f"{p:.0%}", status])
    lines = table_lines(header, rows, right)
    width = max(len(line) for line in lines)
    say(plain(f"{result.proposal} (vintage {result.vintage})").center(width).rstrip())
    say("")
    head = len(lines) - len(rows)  # the header's lines and the rule under it
    for line in lines[:head]:
        say(line)
    for c, line in zip(shown, lines[head:], strict=True):
        say(line, "green" if c.pareto_rank == 1 else None if c.eligible else "dim")
    say("")
    say(f"per million {result.token_basis} tokens".center(width).rstrip())
    if left_out:
        say(shortlist_note(len(shown), left_out, "the report lists more, the CSV every one"),
            "dim")
    for c in shown:
        if not c.eligible:
            say(plain(f"{c.id} excluded: {c.exclusion_reason}"), "dim")
            if "not computable" in (c.exclusion_reason or ""):  # "(see notes)": shown here
                for note in c.notes:
                    say(plain(f"  - {note}"), "dim")
    for scan in result.scans:
        say(plain(scan_sentence(scan)))
    headline, supporting = recommendation_lines(result)
    say(plain(headline), "bold green")
    for line in supporting:
        say(plain(f"  {line}"))
    if result.example_data:
        say("EXAMPLE DATA: declared figures from the bundled example.", "yellow")
    stale = [f for f in freshness(result) if f.stale]
    if stale:
        say(plain(f"{len(stale)} source figure(s) stale at vintage {result.vintage}: "
                  f"{', '.join(f.subject for f in stale)} (see the report's data freshness "
                  "table)"), "yellow")
