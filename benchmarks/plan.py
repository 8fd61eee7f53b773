"""Benchmark: what a plan over the horizon costs (issue 31). The bundled example (10,000
draws) computed with its `[horizon]` (48 months of a growing demand: each Monte Carlo block's
horizon, the break-even month's band) and, as the baseline measured in the same run, without
it (one month), interleaved rounds; plan.horizon alone on a (candidates, draws) block.

    uv run python benchmarks/plan.py [--rounds 3] [--db PATH]

Prints wall and CPU seconds of each (median of the rounds), the ratio, and the load average
before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from pipeline.engine.fleet import plan
from pipeline.engine.scorecard import compute
from pipeline.run import opened, resolve

EXAMPLE = Path(__file__).resolve().parents[1] / "pipeline" / "example_proposal.toml"


def without_plan(folder: Path) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    start = text.index("[horizon]")
    path = folder / "no-plan.toml"
    path.write_text(text[:start] + text[text.index("\n\n", start) + 2:], encoding="utf-8")
    return path


def timed(proposal: Path, db: Path) -> tuple[float, float]:
    with opened(proposal, None, db) as o:
        resolved = resolve(o.proposal, o.name, o.market, o.cache)
        wall, cpu = time.perf_counter(), time.process_time()
        compute(o.proposal, resolved, o.market)
        return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = args.db or folder / "store.duckdb"
        bare = without_plan(folder)
        timed(bare, db)  # warm: the store, the bundled data, imports
        runs: dict[str, list[tuple[float, float]]] = {"one month": [], "plan, 48 months": []}
        for _ in range(args.rounds):
            runs["one month"].append(timed(bare, db))
            runs["plan, 48 months"].append(timed(EXAMPLE, db))
    medians = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
               for k, v in runs.items()}
    for name, (wall, cpu) in medians.items():
        print(f"example compute, {name}: {wall:.3f} s wall, {cpu:.3f} s CPU")
    base, planned = medians["one month"], medians["plan, 48 months"]
    print(f"ratio plan / one month: {planned[0] / base[0]:.2f} wall, "
          f"{planned[1] / base[1]:.2f} CPU")
    # plan.horizon alone: 4 candidates x 10,000 draws, 48 months, growth and lead time drawn
    rng = np.random.default_rng(1)
    n = 10_000
    own = {"cost_model": "tco", "capacity": "provisioned",
           "tokens_per_s": rng.uniform(3400, 4400, (4, n)), "busy_power_w": 5600.0,
           "idle_power_w": 800.0, "pue": 1.3, "contract_eur_per_kwh": 0.1,
           "capex_eur": rng.uniform(312_000, 382_000, (4, n)), "amortisation_months": 48.0,
           "cost_of_capital_per_year": 0.05, "residual_eur": 25_000.0,
           "maintenance_share_per_year": 0.06, "staff_eur_per_year": 15_000.0,
           "demand_tokens_per_day": 5e8, "peak_factor": 2.0, "headroom": 0.25,
           "demand_growth_per_year": rng.uniform(0.1, 0.6, (1, n)),
           "lead_time_months": rng.uniform(3, 6, (4, n))}
    cloud = {"cost_model": "price", "capacity": "elastic", "tokens_per_s": 1500.0,
             "busy_power_w": 1400.0, "pue": 1.3, "price_eur_per_hour": 11.2,
             "demand_tokens_per_day": 5e8, "demand_growth_per_year": own[
                 "demand_growth_per_year"]}
    path = plan.Path(48, 0.05, "benchmark")
    wall = time.perf_counter()
    plan.horizon(own, cloud, path)
    print(f"plan.horizon, 4 candidates x {n:,} draws x 48 months with a fallback: "
          f"{time.perf_counter() - wall:.3f} s wall")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
