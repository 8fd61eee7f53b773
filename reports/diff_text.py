"""The vintage diff (`pipeline.engine.questions.diff`) as a terminal table, for `scorecard
diff`; apart from the HTML report's modules so that `scorecard run`, which writes the diff into
its report, does not import rich.

Reads the diff document (`schemas.result.Diff`) only.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reports.frames import METRICS
from reports.html.diff_report import (
    UNCHANGED,
    change_cells,
    events,
    main_causes,
    partial_lines,
    recommendation_line,
)
from reports.page import significant
from schemas.result import Diff

#: The console width off a terminal: wide enough that no table row is ever folded.
_UNWRAPPED = 100_000
#: metric -> the terminal table's narrower label ("Elec. (EUR/Mtok)")
_SHORT = {k: m.short_label for k, m in METRICS.items()}


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """A reader that left (`scorecard diff | head`): the error goes to the caller
        (`pipeline.stdout.to_stdout`, which drops the rest quietly), not rich's exit 1."""
        raise BrokenPipeError


def print_diff(diff: Diff, console: Console | None = None) -> None:
    """The recommendation at A and B, the diff as a table, then its events and notes. Off a
    terminal (`scorecard diff > diff.txt`, a pipe) nothing is wrapped: each row and note is
    one line however long."""
    if console is None:
        console = _Console()
        if not console.is_terminal:
            console = _Console(width=_UNWRAPPED, highlight=False)
    for line in partial_lines(diff):
        console.print(Text(f"warning: {line}", style="yellow"), soft_wrap=True)
    recommendation = recommendation_line(diff)
    if recommendation is not None:  # the question the monthly rerun asks, before the detail
        console.print(Text(recommendation, style="bold"), soft_wrap=True)
    # every cell and the title as Text: names and ids are the proposal's, never markup
    table = Table(title=Text(f"{diff.proposal}: {diff.vintage_a} -> {diff.vintage_b}"))
    table.add_column("id", overflow="fold")
    table.add_column("metric")
    table.add_column("A", justify="right")
    table.add_column("B", justify="right")
    table.add_column("change", justify="right")
    table.add_column("caused by", overflow="fold")
    for c in diff.candidates:
        if c.change is None:
            table.add_row(Text(c.id), Text(c.status), "", "", "", "")
            continue
        for metric in diff.metrics:
            ch = c.change[metric]
            change, relative = change_cells(ch)
            table.add_row(Text(c.id), Text(_SHORT.get(metric, metric)), significant(ch.a),
                          significant(ch.b),
                          change if change == UNCHANGED else f"{change} {relative}",
                          Text(main_causes(ch)))
    console.print(table)
    for line in events(diff):
        console.print(Text(line), soft_wrap=True)
    for note in diff.notes:
        console.print(Text(f"note: {note}", style="dim"), soft_wrap=True)
