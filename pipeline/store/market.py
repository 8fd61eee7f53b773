"""What the store knows about the market as of a vintage: offers, zone prices, intensities,
reference tables, provider facts, each as a frame. Each answer keeps the source of the figure
it returns. `pipeline.inputs.market.read` reads them into the run's `Market`.

A vintage V sees every row loaded for a vintage <= V; for each item the freshest row wins
(latest vintage, then latest interval). So a month with no fresh ingestion still resolves,
and the report says how old the figure it used is.
"""

from __future__ import annotations

import duckdb
import polars as pl

from pipeline.store.db import frame
from schemas.market import API_PRICES, GPU_OFFERS
from schemas.table import Table


def fx_rates(con: duckdb.DuckDBPyConnection, vintage: str) -> pl.DataFrame:
    """The ECB reference rates dated up to the vintage's last day (units per EUR), with their
    sources: what a declared amount in another currency is converted at. The table has no
    vintage column: a row's vintage is its load's, so a later month's ECB file (whose 90 days
    reach back into this month) leaves this vintage's rates as they were."""
    return frame(con, """
        SELECT * EXCLUDE (rn) FROM (
          SELECT r.rate_date, r.currency, r.units_per_eur, r.source_url, r.source_date,
                 r.licence, r.snapshot_sha256,
                 row_number() OVER (PARTITION BY r.rate_date, r.currency
                                    ORDER BY l.vintage DESC, r.source_date DESC) AS rn
          FROM core_ecb__fx_rates r JOIN loads l USING (load_id)
          WHERE l.vintage <= ? AND r.rate_date <= last_day(CAST(? || '-01' AS DATE)))
        WHERE rn = 1 ORDER BY rate_date, currency""", [vintage, vintage])


def offers(con: duckdb.DuckDBPyConnection, vintage: str) -> pl.DataFrame:
    return _latest(con, vintage, GPU_OFFERS)


def api_prices(con: duckdb.DuckDBPyConnection, vintage: str) -> pl.DataFrame:
    """The per-token prices of API offers as of the vintage: per provider, model and region
    the row of the latest vintage <= V (then the latest published), so a later month's
    ingest of fresh prices replaces the bundled ones; each with its source and snapshot (not
    its load or vintage: the same rows loaded for two vintages are the same figures to a
    diff)."""
    return _latest(con, vintage, API_PRICES, drop=("load_id", "vintage"))


def _latest(con: duckdb.DuckDBPyConnection, vintage: str, table: Table,
            drop: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per key of `table` (its declared key but the vintage) the row of the latest vintage
    <= `vintage`, then the latest published (`source_date`), ordered by that key; the
    columns `drop` left out."""
    by = ", ".join(k for k in table.key if k != "vintage")
    return frame(con, f"""
        SELECT * EXCLUDE ({", ".join(("rn", *drop))}) FROM (
          SELECT *, row_number() OVER (PARTITION BY {by}
                                       ORDER BY vintage DESC, source_date DESC) AS rn
          FROM {table.name} WHERE vintage <= ?)
        WHERE rn = 1 ORDER BY {by}""", [vintage])


_RESOLUTION_ORDER = "CASE resolution WHEN '15min' THEN 1 WHEN 'hour' THEN 2 WHEN 'day' THEN 3 " \
                    "WHEN 'month' THEN 4 ELSE 5 END"


def _distinct_joined(column: str, separator: str) -> str:
    """The SQL aggregate of `column`'s distinct values, sorted, joined by `separator` (NULL
    when all are NULL); `column` and `separator` are this module's constants, never data.
    `string_agg(DISTINCT ...)` says the same in no promised order, and DuckDB plans each as
    two more hash aggregates and a join (about 1 ms each, whatever the rows)."""
    return (f"CASE WHEN count({column}) > 0 THEN array_to_string(list_sort(list_distinct("
            f"list({column}))), '{separator}') END AS {column}")


def zone_prices(con: duckdb.DuckDBPyConnection, vintage: str) -> pl.DataFrame:
    """Per zone: the monthly mean day-ahead price of the latest month <= vintage, from the
    finest resolution available for that month (equal intervals, so a plain mean). Openly
    licensed rows come first: rows flagged `RESTRICTED` (Energy-Charts' ES/PT, ENTSO-E) are
    used only for a zone and month no open source covers, and their licence text goes with
    the figure. One source's intervals are then never averaged with another's. A month's rows
    are those of its finest resolution and of its latest vintage (both, or none)."""
    return frame(con, f"""
        WITH rows AS (
          SELECT *, strftime(interval_start_utc AT TIME ZONE 'UTC', '%Y-%m') AS month,
                 {_RESOLUTION_ORDER} + 10 * (licence LIKE 'RESTRICTED%')::INT AS fineness
          FROM core__electricity_prices WHERE vintage <= ? AND month <= ?),
        finest AS (
          SELECT * FROM rows
          QUALIFY fineness = min(fineness) OVER (PARTITION BY zone, month)
              AND vintage = max(vintage) OVER (PARTITION BY zone, month)),
        latest AS (
          SELECT * FROM finest QUALIFY month = max(month) OVER (PARTITION BY zone))
        SELECT zone, month, avg(price_eur_per_mwh) AS price_eur_per_mwh,
               count(*) AS intervals, any_value(resolution) AS resolution,
               {_distinct_joined("source_url", " ")}, max(source_date) AS source_date,
               {_distinct_joined("licence", "; ")}, {_distinct_joined("snapshot_sha256", " ")}
        FROM latest GROUP BY zone, month ORDER BY zone""", [vintage, vintage])


def zone_intensities(con: duckdb.DuckDBPyConnection, vintage: str) -> pl.DataFrame:
    """Per zone: the latest annual location-based intensity of a year <= the vintage's year,
    lifecycle basis preferred over direct (the two are never averaged together)."""
    return _latest_year(con, vintage, "core__grid_intensity", ("zone",),
                        ("intensity_gco2e_per_kwh", "emission_factor_basis"),
                        prefer="emission_factor_basis = 'lifecycle' DESC")


def residual_mixes(con: duckdb.DuckDBPyConnection, vintage: str) -> pl.DataFrame:
    """Per country: the residual mix of the latest year <= the vintage's year."""
    return _latest_year(con, vintage, "core__residual_mix", ("country",),
                        ("intensity_gco2e_per_kwh", "emission_factor_basis"))


def _latest_year(con: duckdb.DuckDBPyConnection, vintage: str, table: str,
                 keys: tuple[str, ...], columns: tuple[str, ...], prefer: str | None = None
                 ) -> pl.DataFrame:
    """Per `keys` of an annual `table` (rows of resolution 'year'): the row of the latest
    year <= the vintage's year (then the `prefer` order, then the latest vintage), as `keys`,
    `year`, `columns` and the row's source. `table`, `keys`, `columns` and `prefer` are this
    module's constants, never data."""
    year = "year(interval_start_utc AT TIME ZONE 'UTC')"
    by = ", ".join(keys)
    order = ", ".join([f"{year} DESC", *([prefer] if prefer else []), "vintage DESC"])
    return frame(con, f"""
        SELECT * EXCLUDE (rn) FROM (
          SELECT {by}, {year} AS year, {", ".join(columns)},
                 source_url, source_date, licence, snapshot_sha256,
                 row_number() OVER (PARTITION BY {by} ORDER BY {order}) AS rn
          FROM {table}
          WHERE vintage <= ? AND resolution = 'year'
            AND {year} <= CAST(left(?, 4) AS INTEGER))
        WHERE rn = 1 ORDER BY {by}""", [vintage, vintage])


def profile_weighted(con: duckdb.DuckDBPyConnection, vintage: str, weights: list[float],
                     timezone: str) -> pl.DataFrame:
    """Per zone, the vintage month's sub-daily prices and intensities weighted by the
    workload's hourly profile (hour of day in `timezone`). Only 15-minute and hourly rows
    count; zones without them are absent."""
    profile = pl.DataFrame({"hour": list(range(24)), "weight": weights})
    con.register("workload_profile", profile)
    try:
        return frame(con, """
            WITH rows AS (
              SELECT zone, 'price' AS what, price_eur_per_mwh AS value,
                     interval_start_utc AS t, vintage
              FROM core__electricity_prices
              WHERE vintage <= ? AND resolution IN ('15min', 'hour')
              UNION ALL
              SELECT zone, 'grid', intensity_gco2e_per_kwh, interval_start_utc, vintage
              FROM core__grid_intensity
              WHERE vintage <= ? AND resolution IN ('15min', 'hour')
                AND emission_factor_basis = 'lifecycle'),
            month AS (
              SELECT DISTINCT ON (zone, what, t) zone, what, value,
                     hour(t AT TIME ZONE ?) AS hour
              FROM rows WHERE strftime(t AT TIME ZONE 'UTC', '%Y-%m') = ?
              ORDER BY zone, what, t, vintage DESC)
            SELECT zone,
                   sum(CASE WHEN what = 'price' THEN value * weight END)
                     / sum(CASE WHEN what = 'price' THEN weight END)
                     AS wholesale_eur_per_mwh_profile,
                   sum(CASE WHEN what = 'grid' THEN value * weight END)
                     / sum(CASE WHEN what = 'grid' THEN weight END)
                     AS grid_gco2e_per_kwh_profile,
                   count(*) FILTER (WHERE what = 'price') AS price_intervals,
                   count(*) FILTER (WHERE what = 'grid') AS grid_intervals
            FROM month JOIN workload_profile USING (hour)
            GROUP BY zone ORDER BY zone""", [vintage, vintage, timezone, vintage])
    finally:
        con.unregister("workload_profile")


def published_per_request(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return frame(con, "SELECT * EXCLUDE (load_id) FROM core__published_per_request "
                      "ORDER BY system")


def _latest_load(table: str) -> str:
    """The rows of a reference table without a vintage column, all from the single latest ok
    load that wrote it (the package ships the table whole, the same for every vintage: the
    law's dates are in the rows; a row a newer load dropped or renamed is not read), in the
    order the load wrote them (the file's)."""
    return f"""
        SELECT * EXCLUDE (load_id) FROM {table}
        WHERE load_id = (SELECT load_id FROM loads
                         WHERE status = 'ok'
                           AND list_contains(string_split(tables, ','), '{table}')
                         ORDER BY finished_at_utc DESC LIMIT 1)
        ORDER BY rowid"""


def regulatory_rules(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The rules of the regulatory gates, in the file's order (an instrument's rules
    together, as the gates read them), each with its source and snapshot."""
    return frame(con, _latest_load("core__regulatory_rules"))


def sovereignty_objectives(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The EU Cloud Sovereignty Framework's objectives SOV-1 .. SOV-8, in order."""
    return frame(con, _latest_load("core__sovereignty_objectives"))


def power_defaults(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The ranges a power figure a proposal leaves out is derived from (busy and idle shares
    of TDP, the PUE of each kind of site), each with its source and snapshot."""
    return frame(con, _latest_load("core__power_defaults"))


def known_zones(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute("SELECT DISTINCT zone FROM core__electricity_prices UNION "
                       "SELECT DISTINCT zone FROM core__grid_intensity ORDER BY 1").fetchall()
    return [r[0] for r in rows]


def regions(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return frame(con, "SELECT provider_id, region, country, zone FROM core__regions "
                      "ORDER BY provider_id, region")


def hardware(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return frame(con, "SELECT * EXCLUDE (load_id, snapshot_sha256) FROM core__hardware "
                      "ORDER BY gpu")


def models(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return frame(con, "SELECT * FROM core__model_architectures ORDER BY model")


def embodied(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return frame(con, "SELECT hardware_item AS item, hardware_kind AS kind, "
                      "embodied_kgco2e AS kgco2e, source_url, source_date, licence, "
                      "snapshot_sha256 FROM core__embodied_emissions ORDER BY 1, 2")


def providers(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return frame(con, "SELECT * FROM core__providers ORDER BY provider_id")


def qualifications(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return frame(con, "SELECT provider_id, scheme, scheme_version, covers_gpu_offers, scope, "
                      "qualified_on, source_url "
                      "FROM core__qualifications ORDER BY provider_id, scheme, scope")


def tariff_components(con: duckdb.DuckDBPyConnection, vintage: str) -> pl.DataFrame:
    """Per country and consumption band: the non-household price components of the latest
    year <= the vintage's year (Eurostat publishes them once a year, with the second
    semester)."""
    return _latest_year(con, vintage, "core__tariff_components", ("country", "consumption_band"),
                        ("energy_supply_eur_per_kwh", "network_eur_per_kwh",
                         "taxes_levies_eur_per_kwh"))
