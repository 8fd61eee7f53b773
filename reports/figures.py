"""The report's figures as HTML fragments: each chart an inline SVG in a <figure> with alt text
and a one-line caption saying what to read from it, or a small table where that reads better.

`chart_sections(result)` is the one entry point the pages use; its keys are the chart sections
("pareto", "pairwise", "tornado", "break_even", "configurations"), each an HTML fragment
without heading ("" when nothing applies). Every foreign string (ids, labels) is escaped.
"""

from __future__ import annotations

from typing import Any

from reports import charts
from reports.frames import HEADERS, pairwise_frame
from reports.page import escape as _e

SECTIONS = ("pareto", "pairwise", "tornado", "break_even", "configurations")


def _with_alt(svg: str, alt: str) -> str:
    """The SVG with role="img" and its alt text as aria-label on the root element."""
    return svg.replace("<svg", f'<svg role="img" aria-label="{_e(alt)}"', 1)


def figure(figure_id: str, svg: str, alt: str, caption: str) -> str:
    """One figure: the SVG with alt text, and its caption."""
    return (f'<figure id="{_e(figure_id)}" class="chart">{_with_alt(svg, alt)}'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _pareto(result: dict[str, Any]) -> str:
    out = []
    for x, y in charts.PARETO_PAIRS:
        svg = charts.pareto_svg(result, x, y)
        if svg is None:
            continue
        short = "carbon" if y.startswith("carbon") else "energy"
        out.append(figure(f"chart-pareto-{short}", svg,
                          f"Scatter of {HEADERS[x]} against {HEADERS[y]}, one point per "
                          "candidate",
                          f"Lower-left is better on both: outlined points are the Pareto "
                          f"frontier ({HEADERS[x]} vs {HEADERS[y]})."))
    return "".join(out)


def _pairwise(result: dict[str, Any]) -> str:
    pairs = pairwise_frame(result)
    if not pairs.height:
        return ""
    rows = "".join(f"<tr><td>{_e(r['a'])}</td><td>{_e(r['b'])}</td>"
                   f"<td>{_e(HEADERS.get(r['metric'], r['metric']))}</td>"
                   f'<td class="num">{r["p_a_lower"]:.0%}</td></tr>'
                   for r in pairs.iter_rows(named=True))
    return ('<table class="plain" id="pairwise"><thead><tr><th>A</th><th>B</th>'
            f"<th>Metric</th><th>P(A lower)</th></tr></thead><tbody>{rows}</tbody></table>")


def _tornado(result: dict[str, Any]) -> str:
    out = []
    for i, (metric, svg) in enumerate(charts.tornado_svgs(result)):
        out.append(figure("chart-tornado" if i == 0 else f"chart-tornado-{i + 1}", svg,
                          f"Tornado of {HEADERS.get(metric, metric)}",
                          "The widest bars are the inputs that move the figure most."))
    return "".join(out)


def _break_even(result: dict[str, Any]) -> str:
    svg = charts.break_even_svg(result)
    if svg is None:
        return ""
    return figure("chart-break-even", svg, "CPM against daily volume per candidate",
                  "Where an on-prem curve crosses the cloud line, on-prem becomes cheaper.")


def chart_sections(result: dict[str, Any]) -> dict[str, str]:
    """section key -> HTML fragment (figures, captions, small tables), "" when nothing
    applies; keys are SECTIONS."""
    if charts.unavailable() is not None:
        return dict.fromkeys(SECTIONS, "")
    return {"pareto": _pareto(result), "pairwise": _pairwise(result),
            "tornado": _tornado(result), "break_even": _break_even(result),
            "configurations": ""}


__all__ = ["SECTIONS", "chart_sections", "figure"]
