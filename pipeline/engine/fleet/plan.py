"""The plan over the horizon: the demand follows a path (`[horizon] growth_per_year` or
`demand_by_month`), each month is the metric steps evaluated at that month's demand, own
capacity arrives in whole nodes after a lead time, and the gap until they serve goes to the
candidate's `fallback` (or is unserved).

No formula of cost, energy or carbon is written here: a month is `metrics.evaluate_arrays` of
the candidate's inputs with `demand_tokens_per_day` set to the month's level, vectorised over
(candidates, draws, months). What the plan adds:

- serving nodes: a provisioned fleet holds, in month m, the most instances any month up to m
  that its nodes serve needed (`instances`; nodes once bought are kept; the need of the
  months before they serve goes to the fallback), billed through the steps' own
  `min_instances` floor, so a node's cost (its TCO annuity from its service month, its
  opex and its electricity at the month's utilisation) is the steps' `monthly_cost_eur`;
- lead time L (months from order to service, `[tco.NAME] lead_time_months`): each node is
  ordered L months before the month that needs it, so from time L on the fleet serves the
  demand; before, the share of month m it does not serve is min(1, max(0, L - (m - 1))),
  and that share of the month's tokens goes to the fallback, at the fallback's own monthly
  cost, energy and carbon at that month's demand (or is unserved);
- the horizon's figures: cost and tokens discounted monthly at the horizon's cost of capital
  (payments at each month's end, as the TCO annuity's), CPM = discounted cost / discounted
  tokens; energy and carbon per token weighted by the (undiscounted) tokens of each month.

Residual value: a node's capital is its annuity for the months it serves inside the horizon.
Discounted at the annuity's rate, that equals buying it at its service month and selling it
at the horizon's end at its book value (the annuity's outstanding balance, `book_value_eur`),
the identity tests/pipeline/test_plan.py checks; the plan reports that book value per node
of each month's order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from pipeline.engine.metrics import (
    DAYS_PER_MONTH,
    INPUTS,
    MONTHS_PER_YEAR,
    SECONDS_PER_DAY,
    TOKENS_PER_MTOK,
    evaluate_arrays,
    number_arrays,
)
from schemas.outputs import OUTPUTS
from schemas.proposal import Proposal
from schemas.result import PLAN_FIGURES

#: the plan's own inputs (not read by any metric step): the demand's yearly growth and a
#: node's lead time; in the inputs frame, drawn by the Monte Carlo as every other range
PLAN_INPUTS = {name: (OUTPUTS[name].unit, OUTPUTS[name].meaning)
               for name in ("demand_growth_per_year", "lead_time_months")}
#: each month's steps the plan reads
MONTH_STEPS = ("monthly_cost_eur", "energy_j_per_token", "carbon_gco2e_per_mtok",
               "carbon_market_gco2e_per_mtok", "billed_instances", "capital_eur_per_hour")
#: the horizon's figures of each candidate, (candidates, draws)
HORIZON = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok",
           "carbon_market_gco2e_per_mtok", "cost_pv_eur", "mtok_pv", "mtok",
           "fallback_mtok", "unserved_mtok")
#: entries of one (candidates, draws, months) array per chunk of draws
CHUNK_ENTRIES = 1 << 18


@dataclass(frozen=True)
class Path:
    """The demand's path over `months` months and the rate it is discounted at."""

    months: int
    rate_per_year: float
    rate_source: str
    #: the daily tokens of each month (demand_by_month), else None (the level grows)
    by_month: tuple[float, ...] | None = None

    @classmethod
    def of(cls, proposal: Proposal) -> Path | None:
        """The proposal's path, or None without one (no plan: every figure as before)."""
        if not proposal.plan:
            return None
        assert proposal.horizon is not None
        rate, source = proposal.horizon_cost_of_capital()
        table = proposal.horizon.demand_by_month
        return cls(proposal.horizon.plan_months, rate, source,
                   None if table is None else tuple(table))

    @property
    def month(self) -> np.ndarray:
        """1 .. months."""
        return np.arange(1, self.months + 1, dtype=np.float64)

    @property
    def discount(self) -> np.ndarray:
        """Each month's discount factor (1 + i)^-m, i = rate / 12, paid at the month's end."""
        return (1.0 + self.rate_per_year / MONTHS_PER_YEAR) ** -self.month

    def served(self, lead: Any) -> np.ndarray:
        """The share of each month (the last axis) that nodes of `lead` months' lead time
        serve, clip(m - lead, 0, 1) (the one place it is written: the nodes serve from the
        month their lead time ends); `lead` broadcasts against the months, NaN for none."""
        return np.clip(self.month - np.nan_to_num(np.asarray(lead, dtype=np.float64)), 0.0,
                       1.0)

    def present_value(self, *monthly: Any) -> Any:
        """The horizon's sum of each month's product of `monthly` (arrays whose last axis is
        the months), discounted: sum over m of v_m x monthly[0]_m x monthly[1]_m ... (the one
        place a plan discounts: a candidate's horizon and a mix's)."""
        out = self.discount
        for factor in monthly:
            out = out * factor
        return out.sum(axis=-1)

    def demand(self, start: Any, growth: Any) -> Any:
        """Each month's tokens/day, the months last: start x (1 + growth)^((m - 1) / 12)
        (`start` and `growth` broadcast together, lifted by one axis), or the table."""
        if self.by_month is not None:
            return np.asarray(self.by_month, dtype=np.float64)
        years = (self.month - 1.0) / MONTHS_PER_YEAR
        return np.asarray(start, dtype=np.float64) * (
            1.0 + np.nan_to_num(np.asarray(growth, dtype=np.float64))) ** years


def _lift(columns: Mapping[str, Any]) -> dict[str, Any]:
    """Each input with a months axis added (a string of one value stays one), numbers in
    float64 (the steps' arithmetic, widened once rather than in every step that reads it),
    and one row where every candidate's is the same (the demand, its growth, a shared
    profile's draws): the steps that read only such inputs are computed once, not once per
    candidate, and broadcast."""
    out = {}
    for k, v in columns.items():
        a = np.asarray(v)
        if a.dtype.kind == "f":
            a = a.astype(np.float64, copy=False)
            same = a.view(np.int64)  # bit for bit, NaN included
        else:
            same = a
        if a.ndim and len(a) > 1 and (same == same[:1]).all():
            a = a[:1]
        out[k] = a if a.ndim == 0 else a[..., None]
    return out


def months(columns: Mapping[str, Any], path: Path, steps: Sequence[str] = MONTH_STEPS
           ) -> dict[str, np.ndarray]:
    """Each month's figures of candidates whose inputs `columns` broadcast to (candidates,
    draws) (NaN: null): `steps` (MONTH_STEPS, or those of them the caller reads), and
    `demand_tokens_per_day`, `mtok` (the month's tokens in millions), `serving_instances` (a
    provisioned fleet's, nodes kept once bought) and `own_share` (the share of the month its
    own capacity serves), each (candidates, draws, months)."""
    given = _lift(columns)
    demand = path.demand(given.get("demand_tokens_per_day", np.nan),
                         given.get("demand_growth_per_year", 0.0))
    at = {**given, "demand_tokens_per_day": demand}
    if "demand_requests_per_s" in given:  # the request rate follows the tokens
        with np.errstate(all="ignore"):
            at["demand_requests_per_s"] = (given["demand_requests_per_s"] * demand
                                           / given.get("demand_tokens_per_day", np.nan))
    share = path.served(given.get("lead_time_months", 0.0))
    provisioned = np.asarray(given.get("capacity", "provisioned")) != "elastic"
    own_floor = np.asarray(given.get("min_instances", np.nan), dtype=np.float64)
    # the steps the need is computed from read no min_instances: the month at its fleet
    # takes them as they are
    sized: dict[str, Any] = {}
    serving: Any = np.nan  # elastic capacity holds no nodes: its floor is its own
    floor = own_floor
    if provisioned.any():
        need = np.asarray(evaluate_arrays(at, ["instances"], steps=sized)["instances"],
                          dtype=np.float64)
        # only a month the nodes serve (a share of) needs them: the need of the months
        # before goes to the fallback, no node is bought for it
        serving = _running_max(np.where(share > 0, need, 0.0))
        floor = (np.fmax(own_floor, serving) if provisioned.all()
                 else np.where(provisioned, np.fmax(own_floor, serving), own_floor))
    out = evaluate_arrays({**at, **sized, "min_instances": floor}, list(steps))
    # a single-number growth leaves the demand one draw wide: the draws come from the steps'
    # other inputs (a capex, price or PUE range); a row per candidate given (the inputs
    # every candidate shares were computed on one)
    rows = [(np.shape(v)[0], 1, 1) for v in columns.values() if np.ndim(v) == 2]
    shape = np.broadcast_shapes(*rows, np.shape(demand), np.shape(serving), np.shape(share),
                                *(np.shape(v) for v in out.values()))
    result = {k: np.broadcast_to(np.asarray(v, dtype=np.float64), shape)
              for k, v in out.items()}
    result["demand_tokens_per_day"] = np.broadcast_to(demand, shape)
    result["mtok"] = result["demand_tokens_per_day"] * DAYS_PER_MONTH / TOKENS_PER_MTOK
    result["serving_instances"] = np.broadcast_to(
        serving if provisioned.all() else np.where(provisioned, serving, np.nan), shape)
    result["own_share"] = np.broadcast_to(share, shape)
    return result


def _running_max(values: np.ndarray) -> np.ndarray:
    """np.maximum.accumulate over the last axis (the months), month by month over the other
    axes at once (the same values, without accumulate's loop over each row), on a copy with
    the months first so that each month's values are contiguous."""
    out = np.ascontiguousarray(np.moveaxis(values, -1, 0))
    for m in range(1, len(out)):
        np.maximum(out[m - 1, ...], out[m, ...], out=out[m, ...])
    return np.ascontiguousarray(np.moveaxis(out, 0, -1))


def horizon(own: Mapping[str, Any], fallback: Mapping[str, Any] | None, path: Path,
            versus: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """The horizon's figures (HORIZON) of candidates whose inputs `own` broadcast to
    (candidates, draws), the gap before their nodes serve going to the candidate whose
    inputs are `fallback` (broadcasting to (1, draws): the same draws) or unserved (None).
    With `versus` (a candidate's inputs as `fallback`'s), also `paying_month`: the months
    the horizon computed read again for `paying_month`'s figure against it (`versus` being
    `fallback`, the same mapping: the fallback's months)."""
    return chunked(lambda a, b, c=None: _horizon(a, b, path, c), own, fallback, path,
                   *(() if versus is None else (versus,)))


def chunked(compute: Any, own: Mapping[str, Any], other: Mapping[str, Any] | None,
            path: Path, *more: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """`compute(own, other, *more)` (a dict of (candidates, draws) arrays) in chunks of
    draws (CHUNK_ENTRIES per (candidates, draws, months) array), so no array of every draw
    and month is held at once. A mapping given twice is cut once: `compute` gets the same
    chunk twice."""
    numeric = [np.shape(v) for v in [*own.values(), *(other or {}).values()]
               if np.asarray(v).dtype.kind == "f"]
    shape = np.broadcast_shapes((1, 1), *numeric)
    rows, draws = shape[0], shape[1]
    step = max(1, CHUNK_ENTRIES // max(1, rows * path.months))
    parts = []
    for a in range(0, draws, step):
        def cut(columns: Mapping[str, Any], a: int = a) -> dict[str, Any]:
            return {k: (v[:, a:a + step] if np.ndim(v) == 2 and np.shape(v)[1] > 1 else v)
                    for k, v in columns.items()}
        cuts: dict[int, dict[str, Any]] = {}
        out = compute(*(None if m is None else cuts.setdefault(id(m), cut(m))
                        for m in (own, other, *more)))
        # an input drawn that no figure here reads leaves a chunk's figures one column wide
        parts.append({k: np.broadcast_to(x, (rows, min(step, draws - a)))
                      for k, x in out.items()})
    return {k: np.concatenate([p[k] for p in parts], axis=1) for k in parts[0]}


def _horizon(own: Mapping[str, Any], fallback: Mapping[str, Any] | None, path: Path,
             versus: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    mine = months(own, path)
    theirs = None if fallback is None else months(fallback, path)
    paying = ({} if versus is None else {"paying_month": _paying(
        mine, theirs if theirs is not None and versus is fallback
        else months(versus, path, ("monthly_cost_eur",)))})
    share, mtok = mine["own_share"], mine["mtok"]
    gap = (1.0 - share) * mtok
    cost_pv = path.present_value(share, mine["monthly_cost_eur"])
    own_mtok = share * mtok
    served = own_mtok.sum(axis=-1)
    mtok_pv = path.present_value(share, mtok)
    per_token = {k: (own_mtok * mine[k]).sum(axis=-1)
                 for k in ("energy_j_per_token", "carbon_gco2e_per_mtok",
                           "carbon_market_gco2e_per_mtok")}
    fallback_mtok = np.zeros_like(served)
    unserved = gap.sum(axis=-1)
    if theirs is not None:
        # the fallback's bill for the share of the month it serves (its fleet sized for the
        # month's whole demand, billed pro rata)
        # a month the fallback serves nothing adds nothing, even where it lacks the figure
        # (0 x null is 0, not null)
        cost_pv = cost_pv + path.present_value(np.where(
            share < 1.0, (1.0 - share) * theirs["monthly_cost_eur"], 0.0))
        mtok_pv = mtok_pv + path.present_value(gap)
        for k in per_token:
            per_token[k] = per_token[k] + np.where(gap > 0, gap * theirs[k], 0.0).sum(axis=-1)
        fallback_mtok, unserved = unserved, np.zeros_like(unserved)
        served = served + fallback_mtok
    return finite({**per_token_figures(cost_pv, mtok_pv, per_token, served),
                   "cost_pv_eur": cost_pv, "mtok_pv": mtok_pv, "mtok": mtok.sum(axis=-1),
                   "fallback_mtok": fallback_mtok, "unserved_mtok": unserved}) | paying


def per_token_figures(cost_pv: Any, mtok_pv: Any, weighted: Mapping[str, Any], mtok: Any
                      ) -> dict[str, Any]:
    """The horizon's per-token figures: CPM = discounted cost / discounted tokens, and each
    of `weighted` (the sum over the months of the month's tokens x its figure) over the
    horizon's tokens `mtok` (undiscounted)."""
    with np.errstate(all="ignore"):
        return {"cpm_eur_per_mtok": cost_pv / mtok_pv,
                **{k: s / mtok for k, s in weighted.items()}}


def finite(figures: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Each figure with NaN where it is not finite (null)."""
    return {k: np.where(np.isfinite(x), x, np.nan) for k, x in figures.items()}


def book_value_eur(capex: float, residual: float, amortisation_months: float, rate: float,
                   months_served: float) -> float:
    """What a node is worth after `months_served` months of its amortisation: the annuity's
    outstanding balance (the present value, at the annuity's monthly rate r = rate / 12, of
    the payments left, plus the residual it was levelled against), so that buying it at
    capex and selling it at this value costs, discounted at r, exactly the annuities paid
    meanwhile. A node serving past its amortisation is replaced by a new one (a new annuity):
    the months served count from the last replacement."""
    n = amortisation_months
    k = months_served - n * math.floor(months_served / n)
    if k == 0 and months_served > 0:  # at the end of an amortisation: the residual
        k = n
    left = n - k
    r = rate / MONTHS_PER_YEAR
    if r == 0:
        financed = capex - residual
        return financed * left / n + residual
    annuity = (capex - residual * (1.0 + r) ** -n) * r / (1.0 - (1.0 + r) ** -n)
    return annuity * (1.0 - (1.0 + r) ** -left) / r + residual * (1.0 + r) ** -left


def purchases(serving: np.ndarray, lead: float, horizon_months: int) -> list[dict[str, Any]]:
    """The purchase plan of one fleet whose serving instances by month are `serving` (nodes
    kept once bought), one order per month whose fleet grows (so its size is bounded by the
    months, not the nodes): the nodes first_node .. last_node (`count` of them) are needed
    from that month, ordered `lead` months before it begins (at the horizon's start at the
    earliest) and serve from their arrival."""
    out = []
    have = 0
    for m, count in enumerate(serving.tolist(), start=1):
        if not math.isfinite(count):
            break
        if count > have:
            ordered = max(0.0, (m - 1) - lead)
            serves = ordered + lead
            more = math.ceil(count) - have
            out.append({"needed_month": m, "ordered_at_month": ordered,
                        "serves_from_month": serves, "count": more,
                        "first_node": have + 1, "last_node": have + more,
                        "months_served": horizon_months - serves})
            have += more
    return out


def node_book_values(orders: list[dict[str, Any]], row: Mapping[str, Any]
                     ) -> list[dict[str, Any]]:
    """Each order with the book value of one of its nodes at the horizon's end (a TCO node
    bought; None for a leased one, which has none, or another cost)."""
    tco = (row.get("cost_model") == "tco" and row.get("capex_eur") is not None
           and not row.get("leased"))
    return [{**n, "book_value_per_node_at_horizon_eur": book_value_eur(
        row["capex_eur"], row.get("residual_eur") or 0.0, row["amortisation_months"],
        row.get("cost_of_capital_per_year") or 0.0, n["months_served"]) if tco else None}
        for n in orders]


#: the objectives' figures a plan replaces by the horizon's (the first month's CPM is kept
#: beside as first_month_cpm_eur_per_mtok)
REPLACED = PLAN_FIGURES


def columns_of(point: pl.DataFrame) -> dict[str, Any]:
    """The inputs of the candidates of `point` (uncertainty.point_frame) as (candidates, 1)
    arrays, NaN for null, as the Monte Carlo's blocks give them."""
    names = [name for name in (*INPUTS, *PLAN_INPUTS) if name in point.columns]
    out: dict[str, Any] = {name: v[:, None] for name, v in number_arrays(point, names).items()}
    for name in ("cost_model", "capacity"):
        out[name] = point[name].cast(pl.String).to_numpy()[:, None]
    return out


def by_fallback(ids: Sequence[str], fallbacks: Mapping[str, str | None]
                ) -> dict[str | None, np.ndarray]:
    """The positions in `ids` of the candidates of each fallback (None: none)."""
    groups: dict[str | None, list[int]] = {}
    for i, cid in enumerate(ids):
        groups.setdefault(fallbacks.get(cid), []).append(i)
    return {f: np.asarray(at, dtype=np.int64) for f, at in groups.items()}


def _rows(columns: Mapping[str, Any], at: np.ndarray | int) -> dict[str, Any]:
    return {k: (v[at] if np.ndim(v) else v) for k, v in columns.items()}


def at_modes(point: pl.DataFrame, fallbacks: Mapping[str, str | None], path: Path
             ) -> pl.DataFrame:
    """Each candidate's horizon figures at the inputs' modes: id, the REPLACED figures,
    first_month_cpm_eur_per_mtok (left to the caller), horizon_fallback_share and
    horizon_unserved_mtok."""
    ids = point["id"].to_list()
    columns = columns_of(point)
    position = {cid: i for i, cid in enumerate(ids)}
    result = {k: np.full(len(ids), np.nan) for k in HORIZON}
    for fallback, at in by_fallback(ids, fallbacks).items():
        theirs = None if fallback is None else _rows(columns, np.array([position[fallback]]))
        out = horizon(_rows(columns, at), theirs, path)
        for k in HORIZON:
            result[k][at] = out[k][:, 0]
    with np.errstate(all="ignore"):
        share = result["fallback_mtok"] / result["mtok"]
    return pl.DataFrame({
        "id": ids, **{k: result[k] for k in REPLACED},
        "horizon_fallback_share": share, "horizon_unserved_mtok": result["unserved_mtok"],
    }).fill_nan(None)


def schedule(point: pl.DataFrame, cid: str, fallback: str | None, path: Path,
             row: Mapping[str, Any]) -> dict[str, Any]:
    """The purchase plan of candidate `cid` at the inputs' modes: its nodes (when each is
    ordered and serves, its book value at the horizon's end) and each month's demand,
    serving nodes, the share its own nodes serve, its own and the fallback's cost and their
    capacity."""
    ids = point["id"].to_list()
    columns = columns_of(point)
    mine = months(_rows(columns, np.array([ids.index(cid)])), path)
    theirs = (None if fallback is None else
              months(_rows(columns, np.array([ids.index(fallback)])), path))
    share = mine["own_share"][0, 0]
    own_cost = share * mine["monthly_cost_eur"][0, 0]
    gap_cost = (None if theirs is None else np.where(
        share < 1.0, (1.0 - share) * theirs["monthly_cost_eur"][0, 0], 0.0))
    serving = mine["serving_instances"][0, 0]
    # no candidate of the proposal has a lead time (no TCO terms): none
    lead = (float(np.nan_to_num(columns["lead_time_months"][ids.index(cid), 0]))
            if "lead_time_months" in columns else 0.0)
    goodput = row.get("tokens_per_s")
    series = []
    for m in range(path.months):
        # the own nodes' goodput, all of it busy all day, for the share of the month served
        capacity = (None if goodput is None or not math.isfinite(serving[m]) else
                    float(serving[m] * share[m] * goodput * SECONDS_PER_DAY))
        series.append({
            "month": m + 1,
            "demand_tokens_per_day": finite_or_none(mine["demand_tokens_per_day"][0, 0, m]),
            "serving_instances": finite_or_none(serving[m] * (1.0 if share[m] > 0 else 0.0)),
            "own_share": finite_or_none(share[m]),
            "own_cost_eur": finite_or_none(own_cost[m]),
            "fallback_cost_eur": None if gap_cost is None else finite_or_none(gap_cost[m]),
            "unserved_mtok": (finite_or_none((1.0 - share[m]) * mine["mtok"][0, 0, m])
                              if fallback is None else 0.0),
            "own_capacity_tokens_per_day": capacity,
        })
    orders = (node_book_values(purchases(serving, lead, path.months), row)
              if row.get("capacity") != "elastic" else [])
    return {"candidate": cid, "fallback": fallback, "lead_time_months": lead,
            "purchases": orders, "months": series, "note": late_note(lead, path.months)}


def late_note(lead: float, horizon_months: int) -> str | None:
    """What a lead time of the whole horizon or more means (None when a node can serve
    inside it): no node is bought, every month is the fallback's or unserved."""
    if lead < horizon_months:
        return None
    return (f"no own node can serve inside the horizon: its lead time of {lead:g} months is "
            f"not shorter than the horizon's {horizon_months} months; no node is bought and "
            "every month is its fallback's (or unserved)")


def finite_or_none(value: Any) -> float | None:
    """A number as JSON takes it: null where it is not finite."""
    value = float(value)
    return value if math.isfinite(value) else None


def paying_month(own: Mapping[str, Any], versus: Mapping[str, Any], path: Path) -> np.ndarray:
    """The first month its nodes serve (a share of) in which own capacity's month (its
    fleet serving the whole month) costs no more per token than the `versus` candidate's
    at that month's demand, for candidates `own` (candidates, draws) against `versus` (1,
    draws): (candidates, draws), NaN when no month of the horizon does."""
    return _paying(months(own, path, ("monthly_cost_eur",)),
                   months(versus, path, ("monthly_cost_eur",)))


def _paying(mine: Mapping[str, np.ndarray], theirs: Mapping[str, np.ndarray]) -> np.ndarray:
    """`paying_month` of the months of own candidates `mine` against those of `theirs`."""
    with np.errstate(all="ignore"):
        # a month its nodes do not serve (the lead time) cannot be the one they pay from
        pays = ((mine["monthly_cost_eur"] / mine["mtok"]
                 <= theirs["monthly_cost_eur"] / theirs["mtok"]) & (mine["own_share"] > 0))
    first = np.argmax(pays, axis=-1).astype(np.float64) + 1.0
    return np.where(pays.any(axis=-1), first, np.nan)


def break_even(point: pl.DataFrame, own_ids: Sequence[str], versus: str | None, path: Path
               ) -> list[dict[str, Any]]:
    """For each own candidate: from which month, and at which daily demand, its month pays
    against `versus` (the cheapest eligible cloud), at the inputs' modes."""
    if versus is None or not own_ids:
        return []
    ids = point["id"].to_list()
    columns = columns_of(point)
    at = np.array([ids.index(c) for c in own_ids])
    cost = ("monthly_cost_eur",)  # what paying_month compares (its demand comes with it)
    mine = months(_rows(columns, at), path, cost)
    month = _paying(mine, months(_rows(columns, np.array([ids.index(versus)])), path,
                                 cost))[:, 0]
    demand = mine["demand_tokens_per_day"][:, 0]
    lead = np.nan_to_num(np.asarray(columns.get("lead_time_months", np.zeros((len(ids), 1))),
                                    dtype=np.float64)[at, 0])
    out = []
    for i, cid in enumerate(own_ids):
        m = month[i]
        out.append({"candidate": cid, "versus": versus,
                    "from_month": None if not math.isfinite(m) else int(m),
                    "from_tokens_per_day": (None if not math.isfinite(m)
                                            else finite_or_none(demand[i, int(m) - 1])),
                    "note": late_note(float(lead[i]), path.months)})
    return out


def discounted(point: pl.DataFrame, cid: str, fallback: str | None, path: Path
               ) -> dict[str, float | None]:
    """A candidate's horizon cost and tokens, discounted, at the inputs' modes."""
    ids = point["id"].to_list()
    columns = columns_of(point)
    out = horizon(_rows(columns, np.array([ids.index(cid)])),
                  None if fallback is None else _rows(columns, np.array([ids.index(fallback)])),
                  path)
    return {"cost_pv_eur": finite_or_none(out["cost_pv_eur"][0, 0]),
            "mtok_pv": finite_or_none(out["mtok_pv"][0, 0])}
