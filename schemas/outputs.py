"""Every figure of the scorecard, declared once: the inputs its formulas read, the steps they
compute, and the other figures of the result a report shows (ranges, sizing, break-even).

Each declaration gives the column name (which carries the unit, as in the store), the unit,
the name a person reads ("CPM"), the meaning and, for a figure candidates are compared on,
which way is better. pipeline/engine/metrics.py takes its units and meanings from here and the
reports their labels ("CPM (EUR/Mtok)"); the store's own columns are declared in
schemas/fields.py, and a name declared in both has the same unit in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Output:
    name: str
    unit: str
    title: str
    meaning: str
    better: Literal["lower", "higher"] | None = None

    @property
    def label(self) -> str:
        """The title with the unit, as headers and axes show it: "CPM (EUR/Mtok)"."""
        return f"{self.title} ({self.unit})"


_LOWER: Literal["lower"] = "lower"
_HIGHER: Literal["higher"] = "higher"

_DECLARED = (
    # --- inputs of the metric formulas (pipeline/engine/metrics.py INPUTS), in its order ----
    Output("tokens_per_s", "tokens/s", "Goodput",
           "goodput while busy (output tokens of requests meeting the SLO)"),
    Output("utilisation", "share", "Utilisation", "busy share of the hours paid for"),
    Output("busy_power_w", "W", "Power", "average power while serving, at the stated boundary"),
    Output("idle_power_w", "W", "Idle power", "average power while idle, at the same boundary"),
    Output("pue", "ratio", "PUE", "facility energy over IT energy"),
    Output("wholesale_eur_per_kwh", "EUR/kWh", "Wholesale price",
           "zone day-ahead wholesale price"),
    Output("retail_multiplier", "ratio", "Retail multiplier",
           "retail multiplier applied to the wholesale price"),
    Output("grid_fee_eur_per_kwh", "EUR/kWh", "Grid fee", "grid fees and levies added per kWh"),
    Output("contract_eur_per_kwh", "EUR/kWh", "Contract tariff",
           "contract tariff or override (replaces the above)"),
    Output("grid_gco2e_per_kwh", "gCO2e/kWh", "Grid intensity",
           "grid carbon intensity (location-based)"),
    Output("price_eur_per_hour", "EUR/h", "Price",
           "declared all-in cost or offer price per instance-hour"),
    Output("capex_eur", "EUR", "Capex",
           "capital expenditure of one instance (GPUs, servers, network, install)"),
    Output("amortisation_months", "months", "Amortisation", "amortisation period"),
    Output("cost_of_capital_per_year", "1/year", "Cost of capital",
           "annual cost of capital (annuity rate)"),
    Output("residual_eur", "EUR", "Residual value", "residual value at the end of amortisation"),
    Output("maintenance_share_per_year", "1/year", "Maintenance",
           "maintenance as a share of capex per year"),
    Output("staff_eur_per_year", "EUR/year", "Staff", "staff cost share of one instance"),
    Output("hosting_eur_per_year", "EUR/year", "Hosting", "own-site hosting cost of one instance"),
    Output("hosting_eur_per_kw_month", "EUR/(kW month)", "Colocation",
           "colocation price per kW of busy power"),
    Output("embodied_kgco2e", "kgCO2e", "Embodied emissions",
           "manufacturing emissions of the instance's hardware"),
    Output("lifetime_years", "years", "Lifetime",
           "hardware lifetime the embodied emissions spread over"),
    # --- steps of the metric formulas (pipeline/engine/metrics.py STEPS), in its order ------
    Output("electricity_eur_per_kwh", "EUR/kWh", "Electricity price",
           "electricity tariff paid per kWh"),
    Output("billed_utilisation", "share", "Billed utilisation",
           "busy share of the hours paid for, as billed"),
    Output("served_tokens_per_s", "tokens/s", "Served goodput",
           "goodput averaged over the hours paid for"),
    Output("average_power_w", "W", "Average power", "power averaged over the hours paid for"),
    Output("capital_eur_per_hour", "EUR/h", "Capital", "capex annuity per instance-hour"),
    Output("maintenance_eur_per_hour", "EUR/h", "Maintenance cost",
           "maintenance per instance-hour"),
    Output("staff_eur_per_hour", "EUR/h", "Staff cost", "staff cost per instance-hour"),
    Output("hosting_eur_per_hour", "EUR/h", "Hosting cost", "hosting per instance-hour"),
    Output("electricity_eur_per_hour", "EUR/h", "Electricity cost",
           "electricity per instance-hour of an on-prem TCO"),
    Output("cost_eur_per_hour", "EUR/h", "Cost", "all-in cost of one instance-hour"),
    Output("cpm_eur_per_mtok", "EUR/Mtok", "CPM", "cost per million output tokens", _LOWER),
    Output("energy_j_per_token", "J/token", "Energy",
           "energy per output token at the power's boundary", _LOWER),
    Output("facility_kwh_per_mtok", "kWh/Mtok", "Facility energy",
           "facility energy (x PUE) per million output tokens", _LOWER),
    Output("electricity_eur_per_mtok", "EUR/Mtok", "Electricity",
           "electricity cost per million output tokens (inside CPM)", _LOWER),
    Output("carbon_gco2e_per_mtok", "gCO2e/Mtok", "Carbon",
           "operational emissions per million output tokens (location-based)", _LOWER),
    Output("embodied_gco2e_per_mtok", "gCO2e/Mtok", "Embodied carbon",
           "manufacturing emissions per million output tokens over the lifetime", _LOWER),
    # --- other figures of the result ----------------------------------------------------------
    Output("electricity_eur_per_mtok_time_matched", "EUR/Mtok", "Electricity, time-matched",
           "electricity per million tokens at the hourly prices of the workload profile",
           _LOWER),
    Output("carbon_gco2e_per_mtok_time_matched", "gCO2e/Mtok", "Carbon, time-matched",
           "emissions per million tokens at the hourly intensity of the workload profile",
           _LOWER),
    Output("sovereignty_level", "level 0-4", "Sovereignty",
           "who controls the deployment and which law reaches it (4 is the most sovereign)",
           _HIGHER),
    Output("p_frontier", "probability", "P(frontier)",
           "share of Monte Carlo draws in which the candidate is on the Pareto frontier"),
    Output("instances", "count", "Instances", "instances the demand's peak needs, with headroom"),
    Output("monthly_cost_eur", "EUR/month", "Cost", "what the sized fleet costs per month"),
    Output("annual_mwh", "MWh/year", "Facility energy",
           "facility energy the sized fleet uses per year"),
    Output("annual_tco2e", "tCO2e/year", "Carbon",
           "operational emissions of the sized fleet per year"),
    Output("tokens_per_day", "tokens/day", "Volume", "daily output-token volume"),
)

#: column -> its declaration
OUTPUTS: dict[str, Output] = {o.name: o for o in _DECLARED}
