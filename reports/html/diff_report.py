"""The vintage diff (`pipeline.engine.diff`) as a terminal table, an HTML section and a page.

Reads the diff document only. Strings (ids, labels, input changes) are escaped in HTML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from reports.frames import HEADERS, METRICS
from reports.html.page import CSS
from reports.html.page import escape as _e

#: metric -> the terminal table's narrower label ("Elec. (EUR/Mtok)")
_SHORT = {k: m.short_label for k, m in METRICS.items()}


def _fmt(value: Any, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    if value == 0:
        return "0"
    return f"{value:+.4g}" if signed else f"{value:.4g}"


def _pct(value: Any) -> str:
    return "n/a" if value is None else "0 %" if value == 0 else f"{value:+.1%}"


def main_causes(change: dict[str, Any]) -> str:
    """The causes that moved a metric, largest first, with their share of the change."""
    by_cause = change["by_cause"]
    if any(v is None for v in by_cause.values()):
        return "not attributable (a figure is missing)"
    moved = sorted(((k, v) for k, v in by_cause.items() if v), key=lambda kv: -abs(kv[1]))
    if not moved:
        return "no change"
    total = change["change"]
    parts = []
    for cause, v in moved:
        share = f" ({v / total:.0%})" if total else ""
        parts.append(f"{cause} {v:+.4g}{share}")
    return "; ".join(parts)


def print_diff(diff: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"{diff['proposal']}: {diff['vintage_a']} -> {diff['vintage_b']}")
    table.add_column("id", overflow="fold")
    table.add_column("metric")
    table.add_column("A", justify="right")
    table.add_column("B", justify="right")
    table.add_column("change", justify="right")
    table.add_column("caused by", overflow="fold")
    for c in diff["candidates"]:
        if c["change"] is None:
            table.add_row(c["id"], c["status"], "", "", "", "")
            continue
        for metric in diff["metrics"]:
            ch = c["change"][metric]
            table.add_row(c["id"], _SHORT.get(metric, metric), _fmt(ch["a"]), _fmt(ch["b"]),
                          f"{_fmt(ch['change'], True)} {_pct(ch['relative'])}",
                          main_causes(ch))
    console.print(table)
    for c in diff["candidates"]:
        for what in (c.get("rank_change") and f"Pareto rank {c['rank_change']}",
                     c.get("frontier_change")):
            if what:
                console.print(f"{c['id']}: {what}")
        if c.get("changed_inputs"):
            console.print(f"{c['id']}: inputs changed: {'; '.join(c['changed_inputs'])}")
    for note in diff["notes"]:
        console.print(f"[dim]note: {note}[/]")


def diff_section(diff: dict[str, Any]) -> str:
    """`<section id="diff">`: one row per candidate and metric, the causes in columns."""
    causes = diff["causes"]
    head = ["Candidate", "Metric", "A", "B", "Change", "Change (%)", *causes]
    out = ['<section id="diff"><h2>Change since last vintage</h2>',
           f"<p>{_e(diff['proposal'])}: vintage {_e(diff['vintage_a'])} to "
           f"{_e(diff['vintage_b'])}. Each change is split between its causes by swapping one "
           "input group at a time (Shapley values over every order of swapping), so the "
           "causes add up to the change. Input groups that changed: "
           f"{_e(', '.join(diff['changed_groups']) or 'none')}.</p>",
           '<table class="plain" id="diff-table"><thead><tr>',
           *[f"<th>{_e(h)}</th>" for h in head], "</tr></thead><tbody>"]
    for c in diff["candidates"]:
        if c["change"] is None:
            out.append(f"<tr><td>{_e(c['id'])}</td><td colspan=\"{len(head) - 1}\">"
                       f"{_e(c['status'])}</td></tr>")
            continue
        for metric in diff["metrics"]:
            ch = c["change"][metric]
            cells = [_fmt(ch["a"]), _fmt(ch["b"]), _fmt(ch["change"], True),
                     _pct(ch["relative"]),
                     *[_fmt(ch["by_cause"][k], True) if ch["by_cause"][k] else
                       ("n/a" if ch["by_cause"][k] is None else "0") for k in causes]]
            moved = ' class="moved"' if ch["change"] else ""
            out.append(f"<tr{moved}><td>{_e(c['id'])}</td>"
                       f"<td>{_e(HEADERS.get(metric, metric))}</td>"
                       + "".join(f'<td class="num">{_e(x)}</td>' for x in cells) + "</tr>")
    out.append("</tbody></table>")
    events = []
    for c in diff["candidates"]:
        if c.get("rank_change"):
            events.append(f"{c['id']}: Pareto rank {c['rank_change']}")
        if c.get("frontier_change"):
            events.append(f"{c['id']}: {c['frontier_change']}")
        if c.get("changed_inputs"):
            events.append(f"{c['id']}: inputs changed: {'; '.join(c['changed_inputs'])}")
    out.append("<h3>Rank and frontier changes</h3>")
    out.append("<ul>" + "".join(f"<li>{_e(x)}</li>" for x in events) + "</ul>" if events
               else "<p>No rank or frontier change.</p>")
    out.append("<ul>" + "".join(f"<li>Note: {_e(n)}</li>" for n in diff["notes"]) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


def write_diff_html(diff: dict[str, Any], path: Path) -> None:
    """A standalone page holding the diff section (same look as the report)."""
    path.write_text(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>Diff: {_e(diff['proposal'])}</title><style>{CSS}</style></head><body>\n"
        f"{diff_section(diff)}\n</body></html>\n", encoding="utf-8")
