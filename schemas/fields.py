"""Every column the project stores, declared once: name (with its unit), dtype, bounds, meaning.

Tables (schemas/market.py, schemas/power.py, ...) list field names; their pandera schemas and
DuckDB DDL are generated from these declarations, so a unit or a bound lives in exactly one
place.
Bounds are there to catch unit mistakes (a 700 kW GPU board, 58,000 EUR/MWh), not to judge
plausible values.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

UTC_TIME = pl.Datetime("us", "UTC")


@dataclass(frozen=True)
class Field:
    name: str
    dtype: pl.DataType
    description: str
    unit: str | None = None
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    isin: tuple[str, ...] | None = None
    pattern: str | None = None


FIELDS: dict[str, Field] = {}


def declare(
    name: str,
    dtype: pl.DataType,
    description: str,
    *,
    unit: str | None = None,
    ge: float | None = None,
    le: float | None = None,
    gt: float | None = None,
    isin: tuple[str, ...] | None = None,
    pattern: str | None = None,
) -> Field:
    """Register a field; declaring the same name twice is a programming error."""
    if name in FIELDS:
        raise ValueError(f"field {name!r} is declared twice")
    field = Field(name, dtype, description, unit, ge, le, gt, isin, pattern)
    FIELDS[name] = field
    return field


ZONE_PATTERN = r"^[A-Z]{2}(-[A-Z0-9]+)*$"
VINTAGE_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"

# --- provenance, carried by every core row -------------------------------------------------
declare("load_id", pl.String(), "The load that wrote this row (-> loads.load_id).")
declare("snapshot_sha256", pl.String(), "sha256 of the raw bytes this row was parsed from "
        "(-> raw_snapshots.sha256).", pattern=SHA256_PATTERN)
declare("vintage", pl.String(), "Market-data month this row belongs to (YYYY-MM).",
        pattern=VINTAGE_PATTERN)
declare("source_url", pl.String(), "Where the figure was published.", pattern=r"^https?://")
declare("source_date", pl.Date(), "When the figure was published or observed at its source.")
declare("licence", pl.String(), "Licence or terms under which the figure is reused.")
declare("note", pl.String(), "Free-text caveat about this row (scope, estimate, substitution).")

# --- providers and sovereignty facts -------------------------------------------------------
declare("provider_id", pl.String(), "Lowercase provider slug (self, scaleway, ovhcloud, aws, ...).",
        pattern=r"^[a-z0-9][a-z0-9_-]*$")
declare("provider_name", pl.String(), "Provider's legal or trading name.")
declare("hq_country", pl.String(), "ISO 3166-1 alpha-2 country of the provider's headquarters.",
        pattern=r"^[A-Z]{2}$")
declare("parent_company", pl.String(), "Ultimate parent company (null when independent).")
declare("parent_hq_country", pl.String(), "ISO alpha-2 country of the ultimate parent's HQ.",
        pattern=r"^[A-Z]{2}$")
declare("non_eu_law_exposure", pl.Boolean(), "Provider or parent is subject to non-EU "
        "extraterritorial law reaching data in EU regions (e.g. the US CLOUD Act).")
declare("exposure_basis", pl.String(), "Which law creates the exposure, and why.")
declare("scheme", pl.String(), "Qualification or certification scheme (SecNumCloud, C5, ...).")
declare("scheme_version", pl.String(), "Version or level of the scheme.")
declare("scope", pl.String(), "Which services the qualification covers, in the issuer's words.")
declare("covers_gpu_offers", pl.Boolean(), "Whether the qualification covers the provider's "
        "GPU compute offers (it often covers another product line only).")
declare("qualified_on", pl.Date(), "Date the qualification was granted or last confirmed.")

# --- hardware ------------------------------------------------------------------------------
declare("gpu", pl.String(), "Accelerator model id, e.g. H100-SXM-80GB.",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9.+-]*$")
declare("gpu_vendor", pl.String(), "Accelerator vendor.", isin=("NVIDIA", "AMD", "Intel"))
declare("memory_gb", pl.Float64(), "Accelerator memory (1 GB = 1e9 bytes).", unit="GB",
        gt=0, le=2000)
declare("memory_bandwidth_gb_per_s", pl.Float64(), "Peak memory bandwidth.", unit="GB/s",
        gt=0, le=50_000)
declare("bf16_dense_tflops", pl.Float64(), "Peak dense BF16 tensor throughput (never the "
        "sparse headline figure).", unit="TFLOP/s", gt=0, le=20_000)
declare("fp8_dense_tflops", pl.Float64(), "Peak dense FP8 tensor throughput (null when the "
        "accelerator has no FP8).", unit="TFLOP/s", gt=0, le=40_000)
declare("tdp_w", pl.Float64(), "Board power limit (TDP/TBP) of one accelerator.", unit="W",
        gt=0, le=3_000)
declare("form_factor", pl.String(), "SXM, OAM, PCIe, ...")

# --- GPU offers ----------------------------------------------------------------------------
declare("offer_id", pl.String(), "Provider's own name for the offer (SKU, flavour, instance).")
declare("gpu_count", pl.Int64(), "Accelerators in one instance or node.", unit="GPU",
        ge=1, le=1024)
declare("region", pl.String(), "Provider region or zone code (fr-par-2, francecentral, ...).")
declare("zone", pl.String(), "Bidding zone or ISO country code (FR, DE-LU, ES, ...).",
        pattern=ZONE_PATTERN)
declare("country", pl.String(), "ISO alpha-2 country.", pattern=r"^[A-Z]{2}$")
declare("pricing_model", pl.String(), "How the offer is billed.",
        isin=("on_demand", "reserved", "spot"))
declare("price_original_per_hour", pl.Float64(), "Price per instance-hour in the provider's "
        "own currency, as published, ex VAT.", unit="currency/h", gt=0, le=10_000)
declare("currency", pl.String(), "ISO 4217 code of the published price.", pattern=r"^[A-Z]{3}$")
declare("fx_date", pl.Date(), "Date of the ECB reference rate used (null for EUR prices).")
declare("fx_units_per_eur", pl.Float64(), "ECB reference rate: units of `currency` per 1 EUR "
        "(null for EUR prices).", unit="currency/EUR", gt=0, le=100_000)
declare("price_eur_per_hour", pl.Float64(), "Price per instance-hour in EUR, ex VAT.",
        unit="EUR/h", gt=0, le=10_000)
declare("price_eur_per_gpu_hour", pl.Float64(), "Price per accelerator-hour in EUR, ex VAT.",
        unit="EUR/(GPU h)", gt=0, le=1_000)

# --- electricity prices, grid intensity, FX --------------------------------------------------
declare("interval_start_utc", UTC_TIME, "Start of the interval the value covers (UTC).")
declare("resolution", pl.String(), "Length of the interval the value covers.",
        isin=("15min", "hour", "day", "month", "year"))
declare("price_eur_per_mwh", pl.Float64(), "Day-ahead wholesale electricity price "
        "(may be negative).", unit="EUR/MWh", ge=-1_000, le=5_000)
declare("price_basis", pl.String(), "What the price is.",
        isin=("day_ahead_average", "day_ahead"))
declare("intensity_gco2e_per_kwh", pl.Float64(), "Grid carbon intensity of consumed or "
        "produced electricity.", unit="gCO2e/kWh", ge=0, le=2_000)
declare("emission_factor_basis", pl.String(), "lifecycle (upstream included) or direct "
        "(combustion only): never mixed silently.", isin=("lifecycle", "direct"))
declare("accounting", pl.String(), "Carbon accounting method.", isin=("location_based",))
declare("rate_date", pl.Date(), "ECB reference-rate date (a TARGET working day).")
declare("units_per_eur", pl.Float64(), "Units of `currency` per 1 EUR, as the ECB publishes.",
        unit="currency/EUR", gt=0, le=100_000)

# --- embodied emissions ----------------------------------------------------------------------
declare("hardware_item", pl.String(), "A GPU id, or a server class such as server-8gpu "
        "(a node without its GPUs).")
declare("hardware_kind", pl.String(), "What the item is.", isin=("gpu", "server"))
declare("embodied_kgco2e", pl.Float64(), "Manufacturing emissions of one unit.",
        unit="kgCO2e", gt=0, le=100_000)
declare("embodied_basis", pl.String(), "Life-cycle stages covered, as the source states.")
