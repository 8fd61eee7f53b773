"""Every formula of the scorecard, in one place, as an ordered list of named steps.

Each step is one formula over columns (inputs or earlier steps), written once against a
column namespace `c` (`c("name")`, `c.when`, `c.coalesce`, `c.max_horizontal`, polars' names),
with its formula in words. Built with POLARS it is a polars expression (`Step.expr()`: what
`explain` reads and `evaluate_polars` applies); computed by `evaluate_arrays` it is numpy
arrays that broadcast, (candidates, draws) for the Monte Carlo. `evaluate` of a frame goes
through evaluate_arrays too, figure for figure the polars expressions' (tested). So the same
list computes one row per candidate, every Monte Carlo draw, the tornado and the sizing, and
`scorecard explain` prints the derivation from it. The unit and meaning of every input and
step column are declared once, in schemas/outputs.py.
A null input gives a null output; the caller records why.

Inputs (one column each, see INPUTS): goodput, utilisation, power, PUE, electricity tariff,
grid intensity, the price of the hours paid for or the on-prem TCO lines, embodied emissions,
and the declared demand (tokens per day, peak factor, headroom, redundancy instances).

One utilisation model. With a demand, the fleet is sized for the peak (`instances`) and the
utilisation of the hours paid for follows from it: mean demand over the capacity billed. The
declared `utilisation` is read only when no demand is given. So CPM, energy and carbon per
token, the monthly cost and the Monte Carlo describe the same fleet, and
`cpm_eur_per_mtok = monthly_cost_eur / (demand_tokens_per_day x 365 / 12 / 1e6)`.

What the sizing's margins cost: `instances` is the peak with its headroom plus
`redundancy_instances` spares (N+1: 1); `headroom_instances` is what the headroom adds to the
bare peak, and `monthly_headroom_cost_eur` / `monthly_redundancy_cost_eur` price those
instances at the candidate's cost per hour x 730 h when provisioned (elastic capacity bills
busy instance-hours only, so neither is billed there: 0, and its billing ignores the
redundancy). `period_cost_eur` is a TCO fleet's monthly cost over its amortisation months.

Request-level demand (`[demand] requests_per_s` with the mean prompt and output tokens) is
turned into `demand_tokens_per_day` on the proposal's token basis by
`tokens_per_day_from_requests` before the steps, so it sizes, bills and prices through the same
steps. Beside the goodput-based `instances`, the Little's-law count `littles_law_instances` is
reported (never billed): a replica at operating concurrency c serves c / request duration
requests/s, the duration being TTFT + (output tokens - 1) x TPOT (the mean lengths: Little's
law holds for means); with `output_tokens_p95` the duration of a p95-length request is reported
beside it.

Two string columns say how hours are paid for:
  `cost_model`: tco (annuity of capex + maintenance + staff + hosting + electricity) or a price
  per hour (declared, on_demand, reserved);
  `capacity`: provisioned (default: every hour of every sized instance is billed, so fixed
  costs spread over u x capacity) or elastic (a cloud billed per busy instance-hour, holding at
  least `min_instances`; without a demand, only busy hours are paid).
Every step's value that is not a finite number (a division by a zero goodput) is null.

Beside its polars expression each step holds its `excel` form, a template the workbook
(reports/files/xlsx.py) fills with cell references, so the Scorecard sheet computes the same figure
from the Inputs sheet. In a template `{name}` is the cell of column `name` in the same row, and
the step is an empty cell ("") when that cell is empty (a null input gives a null output);
`{name?}` is the cell without that rule (the template tests it itself); `{name:1}` is the cell,
or 1 when it is empty (polars' fill_null(1)). Every filled formula is also wrapped in
IFERROR(..., ""), as a value that is not a finite number is null here. A step without a
sensible Excel form has `excel=None`: the workbook writes its value and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

import numpy as np
import polars as pl

from schemas.outputs import OUTPUTS

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86_400.0
HOURS_PER_YEAR = 8760.0  # 365 days: no leap year, as DAYS_PER_MONTH
MONTHS_PER_YEAR = 12.0
HOURS_PER_MONTH = HOURS_PER_YEAR / MONTHS_PER_YEAR
DAYS_PER_MONTH = 365.0 / MONTHS_PER_YEAR
TOKENS_PER_MTOK = 1e6
J_PER_KWH = 3.6e6
KWH_PER_MWH = 1000.0
W_PER_KW = 1000.0
G_PER_KG = 1000.0
G_PER_TONNE = 1e6
COST_MODELS = ("declared", "on_demand", "reserved", "tco")
CAPACITIES = ("provisioned", "elastic")
#: the string inputs' values when a frame lacks them (every evaluator the same)
STRING_DEFAULTS = {"cost_model": COST_MODELS[0], "capacity": CAPACITIES[0]}
TCO_ONLY = ("tco",)  # the lines of an on-prem TCO; a price per hour replaces them otherwise

#: the formulas' input columns; their units and meanings are declared in schemas/outputs.py
INPUT_COLUMNS = (
    "tokens_per_s", "utilisation", "busy_power_w", "idle_power_w", "pue",
    "wholesale_eur_per_kwh", "retail_multiplier", "grid_fee_eur_per_kwh", "contract_eur_per_kwh",
    "grid_gco2e_per_kwh", "price_eur_per_hour", "capex_eur", "amortisation_months",
    "cost_of_capital_per_year", "residual_eur", "maintenance_share_per_year",
    "staff_eur_per_year", "hosting_eur_per_year", "hosting_eur_per_kw_month", "embodied_kgco2e",
    "lifetime_years", "demand_tokens_per_day", "peak_factor", "headroom", "min_instances",
    "redundancy_instances",
    "demand_requests_per_s", "request_output_tokens", "operating_concurrency",
    "operating_ttft_s", "operating_tpot_s", "request_output_tokens_p95",
)

#: input column -> (unit, meaning)
INPUTS: dict[str, tuple[str, str]] = {
    name: (OUTPUTS[name].unit, OUTPUTS[name].meaning) for name in INPUT_COLUMNS}


class Columns(Protocol):
    """What a step's formula is written against: `c("name")` is a column (an input or an
    earlier step) and `c.when`, `c.coalesce`, `c.max_horizontal` are polars' functions of the
    same names. POLARS builds polars expressions from a formula; evaluate_arrays computes the
    same formula over numpy arrays."""

    def __call__(self, name: str) -> Any: ...

    def when(self, condition: Any) -> Any: ...

    def coalesce(self, *columns: Any) -> Any: ...

    def max_horizontal(self, *columns: Any) -> Any: ...


class _PolarsColumns:
    def __call__(self, name: str) -> pl.Expr:
        return pl.col(name)

    def when(self, condition: Any) -> Any:
        return pl.when(condition)

    def coalesce(self, *columns: Any) -> pl.Expr:
        return pl.coalesce(*columns)

    def max_horizontal(self, *columns: Any) -> pl.Expr:
        return pl.max_horizontal(*columns)


POLARS: Columns = _PolarsColumns()


@dataclass(frozen=True)
class Step:
    """A named formula; its unit is the declaration of its column (schemas/outputs.py)."""

    name: str
    formula: str
    #: the formula over the columns `c` (Columns): polars expressions or numpy arrays
    build: Callable[[Columns], Any]
    #: the cost models whose figures the step enters: `explain` leaves the others out (the
    #: step is still computed for every row; where it does not apply its value is unused)
    models: tuple[str, ...] = COST_MODELS
    #: the same formula over spreadsheet cells (module docstring), or None
    excel: str | None = None

    @property
    def unit(self) -> str:
        return OUTPUTS[self.name].unit

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


def _mean_demand_tokens_per_s(c: Columns) -> Any:
    return c("demand_tokens_per_day") / SECONDS_PER_DAY


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


STEPS: tuple[Step, ...] = (
    Step("electricity_eur_per_kwh",
         "contract tariff if given, else wholesale x retail multiplier (default 1) + grid fee "
         "(default 0)",
         lambda c: c.coalesce(
             c("contract_eur_per_kwh"),
             c("wholesale_eur_per_kwh") * c("retail_multiplier").fill_null(1.0)
             + c("grid_fee_eur_per_kwh").fill_null(0.0)),
         excel='IF({contract_eur_per_kwh?}<>"",{contract_eur_per_kwh?},'
               'IF({wholesale_eur_per_kwh?}="","",'
               '{wholesale_eur_per_kwh?}*{retail_multiplier:1}+{grid_fee_eur_per_kwh:0}))'),
    Step("peak_tokens_per_s",
         "demand_tokens_per_day / 86400 x peak_factor (default 1): the demand at its peak "
         "(null without a demand)",
         lambda c: _mean_demand_tokens_per_s(c) * c("peak_factor").fill_null(1.0),
         excel="{demand_tokens_per_day}/86400*{peak_factor:1}"),
    Step("instances",
         "ceil(peak_tokens_per_s / (tokens_per_s x (1 - headroom))) + redundancy_instances: "
         "the instances the peak needs with its headroom, and the spares (N+1: 1)",
         lambda c: (c("peak_tokens_per_s")
                  / (c("tokens_per_s") * (1.0 - c("headroom").fill_null(0.0)))).ceil()
         + c("redundancy_instances").fill_null(0.0),
         excel="CEILING({peak_tokens_per_s}/({tokens_per_s}*(1-{headroom:0})),1)"
               "+{redundancy_instances:0}"),
    Step("headroom_instances",
         "instances - redundancy_instances - ceil(peak_tokens_per_s / tokens_per_s): the "
         "instances the headroom adds to the bare peak",
         lambda c: c("instances") - c("redundancy_instances").fill_null(0.0)
         - (c("peak_tokens_per_s") / c("tokens_per_s")).ceil(),
         excel="{instances}-{redundancy_instances:0}"
               "-CEILING({peak_tokens_per_s}/{tokens_per_s},1)"),
    Step("busy_instances", "demand_tokens_per_day / 86400 / tokens_per_s",
         lambda c: _mean_demand_tokens_per_s(c) / c("tokens_per_s"),
         excel="{demand_tokens_per_day}/86400/{tokens_per_s}"),
    Step("billed_instances",
         "provisioned: instances; elastic: max(busy_instances, min_instances)",
         lambda c: c.when(c("busy_instances").is_null()).then(None).when(_elastic(c)).then(
             c.max_horizontal(c("busy_instances"), c("min_instances").fill_null(0.0)))
         .otherwise(c("instances")),
         excel='IF({capacity}="elastic",MAX({busy_instances},{min_instances:0}),{instances?})'),
    Step("billed_utilisation",
         "busy share of the instance-hours paid for: with a demand, busy_instances / "
         "billed_instances; without, 1 when elastic, else the declared utilisation",
         lambda c: c.when(c("demand_tokens_per_day").is_not_null())
         .then(c("busy_instances") / c("billed_instances"))
         .when(_elastic(c)).then(1.0).otherwise(c("utilisation")),
         excel='IF({demand_tokens_per_day?}<>"",{busy_instances?}/{billed_instances?},'
               'IF({capacity}="elastic",1,IF({utilisation?}="","",{utilisation?})))'),
    Step("served_tokens_per_s",
         "tokens_per_s x billed_utilisation (average over the hours paid for)",
         lambda c: c("tokens_per_s") * c("billed_utilisation"),
         excel="{tokens_per_s}*{billed_utilisation}"),
    Step("average_power_w",
         "busy_power_w x billed_utilisation + idle_power_w x (1 - billed_utilisation); "
         "without an idle figure, idle hours at busy power (an upper bound)",
         lambda c: c.when(c("billed_utilisation") == 1.0).then(c("busy_power_w")).otherwise(
             c("busy_power_w") * c("billed_utilisation")
             + c.coalesce(c("idle_power_w"), c("busy_power_w"))
             * (1.0 - c("billed_utilisation"))),
         excel='IF({billed_utilisation}=1,{busy_power_w},{busy_power_w}*{billed_utilisation}'
               '+IF({idle_power_w?}="",{busy_power_w},{idle_power_w?})*(1-{billed_utilisation}))'),
    Step("capital_eur_per_hour",
         "annuity: (capex - residual / (1 + r)^n) x r / (1 - (1 + r)^-n) with r = annual "
         "rate / 12 and n = months, x 12 / 8760",
         lambda c: _annuity_eur_per_month(c) * MONTHS_PER_YEAR / HOURS_PER_YEAR, TCO_ONLY,
         # Excel's PMT is the same annuity: PMT(r, n, -capex, residual)
         excel="PMT({cost_of_capital_per_year}/12,{amortisation_months},-{capex_eur},"
               "{residual_eur:0})*12/8760"),
    Step("maintenance_eur_per_hour", "capex x maintenance share per year / 8760",
         lambda c: c("capex_eur") * c("maintenance_share_per_year") / HOURS_PER_YEAR, TCO_ONLY,
         excel="{capex_eur}*{maintenance_share_per_year}/8760"),
    Step("staff_eur_per_hour", "staff EUR per year / 8760",
         lambda c: c("staff_eur_per_year").fill_null(0.0) / HOURS_PER_YEAR, TCO_ONLY,
         excel="{staff_eur_per_year:0}/8760"),
    Step("hosting_eur_per_hour",
         "own site EUR per year / 8760 + colocation EUR per kW-month x busy kW x 12 / 8760",
         lambda c: c("hosting_eur_per_year").fill_null(0.0) / HOURS_PER_YEAR
         + c("hosting_eur_per_kw_month").fill_null(0.0) * c("busy_power_w") / W_PER_KW
         * MONTHS_PER_YEAR / HOURS_PER_YEAR, TCO_ONLY,
         excel="{hosting_eur_per_year:0}/8760"
               "+{hosting_eur_per_kw_month:0}*{busy_power_w}/1000*12/8760"),
    Step("electricity_eur_per_hour",
         "average_power_w / 1000 x PUE x electricity tariff",
         lambda c: c("average_power_w") / W_PER_KW * c("pue") * c("electricity_eur_per_kwh"),
         TCO_ONLY, excel="{average_power_w}/1000*{pue}*{electricity_eur_per_kwh}"),
    Step("cost_eur_per_hour",
         "tco: capital + maintenance + staff + hosting + electricity; on-demand, reserved, "
         "declared: price_eur_per_hour",
         lambda c: c.when(_is(c, "tco")).then(
             c("capital_eur_per_hour") + c("maintenance_eur_per_hour")
             + c("staff_eur_per_hour") + c("hosting_eur_per_hour")
             + c("electricity_eur_per_hour")).otherwise(c("price_eur_per_hour")),
         excel='IF({cost_model}="tco",{capital_eur_per_hour?}+{maintenance_eur_per_hour?}'
               '+{staff_eur_per_hour?}+{hosting_eur_per_hour?}+{electricity_eur_per_hour?},'
               'IF({price_eur_per_hour?}="","",{price_eur_per_hour?}))'),
    Step("monthly_cost_eur", "cost_eur_per_hour x billed_instances x 730 h (at the demand)",
         lambda c: c("cost_eur_per_hour") * c("billed_instances") * HOURS_PER_MONTH,
         excel="{cost_eur_per_hour}*{billed_instances}*730"),
    Step("monthly_headroom_cost_eur",
         "provisioned: headroom_instances x cost_eur_per_hour x 730 h; elastic: 0 (only busy "
         "instance-hours are billed) (null without a demand)",
         lambda c: c("headroom_instances") * c("cost_eur_per_hour") * _provisioned_hours(c),
         excel='{headroom_instances}*{cost_eur_per_hour}*IF({capacity}="elastic",0,730)'),
    Step("monthly_redundancy_cost_eur",
         "provisioned: redundancy_instances x cost_eur_per_hour x 730 h; elastic: 0 (the "
         "spares are not billed: elastic capacity ignores redundancy_instances) (null without "
         "a demand)",
         lambda c: c.when(c("instances").is_not_null()).then(
             c("redundancy_instances").fill_null(0.0) * c("cost_eur_per_hour")
             * _provisioned_hours(c)),
         excel='IF({instances?}="","",{redundancy_instances:0}*{cost_eur_per_hour}'
               '*IF({capacity}="elastic",0,730))'),
    Step("period_cost_eur",
         "tco: monthly_cost_eur x amortisation_months (the fleet's cost over its "
         "amortisation, at the demand); null for a price per hour",
         lambda c: c.when(_is(c, "tco")).then(c("monthly_cost_eur") * c("amortisation_months")),
         TCO_ONLY,
         excel='IF({cost_model}="tco",{monthly_cost_eur}*{amortisation_months},"")'),
    Step("monthly_capital_eur", "capital_eur_per_hour x billed_instances x 730 h",
         lambda c: c("capital_eur_per_hour") * c("billed_instances") * HOURS_PER_MONTH, TCO_ONLY,
         excel="{capital_eur_per_hour}*{billed_instances}*730"),
    Step("cpm_eur_per_mtok",
         "cost_eur_per_hour / (served_tokens_per_s x 3600 / 1e6)",
         lambda c: c("cost_eur_per_hour")
         / (c("served_tokens_per_s") * SECONDS_PER_HOUR / TOKENS_PER_MTOK),
         excel="{cost_eur_per_hour}/({served_tokens_per_s}*3600/1000000)"),
    Step("energy_j_per_token", "average_power_w / served_tokens_per_s",
         lambda c: c("average_power_w") / c("served_tokens_per_s"),
         excel="{average_power_w}/{served_tokens_per_s}"),
    Step("facility_kwh_per_mtok", "energy_j_per_token x 1e6 / 3.6e6 x PUE",
         lambda c: c("energy_j_per_token") * TOKENS_PER_MTOK / J_PER_KWH * c("pue"),
         excel="{energy_j_per_token}*1000000/3600000*{pue}"),
    Step("electricity_eur_per_mtok",
         "facility_kwh_per_mtok x electricity tariff (a breakdown: already inside CPM)",
         lambda c: c("facility_kwh_per_mtok") * c("electricity_eur_per_kwh"),
         excel="{facility_kwh_per_mtok}*{electricity_eur_per_kwh}"),
    Step("carbon_gco2e_per_mtok",
         "facility_kwh_per_mtok x grid intensity (location-based, operational only)",
         lambda c: c("facility_kwh_per_mtok") * c("grid_gco2e_per_kwh"),
         excel="{facility_kwh_per_mtok}*{grid_gco2e_per_kwh}"),
    Step("embodied_gco2e_per_mtok",
         "embodied kgCO2e x 1000 / (lifetime years x 8760 x served_tokens_per_s x 3600 / 1e6)",
         lambda c: c("embodied_kgco2e") * G_PER_KG
         / (c("lifetime_years") * HOURS_PER_YEAR * c("served_tokens_per_s")
            * SECONDS_PER_HOUR / TOKENS_PER_MTOK),
         excel="{embodied_kgco2e}*1000"
               "/({lifetime_years}*8760*{served_tokens_per_s}*3600/1000000)"),
)

#: Little's law beside the goodput sizing (reported, never billed): null without a request rate
#: or an operating concurrency
REQUEST_STEPS: tuple[Step, ...] = (
    Step("request_tpot_s",
         "operating_tpot_s if given, else operating_concurrency / tokens_per_s (each of the c "
         "sequences in flight gets one token per decode step)",
         lambda c: c.coalesce(c("operating_tpot_s"),
                             c("operating_concurrency") / c("tokens_per_s")),
         excel='IF({operating_tpot_s?}<>"",{operating_tpot_s?},'
               'IF({operating_concurrency?}="","",{operating_concurrency?}/{tokens_per_s}))'),
    Step("request_duration_s",
         "operating_ttft_s + (request_output_tokens - 1) x request_tpot_s",
         lambda c: request_duration(c("operating_ttft_s"), c("request_output_tokens"),
                                  c("request_tpot_s")),
         excel="{operating_ttft_s}+({request_output_tokens}-1)*{request_tpot_s}"),
    Step("request_duration_p95_s",
         "operating_ttft_s + (request_output_tokens_p95 - 1) x request_tpot_s (reported "
         "beside the mean's; Little's law takes the mean)",
         lambda c: request_duration(c("operating_ttft_s"), c("request_output_tokens_p95"),
                                  c("request_tpot_s")),
         excel="{operating_ttft_s}+({request_output_tokens_p95}-1)*{request_tpot_s}"),
    Step("replica_requests_per_s",
         "operating_concurrency / request_duration_s (Little's law)",
         lambda c: c("operating_concurrency") / c("request_duration_s"),
         excel="{operating_concurrency}/{request_duration_s}"),
    Step("littles_law_instances",
         "ceil(demand_requests_per_s x peak_factor / (replica_requests_per_s x (1 - "
         "headroom))) + redundancy_instances: the same spares as `instances`, so the two "
         "counts differ only by their method",
         lambda c: (c("demand_requests_per_s") * c("peak_factor").fill_null(1.0)
                  / (c("replica_requests_per_s") * (1.0 - c("headroom").fill_null(0.0))))
         .ceil() + c("redundancy_instances").fill_null(0.0),
         excel="CEILING({demand_requests_per_s}*{peak_factor:1}"
               "/({replica_requests_per_s}*(1-{headroom:0})),1)+{redundancy_instances:0}"),
)
STEPS = (*STEPS, *REQUEST_STEPS)

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
    if any(frame[name].dtype.is_float() and frame[name].is_nan().any() for name in present):
        return evaluate_polars(frame, columns)
    given: dict[str, Any] = {name: frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
                             for name in present}
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


def evaluate_arrays(columns: Mapping[str, Any], wanted: Sequence[str], exact_pow: bool = False
                    ) -> dict[str, Any]:
    """The same steps over numpy arrays, for the Monte Carlo: `columns` maps each input to a
    number or a float array (float32 or float64: the arithmetic is float64), all broadcasting
    together (e.g. (candidates, 1) for an input fixed
    per candidate, (candidates, draws) for a drawn one); NaN is null, as is a missing input.
    `cost_model` and `capacity` are strings or arrays of them (defaults as `evaluate`).
    Returns each wanted column in its broadcast shape (a number when it is the same in every
    row); a value that is not a finite number is NaN, as `evaluate` makes it null.

    Only what the wanted columns read is computed, once: a step when first read, and of a
    `when` only the branches some element takes (a block of one cost model never computes the
    TCO lines of a price per hour, nor the sizing steps without a demand). `exact_pow`: libm's
    pow, as polars computes it (numpy's vectorised pow, the default, can differ in the last
    bit and costs a sixth)."""
    block = _ArrayColumns(columns, _power_exact if exact_pow else _power)
    return {name: block.value(name) for name in wanted}


def _plain(x: Any) -> Any:
    """The value behind a formula's operand: an array, a number, a string or NaN for None."""
    if isinstance(x, _Column):
        return x.v
    return np.nan if x is None else x


def _has_nan(v: Any) -> bool:
    if not np.isnan(np.sum(v)):  # one pass, no mask: a NaN anywhere makes the sum NaN
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
    bit; polars' own costs about 6 times as much."""
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
        if any(np.ndim(x) == 0 and x != x for x in (a, b)):
            return np.nan
        if isinstance(ufunc, np.ufunc):
            return ufunc(a, b, dtype=np.float64)
    return ufunc(a, b)


_NULL_PROPAGATING = (np.add, np.subtract, np.multiply, np.divide, _power, _power_exact)


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
                with np.errstate(all="ignore"):
                    v = _plain(step.build(self))
                    if not np.isfinite(np.sum(v)):  # one pass; then, if need be, the mask
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
        def fmax() -> Any:
            out = _plain(columns[0])
            for x in columns[1:]:
                out = np.fmax(out, _plain(x))  # a null is skipped, as polars does
            return out
        return _Column(fmax, self.power)


PriceT = TypeVar("PriceT", float, pl.Expr)


def eur_per_kwh(price_eur_per_mwh: PriceT) -> PriceT:
    """Market prices come per MWh, tariffs per kWh: the one place the two meet."""
    return price_eur_per_mwh / KWH_PER_MWH
