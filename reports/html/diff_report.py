"""What the vintage diff's (`pipeline.engine.questions.diff`) HTML section and page
(reports/templates/diff_section.html, diff_page.html) print, and the lines its terminal table
(`reports.diff_text`) shares with them.

Reads the diff document (`schemas.result.Diff`) only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports.frames import HEADERS
from reports.freshness import partial_sentence
from reports.page import render, significant
from schemas.result import Diff, MetricChange

#: what the change columns read for a figure that did not move: a dash, where "0 0 %" beside
#: changes such as "-1.848 -9.7%" reads as a figure
UNCHANGED = "\u2014"


def change_cells(change: MetricChange) -> tuple[str, str]:
    """A metric's change and its relative change as printed: UNCHANGED for a figure that did
    not move, n/a for one that cannot be computed."""
    if change.change == 0:
        return UNCHANGED, UNCHANGED
    relative = change.relative
    return (significant(change.change, True),
            "n/a" if relative is None else f"{relative:+.1%}")


def main_causes(change: MetricChange) -> str:
    """The causes that moved a metric, largest first, with their share of the change."""
    by_cause = change.by_cause
    if any(v is None for v in by_cause.values()):
        return "not attributable (a figure is missing)"
    moved = sorted(((k, v) for k, v in by_cause.items() if v), key=lambda kv: -abs(kv[1]))
    if not moved:
        return "no change"
    total = change.change
    parts = []
    for cause, v in moved:
        share = f" ({v / total:.0%})" if total else ""
        parts.append(f"{cause} {significant(v, True)}{share}")
    return "; ".join(parts)


def recommendation_line(diff: Diff) -> str | None:
    """The monthly rerun's question, "do we still buy X?": the candidate recommended at A and
    at B, and how the CPM of B's moved and why; None when A's scorecard has no
    recommendation."""
    r = diff.recommendation
    if r is None:
        return None
    a, b = r.a or "none (no eligible candidate)", r.b or "none (no eligible candidate)"
    said = (f"Recommendation changed: {a} in {diff.vintage_a} -> {b} in {diff.vintage_b}"
            if r.changed else
            f"Recommendation: {b} in {diff.vintage_a} and in {diff.vintage_b}, unchanged")
    cpm = r.cpm_eur_per_mtok
    if cpm is None:
        return said
    whose = f"{r.b}'s CPM" if r.changed else "its CPM"
    if any(c.id == r.b and c.status == "new in B" for c in diff.candidates):
        return f"{said}; {whose} {significant(cpm.b)} EUR/Mtok (new in {diff.vintage_b})"
    change, relative = change_cells(cpm)
    moved = ("unchanged" if change == UNCHANGED else
             f"{change} {relative}: {main_causes(cpm)}")
    return (f"{said}; {whose} {significant(cpm.a)} -> {significant(cpm.b)} EUR/Mtok "
            f"({moved})")


def partial_lines(diff: Diff) -> list[str]:
    """One warning per partial month (A or B)."""
    return [partial_sentence(vintage, p) for vintage, p in diff.partial_months.items()]


def events(diff: Diff) -> list[str]:
    """Each candidate's rank, frontier and input changes, one line each, in its order."""
    lines = []
    for c in diff.candidates:
        if c.rank_change:
            lines.append(f"{c.id}: Pareto rank {c.rank_change}")
        if c.frontier_change:
            lines.append(f"{c.id}: {c.frontier_change}")
        if c.changed_inputs:
            lines.append(f"{c.id}: inputs changed: {'; '.join(c.changed_inputs)}")
    return lines


def diff_view(diff: Diff) -> dict[str, Any]:
    """What reports/templates/diff_section.html prints of a diff document: the
    recommendation at A and B, one row per candidate and metric, the causes in columns, then
    the rank and frontier changes."""
    rows: list[dict[str, Any]] = []
    for c in diff.candidates:
        if c.change is None:
            rows.append({"id": c.id, "status": c.status, "cells": None})
            continue
        for metric in diff.metrics:
            ch = c.change[metric]
            rows.append({"id": c.id, "metric": HEADERS.get(metric, metric),
                         "moved": bool(ch.change),
                         "cells": [significant(ch.a), significant(ch.b), *change_cells(ch),
                                   *[significant(ch.by_cause[k], True) for k in diff.causes]]})
    return {"proposal": diff.proposal, "vintage_a": diff.vintage_a,
            "vintage_b": diff.vintage_b, "groups": ", ".join(diff.changed_groups) or "none",
            "heads": ["Candidate", "Metric", "A", "B", "Change", "Change (%)", *diff.causes],
            "rows": rows, "events": events(diff), "notes": diff.notes,
            "recommendation": recommendation_line(diff),
            "partial": partial_lines(diff)}


def write_diff_html(diff: Diff, path: Path) -> None:
    """A standalone page holding the diff section (same look as the report)."""
    path.write_text(render("diff_page.html", diff=diff_view(diff)), encoding="utf-8")
