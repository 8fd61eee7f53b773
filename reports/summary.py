"""A readable terminal summary of the scorecard (rich ships with typer)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from reports.freshness import freshness
from reports.scorecard_table import METRIC_LABELS

_SHOWN = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok")


def print_summary(result: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"{result['proposal']} (vintage {result['vintage']})")
    table.add_column("id", overflow="fold")
    for key in _SHOWN:
        table.add_column(METRIC_LABELS[key][0], justify="right")
    table.add_column("sov.", justify="right")
    table.add_column("status")
    for c in result["candidates"]:
        values = [("n/a" if c[k] is None else f"{c[k]:.{METRIC_LABELS[k][1]}f}")
                  for k in _SHOWN]
        status = ("frontier" if c["pareto_rank"] == 1 else
                  f"rank {c['pareto_rank']}" if c["eligible"] else "excluded")
        table.add_row(c["id"], *values, str(c["sovereignty_level"]), status,
                      style="green" if c["pareto_rank"] == 1 else
                      None if c["eligible"] else "dim")
    console.print(table)
    for c in result["candidates"]:
        if not c["eligible"]:
            console.print(f"[dim]{c['id']} excluded: {c['exclusion_reason']}[/]")
    if result["example_data"]:
        console.print("[yellow]EXAMPLE DATA: declared figures from the bundled example.[/]")
    stale = [f for f in freshness(result) if f.stale]
    if stale:
        console.print(f"[yellow]{len(stale)} source figure(s) stale at vintage "
                      f"{result['vintage']}: {', '.join(f.subject for f in stale)} "
                      "(see the report's data freshness table)[/]")
