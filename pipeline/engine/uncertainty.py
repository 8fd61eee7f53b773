"""Monte Carlo over the proposal's ranges: percentiles, frontier and pairwise probabilities,
and a one-at-a-time tornado.

Every range `{ low, mode, high }` is a triangular distribution, drawn once per *key* (the place
it was stated), so an input shared by several candidates (a TCO profile, [defaults].pue, a
zone's price) moves them together. Draws are seeded: the same proposal and seed give the same
percentiles. The metric formulas are not repeated here: the candidates go in blocks (one cost
model, a few candidates) through `metrics.evaluate_arrays`, the same steps as
`metrics.evaluate` over numpy arrays, each input a (candidates, draws) array where it is drawn
and a (candidates, 1) column where it is fixed; memory stays bounded and no frame of
candidates x draws rows is built.
"""

from __future__ import annotations

import ctypes
import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from pipeline.engine.fleet import mix, plan
from pipeline.engine.metrics import INPUTS, STEP_BY_NAME, evaluate, evaluate_arrays
from pipeline.engine.ranking.pareto import OBJECTIVES
from schemas.outputs import OUTPUTS

#: metrics whose percentiles are reported (each candidate's `uncertainty` in the JSON): the
#: steps of the metric chain that candidates are compared on (declared with a better way in
#: schemas/outputs.toml); the tables show those declared `ranged` beside them
METRICS = tuple(k for k, o in OUTPUTS.items() if o.better is not None and k in STEP_BY_NAME)
PERCENTILES = (5.0, 50.0, 95.0)
PAIRWISE_MAX = 40  # pairwise probabilities for at most this many eligible candidates
#: values per array of a block (candidates x draws): small enough to stay in cache
BLOCK_ENTRIES = 1 << 18


def point_frame(static: pl.DataFrame, inputs: pl.DataFrame, value: str = "mode"
                ) -> pl.DataFrame:
    """One row per candidate: id, cost_model, capacity and each input at `value` (low, mode or
    high)."""
    wide = inputs.pivot(on="input", index="id", values=value, aggregate_function="first")
    return static.select("id", "cost_model", "capacity").join(wide, on="id", how="left",
                                                  maintain_order="left")


@dataclass(frozen=True)
class Draws:
    keys: list[str]  # uncertain keys, sorted
    values: np.ndarray  # (len(keys), n) triangular draws

    @classmethod
    def sample(cls, inputs: pl.DataFrame, n: int, seed: int, pool: Executor | None = None
               ) -> Draws:
        """One uniform per key and draw from one seeded stream (in pieces, the same
        stream), each piece turned into triangular draws in `pool` while the next is drawn."""
        uncertain = (inputs.filter(pl.col("low") < pl.col("high"))
                     .unique("key").sort("key"))
        rng = np.random.default_rng(seed)
        u = np.empty((uncertain.height, n), dtype=np.float32)
        low, mode, high = (uncertain[c].cast(pl.Float32).to_numpy()[:, None]
                           for c in ("low", "mode", "high"))
        rows = max(1, (1 << 16) // max(n, 1))  # keys per block: temporaries stay in cache

        def ppf(a: int, b: int) -> None:
            for c in range(a, b, rows):
                d = min(b, c + rows)
                triangular_ppf(u[c:d], low[c:d], mode[c:d], high[c:d], out=u[c:d])

        pieces = []
        for a in range(0, len(u), 8 * rows):
            b = min(len(u), a + 8 * rows)
            rng.random(out=u[a:b], dtype=np.float32)
            pieces.append(pool.submit(ppf, a, b) if pool else None)
            if pool is None:
                ppf(a, b)
        for piece in pieces:
            if piece is not None:
                piece.result()
        return cls(uncertain["key"].to_list(), u)


def triangular_ppf(u: np.ndarray, low: np.ndarray, mode: np.ndarray, high: np.ndarray,
                   out: np.ndarray | None = None) -> np.ndarray:
    """Inverse CDF of triangular(low, mode, high) at uniforms `u` (float32 halves the memory
    of 1e8 draws): low + sqrt(u x (high - low)(mode - low)) below the mode's quantile
    (mode - low) / (high - low), high - sqrt((1 - u)(high - low)(high - mode)) from it on.
    Both sides are computed everywhere and one is kept bit for bit through a mask: np.where
    on a random mask costs more than both sides together."""
    width = high - low
    left = u < (mode - low) / width
    below = u * (width * (mode - low))
    np.sqrt(below, out=below)
    below += low
    above = 1 - u
    above *= width * (high - mode)
    np.sqrt(above, out=above)
    np.subtract(high, above, out=above)
    bits = np.dtype(f"u{above.dtype.itemsize}")
    mask = left.astype(bits)
    np.negative(mask, out=mask)  # every bit set where left
    b, a = below.view(bits), above.view(bits)
    np.bitwise_xor(b, a, out=b)
    b &= mask
    result = above if out is None else out
    np.bitwise_xor(a, b, out=result.view(bits))
    return result


@dataclass(frozen=True)
class _Layout:
    """Where each candidate's inputs come from: per input, each candidate's mode (NaN where it
    has none) and the row of its draws (-1 where the input is fixed)."""

    modes: dict[str, np.ndarray]
    rows: dict[str, np.ndarray]

    @classmethod
    def of(cls, ids: list[str], inputs: pl.DataFrame, draws: Draws) -> _Layout:
        position_of = {cid: i for i, cid in enumerate(ids)}
        key_of = {key: i for i, key in enumerate(draws.keys)}
        mine = inputs.filter(pl.col("id").is_in(ids))
        position = np.array([position_of[c] for c in mine["id"].to_list()], dtype=np.int64)
        row = np.array([key_of.get(k, -1) for k in mine["key"].to_list()], dtype=np.int64)
        mode = mine["mode"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        at_of: dict[str, list[int]] = {}
        for i, name in enumerate(mine["input"].to_list()):
            at_of.setdefault(name, []).append(i)
        modes, rows = {}, {}
        for name in (*INPUTS, *plan.PLAN_INPUTS):
            if name in at_of:
                at = np.array(at_of[name], dtype=np.int64)
                modes[name] = np.full(len(ids), np.nan)
                modes[name][position[at]] = mode[at]
                rows[name] = np.full(len(ids), -1, dtype=np.int64)
                rows[name][position[at]] = row[at]
        return cls(modes, rows)

    def block(self, members: np.ndarray, draws: Draws) -> dict[str, np.ndarray]:
        """The inputs of the candidates at `members`: (candidates, draws) where any of them
        is drawn (the float32 draws themselves where all of them are: evaluate_arrays widens
        them), else (candidates, 1)."""
        n = draws.values.shape[1]
        out = {}
        for name, modes in self.modes.items():
            rows, mode = self.rows[name][members], modes[members]
            drawn = rows >= 0
            if drawn.all():
                out[name] = draws.values[rows]
            elif drawn.any():
                block = np.empty((len(members), n))
                block[~drawn] = mode[~drawn, None]
                block[drawn] = draws.values[rows[drawn]]
                out[name] = block
            else:
                out[name] = mode[:, None]
        return out


@dataclass(frozen=True)
class MonteCarlo:
    percentiles: pl.DataFrame  # id, metric, p5, p50, p95
    p_frontier: pl.DataFrame  # id, p_frontier (eligible candidates)
    pairwise: pl.DataFrame  # a, b, metric, p_a_lower
    p_cheapest: dict[str, float]  # eligible id -> share of draws in which its CPM is lowest
    draws: int
    seed: int
    pairwise_scope: dict[str, Any] = field(default_factory=dict)  # which pairs are given
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of each step
    #: under a plan, own id -> (p5, p95) of the month it pays from (`paying_month_band`),
    #: when `run` was asked for it
    paying_band: dict[str, tuple[float | None, float | None]] | None = None


@functools.cache
def _keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep freed memory for reuse (arrays below 32 MB from the heap, up
    to 256 MB of it kept when freed) instead of handing every block's arrays back to the
    system and faulting fresh zeroed pages in for the next block, a sizeable share of the
    Monte Carlo's time (docs/performance.md). Once per process; elsewhere than glibc,
    nothing."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):  # no such libc (TypeError: Windows' CDLL)
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 32 << 20)) and bool(
        mallopt(m_trim_threshold, 256 << 20))


def workers() -> int:
    """Threads of the Monte Carlo: the cores this process may use that the others leave idle
    (this process counted in the load average), at least 1, at most 4. numpy lets go of the
    GIL in its array operations, most of the time; but on cores busy with other work a thread
    holding the GIL is preempted and stalls the others, and one thread is faster."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    try:
        idle = cores - os.getloadavg()[0] + 1.0
    except OSError:
        idle = float(cores)
    return max(1, min(4, cores, int(idle + 0.5)))


def run(static: pl.DataFrame, inputs: pl.DataFrame, eligible: Sequence[str],
        objectives: Sequence[str], n: int, seed: int, block_entries: int = BLOCK_ENTRIES,
        pairwise_among: Sequence[str] | None = None, pairwise_keep: Sequence[str] = (),
        threads: int | None = None, path: plan.Path | None = None,
        fallbacks: Mapping[str, str | None] | None = None,
        mixes: Sequence[mix.Chosen] = (),
        paying: tuple[Sequence[str], str] | None = None) -> MonteCarlo:
    """`static` needs id, cost_model, capacity and sovereignty_level; `eligible` ids take part
    in the frontier, cheapest and pairwise probabilities (`pairwise_lower` says which pairs
    when they are many: `pairwise_among`, the frontier, and `pairwise_keep`, the chosen
    candidate and the runner-up). Blocks of candidates and chunks of draws go to `threads`
    threads (default: workers()); the figures do not depend on it. `mixes`: the rows of
    `static` that are mixes (cost model "mix"), each drawn from its parts' inputs (in
    `inputs`, drawn with the others) at its chosen base size (`mix_block`). `paying` (own
    ids and the candidate they are compared with, all rows of `static`): under a plan, the
    band of `paying_month_band` (`MonteCarlo.paying_band`) from the months each own
    candidate's horizon computes; the caller asks for it when these draws are the band's
    (`inputs` of the same uncertain keys as the band's)."""
    _keep_freed_memory()
    threads = threads or workers()
    with ThreadPoolExecutor(threads) if threads > 1 else nullcontext() as pool:
        return _run(static, inputs, eligible, objectives, n, seed, block_entries,
                    pairwise_among, pairwise_keep, pool, path, fallbacks or {}, mixes,
                    paying)


def _run(static: pl.DataFrame, inputs: pl.DataFrame, eligible: Sequence[str],
         objectives: Sequence[str], n: int, seed: int, block_entries: int,
         pairwise_among: Sequence[str] | None, pairwise_keep: Sequence[str],
         pool: Executor | None, path: plan.Path | None = None,
         fallbacks: Mapping[str, str | None] | None = None,
         mixes: Sequence[mix.Chosen] = (),
         paying: tuple[Sequence[str], str] | None = None) -> MonteCarlo:
    clock = time.perf_counter()
    seconds: dict[str, float] = {}

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[step] = seconds.get(step, 0.0) + now - clock
        clock = now

    draws = Draws.sample(inputs, n, seed, pool)
    lap("sample_s")
    ids = static["id"].to_list()
    layout = _Layout.of(ids, inputs, draws)
    columns = [OBJECTIVES[o] for o in objectives]
    needed = sorted({*METRICS, *(col for col, _ in columns if col in STEP_BY_NAME)})
    wanted = set(eligible)
    eligible_ids = [cid for cid in ids if cid in wanted]
    slot = np.full(len(ids), -1, dtype=np.int64)  # each candidate's row among the eligible
    eligible_at = [i for i, cid in enumerate(ids) if cid in wanted]
    slot[eligible_at] = np.arange(len(eligible_ids))
    stack = np.empty((len(eligible_ids), len(columns), n), dtype=np.float32)  # (k, o, n)
    cpm = np.empty((len(eligible_ids), n))
    # NaN (null) for a mix without a base size, which no block or mix_block computes
    quantiles = np.full((len(METRICS), len(ids), len(PERCENTILES)), np.nan)
    models = static["cost_model"].cast(pl.String).to_numpy()
    capacities = static["capacity"].cast(pl.String).to_numpy()
    fixed = {col: static[col].cast(pl.Float64).fill_null(np.nan).to_numpy()
             for col, _ in columns if col not in STEP_BY_NAME}
    size = max(1, block_entries // max(n, 1))
    blocks = [of_model[start:start + size]
              for model in dict.fromkeys(models.tolist()) if model != MIX
              for of_model in [np.flatnonzero(models == model)]
              for start in range(0, len(of_model), size)]
    # the own candidates' paying months (row of each), against `versus`'s inputs
    own_row: dict[int, int] = {}
    versus: dict[str, Any] | None = None
    if path is not None and paying is not None:
        own_row = {ids.index(cid): i for i, cid in enumerate(paying[0])}
        v = ids.index(paying[1])
        versus = {**layout.block(np.array([v]), draws), "cost_model": np.asarray(models[v]),
                  "capacity": np.asarray(capacities[v])}
    paying_month = np.full((len(own_row), n), np.nan)
    lap("inputs_s")

    def block(members: np.ndarray, draws: Draws, stack: np.ndarray) -> dict[str, float]:
        """Evaluate a block of one cost model, keep its percentiles and objectives (each
        block writes rows of its own). Returns the seconds of each part."""
        spent, t = {}, time.perf_counter()
        given = layout.block(members, draws)
        capacity = capacities[members]
        given["cost_model"] = np.asarray(models[members[0]])
        given["capacity"] = (np.asarray(capacity[0]) if (capacity == capacity[0]).all()
                             else capacity[:, None])
        out = evaluate_arrays(given, needed)
        if path is not None:
            out.update(_planned(members, given, draws, path))
        spent["evaluate_s"], t = time.perf_counter() - t, time.perf_counter()
        keep(members, out, stack, spent, t)
        return spent

    def keep(members: np.ndarray, out: dict[str, Any], stack: np.ndarray,
             spent: dict[str, float], t: float) -> None:
        for i, metric in enumerate(METRICS):
            quantiles[i, members] = _quantiles(out[metric], len(members), n)
        spent["percentiles_s"], t = time.perf_counter() - t, time.perf_counter()
        into = slot[members]
        mine = into >= 0
        if mine.any():
            rows = into[mine]
            if len(rows) == rows[-1] - rows[0] + 1:  # eligible rows in one run: a slice
                rows = slice(rows[0], rows[-1] + 1)  # type: ignore[assignment]
            for j, (col, sign) in enumerate(columns):
                value = out[col] if col in out else fixed[col][members, None]
                value = np.broadcast_to(value, (len(members), n))
                if not mine.all():
                    value = value[mine]
                # lower is better: x -sign (exact), float32 on the way in
                stack[rows, j] = value if sign == -1 else np.negative(value)
            value = np.broadcast_to(out["cpm_eur_per_mtok"], (len(members), n))
            cpm[rows] = value if mine.all() else value[mine]
        spent["objectives_s"] = time.perf_counter() - t

    def _planned(members: np.ndarray, given: dict[str, Any], draws: Draws, path: plan.Path
                 ) -> dict[str, np.ndarray]:
        """The horizon's figures of a block's candidates, grouped by fallback (whose inputs
        are its own row of the same draws)."""
        result = {k: np.full((len(members), n), np.nan) for k in plan.REPLACED}
        block_ids = [ids[i] for i in members]
        for fallback, at in plan.by_fallback(block_ids, fallbacks or {}).items():
            theirs = None
            if fallback is not None and paying is not None and fallback == paying[1]:
                theirs = versus  # the same inputs: plan.horizon computes their months once
            elif fallback is not None:
                f = ids.index(fallback)
                theirs = layout.block(np.array([f]), draws)
                theirs["cost_model"] = np.asarray(models[f])
                theirs["capacity"] = np.asarray(capacities[f])
            mine = {k: (v[at] if np.ndim(v) else v) for k, v in given.items()}
            owns = [(j, own_row[m]) for j, m in enumerate(members[at].tolist()) if m in own_row]
            out = plan.horizon(mine, theirs, path, versus if owns else None)
            for k in plan.REPLACED:
                result[k][at] = out[k]
            for j, row in owns:
                paying_month[row] = out["paying_month"][j]
        return result

    # the draws and the stack are bound to this partial only, so dropping it and the name
    # frees the draws (keys x n) before the frontier and pairwise
    each = functools.partial(block, draws=draws, stack=stack)
    # the mixes first, on the pool beside the blocks (each writes rows of its own)
    drawn = [(chosen, pool.submit(mix_block, chosen, inputs, draws, needed, path)
              if pool else None) for chosen in mixes if chosen.base_instances is not None]
    for spent in (pool.map(each, blocks) if pool else map(each, blocks)):
        for step, t in spent.items():  # summed over the threads
            seconds[step] = seconds.get(step, 0.0) + t
    lap("blocks_s")
    for chosen, future in drawn:
        out = (future.result() if future is not None else
               mix_block(chosen, inputs, draws, needed, path))
        keep(np.array([ids.index(chosen.id)]), out, stack, {}, 0.0)
    if mixes:
        lap("mixes_s")
    del each, draws
    percentiles = pl.DataFrame({
        "id": ids * len(METRICS), "metric": [m for m in METRICS for _ in ids],
        **{f"p{int(p)}": quantiles[:, :, i].ravel() for i, p in enumerate(PERCENTILES)},
    }).fill_nan(None)
    frontier = frontier_of(eligible_ids, stack, pool=pool)
    del stack
    lap("frontier_s")
    median_cpm = quantiles[METRICS.index("cpm_eur_per_mtok"), eligible_at,
                           PERCENTILES.index(50.0)]
    pairwise, scope = pairwise_lower(eligible_ids, cpm, pairwise_among, pairwise_keep,
                                     medians=median_cpm)
    lap("pairwise_s")
    cheapest = p_cheapest(eligible_ids, cpm)
    lap("cheapest_s")
    band = None if versus is None or paying is None else _band(paying[0], paying_month)
    return MonteCarlo(percentiles, frontier, pairwise, cheapest, n, seed, scope, seconds,
                      band)


#: the cost model of a mix's row: drawn from its parts (`mix_block`), in no block
MIX = "mix"


def mix_block(chosen: mix.Chosen, inputs: pl.DataFrame, draws: Draws, needed: Sequence[str],
              path: plan.Path | None = None) -> dict[str, Any]:
    """A mix's figures over the draws, as a block's (`needed`, each (1, draws)): its parts'
    inputs drawn as the candidates' (the same keys, the same draws) at its base size. Under
    a plan (`path`) the plan's figures (plan.REPLACED) are the horizon's (`mix.over_horizon`:
    the growth and the lead time drawn with the rest), the others the first month's, as a
    block's."""
    base_id, burst_id = chosen.base[0], chosen.burst[0]
    parts = _Layout.of([base_id, burst_id], inputs, draws)
    given = []
    for i, (_, model, capacity) in enumerate((chosen.base, chosen.burst)):
        one = parts.block(np.array([i]), draws)
        given.append({**one, "cost_model": model, "capacity": capacity})
    return mix.at_size(given[0], given[1], chosen.base_instances, chosen.profile,
                       [name for name in needed if name in STEP_BY_NAME], path)


def _sorted_rows(values: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    return np.sort(values, axis=1)


def _quantiles(values: Any, rows: int, n: int,
               order: Callable[[np.ndarray, np.ndarray], np.ndarray] = _sorted_rows
               ) -> np.ndarray:
    """(rows, PERCENTILES) of each row of `values` (broadcast to (rows, n)) as np.percentile
    computes them (linear), NaN for a row with a NaN: each row put in `order` (the values at
    the given ranks in place: a full sort by default), then numpy's own interpolation between
    neighbours (several percentiles cost numpy's partition more: at 1,000 x 10,000 draws, 3x
    the sort's CPU with numpy 2.4, benchmarks/monte_carlo.py passes a partition)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim < 2 or values.shape[1] == 1:  # the same in every draw
        return np.repeat(np.broadcast_to(values, (rows, 1)), len(PERCENTILES), axis=1)
    out = np.full((rows, len(PERCENTILES)), np.nan)
    valid = ~np.isnan(values).any(axis=1)
    if valid.any():
        virtual = (n - 1) * (np.asarray(PERCENTILES) / 100)
        below = np.floor(virtual)
        gamma = virtual - below
        lo = below.astype(np.int64)
        hi = np.minimum(lo + 1, n - 1)
        ranked = order(values if valid.all() else values[valid],
                       np.unique(np.concatenate([lo, hi])))
        a, b = ranked[:, lo], ranked[:, hi]
        diff = b - a
        q = a + diff * gamma
        upper = np.broadcast_to(gamma >= 0.5, q.shape)
        q[upper] = (b - diff * (1 - gamma))[upper]
        out[valid] = q
    return out


def frontier_probability(ids: list[str], stack: np.ndarray, chunk_entries: int = 1 << 20
                         ) -> pl.DataFrame:
    """Share of draws in which each candidate is not dominated.

    `stack` is (candidates, draws, objectives), every objective oriented lower-is-better; a
    candidate with a NaN objective in a draw is neither dominated nor dominating there.
    First, a candidate dominated in every draw (its whole box lies beyond another's) is
    dropped: by transitivity its dominator dominates whatever it would. Then, draw by draw
    (vectorised over the draws of a chunk), the frontier is peeled off in an order where a
    dominator comes first (the lowest score first, a sum of the objectives scaled to 0..1
    which a dominator never exceeds, ties broken lexicographically): the first undecided
    candidate is on the frontier, and every candidate it dominates is decided, dominated.
    Each candidate is compared with the frontier of its draw only, so the work is
    (candidates x draws x frontier size), not (candidates^2 x draws) however much the
    candidates overlap."""
    return frontier_of(ids, np.ascontiguousarray(np.asarray(stack, dtype=np.float32)
                                                 .transpose(0, 2, 1)), chunk_entries)


def frontier_of(ids: list[str], s: np.ndarray, chunk_entries: int = 1 << 20,
                pool: Executor | None = None) -> pl.DataFrame:
    """frontier_probability of `s` laid out (candidates, objectives, draws), C-contiguous
    float32: the layout whose reductions over the draws run fast. Chunks of draws go to
    `pool` when given."""
    if not ids:
        return pl.DataFrame(schema={"id": pl.String(), "p_frontier": pl.Float64()})
    lowest, highest = np.fmin.reduce(s, axis=2), np.fmax.reduce(s, axis=2)  # NaN ignored
    with_nan = np.isnan(s.min(axis=2)).any(axis=1)
    idx = _not_surely_dominated(lowest, highest, with_nan)
    k, o, n = len(idx), s.shape[1], s.shape[2]
    if np.isinf(lowest[idx]).any() or np.isinf(highest[idx]).any():
        low, scale = np.zeros(o), np.zeros(o)  # an infinity: any order is right, only slower
    else:
        low = np.nan_to_num(np.fmin.reduce(lowest[idx], axis=0).astype(np.float64))
        width = np.nan_to_num(np.fmax.reduce(highest[idx], axis=0).astype(np.float64)) - low
        scale = np.divide(1.0, width, out=np.zeros(o), where=width > 0)
    step = max(1, chunk_entries // max(k, 1))

    def chunk(start: int) -> np.ndarray:
        cols = [np.ascontiguousarray(s[idx, j, start:start + step].T) for j in range(o)]
        return _dominated_counts(cols, low, scale)

    starts = range(0, n, step)
    dominated = sum((pool.map(chunk, starts) if pool else map(chunk, starts)),
                    np.zeros(k, dtype=np.int64))
    p = np.zeros(len(ids))
    p[idx] = 1.0 - dominated / n
    return pl.DataFrame({"id": ids, "p_frontier": p})


def _not_surely_dominated(lowest: np.ndarray, highest: np.ndarray, with_nan: np.ndarray,
                          rows: int = 256) -> np.ndarray:
    """Indices of the candidates that no other dominates in every draw: one whose worst value
    (`highest`, per candidate and objective) is at least as good as their best (`lowest`) on
    every objective, and better on one. A candidate with a NaN draw neither dominates nor is
    dominated there, so it is never dropped and drops nothing. Compared in blocks of rows,
    never a k x k x o array in one piece."""
    hi = np.where(with_nan[:, None], np.inf, highest)
    lo = np.where(with_nan[:, None], -np.inf, lowest)
    k = len(lo)
    beaten = np.zeros(k, dtype=bool)
    for a0 in range(0, k, rows):
        ha = hi[a0:a0 + rows, None]
        surely = np.all(ha <= lo[None], axis=2) & np.any(ha < lo[None], axis=2)
        surely[np.arange(len(ha)), np.arange(a0, a0 + len(ha))] = False
        beaten |= surely.any(axis=0)
    return np.flatnonzero(~beaten)


def _beats(mine: list[np.ndarray], theirs: list[np.ndarray]) -> np.ndarray:
    """Where `mine` dominates `theirs`: <= on every objective, < on one (lists of columns)."""
    le, lt = mine[0] <= theirs[0], mine[0] < theirs[0]
    for m, t in zip(mine[1:], theirs[1:], strict=True):
        le &= m <= t
        lt |= m < t
    return le & lt


def _dominated_counts(cols: list[np.ndarray], low: np.ndarray, scale: np.ndarray
                      ) -> np.ndarray:
    """How many draws dominate each candidate, `cols` being one (draws, k) array per
    objective: the frontier peeled off every draw at once (frontier_probability).

    Each draw's candidates are put in an order where a dominator always comes first: by
    score (a dominator's is never higher, rounding included), ties broken by the objectives
    in turn (lexicographic: the first objective where a dominator differs is a better one).
    Then the first candidate of a draw is on its frontier; the candidates it dominates are
    dropped, and it leaves; the next first is on the frontier, and so on. The first pick is
    made on the dense arrays; what it leaves goes on as flat rows, sorted by draw and order."""
    d, k = cols[0].shape
    nan = np.isnan(cols[0])
    for col in cols[1:]:
        nan |= np.isnan(col)
    score = np.zeros((d, k))
    for j, col in enumerate(cols):
        if scale[j]:
            score += (col - low[j]) * scale[j]
    score[nan] = np.inf  # a NaN row is on the frontier and dominates nothing: left out
    order = np.argsort(score, axis=1)
    ranked = np.take_along_axis(score, order, axis=1)
    tied = ((ranked[:, 1:] == ranked[:, :-1]) & np.isfinite(ranked[:, 1:])).any(axis=1)
    if tied.any():  # lexicographic among equal scores (every draw when nothing has a scale)
        rows = np.flatnonzero(tied)
        order[rows] = np.lexsort([c[rows] for c in reversed(cols)] + [score[rows]], axis=-1)
    del ranked, score
    rows, first = np.arange(d), order[:, 0]
    beaten = _beats([c[rows, first][:, None] for c in cols], cols)
    beaten &= ~nan[rows, first][:, None]
    counts = np.bincount(np.nonzero(beaten)[1], minlength=k)
    alive = ~(beaten | nan)
    alive[rows, first] = False  # the first of each draw is on its frontier
    del beaten, nan
    at = np.flatnonzero(np.take_along_axis(alive, order, axis=1))  # in each draw's order
    # flat rows, one array: the objectives (float32 bits), then the draw and the candidate
    o = len(cols)
    packed = np.empty((o + 2, len(at)), dtype=np.int32)
    packed[o] = at // k
    packed[o + 1] = order.ravel()[at]
    where = packed[o].astype(np.int64) * k + packed[o + 1]
    for j, c in enumerate(cols):
        packed[j] = c.ravel()[where].view(np.int32)
    del order, alive, at, where
    while packed.shape[1]:
        flat, draw = packed[:o].view(np.float32), packed[o]
        head = np.empty(len(draw), dtype=bool)  # the first row of each draw: its next pick
        head[0] = True
        np.not_equal(draw[1:], draw[:-1], out=head[1:])
        starts = np.flatnonzero(head)
        sizes = np.diff(np.append(starts, len(draw)))
        picks = np.repeat(flat[:, starts], sizes, axis=1)
        beaten = _beats(list(picks), list(flat))
        counts += np.bincount(packed[o + 1][beaten], minlength=k)
        beaten[starts] = True  # the picks leave too: they are on the frontier
        packed = np.compress(~beaten, packed, axis=1)
    return counts


def pairwise_lower(ids: list[str], cpm: np.ndarray, among: Sequence[str] | None = None,
                   keep: Sequence[str] = (), *, medians: np.ndarray | None = None
                   ) -> tuple[pl.DataFrame, dict[str, Any]]:
    """P(CPM of a < CPM of b) for every pair of a set of candidates, `cpm` being (candidates,
    draws) in the order of `ids`; and the scope saying which pairs are given.

    Up to PAIRWISE_MAX candidates, every pair. Beyond, `keep` (the chosen candidate and the
    runner-up) and then the cheapest by median CPM of `among` (the frontier; every candidate
    when None) up to PAIRWISE_MAX candidates: `medians` in the order of `ids` (the Monte
    Carlo's p50, taken already), else computed from `cpm`."""
    schema = {"a": pl.String(), "b": pl.String(), "metric": pl.String(),
              "p_a_lower": pl.Float64()}
    position = {cid: i for i, cid in enumerate(ids)}
    if len(ids) <= PAIRWISE_MAX:
        chosen = sorted(range(len(ids)), key=lambda i: ids[i])
        rule = f"every pair of the {len(ids)} eligible candidate(s)"
    else:
        pool = [position[c] for c in (ids if among is None else among) if c in position]
        of_pool = (np.median(cpm[pool], axis=1) if medians is None else medians[pool]) \
            if pool else np.empty(0)
        by_median = np.nan_to_num(of_pool, nan=np.inf)
        first = list(dict.fromkeys(position[c] for c in keep if c in position))
        rest = [i for _, i in sorted(zip(by_median.tolist(), pool, strict=True),
                                     key=lambda m: (m[0], ids[m[1]])) if i not in first]
        chosen = sorted(first + rest[:max(0, PAIRWISE_MAX - len(first))],
                        key=lambda i: ids[i])
        named = (["the chosen candidate", "the runner-up"][:len(first)] if len(first) <= 2
                 else [f"{len(first)} candidates kept"])
        whom = ("other " if first else "") + ("frontier" if among is not None else "eligible")
        taken = len(chosen) - len(first)
        others = len([i for i in pool if i not in first])
        if others:
            named.append(f"the {others} {whom} candidate(s)" if taken == others else
                         f"the {taken} cheapest by median CPM of the {others} {whom} "
                         "candidates")
        rule = (f"{len(ids)} eligible candidates are more than the {PAIRWISE_MAX} compared "
                "pair by pair: every pair among " + (", ".join(named[:-1]) + " and "
                                                     if len(named) > 1 else "") + named[-1]
                + ("" if others else f" (no other {whom.removeprefix('other ')} "
                                     "candidate)"))
    kept = [ids[i] for i in chosen]
    scope: dict[str, Any] = {"metric": "cpm_eur_per_mtok", "candidates": kept,
                             "pairs": len(kept) * (len(kept) - 1) // 2, "rule": rule}
    if len(chosen) < 2:
        return pl.DataFrame(schema=schema), scope
    stack = cpm[chosen]
    p = np.zeros((len(kept), len(kept)))
    for i in range(len(kept) - 1):  # row by row: no (pairs x draws) array in one piece
        p[i, i + 1:] = np.count_nonzero(stack[i] < stack[i + 1:], axis=1) / cpm.shape[1]
    a, b = np.triu_indices(len(kept), k=1)
    return pl.DataFrame({"a": [kept[i] for i in a], "b": [kept[j] for j in b],
                         "metric": ["cpm_eur_per_mtok"] * len(a), "p_a_lower": p[a, b]},
                        schema=schema), scope


def p_cheapest(ids: Sequence[str], cpm: np.ndarray) -> dict[str, float]:
    """Share of draws in which each candidate has the lowest CPM; `cpm` is (candidates,
    draws) in the order of `ids`, NaN counting as never cheapest. A draw in which k
    candidates share the lowest CPM counts 1/k for each: identical candidates (a mix that
    keeps no node of its own and its burst) share the probability, whatever their order."""
    if not len(ids):
        return {}
    best = np.full(cpm.shape[1], np.inf)
    for row in cpm:  # row by row: no (candidates x draws) mask in one piece
        np.fmin(best, row, out=best)
    best[np.isinf(best)] = np.nan  # no finite CPM: no one is cheapest
    ties = np.zeros(cpm.shape[1])
    for row in cpm:
        ties += row == best
    share = np.divide(1.0, ties, out=np.zeros_like(ties), where=ties > 0)
    return {cid: float(share[cpm[i] == best].sum() / cpm.shape[1])
            for i, cid in enumerate(ids)}


def _tornado_planned(out: pl.DataFrame, rows: pl.DataFrame, inputs: pl.DataFrame,
                     metrics: Sequence[str], path: plan.Path,
                     fallbacks: Mapping[str, str | None],
                     everyone: tuple[pl.DataFrame, pl.DataFrame]) -> pl.DataFrame:
    """The tornado's rows (one per candidate, input and side) with the plan's figures: each
    row a candidate of plan.horizon, its fallback (from `everyone`, the static frame and
    inputs of every candidate) at its modes but for an input of the same key as the one
    varied."""
    wanted = [m for m in metrics if m in plan.REPLACED]
    if not wanted or rows.height == 0:
        return out
    static, every_input = everyone
    key_of = {(r["id"], r["input"]): r["key"] for r in inputs.iter_rows(named=True)}
    result = {m: out[m].cast(pl.Float64).fill_null(np.nan).to_numpy().copy() for m in wanted}
    ids, varied, values = rows["id"].to_list(), rows["input"].to_list(), rows["value"]
    for fallback, at in plan.by_fallback(ids, fallbacks).items():
        own = plan.columns_of(rows[at])
        theirs = None
        if fallback is not None:
            mine = every_input.filter(pl.col("id") == fallback)
            base = plan.columns_of(point_frame(static.filter(pl.col("id") == fallback), mine))
            theirs = {k: (np.repeat(v, len(at), axis=0) if v.dtype.kind == "f" else v[0, 0])
                      for k, v in base.items()}
            name_of = {r["key"]: r["input"] for r in mine.iter_rows(named=True)}
            for j, i in enumerate(at.tolist()):
                name = name_of.get(key_of.get((ids[i], varied[i]), ""))
                if name is not None and name in theirs:
                    theirs[name][j, 0] = values[i]
        planned = plan.horizon(own, theirs, path)
        for m in wanted:
            result[m][at] = planned[m][:, 0]
    return out.with_columns(pl.Series(m, result[m], nan_to_null=True) for m in wanted)


def tornado(static: pl.DataFrame, inputs: pl.DataFrame,
            metrics: Sequence[str] = ("cpm_eur_per_mtok", "carbon_gco2e_per_mtok"),
            path: plan.Path | None = None, fallbacks: Mapping[str, str | None] | None = None,
            everyone: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> pl.DataFrame:
    """Each uncertain input at its low and its high, the others at their modes: the swing of
    each metric, largest first per candidate. Under a plan (`path`) the metrics the plan
    makes the horizon's are the horizon's (plan.horizon), each candidate's fallback (its
    inputs among `fallback_inputs`) moving with it on a key they share."""
    varied = inputs.filter(pl.col("low") < pl.col("high")).select("id", "input", "low", "high")
    schema = {"candidate": pl.String(), "metric": pl.String(), "input": pl.String(),
              "low": pl.Float64(), "high": pl.Float64(), "metric_at_low": pl.Float64(),
              "metric_at_high": pl.Float64(), "swing": pl.Float64()}
    if varied.height == 0:
        return pl.DataFrame(schema=schema)
    base = point_frame(static, inputs)
    names = [c for c in base.columns if c in INPUTS or c in plan.PLAN_INPUTS]
    sides = varied.unpivot(index=["id", "input"], on=["low", "high"], variable_name="side",
                           value_name="value")
    rows = sides.join(base, on="id", how="left").with_columns(
        pl.when(pl.col("input") == name).then(pl.col("value")).otherwise(pl.col(name))
        .alias(name) for name in names)
    out = evaluate(rows, ["id", "input", "side", *metrics])
    if path is not None:
        out = _tornado_planned(out, rows, inputs, metrics, path, fallbacks or {},
                               everyone or (static, inputs))
    parts = []
    for metric in metrics:
        wide = out.pivot(on="side", index=["id", "input"], values=metric,
                         aggregate_function="first").rename(
            {"low": "metric_at_low", "high": "metric_at_high"})
        parts.append(wide.join(varied, on=["id", "input"]).select(
            pl.col("id").alias("candidate"), pl.lit(metric).alias("metric"), "input", "low",
            "high", "metric_at_low", "metric_at_high"))
    result = pl.concat(parts).with_columns(
        (pl.col("metric_at_high") - pl.col("metric_at_low")).abs().alias("swing"))
    return result.filter(pl.col("swing").is_not_null()).sort(
        ["candidate", "metric", "swing", "input"], descending=[False, False, True, False]
    ).select(list(schema))


def paying_month_band(static: pl.DataFrame, inputs: pl.DataFrame, own_ids: Sequence[str],
                      versus: str, path: plan.Path, n: int, seed: int
                      ) -> dict[str, tuple[float | None, float | None]]:
    """The p5 and p95 over the Monte Carlo's draws (the same seed and keys, so the same
    draws) of the month from which each own candidate's month pays against `versus`
    (plan.paying_month); a draw in which no month does counts as beyond the horizon (the
    percentile is then null when it falls there)."""
    draws = Draws.sample(inputs, n, seed)
    ids = [*own_ids, versus]
    layout = _Layout.of(ids, inputs, draws)
    models = dict(zip(static["id"].to_list(), static["cost_model"].cast(pl.String).to_list(),
                      strict=True))
    capacities = dict(zip(static["id"].to_list(),
                          static["capacity"].cast(pl.String).to_list(), strict=True))

    def given(at: list[int]) -> dict[str, Any]:
        out: dict[str, Any] = layout.block(np.array(at), draws)
        out["cost_model"] = np.array([models[ids[i]] for i in at])[:, None]
        out["capacity"] = np.array([capacities[ids[i]] for i in at])[:, None]
        return out

    own, theirs = given(list(range(len(own_ids)))), given([len(own_ids)])
    month = plan.chunked(lambda a, b: {"month": plan.paying_month(a, b, path)}, own, theirs,
                         path)["month"]
    return _band(own_ids, np.broadcast_to(month, (len(own_ids), n)))


def _band(own_ids: Sequence[str], month: np.ndarray
          ) -> dict[str, tuple[float | None, float | None]]:
    """`paying_month_band`'s p5 and p95 of each own candidate's row of `month` (its paying
    month in each draw, NaN: beyond the horizon)."""
    beyond = np.where(np.isnan(month), np.inf, month)
    low, high = np.percentile(beyond, [5.0, 95.0], axis=1, method="higher")
    return {cid: (None if not np.isfinite(low[i]) else float(low[i]),
                  None if not np.isfinite(high[i]) else float(high[i]))
            for i, cid in enumerate(own_ids)}
