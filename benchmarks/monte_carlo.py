"""Benchmark: Monte Carlo over many candidates (issues 5 and 18: at most 4 s wall for 1,000
candidates x 10,000 draws, half of them near-duplicates, at most 4 GB).

    uv run python benchmarks/monte_carlo.py [--candidates 1000] [--draws 10000] [--no-previous]

Prints, with the load average before and after:
- the Monte Carlo (draws, percentiles, P(frontier), pairwise, cheapest) of the synthetic
  candidates: wall and CPU time, each step, the tornado, peak resident memory; the same in one
  thread; and its ratio to baselines measured in the same run: a bare numpy sort of a
  candidates x draws float32 matrix (the size of one metric's draws), and the previous
  implementation (polars frames of candidates x draws rows, `git show` of commit PREVIOUS,
  unless --no-previous), whose percentiles and probabilities must match;
- the percentiles by `np.partition` (issue 33 proposed it) against the full sort in use, on
  a candidates x draws matrix (interleaved rounds) and in the whole Monte Carlo, with the
  ratio and whether every value is the same;
- the bundled example (7 candidates): its Monte Carlo and tornado, the main job's share;
- P(frontier) of overlapping candidates, peeling against the earlier pair-by-pair blocks;
- a per-draw loop on a small size, against the vectorised engine.
Synthetic candidates: a mix of TCO, declared and on-demand cost models, each with ranges on
goodput, price or capex, PUE and utilisation, and zone prices and intensities shared across
candidates (common draws).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pipeline.engine import metrics, uncertainty
from pipeline.engine.metrics import evaluate
from pipeline.engine.ranking.pareto import pareto_ranks

OBJECTIVES = ["cpm", "energy", "carbon", "sovereignty"]
#: the last commit with the previous Monte Carlo (polars frames of candidates x draws rows)
PREVIOUS = "4fdd19647650e62efa5032a58005458cdc20dd93"
ROOT = Path(__file__).resolve().parents[1]


def synthetic(n: int, seed: int = 1, near_duplicates: float = 0.5
              ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`n` candidates; a share `near_duplicates` of them copies an earlier candidate (cost
    model, zone, sovereignty and every mode within 0.1 %, each with its own draws), so their
    uncertainty boxes overlap and the frontier step cannot prune them."""
    rng = np.random.default_rng(seed)
    ids = [f"c{i:04d}" for i in range(n)]
    originals = max(1, n - int(n * near_duplicates))
    parent = [i if i < originals else int(rng.integers(0, originals)) for i in range(n)]
    models = rng.choice(["tco", "declared", "on_demand"], size=n, p=[0.4, 0.3, 0.3])[parent]
    levels = rng.integers(1, 5, size=n)[parent]
    static = pl.DataFrame({"id": ids, "cost_model": models, "capacity": "provisioned",
                           "sovereignty_level": levels})
    rows = []

    def add(cid: str, name: str, key: str, mode: float, spread: float = 0.0) -> None:
        rows.append((cid, name, key, mode * (1 - spread), mode, mode * (1 + spread)))

    base: list[dict[str, float]] = []
    for i, (cid, model) in enumerate(zip(ids, models, strict=True)):
        if parent[i] == i:
            base.append({"zone": float(rng.integers(0, 10)), "tps": rng.uniform(1000, 5000),
                         "w": rng.uniform(1500, 6000), "pue": rng.uniform(1.1, 1.5),
                         "u": rng.uniform(0.4, 0.9), "capex": rng.uniform(2e5, 4e5),
                         "price": rng.uniform(5, 30)})
            mode = base[i]
        else:
            base.append(base[parent[i]])
            mode = {k: v if k == "zone" else v * (1 + rng.uniform(-1e-3, 1e-3))
                    for k, v in base[i].items()}
        zone = f"Z{int(mode['zone'])}"
        # zone figures are the same draw for every candidate of the zone (common draws)
        price, grid = 0.04 + 0.008 * int(mode["zone"]), 20.0 + 58.0 * int(mode["zone"])
        add(cid, "tokens_per_s", f"{cid}.tps", float(mode["tps"]), 0.15)
        add(cid, "busy_power_w", f"{cid}.w", float(mode["w"]), 0.1)
        add(cid, "idle_power_w", f"{cid}.idle", 600.0)
        add(cid, "pue", f"{cid}.pue", float(mode["pue"]), 0.08)
        add(cid, "utilisation", f"{cid}.u", float(mode["u"]), 0.2)
        add(cid, "wholesale_eur_per_kwh", f"zone.{zone}.price", price, 0.2)
        add(cid, "grid_gco2e_per_kwh", f"zone.{zone}.grid", grid, 0.1)
        if model == "tco":
            add(cid, "capex_eur", f"{cid}.capex", float(mode["capex"]), 0.1)
            add(cid, "amortisation_months", f"{cid}.months", 48.0)
            add(cid, "cost_of_capital_per_year", f"{cid}.rate", 0.05, 0.4)
            add(cid, "maintenance_share_per_year", f"{cid}.maint", 0.06)
            add(cid, "staff_eur_per_year", f"{cid}.staff", 15000.0, 0.3)
            add(cid, "hosting_eur_per_kw_month", f"{cid}.colo", 200.0, 0.25)
        else:
            add(cid, "price_eur_per_hour", f"{cid}.price", float(mode["price"]), 0.1)
    inputs = pl.DataFrame(rows, schema=["id", "input", "key", "low", "mode", "high"],
                          orient="row").with_columns(pl.lit("declared").alias("grade"),
                                                     pl.lit("synthetic").alias("source"))
    return static, inputs


def vectorised(static: pl.DataFrame, inputs: pl.DataFrame, draws: int,
               engine: Any = uncertainty, **options: Any) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    mc = engine.run(static, inputs, static["id"].to_list(), OBJECTIVES, draws, seed=7,
                    **options)
    t1, c1 = time.perf_counter(), time.process_time()
    tornado = engine.tornado(static, inputs)
    t2 = time.perf_counter()
    assert mc.percentiles.height and mc.p_frontier.height and tornado.height
    return {"monte_carlo_s": t1 - t0, "monte_carlo_cpu_s": c1 - c0, "tornado_s": t2 - t1,
            "on_frontier": int((mc.p_frontier["p_frontier"] > 0).sum()),
            "steps": ", ".join(f"{k.removesuffix('_s')} {v:.2f}" for k, v in mc.seconds.items()),
            "pairs": mc.pairwise.height, "mc": mc}


def previous_engine() -> types.ModuleType | None:
    """pipeline/engine/uncertainty.py as of PREVIOUS, loaded as a module of its own, with the
    polars evaluate it had (metrics.evaluate_polars), or None without git or the commit."""
    try:
        source = subprocess.run(["git", "show", f"{PREVIOUS}:pipeline/engine/uncertainty.py"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("previous_uncertainty")
    sys.modules[module.__name__] = module  # its dataclasses look their module up
    exec(compile(source, f"{PREVIOUS[:12]}:pipeline/engine/uncertainty.py", "exec"),
         module.__dict__)
    module.evaluate = metrics.evaluate_polars  # the polars evaluate of that commit
    return module


def same_figures(a: Any, b: Any) -> str:
    """How two Monte Carlo results compare: percentiles to 1e-12 relative (the last bit of the
    annuity's pow may differ), probabilities exactly."""
    joined = a.percentiles.join(b.percentiles, on=["id", "metric"], suffix="_b")
    worst = 0.0
    for p in ("p5", "p50", "p95"):
        x, y = joined[p].to_numpy(), joined[p + "_b"].to_numpy()
        both = ~(np.isnan(x) | np.isnan(y))
        assert (np.isnan(x) == np.isnan(y)).all(), p
        worst = max(worst, float(np.max(np.abs(x[both] - y[both]) / np.abs(x[both]),
                                        initial=0.0)))
    assert worst <= 1e-12, worst
    assert a.p_frontier.equals(b.p_frontier), "P(frontier) differs"
    assert a.pairwise.equals(b.pairwise), "pairwise differs"
    assert a.p_cheapest == b.p_cheapest, "P(cheapest) differs"
    return (f"same figures: percentiles within {worst:.1e} relative, P(frontier), pairwise and "
            "P(cheapest) equal")


def sort_baseline(k: int, n: int, repeat: int = 3) -> float:
    """Median wall time of np.sort of a (k, n) float32 matrix along the draws."""
    matrix = np.random.default_rng(0).random((k, n), dtype=np.float32)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        np.sort(matrix, axis=1)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


#: the engine's own, kept: the Monte Carlo below is run once with `quantiles_by_partition`
#: in its place, which must not then call itself
SORTED_QUANTILES = uncertainty._quantiles


def quantiles_by_partition(values: Any, rows: int, n: int) -> np.ndarray:
    """`uncertainty._quantiles` with `np.partition` at the percentiles' ranks in place of its
    full sort of each row (issue 33 proposed it): the same order statistics, so the same
    values, bit for bit."""
    return SORTED_QUANTILES(
        values, rows, n, order=lambda v, ranks: np.partition(v, ranks, axis=1))


def percentiles_by_partition(k: int, n: int, rounds: int = 5) -> str:
    """`uncertainty._quantiles` (a full sort of each row) against `np.partition` at the
    percentiles' ranks, on a (k, n) matrix of draws with some NaN rows, interleaved round by
    round: the median wall and CPU seconds of each, their ratio, and whether every value is
    the same; and numpy's partition at one rank alone, the case it is fast in."""
    rng = np.random.default_rng(5)
    values = rng.lognormal(3, 1, (k, n))
    values[::97, 7] = np.nan  # a row with a NaN draw gives NaN percentiles on both paths
    times: dict[str, list[tuple[float, float]]] = {"sort": [], "partition": [], "one": []}
    results = {}
    for _ in range(rounds):
        for name, call in (("sort", uncertainty._quantiles),
                           ("partition", quantiles_by_partition),
                           ("one", lambda v, k, n: np.partition(v, n // 2, axis=1))):
            w0, c0 = time.perf_counter(), time.process_time()
            results[name] = call(values, k, n)
            times[name].append((time.perf_counter() - w0, time.process_time() - c0))
    same = np.array_equal(results["sort"], results["partition"], equal_nan=True)
    wall = {m: statistics.median(t[0] for t in v) for m, v in times.items()}
    cpu = {m: statistics.median(t[1] for t in v) for m, v in times.items()}
    return (f"percentiles of {k} x {n} draws (median of {rounds} interleaved rounds): "
            f"full sort (in use) {wall['sort']:.3f} s wall, {cpu['sort']:.3f} s CPU; "
            f"np.partition at the {len(uncertainty.PERCENTILES) * 2} ranks "
            f"{wall['partition']:.3f} s wall, {cpu['partition']:.3f} s CPU; ratio partition / "
            f"sort: wall {wall['partition'] / wall['sort']:.2f}, CPU "
            f"{cpu['partition'] / cpu['sort']:.2f}; "
            + ("every value identical" if same else "VALUES DIFFER")
            + f"; (np.partition at one rank alone: {cpu['one']:.3f} s CPU)")


def bundled_example(repeat: int = 5) -> str:
    """The bundled example's Monte Carlo and tornado as `scorecard run` calls them (medians),
    beside the whole engine (scorecard.compute)."""
    from pipeline.engine import scorecard
    from pipeline.inputs import resolve
    from pipeline.workspace import opened

    with tempfile.TemporaryDirectory() as folder, \
            opened(None, None, Path(folder) / "store.duckdb") as o:
        resolved = resolve(o.proposal, o.name, o.market, o.cache)
        card = scorecard.compute(o.proposal, resolved, o.market)
        table, proposal = card.table, o.proposal
        args: tuple[Any, ...] = (table.select("id", "cost_model", "capacity", "sovereignty_level"),
                card.resolved.inputs, table.filter(pl.col("eligible"))["id"].to_list(),
                list(proposal.policy.objectives), proposal.uncertainty.draws,
                proposal.uncertainty.seed)

        def median(call: Any) -> float:
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                call()
                times.append(time.perf_counter() - t0)
            return statistics.median(times)

        mc = median(lambda: uncertainty.run(*args))
        tornado = median(lambda: uncertainty.tornado(card.resolved.static,
                                                     card.resolved.inputs))
        whole = median(lambda: scorecard.compute(o.proposal, card.resolved, o.market))
    return (f"bundled example, {table.height} candidates x {args[4]} draws (medians of "
            f"{repeat}): Monte Carlo {mc * 1000:.1f} ms, tornado {tornado * 1000:.1f} ms; the "
            f"whole engine (scorecard.compute) {whole * 1000:.0f} ms")


def per_draw_loop(static: pl.DataFrame, inputs: pl.DataFrame, draws: int) -> float:
    """The straightforward way: one draw at a time, evaluate, then rank."""
    t0 = time.perf_counter()
    samples = uncertainty.Draws.sample(inputs, draws, seed=7)
    index = {k: i for i, k in enumerate(samples.keys)}
    point = inputs.select("id", "input", "key", "mode")
    for d in range(draws):
        values = point.with_columns(pl.struct("key", "mode").map_elements(
            lambda r, d=d: samples.values[index[r["key"]], d] if r["key"] in index
            else r["mode"], return_dtype=pl.Float64).alias("mode"))
        wide = uncertainty.point_frame(static, values.with_columns(
            pl.col("mode").alias("low"), pl.col("mode").alias("high")))
        out = evaluate(wide).join(static.select("id", "sovereignty_level"), on="id")
        pareto_ranks(out, OBJECTIVES)
    return time.perf_counter() - t0


def frontier_by_pairs(ids: list[str], stack: np.ndarray, pair_chunk: int = 256) -> np.ndarray:
    """The previous P(frontier) (issue 5): drop the candidates dominated in every draw, then
    compare, draw by draw, every pair whose boxes allow domination, in blocks of pairs: fast
    when boxes are apart, quadratic when they overlap (near-duplicates)."""
    s = np.ascontiguousarray(stack.transpose(0, 2, 1), dtype=np.float32)  # (k, o, n)
    lo, hi = s.min(axis=2), s.max(axis=2)
    surely = np.all(hi[:, None] <= lo[None], axis=2) & np.any(hi[:, None] < lo[None], axis=2)
    np.fill_diagonal(surely, False)
    idx = np.flatnonzero(~surely.any(axis=0))
    s, lo, hi = s[idx], lo[idx], hi[idx]
    possible = np.all(lo[:, None] <= hi[None], axis=2)
    np.fill_diagonal(possible, False)
    b_all, a_all = np.nonzero(possible.T)
    dominated = np.zeros((len(idx), s.shape[2]), dtype=bool)
    for start in range(0, len(a_all), pair_chunk):
        a, b = a_all[start:start + pair_chunk], b_all[start:start + pair_chunk]
        dom = np.all(s[a] <= s[b], axis=1) & np.any(s[a] < s[b], axis=1)
        first = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
        dominated[b[first]] |= np.logical_or.reduceat(dom, first, axis=0)
    p = np.zeros(len(ids))
    p[idx] = 1.0 - dominated.mean(axis=1)
    return p


def overlapping_stack(k: int, n: int, seed: int = 3) -> np.ndarray:
    """(k, n, 3) objectives of k candidates in k / 10 groups of near-duplicates: each group's
    CPM, energy and carbon move together with its goodput draw, its members within 0.1 %."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, max(1, k // 10), size=k)
    centre = rng.uniform(1, 3, size=(k // 10 + 1, 1, 3))[group]
    nudge = 1 + rng.uniform(-1e-3, 1e-3, size=(k, 1, 3))
    goodput = rng.triangular(0.85, 1.0, 1.1, size=(k, n, 1))
    return (centre * nudge / goodput).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=10_000)
    parser.add_argument("--no-previous", action="store_true",
                        help="skip the previous implementation (about 10 s more)")
    args = parser.parse_args()
    print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg())
          + f"; {uncertainty.workers()} Monte Carlo threads")

    static, inputs = synthetic(args.candidates)
    full = vectorised(static, inputs, args.draws)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"Monte Carlo, {args.candidates} candidates x {args.draws} draws (percentiles, "
          f"P(frontier), pairwise, cheapest): {full['monte_carlo_s']:.2f} s wall, "
          f"{full['monte_carlo_cpu_s']:.2f} s CPU; tornado {full['tornado_s']:.2f} s; peak RSS "
          f"{peak_mb:.0f} MB; {full['on_frontier']} candidates ever on the frontier, "
          f"{full['pairs']} pairs")
    print(f"  steps (s; evaluate, percentiles, objectives summed over the threads, blocks "
          f"their wall): {full['steps']}")
    single = vectorised(static, inputs, args.draws, threads=1)
    print(f"  in one thread: {single['monte_carlo_s']:.2f} s wall ({single['steps']}); "
          f"threads x{single['monte_carlo_s'] / full['monte_carlo_s']:.2f}; "
          + same_figures(full["mc"], single["mc"]))
    print("  " + percentiles_by_partition(args.candidates, args.draws))
    in_use = uncertainty._quantiles
    uncertainty._quantiles = quantiles_by_partition  # the Monte Carlo as issue 33 proposed
    try:
        partitioned = vectorised(static, inputs, args.draws)
    finally:
        uncertainty._quantiles = in_use
    print(f"  with np.partition for the percentiles: {partitioned['monte_carlo_s']:.2f} s "
          f"wall, {partitioned['monte_carlo_cpu_s']:.2f} s CPU ({partitioned['steps']}); "
          f"partition / sort: wall {partitioned['monte_carlo_s'] / full['monte_carlo_s']:.2f}"
          f", CPU {partitioned['monte_carlo_cpu_s'] / full['monte_carlo_cpu_s']:.2f}; "
          + same_figures(full["mc"], partitioned["mc"]))
    sort_s = sort_baseline(args.candidates, args.draws)
    print(f"  baseline np.sort of a {args.candidates} x {args.draws} float32 matrix "
          f"{sort_s:.3f} s: Monte Carlo = {full['monte_carlo_s'] / sort_s:.0f}x that sort")
    previous = None if args.no_previous else previous_engine()
    if previous is not None:
        before = vectorised(static, inputs, args.draws, engine=previous)
        print(f"  previous implementation ({PREVIOUS[:12]}): {before['monte_carlo_s']:.2f} s "
              f"wall, {before['monte_carlo_cpu_s']:.2f} s CPU ({before['steps']}); now "
              f"{before['monte_carlo_s'] / full['monte_carlo_s']:.1f}x faster; "
              + same_figures(full["mc"], before["mc"]))
    elif not args.no_previous:
        print("  previous implementation: not available (no git, or not commit "
              f"{PREVIOUS[:12]})")

    print(bundled_example())

    k = min(args.candidates, 1000)
    stack = overlapping_stack(k, 2000)
    ids = [f"c{i}" for i in range(k)]
    t0 = time.perf_counter()
    peeled = uncertainty.frontier_probability(ids, stack)["p_frontier"].to_numpy()
    t1 = time.perf_counter()
    paired = frontier_by_pairs(ids, stack)
    t2 = time.perf_counter()
    assert np.array_equal(peeled, paired)
    print(f"P(frontier) of {k} overlapping candidates (groups of near-duplicates) x 2000 "
          f"draws: peeling the frontier {t1 - t0:.2f} s, the previous pair-by-pair blocks "
          f"{t2 - t1:.2f} s, ratio {(t2 - t1) / (t1 - t0):.0f}x (same probabilities)")

    small_static, small_inputs = synthetic(50, seed=2)
    small_draws = 100
    fast = vectorised(small_static, small_inputs, small_draws)["monte_carlo_s"]
    slow = per_draw_loop(small_static, small_inputs, small_draws)
    print(f"baseline, 50 candidates x {small_draws} draws: per-draw loop {slow:.2f} s, "
          f"vectorised {fast:.3f} s, ratio {slow / fast:.0f}x")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg())
          + f"; peak RSS of the whole script {peak_mb:.0f} MB")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
