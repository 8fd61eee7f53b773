"""Benchmark: Monte Carlo over many candidates (issue 5's speed and memory target).

    uv run python benchmarks/monte_carlo.py [--candidates 1000] [--draws 10000]

Prints, for the vectorised engine: wall time of the draws with percentiles and frontier and
pairwise probabilities, of the tornado, and the peak resident memory of the process; then the
ratio against a straightforward per-draw loop (evaluate one draw at a time, non-dominated
sorting per draw) measured in the same run on a smaller size. Synthetic candidates: a mix of
TCO, declared and on-demand cost models, each with ranges on goodput, price or capex, PUE and
utilisation, and zone prices and intensities shared across candidates (common draws).
"""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any

import numpy as np
import polars as pl

from pipeline.engine import uncertainty
from pipeline.engine.metrics import evaluate
from pipeline.engine.pareto import pareto_ranks

OBJECTIVES = ["cpm", "energy", "carbon", "sovereignty"]


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


def vectorised(static: pl.DataFrame, inputs: pl.DataFrame, draws: int) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    mc = uncertainty.run(static, inputs, static["id"].to_list(), OBJECTIVES, draws, seed=7)
    t1, c1 = time.perf_counter(), time.process_time()
    tornado = uncertainty.tornado(static, inputs)
    t2 = time.perf_counter()
    assert mc.percentiles.height and mc.p_frontier.height and tornado.height
    return {"monte_carlo_s": t1 - t0, "monte_carlo_cpu_s": c1 - c0, "tornado_s": t2 - t1,
            "on_frontier": int((mc.p_frontier["p_frontier"] > 0).sum()),
            "steps": ", ".join(f"{k.removesuffix('_s')} {v:.2f}" for k, v in mc.seconds.items()),
            "pairs": mc.pairwise.height}


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
    args = parser.parse_args()

    static, inputs = synthetic(args.candidates)
    full = vectorised(static, inputs, args.draws)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"vectorised, {args.candidates} candidates x {args.draws} draws: "
          f"Monte Carlo (percentiles, P(frontier), pairwise) {full['monte_carlo_s']:.2f} s "
          f"wall, {full['monte_carlo_cpu_s']:.2f} s CPU; tornado {full['tornado_s']:.2f} s; "
          f"peak RSS {peak_mb:.0f} MB; {full['on_frontier']} candidates ever on the frontier, "
          f"{full['pairs']} pairs")
    print(f"  steps (s): {full['steps']}")

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


if __name__ == "__main__":
    main()
