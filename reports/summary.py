"""A readable terminal summary of the scorecard: a plain text table and lines, coloured on a
terminal. Written by hand rather than with rich: a run prints one small table, and importing
and driving rich for it cost a `scorecard run` about 40 ms of CPU (docs/performance.md)."""

from __future__ import annotations

import os
import re
import sys
import textwrap
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
from reports.freshness import freshness, partial_sentence
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


#: the width the summary's table fits: an 80-column terminal
COLUMNS = 80
#: the narrowest the id column is made to fit COLUMNS (a longer id wraps onto more lines)
MIN_ID_WIDTH = 12


def _wrapped_id(cell: str, width: int) -> list[str]:
    """`cell` as lines of at most `width`: broken after a hyphen where one fits, else cut."""
    lines = [""]
    for piece in re.findall(r"[^-]*-|[^-]+", cell):
        while piece:
            if lines[-1] and len(lines[-1]) + len(piece) > width:
                lines.append("")
            room = width - len(lines[-1])
            lines[-1] += piece[:room]
            piece = piece[room:]
    return lines


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]],
                right: Sequence[bool], width: int = COLUMNS) -> list[list[str]]:
    """A table as blocks of lines of text: first the header (cells split at newlines,
    aligned to the bottom) and a rule under it, then one block per row. Each column is as
    wide as its widest cell, the columns two spaces apart, each cell right-aligned where
    `right` says (figures) and left-aligned otherwise. When that is wider than `width`, the
    first column (the id) is narrowed to fit and a longer id wraps onto more lines of its
    row, at a hyphen where it has one; no other cell is cut or folded."""
    heads = [h.split("\n") for h in header]
    depth = max(len(h) for h in heads)
    heads = [[""] * (depth - len(h)) + h for h in heads]
    widths = [max(len(x) for x in [*h, *(r[i] for r in rows)]) for i, h in enumerate(heads)]
    others = 1 + sum(widths[1:]) + 2 * (len(widths) - 1)  # the line's first space, the gaps
    widths[0] = min(widths[0], max(width - others, MIN_ID_WIDTH, *map(len, heads[0])))
    ruled = sum(widths) + 2 * (len(widths) - 1)

    def line(cells: Sequence[str]) -> str:
        return " " + "  ".join(c.rjust(w) if r else c.ljust(w)
                               for c, w, r in zip(cells, widths, right, strict=True)).rstrip()

    blocks = [[line([h[k] for h in heads]) for k in range(depth)] + [" " + "\u2500" * ruled]]
    for first, *rest in rows:
        parts = _wrapped_id(first, widths[0])
        blocks.append([line([part, *(rest if i == 0 else [""] * len(rest))])
                       for i, part in enumerate(parts)])
    return blocks


def fit(text: str) -> list[str]:
    """A line of prose as lines within COLUMNS, broken at spaces (an id or a path is never
    split), the lines after the first indented two more than it."""
    if len(text) <= COLUMNS:
        return [text]
    indent = " " * (len(text) - len(text.lstrip(" ")))
    return textwrap.wrap(text, COLUMNS, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False)


def print_summary(result: Result, out: TextIO | None = None) -> None:
    """The shortlist's table (id, the figures declared for the summary, sovereignty level,
    P(frontier), status) under the proposal's name, then the excluded and why, the scans, the
    recommendation and the warnings (example data, stale sources). Foreign text (ids,
    reasons) is written without control or bidi characters (`reports.cells.plain`)."""
    out = sys.stdout if out is None else out
    colour = coloured(out)

    def say(text: str, style: str | None = None, wrap: bool = True) -> None:
        code = _STYLES.get(style or "") if colour else None
        for part in fit(text) if wrap else [text]:
            out.write(f"\x1b[{code}m{part}\x1b[0m\n" if code else part + "\n")

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
    head, *blocks = table_lines(header, rows, right)
    width = max(len(line) for line in head)
    say(plain(f"{result.proposal} (vintage {result.vintage})").center(width).rstrip())
    if result.partial_month is not None:
        say(partial_sentence(result.vintage, result.partial_month), "yellow")
    say("")
    for line in head:
        say(line, wrap=False)
    for c, block in zip(shown, blocks, strict=True):
        for line in block:
            say(line, "green" if c.pareto_rank == 1 else None if c.eligible else "dim",
                wrap=False)
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
