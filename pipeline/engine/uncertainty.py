"""Monte Carlo over the proposal's ranges: percentiles, frontier and pairwise probabilities,
and a one-at-a-time tornado.

Every range `{ low, mode, high }` is a triangular distribution, drawn once per *key* (the place
it was stated), so an input shared by several candidates (a TCO profile, [defaults].pue, a
zone's price) moves them together. Draws are seeded: the same proposal and seed give the same
percentiles. The metric formulas are not repeated here: draws are laid out as rows and passed
through `metrics.evaluate`, candidates in chunks so memory stays bounded.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from pipeline.engine.metrics import CAPACITIES, COST_MODELS, INPUTS, evaluate
from pipeline.engine.pareto import OBJECTIVES

#: metrics whose percentiles are reported
METRICS = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok",
           "electricity_eur_per_mtok", "facility_kwh_per_mtok", "embodied_gco2e_per_mtok")
PERCENTILES = (5.0, 50.0, 95.0)
PAIRWISE_MAX = 40  # pairwise probabilities for at most this many eligible candidates
COST_MODEL = pl.Enum(COST_MODELS)
CAPACITY = pl.Enum(CAPACITIES)


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
    def sample(cls, inputs: pl.DataFrame, n: int, seed: int) -> Draws:
        uncertain = (inputs.filter(pl.col("low") < pl.col("high"))
                     .unique("key").sort("key"))
        rng = np.random.default_rng(seed)
        u = rng.random((uncertain.height, n), dtype=np.float32)
        low, mode, high = (uncertain[c].cast(pl.Float32).to_numpy()[:, None]
                           for c in ("low", "mode", "high"))
        rows = max(1, (1 << 20) // max(n, 1))  # keys per block: temporaries stay in cache
        for a in range(0, len(u), rows):
            b = a + rows
            u[a:b] = triangular_ppf(u[a:b], low[a:b], mode[a:b], high[a:b])
        return cls(uncertain["key"].to_list(), u)


def triangular_ppf(u: np.ndarray, low: np.ndarray, mode: np.ndarray, high: np.ndarray
                   ) -> np.ndarray:
    """Inverse CDF of triangular(low, mode, high) at uniforms `u`: several times faster than
    numpy's sampler on large arrays (float32 halves the memory of 1e8 draws)."""
    width = high - low
    is_left = u < (mode - low) / width
    root = np.sqrt(np.where(is_left, u * (width * (mode - low)),
                            (1 - u) * (width * (high - mode))))
    return np.where(is_left, low + root, high - root)


def _draw_rows(static: pl.DataFrame, inputs: pl.DataFrame, draws: Draws, n: int
               ) -> pl.DataFrame:
    """Rows (candidate x draw) with every input: drawn where uncertain, else its mode (an
    input no candidate of `static` has is left out: evaluate takes it as null). Laid out with
    numpy, one block per input, no per-input frame filters."""
    ids = static["id"].to_list()
    position_of = {cid: i for i, cid in enumerate(ids)}
    key_of = {key: i for i, key in enumerate(draws.keys)}
    mine = inputs.filter(pl.col("id").is_in(ids))
    position = np.array([position_of[c] for c in mine["id"].to_list()], dtype=np.int64)
    key_index = np.array([key_of.get(k, -1) for k in mine["key"].to_list()], dtype=np.int64)
    modes = mine["mode"].cast(pl.Float64).to_numpy()
    rows_of: dict[str, list[int]] = {}
    for row, name in enumerate(mine["input"].to_list()):
        rows_of.setdefault(name, []).append(row)
    columns: list[pl.Series] = []
    for name in INPUTS:
        if name not in rows_of:
            continue
        at = np.array(rows_of[name], dtype=np.int64)
        fixed, drawn = at[key_index[at] < 0], at[key_index[at] >= 0]
        # every candidate of the chunk has it and no mode is NaN: nothing to make null
        whole = (len(np.unique(position[at])) == len(ids)
                 and not np.isnan(modes[fixed]).any())
        block = np.empty((len(ids), n)) if whole else np.full((len(ids), n), np.nan)
        block[position[fixed]] = modes[fixed][:, None]
        block[position[drawn]] = draws.values[key_index[drawn]]
        columns.append(pl.Series(name, block.reshape(-1), nan_to_null=not whole))
    which = pl.Series(np.repeat(np.arange(len(ids)), n))
    return pl.DataFrame(columns).with_columns(
        static["cost_model"].cast(COST_MODEL).gather(which),
        static["capacity"].cast(CAPACITY).gather(which),
        static["sovereignty_level"].gather(which),
    )


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


def run(static: pl.DataFrame, inputs: pl.DataFrame, eligible: Sequence[str],
        objectives: Sequence[str], n: int, seed: int, chunk: int = 100,
        pairwise_among: Sequence[str] | None = None, pairwise_keep: Sequence[str] = ()
        ) -> MonteCarlo:
    """`static` needs id, cost_model, capacity and sovereignty_level; `eligible` ids take part
    in the frontier, cheapest and pairwise probabilities (`pairwise_lower` says which pairs
    when they are many: `pairwise_among`, the frontier, and `pairwise_keep`, the chosen
    candidate and the runner-up)."""
    clock = time.perf_counter()
    seconds: dict[str, float] = {}

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[step] = seconds.get(step, 0.0) + now - clock
        clock = now

    draws = Draws.sample(inputs, n, seed)
    lap("sample_s")
    columns = [OBJECTIVES[o] for o in objectives]
    needed = sorted({*METRICS, *(col for col, _ in columns)})
    wanted = set(eligible)
    percentile_parts, objective_parts, cpm_parts = [], [], []
    eligible_ids: list[str] = []
    for start in range(0, static.height, chunk):
        part = static.slice(start, chunk)
        ids = part["id"].to_list()
        rows = _draw_rows(part, inputs, draws, n)
        lap("draw_rows_s")
        out = evaluate(rows, needed)
        del rows
        arrays = {m: out[m].cast(pl.Float64).to_numpy().reshape(len(ids), n) for m in needed}
        del out
        lap("evaluate_s")
        percentile_parts.append(_percentiles(arrays, ids))
        lap("percentiles_s")
        mask = np.array([cid in wanted for cid in ids], dtype=bool)
        objective_parts.append(np.stack([arrays[col][mask] * -sign for col, sign in columns],
                                        axis=1).astype(np.float32))  # (k, o, n)
        cpm_parts.append(arrays["cpm_eur_per_mtok"][mask])
        eligible_ids.extend(cid for cid, m in zip(ids, mask, strict=True) if m)
    objectives_all = (np.concatenate(objective_parts) if objective_parts
                      else np.empty((0, 0, n), dtype=np.float32))
    del objective_parts
    cpm_all = np.concatenate(cpm_parts) if cpm_parts else np.empty((0, n))
    del cpm_parts
    frontier = frontier_of(eligible_ids, objectives_all)
    del objectives_all
    lap("frontier_s")
    pairwise, scope = pairwise_lower(eligible_ids, cpm_all, pairwise_among, pairwise_keep)
    lap("pairwise_s")
    cheapest = p_cheapest(eligible_ids, cpm_all)
    lap("cheapest_s")
    return MonteCarlo(pl.concat(percentile_parts), frontier, pairwise, cheapest, n, seed,
                      scope, seconds)


def _percentiles(arrays: dict[str, np.ndarray], ids: list[str]) -> pl.DataFrame:
    parts = []
    for metric in METRICS:
        block = arrays[metric]
        valid = ~np.isnan(block).any(axis=1)
        q = np.full((len(ids), len(PERCENTILES)), np.nan)
        if valid.any():
            # block[valid] is a copy (a boolean index), so numpy may partition it in place
            q[valid] = np.percentile(block[valid], PERCENTILES, axis=1,
                                     overwrite_input=True).T
        parts.append(pl.DataFrame({
            "id": ids, "metric": [metric] * len(ids),
            **{f"p{int(p)}": q[:, i] for i, p in enumerate(PERCENTILES)},
        }).fill_nan(None))
    return pl.concat(parts)


def frontier_probability(ids: list[str], stack: np.ndarray, chunk_entries: int = 1 << 20
                         ) -> pl.DataFrame:
    """Share of draws in which each candidate is not dominated.

    `stack` is (candidates, draws, objectives), every objective oriented lower-is-better; a
    candidate with a NaN objective in a draw is neither dominated nor dominating there.
    First, a candidate dominated in every draw (its whole box lies beyond another's) is
    dropped: by transitivity its dominator dominates whatever it would. Then, draw by draw
    (vectorised over the draws of a chunk), the frontier is peeled off: the undecided
    candidate with the lowest score (a sum of the objectives scaled to 0..1, which a
    dominator never exceeds) is on the frontier, and every candidate it dominates is
    decided, dominated. Each candidate is compared with the frontier of its draw only, so the
    work is (candidates x draws x frontier size), not (candidates^2 x draws) however much the
    candidates overlap. A frontier candidate is compared with later picks while their score
    equals its own (rounding can tie a dominator with the dominated)."""
    return frontier_of(ids, np.ascontiguousarray(np.asarray(stack, dtype=np.float32)
                                                 .transpose(0, 2, 1)), chunk_entries)


def frontier_of(ids: list[str], s: np.ndarray, chunk_entries: int = 1 << 20
                ) -> pl.DataFrame:
    """frontier_probability of `s` laid out (candidates, objectives, draws), C-contiguous
    float32: the layout whose reductions over the draws run fast."""
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
    dominated = np.zeros(k, dtype=np.int64)
    step = max(1, chunk_entries // max(k, 1))
    for start in range(0, n, step):
        cols = [np.ascontiguousarray(s[idx, j, start:start + step].T) for j in range(o)]
        dominated += _dominated_counts(cols, low, scale)
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
    objective: the frontier peeled off every draw at once (frontier_probability). The first
    pick is made on the dense arrays; the candidates it leaves undecided go on as flat rows."""
    d, k = cols[0].shape
    nan = np.zeros((d, k), dtype=bool)
    score = np.zeros((d, k))
    for j, col in enumerate(cols):
        nan |= np.isnan(col)
        if scale[j]:
            score += (col - low[j]) * scale[j]
    score[nan] = np.inf  # a NaN row is on the frontier and dominates nothing
    rows = np.arange(d)
    pick = np.argmin(score, axis=1)
    live = ~nan[rows, pick]
    beaten = _beats([c[rows, pick][:, None] for c in cols], cols) & live[:, None]
    counts = beaten.sum(axis=0, dtype=np.int64)
    undecided = np.ones((d, k), dtype=bool)
    undecided[rows, pick] = False
    at = np.flatnonzero(~beaten & ~nan & live[:, None])
    draw, cand = at // k, at % k
    flat = [c.ravel()[at] for c in cols]
    score_f, undecided_f = score.ravel()[at], undecided.ravel()[at]
    del nan, score, beaten, undecided
    while len(draw):
        starts = np.flatnonzero(np.r_[True, draw[1:] != draw[:-1]])
        sizes = np.diff(np.r_[starts, len(draw)])
        masked = np.where(undecided_f, score_f, np.inf)
        best = np.minimum.reduceat(masked, starts)
        place = np.where(undecided_f & (masked == np.repeat(best, sizes)),
                         np.arange(len(draw)), len(draw))
        first = np.minimum.reduceat(place, starts)
        alive = first < len(draw)  # draws with undecided candidates left
        at_pick = np.where(alive, first, 0)
        beaten_f = _beats([np.repeat(c[at_pick], sizes) for c in flat], flat)
        beaten_f &= np.repeat(alive, sizes)
        undecided_f[first[alive]] = False
        counts += np.bincount(cand[beaten_f], minlength=k)
        # kept: the undecided, and frontier rows a later pick (score >= this one's) may tie
        kept = ~beaten_f & np.repeat(alive, sizes) & (
            undecided_f | (score_f >= np.repeat(best, sizes)))
        draw, cand, score_f, undecided_f = (draw[kept], cand[kept], score_f[kept],
                                            undecided_f[kept])
        flat = [c[kept] for c in flat]
    return counts


def pairwise_lower(ids: list[str], cpm: np.ndarray, among: Sequence[str] | None = None,
                   keep: Sequence[str] = ()) -> tuple[pl.DataFrame, dict[str, Any]]:
    """P(CPM of a < CPM of b) for every pair of a set of candidates, `cpm` being (candidates,
    draws) in the order of `ids`; and the scope saying which pairs are given.

    Up to PAIRWISE_MAX candidates, every pair. Beyond, `keep` (the chosen candidate and the
    runner-up) and then the cheapest by median CPM of `among` (the frontier; every candidate
    when None) up to PAIRWISE_MAX candidates."""
    schema = {"a": pl.String(), "b": pl.String(), "metric": pl.String(),
              "p_a_lower": pl.Float64()}
    position = {cid: i for i, cid in enumerate(ids)}
    if len(ids) <= PAIRWISE_MAX:
        chosen = sorted(range(len(ids)), key=lambda i: ids[i])
        rule = f"every pair of the {len(ids)} eligible candidate(s)"
    else:
        pool = [position[c] for c in (ids if among is None else among) if c in position]
        medians = np.nan_to_num(np.median(cpm[pool], axis=1), nan=np.inf) if pool \
            else np.empty(0)
        first = list(dict.fromkeys(position[c] for c in keep if c in position))
        rest = [i for _, i in sorted(zip(medians.tolist(), pool, strict=True),
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
    p = (stack[:, None, :] < stack[None, :, :]).mean(axis=2)
    a, b = np.triu_indices(len(kept), k=1)
    return pl.DataFrame({"a": [kept[i] for i in a], "b": [kept[j] for j in b],
                         "metric": ["cpm_eur_per_mtok"] * len(a), "p_a_lower": p[a, b]},
                        schema=schema), scope


def p_cheapest(ids: Sequence[str], cpm: np.ndarray) -> dict[str, float]:
    """Share of draws in which each candidate has the lowest CPM; `cpm` is (candidates,
    draws) in the order of `ids`, NaN counting as never cheapest."""
    if not len(ids):
        return {}
    filled = np.where(np.isnan(cpm), np.inf, cpm)
    winner = np.argmin(filled, axis=0)
    counts = np.bincount(winner, minlength=len(ids))
    return {cid: float(counts[i] / cpm.shape[1]) for i, cid in enumerate(ids)}


def tornado(static: pl.DataFrame, inputs: pl.DataFrame,
            metrics: Sequence[str] = ("cpm_eur_per_mtok", "carbon_gco2e_per_mtok")
            ) -> pl.DataFrame:
    """Each uncertain input at its low and its high, the others at their modes: the swing of
    each metric, largest first per candidate."""
    varied = inputs.filter(pl.col("low") < pl.col("high")).select("id", "input", "low", "high")
    schema = {"candidate": pl.String(), "metric": pl.String(), "input": pl.String(),
              "low": pl.Float64(), "high": pl.Float64(), "metric_at_low": pl.Float64(),
              "metric_at_high": pl.Float64(), "swing": pl.Float64()}
    if varied.height == 0:
        return pl.DataFrame(schema=schema)
    base = point_frame(static, inputs)
    names = [c for c in base.columns if c in INPUTS]
    sides = varied.unpivot(index=["id", "input"], on=["low", "high"], variable_name="side",
                           value_name="value")
    rows = sides.join(base, on="id", how="left").with_columns(
        pl.when(pl.col("input") == name).then(pl.col("value")).otherwise(pl.col(name))
        .alias(name) for name in names)
    out = evaluate(rows)
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
