"""The charts' layout and specs (reports/figures/charts.py), drawn by the real vl-convert:
labels that do not overlap, a log axis for an outlier, money in kEUR, the rendering cache."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from reports import page
from reports.figures import charts
from schemas.result import Result
from tests.conftest import Calls
from tests.reports.conftest import fragment, typed

pytest.importorskip("vl_convert", reason="charts need vl-convert-python (a project dependency)")


def candidate(cid: str, cpm: float, carbon: float, *, energy: float = 1.0, level: int = 3,
              rank: int | None = 2, eligible: bool = True) -> dict[str, Any]:
    return {"id": cid, "label": cid, "eligible": eligible, "sovereignty_level": level,
            "pareto_rank": rank, "cpm_eur_per_mtok": cpm, "carbon_gco2e_per_mtok": carbon,
            "energy_j_per_token": energy}


def result_of(candidates: list[dict[str, Any]], **extra: Any) -> Result:
    return fragment({"candidates": candidates,
                     "recommendation": {"candidate": candidates[0]["id"]}, **extra})


def texts(svg: str) -> list[tuple[float, float, str]]:
    """(x, y, text) of every text element the SVG draws at a translate()."""
    return [(float(x), float(y), t) for x, y, t in re.findall(
        r'<text[^>]*transform="translate\(([-\d.]+),([-\d.]+)\)"[^>]*>([^<]*)</text>', svg)]


CROWDED = result_of([
    # nine candidates within 3 % of each other on both axes, one far away: the cluster spans
    # about 12 px x 10 px of the 560 x 340 plot, so the ids cannot sit beside their points
    *[candidate(f"cluster-candidate-{i}", 3.0 + 0.01 * (i % 3), 20.0 + 0.2 * (i // 3))
      for i in range(9)],
    candidate("far-away", 4.0, 26.0),
])


def test_crowded_labels_are_numbered_and_their_boxes_are_disjoint() -> None:
    layout = charts.pareto_layout(CROWDED, "cpm_eur_per_mtok", "carbon_gco2e_per_mtok")
    assert layout is not None and layout.numbered and not layout.overlaps
    boxes = [lb.box for lb in layout.labels]
    for a, b in itertools.combinations(boxes, 2):
        assert charts._disjoint(a, b), (a, b)
    # inside the plot, clear of every point's marker
    for box in boxes:
        assert box[0] >= 0 and box[2] <= charts.WIDTH and box[1] >= 0 and box[3] <= charts.HEIGHT
        for p in layout.points:
            marker = (p.px - p.radius, p.py - p.radius, p.px + p.radius, p.py + p.radius)
            assert charts._disjoint(box, marker), (box, p.id)
    # every candidate has a number, each number is printed once
    numbers = sorted(int(n) for lb in layout.labels for n in lb.text.split(", "))
    assert numbers == list(range(1, 11))


def test_the_drawn_labels_sit_where_the_layout_placed_them() -> None:
    layout = charts.pareto_layout(CROWDED, "cpm_eur_per_mtok", "carbon_gco2e_per_mtok")
    assert layout is not None
    [svg] = charts.render([("t", charts.pareto_spec(layout))])
    drawn = {t: (x, y) for x, y, t in texts(svg)}
    # the labels are drawn at their layout position plus one constant offset (the text's
    # middle baseline, 3 px at 10 px): the distances between labels are those laid out
    first = layout.labels[0]
    fx, fy = drawn[first.text]
    for lb in layout.labels:
        x, y = drawn[lb.text]
        assert x - fx == pytest.approx(lb.x - first.x, abs=0.01)
        assert y - fy == pytest.approx(lb.y - first.y, abs=0.01)


def test_a_few_separate_points_are_labelled_with_their_ids() -> None:
    result = result_of([candidate("alpha", 2.0, 10.0), candidate("beta", 3.0, 14.0),
                        candidate("gamma", 4.0, 12.0)])
    layout = charts.pareto_layout(result, "cpm_eur_per_mtok", "carbon_gco2e_per_mtok")
    assert layout is not None and not layout.numbered
    assert sorted(lb.text for lb in layout.labels) == ["alpha", "beta", "gamma"]
    [svg] = charts.render([("t", charts.pareto_spec(layout))])
    assert {"alpha", "beta", "gamma"} <= {t for _, _, t in texts(svg)}


def test_an_outlier_makes_the_axis_logarithmic_and_close_figures_do_not() -> None:
    # CPM 2 to 40: 40 / 2 = 20 > 10, log; carbon 10 to 14 stays linear
    result = result_of([candidate("a", 2.0, 10.0), candidate("b", 2.5, 12.0),
                        candidate("outlier", 40.0, 14.0)])
    layout = charts.pareto_layout(result, "cpm_eur_per_mtok", "carbon_gco2e_per_mtok")
    assert layout is not None and layout.x_axis.log and not layout.y_axis.log
    spec = charts.pareto_spec(layout)
    assert '"type": "log"' in str(spec).replace("'", '"')
    [svg] = charts.render([("t", spec)])
    assert "CPM (EUR/Mtok), log scale" in svg
    # on a log axis 2, 2.5 and 40 sit at log-proportional pixels: (log 2.5 - log 2) /
    # (log 40 - log 2) = 0.0969 / 1.301 = 0.0745 of the span between a and the outlier
    a, b, out = layout.points
    assert (b.px - a.px) / (out.px - a.px) == pytest.approx(0.0745, abs=0.001)
    # within a factor 10 (2 to 19.9): linear
    close = result_of([candidate("a", 2.0, 10.0), candidate("b", 19.9, 12.0)])
    layout = charts.pareto_layout(close, "cpm_eur_per_mtok", "carbon_gco2e_per_mtok")
    assert layout is not None and not layout.x_axis.log


def test_money_reads_in_kilo_and_mega_euros() -> None:
    assert page.money(312_000) == "312 kEUR"
    assert page.money(1_250_000) == "1.25 MEUR"
    assert page.money(840) == "840 EUR"
    assert page.span(312_000, 382_000, "EUR") == "312 kEUR to 382 kEUR"
    assert page.span(1.25, 1.5, "ratio") == "1.25 to 1.5"
    assert page.quantity(125265.6282, "EUR/month") == "125.3 kEUR/month"
    assert page.quantity(0.045, "EUR/kWh") == "0.045 EUR/kWh"
    assert page.quantity(3.0892, "EUR/Mtok") == "3.089 EUR/Mtok"
    assert page.quantity(25000.0, "tokens/s") == "25,000 tokens/s"


def test_log_ticks_are_one_two_five() -> None:
    assert charts.log_ticks(1.5, 260) == [2, 5, 10, 20, 50, 100, 200]
    assert charts.log_ticks(2.5, 40) == [5, 10, 20]
    # 3 to 25: 1-2-5 gives 5, 10, 20 (three); 3 to 9: 5 alone, 1-3 gives 3 alone, so all
    assert charts.log_ticks(3, 9) == [3, 4, 5, 6, 7, 8, 9]


CLIPPED = {"width": 100, "height": 50, "data": {"values": [{"a": 1, "b": 2}, {"a": 3, "b": 1}]},
           "mark": {"type": "line", "clip": True},
           "encoding": {"x": {"field": "a", "type": "quantitative"},
                        "y": {"field": "b", "type": "quantitative"}}}


def test_the_cache_skips_drawing_a_spec_it_holds(chart_draws: Calls) -> None:
    spec = CLIPPED
    cache: dict[str, str] = {}
    with charts.rendering_cache(cache):
        [first] = charts.render([("one", spec)])
        assert chart_draws.count == 1 and len(cache) == 1
        [again] = charts.render([("two", spec)])
        assert chart_draws.count == 1  # not drawn again
    # the same SVG, its clip ids under each chart's own prefix
    assert again == first.replace("one-id", "two-id")
    assert 'id="two-id1"' in again
    # what is served is the cache's entry: a changed entry comes back as it is
    [key] = cache
    cache[key] = '<svg><clipPath id="chart-id1"/>from the cache</svg>'
    with charts.rendering_cache(cache):
        assert charts.render([("x", spec)]) == ['<svg><clipPath id="x-id1"/>from the cache</svg>']
    # outside the context nothing is cached
    charts.render([("y", spec)])
    assert chart_draws.count == 2


def test_the_cache_key_covers_the_spec_and_the_vl_convert_version() -> None:
    import hashlib
    import importlib.metadata
    import json

    spec = {"mark": "point", "data": {"values": [{"a": 1}]}}
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert charts.spec_key(spec) == hashlib.sha256(
        f"{importlib.metadata.version('vl-convert-python')}\n{text}".encode()).hexdigest()
    assert charts.spec_key(spec) != charts.spec_key({**spec, "mark": "circle"})


def test_labels_never_leave_the_plot_or_hit_each_other_when_placed_by_hand() -> None:
    # four anchors 4 px apart with long labels: the placer must spread them (farther spots
    # with leader lines) or report that it could not
    anchors = [(100.0 + 4 * i, 100.0, 5.0, f"label-{i}-long-enough") for i in range(4)]
    labels, clean = charts.place_labels(anchors, [], 560, 340)
    assert clean
    for a, b in itertools.combinations([lb.box for lb in labels], 2):
        assert charts._disjoint(a, b)
    assert any(lb.leader is not None for lb in labels)


def test_a_tornado_of_a_monthly_cost_labels_its_axis_in_kEUR_per_month() -> None:
    # monthly cost 125,000 EUR/month; capex 312 to 382 kEUR moves it from 120,000 to 131,000
    result = fragment({"candidates": [{"id": "c", "monthly_cost_eur": 125_000.0,
                                       "inputs": [{"input": "capex_eur", "unit": "EUR"}]}],
                       "tornado": [{"candidate": "c", "metric": "monthly_cost_eur",
                                    "input": "capex_eur", "low": 312_000.0, "high": 382_000.0,
                                    "metric_at_low": 120_000.0, "metric_at_high": 131_000.0}],
                       "recommendation": {"candidate": "c"}})
    panels, left_out = charts.tornado_panels(result, "monthly_cost_eur")
    assert left_out == 0 and [p[0] for p in panels] == ["c"]
    [svg] = charts.render([("t", charts.tornado_spec(result, "monthly_cost_eur", panels))])
    drawn = [t for _, _, t in texts(svg)]
    assert "capex_eur: 312 kEUR to 382 kEUR" in drawn
    axis = [t for t in drawn if t.endswith(" kEUR/month")]
    # ticks between 120 and 131 kEUR/month, e.g. "120 kEUR/month", "122 kEUR/month"
    assert axis and all(120 <= float(t.split()[0]) <= 131 for t in axis)
    assert "e+05" not in svg


def test_the_bundled_example_labels_are_clear_of_each_other(full: dict[str, Any]) -> None:
    for x, y in charts.PARETO_PAIRS:
        layout = charts.pareto_layout(typed(full), x, y)
        assert layout is not None and not layout.overlaps
        for a, b in itertools.combinations([lb.box for lb in layout.labels], 2):
            assert charts._disjoint(a, b), (y, a, b)


def test_break_even_end_labels_of_coinciding_curves_are_a_line_apart() -> None:
    # three identical curves: their end labels would sit on one spot, they are pushed apart
    curve = [{"tokens_per_day": 1e8 * u, "cpm_eur_per_mtok": 4.0 / u} for u in (0.1, 0.5, 1)]
    entries = charts.break_even_entries(fragment({"break_even": [
        {"candidate": f"same-{i}", "versus": "cloud", "versus_cpm_eur_per_mtok": 5.0,
         "tokens_per_day": 8e7, "curve": curve} for i in range(3)]}))
    spec = charts.break_even_spec(entries)
    assert spec is not None
    [svg] = charts.render([("b", spec)])
    # the end labels, right of the plot (the legend's repeat the names under it)
    ys = sorted(y for x, y, t in texts(svg) if t.startswith("same-") and x > charts.WIDTH)
    assert len(ys) == 3
    assert all(b - a >= 12 - 1e-6 for a, b in itertools.pairwise(ys))
    # three dash patterns: solid, 8 4 and 2 3
    assert 'stroke-dasharray="8,4"' in svg and 'stroke-dasharray="2,3"' in svg


def test_a_thousand_candidates_number_the_recommendation_and_the_frontier_only() -> None:
    # 1,000 points on a 40 x 25 lattice (CPM 2.00..2.39, carbon 10..34.5): far beyond the
    # NUMBERED_MAX (40) labels a chart carries; the first 10 of them are the frontier
    many = [candidate(f"c{i:04d}", 2.0 + 0.01 * (i % 40), 10.0 + 1.0 * (i // 40),
                      rank=1 if i < 10 else 2) for i in range(1000)]
    layout = charts.pareto_layout(result_of(many), "cpm_eur_per_mtok", "carbon_gco2e_per_mtok")
    assert layout is not None and layout.numbered and len(layout.points) == 1000
    numbers = {int(n) for lb in layout.labels for n in lb.text.split(", ")}
    assert len(layout.labels) == charts.NUMBERED_MAX
    by_id = {p.id: p.number for p in layout.points}
    # the recommendation (c0000) and the frontier (c0000..c0009) are numbered
    assert {by_id[f"c{i:04d}"] for i in range(10)} <= numbers
    for a, b in itertools.combinations([lb.box for lb in layout.labels], 2):
        assert charts._overlap(a, b) == 0 or layout.overlaps
