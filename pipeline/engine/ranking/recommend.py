"""The recommendation: which eligible candidate to choose, by which rule, what it costs at the
declared demand, and the input values at which the runner-up would become the choice.

Rules (`policy.choose`): `"cpm"` (the default), `"carbon"` or `"energy"` choose the frontier
candidate lowest on that metric; `{ weights = { cpm = 0.6, carbon = 0.4 } }` scores each
eligible candidate by the weighted sum of its objectives, each scaled to 0 (the best eligible
value) .. 1 (the worst), and chooses the frontier candidate with the lowest score. The
runner-up is the next eligible candidate by the same score.

What would change the choice is solved on the metric steps (`metrics.evaluate`), never read
off a chart: for each of the inputs that move the two candidates' figures most (the tornado's
top rows, and the demand), the value of that input's key nearest its current one at which
another eligible candidate's score falls below the chosen one's, every other input at its
mode, and who that is: the runner-up, or another candidate a shared key (the demand, a TCO
profile) moves too.
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
#: how many eligible candidates, the best scored after the chosen one, are searched for the
#: value at which they overtake it: the search's cost grows with them
RIVALS = 20
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
    """For the top inputs of both candidates (and the demand): the key's value nearest its
    current one at which another eligible candidate's score falls below the chosen one's, and
    which candidate that is (the runner-up, or another that moves with the key: a shared TCO
    profile, the demand), or nothing when no value in range does. The rivals are the RIVALS
    eligible candidates of `table` best scored after the chosen one (the runner-up alone
    without a `table`); `table` also gives an objective that is no metric step (the
    sovereignty level of a weighted rule). Under a plan the figures are the horizon's
    (plan.horizon, each candidate's gap to its fallback, whose inputs of a shared key move
    with it), and the demand's growth is solved for too. A mix in `mixes` stands for its
    parts: their top inputs, at its chosen base size."""
    fallbacks = fallbacks or {}
    mixes = mixes or {}
    # each of the two, or a mix's parts: the candidates whose inputs are searched
    searched = [o for cid in (chosen, runner) for o in _parts(cid, mixes)]
    helpers = tuple(f for c in (chosen, runner) if (f := fallbacks.get(c)) is not None
                    and path is not None)
    pair = inputs.filter(pl.col("id").is_in([*searched, *helpers]))
    metric = rule.metric
    if metric not in tornado["metric"].unique().to_list():
        metric = "cpm_eur_per_mtok"
    keys: list[str] = []
    for cid in searched:
        top = tornado.filter((pl.col("candidate") == cid) & (pl.col("metric") == metric))
        for inp in top.head(TOP_INPUTS)["input"].to_list():
            keys += pair.filter((pl.col("id") == cid) & (pl.col("input") == inp))["key"].to_list()
    if has_demand:
        keys += pair.filter(pl.col("input") == "demand_tokens_per_day")["key"].to_list()[:1]
    if path is not None:
        keys += pair.filter(pl.col("input") == "demand_growth_per_year")["key"].to_list()[:1]
    rivals = [runner] if table is None else [
        c for c in order(table.filter(pl.col("eligible")) if "eligible" in table.columns
                         else table, rule) if c != chosen][:RIVALS]
    points = _points((chosen, *rivals), point, table, path, fallbacks, mixes)
    unique = list(dict.fromkeys(keys))
    wheres = [inputs.filter(pl.col("key") == key) for key in unique]
    found = _solve_all(points, wheres, chosen, rivals, rule, scale, path, fallbacks, mixes)
    holding = _holders(inputs)
    out = []
    for key, where, solved in zip(unique, wheres, found, strict=True):
        if solved is None:
            continue
        threshold, winner = solved
        first = where.row(0, named=True)
        current = float(first["mode"])
        unit = UNITS[first["input"]][0]
        holders = holding[key]
        # a mix moves with its parts' inputs: it shares them
        owners = sorted(holders | {m for m, c in mixes.items()
                                   if {c.base[0], c.burst[0]} & holders})
        # (the sharing said by naming how many move with it: the text fits one line on the
        # page)
        subject = (f"{owners[0]}'s {first['input']}" if len(owners) == 1 else
                   f"{first['input']} ({key}, shared by {len(owners)} candidates)")
        direction = "falls below" if threshold < current else "rises above"
        out.append({
            "key": key, "input": first["input"], "unit": unit, "candidates": owners,
            "current": current, "threshold": threshold, "direction": direction.split()[0],
            "within_stated_range": bool(first["low"] <= threshold <= first["high"]),
            "text": f"{winner} becomes the choice if {subject} {direction} "
                    f"{_figure(threshold)} {unit} (now {_figure(current)})",
        })
    return out


def _parts(cid: str, mixes: Mapping[str, mix.Chosen]) -> list[str]:
    """The candidates whose inputs move `cid`'s figures: a mix's parts, else itself."""
    return [mixes[cid].base[0], mixes[cid].burst[0]] if cid in mixes else [cid]


def _points(cids: tuple[str, ...], point: pl.DataFrame, table: pl.DataFrame | None,
            path: plan.Path | None, fallbacks: Mapping[str, str | None],
            mixes: Mapping[str, mix.Chosen]) -> dict[str, dict[str, Any]]:
    """`points_of` for the candidates `_scores` scores `cids` from: their parts and, under a
    plan, their fallbacks; a mix's own entry its objectives that are no step (its level)."""
    parts = [p for c in cids for p in _parts(c, mixes)]
    helpers = [f for c in parts if (f := fallbacks.get(c)) is not None and path is not None]
    points = points_of(point, tuple(dict.fromkeys([*parts, *helpers])), table)
    if table is not None:
        extra = [c for c, _ in OBJECTIVES.values()
                 if c not in STEP_BY_NAME and c in table.columns]
        for cid in cids:
            if cid in mixes:
                points[cid] = table.filter(pl.col("id") == cid).select(extra).row(0, named=True)
    return points


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
               chosen: str, rivals: list[str], rule: Rule, scale: Scale,
               path: plan.Path | None = None,
               fallbacks: Mapping[str, str | None] | None = None,
               mixes: Mapping[str, mix.Chosen] | None = None
               ) -> list[tuple[float, str] | None]:
    """For each key (set on every (id, input) of its `where`): the value nearest its current
    one at which some rival's score falls below the chosen one's, with that rival; None when
    none does within the span. A rival scoring no lower than the chosen one at the current
    value (an equal twin) is not searched.

    Three passes of GRID points, each narrowing to the interval of a flip nearest the current
    value, then a linear interpolation inside the last interval. The first pass scores every
    rival on each key's grid; the next two only the (key, rival) intervals that may hold the
    key's nearest flip (an interval whose near end is farther than another's far end cannot).
    Every interval goes through each pass together: one evaluation of the metric steps per
    candidate and pass (the steps are element by element, so an interval's figures do not
    depend on the others'). `points`: `_points` of the chosen one and the rivals."""
    fallbacks, mixes = fallbacks or {}, mixes or {}
    ranges = {i: r for i, where in enumerate(wheres) if (r := _search_range(where)) is not None}
    setting = [where.select("id", "input").rows() for where in wheres]
    # an interval searched: (key, the rivals scored on it) -> its (low, high)
    cells: dict[tuple[int, tuple[str, ...]], tuple[float, float]] = {
        (i, tuple(rivals)): (low, high) for i, (_, low, high) in ranges.items()}
    last: dict[tuple[int, str], tuple[float, float, float, float]] = {}
    for pass_ in range(3):
        if not cells:  # no key to search (none with a span), or no flip left
            break
        units = list(cells)
        grids = {u: np.geomspace(low, high, GRID) for u, (low, high) in cells.items()}
        # the first pass also evaluates each key at its current value: a rival whose gap
        # there is not above zero is no rival to overtake
        values = {n: np.concatenate([[ranges[u[0]][0]], grids[u]]) if pass_ == 0
                  else grids[u] for n, u in enumerate(units)}
        scored = _scores(points, {n: setting[u[0]] for n, u in enumerate(units)},
                         tuple(dict.fromkeys([chosen, *(r for u in units for r in u[1])])),
                         rule, scale, values, path, fallbacks, mixes,
                         {n: (chosen, *u[1]) for n, u in enumerate(units)})
        last = {}
        for n, (i, among) in enumerate(units):
            grid = grids[(i, among)]
            for rival in among:
                found = scored[rival][n] - scored[chosen][n]
                if pass_ == 0:
                    gap0, found = found[0], found[1:]
                    if not math.isfinite(gap0) or gap0 <= 0:
                        continue
                flips = np.flatnonzero(np.isfinite(found[:-1]) & np.isfinite(found[1:])
                                       & (np.sign(found[:-1]) != np.sign(found[1:])))
                if flips.size == 0:
                    continue
                nearest = flips[np.argmin(np.abs(np.log(grid[flips] / ranges[i][0])))]
                last[(i, rival)] = (float(grid[nearest]), float(grid[nearest + 1]),
                                    float(found[nearest]), float(found[nearest + 1]))
        # per key, the intervals that may hold its nearest flip
        reach: dict[int, float] = {}
        for (i, _), (low, high, _, _) in last.items():
            far = max(abs(math.log(v / ranges[i][0])) for v in (low, high))
            reach[i] = min(reach.get(i, math.inf), far)
        last = {u: c for u, c in last.items()
                if min(abs(math.log(v / ranges[u[0]][0])) for v in c[:2]) <= reach[u[0]]}
        cells = {(i, (rival,)): (low, high) for (i, rival), (low, high, _, _) in last.items()}
    solved: list[tuple[float, str] | None] = [None] * len(wheres)
    for (i, rival), (low, high, g_low, g_high) in sorted(
            last.items(), key=lambda c: rivals.index(c[0][1])):
        at = float(low + g_low / (g_low - g_high) * (high - low))
        before = solved[i]
        if before is None or (abs(math.log(at / ranges[i][0]))
                              < abs(math.log(before[0] / ranges[i][0]))):
            solved[i] = (at, rival)
    return solved


def _scores(points: Mapping[str, Mapping[str, Any]],
            setting: Mapping[int, list[tuple[str, str]]], cids: tuple[str, ...],
            rule: Rule, scale: Scale,
            values: Mapping[int, np.ndarray], path: plan.Path | None,
            fallbacks: Mapping[str, str | None], mixes: Mapping[str, mix.Chosen],
            read: Mapping[int, tuple[str, ...]]) -> dict[str, dict[int, np.ndarray]]:
    """Per candidate of `cids` and key i: its score with the key (set on every (id, input)
    of setting[i]) at each of values[i], the other inputs at `points`. The metric steps run
    over numpy arrays (`metrics.evaluate_arrays`, the same formulas as `evaluate`), every
    key's trials side by side: one array per input a key sets, one number per input none
    does. `read`: per key, the candidates whose scores there are read (the others' are
    their point's, not computed)."""
    order = list(values)
    trials = np.concatenate([np.asarray(values[i], dtype=float) for i in order])
    ends = np.cumsum([len(values[i]) for i in order])
    span = {i: slice(int(end) - len(values[i]), int(end)) for i, end in zip(order, ends,
                                                                          strict=True)}
    columns = sorted({OBJECTIVES[o][0] for o in rule.weights})
    steps = [c for c in columns if c in STEP_BY_NAME]
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
    for cid in cids:
        # whose inputs move its figures: its own (and under a plan its fallback's), a mix's
        # parts'. The trials of keys none of them holds are all its point: one of them is
        # computed for all (the steps are element by element)
        fallback = fallbacks.get(cid) if path is not None else None
        movers = ({mixes[cid].base[0], mixes[cid].burst[0]} if cid in mixes
                  else {cid} | ({fallback} if fallback is not None else set()))
        moved = np.zeros(trials.shape, dtype=bool)
        for i in order:
            if holders[i] & movers and cid in read[i]:
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
