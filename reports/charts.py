"""Charts as inline SVG, rendered without a browser: Vega-Altair specs drawn by vl-convert.

Each function reads the result dict (never the engine) and returns an SVG string, or None when
the result lacks the figures the chart needs (the caller says so in the page). Data values
are passed in the proposal's order and the specs are fixed, so the SVG is deterministic.
Altair and vl-convert are imported inside the functions: the CLI and the other reports start
without them.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from reports.cells import plain_all
from reports.frames import HEADERS, RANGE_METRICS, ranges, tornado_frame, value

#: colour of each sovereignty level on every chart; excluded candidates are grey.
LEVEL_COLOURS: dict[str, str] = {
    "level 4": "#1a7a3a", "level 3": "#5aae61", "level 2": "#2166ac", "level 1": "#d6604d",
    "level 0": "#b2182b", "excluded": "#b8b8b8",
}
FONT = "DejaVu Sans, Verdana, sans-serif"
WIDTH, HEIGHT = 560, 340


def unavailable() -> str | None:
    """Why charts cannot be drawn here (a missing library), or None when they can."""
    import importlib.util

    missing = [name for name, module in (("altair", "altair"),
                                         ("vl-convert-python", "vl_convert"))
               if importlib.util.find_spec(module) is None]
    if missing:
        return (f"charts not drawn: {' and '.join(missing)} not installed "
                f"(pip install {' '.join(missing)})")
    return None


def _svg(chart: Any, prefix: str) -> str:
    """Draw a chart. vl-convert numbers clip paths with a counter that runs across calls
    (`clip1`, `clip2`, ...), so the ids are renumbered per chart under `prefix`: the SVG is
    the same whatever was drawn before it, and ids stay unique within a page."""
    import vl_convert as vlc

    # a control character in a proposal's id aborts vl-convert's process: strings plain
    spec = plain_all(chart.configure(font=FONT, background="white").configure_view(
        stroke="#cccccc").to_dict())
    svg: str = vlc.vegalite_to_svg(spec)
    found = list(dict.fromkeys(re.findall(r'id="(clip\d+)"', svg)))
    renames = {old: f"{prefix}-clip{i}" for i, old in enumerate(found, start=1)}
    return re.sub(r'(id="|url\(#)(clip\d+)(?=[")])',
                  lambda m: m.group(1) + renames.get(m.group(2), m.group(2)), svg)


def _axis_title(column: str) -> str:
    return HEADERS.get(column, column)


def pareto_points(result: dict[str, Any], x: str, y: str) -> tuple[list[dict[str, Any]],
                                                                   list[str]]:
    """Plottable candidates (both metrics computed), each with a label placement, and the
    ids left out."""
    points, missing = [], []
    for c in result["candidates"]:
        xv, yv = value(c, x), value(c, y)
        if xv is None or yv is None:
            missing.append(c["id"])
            continue
        spread = ranges(c)
        group = (f"level {c['sovereignty_level']}" if c["eligible"] else "excluded")
        points.append({
            "id": c["id"], "x": xv, "y": yv, "group": group,
            "frontier": c.get("pareto_rank") == 1,
            "x_p5": (spread.get(x) or {}).get("p5"), "x_p95": (spread.get(x) or {}).get("p95"),
            "y_p5": (spread.get(y) or {}).get("p5"), "y_p95": (spread.get(y) or {}).get("p95"),
        })
    _place_labels(points)
    return points, missing


#: label placements tried in order: (name, dx px, dy px, text alignment)
PLACEMENTS: tuple[tuple[str, int, int, Literal["left", "right"]], ...] = (
    ("right-up", 8, -7, "left"), ("right-down", 8, 11, "left"),
    ("left-up", -8, -7, "right"), ("left-down", -8, 11, "right"),
    ("right-up2", 8, -19, "left"), ("right-down2", 8, 23, "left"))
_CHAR_PX, _LINE_PX = 6.0, 11.0


def _place_labels(points: list[dict[str, Any]]) -> None:
    """Give each point the first placement whose label box (estimated from the text length,
    in pixels of the plot) overlaps no label placed before it; crowded points keep the
    last try. Deterministic: points are placed in order of x, then y, then id."""
    xs = [v for p in points for v in (p["x"], p["x_p5"], p["x_p95"]) if v is not None]
    ys = [v for p in points for v in (p["y"], p["y_p5"], p["y_p95"]) if v is not None]
    if not xs or not ys:  # no candidate with both figures: nothing to place
        return
    x_span = (max(xs) - min(xs)) or 1.0
    y_span = (max(ys) - min(ys)) or 1.0
    boxes: list[tuple[float, float, float, float]] = []
    for p in sorted(points, key=lambda q: (q["x"], q["y"], q["id"])):
        px = (p["x"] - min(xs)) / x_span * WIDTH
        py = HEIGHT - (p["y"] - min(ys)) / y_span * HEIGHT
        width = len(p["id"]) * _CHAR_PX
        for name, dx, dy, align in PLACEMENTS:
            left = px + dx if align == "left" else px + dx - width
            box = (left, py + dy - _LINE_PX, left + width, py + dy)
            clear = all(box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3]
                        for b in boxes)
            p["place"] = name
            if clear:
                break
        boxes.append(box)


def pareto_svg(result: dict[str, Any], x: str, y: str) -> str | None:
    """Scatter of two metrics: colour = sovereignty level, excluded grey, frontier outlined
    and joined (ordered by x), p5-p95 whiskers where ranges exist."""
    import altair as alt

    points, _ = pareto_points(result, x, y)
    if not points:
        return None
    data = alt.Data(values=points)
    colour = alt.Color("group:N", title="Sovereignty", scale=alt.Scale(
        domain=list(LEVEL_COLOURS), range=list(LEVEL_COLOURS.values())))
    xs = alt.X("x:Q", title=_axis_title(x), scale=alt.Scale(zero=False, nice=True))
    ys = alt.Y("y:Q", title=_axis_title(y), scale=alt.Scale(zero=False, nice=True))
    base = alt.Chart(data)
    layers = [
        base.transform_filter("datum.x_p5 != null").mark_rule(opacity=0.6).encode(
            x=alt.X("x_p5:Q"), x2="x_p95:Q", y="y:Q", color=colour),
        base.transform_filter("datum.y_p5 != null").mark_rule(opacity=0.6).encode(
            x="x:Q", y=alt.Y("y_p5:Q"), y2="y_p95:Q", color=colour),
        base.transform_filter("datum.frontier").mark_line(
            color="#1a7a3a", strokeDash=[6, 4], strokeWidth=1.5).encode(
            x=xs, y=ys, order="x:Q"),
        base.mark_circle(opacity=1).encode(
            x=xs, y=ys, color=colour,
            size=alt.condition("datum.frontier", alt.value(170), alt.value(70)),
            stroke=alt.condition("datum.frontier", alt.value("#000000"), alt.value(None)),
            strokeWidth=alt.condition("datum.frontier", alt.value(1.5), alt.value(0))),
    ]
    for name, dx, dy, align in PLACEMENTS:
        layers.append(base.transform_filter(f"datum.place == '{name}'").mark_text(
            align=align, dx=dx, dy=dy, fontSize=10, color="#333333").encode(
            x=xs, y=ys, text="id:N"))
    chart = alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)
    return _svg(chart, f"pareto-{y}")


def tornado_rows(result: dict[str, Any], metric: str, top: int = 12) -> list[dict[str, Any]]:
    """The tornado bars of one metric: each (candidate, input) with the metric's change, in
    % of the candidate's point figure, at the input's low and at its high value; the widest
    relative swings first (so candidates of different magnitudes share one axis)."""
    by_id = {c["id"]: c for c in result["candidates"]}
    frame = tornado_frame(result)
    rows = []
    for r in frame.filter(frame["metric"] == metric).to_dicts():
        point = value(by_id.get(r["candidate"], {}), metric)
        if not point or r["metric_at_low"] is None or r["metric_at_high"] is None:
            continue
        low = (r["metric_at_low"] - point) / point * 100
        high = (r["metric_at_high"] - point) / point * 100
        if low == high:
            continue
        rows.append({"candidate": r["candidate"], "input": r["input"], "low": r["low"],
                     "high": r["high"], "pct_at_low": low, "pct_at_high": high,
                     "swing_pct": abs(high - low)})
    rows.sort(key=lambda r: (-r["swing_pct"], r["candidate"], r["input"]))
    return rows[:top]


def tornado_svgs(result: dict[str, Any], top: int = 12) -> list[tuple[str, str]]:
    """(metric, SVG) per metric in the tornado data: bars from the point figure (0 %) to
    the metric with one input at its low (blue) and at its high (orange) value."""
    import altair as alt

    frame = tornado_frame(result)
    out = []
    for metric in dict.fromkeys(frame["metric"].to_list()):
        rows = tornado_rows(result, metric, top)
        if not rows:
            continue
        bars = []
        for rank, r in enumerate(rows):
            name = f"{r['candidate']} · {r['input']} ({r['low']:.4g} to {r['high']:.4g})"
            for side, end in (("input at low", r["pct_at_low"]),
                              ("input at high", r["pct_at_high"])):
                bars.append({"bar": name, "rank": rank, "side": side, "from": 0.0,
                             "to": end})
        chart = alt.layer(
            alt.Chart(alt.Data(values=bars)).mark_bar(height=14).encode(
                y=alt.Y("bar:N", title=None, sort=alt.SortField("rank"),
                        axis=alt.Axis(labelLimit=420)),
                x=alt.X("from:Q", title=f"Change of {_axis_title(metric)} from the point "
                                        "figure (%)"),
                x2="to:Q",
                color=alt.Color("side:N", title=None, scale=alt.Scale(
                    domain=["input at low", "input at high"],
                    range=["#4a90c2", "#e08a3c"]))),
            alt.Chart(alt.Data(values=[{"x": 0.0}])).mark_rule(color="#333333").encode(
                x="x:Q"),
        ).properties(width=WIDTH - 140, height=max(60, 22 * len(rows)))
        out.append((metric, _svg(chart, f"tornado-{metric}")))
    return out


def break_even_svg(result: dict[str, Any]) -> str | None:
    """CPM of each candidate against daily volume (log scale), the flat CPM of what it is
    compared with when that has no curve, and a dashed rule at each break-even volume."""
    import altair as alt

    entries = result.get("break_even") or []
    lines, flats, crossings = [], [], []
    curved = {b["candidate"] for b in entries if b.get("curve")}
    for b in entries:
        for p in b.get("curve") or []:
            lines.append({"series": b["candidate"], "tokens_per_day": p["tokens_per_day"],
                          "cpm": p["cpm_eur_per_mtok"]})
        versus_cpm = b.get("versus_cpm_eur_per_mtok")
        if b["versus"] not in curved and versus_cpm is not None:
            flats.append({"series": f"{b['versus']} (flat)", "cpm": versus_cpm})
        if b.get("tokens_per_day") is not None:
            crossings.append({"tokens_per_day": b["tokens_per_day"],
                              "label": f"{b['candidate']} = {b['versus']}"})
    if not lines:
        return None
    flats = list({f["series"]: f for f in flats}.values())
    x = alt.X("tokens_per_day:Q", title="Volume (tokens/day)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format="~s"))
    # Show the region where the decision is made: up to 4 x the dearest compared CPM.
    top = 4 * max([f["cpm"] for f in flats] or [max(p["cpm"] for p in lines)])
    y = alt.Y("cpm:Q", title=_axis_title("cpm_eur_per_mtok"),
              scale=alt.Scale(domain=[0, top]))
    layers: list[Any] = [
        alt.Chart(alt.Data(values=lines)).mark_line(strokeWidth=2, clip=True).encode(
            x=x, y=y, color=alt.Color("series:N", title="Candidate")),
    ]
    if flats:
        layers.append(alt.Chart(alt.Data(values=flats)).mark_rule(strokeDash=[4, 3]).encode(
            y="cpm:Q", color=alt.Color("series:N")))
    if crossings:
        layers.append(alt.Chart(alt.Data(values=crossings)).mark_rule(
            color="#555555", strokeDash=[2, 2]).encode(x="tokens_per_day:Q"))
    return _svg(alt.layer(*layers).properties(width=WIDTH, height=HEIGHT), "break-even")


PARETO_PAIRS = (("cpm_eur_per_mtok", "carbon_gco2e_per_mtok"),
                ("cpm_eur_per_mtok", "energy_j_per_token"))

__all__ = ["PARETO_PAIRS", "RANGE_METRICS", "break_even_svg", "pareto_svg", "tornado_svgs"]
