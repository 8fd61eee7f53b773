"""Canonical tables for reference and market data: providers, their qualifications, hardware,
region -> zone map, GPU offers, electricity prices, grid intensity, residual mixes, tariff
components, FX rates, the rules of the regulatory gates with the sovereignty framework's
objectives, the defaults of power figures left out, and the per-token prices of API offers."""

from __future__ import annotations

from schemas.table import Table

CITED = ("source_url", "source_date", "licence")

PROVIDERS = Table(
    "core__providers",
    "Cloud and hosting providers with the facts the sovereignty level is computed from.",
    ("provider_id", "provider_name", "hq_country", "parent_company", "parent_hq_country",
     "non_eu_law_exposure", "exposure_basis", *CITED),
    key=("provider_id",),
    required=("provider_name", "hq_country", "non_eu_law_exposure", *CITED),
)

QUALIFICATIONS = Table(
    "core__qualifications",
    "Security qualifications held by a provider, with the scope they actually cover.",
    ("provider_id", "scheme", "scheme_version", "scope", "covers_gpu_offers", "qualified_on",
     *CITED),
    key=("provider_id", "scheme", "scope"),
    required=("covers_gpu_offers", *CITED),
)

HARDWARE = Table(
    "core__hardware",
    "Accelerator specifications from vendors' datasheets (dense figures only).",
    ("gpu", "gpu_vendor", "form_factor", "memory_gb", "memory_bandwidth_gb_per_s",
     "bf16_dense_tflops", "fp8_dense_tflops", "tdp_w", *CITED),
    key=("gpu",),
    required=("gpu_vendor", "memory_gb", "memory_bandwidth_gb_per_s", "bf16_dense_tflops",
              "tdp_w", *CITED),
)

REGIONS = Table(
    "core__regions",
    "Where each cloud region is: its country and electricity bidding zone.",
    ("provider_id", "region", "country", "zone", *CITED),
    key=("provider_id", "region"),
    required=("country", "zone", *CITED),
)

GPU_OFFERS = Table(
    "core__gpu_offers",
    "GPU instance prices, in the original currency and in EUR at a dated ECB rate.",
    ("vintage", "provider_id", "offer_id", "region", "zone", "gpu", "gpu_count",
     "pricing_model", "price_original_per_hour", "currency", "fx_date", "fx_units_per_eur",
     "price_eur_per_hour", "price_eur_per_gpu_hour", "note", *CITED),
    key=("vintage", "provider_id", "offer_id", "region", "pricing_model"),
    required=("zone", "gpu", "gpu_count", "price_original_per_hour", "currency",
              "price_eur_per_hour", "price_eur_per_gpu_hour", *CITED),
)

ELECTRICITY_PRICES = Table(
    "core__electricity_prices",
    "Day-ahead wholesale electricity prices per bidding zone and interval.",
    ("vintage", "zone", "interval_start_utc", "resolution", "price_eur_per_mwh", "price_basis",
     *CITED),
    key=("vintage", "zone", "interval_start_utc", "resolution"),
    required=("price_eur_per_mwh", "price_basis", *CITED),
)

GRID_INTENSITY = Table(
    "core__grid_intensity",
    "Grid carbon intensity per zone and interval, with its emission-factor basis.",
    ("vintage", "zone", "interval_start_utc", "resolution", "intensity_gco2e_per_kwh",
     "emission_factor_basis", "accounting", *CITED),
    key=("vintage", "zone", "interval_start_utc", "resolution", "emission_factor_basis"),
    required=("intensity_gco2e_per_kwh", "emission_factor_basis", "accounting", *CITED),
)

FX_RATES = Table(
    "core_ecb__fx_rates",
    "ECB euro foreign exchange reference rates.",
    ("rate_date", "currency", "units_per_eur", *CITED),
    key=("rate_date", "currency"),
    required=("units_per_eur", *CITED),
)

EMBODIED = Table(
    "core__embodied_emissions",
    "Manufacturing (embodied) emissions of accelerators and servers, from cited figures.",
    ("hardware_item", "hardware_kind", "embodied_kgco2e", "embodied_basis", "note", *CITED),
    key=("hardware_item", "hardware_kind"),
    required=("embodied_kgco2e", *CITED),
)

RESIDUAL_MIX = Table(
    "core__residual_mix",
    "A country's residual mix: the emissions of electricity no contractual instrument claims "
    "(guarantees of origin removed), what market-based carbon takes where nothing is covered.",
    ("vintage", "country", "interval_start_utc", "resolution", "intensity_gco2e_per_kwh",
     "emission_factor_basis", *CITED),
    key=("vintage", "country", "interval_start_utc", "resolution"),
    required=("intensity_gco2e_per_kwh", "emission_factor_basis", *CITED),
)

PUBLISHED_PER_REQUEST = Table(
    "core__published_per_request",
    "Other systems' published energy and emissions per request, with their boundaries: "
    "context for a candidate's own figures, never compared as equals.",
    ("system", "request_description", "per_request_boundary", "published_wh_per_request",
     "published_gco2e_per_request", "published_accounting", "note", *CITED),
    key=("system",),
    required=("request_description", "per_request_boundary", "published_accounting", *CITED),
)

TARIFF_COMPONENTS = Table(
    "core__tariff_components",
    "A country's non-household electricity price components per consumption band and year "
    "(Eurostat nrg_pc_205_c): network costs and taxes and levies (VAT excluded), what an "
    "all-in tariff adds to its energy price.",
    ("vintage", "country", "consumption_band", "interval_start_utc", "resolution",
     "energy_supply_eur_per_kwh", "network_eur_per_kwh", "taxes_levies_eur_per_kwh", *CITED),
    key=("vintage", "country", "consumption_band", "interval_start_utc", "resolution"),
    required=("network_eur_per_kwh", "taxes_levies_eur_per_kwh", *CITED),
)

REGULATORY_RULES = Table(
    "core__regulatory_rules",
    "The rules the regulatory gates check (Germany's Energy Efficiency Act § 11, the EU "
    "data-centre reporting duty): a site fact against a limit, for data centres in the rule's "
    "scope and start-of-operation window, with the legal basis and its citation.",
    ("rule_id", "instrument", "country", "legal_basis", "requirement", "gate_metric",
     "gate_direction", "gate_limit", "commissioned_from", "commissioned_before", "in_force_from",
     "gate_scope", "scope_min_kw", *CITED),
    key=("rule_id",),
    required=("instrument", "country", "legal_basis", "requirement", "gate_metric",
              "gate_direction", "gate_limit", "gate_scope", "scope_min_kw", *CITED),
)

SOVEREIGNTY_OBJECTIVES = Table(
    "core__sovereignty_objectives",
    "The EU Cloud Sovereignty Framework's Sovereignty Objectives, their titles and weights: "
    "the rows of each candidate's sovereignty rubric.",
    ("objective", "objective_title", "weight_pct", "objective_assesses", *CITED),
    key=("objective",),
    required=("objective_title", "weight_pct", "objective_assesses", *CITED),
)

POWER_DEFAULTS = Table(
    "core__power_defaults",
    "The ranges a power figure the proposal leaves out is derived from: the busy and idle "
    "shares of a GPU's TDP, and the PUE of each kind of site, each with its citation.",
    ("default_figure", "default_site", "default_low", "default_mode", "default_high", *CITED),
    key=("default_figure", "default_site"),
    required=("default_low", "default_mode", "default_high", *CITED),
)

API_PRICES = Table(
    "core__api_prices",
    "Per-token prices of API offers (tokens bought from a provider's endpoint), per million "
    "input and output tokens in the provider's currency, with the zone they are served from.",
    ("vintage", "provider_id", "api_model", "region", "zone", "input_price_original_per_mtok",
     "output_price_original_per_mtok", "currency", "min_billing_tokens", "note", *CITED),
    key=("vintage", "provider_id", "api_model", "region"),
    # no zone where the provider commits to no inference location (Mistral's global endpoint):
    # the candidate then states its own
    required=("input_price_original_per_mtok", "output_price_original_per_mtok", "currency",
              *CITED),
)

MARKET_TABLES = (PROVIDERS, QUALIFICATIONS, HARDWARE, REGIONS, GPU_OFFERS,
                 ELECTRICITY_PRICES, GRID_INTENSITY, FX_RATES, EMBODIED, RESIDUAL_MIX,
                 PUBLISHED_PER_REQUEST, TARIFF_COMPONENTS, REGULATORY_RULES,
                 SOVEREIGNTY_OBJECTIVES, POWER_DEFAULTS, API_PRICES)
