"""Charts as Vega-Lite specs built as plain dicts (JSON), drawn to SVG by vl-convert in one pass.

The spec builders read the result (schemas/result.py, never the engine) and do the layout work
a chart needs to read well: the Pareto labels are placed here, in pixels, so that no two overlap
(`place_labels`; a crowded chart numbers its points instead, with a key beside it); an axis
whose figures span more than `LOG_RATIO` becomes logarithmic; the break-even curves carry a
dash, a marker and a direct label each; money reads `312 kEUR`.

A report's specs are drawn in one pass (vl-convert's first call in a process costs most: build
every spec of a report first). While a run's chart cache is active (the store's), a spec
already in it (keyed by the sha256 of its canonical JSON and the vl-convert version) is not
drawn again. vl-convert is imported when a chart is drawn: the CLI and the other reports start
without it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import itertools
import json
import math
import re
import threading
from collections.abc import Iterator, MutableMapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from reports.cells import plain_all
from reports.frames import HEADERS, ranges, value
from reports.page import figure_text, is_money, quantity, span, volume
from schemas.outputs import OBJECTIVES, OUTPUTS
from schemas.result import EvidenceConfiguration, Percentiles, PlanSchedule, Result

Spec = dict[str, Any]

#: colour of each sovereignty level on every chart; excluded candidates are grey.
LEVEL_COLOURS: dict[str, str] = {
    "level 4": "#1a7a3a", "level 3": "#5aae61", "level 2": "#2166ac", "level 1": "#d6604d",
    "level 0": "#b2182b", "excluded": "#b8b8b8",
}
FONT = "DejaVu Sans"  # what vl-convert measures and draws text with: the font of `_ADVANCE`
FONT_STACK = "DejaVu Sans, Verdana, sans-serif"  # what the SVG asks a browser for
FONT_PX = 10  # labels drawn by us
WIDTH, HEIGHT = 560, 340
#: the most number labels a Pareto chart carries (its key lists those points)
NUMBERED_MAX = 40
#: an axis whose largest figure is more than this times its smallest is drawn logarithmic
LOG_RATIO = 10.0
SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
#: the Pareto charts, (x, y) columns: cost against carbon, then against energy (the Pareto
#: objectives of policy.objectives, their columns as declared in schemas/outputs.toml)
PARETO_PAIRS = tuple((OBJECTIVES["cpm"][0], OBJECTIVES[y][0]) for y in ("carbon", "energy"))

# --------------------------------------------------------------------------------- rendering

_CACHE: ContextVar[MutableMapping[str, str] | None] = ContextVar("chart_cache", default=None)
#: the ids vl-convert defines (clip paths, gradients) and their references
_DEFINED = re.compile(r'<(?:clipPath|linearGradient|radialGradient|pattern|mask) id="([^"]+)"')
_LOCAL = "chart"  # the id prefix of an SVG as cached, replaced by the chart's own
_LOCAL_ID = re.compile(rf'(<[A-Za-z]+ id="|url\(#){_LOCAL}-id')


def unavailable() -> str | None:
    """Why charts cannot be drawn here (vl-convert missing), or None when they can."""
    if importlib.util.find_spec("vl_convert") is None:
        return "charts not drawn: vl-convert-python not installed (pip install vl-convert-python)"
    return None


@contextmanager
def caching(var: ContextVar[MutableMapping[str, str] | None],
            cache: MutableMapping[str, str]) -> Iterator[MutableMapping[str, str]]:
    """While active, `var` (a renderer's cache slot) holds `cache`."""
    token = var.set(cache)
    try:
        yield cache
    finally:
        var.reset(token)


def rendering_cache(cache: MutableMapping[str, str]
                    ) -> AbstractContextManager[MutableMapping[str, str]]:
    """While active, `render` takes a spec's SVG from `cache` when its key is there and
    stores every SVG it draws into it."""
    return caching(_CACHE, cache)


def warm_up() -> threading.Thread | None:
    """Start vl-convert's JavaScript engine in a background thread and return the thread
    (None without vl-convert): its first call in a process costs most of a report's charts
    and runs outside the GIL, so a run that starts it early draws its charts later without
    that wait."""
    if unavailable() is not None:
        return None

    def draw() -> None:
        import vl_convert as vlc

        vlc.vegalite_to_svg({"mark": "point", "data": {"values": [{"a": 1}]},
                             "encoding": {"x": {"field": "a", "type": "quantitative"}}})

    thread = threading.Thread(target=draw, name="vl-convert warm-up", daemon=True)
    thread.start()
    return thread


@functools.cache
def _vl_version() -> str:
    return importlib.metadata.version("vl-convert-python")


def spec_key(spec: Spec) -> str:
    """The cache key of a spec: sha256 of its canonical JSON and the vl-convert version."""
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return hashlib.sha256(f"{_vl_version()}\n{text}".encode()).hexdigest()


def _draw(spec: Spec) -> str:
    """vl-convert's SVG with the ids it defines (clip paths, gradients) numbered from 1 under
    `_LOCAL`: vl-convert counts them across calls (`clip1`, `clip2`, `gradient_0`, ...), so
    the raw SVG depends on what was drawn before it."""
    import vl_convert as vlc

    svg: str = vlc.vegalite_to_svg(spec).replace(f'font-family="{FONT}"',
                                                 f'font-family="{FONT_STACK}"')
    found = list(dict.fromkeys(_DEFINED.findall(svg)))
    if not found:
        return svg
    renames = {old: f"{_LOCAL}-id{i}" for i, old in enumerate(found, start=1)}
    pattern = re.compile(r'(<[A-Za-z]+ id="|url\(#)(' + "|".join(map(re.escape, found))
                         + r')(?=[")])')
    return pattern.sub(lambda m: m.group(1) + renames[m.group(2)], svg)


def _finish(spec: Spec) -> Spec:
    """The spec as drawn: fonts, white background, every string plain (a control character
    in a proposal's id aborts vl-convert's process)."""
    config = {"font": FONT, "background": "white", "view": {"stroke": "#cccccc"},
              # no truncation by vl-convert (measuring for it is most of a chart's time):
              # labels are shortened here, by `shorten`
              "axis": {"labelFont": FONT, "titleFont": FONT, "labelLimit": 0},
              "legend": {"labelFont": FONT, "titleFont": FONT, "labelLimit": 0},
              "title": {"font": FONT}}
    finished: Spec = plain_all({"$schema": SCHEMA, **spec,
                                "config": {**config, **spec.get("config", {})}})
    return finished


def _own_id(prefix: str, match: re.Match[str]) -> str:
    return f"{match.group(1)}{prefix}-id"


def render(specs: Sequence[tuple[str, Spec]]) -> list[str]:
    """SVG of each (id prefix, spec), in order; clip-path ids are made unique under each
    prefix. Specs found in the active cache are not drawn (looked up all at once when the
    cache has a `get_many(keys)`, as the store's has)."""
    cache = _CACHE.get()
    finished = [(prefix, _finish(spec)) for prefix, spec in specs]
    keys = [spec_key(spec) for _, spec in finished] if cache is not None else []
    kept = _lookup(cache, keys) if cache is not None else {}
    out = []
    for i, (prefix, spec) in enumerate(finished):
        svg = kept.get(keys[i]) if cache is not None else None
        if svg is None:
            svg = _draw(spec)
            if cache is not None:
                cache[keys[i]] = svg
                kept[keys[i]] = svg
        out.append(_LOCAL_ID.sub(functools.partial(_own_id, prefix), svg))
    return out


def _lookup(cache: MutableMapping[str, str], keys: Sequence[str]) -> dict[str, str]:
    """The cached SVGs of `keys` (those the cache holds)."""
    many = getattr(cache, "get_many", None)
    if many is not None:
        found: dict[str, str] = many(keys)
        return found
    return {key: svg for key in dict.fromkeys(keys) if (svg := cache.get(key)) is not None}


#: DejaVu Sans advance widths (em) of the printable ASCII characters, read from its hmtx
#: table; any other character counts as 1 em (wider than most).
_ADVANCE = dict(zip(
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstu"
    "vwxyz{|}~",
    (0.318, 0.401, 0.46, 0.838, 0.636, 0.95, 0.78, 0.275, 0.39, 0.39, 0.5, 0.838, 0.318,
     0.361, 0.318, 0.337, *[0.636] * 10, 0.337, 0.337, 0.838, 0.838, 0.838, 0.531, 1.0,
     0.684, 0.686, 0.698, 0.77, 0.632, 0.575, 0.775, 0.752, 0.295, 0.295, 0.656, 0.557,
     0.863, 0.748, 0.787, 0.603, 0.787, 0.695, 0.635, 0.611, 0.732, 0.684, 0.989, 0.685,
     0.611, 0.685, 0.39, 0.337, 0.39, 0.838, 0.5, 0.5, 0.613, 0.635, 0.55, 0.635, 0.615,
     0.352, 0.635, 0.634, 0.278, 0.278, 0.579, 0.278, 0.974, 0.634, 0.612, 0.635, 0.635,
     0.411, 0.521, 0.392, 0.634, 0.592, 0.818, 0.592, 0.592, 0.525, 0.636, 0.337, 0.636,
     0.838), strict=True))


def shorten(text: str, px: float = 240.0) -> str:
    """`text` cut with an ellipsis to at most `px` pixels wide (labels of axes)."""
    if text_width(text) <= px:
        return text
    while text and text_width(text + "…") > px:
        text = text[:-1]
    return text + "…"


def text_width(text: str, size: float = FONT_PX) -> float:
    """Width in px of `text` drawn at `size` px, 8 % wider than DejaVu Sans draws it (a
    browser's fallback font, Verdana, is wider)."""
    return sum(_ADVANCE.get(ch, 1.0) for ch in text) * size * 1.08


# ------------------------------------------------------------------------------- axes

@dataclass(frozen=True)
class Axis:
    """A quantitative axis with a fixed domain, so data maps to pixels here as in Vega."""

    lo: float
    hi: float
    log: bool
    length: float
    flip: bool = False  # y: pixel 0 at the top

    @classmethod
    def fit(cls, values: Sequence[float], length: float, flip: bool = False) -> Axis:
        """An axis over `values` with a 6 % margin; logarithmic when every value is positive
        and the largest is more than LOG_RATIO times the smallest."""
        lo, hi = min(values), max(values)
        log = lo > 0 and hi / lo > LOG_RATIO
        if log:
            a, b = math.log10(lo), math.log10(hi)
            pad = (b - a) * 0.06
            return cls(10 ** (a - pad), 10 ** (b + pad), True, length, flip)
        pad = (hi - lo) * 0.06 or (abs(hi) * 0.1 or 1.0)
        low = lo - pad if lo - pad > 0 or lo < 0 else 0.0
        return cls(low, hi + pad, False, length, flip)

    @property
    def ratio(self) -> float:
        return self.hi / self.lo if self.lo > 0 else math.inf

    def px(self, v: float) -> float:
        f = math.log10 if self.log else (lambda t: t)
        share = (f(v) - f(self.lo)) / (f(self.hi) - f(self.lo))
        return self.length * (1 - share) if self.flip else self.length * share

    def scale(self) -> Spec:
        return {"type": "log" if self.log else "linear", "domain": [self.lo, self.hi],
                "nice": False, "zero": False}


# ------------------------------------------------------------------------------- Pareto

Box = tuple[float, float, float, float]  # left, top, right, bottom in plot pixels


@dataclass
class Label:
    """A label drawn left-aligned at (x, y) (y its middle), with its box and, when it sits
    away from its point, a leader line from (x0, y0)."""

    text: str
    x: float
    y: float
    box: Box
    leader: tuple[float, float] | None = None


@dataclass
class Point:
    id: str
    x: float
    y: float
    group: str
    frontier: bool
    chosen: bool
    px: float = 0.0
    py: float = 0.0
    number: int = 0
    whisker_x: tuple[float, float] | None = None
    whisker_y: tuple[float, float] | None = None

    @property
    def radius(self) -> float:
        # the drawn marks: ring of area 480 px² (r 12.4, stroke 2), frontier 170 (r 7.4,
        # stroke 1.5), others 70 (r 4.7)
        return 13.5 if self.chosen else 8.2 if self.frontier else 5.0


@dataclass
class ParetoLayout:
    x_metric: str
    y_metric: str
    x_axis: Axis
    y_axis: Axis
    points: list[Point]
    labels: list[Label]
    numbered: bool
    missing: list[str] = field(default_factory=list)
    overlaps: bool = False  # only when even the numbers found no free place


def _disjoint(a: Box, b: Box) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def _overlap(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


_LINE_PX = 12.0
#: directions tried around a point, nearest first: (unit dx, unit dy)
_DIRECTIONS = ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (1, 1), (-1, -1), (-1, 1))
_DISTANCES = (1.0, 2.2, 3.6)


def segment_boxes(x0: float, y0: float, x1: float, y1: float) -> list[Box]:
    """A drawn line as small boxes every 3 px along it (obstacles for labels)."""
    steps = max(1, math.ceil(math.dist((x0, y0), (x1, y1)) / 3))
    return [(x - 1, y - 1, x + 1, y + 1)
            for x, y in ((x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
                         for i in range(steps + 1))]


class _Grid:
    """Boxes bucketed by cells of `_CELL` px, so a label's spot is tested against the boxes
    near it only (a chart of a thousand points has some 10^5 whisker boxes)."""

    _CELL = 24.0

    def __init__(self, boxes: Sequence[Box] = ()):
        self.boxes: list[Box] = []
        self.cells: dict[tuple[int, int], list[int]] = {}
        for box in boxes:
            self.add(box)

    def _keys(self, box: Box) -> Iterator[tuple[int, int]]:
        c = self._CELL
        for i in range(math.floor(box[0] / c), math.floor(box[2] / c) + 1):
            for j in range(math.floor(box[1] / c), math.floor(box[3] / c) + 1):
                yield i, j

    def add(self, box: Box) -> None:
        self.boxes.append(box)
        for key in self._keys(box):
            self.cells.setdefault(key, []).append(len(self.boxes) - 1)

    def near(self, box: Box) -> list[Box]:
        found = {i for key in self._keys(box) for i in self.cells.get(key, ())}
        return [self.boxes[i] for i in sorted(found)]


def place_labels(anchors: Sequence[tuple[float, float, float, str]], obstacles: Sequence[Box],
                 width: float, height: float) -> tuple[list[Label], bool]:
    """Labels for (x px, y px, radius px, text) anchors, placed greedily in the given order at
    the first spot (8 directions, 3 distances, the farther ones with a leader line) whose
    box stays inside the plot and overlaps no obstacle and no label placed before. Returns
    the labels and whether every one found a free spot (a label that found none takes the
    spot with the least overlap)."""
    grid = _Grid(obstacles)
    labels: list[Label] = []
    clean = True
    for ax, ay, r, text in anchors:
        w, h = text_width(text) + 2, _LINE_PX
        best: tuple[float, Label] | None = None
        for distance in _DISTANCES:
            for ux, uy in _DIRECTIONS:
                gap = (r + 3) * distance
                cx, cy = ax + ux * gap, ay + uy * (gap if ux == 0 else gap * 0.8)
                left = cx if ux > 0 else cx - w if ux < 0 else cx - w / 2
                top = cy - h / 2 if uy == 0 else cy - h if uy < 0 else cy
                box = (left, top, left + w, top + h)
                inside = box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height
                own = (ax - r, ay - r, ax + r, ay + r)
                cost = sum(_overlap(box, b) for b in grid.near(box) if b != own)
                if not inside:
                    cost += 1e6
                label = Label(text, left + 1, top + h / 2, box,
                              (ax, ay) if distance > 1 else None)
                if cost == 0:
                    best = (0.0, label)
                    break
                if best is None or cost < best[0]:
                    best = (cost, label)
            if best is not None and best[0] == 0:
                break
        assert best is not None
        clean &= best[0] == 0
        labels.append(best[1])
        grid.add(best[1].box)
    return labels, clean


def _whisker(found: Percentiles | None) -> tuple[float, float] | None:
    low, high = (None, None) if found is None else (found.p5, found.p95)
    return None if low is None or high is None else (low, high)


def pareto_layout(result: Result, x: str, y: str,
                  direct_max: int = 10) -> ParetoLayout | None:
    """The Pareto chart of metrics x and y in pixels: axes (log when a candidate is an
    outlier), points and labels. Up to `direct_max` points, none drawn on another, are
    labelled with their ids when every label finds a free spot (clear of the points, the
    whiskers and the frontier line); otherwise points carry numbers (points closer than 6 px
    share one label, `2, 3`) and the figure lists them in a key."""
    chosen = None if result.recommendation is None else result.recommendation.candidate
    points, missing = [], []
    for c in result.candidates:
        xv, yv = value(c, x), value(c, y)
        if xv is None or yv is None:
            missing.append(c.id)
            continue
        spread = ranges(c)
        points.append(Point(
            c.id, float(xv), float(yv),
            f"level {c.sovereignty_level}" if c.eligible else "excluded",
            c.pareto_rank == 1, c.id == chosen,
            whisker_x=_whisker(spread.get(x)), whisker_y=_whisker(spread.get(y))))
    if not points:
        return None
    xs = [v for p in points for v in (p.x, *(p.whisker_x or ()))]
    ys = [v for p in points for v in (p.y, *(p.whisker_y or ()))]
    x_axis, y_axis = Axis.fit(xs, WIDTH), Axis.fit(ys, HEIGHT, flip=True)
    for p in points:
        p.px, p.py = x_axis.px(p.x), y_axis.px(p.y)
    # reading order: by x, then y, then id; the chosen and the frontier are labelled first
    ordered = sorted(points, key=lambda p: (p.x, p.y, p.id))
    for i, p in enumerate(ordered, start=1):
        p.number = i
    first = sorted(ordered, key=lambda p: (not p.chosen, not p.frontier, p.x, p.y, p.id))
    obstacles = [(p.px - p.radius, p.py - p.radius, p.px + p.radius, p.py + p.radius)
                 for p in points]
    # lines a label must not cross: the whiskers (of a chart a reader can follow: beyond
    # NUMBERED_MAX points they are a cloud, and every label spot would be tested against
    # all of them) and the frontier
    for p in points if len(points) <= NUMBERED_MAX else ():
        if p.whisker_x:
            obstacles += segment_boxes(x_axis.px(p.whisker_x[0]), p.py,
                                       x_axis.px(p.whisker_x[1]), p.py)
        if p.whisker_y:
            obstacles += segment_boxes(p.px, y_axis.px(p.whisker_y[0]),
                                       p.px, y_axis.px(p.whisker_y[1]))
    frontier = sorted((p for p in points if p.frontier), key=lambda p: (p.x, p.y))
    for a, b in itertools.pairwise(frontier):
        obstacles += segment_boxes(a.px, a.py, b.px, b.py)
    if len(points) <= direct_max and not any(
            math.dist((a.px, a.py), (b.px, b.py)) < 6
            for a, b in itertools.combinations(points, 2)):
        labels, clean = place_labels([(p.px, p.py, p.radius, p.id) for p in first],
                                     obstacles, WIDTH, HEIGHT)
        if clean:
            return ParetoLayout(x, y, x_axis, y_axis, points, labels, False, missing)
    # numbers: points closer than 6 px share one label (the groups found through 6-px cells)
    groups: list[list[Point]] = []
    by_cell: dict[tuple[int, int], list[list[Point]]] = {}
    for p in ordered:
        i, j = math.floor(p.px / 6), math.floor(p.py / 6)
        near = next((g for di in (-1, 0, 1) for dj in (-1, 0, 1)
                     for g in by_cell.get((i + di, j + dj), ())
                     if math.dist((g[0].px, g[0].py), (p.px, p.py)) < 6), None)
        if near is None:
            groups.append([p])
            by_cell.setdefault((i, j), []).append(groups[-1])
        else:
            near.append(p)
    groups.sort(key=lambda g: (not any(p.chosen for p in g), not any(p.frontier for p in g),
                               g[0].number))
    # beyond NUMBERED_MAX labels the chart is a cloud: the recommendation, the frontier and
    # then the lowest numbers are numbered, the rest drawn unlabelled
    groups = groups[:NUMBERED_MAX]
    labels, clean = place_labels(
        [(g[0].px, g[0].py, max(p.radius for p in g), ", ".join(str(p.number) for p in g))
         for g in groups], obstacles, WIDTH, HEIGHT)
    return ParetoLayout(x, y, x_axis, y_axis, points, labels, True, missing, not clean)


def _axis_title(column: str, axis: Axis) -> str:
    title = HEADERS.get(column, column)
    return f"{title}, log scale" if axis.log else title


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks of a log axis at 1, 2 and 5 times the powers of ten within [lo, hi] (all nine
    multiples crowd the labels); 1, 3 when fewer than three would show, every multiple
    when the axis spans less than one power."""
    for steps in ((1, 2, 5), (1, 3), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
        ticks = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)),
                                              math.ceil(math.log10(hi)) + 1)
                 for m in steps if lo <= m * 10.0 ** e <= hi]
        if len(ticks) >= 3:
            return ticks
    return ticks


def _log_axis(axis: Axis) -> Spec:
    if not axis.log:
        return {}
    return {"format": "~g", "values": log_ticks(axis.lo, axis.hi)}


def pareto_spec(layout: ParetoLayout) -> Spec:
    """Scatter: colour = sovereignty level (excluded grey), frontier outlined and joined by a
    dashed line (in x order), the chosen candidate ringed, p5-p95 whiskers, labels at the
    pixel spots `pareto_layout` found; the colour legend sits under the plot."""
    xa, ya = layout.x_axis, layout.y_axis
    xs = {"field": "x", "type": "quantitative", "scale": xa.scale(),
          "title": _axis_title(layout.x_metric, xa), "axis": _log_axis(xa)}
    ys = {"field": "y", "type": "quantitative", "scale": ya.scale(),
          "title": _axis_title(layout.y_metric, ya), "axis": _log_axis(ya)}
    groups = [g for g in LEVEL_COLOURS if any(p.group == g for p in layout.points)]
    colour = {"field": "group", "type": "nominal", "title": "Sovereignty",
              "scale": {"domain": groups, "range": [LEVEL_COLOURS[g] for g in groups]},
              "legend": {"orient": "bottom", "direction": "horizontal"}}
    rows = [{"id": p.id, "x": p.x, "y": p.y, "group": p.group, "frontier": p.frontier,
             "chosen": p.chosen,
             "x_p5": p.whisker_x[0] if p.whisker_x else None,
             "x_p95": p.whisker_x[1] if p.whisker_x else None,
             "y_p5": p.whisker_y[0] if p.whisker_y else None,
             "y_p95": p.whisker_y[1] if p.whisker_y else None,
             "text": f"{p.id}: {quantity(p.x, None)}, {quantity(p.y, None)}"
                     + (" (recommended)" if p.chosen else "")}
            for p in layout.points]
    labels = [{"lx": lb.x, "ly": lb.y, "text": lb.text,
               "x0": lb.leader[0] if lb.leader else None,
               "y0": lb.leader[1] if lb.leader else None} for lb in layout.labels]
    pixel_x = {"field": "lx", "type": "quantitative", "scale": None}
    pixel_y = {"field": "ly", "type": "quantitative", "scale": None}
    layers: list[Spec] = [
        {"transform": [{"filter": "datum.x_p5 != null"}], "mark": {"type": "rule", "aria": False,
                                                                     "opacity": 0.6},
         "encoding": {"x": {**xs, "field": "x_p5"}, "x2": {"field": "x_p95"},
                      "y": ys, "color": colour}},
        {"transform": [{"filter": "datum.y_p5 != null"}], "mark": {"type": "rule", "aria": False,
                                                                     "opacity": 0.6},
         "encoding": {"x": xs, "y": {**ys, "field": "y_p5"}, "y2": {"field": "y_p95"},
                      "color": colour}},
        {"transform": [{"filter": "datum.frontier"}],
         "mark": {"type": "line", "color": "#1a7a3a", "strokeDash": [6, 4],
                  "strokeWidth": 1.5},
         "encoding": {"x": xs, "y": ys, "order": {"field": "x", "type": "quantitative"}}},
        {"transform": [{"filter": "datum.chosen"}],
         "mark": {"type": "point", "shape": "circle", "size": 480, "strokeWidth": 2,
                  "color": "#000000", "filled": False},
         "encoding": {"x": xs, "y": ys}},
        {"mark": {"type": "circle", "opacity": 1},
         "encoding": {"x": xs, "y": ys, "color": colour,
                      "size": {"condition": {"test": "datum.frontier", "value": 170},
                               "value": 70},
                      "stroke": {"condition": {"test": "datum.frontier", "value": "#000000"},
                                 "value": None},
                      "strokeWidth": {"condition": {"test": "datum.frontier", "value": 1.5},
                                      "value": 0},
                      "description": {"field": "text"}}},
    ]
    label_layers: list[Spec] = [
        {"data": {"values": labels}, "transform": [{"filter": "datum.x0 != null"}],
         "mark": {"type": "rule", "aria": False, "color": "#888888", "strokeWidth": 0.8},
         "encoding": {"x": {"field": "x0", "type": "quantitative", "scale": None},
                      "y": {"field": "y0", "type": "quantitative", "scale": None},
                      "x2": {"field": "lx"}, "y2": {"field": "ly"}}},
        {"data": {"values": labels},
         "mark": {"type": "text", "aria": False, "align": "left", "baseline": "middle",
                  "fontSize": FONT_PX, "font": FONT, "color": "#222222"},
         "encoding": {"x": pixel_x, "y": pixel_y, "text": {"field": "text"}}},
    ]
    return {"width": WIDTH, "height": HEIGHT,
            "layer": [{"data": {"values": rows}, "layer": layers}, *label_layers]}


# ------------------------------------------------------------------------------- tornado

TORNADO_PANELS = 4  # candidates drawn per metric: the chosen, the runner-up, the most sensitive


@dataclass(frozen=True)
class TornadoBar:
    input: str
    label: str  # input and its range, units formatted: "capex_eur: 312 kEUR to 382 kEUR"
    at_low: float
    at_high: float

    @property
    def swing(self) -> float:
        return abs(self.at_high - self.at_low)


def _lead(result: Result) -> tuple[str | None, str | None]:
    """The recommended candidate and the runner-up (None without them)."""
    rec = result.recommendation
    return (None, None) if rec is None else (rec.candidate, rec.runner_up)


def tornado_panels(result: Result, metric: str,
                   cap: int = TORNADO_PANELS) -> tuple[list[tuple[str, float, list[TornadoBar]]],
                                                       int]:
    """(candidate, point figure, bars widest first) for at most `cap` candidates whose
    `metric` moves with some input: the recommended candidate, the runner-up, then the
    widest swings; and how many candidates were left out."""
    by_id = {c.id: c for c in result.candidates}
    bars: dict[str, list[TornadoBar]] = {}
    for r in result.tornado:
        lo, hi = r.metric_at_low, r.metric_at_high
        if r.metric != metric or lo is None or hi is None or lo == hi:
            continue
        owner = by_id.get(r.candidate)
        units = {i.input: i.unit for i in owner.inputs} if owner is not None else {}
        unit = units.get(r.input)
        label = shorten(f"{r.input}: {span(r.low, r.high, unit)}", 280)
        bars.setdefault(r.candidate, []).append(TornadoBar(r.input, label, lo, hi))
    panels = []
    for cid, rows in bars.items():
        point = None if cid not in by_id else value(by_id[cid], metric)
        if point is None:
            continue
        rows.sort(key=lambda b: (-b.swing, b.input))
        panels.append((cid, float(point), rows))
    lead = list(_lead(result))
    panels.sort(key=lambda p: (lead.index(p[0]) if p[0] in lead else 2,
                               -max(b.swing for b in p[2]) / (abs(p[1]) or 1.0), p[0]))
    return panels[:cap], max(0, len(panels) - cap)


def _money_axis(unit: str, values: Sequence[float]) -> Spec:
    """Axis labels of a money figure: kEUR/MEUR through a Vega expression once the figures
    reach thousands, else plain decimals."""
    top = max((abs(v) for v in values), default=0.0)
    if is_money(unit) and top >= 1e3:
        scale, prefix = (1e6, "M") if top >= 1e6 else (1e3, "k")
        # the unit is ours (schemas/outputs.py), never a proposal's text
        return {"labelExpr": f"format(datum.value / {scale:g}, '~g') + ' {prefix}{unit}'"}
    return {"format": "~g"}


def tornado_spec(result: Result, metric: str,
                 panels: Sequence[tuple[str, float, list[TornadoBar]]]) -> Spec:
    """One small tornado per candidate (two columns): a bar per input from the metric at the
    input's low to at its high, a rule at the point figure; each panel its own axes."""
    chosen, runner_up = _lead(result)
    unit = OUTPUTS[metric].unit if metric in OUTPUTS else ""
    views = []
    for cid, point, bars in panels:
        role = (" (recommended)" if cid == chosen
                else " (runner-up)" if cid == runner_up else "")
        rows: list[dict[str, Any]] = [{"bar": b.label, "rank": i, "from": min(b.at_low, b.at_high),
                 "to": max(b.at_low, b.at_high),
                 "side": "rises with the input" if b.at_high > b.at_low
                 else "falls with the input",
                 "text": f"{b.label}: {quantity(b.at_low, unit)} to "
                         f"{quantity(b.at_high, unit)}"}
                for i, b in enumerate(bars)]
        x = {"field": "from", "type": "quantitative",
             "title": HEADERS.get(metric, metric),
             "scale": {"zero": False},
             "axis": _money_axis(unit, [point, *(r["to"] for r in rows)])}
        views.append({
            "title": {"text": shorten(f"{cid}{role}", 420), "anchor": "start", "fontSize": 11},
            "width": 200, "height": max(40, 20 * len(rows)),
            "layer": [
                {"data": {"values": rows}, "mark": {"type": "bar", "height": 12},
                 "encoding": {
                     "y": {"field": "bar", "type": "nominal", "title": None,
                           "sort": {"field": "rank"}},
                     "x": x, "x2": {"field": "to"},
                     "color": {"field": "side", "type": "nominal", "title": None,
                               "scale": {"domain": ["rises with the input",
                                                    "falls with the input"],
                                         "range": ["#e08a3c", "#4a90c2"]},
                               "legend": {"orient": "bottom"}},
                     "description": {"field": "text"}}},
                {"data": {"values": [{"from": point}]},
                 "mark": {"type": "rule", "aria": False, "color": "#333333"},
                 "encoding": {"x": {"field": "from", "type": "quantitative"}}},
            ]})
    return {"concat": views, "columns": 2, "spacing": 24,
            "resolve": {"scale": {"x": "independent", "y": "independent"}}}


# ------------------------------------------------------------------------------- pairwise

PAIRWISE_CELLS = 8  # at most this many candidates in the matrix before it narrows


def pairwise_matrix(result: Result, cap: int = PAIRWISE_CELLS
                    ) -> tuple[list[str], dict[tuple[str, str], float], bool]:
    """Candidates (cheapest point CPM first) and P(row's CPM < column's) for each ordered
    pair, from the engine's upper triangle (the mirror cell is 1 - p); more than `cap`
    candidates narrow to the frontier and the recommended candidate. Returns whether it
    narrowed."""
    p: dict[tuple[str, str], float] = {}
    for r in result.pairwise:
        if r.metric != "cpm_eur_per_mtok" or r.p_a_lower is None:
            continue
        p[(r.a, r.b)] = r.p_a_lower
        p.setdefault((r.b, r.a), 1.0 - r.p_a_lower)
    present = {a for a, _ in p}
    cpm = {c.id: c.cpm_eur_per_mtok for c in result.candidates}
    narrowed = len(present) > cap
    if narrowed:
        keep = {c.id for c in result.candidates if c.pareto_rank == 1}
        keep |= {cid for cid in _lead(result) if cid is not None}
        present &= keep
    ids = sorted(present, key=lambda i: (cpm.get(i) is None, cpm.get(i) or 0.0, i))
    return ids, {k: v for k, v in p.items() if k[0] in present and k[1] in present}, narrowed


def pairwise_spec(ids: Sequence[str], p: dict[tuple[str, str], float], chosen: str | None
                  ) -> Spec:
    """Heatmap of P(row cheaper than column), the probability printed in each cell; the
    diagonal grey."""
    names = {i: shorten(f"{i} (recommended)" if i == chosen else i) for i in ids}
    cells = []
    for a in ids:
        for b in ids:
            prob = None if a == b else p.get((a, b))
            cells.append({"row": names[a], "col": names[b], "p": prob,
                          "text": "—" if a == b else "n/a" if prob is None else f"{prob:.0%}",
                          "dark": prob is not None and (prob < 0.2 or prob > 0.8),
                          "desc": f"P({a} cheaper than {b}) = "
                                  + ("n/a" if prob is None else f"{prob:.0%}")
                                  if a != b else f"{a}: itself"})
    order = [names[i] for i in ids]
    side = 52 * len(ids)
    enc = {"x": {"field": "col", "type": "nominal", "sort": order, "title": None,
                 "axis": {"orient": "top", "labelAngle": -35}},
           "y": {"field": "row", "type": "nominal", "sort": order, "title": None}}
    return {"width": side, "height": side, "data": {"values": cells},
            "title": {"text": "P(row candidate's CPM is lower than the column's)",
                      "anchor": "start", "fontSize": 11}, "layer": [
        {"transform": [{"filter": "datum.p != null"}],
         "mark": {"type": "rect", "stroke": "#ffffff", "strokeWidth": 1},
         "encoding": {**enc,
                      "color": {"field": "p", "type": "quantitative", "title": "P",
                                "scale": {"domain": [0, 1], "scheme": "redblue"},
                                "legend": {"format": ".0%"}},
                      "description": {"field": "desc"}}},
        {"transform": [{"filter": "datum.p == null"}],
         "mark": {"type": "rect", "stroke": "#ffffff", "strokeWidth": 1, "color": "#eeeeee"},
         "encoding": {**enc, "description": {"field": "desc"}}},
        {"mark": {"type": "text", "fontSize": 11},
         "encoding": {**enc, "text": {"field": "text"},
                      "color": {"condition": {"test": "datum.dark", "value": "#ffffff"},
                                "value": "#000000"}}},
    ]}


# ------------------------------------------------------------------------------- break-even

DASHES = ([1, 0], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4], [12, 2], [1, 5], [6, 2, 1, 2])
SHAPES = ("circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "wedge",
          "stroke")


@dataclass
class BreakEven:
    candidate: str
    versus: str
    versus_cpm: float | None
    crossing: float | None
    curve: list[tuple[float, float]]  # (tokens/day, CPM)
    sized: bool = False  # the fleet sized at each volume, else one instance

    def sentence(self) -> str:
        cloud = (f"{self.versus}'s {quantity(self.versus_cpm, 'EUR/Mtok')}"
                 if self.versus_cpm is not None else self.versus)
        if self.crossing is not None:
            return (f"{self.candidate} costs no more per token than {cloud} from "
                    f"{volume(self.crossing)} on ("
                    + ("its fleet sized for each volume's peak, as at the demand)."
                       if self.sized else "one instance)."))
        if self.curve and self.sized:
            low_volume, low = min(self.curve, key=lambda point: point[1])
            return (f"{self.candidate} never costs less per token than {cloud} up to ten times "
                    f"the demand ({volume(self.curve[-1][0])}), its fleet sized for each "
                    f"volume's peak: its lowest CPM is {quantity(low, 'EUR/Mtok')} (at "
                    f"{volume(low_volume)}).")
        if self.curve:
            top_volume, cpm = self.curve[-1]
            return (f"{self.candidate} never costs less per token than {cloud}: even at full "
                    f"use of one instance ({volume(top_volume)}) its CPM is "
                    f"{quantity(cpm, 'EUR/Mtok')}.")
        return f"{self.candidate}: no break-even curve against {cloud}."


def basis_words(entries: Sequence[BreakEven]) -> str:
    """What a break-even curve's volume is of: the fleet sized for it, or one instance."""
    return ("the fleet sized for each volume" if all(e.sized for e in entries)
            else "one instance")


def break_even_entries(result: Result) -> list[BreakEven]:
    return [BreakEven(b.candidate, b.versus, b.versus_cpm_eur_per_mtok, b.tokens_per_day,
                      [(p.tokens_per_day, p.cpm_eur_per_mtok) for p in b.curve
                       if p.cpm_eur_per_mtok is not None
                       and p.cpm_eur_per_mtok > 0 and p.tokens_per_day > 0],
                      b.basis == "sized")
            for b in result.break_even]


def break_even_spec(entries: Sequence[BreakEven]) -> Spec | None:
    """CPM of each on-prem candidate against daily volume, both axes logarithmic (a fixed
    cost spread over the volume is a straight line there), each curve its own colour, dash
    and marker and a label at its right end; the cloud CPM a flat rule, each break-even a
    dotted vertical. None when no curve crosses the cloud CPM (the page states it instead)."""
    curved = [e for e in entries if e.curve]
    if not curved or all(e.crossing is None for e in curved):
        return None
    clouds = sorted({(e.versus, e.versus_cpm) for e in curved if e.versus_cpm is not None})
    cloud_cpms = [c for _, c in clouds]
    lows = [min(c for _, c in e.curve) for e in curved]
    top = max(c for e in curved for _, c in e.curve)
    if cloud_cpms:
        top = min(top, 20 * max(cloud_cpms))
    y_axis = Axis(min([*lows, *cloud_cpms]) * 0.8, top * 1.05, True, HEIGHT, flip=True)
    volumes = [v for e in curved for v, _ in e.curve]
    x_axis = Axis(min(volumes), max(volumes), True, WIDTH)
    series = [e.candidate for e in curved]
    lines, marks = [], []
    for i, e in enumerate(curved):
        for j, (v, c) in enumerate(e.curve):
            row = {"series": e.candidate, "tokens_per_day": v, "cpm": c}
            lines.append(row)
            if j % 8 == (2 * i) % 8:  # markers staggered, so coinciding curves show each
                marks.append(row)
    # direct labels at the right end, pushed apart to at least one line of text
    ends = sorted((y_axis.px(min(e.curve[-1][1], y_axis.hi)), e.candidate) for e in curved)
    placed: list[tuple[float, str]] = []
    for end, name in ends:
        placed.append((max(end, placed[-1][0] + _LINE_PX) if placed else end, name))
    labels = [{"ly": y, "lx": WIDTH + 8, "x0": WIDTH, "text": shorten(name),
               "y0": y_axis.px(min(next(e for e in curved if e.candidate == name).curve[-1][1],
                                   y_axis.hi))}
              for y, name in placed]
    x: Spec = {"field": "tokens_per_day", "type": "quantitative", "scale": x_axis.scale(),
         "title": f"Volume (tokens/day, {basis_words(curved)}, log scale)",
         "axis": {"format": "~s", "values": log_ticks(x_axis.lo, x_axis.hi)}}
    y: Spec = {"field": "cpm", "type": "quantitative", "scale": y_axis.scale(),
         "title": f"{HEADERS.get('cpm_eur_per_mtok', 'CPM')}, log scale",
         "axis": _log_axis(y_axis)}
    by_series: Spec = {"scale": {"domain": series}, "legend": {"orient": "bottom",
                                                         "title": "On-prem candidate"}}
    colour = {"field": "series", "type": "nominal", **by_series,
              "scale": {"domain": series, "scheme": "dark2"}}
    layers: list[Spec] = [
        {"data": {"values": lines}, "mark": {"type": "line", "strokeWidth": 2, "clip": True},
         "encoding": {"x": x, "y": y, "color": colour,
                      "strokeDash": {"field": "series", "type": "nominal", **by_series,
                                     "scale": {"domain": series,
                                               "range": list(DASHES[:len(series)])}}}},
        {"data": {"values": marks}, "mark": {"type": "point", "filled": True, "size": 45,
                                             "clip": True},
         "encoding": {"x": x, "y": y, "color": colour,
                      "shape": {"field": "series", "type": "nominal", **by_series,
                                "scale": {"domain": series,
                                          "range": list(SHAPES[:len(series)])}}}},
    ]
    for name, cpm in clouds:
        layers += [
            {"data": {"values": [{"cpm": cpm}]},
             "mark": {"type": "rule", "aria": False, "color": "#333333", "strokeDash": [4, 3]},
             "encoding": {"y": {"field": "cpm", "type": "quantitative"}}},
            {"data": {"values": [{"cpm": cpm, "text": f"{name} {quantity(cpm, 'EUR/Mtok')}"}]},
             "mark": {"type": "text", "aria": False, "align": "left", "baseline": "bottom", "dx": 4,
                      "dy": -2, "fontSize": FONT_PX, "color": "#333333"},
             "encoding": {"y": {"field": "cpm", "type": "quantitative"},
                          "x": {"value": 0}, "text": {"field": "text"}}},
        ]
    crossings = [{"tokens_per_day": e.crossing} for e in curved if e.crossing is not None]
    layers.append({"data": {"values": crossings},
                   "mark": {"type": "rule", "aria": False, "color": "#555555",
                            "strokeDash": [2, 2]},
                   "encoding": {"x": {"field": "tokens_per_day", "type": "quantitative"}}})
    layers += [
        {"data": {"values": labels},
         "mark": {"type": "rule", "aria": False, "color": "#888888", "strokeWidth": 0.8},
         "encoding": {"x": {"field": "x0", "type": "quantitative", "scale": None},
                      "x2": {"field": "lx"},
                      "y": {"field": "y0", "type": "quantitative", "scale": None},
                      "y2": {"field": "ly"}}},
        {"data": {"values": labels},
         "mark": {"type": "text", "aria": False, "align": "left", "baseline": "middle", "dx": 2,
                  "fontSize": FONT_PX, "color": "#222222"},
         "encoding": {"x": {"field": "lx", "type": "quantitative", "scale": None},
                      "y": {"field": "ly", "type": "quantitative", "scale": None},
                      "text": {"field": "text"}}},
    ]
    return {"width": WIDTH, "height": HEIGHT, "layer": layers,
            "resolve": {"scale": {"color": "shared"}}}


# ------------------------------------------------------------------------------- configurations

@dataclass(frozen=True)
class ConfigurationGrid:
    """Two settings that vary across a candidate's configurations, and the figure per cell."""

    x_setting: str
    y_setting: str
    x_values: list[Any]
    y_values: list[Any]
    metric: str  # goodput_per_gpu_tokens_per_s or goodput_tokens_per_s
    cells: list[dict[str, Any]]


def varying_settings(configurations: Sequence[EvidenceConfiguration]) -> list[str]:
    """The settings whose value differs between configurations, in name order."""
    names = sorted({k for c in configurations for k in c.configuration})
    return [n for n in names
            if len({json.dumps(c.configuration.get(n), sort_keys=True)
                    for c in configurations}) > 1]


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _order(values: set[Any]) -> list[Any]:
    """Setting values in reading order: by number when every one is a number (the contract
    carries them as strings: "64" before "128"), else as text."""
    numbers = {v: _number(v) for v in values}
    if all(n is not None for n in numbers.values()):
        return sorted(values, key=lambda v: (numbers[v], str(v)))
    return sorted(values, key=str)


def configuration_grid(configurations: Sequence[EvidenceConfiguration]
                       ) -> ConfigurationGrid | None:
    """The heatmap's grid when exactly two settings vary, else None. The figure is goodput
    per GPU when every configuration has it (configurations on different GPU counts compare
    fairly), else goodput."""
    varying = varying_settings(configurations)
    if len(varying) != 2:
        return None
    per_gpu = all(c.goodput_per_gpu_tokens_per_s is not None for c in configurations)
    metric = "goodput_per_gpu_tokens_per_s" if per_gpu else "goodput_tokens_per_s"
    xs, ys = varying
    cells = []
    for c in configurations:
        setting = c.configuration
        figure = c.goodput_per_gpu_tokens_per_s if per_gpu else c.goodput_tokens_per_s
        cells.append({"x": str(setting.get(xs)), "y": str(setting.get(ys)), "value": figure,
                      "passes": c.passes, "chosen": c.chosen, "label": c.label})
    return ConfigurationGrid(
        xs, ys, [str(v) for v in _order({c.configuration.get(xs) for c in configurations})],
        [str(v) for v in _order({c.configuration.get(ys) for c in configurations})], metric,
        cells)


def configuration_spec(grid: ConfigurationGrid) -> Spec:
    """Heatmap of the figure over the two settings, printed in each cell; the chosen
    configuration outlined in black, configurations that fail the SLO hatched grey."""
    unit = "tokens/s per GPU" if grid.metric == "goodput_per_gpu_tokens_per_s" else "tokens/s"
    rows = [{**c, "text": figure_text(c["value"], ",.0f")
             + ("" if c["passes"] else " ✗"),
             "desc": f"{grid.x_setting} {c['x']}, {grid.y_setting} {c['y']}: "
                     + ("n/a" if c["value"] is None else f"{c['value']:,.0f} {unit}")
                     + ("" if c["passes"] else ", fails the SLO")
                     + (", chosen" if c["chosen"] else "")} for c in grid.cells]
    enc = {"x": {"field": "x", "type": "ordinal", "sort": grid.x_values,
                 "title": grid.x_setting, "axis": {"labelAngle": 0}},
           "y": {"field": "y", "type": "ordinal", "sort": grid.y_values,
                 "title": grid.y_setting}}
    side = 56
    return {"width": side * len(grid.x_values), "height": side * len(grid.y_values),
            "data": {"values": rows}, "layer": [
                {"mark": {"type": "rect"},
                 "encoding": {**enc, "color": {
                     "condition": {"test": "!datum.passes || datum.value == null",
                                   "value": "#dddddd"},
                     "field": "value", "type": "quantitative", "title": unit,
                     "scale": {"scheme": "greens", "zero": False}},
                     "description": {"field": "desc"}}},
                {"transform": [{"filter": "datum.chosen"}],
                 "mark": {"type": "rect", "filled": False, "stroke": "#000000",
                          "strokeWidth": 3, "aria": False},
                 "encoding": enc},
                {"mark": {"type": "text", "fontSize": 11},
                 "encoding": {**enc, "text": {"field": "text"}}},
            ]}


__all__ = [
    "PARETO_PAIRS",
    "Axis",
    "BreakEven",
    "ConfigurationGrid",
    "ParetoLayout",
    "break_even_entries",
    "break_even_spec",
    "configuration_grid",
    "configuration_spec",
    "pairwise_matrix",
    "pairwise_spec",
    "pareto_layout",
    "pareto_spec",
    "place_labels",
    "render",
    "rendering_cache",
    "spec_key",
    "tornado_panels",
    "tornado_spec",
    "unavailable",
    "varying_settings",
    "warm_up",
]


# ------------------------------------------------------------------------------------ plan


def plan_spec(schedule: PlanSchedule) -> Spec:
    """A purchase plan over the horizon, two panels on one month axis: each month's cost,
    the own fleet's and the fallback's stacked; below, the demand and the own nodes'
    goodput (all of it busy all day) as steps, so the months before a node serves show as
    the gap the fallback covers."""
    cost = [{"month": m.month, "part": part, "eur": value,
             "text": f"month {m.month}: {part} {quantity(value, 'EUR')}"}
            for m in schedule.months
            for part, value in ((schedule.candidate, m.own_cost_eur),
                                (f"fallback {schedule.fallback}", m.fallback_cost_eur))
            if value is not None and value > 0]
    lines = [{"month": m.month, "series": series, "tokens_per_day": value,
              "text": f"month {m.month}: {series} {volume(value)}"}
             for m in schedule.months
             for series, value in (("demand", m.demand_tokens_per_day),
                                   ("own nodes' goodput", m.own_capacity_tokens_per_day))
             if value is not None]
    month = {"field": "month", "type": "quantitative", "title": "Month of the horizon",
             "scale": {"domain": [0.5, len(schedule.months) + 0.5], "nice": False}}
    money = [(m.own_cost_eur or 0.0) + (m.fallback_cost_eur or 0.0) for m in schedule.months]
    return {"vconcat": [
        {"width": WIDTH, "height": 150, "data": {"values": cost},
         "mark": {"type": "bar"},
         "encoding": {"x": {**month, "title": None},
                      "y": {"field": "eur", "type": "quantitative", "stack": "zero",
                            "title": "Cost a month (EUR)", "axis": _money_axis("EUR", money)},
                      "color": {"field": "part", "type": "nominal", "title": None,
                                "scale": {"domain": [schedule.candidate, *(
                                    [f"fallback {schedule.fallback}"] if schedule.fallback
                                    else [])], "range": ["#1a7a3a", "#d6604d"]},
                                "legend": {"orient": "top"}},
                      "description": {"field": "text"}}},
        {"width": WIDTH, "height": 150, "data": {"values": lines},
         "mark": {"type": "line", "interpolate": "step-after"},
         "encoding": {"x": month,
                      "y": {"field": "tokens_per_day", "type": "quantitative",
                            "title": "tokens/day", "axis": {"format": "~s"}},
                      "color": {"field": "series", "type": "nominal", "title": None,
                                "scale": {"domain": ["demand", "own nodes' goodput"],
                                          "range": ["#333333", "#1a7a3a"]},
                                "legend": {"orient": "top"}},
                      "strokeDash": {"field": "series", "type": "nominal", "legend": None,
                                     "scale": {"domain": ["demand", "own nodes' goodput"],
                                               "range": [[4, 2], [1, 0]]}},
                      "description": {"field": "text"}}},
    ], "spacing": 12, "resolve": {"scale": {"color": "independent",
                                            "strokeDash": "independent"},
                                  "legend": {"color": "independent"}}}
