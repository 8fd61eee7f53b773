"""Monte Carlo, tornado, sizing and break-even on small hand-checkable cases."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
import pytest

from pipeline.engine import uncertainty
from pipeline.engine.fleet import sizing
from pipeline.engine.metrics import evaluate

STATIC = pl.DataFrame({"id": ["a", "b"], "cost_model": ["declared", "declared"],
                       "capacity": ["provisioned", "provisioned"], "sovereignty_level": [4, 2]})


def inputs(rows: list[tuple[str, str, str, float, float, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [(*r, "declared", "test") for r in rows],
        schema=["id", "input", "key", "low", "mode", "high", "grade", "source"], orient="row")


def base(price_b: tuple[float, float, float] = (20.0, 20.0, 20.0),
         tps_a: tuple[float, float, float] = (4000.0, 4000.0, 4000.0)) -> pl.DataFrame:
    rows = []
    for cid, tps, price in (("a", tps_a, (14.0, 14.0, 14.0)), ("b", (4000.0,) * 3, price_b)):
        rows += [(cid, "tokens_per_s", f"{cid}.tps", *tps),
                 (cid, "price_eur_per_hour", f"{cid}.price", *price),
                 (cid, "utilisation", f"{cid}.u", 1.0, 1.0, 1.0),
                 (cid, "busy_power_w", f"{cid}.w", 5600.0, 5600.0, 5600.0),
                 (cid, "pue", "defaults.pue", 1.2, 1.3, 1.5),
                 (cid, "wholesale_eur_per_kwh", "zone", 0.09, 0.09, 0.09),
                 (cid, "grid_gco2e_per_kwh", "grid", 50.0, 50.0, 50.0)]
    return inputs(rows)


def run(frame: pl.DataFrame, n: int = 2000, seed: int = 7) -> uncertainty.MonteCarlo:
    return uncertainty.run(STATIC, frame, ["a", "b"], ["cpm", "energy", "sovereignty"], n, seed)


def test_seeded_draws_are_reproducible() -> None:
    first, second = run(base(price_b=(10, 20, 30))), run(base(price_b=(10, 20, 30)))
    assert first.percentiles.equals(second.percentiles)
    assert first.p_frontier.equals(second.p_frontier)


def test_degenerate_range_gives_the_point_result() -> None:
    # Only the shared PUE is uncertain: CPM of a is 14 / 14.4 = 0.97222 in every draw.
    p = run(base()).percentiles.filter(pl.col("id") == "a",
                                       pl.col("metric") == "cpm_eur_per_mtok").row(0, named=True)
    assert p["p5"] == p["p50"] == p["p95"] == pytest.approx(0.972222, rel=1e-6)


def test_frontier_probability_of_a_candidate_dominating_in_every_draw_is_one() -> None:
    # a: cheaper (14 < 20 EUR/h), same energy (shared PUE draw), more sovereign (4 > 2):
    # a dominates b in every draw, so P(a on frontier) = 1 and P(b) = 0.
    p = dict(run(base()).p_frontier.iter_rows())
    assert p == {"a": 1.0, "b": 0.0}


def test_overlapping_prices_give_pairwise_probabilities() -> None:
    # b's price is triangular(10, 14, 18) around a's fixed 14 EUR/h, symmetric:
    # P(CPM a < CPM b) = P(price_b > 14) = 0.5 (within Monte Carlo error at 20,000 draws).
    mc = run(base(price_b=(10.0, 14.0, 18.0)), n=20_000)
    pair = mc.pairwise.row(0, named=True)
    assert (pair["a"], pair["b"]) == ("a", "b")
    assert pair["p_a_lower"] == pytest.approx(0.5, abs=0.02)
    # b is on the frontier when it is cheaper (then a no longer dominates): also ~0.5.
    assert dict(mc.p_frontier.iter_rows())["b"] == pytest.approx(0.5, abs=0.02)


def test_tornado_ranks_inputs_by_swing() -> None:
    frame = base(tps_a=(3000.0, 4000.0, 5000.0))
    t = uncertainty.tornado(STATIC, frame).filter(pl.col("candidate") == "a",
                                                  pl.col("metric") == "cpm_eur_per_mtok")
    # CPM of a = 14 / (tps x 0.0036): at 3,000 tokens/s 1.2963, at 5,000 0.7778, swing 0.5185;
    # the PUE does not move CPM (swing 0), so throughput ranks first.
    top = t.row(0, named=True)
    assert top["input"] == "tokens_per_s"
    assert top["metric_at_low"] == pytest.approx(1.29630, rel=1e-5)
    assert top["metric_at_high"] == pytest.approx(0.77778, rel=1e-5)
    assert top["swing"] == pytest.approx(0.51852, rel=1e-4)
    assert t.row(1, named=True) == {**t.row(1, named=True), "input": "pue", "swing": 0.0}


def test_sizing_worked_example_of_issue_5() -> None:
    # 500 Mtok/day, peak x2, headroom 25 %, goodput 4,000 tokens/s:
    # peak = 500e6 / 86,400 x 2 = 11,574 tokens/s; usable 4,000 x 0.75 = 3,000 -> 4 instances.
    point = uncertainty.point_frame(STATIC, base()).with_columns(
        demand_tokens_per_day=pl.lit(500e6), peak_factor=pl.lit(2.0), headroom=pl.lit(0.25))
    out = sizing.sizing(evaluate(point))
    a = out.filter(pl.col("candidate") == "a").row(0, named=True)
    assert a["instances"] == 4
    # utilisation = 5,787 / (4 x 4,000) = 0.3617; declared cost is billed every hour:
    # monthly = 4 x 14 EUR/h x 730 h = 40,880 EUR
    assert a["utilisation"] == pytest.approx(0.36169, rel=1e-4)
    assert a["monthly_cost_eur"] == pytest.approx(40_880, rel=1e-6)


def test_break_even_volume_where_curves_cross() -> None:
    # One instance at 14 EUR/h, all hours paid, 4,000 tokens/s: CPM(u) = 14 / (u x 14.4).
    # Against a cloud at 1.5 EUR/Mtok: u* = 14 / (14.4 x 1.5) = 0.64815,
    # volume = 0.64815 x 4,000 x 86,400 = 224.0e6 tokens/day (the curve is interpolated).
    point = uncertainty.point_frame(STATIC, base())
    [row] = sizing.break_even(point, ["a"], "cloud", 1.5)
    assert row["tokens_per_day"] == pytest.approx(224.0e6, rel=0.01)
    volumes = np.array([p["tokens_per_day"] for p in row["curve"]])
    assert (np.diff(volumes) > 0).all()
    [never] = sizing.break_even(point, ["a"], "cloud", 0.5)  # 14/14.4 = 0.97 > 0.5 at u = 1
    assert never["tokens_per_day"] is None


def test_break_even_of_a_fleet_sized_for_each_volume() -> None:
    # With a demand the fleet is sized at each volume as the scorecard sizes it: 14 EUR/h,
    # 4,000 tokens/s, peak factor 2, headroom 0.25: one instance serves 4,000 x 86,400 x
    # 0.75 / 2 = 129.6e6 tokens/day; n instances cost 14 x 730 n = 10,220 n EUR a month for
    # V x 365 / 12 / 1e6 Mtok, CPM(V) = 10,220 n / (V x 3.041667e-5).
    # At the demand, 500e6: n = ceil(3.858) = 4, CPM = 40,880 / 15,208.3 = 2.68800, the
    # scorecard's (the curve's 27th point, the demand itself).
    # Full instances give 10,220 / (129.6e6 x 3.041667e-5) = 2.59259 at any n; one instance
    # more raises it to (n + 1) / n x 2.59259. Against a cloud at 3.0 that top is <= 3 from
    # n = 7 (8/7 x 2.59259 = 2.963; 7/6 x 2.59259 = 3.025 > 3), so the CPM stays <= 3 from
    # where the 7-instance tooth (777.6e6 .. 907.2e6) falls to 3: V = 71,540 / (3 x
    # 3.041667e-5) = 784.0e6 (the first crossing, in the 6-instance tooth at 61,320 /
    # 9.125e-5 = 672.0e6, does not hold: the next instance takes it back above 3).
    demand = inputs([("a", "demand_tokens_per_day", "demand", 500e6, 500e6, 500e6),
                     ("a", "peak_factor", "demand.peak", 2.0, 2.0, 2.0),
                     ("a", "headroom", "demand.headroom", 0.25, 0.25, 0.25)])
    point = uncertainty.point_frame(STATIC, pl.concat([base(), demand]))
    [row] = sizing.break_even(point, ["a"], "cloud", 3.0)
    assert row["basis"] == "sized"
    assert row["tokens_per_day"] == pytest.approx(784.0e6, rel=1e-3)
    curve = row["curve"]
    assert len(curve) == 40
    assert curve[26]["tokens_per_day"] == 500e6
    assert curve[26]["cpm_eur_per_mtok"] == pytest.approx(2.68800, rel=1e-5)
    # below the full instances' 2.59259 no volume pays
    [never] = sizing.break_even(point, ["a"], "cloud", 2.5)
    assert never["tokens_per_day"] is None


def test_triangular_inverse_cdf() -> None:
    # triangular(1, 2, 3): F(x) = (x-1)^2 / 2 left of the mode, 1 - (3-x)^2 / 2 right of it.
    # u = 0.25 -> 1 + sqrt(0.25 x 2 x 1) = 1.70711; u = 0.75 -> 3 - sqrt(0.25 x 2) = 2.29289
    u = np.array([[0.0, 0.25, 0.5, 0.75, 1.0]], dtype=np.float32)
    got = uncertainty.triangular_ppf(u, *(np.float32([[v]]) for v in (1.0, 2.0, 3.0)))
    assert got[0] == pytest.approx([1.0, 1.70711, 2.0, 2.29289, 3.0], rel=1e-5)
    # an asymmetric range: the mean of triangular(10, 14, 30) is (10 + 14 + 30) / 3 = 18
    rng = np.random.default_rng(3)
    draws = uncertainty.triangular_ppf(rng.random((1, 200_000), dtype=np.float32),
                                       *(np.float32([[v]]) for v in (10.0, 14.0, 30.0)))
    assert draws.mean() == pytest.approx(18.0, abs=0.05)
    assert draws.min() >= 10.0 and draws.max() <= 30.0


def _frontier_by_brute_force(stack: np.ndarray) -> np.ndarray:
    """P(not dominated) by the definition: every draw, every ordered pair (lower is better)."""
    k, n, _ = stack.shape
    dominated = np.zeros((k, n), dtype=bool)
    for d in range(n):
        for a in range(k):
            for b in range(k):
                pa, pb = stack[a, d], stack[b, d]
                if a != b and np.all(pa <= pb) and np.any(pa < pb):
                    dominated[b, d] = True
    return 1.0 - dominated.mean(axis=1)


def test_frontier_probability_worked_by_hand_with_near_duplicates() -> None:
    # Three candidates, two objectives (lower is better), four draws:
    #   draw 0: a (1, 2) = b (1, 2), c (2, 1): equal candidates do not dominate each other and
    #           c trades off against both -> a, b, c on the frontier
    #   draw 1: a (1, 1), b (1, 1 + 1 float32 step), c (2, 2): a beats b by the smallest
    #           float32 difference there is, and both beat c -> only a
    #   draw 2: a (3, 3), b (1, 1), c (2, 2): b beats both, c beats a -> only b
    #   draw 3: a (NaN, 0), b (1, 1), c (1, 2): a figure that is not there neither dominates
    #           nor is dominated; b beats c -> a, b
    # P(a) = 3/4 (draws 0, 1, 3), P(b) = 3/4 (0, 2, 3), P(c) = 1/4 (draw 0).
    step = np.nextafter(np.float32(1), np.float32(2))
    stack = np.array([
        [[1, 2], [1, 1], [3, 3], [np.nan, 0]],
        [[1, 2], [1, step], [1, 1], [1, 1]],
        [[2, 1], [2, 2], [2, 2], [1, 2]],
    ], dtype=np.float32)
    got = dict(uncertainty.frontier_probability(["a", "b", "c"], stack).iter_rows())
    assert got == {"a": 0.75, "b": 0.75, "c": 0.25}
    assert list(_frontier_by_brute_force(stack)) == [0.75, 0.75, 0.25]


def test_a_candidate_taken_for_the_frontier_before_its_dominator_is_corrected() -> None:
    # An infinite figure leaves no scale to order the candidates by, so each draw is peeled in
    # candidate order and c0 is taken first:
    #   draw 0: c0 (2, 2), c1 (0, 5), c2 (1, 1): c2 beats c0 (taken before it was seen, then
    #           corrected two picks later); c1 trades off -> c1, c2
    #   draw 1: c0 (inf, 0), c1 (1, 1), c2 (1, 2): c0 trades off against both; c1 beats c2
    #           -> c0, c1
    # P(c0) = 1/2, P(c1) = 1, P(c2) = 1/2.
    stack = np.array([[[2, 2], [np.inf, 0]], [[0, 5], [1, 1]], [[1, 1], [1, 2]]],
                     dtype=np.float32)
    got = dict(uncertainty.frontier_probability(["c0", "c1", "c2"], stack).iter_rows())
    assert got == {"c0": 0.5, "c1": 1.0, "c2": 0.5}
    assert list(_frontier_by_brute_force(stack)) == [0.5, 1.0, 0.5]


@pytest.mark.parametrize("case", range(12))
def test_frontier_probability_equals_the_definition_on_overlapping_candidates(case: int
                                                                              ) -> None:
    # Near-duplicates (boxes that overlap almost entirely, so no pruning helps), exact ties
    # (figures rounded to one decimal), a candidate copied from another, NaN figures and an
    # infinite one, over chunks of draws as small as one draw: always the brute force's
    # answer, draw for draw.
    rng = np.random.default_rng(case)
    k, n, o = int(rng.integers(2, 14)), int(rng.integers(1, 60)), int(rng.integers(1, 5))
    centre = rng.random((k, 1, o))
    stack = (centre + rng.random((k, n, o)) * [0.0, 1e-3, 0.3][case % 3]).astype(np.float32)
    if case % 4 == 0:
        stack = np.round(stack, 1)
    if case % 5 == 1:
        stack[rng.random(stack.shape) < 0.05] = np.nan
    if case % 6 == 2:
        stack[0] = stack[1]
    if case == 7:
        stack[1, 0, 0] = np.inf
    ids = [f"c{i}" for i in range(k)]
    chunk = int(rng.integers(1, 3 * k * n))
    got = uncertainty.frontier_probability(ids, stack, chunk_entries=chunk)
    assert got["p_frontier"].to_list() == list(_frontier_by_brute_force(stack))


def test_pairwise_of_many_candidates_is_limited_to_the_frontier_and_the_choice() -> None:
    # 45 candidates (more than PAIRWISE_MAX = 40) whose CPM draws are c00 < c01 < ... in
    # median; the frontier is the ten odd-numbered ones from c25 to c43 plus c44; the chosen is
    # c44, the runner-up c40 (not on the frontier). Given: those two, then the frontier
    # cheapest by median: all 10 others, so 12 candidates and 12 x 11 / 2 = 66 pairs.
    rng = np.random.default_rng(4)
    ids = [f"c{i:02d}" for i in range(45)]
    cpm = np.arange(45)[:, None] + rng.normal(0, 3, size=(45, 500))
    frontier = [f"c{i}" for i in range(25, 44, 2)] + ["c44"]
    pairs, scope = uncertainty.pairwise_lower(ids, cpm, among=frontier, keep=["c44", "c40"])
    expected = sorted({"c40", "c44", *frontier})
    assert scope["candidates"] == expected and len(expected) == 12
    assert scope["pairs"] == pairs.height == 66
    assert "runner-up" in scope["rule"] and "frontier" in scope["rule"]
    row = pairs.filter(pl.col("a") == "c25", pl.col("b") == "c44").row(0, named=True)
    assert row["p_a_lower"] == (cpm[25] < cpm[44]).mean()
    # a frontier larger than the limit: the chosen, the runner-up, then the 38 cheapest (the
    # same given the Monte Carlo's medians)
    everyone = uncertainty.pairwise_lower(ids, cpm, among=ids, keep=["c44", "c40"])[1]
    assert everyone["candidates"] == sorted([*ids[:38], "c40", "c44"])
    given = uncertainty.pairwise_lower(ids, cpm, among=ids, keep=["c44", "c40"],
                                       medians=np.median(cpm, axis=1))[1]
    assert given == everyone
    assert everyone["pairs"] == 40 * 39 // 2
    # few candidates: every pair, as before
    few, scope = uncertainty.pairwise_lower(ids[:3], cpm[:3])
    assert few.select("a", "b").rows() == [("c00", "c01"), ("c00", "c02"), ("c01", "c02")]
    assert scope["rule"] == "every pair of the 3 eligible candidate(s)"


def test_triangular_inverse_cdf_keeps_one_side_bit_for_bit() -> None:
    # The masked select keeps, bit for bit, the side np.where would take: left of the mode's
    # quantile low + sqrt(u x width x (mode - low)), from it on high - sqrt((1 - u) x width x
    # (high - mode)), float32 throughout; u exactly at the quantile (0.25 for (0, 1, 4))
    # takes the right side. In place (out=u) gives the same.
    rng = np.random.default_rng(11)
    u = rng.random((50, 400), dtype=np.float32)
    u[0, :3] = [0.0, 0.25, 1.0]
    low = rng.uniform(0, 10, (50, 1)).astype(np.float32)
    mode = low + rng.uniform(0, 5, (50, 1)).astype(np.float32)
    high = mode + rng.uniform(0.1, 5, (50, 1)).astype(np.float32)
    low[0], mode[0], high[0] = 0.0, 1.0, 4.0
    width = high - low
    left = u < (mode - low) / width
    root = np.sqrt(np.where(left, u * (width * (mode - low)), (1 - u) * (width * (high - mode))))
    expected = np.where(left, low + root, high - root)
    got = uncertainty.triangular_ppf(u, low, mode, high)
    assert got.dtype == np.float32 and np.array_equal(got, expected)
    # u = 0.25 at (0, 1, 4): right side, 4 - sqrt(0.75 x 4 x 3) = 1.0
    assert got[0, :3].tolist() == [0.0, 1.0, 4.0]
    uncertainty.triangular_ppf(u, low, mode, high, out=u)
    assert np.array_equal(u, expected)


@pytest.mark.parametrize("n", [1, 2, 3, 20, 101, 1000])
def test_quantiles_are_numpys_percentiles(n: int) -> None:
    # A sort and numpy's own interpolation give np.percentile's figures bit for bit, for any
    # number of draws, ties included (row 4); a row with a NaN has none, a column the same in
    # every draw is itself.
    rng = np.random.default_rng(n)
    values = rng.lognormal(0, 1, (6, n))
    values[2, n // 2] = np.nan
    values[4] = np.round(values[4])
    got = uncertainty._quantiles(values, 6, n)
    expected = np.percentile(values, uncertainty.PERCENTILES, axis=1).T
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.isnan(got[2]).all() and not np.isnan(got[[0, 1, 3, 4, 5]]).any()
    fixed = uncertainty._quantiles(np.array([[1.5], [np.nan]]), 2, n)
    assert np.array_equal(fixed, [[1.5] * 3, [np.nan] * 3], equal_nan=True)


def test_blocks_of_any_size_give_the_same_monte_carlo() -> None:
    # Candidates are evaluated in blocks of one cost model (here declared and tco mixed, one
    # elastic): one candidate per block or all in one, in one thread or three, the draws and
    # so every figure are the same, and the percentiles come in the candidates' order, metric
    # by metric.
    static = pl.DataFrame({"id": ["a", "b", "c"], "cost_model": ["declared", "tco", "declared"],
                           "capacity": ["provisioned", "provisioned", "elastic"],
                           "sovereignty_level": [4, 2, 3]})
    rows = [r for r in base(price_b=(10, 20, 30)).rows() if r[0] == "a"]
    rows += [("b", "tokens_per_s", "b.tps", 3000.0, 4000.0, 5000.0),
             ("b", "capex_eur", "b.capex", 2e5, 2.5e5, 3e5),
             ("b", "amortisation_months", "b.m", 48.0, 48.0, 48.0),
             ("b", "cost_of_capital_per_year", "b.r", 0.03, 0.05, 0.08),
             ("b", "maintenance_share_per_year", "b.mt", 0.06, 0.06, 0.06),
             ("b", "busy_power_w", "b.w", 5000.0, 5600.0, 6000.0),
             ("b", "utilisation", "b.u", 0.5, 0.7, 0.9),
             ("b", "pue", "defaults.pue", 1.2, 1.3, 1.5),
             ("b", "wholesale_eur_per_kwh", "zone", 0.09, 0.09, 0.09),
             ("b", "grid_gco2e_per_kwh", "grid", 50.0, 50.0, 50.0)]
    rows += [("c", *r[1:]) for r in rows if r[0] == "a" and r[1] != "tokens_per_s"]
    rows += [("c", "tokens_per_s", "c.tps", 3500.0, 4000.0, 4100.0)]
    frame = inputs([r[:6] for r in rows])
    one, every, threaded = (
        uncertainty.run(static, frame, ["a", "b", "c"], ["cpm", "carbon"], 500, 3,
                        block_entries=e, threads=t) for e, t in ((1, 1), (1 << 20, 1), (1, 3)))
    for other in (every, threaded):  # one thread or three: the same figures
        assert one.percentiles.equals(other.percentiles)
        assert one.p_frontier.equals(other.p_frontier) and one.pairwise.equals(other.pairwise)
        assert one.p_cheapest == other.p_cheapest
    assert one.percentiles["id"].to_list()[:3] == ["a", "b", "c"]
    assert one.percentiles["metric"].to_list()[:4] == ["cpm_eur_per_mtok"] * 3 + [
        "energy_j_per_token"]
    # b's CPM moves with its own goodput, capex, rate and utilisation: a range, not a point
    b = one.percentiles.filter(pl.col("id") == "b", pl.col("metric") == "cpm_eur_per_mtok")
    assert b["p5"][0] < b["p50"][0] < b["p95"][0]


def test_draws_sampled_in_pieces_and_threads_are_one_stream() -> None:
    # The uniforms are drawn piece by piece (and turned into triangular draws in threads):
    # the same stream as one call of the seeded generator, so the draws do not depend on it.
    # 200 keys x 20,001 draws: pieces of 24 keys (blocks of 3 keys of 2^16 entries or less)
    rows = [(f"c{i}", "pue", f"k{i:03d}", 1.1, 1.2, 1.5) for i in range(200)]
    frame = inputs(rows)
    plain = uncertainty.Draws.sample(frame, 20_001, seed=5)
    with ThreadPoolExecutor(2) as pool:
        threaded = uncertainty.Draws.sample(frame, 20_001, seed=5, pool=pool)
    u = np.random.default_rng(5).random((200, 20_001), dtype=np.float32)
    expected = uncertainty.triangular_ppf(u, np.float32(1.1), np.float32(1.2), np.float32(1.5))
    assert np.array_equal(plain.values, expected) and np.array_equal(threaded.values, expected)


@pytest.mark.parametrize("n", [2, 5, 10, 1001])
def test_the_monte_carlos_p50_is_numpys_median(n: int) -> None:
    # pairwise takes its medians from the percentiles (_quantiles, linear): np.median bit for
    # bit, of 1 and 2 (1 + 2) / 2 = 1.5, and NaN for a row with a NaN
    rng = np.random.default_rng(n)
    values = rng.lognormal(0, 1, (5, n))
    values[3, 0] = np.nan
    p50 = uncertainty._quantiles(values, 5, n)[:, uncertainty.PERCENTILES.index(50.0)]
    assert np.array_equal(p50, np.median(values, axis=1), equal_nan=True)
    assert uncertainty._quantiles(np.array([[2.0, 1.0]]), 1, 2)[0, 1] == 1.5


def test_frontier_chunks_in_threads_give_the_brute_forces_probabilities() -> None:
    # 30 near-duplicate candidates x 97 draws in chunks of 2 to 3 draws, in 3 threads: each
    # chunk's counts add up to the brute force's, draw for draw.
    rng = np.random.default_rng(21)
    stack = (rng.random((30, 1, 3)) + rng.random((30, 97, 3)) * 0.3).astype(np.float32)
    ids = [f"c{i}" for i in range(30)]
    s = np.ascontiguousarray(stack.transpose(0, 2, 1))
    with ThreadPoolExecutor(3) as pool:
        got = uncertainty.frontier_of(ids, s, chunk_entries=70, pool=pool)
    assert got["p_frontier"].to_list() == list(_frontier_by_brute_force(stack))
    p = got["p_frontier"]
    assert ((p > 0) & (p < 1)).sum() >= 5  # overlapping: on the frontier in some draws only


def test_every_ranged_figure_has_its_percentiles_drawn() -> None:
    """The tables show p5/p50/p95 beside each figure declared `ranged`: the Monte Carlo
    reports them (its metrics come from the declarations too)."""
    from schemas.outputs import RANGED

    assert set(RANGED) <= set(uncertainty.METRICS)
    assert set(uncertainty.METRICS) == {
        "cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok",
        "electricity_eur_per_mtok", "facility_kwh_per_mtok", "embodied_gco2e_per_mtok",
        "carbon_market_gco2e_per_mtok"}


def test_p_cheapest_splits_equal_draws_in_any_order() -> None:
    # Draw by draw: 1st, "b" and "a" tie at 2.0 (the lowest; "c" 3.0): a half each; 2nd,
    # "c" alone lowest (1.0); 3rd, "a" NaN (never cheapest), "b" 4.0 < "c" 5.0: "b".
    # So a 0.5 / 3 = 1/6, b 1.5 / 3 = 1/2, c 1/3, whichever row each candidate comes in.
    cpm = {"b": [2.0, 3.0, 4.0], "a": [2.0, 3.0, np.nan], "c": [3.0, 1.0, 5.0]}
    for ids in (["b", "a", "c"], ["a", "b", "c"], ["c", "b", "a"]):
        got = uncertainty.p_cheapest(ids, np.array([cpm[i] for i in ids]))
        assert got == pytest.approx({"a": 1 / 6, "b": 1 / 2, "c": 1 / 3}, rel=1e-12), ids


def test_a_draw_without_any_cpm_counts_for_no_candidate() -> None:
    # 1st draw: both NaN, no one is cheapest; 2nd: "b" 1.0 alone: b 1/2, a 0
    got = uncertainty.p_cheapest(["b", "a"], np.array([[np.nan, 1.0], [np.nan, np.nan]]))
    assert got == {"b": 0.5, "a": 0.0}
