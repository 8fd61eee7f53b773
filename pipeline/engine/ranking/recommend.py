"""The recommendation: which eligible candidate to choose, by which rule, what it costs at the
declared demand, and the input values at which the runner-up would become the choice.

Rules (`policy.choose`): `"cpm"` (the default), `"carbon"` or `"energy"` choose the frontier
candidate lowest on that metric; `{ weights = { cpm = 0.6, carbon = 0.4 } }` scores each
eligible candidate by the weighted sum of its objectives, each scaled to 0 (the best eligible
value) .. 1 (the worst), and chooses the frontier candidate with the lowest score. The
runner-up is the next eligible candidate by the same score.

What would change the choice is solved on the metric steps (`metrics.evaluate`), never read
off a chart: for each of the inputs that move the two candidates' figures most (the tornado's
top rows, and the demand), the value of that input's key at which the runner-up's score meets
the chosen one's, every other input at its mode. A key shared by other eligible candidates
moves them too: the one chosen at the threshold, when not the runner-up, is named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from pipeline.engine.fleet import mix, plan
from pipeline.engine.metrics import INPUTS, STEP_BY_NAME, evaluate_arrays
from pipeline.engine.ranking.pareto import OBJECTIVES

#: every input's (unit, meaning): the metric steps' and a plan's own
UNITS = {**INPUTS, **plan.PLAN_INPUTS}
#: how many of each candidate's top tornado inputs are solved for
TOP_INPUTS = 3
#: the search for a crossing spans the current value / SPAN .. x SPAN (inside the domain)
SPAN = 100.0
GRID = 241  # points per search pass; three passes give a relative precision below 1e-6


@dataclass(frozen=True)
class Rule:
    """How the preferred candidate is chosen: objective -> weight (weights sum to 1)."""

    weights: dict[str, float]

    @classmethod
    def of(cls, choose: str | Mapping[str, Any]) -> Rule:
        if isinstance(choose, str):
            return cls({choose: 1.0})
        weights = dict(choose["weights"])
        total = sum(weights.values())
        return cls({k: v / total for k, v in weights.items()})

    @property
    def single(self) -> str | None:
        return next(iter(self.weights)) if len(self.weights) == 1 else None

    @property
    def metric(self) -> str:
        """The metric the reason quotes and the crossings are solved on: the single
        objective's, else the CPM."""
        return OBJECTIVES[self.single][0] if self.single else "cpm_eur_per_mtok"

    def describe(self) -> str:
        if (only := self.single) is not None:
            return f"the frontier candidate with the lowest {OBJECTIVES[only][0]}" if \
                OBJECTIVES[only][1] < 0 else \
                f"the frontier candidate with the highest {OBJECTIVES[only][0]}"
        parts = ", ".join(f"{w:g} x {name}" for name, w in self.weights.items())
        return (f"the frontier candidate with the lowest weighted score ({parts}; each "
                "objective scaled 0 = best .. 1 = worst eligible value)")


@dataclass(frozen=True)
class Scale:
    """Per objective: (best, worst) over the eligible candidates, fixed for the solving."""

    bounds: dict[str, tuple[float, float]]

    @classmethod
    def over(cls, eligible: pl.DataFrame, rule: Rule) -> Scale:
        bounds = {}
        for name in rule.weights:
            column, sign = OBJECTIVES[name]
            values = eligible[column].cast(pl.Float64).drop_nulls().to_list() or [0.0]
            best, worst = (min(values), max(values)) if sign < 0 else (max(values), min(values))
            bounds[name] = (best, worst)
        return cls(bounds)

    def score(self, rule: Rule, values: Mapping[str, Any]) -> Any:
        """0 is best. A single-objective rule scores the raw metric (lower is better). A figure
        that is not there (a metric outside the policy's objectives) scores worst. `values`
        may hold numpy arrays (one score per element, the same arithmetic)."""
        if any(values[OBJECTIVES[name][0]] is None for name in rule.weights):
            return math.inf
        if (only := rule.single) is not None:
            return values[OBJECTIVES[only][0]] * -OBJECTIVES[only][1]
        total = 0.0
        for name, weight in rule.weights.items():
            best, worst = self.bounds[name]
            value = values[OBJECTIVES[name][0]]
            total += weight * (0.0 if best == worst else (value - best) / (worst - best))
        return total


def order(eligible: pl.DataFrame, rule: Rule) -> list[str]:
    """Eligible ids, best score first (ties: lower Pareto rank, then id)."""
    scale = Scale.over(eligible, rule)
    scored = [(scale.score(rule, row), row["pareto_rank"], row["id"])
              for row in eligible.iter_rows(named=True)]
    return [cid for _, _, cid in sorted(scored)]


def choice(eligible: pl.DataFrame, rule: Rule) -> tuple[str, str | None]:
    """The chosen candidate (the best-scored one on the frontier) and the runner-up (the next
    eligible one by the same score) among `eligible` (with pareto_rank; not empty)."""
    ranked = order(eligible, rule)
    frontier = set(eligible.filter(pl.col("pareto_rank") == 1)["id"].to_list())
    chosen = next(cid for cid in ranked if cid in frontier)
    return chosen, next((cid for cid in ranked if cid != chosen), None)


def recommend(table: pl.DataFrame, point: pl.DataFrame, inputs: pl.DataFrame,
              tornado: pl.DataFrame, p_cheapest: Mapping[str, float], rule: Rule,
              has_demand: bool, path: plan.Path | None = None,
              fallbacks: Mapping[str, str | None] | None = None,
              mixes: Mapping[str, mix.Chosen] | None = None) -> dict[str, Any]:
    """The recommendation object of the JSON contract.

    `table`: the scorecard (one row per candidate, with eligible, exclusion_reason,
    pareto_rank and every metric step); `point`: the candidates' inputs at their modes
    (uncertainty.point_frame); `inputs`: the long inputs frame (id, input, key, low, mode,
    high); `tornado`: uncertainty.tornado; `p_cheapest`: eligible id -> share of Monte Carlo
    draws in which it has the lowest CPM. Under a plan (`path`, with each candidate's
    `fallbacks`) the crossings are solved on the horizon's figures, the demand's growth
    among the inputs; `mixes`: the mixes by id (their parts' inputs move them, at their
    chosen base size)."""
    excluded = [{"id": r["id"], "reason": r["exclusion_reason"]}
                for r in table.filter(~pl.col("eligible")).iter_rows(named=True)]
    eligible = table.filter(pl.col("eligible"))
    empty: dict[str, Any] = {
        "candidate": None, "rule": rule.describe(), "runner_up": None, "excluded": excluded,
        "monthly_cost_eur": None, "annual_cost_eur": None, "cost_split": None,
        "what_would_change_it": [], "p_chosen_cheapest": None,
    }
    if eligible.height == 0:
        return {**empty, "reason": "no candidate is eligible: see each exclusion reason"}
    chosen, runner = choice(eligible, rule)
    frontier = set(eligible.filter(pl.col("pareto_rank") == 1)["id"].to_list())
    row = eligible.row(by_predicate=pl.col("id") == chosen, named=True)
    cost = _cost_at_demand(row) if has_demand else None
    result = {
        **empty,
        "candidate": chosen,
        "runner_up": runner,
        "reason": _reason(row, runner, eligible, rule, len(frontier)),
        "p_chosen_cheapest": p_cheapest.get(chosen),
        **(cost or {"monthly_cost_reason": "no [demand] is declared: costs per month need "
                                           "a daily volume"}),
    }
    if runner is not None:
        scale = Scale.over(eligible, rule)
        result["what_would_change_it"] = what_would_change_it(
            chosen, runner, point, inputs, tornado, rule, scale, has_demand, table,
            path, fallbacks or {}, mixes or {})
    return result


def _cost_at_demand(row: Mapping[str, Any]) -> dict[str, Any]:
    monthly = row["monthly_cost_eur"]
    split = None
    if row["cost_model"] == "tco" and monthly is not None:
        capital = row["monthly_capital_eur"]
        split = {"capex_eur_per_month": capital, "opex_eur_per_month": monthly - capital}
    return {"monthly_cost_eur": monthly,
            "annual_cost_eur": None if monthly is None else monthly * 12.0,
            "cost_split": split}


def _reason(row: Mapping[str, Any], runner: str | None, eligible: pl.DataFrame, rule: Rule,
            frontier_size: int) -> str:
    metric = rule.metric
    value = row[metric]
    text = (f"{row['id']} is {rule.describe()} ({metric} {_figure(value)}) among "
            f"{eligible.height} eligible candidate(s), {frontier_size} on the frontier")
    if runner is not None:
        other = eligible.row(by_predicate=pl.col("id") == runner, named=True)[metric]
        text += f"; the runner-up {runner} has {_figure(other)}"
    return text + "."


def what_would_change_it(chosen: str, runner: str, point: pl.DataFrame, inputs: pl.DataFrame,
                         tornado: pl.DataFrame, rule: Rule, scale: Scale, has_demand: bool,
                         table: pl.DataFrame | None = None, path: plan.Path | None = None,
                         fallbacks: Mapping[str, str | None] | None = None,
                         mixes: Mapping[str, mix.Chosen] | None = None
                         ) -> list[dict[str, Any]]:
    """For the top inputs of both candidates (and the demand): the key's value at which the
    runner-up's score equals the chosen one's, or nothing when no value in range does.
    `table` (the scorecard) gives an objective that is no metric step (the sovereignty
    level of a weighted rule). Under a plan the figures are the horizon's (plan.horizon,
    each candidate's gap to its fallback, whose inputs of a shared key move with it), and
    the demand's growth is solved for too. A mix in `mixes` stands for its parts: their top
    inputs, at its chosen base size."""
    fallbacks = fallbacks or {}
    mixes = mixes or {}
    # each of the two, or a mix's parts: the candidates whose inputs are searched
    searched = {cid: [p[0] for p in (mixes[cid].base, mixes[cid].burst)] if cid in mixes
                else [cid] for cid in (chosen, runner)}
    helpers = tuple(f for c in (chosen, runner) if (f := fallbacks.get(c)) is not None
                    and path is not None)
    pair = inputs.filter(pl.col("id").is_in(
        [*(o for ids in searched.values() for o in ids), *helpers]))
    metric = rule.metric
    if metric not in tornado["metric"].unique().to_list():
        metric = "cpm_eur_per_mtok"
    keys: list[str] = []
    for cid in [o for ids in searched.values() for o in ids]:
        top = tornado.filter((pl.col("candidate") == cid) & (pl.col("metric") == metric))
        for inp in top.head(TOP_INPUTS)["input"].to_list():
            keys += pair.filter((pl.col("id") == cid) & (pl.col("input") == inp))["key"].to_list()
    if has_demand:
        keys += pair.filter(pl.col("input") == "demand_tokens_per_day")["key"].to_list()[:1]
    if path is not None:
        keys += pair.filter(pl.col("input") == "demand_growth_per_year")["key"].to_list()[:1]
    points = points_of(point, tuple(dict.fromkeys(
        [*(o for ids in searched.values() for o in ids), *helpers])), table)
    for cid in (chosen, runner):
        if cid in mixes and table is not None:  # its objectives that are no step: its own
            extra = [c for c, _ in OBJECTIVES.values()
                     if c not in STEP_BY_NAME and c in table.columns]
            points[cid] = table.filter(pl.col("id") == cid).select(extra).row(0, named=True)
    unique = list(dict.fromkeys(keys))
    wheres = [pair.filter(pl.col("key") == key) for key in unique]
    thresholds = _solve_all(points, wheres, chosen, runner, rule, scale, path, fallbacks,
                            mixes)
    holding = _holders(inputs)
    there = _chosen_there(dict(zip(unique, thresholds, strict=True)), chosen, runner, point,
                          inputs, holding, rule, scale, table, path, fallbacks, mixes)
    out = []
    for key, where, solved in zip(unique, wheres, thresholds, strict=True):
        if solved is None:
            continue
        first = where.row(0, named=True)
        current = float(first["mode"])
        unit = UNITS[first["input"]][0]
        holders = holding[key]
        # a mix moves with its parts' inputs: it shares them
        owners = sorted(holders | {m for m, c in mixes.items()
                                   if {c.base[0], c.burst[0]} & holders})
        other = there.get(key)  # who is chosen there, when not the runner-up
        # (the sharing said by naming who moves with it: the text fits one line on the page)
        subject = (f"{owners[0]}'s {first['input']}" if len(owners) == 1 else
                   f"{first['input']} ({key})" if other is not None else
                   f"{first['input']} ({key}, shared by {len(owners)} candidates)")
        direction = "falls below" if solved < current else "rises above"
        when = f"if {subject} {direction} {_figure(solved)} {unit} (now {_figure(current)})"
        out.append({
            "key": key, "input": first["input"], "unit": unit, "candidates": owners,
            "current": current, "threshold": solved, "direction": direction.split()[0],
            "within_stated_range": bool(first["low"] <= solved <= first["high"]),
            "text": f"{runner} becomes the choice {when}" if other is None else
                    f"{runner} ties {when}; {other} is chosen there",
        })
    return out


def _chosen_there(thresholds: Mapping[str, float | None], chosen: str, runner: str,
                  point: pl.DataFrame, inputs: pl.DataFrame, holding: Mapping[str, set[str]],
                  rule: Rule, scale: Scale,
                  table: pl.DataFrame | None, path: plan.Path | None,
                  fallbacks: Mapping[str, str | None] | None,
                  mixes: Mapping[str, mix.Chosen] | None) -> dict[str, str]:
    """Key -> the candidate chosen at its threshold when that is not the runner-up: a key
    shared by other eligible candidates (the demand, a TCO profile's capex) moves their
    figures too, and one of them may beat both there. Each eligible candidate holding the
    key (a mix through its parts) is scored with the key at its threshold; one that does not
    hold it keeps its score, no better than the runner-up's, which meets the chosen one's
    there. Needs `table` (the eligible candidates); `holding`: `_holders(inputs)`."""
    fallbacks = fallbacks or {}
    mixes = mixes or {}
    if table is None:
        return {}
    eligible = set((table.filter(pl.col("eligible")) if "eligible" in table.columns
                    else table)["id"].to_list())
    solved = {k: t for k, t in thresholds.items() if t is not None}
    movers: dict[str, list[str]] = {}
    for key in solved:
        holders = holding[key]
        moved = holders | {m for m, c in mixes.items() if {c.base[0], c.burst[0]} & holders}
        others = sorted((moved & eligible) - {chosen, runner})
        if others:
            movers[key] = [chosen, runner, *others]
    if not movers:
        return {}
    cids = tuple(dict.fromkeys(c for ids in movers.values() for c in ids))
    plain = [c for c in cids if c not in mixes]
    parts = [p for c in cids if c in mixes for p in (mixes[c].base[0], mixes[c].burst[0])]
    helpers = [f for c in [*plain, *parts] if (f := fallbacks.get(c)) is not None
               and path is not None]
    points = points_of(point, tuple(dict.fromkeys([*plain, *parts, *helpers])), table)
    extra = [c for c, _ in OBJECTIVES.values() if c not in STEP_BY_NAME and c in table.columns]
    for cid in cids:
        if cid in mixes:  # its objectives that are no step: its own
            points[cid] = table.filter(pl.col("id") == cid).select(extra).row(0, named=True)
    keys = list(movers)
    wheres = {i: inputs.filter(pl.col("key") == key) for i, key in enumerate(keys)}
    values = {i: np.array([solved[key]]) for i, key in enumerate(keys)}
    scored = _scores(points, wheres, cids, rule, scale, values, path, fallbacks, mixes)
    out = {}
    for i, key in enumerate(keys):
        at = {c: float(scored[c][i][0]) for c in movers[key]}
        meet = min(at[chosen], at[runner])  # equal at the threshold, to its precision
        best = min(movers[key][2:], key=lambda c: (at[c], c))
        if at[best] < meet - 1e-9 * max(1.0, abs(meet)):
            out[key] = best
    return out


def points_of(point: pl.DataFrame, ids: tuple[str, ...], table: pl.DataFrame | None = None
              ) -> dict[str, dict[str, Any]]:
    """Candidate -> its inputs at their modes (a row of `point`; NaN for null), with the
    objectives of `table` that are no metric step (the sovereignty level)."""
    extra = [c for c, _ in OBJECTIVES.values() if c not in STEP_BY_NAME and table is not None
             and c in table.columns and c not in point.columns]
    rows = {r["id"]: r for r in point.filter(pl.col("id").is_in(ids)).iter_rows(named=True)}
    more = ({r.pop("id"): r for r in table.filter(pl.col("id").is_in(ids))
             .select("id", *extra).iter_rows(named=True)} if extra and table is not None
            else {})
    out = {}
    for cid in ids:
        row = {**rows[cid], **more.get(cid, {})}
        out[cid] = {name: np.nan if v is None else v for name, v in row.items() if name != "id"}
    return out


def _holders(inputs: pl.DataFrame) -> dict[str, set[str]]:
    """Key -> the ids of the candidates holding it."""
    out: dict[str, set[str]] = {}
    for key, cid in inputs.select("key", "id").iter_rows():
        out.setdefault(key, set()).add(cid)
    return out


def _figure(value: float | None) -> str:
    """4 significant digits, thousands separated: 204,300 EUR, 3,858 tokens/s, 0.4107."""
    if value is None:
        return "n/a"
    if abs(value) >= 1e4:
        return f"{float(f'{value:.4g}'):,.0f}"
    return f"{value:.4g}"


def _search_range(where: pl.DataFrame) -> tuple[float, float, float] | None:
    """(current, low, high) of the key's search, or None when it cannot be searched (a
    current value not positive, an empty span)."""
    current = float(where["mode"][0])
    if not math.isfinite(current) or current <= 0:
        return None
    share = UNITS[where["input"][0]][0] == "share"
    low, high = current / SPAN, (1.0 if share else current * SPAN)
    return None if low >= high else (current, low, high)


def _solve_all(points: Mapping[str, Mapping[str, Any]], wheres: list[pl.DataFrame],
               chosen: str, runner: str, rule: Rule, scale: Scale,
               path: plan.Path | None = None,
               fallbacks: Mapping[str, str | None] | None = None,
               mixes: Mapping[str, mix.Chosen] | None = None) -> list[float | None]:
    """For each key (set on every (id, input) of its `where`): the value nearest its current
    one at which score(runner) - score(chosen) changes sign; None when none does within the
    span. Three passes of GRID points, each narrowing to the interval of the flip nearest the
    current value, then a linear interpolation inside the last interval; the keys go through
    each pass together (one evaluation of the metric steps per pass, not one per key and
    pass: the steps are element by element, so a key's figures do not depend on the
    others'). `points`: each of the two candidates' inputs at their modes (`points_of`)."""
    solved: list[float | None] = [None] * len(wheres)
    ranges = {i: r for i, where in enumerate(wheres) if (r := _search_range(where)) is not None}
    bounds = {i: (low, high) for i, (_, low, high) in ranges.items()}
    for pass_ in range(3):
        grids = {i: np.geomspace(low, high, GRID) for i, (low, high) in bounds.items()}
        # the first pass also evaluates each key at its current value: a gap there that is
        # not finite, or zero, has no crossing to speak of
        values = {i: np.concatenate([[ranges[i][0]], grid]) if pass_ == 0 else grid
                  for i, grid in grids.items()}
        gaps = _gaps(points, {i: wheres[i] for i in values}, chosen, runner, rule, scale,
                     values, path, fallbacks or {}, mixes or {})
        last = {}
        for i, grid in grids.items():
            found = gaps[i]
            if pass_ == 0:
                gap0, found = found[0], found[1:]
                if not math.isfinite(gap0) or gap0 == 0:
                    continue
            flips = np.flatnonzero(np.isfinite(found[:-1]) & np.isfinite(found[1:])
                                   & (np.sign(found[:-1]) != np.sign(found[1:])))
            if flips.size == 0:
                continue
            nearest = flips[np.argmin(np.abs(np.log(grid[flips] / ranges[i][0])))]
            last[i] = (float(grid[nearest]), float(grid[nearest + 1]),
                       float(found[nearest]), float(found[nearest + 1]))
        bounds = {i: (low, high) for i, (low, high, _, _) in last.items()}
        if not bounds:
            break
    for i, (low, high, g_low, g_high) in last.items():
        solved[i] = float(low + g_low / (g_low - g_high) * (high - low))
    return solved


def _gaps(points: Mapping[str, Mapping[str, Any]], wheres: Mapping[int, pl.DataFrame],
          chosen: str, runner: str, rule: Rule, scale: Scale,
          values: Mapping[int, np.ndarray], path: plan.Path | None = None,
          fallbacks: Mapping[str, str | None] | None = None,
          mixes: Mapping[str, mix.Chosen] | None = None) -> dict[int, np.ndarray]:
    """Per key i: score(runner) - score(chosen) with the key (set on every (id, input) of
    wheres[i]) at each of values[i], the other inputs at `points` (candidate -> column ->
    value)."""
    if not values:
        return {}
    scored = _scores(points, wheres, (runner, chosen), rule, scale, values, path, fallbacks,
                     mixes)
    return {i: scored[runner][i] - scored[chosen][i] for i in values}


def _scores(points: Mapping[str, Mapping[str, Any]], wheres: Mapping[int, pl.DataFrame],
            cids: tuple[str, ...], rule: Rule, scale: Scale,
            values: Mapping[int, np.ndarray], path: plan.Path | None = None,
            fallbacks: Mapping[str, str | None] | None = None,
            mixes: Mapping[str, mix.Chosen] | None = None
            ) -> dict[str, dict[int, np.ndarray]]:
    """Per candidate of `cids` and key i: its score with the key (set on every (id, input)
    of wheres[i]) at each of values[i], the other inputs at `points`. The metric steps run
    over numpy arrays (`metrics.evaluate_arrays`, the same formulas as `evaluate`), every
    key's trials side by side: one array per input a key sets, one number per input none
    does."""
    order = list(values)
    trials = np.concatenate([np.asarray(values[i], dtype=float) for i in order])
    ends = np.cumsum([len(values[i]) for i in order])
    span = {i: slice(int(end) - len(values[i]), int(end)) for i, end in zip(order, ends,
                                                                          strict=True)}
    columns = sorted({OBJECTIVES[o][0] for o in rule.weights})
    steps = [c for c in columns if c in STEP_BY_NAME]
    # each key's (id, input) pairs, read out of their frames once
    setting = {i: wheres[i].select("id", "input").rows() for i in order}
    holders = {i: {owner for owner, _ in setting[i]} for i in order}

    def tried(cid: str, at: np.ndarray) -> dict[str, Any]:
        """`cid`'s inputs at their modes, each key's trials in its span where it sets one,
        at the trials `at`."""
        given: dict[str, Any] = dict(points[cid])
        for i in order:
            for owner, name in setting[i]:
                if owner != cid:
                    continue
                if np.ndim(given.get(name, np.nan)) == 0:
                    given[name] = np.full(trials.shape, given.get(name, np.nan), dtype=float)
                given[name][span[i]] = trials[span[i]]
        return {k: v[at] if isinstance(v, np.ndarray) and v.shape == trials.shape else v
                for k, v in given.items()}

    scored = {}
    mixes = mixes or {}
    for cid in cids:
        # whose inputs move its figures: its own (and under a plan its fallback's), a mix's
        # parts'. The trials of keys none of them holds are all its point: one of them is
        # computed for all (the steps are element by element)
        fallback = (fallbacks or {}).get(cid) if path is not None else None
        movers = ({mixes[cid].base[0], mixes[cid].burst[0]} if cid in mixes
                  else {cid} | ({fallback} if fallback is not None else set()))
        moved = np.zeros(trials.shape, dtype=bool)
        for i in order:
            if holders[i] & movers:
                moved[span[i]] = True
        at = np.flatnonzero(moved)
        back = np.full(trials.shape, len(at), dtype=np.int64)  # the point: last
        back[at] = np.arange(len(at))
        if not moved.all():
            at = np.append(at, np.flatnonzero(~moved)[0])
        shape = at.shape
        if cid in mixes:  # its parts tried, the mix at its chosen base size
            m = mixes[cid]
            given = dict(points[cid])
            parts = (tried(m.base[0], at), tried(m.burst[0], at))
            # (under a plan the horizon's figures, the trials side by side as draws)
            blended = mix.at_size(*parts, m.base_instances, m.profile, steps, path)
            out: dict[str, Any] = {c: blended[c][0] for c in steps}
        else:
            given = tried(cid, at)
            out = evaluate_arrays(given, steps)
            if path is not None:  # the horizon's figures, the trials side by side as draws
                planned = plan.horizon(_as_draws(given, shape), None if fallback is
                                       None else _as_draws(tried(fallback, at), shape),
                                       path)
                out.update({k: planned[k][0] for k in plan.REPLACED if k in out})
        # an objective that is no step (the sovereignty level) is the candidate's own figure
        arrays = {c: np.broadcast_to(np.asarray(out[c] if c in out else given.get(c, np.nan),
                                                dtype=float), shape) for c in columns}
        score = np.broadcast_to(np.asarray(scale.score(rule, arrays), dtype=float),
                                shape)[back]
        scored[cid] = {i: score[span[i]] for i in order}
    return scored


def _as_draws(given: Mapping[str, Any], shape: tuple[int, ...]) -> dict[str, Any]:
    """A candidate's inputs (numbers, or one array of trials of `shape`) as plan.horizon
    takes them: (1, trials). The demand is one array of trials even when no tried key sets
    it, so the months' shapes are the trials' (one tried key beside a single-number growth
    otherwise left the months one shape and a step's figures another)."""
    demand = np.broadcast_to(np.asarray(given.get("demand_tokens_per_day", np.nan),
                                        dtype=float), shape)
    return {k: (np.asarray(v)[None, :] if np.ndim(v) == 1 else v)
            for k, v in {**given, "demand_tokens_per_day": demand}.items()}
