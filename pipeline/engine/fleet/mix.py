"""A mix: own capacity (the base, an on_prem candidate in whole instances) serves each hour of
the day up to its capacity, and the rest of the hour's demand goes to the burst (a cloud or
API candidate), at its own price, energy, carbon and sovereignty (docs/decision.md "Mixes").

Each part's figures are the metric steps' (`metrics.evaluate_arrays`) at the tokens it
serves: the base billed for its chosen instances (its spares included), the burst sized and
billed by its own capacity model for what is left (its peak hour and mean). A part that serves
no token is not held: it costs nothing. The blended per-token figures are the parts' weighted
by their tokens (CPM is then the month's cost over its tokens).

Everything is numpy over a leading axis of base sizes and one of draws, so the same code finds
the base size at the point (every size, one draw) and gives the Monte Carlo's draws (one size,
every draw). Under a plan, `over_horizon` runs that split over a third axis, the horizon's
months (in chunks of months), the base serving from its lead time, and sums the months as
plan.py does (`Horizon`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.engine.fleet import plan
from pipeline.engine.metrics import (
    DAYS_PER_MONTH,
    SECONDS_PER_DAY,
    SECONDS_PER_HOUR,
    TOKENS_PER_MTOK,
    evaluate_arrays,
    hour_demand_ratios,
)
from schemas.steps import HOUR_DEMAND_RATIOS

#: what each part's steps give the mix: its month's cost, and the per-token figures blended
COST = "monthly_cost_eur"


@dataclass(frozen=True)
class Policy:
    """`mix.min_share_at_level`: at least `share` of the tokens at level >= `level`."""

    level: int
    share: float


@dataclass(frozen=True)
class Figures:
    """A mix at each base size (rows) and draw (columns): every array is (sizes, draws)."""

    base_instances: np.ndarray  # serving instances of the base (its spares not counted)
    base_tokens_per_day: np.ndarray
    burst_tokens_per_day: np.ndarray
    base_cost_eur: np.ndarray  # a month's
    burst_cost_eur: np.ndarray
    #: each blended per-token figure (the parts' weighted by their tokens), and each part's
    blended: dict[str, np.ndarray]
    base: dict[str, np.ndarray]
    burst: dict[str, np.ndarray]

    @property
    def monthly_cost_eur(self) -> np.ndarray:
        return self.base_cost_eur + self.burst_cost_eur

    @property
    def base_share(self) -> np.ndarray:
        """Share of the tokens the base serves."""
        total = self.base_tokens_per_day + self.burst_tokens_per_day
        return self.base_tokens_per_day / total

    @property
    def objective(self) -> np.ndarray:
        """What the base size minimises: the month's cost."""
        return self.monthly_cost_eur


PARTS = ("base", "burst")


@dataclass(frozen=True)
class Horizon:
    """A mix over a plan's horizon at each base size (rows) and draw (columns): each part's
    sums over the months, every array (sizes, draws)."""

    base_instances: np.ndarray
    months: int
    #: by part: the cost (discounted, and not), the tokens in millions (discounted, and not)
    cost_pv_eur: dict[str, np.ndarray]
    cost_eur: dict[str, np.ndarray]
    mtok_pv: dict[str, np.ndarray]
    mtok: dict[str, np.ndarray]
    #: by part, each figure of `wanted` x the month's tokens, summed (0 for a month it serves
    #: no token)
    weighted: dict[str, dict[str, np.ndarray]]
    #: by part, each month's cost and tokens in millions (not discounted), (sizes, draws,
    #: months): a mix's purchase plan (mixes.schedule)
    cost_by_month: dict[str, np.ndarray]
    mtok_by_month: dict[str, np.ndarray]

    def total(self, of: dict[str, np.ndarray]) -> np.ndarray:
        return of["base"] + of["burst"]

    @property
    def objective(self) -> np.ndarray:
        """What the base size minimises: the horizon's discounted cost."""
        return self.total(self.cost_pv_eur)

    @property
    def base_share(self) -> np.ndarray:
        """Share of the horizon's tokens the base serves."""
        return self.mtok["base"] / self.total(self.mtok)

    @property
    def blended(self) -> dict[str, np.ndarray]:
        """The horizon's figures (plan.per_token_figures): CPM its discounted cost over its
        discounted tokens, the others weighted by each month's tokens."""
        names = self.weighted["base"]
        return plan.finite(plan.per_token_figures(
            self.objective, self.total(self.mtok_pv),
            {k: self.weighted["base"][k] + self.weighted["burst"][k] for k in names},
            self.total(self.mtok)))

    def part(self, name: str) -> dict[str, np.ndarray]:
        """One part's own horizon figures (NaN where it serves no token)."""
        return plan.finite(plan.per_token_figures(
            self.cost_pv_eur[name], self.mtok_pv[name], self.weighted[name], self.mtok[name]))


@dataclass(frozen=True)
class Chosen:
    """A mix as the Monte Carlo draws it: its parts (id, cost model, capacity), its base size
    chosen at the point (None: none allowed) and the day's profile."""

    id: str
    base: tuple[str, str, str]
    burst: tuple[str, str, str]
    base_instances: int | None
    profile: tuple[float, ...]


def hourly_tokens_per_s(tokens_per_day: Any, profile: Sequence[float]) -> np.ndarray:
    """The demand in each hour of the day (..., 24), tokens/s: the day's tokens spread by the
    profile's weights (their mean is the day's mean)."""
    per_s = np.asarray(tokens_per_day, dtype=np.float64)[..., None] / SECONDS_PER_DAY
    return per_s * hour_demand_ratios(profile)


def split(tokens_per_day: Any, profile: Sequence[float], capacity_tokens_per_s: np.ndarray,
          burst_hours: bool = False
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Each hour of the day (`hourly_tokens_per_s`) the base serves up to its capacity, the
    burst the rest: the base's and the burst's tokens per day, the burst's peak hour over
    its mean (1 when it serves none) and, if `burst_hours` (else empty), each of its hours
    over its mean by its input's name (HOUR_DEMAND_RATIOS: the burst's own day, billed hour
    by hour with an elastic floor; the profile's own where there is no base, NaN where it
    serves none).

    Hours of the same weight are the same figures: each is computed once, and the day's sums
    add the hours as numpy's sum over a (..., 24) array of them does (`sum_hours`), so no
    (..., 24) array is held and the figures are that sum's bit for bit."""
    per_s = np.asarray(tokens_per_day, dtype=np.float64) / SECONDS_PER_DAY
    weights = hour_demand_ratios(profile).tolist()
    parts: dict[float, tuple[np.ndarray, np.ndarray]] = {}
    for w in weights:
        if w not in parts:
            hour = per_s * w
            base = np.minimum(hour, capacity_tokens_per_s)
            parts[w] = (base, hour - base)
    hours = [parts[w] for w in weights]
    burst_day = sum_hours([burst for _, burst in hours])
    burst_mean = burst_day / len(hours)
    burst_max = functools.reduce(np.maximum, [burst for _, burst in parts.values()])
    peak_factor = np.divide(burst_max, burst_mean, out=np.ones_like(burst_mean),
                            where=burst_mean > 0)
    # without a base the burst's hours are the profile's, as the burst's alone (the same bits)
    ratios = {w: np.where(capacity_tokens_per_s > 0, np.divide(
        burst, burst_mean, out=np.full_like(burst_mean, np.nan), where=burst_mean > 0), w)
        for w, (_, burst) in parts.items()} if burst_hours else {}
    return (sum_hours([base for base, _ in hours]) * SECONDS_PER_HOUR,
            burst_day * SECONDS_PER_HOUR, peak_factor,
            {name: ratios[w] for name, w in zip(HOUR_DEMAND_RATIOS, weights, strict=True)}
            if burst_hours else {})


def sum_hours(hours: Sequence[np.ndarray]) -> np.ndarray:
    """The sum of `hours` (arrays of one shape, fewer than 128) in the order numpy's
    pairwise sum adds the last axis of a (..., len(hours)) array (fewer than 8: one after
    the other; else 8 running sums of every 8th item, added in pairs, then the remainder
    one after the other), so the figures are that sum's bit for bit (a test checks it
    against np.sum); the same pair of arrays (hours of the same weight) is added once."""
    done: dict[tuple[int, int], np.ndarray] = {}

    def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        key = (id(a), id(b))
        if key not in done:
            done[key] = a + b
        return done[key]

    n = len(hours)
    assert n < 128  # numpy splits a longer axis in halves first
    if n < 8:
        return functools.reduce(add, hours, np.zeros_like(hours[0]))
    run = list(hours[:8])
    whole = n - n % 8
    for i in range(8, whole, 8):
        run = [add(run[j], hours[i + j]) for j in range(8)]
    out = add(add(add(run[0], run[1]), add(run[2], run[3])),
              add(add(run[4], run[5]), add(run[6], run[7])))
    for hour in hours[whole:]:
        out = add(out, hour)
    return out


def max_base_instances(base: Mapping[str, Any]) -> int:
    """The pure own fleet's serving instances (its `instances` without the spares): the
    largest base a mix considers."""
    out = evaluate_arrays({**base, "demand_requests_per_s": np.nan}, ["instances"])
    spares = np.nan_to_num(np.asarray(base.get("redundancy_instances", 0.0), dtype=float))
    serving = np.asarray(out["instances"], dtype=float) - spares
    if not np.isfinite(serving).all():
        return 0
    return int(np.max(serving))


#: every base size is tried up to this many; past it, the sizes where an hour's demand fills
#: whole instances and an even grid between 0 and the pure own fleet
MAX_SIZES = 1024


def sizes_to_search(base: Mapping[str, Any], largest: int, profile: Sequence[float],
                    min_share: float | None = None,
                    path: plan.Path | None = None) -> np.ndarray:
    """The base sizes a mix tries: 0 .. `largest` (the pure own fleet) when they are at most
    MAX_SIZES; else the sizes at which some hour's demand fills whole instances (floor and
    ceil of its demand over one instance's capacity: between two of them the month's cost is
    linear in the size for a burst billed by the token or busy hour) with 0, `largest` and an
    even grid of MAX_SIZES sizes, so a demand of millions of instances is searched in bounded
    memory. With `min_share` (the policy's share of tokens the base must serve), the least
    size that serves it is tried too: the policy's base exactly, not the grid's next step.
    Under a plan (`path`), the hours of every month's demand give fills, and the least size
    is the one serving the share of all the months' tokens, each month's served by the base
    for the part of it after its lead time."""
    if largest < MAX_SIZES:
        return np.arange(largest + 1, dtype=np.float64)
    capacity = float(np.asarray(base["tokens_per_s"], dtype=float).mean()) * (
        1.0 - float(np.nan_to_num(base.get("headroom", 0.0))))
    per_day = (np.asarray(base["demand_tokens_per_day"], dtype=float).mean() if path is None
               else _path({k: _row(v) for k, v in base.items()}, path).reshape(
                   -1, path.months).mean(axis=0))
    hours = hourly_tokens_per_s(per_day, profile) / capacity
    fills = np.concatenate([np.floor(hours), np.ceil(hours)])
    grid = np.round(np.linspace(0, largest, MAX_SIZES))
    # under a plan, the share of each month the base serves (over_horizon)
    served = 1.0 if path is None else path.served(float(np.nan_to_num(np.asarray(
        base.get("lead_time_months", 0.0), dtype=float)).mean()))[:, None]
    least = [] if min_share is None else [_least_serving(hours, min_share, largest, served)]
    return np.unique(np.clip(np.concatenate([fills[np.isfinite(fills)], grid, least]),
                             0, largest))


def _least_serving(hours: np.ndarray, share: float, largest: int,
                   served: Any = 1.0) -> float:
    """The least whole size n (0 .. largest) whose hours' min(demand, n) serves `share` of the
    day, or of every month's day (`hours`: each hour's demand in instances, (24,) or (months,
    24); `served`: the share of each month the base serves, (months, 1)); the share rises with
    n, so bisection."""
    total = float(hours.sum())
    low, high = 0, largest
    while low < high:
        mid = (low + high) // 2
        if total > 0 and float((np.minimum(hours, mid) * served).sum()) / total >= share:
            high = mid
        else:
            low = mid + 1
    return float(low)


def evaluate(base: Mapping[str, Any], burst: Mapping[str, Any], sizes: Any,
             profile: Sequence[float], wanted: Sequence[str]) -> Figures:
    """The mix at each base size in `sizes` (serving instances), for `base` and `burst`: each
    part's inputs as `metrics.evaluate_arrays` takes them (numbers or (1, draws) arrays; the
    demand is the base's `demand_tokens_per_day`). `wanted`: the per-token figures blended."""
    n = np.asarray(sizes, dtype=np.float64).reshape(-1, 1)  # (sizes, 1)
    return _evaluate({k: _row(v) for k, v in base.items()},
                     {k: _row(v) for k, v in burst.items()}, n, profile, wanted)


def _evaluate(base: Mapping[str, Any], burst: Mapping[str, Any], n: np.ndarray,
              profile: Sequence[float], wanted: Sequence[str], blended: bool = True
              ) -> Figures:
    """`evaluate` of inputs already shaped to broadcast with the base sizes `n` (sizes, 1),
    or (sizes, 1, 1) with a months axis last (`over_horizon`); `blended`: the blended
    figures too (a horizon blends its months' sums, not each month's)."""
    demand = base["demand_tokens_per_day"]
    headroom = np.nan_to_num(base.get("headroom", 0.0))
    capacity = n * base["tokens_per_s"] * (1.0 - headroom)
    shape = np.broadcast_shapes(capacity.shape, *map(np.shape, base.values()),
                                *map(np.shape, burst.values()))
    # a burst billed hour by hour (an elastic floor: resolve gave it the day's hours) is
    # billed by its own hours, what the base leaves
    hourly = bool(np.isfinite(np.asarray(burst.get(HOUR_DEMAND_RATIOS[0], np.nan),
                                         dtype=np.float64)).any())
    base_day, burst_day, burst_peak, burst_hours = split(
        np.broadcast_to(demand, shape), profile, np.broadcast_to(capacity, shape), hourly)
    spares = np.nan_to_num(base.get("redundancy_instances", 0.0))
    names = [COST, *wanted]
    # the base's instances are chosen, not sized for a peak: billed = min_instances (its
    # serving instances and spares); a zero peak keeps the sizing steps from adding any
    base_out = evaluate_arrays({**base, "demand_tokens_per_day": base_day, "peak_factor": 0.0,
                                "demand_requests_per_s": np.nan,
                                "min_instances": n + spares}, names)
    burst_out = evaluate_arrays({**burst, "demand_tokens_per_day": burst_day,
                                 "peak_factor": burst_peak, "demand_requests_per_s": np.nan,
                                 **burst_hours}, names)
    total = base_day + burst_day

    def held(values: Any, tokens: np.ndarray) -> np.ndarray:
        return np.where(tokens > 0, np.broadcast_to(values, shape), 0.0)

    def blend(name: str) -> np.ndarray:
        parts = [(held(out[name], day), day) for out, day in
                 ((base_out, base_day), (burst_out, burst_day))]
        return sum((v * d for v, d in parts), np.zeros(shape)) / total

    return Figures(
        base_instances=np.broadcast_to(n, shape), base_tokens_per_day=base_day,
        burst_tokens_per_day=burst_day, base_cost_eur=held(base_out[COST], base_day),
        burst_cost_eur=held(burst_out[COST], burst_day),
        blended={name: blend(name) for name in wanted} if blended else {},
        base={name: np.broadcast_to(base_out[name], shape) for name in wanted},
        burst={name: np.broadcast_to(burst_out[name], shape) for name in wanted})


#: entries (sizes x draws x months) of one chunk of months in `over_horizon`: the months are
#: evaluated together in chunks of at most this many (at least one month each), so a Monte
#: Carlo's 10,000 draws over a horizon of 120 months and more are not held at once (the
#: hours are not an axis: `split` adds them)
CHUNK_ENTRIES = 1 << 19


def over_horizon(base: Mapping[str, Any], burst: Mapping[str, Any], sizes: Any,
                 profile: Sequence[float], wanted: Sequence[str], path: plan.Path,
                 chunk_entries: int = CHUNK_ENTRIES) -> Horizon:
    """The mix over the plan's horizon at each base size in `sizes` (docs/decision.md "Mixes",
    "Under a plan"): each month m at its demand (`path.demand` of the base's
    demand_tokens_per_day and demand_growth_per_year), `evaluate`'s split with the base at n
    for the share of the month its nodes serve, clip(m - lead_time_months, 0, 1) as
    plan.months, and at 0 (the burst serving everything) for the rest; the months summed,
    the cost and tokens also discounted (plan.Path.present_value).

    The months are an axis of their own, (sizes, draws, months), evaluated together in
    chunks of months of at most `chunk_entries` entries (at least one month each);
    the base at 0 only in the months its nodes do not serve in full in some draw."""
    base = {k: _row(v) for k, v in base.items()}
    demand = _path(base, path)  # (..., months)
    lead = np.asarray(base.get("lead_time_months", 0.0), dtype=np.float64)
    share = path.served(lead[..., None])  # (..., months)
    # the months whose share is below 1 in some draw: the burst serves the rest alone
    before = np.any(np.reshape(share < 1.0, (-1, path.months)), axis=0)
    # the horizon's CPM is its discounted cost over its discounted tokens, not a weighting
    names = [name for name in wanted if name != "cpm_eur_per_mtok"]
    lifted = {k: _month_axis(v) for k, v in base.items()}
    theirs = {k: _month_axis(_row(v)) for k, v in burst.items()}
    sizes = np.asarray(sizes, dtype=np.float64).ravel()
    n = sizes.reshape(-1, 1, 1)
    draws = max((np.shape(v)[1] for v in (*lifted.values(), *theirs.values())
                 if np.ndim(v) == 3), default=1)
    step = max(1, chunk_entries // ((len(sizes) + 1) * draws))
    per_mtok = DAYS_PER_MONTH / TOKENS_PER_MTOK
    chunks = [_months(lifted, theirs, n, profile, names, demand[..., a:a + step],
                      share[..., a:a + step], np.flatnonzero(before[a:a + step]), per_mtok)
              for a in range(0, path.months, step)]
    # C order, the months last: each sum over them in the same order whatever the chunks
    series = {key: chunks[0][key] if len(chunks) == 1 else
              np.concatenate([c[key] for c in chunks], axis=-1) for key in chunks[0]}
    shape = series["cost:base"].shape[:-1]
    return Horizon(
        base_instances=np.broadcast_to(sizes.reshape(-1, 1), shape), months=path.months,
        cost_pv_eur={p: path.present_value(series[f"cost:{p}"]) for p in PARTS},
        cost_eur={p: series[f"cost:{p}"].sum(axis=-1) for p in PARTS},
        mtok_pv={p: path.present_value(series[f"mtok:{p}"]) for p in PARTS},
        mtok={p: series[f"mtok:{p}"].sum(axis=-1) for p in PARTS},
        weighted={p: {k: series[f"{k}:{p}"].sum(axis=-1) for k in names} for p in PARTS},
        cost_by_month={p: series[f"cost:{p}"] for p in PARTS},
        mtok_by_month={p: series[f"mtok:{p}"] for p in PARTS})


def _months(base: Mapping[str, Any], burst: Mapping[str, Any], n: np.ndarray,
            profile: Sequence[float], names: Sequence[str], demand: np.ndarray,
            share: np.ndarray, alone_in: np.ndarray, per_mtok: float
            ) -> dict[str, np.ndarray]:
    """A chunk of months of `over_horizon`, each (sizes, draws, months of the chunk): each
    part's cost, tokens in millions and tokens x figure (`names`), the base serving `share`
    of each month at its size and the burst alone the rest, in the months `alone_in` (the
    chunk's positions whose share is below 1 in some draw)."""
    at_n = _evaluate({**base, "demand_tokens_per_day": demand}, burst, n, profile, names,
                     blended=False)
    shape = np.broadcast_shapes(np.shape(share), at_n.base_tokens_per_day.shape)
    base_tokens = share * at_n.base_tokens_per_day * per_mtok
    burst_tokens = share * at_n.burst_tokens_per_day * per_mtok
    out = {"cost:base": share * at_n.base_cost_eur, "cost:burst": share * at_n.burst_cost_eur,
           "mtok:base": base_tokens, "mtok:burst": burst_tokens}
    # each part's month: its tokens x its figure (the base serves none at 0)
    for name in names:
        out[f"{name}:base"] = _held(base_tokens, at_n.base[name])
        out[f"{name}:burst"] = _held(burst_tokens, at_n.burst[name])
    out = {k: np.ascontiguousarray(np.broadcast_to(v, shape)) for k, v in out.items()}
    if alone_in.size:  # the share of those months the burst serves alone: the base at 0
        at_0 = _evaluate({**base, "demand_tokens_per_day": demand[..., alone_in]}, burst,
                         np.zeros((1, 1, 1)), profile, names, blended=False)
        rest = 1.0 - share[..., alone_in]
        alone = rest * at_0.burst_tokens_per_day * per_mtok
        added = {"mtok:burst": alone, "cost:burst": rest * at_0.burst_cost_eur,
                 **{f"{name}:burst": _held(alone, at_0.burst[name]) for name in names}}
        # a draw whose month the base serves in full adds nothing, even where the burst
        # lacks the figure (0 x null is 0, not null), as plan.horizon's fallback
        for key, value in added.items():
            out[key] = np.array(out[key], order="C")  # its own, written
            month = out[key][..., alone_in]
            out[key][..., alone_in] = np.where(rest > 0, month + value, month)
    return out


def _month_axis(value: Any) -> Any:
    """An input as `_row` gives it, (1, draws), with a months axis: (1, draws, 1)."""
    return value[..., None] if np.ndim(value) == 2 else value


def at_size(base: Mapping[str, Any], burst: Mapping[str, Any], n: float | None,
            profile: Sequence[float], wanted: Sequence[str], path: plan.Path | None = None
            ) -> dict[str, np.ndarray]:
    """The blended figures `wanted` of the mix with its base at `n` instances (None: NaN
    figures), each (1, draws); under a plan (`path`), those of plan.REPLACED the horizon's,
    the others the first month's."""
    out = evaluate(base, burst, [n], profile, wanted).blended
    if path is None:
        return out
    planned = [k for k in plan.REPLACED if k in wanted]
    return {**out, **over_horizon(base, burst, [n], profile, planned, path).blended}


def max_base_over(base: Mapping[str, Any], path: plan.Path) -> int:
    """The pure own fleet's serving instances at the horizon's largest month's demand."""
    demand = _path({k: _row(v) for k, v in base.items()}, path)
    return max_base_instances({**base, "demand_tokens_per_day": np.max(demand)})


def _path(base: Mapping[str, Any], path: plan.Path) -> np.ndarray:
    """Each month's tokens/day (..., months): the base's demand grown as plan.months grows
    it (`plan.Path.demand`)."""
    return np.asarray(path.demand(
        np.asarray(base["demand_tokens_per_day"], dtype=np.float64)[..., None],
        np.asarray(base.get("demand_growth_per_year", 0.0), dtype=np.float64)[..., None]))


def _held(tokens: np.ndarray, figure: np.ndarray) -> np.ndarray:
    """The tokens x the figure, 0 where no token is served (a part not held has none)."""
    with np.errstate(all="ignore"):
        return np.where(tokens > 0, tokens * figure, 0.0)


def share_at_level(figures: Figures | Horizon, base_level: int, burst_level: int, level: int
                   ) -> np.ndarray:
    """Share of the tokens served at sovereignty `level` or above."""
    share = figures.base_share
    return (share * (base_level >= level)) + (1.0 - share) * (burst_level >= level)


def best_size(figures: Figures | Horizon, base_level: int, burst_level: int,
              policy: Policy | None) -> int | None:
    """The row (base size) of the lowest cost at the point (one draw: the month's, or under a
    plan the horizon's discounted cost) among those the policy allows (the fewest instances
    on a tie); None when none is allowed or computable."""
    cost = figures.objective[:, 0]
    allowed = np.isfinite(cost)
    if policy is not None:
        allowed &= share_at_level(figures, base_level, burst_level, policy.level)[:, 0] \
            >= policy.share
    if not allowed.any():
        return None
    return int(np.argmin(np.where(allowed, cost, np.inf)))


def _row(value: Any) -> Any:
    """An input as a (1, draws) row (a number stays a number; a string, a 0-d array)."""
    v = np.asarray(value)
    if v.dtype.kind in "US" or v.ndim == 0:
        return v
    return v.reshape(1, -1)
