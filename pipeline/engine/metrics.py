"""Every formula of the scorecard, computed: each step declared in schemas/steps.py (its name,
order, formula in words, Excel form, the inputs it reads and the meaning of the cost models and
capacities) paired, by name, with its formula here (FORMULAS), written once against a column
namespace `c` (`c("name")`, `c.when`, `c.coalesce`, `c.max_horizontal`, polars' names). A
declared step without a formula, or a formula without a declaration, fails at import.

Built with POLARS a formula is a polars expression (`ComputedStep.expr()`: what `explain`
reads and `evaluate_polars` applies); computed by `evaluate_arrays` it is numpy arrays that
broadcast, (candidates, draws) for the Monte Carlo. `evaluate` of a frame goes through
evaluate_arrays too, figure for figure the polars expressions' (tested). So the same list
computes one row per candidate, every Monte Carlo draw, the tornado and the sizing, and
`scorecard explain` prints the derivation from it. The unit and meaning of every input and
step column are declared once, in schemas/outputs.toml.
A null input gives a null output; the caller records why. Every step's value that is not a
finite number (a division by a zero goodput) is null.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import numpy as np
import polars as pl

from schemas.outputs import OUTPUTS
from schemas.steps import CAPACITIES, COST_MODELS, HOUR_DEMAND_RATIOS, INPUT_COLUMNS, Step
from schemas.steps import STEPS as DECLARED

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86_400.0
HOURS_PER_YEAR = 8760.0  # 365 days: no leap year, as DAYS_PER_MONTH
MONTHS_PER_YEAR = 12.0
HOURS_PER_MONTH = HOURS_PER_YEAR / MONTHS_PER_YEAR
DAYS_PER_MONTH = 365.0 / MONTHS_PER_YEAR
TOKENS_PER_MTOK = 1e6
J_PER_KWH = 3.6e6
KWH_PER_MWH = 1000.0
WH_PER_KWH = 1000.0
W_PER_KW = 1000.0
G_PER_KG = 1000.0
G_PER_TONNE = 1e6
#: the string inputs' values when a frame lacks them (every evaluator the same)
STRING_DEFAULTS = {"cost_model": COST_MODELS[0], "capacity": CAPACITIES[0]}

#: input column -> (unit, meaning)
INPUTS: dict[str, tuple[str, str]] = {
    name: (OUTPUTS[name].unit, OUTPUTS[name].meaning) for name in INPUT_COLUMNS}


class Columns(Protocol):
    """What a step's formula is written against: `c("name")` is a column (an input or an
    earlier step) and `c.when`, `c.coalesce`, `c.max_horizontal`, `c.min_horizontal` are
    polars' functions of the same names. POLARS builds polars expressions from a formula;
    evaluate_arrays computes the same formula over numpy arrays."""

    def __call__(self, name: str) -> Any: ...

    def when(self, condition: Any) -> Any: ...

    def coalesce(self, *columns: Any) -> Any: ...

    def max_horizontal(self, *columns: Any) -> Any: ...

    def min_horizontal(self, *columns: Any) -> Any: ...


class _PolarsColumns:
    def __call__(self, name: str) -> pl.Expr:
        return pl.col(name)

    def when(self, condition: Any) -> Any:
        return pl.when(condition)

    def coalesce(self, *columns: Any) -> pl.Expr:
        return pl.coalesce(*columns)

    def max_horizontal(self, *columns: Any) -> pl.Expr:
        return pl.max_horizontal(*columns)

    def min_horizontal(self, *columns: Any) -> pl.Expr:
        return pl.min_horizontal(*columns)


POLARS: Columns = _PolarsColumns()


@dataclass(frozen=True)
class ComputedStep(Step):
    """A declared step with its formula over the columns `c` (Columns): polars expressions
    or numpy arrays."""

    build: Callable[[Columns], Any] = field(kw_only=True)

    def expr(self) -> pl.Expr:
        """The formula as a polars expression."""
        return cast(pl.Expr, self.build(POLARS))


NumT = TypeVar("NumT", float, pl.Expr)


def _is(c: Columns, model: str) -> Any:
    return c("cost_model") == model


def _elastic(c: Columns) -> Any:
    return c("capacity") == "elastic"


def _provisioned_hours(c: Columns) -> Any:
    """The hours a month an instance beyond the busy ones is billed: 730 when provisioned,
    none when elastic (busy instance-hours only)."""
    return c.when(_elastic(c)).then(0.0).otherwise(HOURS_PER_MONTH)


def _elastic_billed_instances(c: Columns) -> Any:
    """Busy instances, at least the floor: hour by hour where the day's hours are given, the
    mean busy instances plus the mean over the hours of the floor's idle instances,
    max(floor - busy x the hour's demand ratio, 0) (the mean of each hour's max(busy x its
    ratio, floor), the ratios' mean being 1), else for the day's mean. Where the quietest
    hour keeps the floor busy every idle term is 0: busy as it is, the hours not computed."""
    floor = c("min_instances").fill_null(0.0)
    busy = c("busy_instances")
    idle = [c.max_horizontal(floor - busy * c(name), 0.0) for name in HOUR_DEMAND_RATIOS]
    quietest = c.min_horizontal(*(c(name) for name in HOUR_DEMAND_RATIOS))
    # the second arm holds for the rows the first took too (no hours: null), so a block
    # whose floors bind in no hour computes no hour over its draws
    return (c.when(c(HOUR_DEMAND_RATIOS[0]).is_null()).then(c.max_horizontal(busy, floor))
            .when(c.coalesce(busy * quietest - floor, 0.0) >= 0.0).then(busy)
            .otherwise(busy + functools.reduce(operator.add, idle) / float(len(idle))))


def _mean_demand_tokens_per_s(c: Columns) -> Any:
    return c("demand_tokens_per_day") / SECONDS_PER_DAY


def hour_demand_ratios(profile: Sequence[float]) -> np.ndarray:
    """Each hour's demand over the day's mean (HOUR_DEMAND_RATIOS): the profile's weights over
    their mean."""
    weights = np.asarray(profile, dtype=np.float64)
    return weights / weights.mean()


def tokens_per_day_from_requests(requests_per_s: NumT, tokens_per_request: float) -> NumT:
    """The daily token volume of a sustained request rate: requests/s x 86,400 x the tokens
    one request counts on the token basis (output tokens, or prompt + output)."""
    return requests_per_s * SECONDS_PER_DAY * tokens_per_request


def request_duration(ttft: NumT, output_tokens: NumT, tpot: NumT) -> NumT:
    """One request from arrival to its last token once served: TTFT (its first token) then
    (output tokens - 1) x TPOT."""
    return ttft + (output_tokens - 1.0) * tpot


def _annuity_eur_per_month(c: Columns) -> Any:
    """Level monthly payment repaying capex less the present value of the residual."""
    r = c("cost_of_capital_per_year") / MONTHS_PER_YEAR
    n = c("amortisation_months")
    financed = c("capex_eur") - c("residual_eur").fill_null(0.0) / (1.0 + r) ** n
    return (c.when(r == 0).then(financed / n)
            .otherwise(financed * r / (1.0 - (1.0 + r) ** (-n))))


def levelled_commitment_eur_per_hour(price_eur_per_hour: float, term_months: int,
                                     horizon_months: int, escalation_per_year: float,
                                     upfront_eur: float, cost_of_capital_per_year: float
                                     ) -> float:
    """The level hourly price whose monthly payments have the same present value, at the cost
    of capital, as a commitment's over the horizon: every hour of every month billed at
    `price_eur_per_hour` (after its discount) x (1 + escalation)^(years since the horizon
    began), paid at each month's end as the TCO annuity's payments are; `upfront_eur` at the
    start of each term (renewed until the horizon ends; a last term the horizon cuts counts
    the share of its months inside it). The level payment is the annuity of that present
    value over the horizon, as `capital_eur_per_hour` levels capex; at a rate of 0 it is the
    payments' mean."""
    i = cost_of_capital_per_year / MONTHS_PER_YEAR
    months = np.arange(1, horizon_months + 1, dtype=np.float64)
    bills = (price_eur_per_hour * HOURS_PER_MONTH
             * (1.0 + escalation_per_year) ** np.floor((months - 1.0) / MONTHS_PER_YEAR))
    starts = np.arange(0, horizon_months, term_months, dtype=np.float64)
    upfront = upfront_eur * np.minimum(term_months, horizon_months - starts) / term_months
    if i == 0:
        monthly = (bills.sum() + upfront.sum()) / horizon_months
    else:
        present = (bills * (1.0 + i) ** -months).sum() + (upfront * (1.0 + i) ** -starts).sum()
        monthly = present * i / (1.0 - (1.0 + i) ** -horizon_months)
    return float(monthly / HOURS_PER_MONTH)


def tokens_per_request(prompt_tokens: float, output_tokens: float, total_basis: bool) -> float:
    """The tokens one request counts on the token basis: its output tokens, or its prompt +
    output tokens under the total basis (`policy.token_basis = "total"`)."""
    return output_tokens + (prompt_tokens if total_basis else 0.0)


def api_eur_per_mtok(input_eur_per_mtok: float, output_eur_per_mtok: float,
                     prompt_tokens: float, output_tokens: float, total_basis: bool) -> float:
    """An API's price per million tokens of the token basis for the proposal's request mix:
    one request's prompt at the input price and its output at the output price, over the
    tokens the request counts on the basis."""
    request_eur = input_eur_per_mtok * prompt_tokens + output_eur_per_mtok * output_tokens
    return request_eur / tokens_per_request(prompt_tokens, output_tokens, total_basis)


#: each declared step's formula, by name
FORMULAS: dict[str, Callable[[Columns], Any]] = {
    "electricity_eur_per_kwh":
        lambda c: c.coalesce(
            c("contract_eur_per_kwh"),
            c.coalesce(c("energy_eur_per_kwh"),
                       c("wholesale_eur_per_kwh") * c("retail_multiplier").fill_null(1.0)
                       + c("grid_fee_eur_per_kwh").fill_null(0.0))
            + c("network_eur_per_kwh").fill_null(0.0)
            + c("taxes_levies_eur_per_kwh").fill_null(0.0)),
    "peak_tokens_per_s":
        lambda c: _mean_demand_tokens_per_s(c) * c("peak_factor").fill_null(1.0),
    "request_tpot_s":
        lambda c: c.coalesce(c("operating_tpot_s"),
                            c("operating_concurrency") / c("tokens_per_s")),
    "request_duration_s":
        lambda c: request_duration(c("operating_ttft_s"), c("request_output_tokens"),
                                 c("request_tpot_s")),
    "request_duration_p95_s":
        lambda c: request_duration(c("operating_ttft_s"), c("request_output_tokens_p95"),
                                 c("request_tpot_s")),
    "replica_requests_per_s":
        lambda c: c("operating_concurrency") / c("request_duration_s"),
    "littles_law_instances":
        lambda c: (c("demand_requests_per_s") * c("peak_factor").fill_null(1.0)
                 / (c("replica_requests_per_s") * (1.0 - c("headroom").fill_null(0.0))))
        .ceil() + c("redundancy_instances").fill_null(0.0),
    "goodput_instances":
        lambda c: (c("peak_tokens_per_s")
                 / (c("tokens_per_s") * (1.0 - c("headroom").fill_null(0.0)))).ceil()
        + c("redundancy_instances").fill_null(0.0),
    "instances":
        lambda c: c.when(c("goodput_instances").is_null()).then(None).otherwise(
            c.max_horizontal(c("goodput_instances"), c("littles_law_instances"))),
    "headroom_instances":
        lambda c: c("instances") - c("redundancy_instances").fill_null(0.0)
        - c.max_horizontal(
            (c("peak_tokens_per_s") / c("tokens_per_s")).ceil(),
            (c("demand_requests_per_s") * c("peak_factor").fill_null(1.0)
             / c("replica_requests_per_s")).ceil()),
    "busy_instances":
        # tokens bought by API are billed per token: the replicas' request count never bills
        lambda c: c.when(_is(c, "per_token")).then(
            _mean_demand_tokens_per_s(c) / c("tokens_per_s")).otherwise(c.max_horizontal(
                _mean_demand_tokens_per_s(c) / c("tokens_per_s"),
                c.when(c("littles_law_instances").is_not_null()).then(
                    c("demand_requests_per_s") / c("replica_requests_per_s")))),
    "billed_instances":
        lambda c: c.when(c("busy_instances").is_null()).then(None).when(_elastic(c)).then(
            _elastic_billed_instances(c))
        .otherwise(c.max_horizontal(c("instances"), c("min_instances"))),
    "billed_utilisation":
        lambda c: c.when(c("demand_tokens_per_day").is_not_null())
        .then(_mean_demand_tokens_per_s(c) / (c("tokens_per_s") * c("billed_instances")))
        .when(_elastic(c)).then(1.0).otherwise(c("utilisation")),
    "served_tokens_per_s":
        lambda c: c("tokens_per_s") * c("billed_utilisation"),
    "average_power_w":
        lambda c: c.when(c("billed_utilisation") == 1.0).then(c("busy_power_w")).otherwise(
            c("busy_power_w") * c("billed_utilisation")
            # idle never above busy: ranges drawn apart (a derived idle fraction's high end
            # passes the busy fraction's low end) must not make idle hours the dearer
            + c.min_horizontal(c("idle_power_w"), c("busy_power_w"))
            * (1.0 - c("billed_utilisation"))),
    "capital_eur_per_hour":
        lambda c: _annuity_eur_per_month(c) * MONTHS_PER_YEAR / HOURS_PER_YEAR,
    "maintenance_eur_per_hour":
        lambda c: c("capex_eur") * c("maintenance_share_per_year") / HOURS_PER_YEAR,
    "staff_eur_per_hour":
        lambda c: c("staff_eur_per_year").fill_null(0.0) / HOURS_PER_YEAR,
    "hosting_eur_per_hour":
        lambda c: c("hosting_eur_per_year").fill_null(0.0) / HOURS_PER_YEAR
        + c("hosting_eur_per_kw_month").fill_null(0.0) * c("busy_power_w") / W_PER_KW
        * MONTHS_PER_YEAR / HOURS_PER_YEAR,
    "electricity_eur_per_hour":
        lambda c: c("average_power_w") / W_PER_KW * c("pue") * c("electricity_eur_per_kwh"),
    "token_cost_eur_per_hour":
        lambda c: c("price_eur_per_mtok") * c("tokens_per_s") * SECONDS_PER_HOUR
        / TOKENS_PER_MTOK,
    "cost_eur_per_hour":
        lambda c: c.when(_is(c, "tco")).then(
            c("capital_eur_per_hour") + c("maintenance_eur_per_hour")
            + c("staff_eur_per_hour") + c("hosting_eur_per_hour")
            + c("electricity_eur_per_hour"))
        .when(_is(c, "per_token")).then(c("token_cost_eur_per_hour"))
        .otherwise(c("price_eur_per_hour")),
    "monthly_cost_eur":
        lambda c: c("cost_eur_per_hour") * c("billed_instances") * HOURS_PER_MONTH,
    "monthly_headroom_cost_eur":
        lambda c: c("headroom_instances") * c("cost_eur_per_hour") * _provisioned_hours(c),
    "monthly_redundancy_cost_eur":
        lambda c: c.when(c("instances").is_not_null()).then(
            c("redundancy_instances").fill_null(0.0) * c("cost_eur_per_hour")
            * _provisioned_hours(c)),
    "period_cost_eur":
        lambda c: c.when(_is(c, "tco")).then(c("monthly_cost_eur") * c("amortisation_months")),
    "monthly_capital_eur":
        lambda c: c("capital_eur_per_hour") * c("billed_instances") * HOURS_PER_MONTH,
    "cpm_eur_per_mtok":
        lambda c: c("cost_eur_per_hour")
        / (c("served_tokens_per_s") * SECONDS_PER_HOUR / TOKENS_PER_MTOK),
    "energy_j_per_token":
        lambda c: c("average_power_w") / c("served_tokens_per_s"),
    "facility_kwh_per_mtok":
        lambda c: c("energy_j_per_token") * TOKENS_PER_MTOK / J_PER_KWH * c("pue"),
    "electricity_eur_per_mtok":
        lambda c: c("facility_kwh_per_mtok") * c("electricity_eur_per_kwh"),
    "carbon_gco2e_per_mtok":
        lambda c: c("facility_kwh_per_mtok") * c("grid_gco2e_per_kwh"),
    "embodied_gco2e_per_mtok":
        lambda c: c("embodied_kgco2e") * G_PER_KG
        / (c("lifetime_years") * HOURS_PER_YEAR * c("served_tokens_per_s")
           * SECONDS_PER_HOUR / TOKENS_PER_MTOK),
    "market_gco2e_per_kwh":
        lambda c: c("covered_share").fill_null(0.0) * c("covered_gco2e_per_kwh").fill_null(0.0)
        + (1.0 - c("covered_share").fill_null(0.0))
        * c.coalesce(c("supplier_gco2e_per_kwh"), c("residual_gco2e_per_kwh"),
                     c("grid_gco2e_per_kwh")),
    "carbon_market_gco2e_per_mtok":
        lambda c: c("facility_kwh_per_mtok") * c("market_gco2e_per_kwh"),
    "facility_wh_per_request":
        lambda c: c("facility_kwh_per_mtok") * c("request_tokens") / TOKENS_PER_MTOK
        * WH_PER_KWH,
    "carbon_gco2e_per_request":
        lambda c: c("carbon_gco2e_per_mtok") * c("request_tokens") / TOKENS_PER_MTOK,
    "carbon_market_gco2e_per_request":
        lambda c: c("carbon_market_gco2e_per_mtok") * c("request_tokens") / TOKENS_PER_MTOK,
}


def paired(declared: Sequence[Step], formulas: Mapping[str, Callable[[Columns], Any]]
           ) -> tuple[ComputedStep, ...]:
    """Each declared step with its formula, in the declared order; a step declared twice,
    without a formula, or a formula without a declaration is a ValueError naming them."""
    names = [s.name for s in declared]
    twice = sorted({n for n in names if names.count(n) > 1})
    unpaired = sorted(set(names) ^ set(formulas))
    if twice or unpaired:
        raise ValueError(f"steps declared twice (schemas/steps.py): {twice}; declared without "
                         f"a formula or a formula without a declaration: {unpaired}")
    return tuple(ComputedStep(s.name, s.formula, s.models, s.excel, build=formulas[s.name])
                 for s in declared)


STEPS = paired(DECLARED, FORMULAS)
STEP_BY_NAME = {s.name: s for s in STEPS}


def evaluate(inputs: pl.DataFrame | pl.LazyFrame, columns: Sequence[str] | None = None
             ) -> pl.DataFrame:
    """Apply every step in order. Missing input columns count as null. With `columns`, only
    those are returned, and steps none of them needs are not computed.

    The frame's inputs go through evaluate_arrays (numpy, with libm's pow as polars has it:
    the same figures bit for bit, without the cost of a polars plan of 30-odd steps on a few
    rows); an input holding NaN as a value (not null) takes the polars expressions."""
    frame = inputs.collect() if isinstance(inputs, pl.LazyFrame) else inputs
    present = [name for name in INPUTS if name in frame.columns]
    floats = [name for name in present if frame.schema[name].is_float()]
    if floats and any(frame.select(pl.col(name).is_nan().any() for name in floats).row(0)):
        return evaluate_polars(frame, columns)
    given: dict[str, Any] = number_arrays(frame, present)
    for name in ("cost_model", "capacity"):
        if name in frame.columns:
            given[name] = frame[name].cast(pl.String).to_numpy()
    wanted = [s.name for s in STEPS if columns is None or s.name in columns]
    values = evaluate_arrays(given, wanted, exact_pow=True)
    height = frame.height
    added = [pl.lit(None, dtype=pl.Float64()).alias(n) for n in INPUTS if n not in present]
    added += [pl.lit(v).alias(k) for k, v in STRING_DEFAULTS.items() if k not in frame.columns]
    out = frame.with_columns(added).with_columns(
        pl.Series(name, np.broadcast_to(np.asarray(values[name], dtype=np.float64), (height,)),
                  dtype=pl.Float64, nan_to_null=True) for name in wanted)
    return out if columns is None else out.select(columns)


def number_arrays(frame: pl.DataFrame, names: Sequence[str]) -> dict[str, np.ndarray]:
    """The columns `names` of `frame` as float64 arrays, NaN for null: one select of them
    all (not a polars query per column), each array's values contiguous."""
    values = np.ascontiguousarray(frame.select(
        pl.col(name).cast(pl.Float64).fill_null(np.nan) for name in names).to_numpy().T)
    return {name: values[i] for i, name in enumerate(names)}


def evaluate_polars(inputs: pl.DataFrame | pl.LazyFrame, columns: Sequence[str] | None = None
                    ) -> pl.DataFrame:
    """`evaluate` through the steps' polars expressions (what `explain` and the workbook
    read, and the reference evaluate_arrays is tested against)."""
    frame = inputs.lazy()
    present = frame.collect_schema().names()
    missing = [name for name in INPUTS if name not in present]
    frame = frame.with_columns(pl.lit(None, dtype=pl.Float64()).alias(n) for n in missing)
    frame = frame.with_columns(pl.lit(v).alias(k) for k, v in STRING_DEFAULTS.items()
                               if k not in present)
    for step in STEPS:
        value = step.expr()
        frame = frame.with_columns(pl.when(value.is_finite()).then(value).alias(step.name))
    return (frame if columns is None else frame.select(columns)).collect()


def evaluate_arrays(columns: Mapping[str, Any], wanted: Sequence[str], exact_pow: bool = False,
                    steps: dict[str, Any] | None = None) -> dict[str, Any]:
    """The same steps over numpy arrays, for the Monte Carlo: `columns` maps each input to a
    number or a float array (float32 or float64: the arithmetic is float64), all broadcasting
    together (e.g. (candidates, 1) for an input fixed per candidate, (candidates, draws) for a
    drawn one); NaN is null, as is a missing input. `cost_model` and `capacity` are strings or
    arrays of them (defaults as `evaluate`). Returns each wanted column in its broadcast shape
    (a number when it is the same in every row); a value that is not a finite number is NaN,
    as `evaluate` makes it null.

    Only what the wanted columns read is computed, once: a step when first read, and of a
    `when` only the branches some element takes (a block of one cost model never computes the
    TCO lines of a price per hour, nor the sizing steps without a demand). `exact_pow`: libm's
    pow, as polars computes it (numpy's vectorised pow, the default, can differ in the last
    bit).

    It evaluates the formulas without polars (over a polars frame of candidates x draws rows
    the Monte Carlo's evaluation takes many times as long: docs/performance.md) and keeps
    polars' results for the part of its API the formulas use, no more (a formula calling
    anything else fails here with an AttributeError, and tests/pipeline/test_metrics_arrays.py
    compares every step, bit for bit, against `evaluate_polars`):
    - operations: `c(name)`; `+ - * /` with columns or numbers (a division by a number
      literal multiplies by its reciprocal, as polars does), `**`, unary `-`;
      `== < <= > >=`; `.is_null()`, `.is_not_null()`, `.fill_null(v)`, `.ceil()`;
      `c.when(cond).then(v)`, chained `.when(...).then(...)`, `.otherwise(v)` (without it,
      null where no arm holds); `c.coalesce(*columns)`; `c.max_horizontal(*columns)`;
    - null propagation: arithmetic and `**` with a null give null (`**` too where IEEE's
      pow(1, NaN) and pow(NaN, 0) are 1); a comparison with a null is false, so `when` takes
      the next arm, as polars treats a null condition; `fill_null` and `coalesce` replace
      nulls, and `max_horizontal` skips them (null only when all are);
    - NaN: NaN stands for null, so a NaN given as a value (which polars keeps apart from null:
      `fill_null` leaves it) cannot be told from one: `evaluate` sends a frame holding one to
      `evaluate_polars`. Infinities are values until the end of a step, whose non-finite
      results become NaN (null), as `evaluate_polars` keeps only finite values.

    `steps`: every step computed is put in it, so a later evaluation of the same inputs with
    others changed that none of them reads can take them as given instead of computing them
    again (plan.months: the instances a month needs, then the month at its fleet)."""
    block = _ArrayColumns(columns, _power_exact if exact_pow else _power)
    with np.errstate(all="ignore"):  # a step's value that is not a finite number is null
        out = {name: block.value(name) for name in wanted}
    if steps is not None:
        steps.update((k, v) for k, v in block.values.items() if k in STEP_BY_NAME)
    return out


def _plain(x: Any) -> Any:
    """The value behind a formula's operand: an array, a number, a string or NaN for None."""
    if isinstance(x, _Column):
        return x.v
    return np.nan if x is None else x


#: np.sum without its wrapper's cost (a check made for every step and fill_null)
_sum = functools.partial(np.add.reduce, axis=None)


def _has_nan(v: Any) -> bool:
    if not np.isnan(_sum(v)):  # one pass, no mask: a NaN anywhere makes the sum NaN
        return False
    return bool(np.isnan(v).any())


def _pick(condition: Any, then: Any, otherwise: Any) -> Any:
    """np.where over operands computed only if some element takes them, and without
    np.where's per-element cost when the condition is the same everywhere (a cost model or a
    capacity per block, a demand given or not)."""
    condition = _plain(condition)
    if np.ndim(condition) == 0:
        return _plain(then) if condition else _plain(otherwise)
    condition = np.asarray(condition, dtype=bool)
    if condition.all():
        return _plain(then)
    if not condition.any():
        return _plain(otherwise)
    return np.where(condition, _plain(then), _plain(otherwise))


def _power(base: Any, exponent: Any) -> Any:
    """base ** exponent, a null in either giving null as in polars (IEEE's pow(1, NaN) and
    pow(NaN, 0) are 1). numpy's vectorised pow may differ from polars' (libm's) in the last
    bit."""
    out = np.power(base, exponent, dtype=np.float64)
    null = np.isnan(base) | np.isnan(exponent)
    if null.any():
        out = np.where(null, np.nan, out)
    return out


def _power_exact(base: Any, exponent: Any) -> Any:
    """base ** exponent as polars computes it: libm's pow, null giving null."""
    b, e = np.broadcast_arrays(np.asarray(base, dtype=np.float64),
                               np.asarray(exponent, dtype=np.float64))
    out = pl.Series(b.ravel(), nan_to_null=True) ** pl.Series(e.ravel(), nan_to_null=True)
    return out.to_numpy().reshape(b.shape)


def _apply(ufunc: Any, a: Any, b: Any) -> Any:
    """ufunc(a, b), arithmetic in float64 whatever the inputs (the Monte Carlo's draws come as
    float32, exactly widened here); arithmetic with a null that is one number (an input no
    candidate of the block has, a demand not given) is that null, without an array of NaN."""
    if ufunc in _NULL_PROPAGATING:
        if _null_number(a) or _null_number(b):
            return np.nan
        if isinstance(ufunc, np.ufunc):
            return ufunc(a, b, dtype=np.float64)
    return ufunc(a, b)


_NULL_PROPAGATING = (np.add, np.subtract, np.multiply, np.divide, _power, _power_exact)


def _null_number(x: Any) -> bool:
    """Whether `x` is a null that is one number (NaN; not an array)."""
    return bool(x != x) if getattr(x, "ndim", 0) == 0 else False


class _Column:
    """A numpy operand with the polars methods the formulas use (NaN is null), computed when
    first read."""

    __slots__ = ("_compute", "_pow", "_v")

    def __init__(self, compute: Callable[[], Any], power: Callable[[Any, Any], Any]) -> None:
        self._compute: Callable[[], Any] | None = compute
        self._v: Any = None
        self._pow = power

    @property
    def v(self) -> Any:
        if self._compute is not None:
            self._v, self._compute = self._compute(), None
        return self._v

    def _op(self, other: Any, ufunc: Any) -> _Column:
        return _Column(lambda: _apply(ufunc, self.v, _plain(other)), self._pow)

    def _rop(self, other: Any, ufunc: Any) -> _Column:
        return _Column(lambda: _apply(ufunc, _plain(other), self.v), self._pow)

    def __add__(self, o: Any) -> _Column: return self._op(o, np.add)
    def __radd__(self, o: Any) -> _Column: return self._rop(o, np.add)
    def __sub__(self, o: Any) -> _Column: return self._op(o, np.subtract)
    def __rsub__(self, o: Any) -> _Column: return self._rop(o, np.subtract)
    def __mul__(self, o: Any) -> _Column: return self._op(o, np.multiply)
    def __rmul__(self, o: Any) -> _Column: return self._rop(o, np.multiply)
    def __truediv__(self, o: Any) -> _Column:
        if type(o) in (float, int):  # a literal: polars multiplies by its reciprocal
            return self._op(1.0 / o, np.multiply)
        return self._op(o, np.divide)

    def __rtruediv__(self, o: Any) -> _Column: return self._rop(o, np.divide)
    def __pow__(self, o: Any) -> _Column: return self._op(o, self._pow)
    def __rpow__(self, o: Any) -> _Column: return self._rop(o, self._pow)
    def __neg__(self) -> _Column: return _Column(lambda: np.negative(self.v), self._pow)
    def __eq__(self, o: Any) -> _Column: return self._op(o, np.equal)  # type: ignore[override]
    def __lt__(self, o: Any) -> _Column: return self._op(o, np.less)
    def __le__(self, o: Any) -> _Column: return self._op(o, np.less_equal)
    def __gt__(self, o: Any) -> _Column: return self._op(o, np.greater)
    def __ge__(self, o: Any) -> _Column: return self._op(o, np.greater_equal)
    __hash__ = None  # type: ignore[assignment]

    def is_null(self) -> _Column:
        return _Column(lambda: np.isnan(self.v), self._pow)

    def is_not_null(self) -> _Column:
        return _Column(lambda: ~np.isnan(self.v), self._pow)

    def fill_null(self, value: Any) -> _Column:
        def fill() -> Any:
            v = self.v
            return np.where(np.isnan(v), _plain(value), v) if _has_nan(v) else v
        return _Column(fill, self._pow)

    def ceil(self) -> _Column:
        return _Column(lambda: np.ceil(self.v), self._pow)


class _When:
    """`when(condition)`: waits for its `then`."""

    def __init__(self, arms: list[tuple[Any, Any]], condition: Any,
                 power: Callable[[Any, Any], Any]) -> None:
        self.arms, self.condition, self.power = arms, condition, power

    def then(self, value: Any) -> _Then:
        return _Then([*self.arms, (self.condition, value)], self.power)


def _arms(arms: list[tuple[Any, Any]], otherwise: Any) -> Any:
    """when/then chains: the first arm whose condition holds, else `otherwise`."""
    if not arms:
        return _plain(otherwise)
    (condition, value), rest = arms[0], arms[1:]
    return _pick(condition, value, _Column(lambda: _arms(rest, otherwise), _power))


class _Then(_Column):
    """`when(...).then(...)`, null elsewhere until an `otherwise` (or a further `when`)."""

    __slots__ = ("arms",)

    def __init__(self, arms: list[tuple[Any, Any]], power: Callable[[Any, Any], Any]) -> None:
        super().__init__(lambda: _arms(arms, None), power)
        self.arms = arms

    def when(self, condition: Any) -> _When:
        return _When(self.arms, condition, self._pow)

    def otherwise(self, value: Any) -> _Column:
        return _Column(lambda: _arms(self.arms, value), self._pow)


class _ArrayColumns:
    """Columns over numpy arrays (Columns): inputs as given, steps computed when first read."""

    def __init__(self, columns: Mapping[str, Any], power: Callable[[Any, Any], Any]) -> None:
        self.power = power
        # inputs as arrays (never Python numbers, which a formula's literals are)
        given = {**STRING_DEFAULTS, **columns}
        self.values: dict[str, Any] = {k: np.asarray(v) for k, v in given.items()}

    def __call__(self, name: str) -> _Column:
        return _Column(lambda: self.value(name), self.power)

    def value(self, name: str) -> Any:
        if name not in self.values:
            step = STEP_BY_NAME.get(name)
            if step is None:
                self.values[name] = np.nan  # a missing input is null
            else:
                v = _plain(step.build(self))
                if not np.isfinite(_sum(v)):  # one pass; then, if need be, the mask
                    bad = ~np.isfinite(v)
                    if bad.any():  # not a finite number: null (NaN)
                        v = np.where(bad, np.nan, v)
                self.values[name] = v
        return self.values[name]

    def when(self, condition: Any) -> _When:
        return _When([], condition, self.power)

    def coalesce(self, *columns: Any) -> _Column:
        def first(values: Sequence[Any]) -> Any:
            v = _plain(values[0])
            if len(values) == 1 or not _has_nan(v):
                return v  # the others are not read
            return np.where(np.isnan(v), first(values[1:]), v)
        return _Column(lambda: first(columns), self.power)

    def max_horizontal(self, *columns: Any) -> _Column:
        return self._fold(np.fmax, columns)

    def min_horizontal(self, *columns: Any) -> _Column:
        return self._fold(np.fmin, columns)

    def _fold(self, pick: Any, columns: Sequence[Any]) -> _Column:
        def fold() -> Any:
            out = _plain(columns[0])
            for x in columns[1:]:
                out = pick(out, _plain(x))  # a null is skipped, as polars does
            return out
        return _Column(fold, self.power)


PriceT = TypeVar("PriceT", float, pl.Expr)


def eur_per_kwh(price_eur_per_mwh: PriceT) -> PriceT:
    """Market prices come per MWh, tariffs per kWh: the one place the two meet."""
    return price_eur_per_mwh / KWH_PER_MWH
