"""The metric chain's steps, declared once: their order, names, formulas in words, the cost
models each enters, and each one's Excel form; the inputs they read, and the words of the two
string inputs. pipeline/engine/metrics.py pairs each declared step, by name, with its formula
as a polars expression (and over numpy arrays); the workbook (reports/files/xlsx.py) writes
each step as the Excel formula declared here. A step's unit and meaning are its column's
declaration in schemas/outputs.toml.

Inputs (one column each, INPUT_COLUMNS): goodput, utilisation, power, PUE, electricity tariff,
grid intensity, the price of the hours paid for or the on-prem TCO lines, embodied emissions,
the declared demand (tokens per day, peak factor, headroom, redundancy instances), the carbon
claims of the electricity contract (covered share and its factor, the supplier's factor) with
the country's residual mix, and the tokens one request counts.

Carbon is computed both ways of the GHG Protocol's Scope 2, side by side and never mixed:
location-based (`carbon_gco2e_per_mtok`, the zone's grid intensity) and market-based
(`carbon_market_gco2e_per_mtok`, the contracts, else the residual mix); `policy.carbon_basis`
says which one the `carbon` objective ranks on.

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
turned into `demand_tokens_per_day` on the proposal's token basis before the steps, so it
sizes, bills and prices through the same steps. The fleet is sized on the binding count:
`instances` is the larger of the goodput count `goodput_instances` (the peak's tokens/s over
a replica's goodput) and the Little's-law count `littles_law_instances` (a replica at
operating concurrency c serves c / request duration requests/s, the duration being
TTFT + (output tokens - 1) x TPOT: the mean lengths, as Little's law holds for means); the
goodput count alone without a request shape. On the output token basis the Little's-law
count is the larger whenever TTFT exceeds one TPOT on a replica whose goodput is c / TPOT (its
request takes TTFT + (n - 1) x TPOT, the goodput count charges it n x TPOT), and by much more
when the measured goodput is above c / TPOT. With `output_tokens_p95` the duration of a
p95-length request is reported beside it.

Two string columns say how hours are paid for:
  `cost_model` (COST_MODELS): tco (annuity of capex + maintenance + staff + hosting +
  electricity), a price per hour (declared, on_demand, reserved), or per_token (an API's
  price per million tokens, billed per token used: elastic);
  `capacity` (CAPACITIES): provisioned (default: every hour of every sized instance is billed,
  so fixed costs spread over u x capacity) or elastic (a cloud billed per busy instance-hour,
  holding at least `min_instances` in every hour: hour by hour where the day's hours are
  given, HOUR_DEMAND_RATIOS, else on the day's mean; without a demand, only busy hours are
  paid).
A null input gives a null output, and every step's value that is not a finite number (a
division by a zero goodput) is null.

A step's `excel` is a template the workbook fills with cell references, so its Scorecard sheet
computes the same figure from its Inputs sheet. In a template `{name}` is the cell of column
`name` in the same row, and the step is an empty cell ("") when that cell is empty (a null
input gives a null output); `{name?}` is the cell without that rule (the template tests it
itself); `{name:1}` is the cell, or 1 when it is empty (polars' fill_null(1)). Every filled
formula is also wrapped in IFERROR(..., ""), as a value that is not a finite number is null
here. A step without a sensible Excel form has `excel=None`: the workbook writes its value and
says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.outputs import OUTPUTS

#: the values of `cost_model` and `capacity`; the first of each is the default
COST_MODELS = ("declared", "on_demand", "reserved", "tco", "per_token")
CAPACITIES = ("provisioned", "elastic")
TCO_ONLY = ("tco",)  # the lines of an on-prem TCO; a price per hour replaces them otherwise
PER_TOKEN = ("per_token",)  # tokens bought from an API: a price per million tokens

#: each local hour's demand over the day's mean (hour 0 first): an elastic fleet with a floor
#: is billed hour by hour where the day's hours are known ([workload] hourly_profile, or a
#: mix's burst's own hours); null elsewhere
HOUR_DEMAND_RATIOS = tuple(f"hour_{h:02d}_demand_ratio" for h in range(24))

#: the formulas' numeric input columns, in the workbook's Inputs order; their units and
#: meanings are declared in schemas/outputs.toml
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
    "covered_share", "covered_gco2e_per_kwh", "supplier_gco2e_per_kwh", "residual_gco2e_per_kwh",
    "request_tokens",
    "price_eur_per_mtok",
    "energy_eur_per_kwh", "network_eur_per_kwh", "taxes_levies_eur_per_kwh",
    *HOUR_DEMAND_RATIOS,
)


@dataclass(frozen=True)
class Step:
    """One step of the chain: a column computed from inputs and earlier steps."""

    name: str
    #: the formula in words, as `explain` and the workbook's header comments show it
    formula: str
    #: the cost models whose figures the step enters: `explain` leaves the others out (the
    #: step is still computed for every row; where it does not apply its value is unused)
    models: tuple[str, ...] = COST_MODELS
    #: the same formula over spreadsheet cells (module docstring), or None
    excel: str | None = None

    @property
    def unit(self) -> str:
        return OUTPUTS[self.name].unit


#: the steps in the order they are computed (each reads inputs and earlier steps only)
STEPS: tuple[Step, ...] = (
    Step("electricity_eur_per_kwh",
         "contract tariff if given, else the energy price (an all-in tariff's declared PPA or "
         "contract energy price, else wholesale x retail multiplier (default 1) + grid fee "
         "(default 0)) + network costs (default 0) + taxes and levies excl. VAT (default 0)",
         excel='IF({contract_eur_per_kwh?}<>"",{contract_eur_per_kwh?},'
               'IF({energy_eur_per_kwh?}<>"",{energy_eur_per_kwh?},'
               'IF({wholesale_eur_per_kwh?}="","",'
               '{wholesale_eur_per_kwh?}*{retail_multiplier:1}+{grid_fee_eur_per_kwh:0}))'
               '+{network_eur_per_kwh:0}+{taxes_levies_eur_per_kwh:0})'),
    Step("peak_tokens_per_s",
         "demand_tokens_per_day / 86400 x peak_factor (default 1): the demand at its peak "
         "(null without a demand)",
         excel="{demand_tokens_per_day}/86400*{peak_factor:1}"),
    # Little's law beside the goodput count (null without a request rate or an operating
    # concurrency); `instances` takes the larger of the two
    Step("request_tpot_s",
         "operating_tpot_s if given, else operating_concurrency / tokens_per_s (each of the c "
         "sequences in flight gets one token per decode step)",
         excel='IF({operating_tpot_s?}<>"",{operating_tpot_s?},'
               'IF({operating_concurrency?}="","",{operating_concurrency?}/{tokens_per_s}))'),
    Step("request_duration_s",
         "operating_ttft_s + (request_output_tokens - 1) x request_tpot_s",
         excel="{operating_ttft_s}+({request_output_tokens}-1)*{request_tpot_s}"),
    Step("request_duration_p95_s",
         "operating_ttft_s + (request_output_tokens_p95 - 1) x request_tpot_s (reported "
         "beside the mean's; Little's law takes the mean)",
         excel="{operating_ttft_s}+({request_output_tokens_p95}-1)*{request_tpot_s}"),
    Step("replica_requests_per_s",
         "operating_concurrency / request_duration_s (Little's law)",
         excel="{operating_concurrency}/{request_duration_s}"),
    Step("littles_law_instances",
         "ceil(demand_requests_per_s x peak_factor / (replica_requests_per_s x (1 - "
         "headroom))) + redundancy_instances: the same headroom and spares as "
         "`goodput_instances`, so the two counts differ only by their method",
         excel="CEILING({demand_requests_per_s}*{peak_factor:1}"
               "/({replica_requests_per_s}*(1-{headroom:0})),1)+{redundancy_instances:0}"),
    Step("goodput_instances",
         "ceil(peak_tokens_per_s / (tokens_per_s x (1 - headroom))) + redundancy_instances: "
         "the instances the peak's tokens/s needs with its headroom, and the spares (N+1: 1)",
         excel="CEILING({peak_tokens_per_s}/({tokens_per_s}*(1-{headroom:0})),1)"
               "+{redundancy_instances:0}"),
    Step("instances",
         "max(goodput_instances, littles_law_instances): the binding count (the goodput count "
         "alone without a request shape); billed, priced and shown with the other",
         excel='IF({littles_law_instances?}="",{goodput_instances},'
               'MAX({goodput_instances},{littles_law_instances?}))'),
    Step("headroom_instances",
         "instances - redundancy_instances - max(ceil(peak_tokens_per_s / tokens_per_s), "
         "ceil(demand_requests_per_s x peak_factor / replica_requests_per_s)): the instances "
         "the headroom adds to the bare peak (of the binding count)",
         excel="{instances}-{redundancy_instances:0}"
               "-MAX(CEILING({peak_tokens_per_s}/{tokens_per_s},1),"
               'IF({littles_law_instances?}="",0,CEILING({demand_requests_per_s?}'
               '*{peak_factor:1}/{replica_requests_per_s?},1)))'),
    Step("busy_instances",
         "max(demand_tokens_per_day / 86400 / tokens_per_s, demand_requests_per_s / "
         "replica_requests_per_s): the instances the mean demand keeps busy on the binding "
         "count, as `instances` (without the peak, margins or rounding); per_token (billed "
         "per token): the first only",
         excel='IF(OR({cost_model}="per_token",{littles_law_instances?}=""),'
               '{demand_tokens_per_day}/86400/{tokens_per_s},'
               'MAX({demand_tokens_per_day}/86400/{tokens_per_s},'
               '{demand_requests_per_s?}/{replica_requests_per_s?}))'),
    Step("billed_instances",
         "provisioned: max(instances, min_instances) (a term's minimum commitment, in "
         "instances' worth of its price); elastic, where the day's hours are given: "
         "busy_instances + the mean over the 24 hours of max(min_instances - busy_instances "
         "x hour_NN_demand_ratio, 0), i.e. each hour billed max(its busy instances, "
         "min_instances) (the floor's idle instances in the quiet hours are paid for); "
         "elastic without them: max(busy_instances, min_instances)",
         excel='IF({capacity}="elastic",IF({hour_00_demand_ratio?}="",'
               'MAX({busy_instances},{min_instances:0}),{busy_instances}+('
               + "+".join(f"MAX({{min_instances:0}}-{{busy_instances}}*{{{h}?}},0)"
                          for h in HOUR_DEMAND_RATIOS)
               + ')/24),MAX({instances?},{min_instances:0}))'),
    Step("billed_utilisation",
         "share of the goodput paid for that the mean demand uses: with a demand, "
         "demand_tokens_per_day / 86400 / (tokens_per_s x billed_instances); without, 1 when "
         "elastic, else the declared utilisation",
         excel='IF({demand_tokens_per_day?}<>"",{demand_tokens_per_day?}/86400/'
               '({tokens_per_s}*{billed_instances?}),'
               'IF({capacity}="elastic",1,IF({utilisation?}="","",{utilisation?})))'),
    Step("served_tokens_per_s",
         "tokens_per_s x billed_utilisation (average over the hours paid for)",
         excel="{tokens_per_s}*{billed_utilisation}"),
    Step("average_power_w",
         "busy_power_w x billed_utilisation + min(idle_power_w, busy_power_w) x (1 - "
         "billed_utilisation); without an idle figure, idle hours at busy power (an upper "
         "bound)",
         excel='IF({billed_utilisation}=1,{busy_power_w},{busy_power_w}*{billed_utilisation}'
               '+IF({idle_power_w?}="",{busy_power_w},MIN({idle_power_w?},{busy_power_w}))'
               '*(1-{billed_utilisation}))'),
    Step("capital_eur_per_hour",
         "annuity: (capex - residual / (1 + r)^n) x r / (1 - (1 + r)^-n) with r = annual "
         "rate / 12 and n = months, x 12 / 8760",
         TCO_ONLY,
         # Excel's PMT is the same annuity: PMT(r, n, -capex, residual)
         excel="PMT({cost_of_capital_per_year}/12,{amortisation_months},-{capex_eur},"
               "{residual_eur:0})*12/8760"),
    Step("maintenance_eur_per_hour",
         "capex x maintenance share per year / 8760",
         TCO_ONLY,
         excel="{capex_eur}*{maintenance_share_per_year}/8760"),
    Step("staff_eur_per_hour",
         "staff EUR per year / 8760",
         TCO_ONLY,
         excel="{staff_eur_per_year:0}/8760"),
    Step("hosting_eur_per_hour",
         "own site EUR per year / 8760 + colocation EUR per kW-month x busy kW x 12 / 8760",
         TCO_ONLY,
         excel="{hosting_eur_per_year:0}/8760"
               "+{hosting_eur_per_kw_month:0}*{busy_power_w}/1000*12/8760"),
    Step("electricity_eur_per_hour",
         "average_power_w / 1000 x PUE x electricity tariff",
         TCO_ONLY,
         excel="{average_power_w}/1000*{pue}*{electricity_eur_per_kwh}"),
    Step("token_cost_eur_per_hour",
         "price_eur_per_mtok x tokens_per_s x 3600 / 1e6: the tokens one replica of the "
         "serving hardware assumed serves in an hour, at an API's token price",
         PER_TOKEN,
         excel="{price_eur_per_mtok}*{tokens_per_s}*3600/1000000"),
    Step("cost_eur_per_hour",
         "tco: capital + maintenance + staff + hosting + electricity; per_token: "
         "token_cost_eur_per_hour; on-demand, reserved, declared: price_eur_per_hour",
         excel='IF({cost_model}="tco",{capital_eur_per_hour?}+{maintenance_eur_per_hour?}'
               '+{staff_eur_per_hour?}+{hosting_eur_per_hour?}+{electricity_eur_per_hour?},'
               'IF({cost_model}="per_token",{token_cost_eur_per_hour?},'
               'IF({price_eur_per_hour?}="","",{price_eur_per_hour?})))'),
    Step("monthly_cost_eur",
         "cost_eur_per_hour x billed_instances x 730 h (at the demand)",
         excel="{cost_eur_per_hour}*{billed_instances}*730"),
    Step("monthly_headroom_cost_eur",
         "provisioned: headroom_instances x cost_eur_per_hour x 730 h; elastic: 0 (only busy "
         "instance-hours are billed) (null without a demand)",
         excel='{headroom_instances}*{cost_eur_per_hour}*IF({capacity}="elastic",0,730)'),
    Step("monthly_redundancy_cost_eur",
         "provisioned: redundancy_instances x cost_eur_per_hour x 730 h; elastic: 0 (the "
         "spares are not billed: elastic capacity ignores redundancy_instances) (null without "
         "a demand)",
         excel='IF({instances?}="","",{redundancy_instances:0}*{cost_eur_per_hour}'
               '*IF({capacity}="elastic",0,730))'),
    Step("period_cost_eur",
         "tco: monthly_cost_eur x amortisation_months (the fleet's cost over its "
         "amortisation, at the demand); null for a price per hour",
         TCO_ONLY,
         excel='IF({cost_model}="tco",{monthly_cost_eur}*{amortisation_months},"")'),
    Step("monthly_capital_eur",
         "capital_eur_per_hour x billed_instances x 730 h",
         TCO_ONLY,
         excel="{capital_eur_per_hour}*{billed_instances}*730"),
    Step("cpm_eur_per_mtok",
         "cost_eur_per_hour / (served_tokens_per_s x 3600 / 1e6)",
         excel="{cost_eur_per_hour}/({served_tokens_per_s}*3600/1000000)"),
    Step("energy_j_per_token",
         "average_power_w / served_tokens_per_s",
         excel="{average_power_w}/{served_tokens_per_s}"),
    Step("facility_kwh_per_mtok",
         "energy_j_per_token x 1e6 / 3.6e6 x PUE",
         excel="{energy_j_per_token}*1000000/3600000*{pue}"),
    Step("electricity_eur_per_mtok",
         "facility_kwh_per_mtok x electricity tariff (a breakdown: already inside CPM)",
         excel="{facility_kwh_per_mtok}*{electricity_eur_per_kwh}"),
    Step("carbon_gco2e_per_mtok",
         "facility_kwh_per_mtok x grid intensity (location-based, operational only)",
         excel="{facility_kwh_per_mtok}*{grid_gco2e_per_kwh}"),
    Step("embodied_gco2e_per_mtok",
         "embodied kgCO2e x 1000 / (lifetime years x 8760 x served_tokens_per_s x 3600 / 1e6)",
         excel="{embodied_kgco2e}*1000"
               "/({lifetime_years}*8760*{served_tokens_per_s}*3600/1000000)"),
    Step("market_gco2e_per_kwh",
         "covered_share (default 0) x covered factor (default 0) + (1 - covered_share) x the "
         "supplier's factor, else the country's residual mix, else the location-based grid "
         "intensity (no residual mix: a cloud provider's or a country without one)",
         excel='IF({supplier_gco2e_per_kwh?}<>"",{covered_share:0}*{covered_gco2e_per_kwh:0}'
               '+(1-{covered_share:0})*{supplier_gco2e_per_kwh?},'
               'IF({residual_gco2e_per_kwh?}<>"",{covered_share:0}*{covered_gco2e_per_kwh:0}'
               '+(1-{covered_share:0})*{residual_gco2e_per_kwh?},'
               'IF({grid_gco2e_per_kwh?}="","",{covered_share:0}*{covered_gco2e_per_kwh:0}'
               '+(1-{covered_share:0})*{grid_gco2e_per_kwh?})))'),
    Step("carbon_market_gco2e_per_mtok",
         "facility_kwh_per_mtok x market_gco2e_per_kwh (market-based, operational only)",
         excel="{facility_kwh_per_mtok}*{market_gco2e_per_kwh}"),
    # per request: the demand's mean request on the token basis (null without its shape)
    Step("facility_wh_per_request",
         "facility_kwh_per_mtok x request_tokens / 1e6 x 1000",
         excel="{facility_kwh_per_mtok}*{request_tokens}/1000"),
    Step("carbon_gco2e_per_request",
         "carbon_gco2e_per_mtok x request_tokens / 1e6 (location-based)",
         excel="{carbon_gco2e_per_mtok}*{request_tokens}/1000000"),
    Step("carbon_market_gco2e_per_request",
         "carbon_market_gco2e_per_mtok x request_tokens / 1e6 (market-based)",
         excel="{carbon_market_gco2e_per_mtok}*{request_tokens}/1000000"),
)
