"""Turn proposal candidates into metric inputs, each with its range, grade and source.

Declared figures come from the proposal; measured ones from benchmark and power evidence; a
cloud candidate's hourly price from the vintage's GPU offers; a zone's electricity price and
grid intensity from the vintage unless the candidate overrides them; an on-prem candidate's
cost lines from its TCO profile. Every numeric input is a row (low, mode, high) keyed by where
it was stated, so inputs stated once (a shared TCO profile, [defaults].pue, a zone's price)
share their Monte Carlo draws across candidates. A figure that cannot be found is null, with a
note saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline.engine import market
from pipeline.engine.metrics import eur_per_kwh
from pipeline.engine.proposal import (
    Calibration,
    Candidate,
    ContractTariff,
    DeclaredCost,
    DeclaredPower,
    EstimatedPower,
    EstimatedThroughput,
    EvidencePower,
    EvidenceThroughput,
    Number,
    OfferCost,
    Proposal,
    ProposalError,
    Range,
    TcoCost,
    Workload,
)
from pipeline.engine.sovereignty import level_for, zone_country


@dataclass
class Provenance:
    """The sources behind the figures of one run, keyed so each is listed once."""

    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def add(self, kind: str, subject: str, **facts: Any) -> None:
        self.items[(kind, subject)] = {"kind": kind, "subject": subject, **facts}

    def cite(self, kind: str, subject: str, row: dict[str, Any]) -> None:
        """A reference-table row: its URL, date, licence and snapshot hash."""
        self.add(kind, subject, url=row["source_url"], date=str(row["source_date"]),
                 licence=row["licence"], snapshot_sha256=row["snapshot_sha256"])

    def as_list(self) -> list[dict[str, Any]]:
        return [self.items[k] for k in sorted(self.items)]


@dataclass(frozen=True)
class Market:
    """The market as of a vintage, read once per run."""

    vintage: str
    offers: pl.DataFrame
    prices: pl.DataFrame
    intensities: pl.DataFrame
    regions: pl.DataFrame
    hardware: pl.DataFrame
    models: pl.DataFrame
    embodied: pl.DataFrame
    providers: dict[str, market.ProviderFacts]
    zones: list[str]
    profile: pl.DataFrame | None = None  # per zone, weighted by the workload's hourly profile

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection, vintage: str,
             workload: Workload | None = None) -> Market:
        profile = (market.profile_weighted(con, vintage, workload.hourly_profile,
                                           workload.timezone) if workload else None)
        return cls(vintage, market.offers(con, vintage), market.zone_prices(con, vintage),
                   market.zone_intensities(con, vintage), market.regions(con),
                   market.hardware(con), market.models(con), market.embodied(con),
                   market.provider_facts(con), market.known_zones(con), profile)


@dataclass(frozen=True)
class Resolved:
    static: pl.DataFrame  # one row per candidate: identity, grades, sources, notes
    inputs: pl.DataFrame  # one row per (candidate, numeric input): key, low, mode, high, ...
    sources: list[dict[str, Any]]


STATIC_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(), "label": pl.String(), "deployment": pl.String(),
    "provider": pl.String(), "zone": pl.String(), "region": pl.String(),
    "gpu": pl.String(), "gpu_count": pl.Int64(), "model": pl.String(),
    "precision": pl.String(), "engine": pl.String(), "cost_model": pl.String(),
    "tokens_per_s_grade": pl.String(), "tokens_per_s_source": pl.String(),
    "raw_tokens_per_s": pl.Float64(),
    "cost_grade": pl.String(), "cost_source": pl.String(),
    "power_grade": pl.String(), "energy_boundary": pl.String(), "power_source": pl.String(),
    "pue_source": pl.String(),
    "electricity_grade": pl.String(), "electricity_source": pl.String(),
    "grid_grade": pl.String(), "grid_basis": pl.String(), "grid_source": pl.String(),
    "embodied_source": pl.String(),
    "sovereignty_level": pl.Int64(), "sovereignty_reason": pl.String(),
    "example_data": pl.Boolean(), "notes": pl.List(pl.String()),
}
INPUT_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(), "input": pl.String(), "key": pl.String(), "low": pl.Float64(),
    "mode": pl.Float64(), "high": pl.Float64(), "grade": pl.String(), "source": pl.String(),
}


class _Inputs:
    """Collects one candidate's numeric inputs."""

    def __init__(self, cid: str):
        self.cid = cid
        self.rows: list[dict[str, Any]] = []

    def add(self, name: str, value: Number | None, key: str, grade: str | None,
            source: str | None) -> None:
        if value is None:
            return
        low, mode, high = _bounds(value)
        self.rows.append({"id": self.cid, "input": name, "key": key, "low": low, "mode": mode,
                          "high": high, "grade": grade, "source": source})


def _one(frame: pl.DataFrame, **where: Any) -> dict[str, Any] | None:
    rows = frame.filter(**where)
    return rows.row(0, named=True) if rows.height else None


def resolve(proposal: Proposal, path: Path | str, mkt: Market) -> Resolved:
    prov = Provenance()
    statics, inputs = [], []
    for i, c in enumerate(proposal.candidates):
        static, rows = _Candidate(i, c, proposal, str(path), mkt, prov).resolve()
        statics.append(static)
        inputs.extend(rows)
    return Resolved(pl.DataFrame(statics, schema=STATIC_SCHEMA),
                    pl.DataFrame(inputs, schema=INPUT_SCHEMA), prov.as_list())


class _Candidate:
    def __init__(self, index: int, c: Candidate, proposal: Proposal, path: str, mkt: Market,
                 prov: Provenance):
        self.c, self.proposal, self.path, self.mkt, self.prov = c, proposal, path, mkt, prov
        self.key = f"candidates[{index}]"
        self.where = f"candidates[{index}] (id {c.id!r})"
        self.notes: list[str] = []
        self.inputs = _Inputs(c.id)
        self.row: dict[str, Any] = {
            "id": c.id, "label": c.label, "deployment": c.deployment, "provider": c.provider,
            "region": c.region, "gpu": c.gpu, "gpu_count": c.gpu_count, "model": c.model,
            "precision": c.precision, "engine": c.engine, "example_data": c.example_data,
        }

    def error(self, key: str, problem: str) -> ProposalError:
        return ProposalError(self.path, f"{self.where}.{key}", problem)

    def resolve(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        c = self.c
        known_gpus = self.mkt.hardware["gpu"].to_list()
        if c.gpu not in known_gpus:
            raise self.error("gpu", f"unknown accelerator {c.gpu!r}; known: "
                                    f"{', '.join(known_gpus)}")
        window = self._throughput()
        zone = self._cost()
        self._known_zone(zone)
        self.row["zone"] = zone
        self._power(window)
        self._pue()
        self._electricity(zone)
        self._grid(zone)
        self._embodied()
        self._sovereignty(zone)
        self.row["notes"] = self.notes
        return self.row, self.inputs.rows

    # --- throughput -----------------------------------------------------------------------
    def _throughput(self) -> Any:
        t = self.c.throughput
        if isinstance(t, EstimatedThroughput):
            self._estimated_throughput(t)
            return None
        if isinstance(t, EvidenceThroughput):
            from pipeline.evidence.bench import throughput_from_evidence
            from pipeline.evidence.goodput import Slo

            path = self._evidence_path(t.evidence, "throughput.evidence")
            slo = Slo(**self.proposal.slo.model_dump())
            ev = throughput_from_evidence(path, slo, fmt=t.format, tz=t.tz)
            self.inputs.add("tokens_per_s", ev.tokens_per_s, f"{self.key}.throughput",
                            ev.grade, str(path))
            self.row["tokens_per_s_grade"] = ev.grade
            self.row["raw_tokens_per_s"] = ev.output_tokens_per_s
            files = ", ".join(f"{p} (sha256 {h[:12]})" for p, h in ev.files)
            self.row["tokens_per_s_source"] = f"{t.evidence}: {files}"
            self.notes.extend(ev.notes)
            for p, h in ev.files:
                self.prov.add("evidence", p, url=f"file://{p}", date=None, licence="own data",
                              snapshot_sha256=h)
            if ev.tokens_per_s is None:
                self.notes.append("goodput not computed from the evidence (see the notes "
                                  "above): CPM, energy and carbon are null")
            return ev
        self.inputs.add("tokens_per_s", t.tokens_per_s, f"{self.key}.throughput.tokens_per_s",
                        "declared", t.source)
        self.row["tokens_per_s_grade"] = "declared"
        self.row["tokens_per_s_source"] = t.source
        return None

    def _estimated_throughput(self, t: EstimatedThroughput) -> None:
        from pipeline.engine.roofline import RooflineInputError, estimate, inputs_from_reference

        e, c = t.estimate, self.c
        model = _one(self.mkt.models, model=e.model)
        if model is None:
            known = ", ".join(self.mkt.models["model"].to_list())
            raise self.error("throughput.estimate.model", f"unknown model {e.model!r}; known: "
                                                          f"{known}")
        gpu = _one(self.mkt.hardware, gpu=c.gpu)
        assert gpu is not None  # checked in resolve()
        try:
            inputs = inputs_from_reference(model, gpu, precision=e.precision, batch=e.batch,
                                           context=e.context, tensor_parallel=c.gpu_count)
            if e.calibration is not None:
                inputs = self._calibrated(inputs, e.calibration)
            result = estimate(inputs)
        except RooflineInputError as err:
            raise self.error("throughput.estimate", str(err)) from None
        self.row["tokens_per_s_grade"] = "estimated"
        ceiling = result.tokens_per_s_ceiling
        if ceiling is None:
            self.notes.append(f"no estimated goodput: {result.ceiling_reason}")
            self.row["tokens_per_s_source"] = f"roofline: {result.ceiling_reason}"
            return
        source = (f"roofline ceiling {ceiling:.0f} tokens/s ({result.bound}-bound, {e.model} "
                  f"{e.precision}, batch {e.batch}, context {e.context}, TP {c.gpu_count}) x "
                  f"efficiency {_spread(e.efficiency)}")
        if inputs.calibration_source:
            source += f"; calibrated on {inputs.calibration_source}"
        self.inputs.add("tokens_per_s", _scaled(e.efficiency, ceiling),
                        f"{self.key}.throughput.estimate", "estimated", source)
        self.row["tokens_per_s_source"] = source
        self.notes.append("goodput is a design-stage estimate (roofline ceiling x efficiency), "
                          "not a measurement")

    def _calibrated(self, inputs: Any, cal: Calibration) -> Any:
        """Roofline inputs with the rates a concurrency-1 run implies (datasheet rates kept
        for what the run does not measure)."""
        from pipeline.engine.roofline import apply_calibration, calibrate

        tpot_ms, ttft_ms, source = cal.tpot_ms, cal.ttft_ms, cal.source
        if cal.evidence is not None:
            from pipeline.evidence.bench import inspect
            from pipeline.evidence.goodput import Slo

            path = self._evidence_path(cal.evidence, "throughput.estimate.calibration.evidence")
            runs = [r for r in inspect([path], Slo(**self.proposal.slo.model_dump()),
                                       tz=cal.tz)["runs"] if r["concurrency"] == 1]
            if not runs:
                raise self.error("throughput.estimate.calibration.evidence",
                                 f"no run at concurrency 1 in {path}")
            run = runs[0]
            tpot_ms = tpot_ms or (run["tpot_p50_s"] * 1000 if run["tpot_p50_s"] else None)
            ttft_ms = ttft_ms or (run["ttft_p50_s"] * 1000 if run["ttft_p50_s"] else None)
            source = source or f"{run['path']} (sha256 {run['sha256'][:12]}, p50)"
        assert source is not None  # the proposal model requires it without evidence
        return apply_calibration(inputs, calibrate(
            inputs, source=source, tpot_ms=tpot_ms, context=cal.context,
            ttft_ms=ttft_ms if cal.prompt_tokens else None, prompt_tokens=cal.prompt_tokens))

    def _evidence_path(self, text: str, key: str) -> Path:
        path = Path(self.path).parent / text  # an absolute `text` replaces the folder
        if not path.exists():
            raise self.error(key, f"no such file or folder: {path}")
        return path

    # --- cost -----------------------------------------------------------------------------
    def _cost(self) -> str:
        c, cost = self.c, self.c.cost
        zone = c.zone
        utilisation: Number | None = c.utilisation
        if isinstance(cost, OfferCost):
            offer = self._offer(cost)
            zone = zone or offer["zone"]
            self.row["region"] = offer["region"]
            self.row["cost_model"] = "on_demand" if cost.pricing in ("on_demand", "spot") \
                else "reserved"
            self.row["cost_grade"] = "reference"
            fx = (f" = {offer['price_original_per_hour']:g} {offer['currency']}/h at ECB "
                  f"{offer['fx_units_per_eur']:g} {offer['currency']}/EUR of {offer['fx_date']}"
                  if offer["currency"] != "EUR" else "")
            self.row["cost_source"] = (f"{cost.offer} {cost.pricing} in {offer['region']}: "
                                       f"{offer['price_eur_per_hour']:.4g} EUR/h{fx}, observed "
                                       f"{offer['source_date']}; {_cite(offer)}")
            self.inputs.add("price_eur_per_hour", offer["price_eur_per_hour"],
                            f"market.offer.{cost.offer}.{offer['region']}.{cost.pricing}",
                            "reference", self.row["cost_source"])
            self.prov.cite("gpu_offer", f"{cost.offer}@{offer['region']}", offer)
        elif isinstance(cost, TcoCost):
            profile = self.proposal.tco[cost.tco]
            self.row["cost_model"] = "tco"
            self.row["cost_grade"] = "declared"
            self.row["cost_source"] = f"[tco.{cost.tco}]: {profile.source}"
            k = f"tco.{cost.tco}"
            capex = profile.capex
            parts = [capex.gpus, capex.servers, capex.network, capex.installation]
            total = _sum_numbers(parts)
            self.inputs.add("capex_eur", total, f"{k}.capex", "declared", profile.source)
            self.inputs.add("amortisation_months", float(profile.amortisation_months),
                            f"{k}.amortisation_months", "declared", profile.source)
            for name, value in (("cost_of_capital_per_year", profile.cost_of_capital),
                                ("residual_eur", profile.residual_eur),
                                ("maintenance_share_per_year",
                                 profile.maintenance_share_per_year),
                                ("staff_eur_per_year", profile.staff_eur_per_year)):
                self.inputs.add(name, value, f"{k}.{name}", "declared", profile.source)
            if profile.hosting is not None:
                if profile.hosting.kind == "own_site":
                    self.inputs.add("hosting_eur_per_year", profile.hosting.eur_per_year,
                                    f"{k}.hosting", "declared", profile.source)
                else:
                    self.inputs.add("hosting_eur_per_kw_month", profile.hosting.eur_per_kw_month,
                                    f"{k}.hosting", "declared", profile.source)
            if utilisation is None:
                utilisation = profile.utilisation
                ukey = f"{k}.utilisation"
            else:
                ukey = f"{self.key}.utilisation"
            self.inputs.add("utilisation", utilisation, ukey, "declared", "proposal")
        else:
            assert isinstance(cost, DeclaredCost)
            self.row["cost_model"] = "on_demand" if cost.pricing == "on_demand" else "declared"
            self.row["cost_grade"] = "declared"
            self.row["cost_source"] = cost.source
            self.inputs.add("price_eur_per_hour", cost.eur_per_hour,
                            f"{self.key}.cost.eur_per_hour", "declared", cost.source)
        if not isinstance(cost, TcoCost):
            self.inputs.add("utilisation", utilisation if utilisation is not None else 1.0,
                            f"{self.key}.utilisation", "declared",
                            "proposal" if utilisation is not None else "default 1")
        if zone is None and c.region is not None:
            region = _one(self.mkt.regions, provider_id=c.provider, region=c.region)
            zone = region["zone"] if region else None
        if zone is None:
            raise self.error("zone", "no zone: give `zone`, or a `region` or `cost.offer` "
                                     "whose region is known")
        return zone

    def _offer(self, cost: OfferCost) -> dict[str, Any]:
        c, offers = self.c, self.mkt.offers
        mine = offers.filter(pl.col("provider_id") == cost.provider_id,
                             pl.col("offer_id") == cost.offer_id,
                             pl.col("pricing_model") == cost.pricing)
        if c.region is not None:
            mine = mine.filter(pl.col("region") == c.region)
        if mine.height == 0:
            available = offers.filter(pl.col("provider_id") == cost.provider_id).select(
                pl.format("{}:{} ({}, {})", "provider_id", "offer_id", "region",
                          "pricing_model")).to_series().to_list()
            listing = ", ".join(available) if available else "none for this provider"
            region = f", region {c.region}" if c.region else ""
            raise self.error("cost.offer", f"no offer {cost.offer!r} ({cost.pricing}{region}) "
                                           f"in vintage {self.mkt.vintage}; available: {listing}")
        offer = mine.sort("region").row(0, named=True)
        if offer["gpu"] != c.gpu or offer["gpu_count"] != c.gpu_count:
            raise self.error("gpu", f"offer {cost.offer} is {offer['gpu_count']} x "
                                    f"{offer['gpu']}, the candidate says {c.gpu_count} x {c.gpu}")
        return offer

    # --- power, PUE -----------------------------------------------------------------------
    def _power(self, window: Any) -> None:
        p = self.c.power
        if p is None:
            self.notes.append("energy, electricity and carbon per token not computed: no power "
                              "figure (declare power = { watts, boundary, source } or evidence)")
            return
        if isinstance(p, DeclaredPower):
            self.inputs.add("busy_power_w", p.watts, f"{self.key}.power.watts", "declared",
                            p.source)
            self.row["power_grade"] = "declared"
            self.row["energy_boundary"] = p.boundary
            self.row["power_source"] = p.source
        elif isinstance(p, EstimatedPower):
            gpu = _one(self.mkt.hardware, gpu=self.c.gpu)
            assert gpu is not None  # checked in resolve()
            tdp = gpu["tdp_w"]
            source = (f"{self.c.gpu_count} x {tdp:g} W TDP ({self.c.gpu}) x "
                      f"{_spread(p.estimate.tdp_fraction)}")
            self.inputs.add("busy_power_w", _scaled(p.estimate.tdp_fraction,
                                                    tdp * self.c.gpu_count),
                            f"{self.key}.power.estimate", "estimated", source)
            self.row["power_grade"] = "estimated"
            self.row["energy_boundary"] = "gpu_board"
            self.row["power_source"] = source
        else:
            assert isinstance(p, EvidencePower)
            from pipeline.evidence.power import power_from_evidence

            path = self._evidence_path(p.evidence, "power.evidence")
            start = window.window_start_utc if window is not None else None
            end = window.window_end_utc if window is not None else None
            ev = power_from_evidence(path, start, end, p.tz,
                                     uncertainty_s=(window.clock_uncertainty_s or 0.0)
                                     if window is not None else 0.0, format=p.format)
            self.inputs.add("busy_power_w", ev.average_power_w, f"{self.key}.power", ev.grade,
                            str(path))
            if ev.energy.idle_power_w is not None and p.idle_watts is None:
                self.inputs.add("idle_power_w", ev.energy.idle_power_w, f"{self.key}.power.idle",
                                ev.grade, f"{path} (samples outside the benchmark window)")
            self.row["power_grade"] = ev.grade
            self.row["energy_boundary"] = ev.boundary
            files = ", ".join(f"{f.path} (sha256 {f.sha256[:12]})" for f in ev.files)
            self.row["power_source"] = f"{p.evidence} ({ev.method}): {files}"
            self.notes.extend(ev.notes)
            for f in ev.files:
                self.prov.add("evidence", f.path, url=f"file://{f.path}", date=None,
                              licence="own data", snapshot_sha256=f.sha256)
        if p.idle_watts is not None:
            self.inputs.add("idle_power_w", p.idle_watts, f"{self.key}.power.idle_watts",
                            "declared", "proposal")

    def _pue(self) -> None:
        c, defaults = self.c, self.proposal.defaults
        if c.pue is not None:
            self.inputs.add("pue", c.pue, f"{self.key}.pue", "declared", "candidate")
            self.row["pue_source"] = "candidate"
        elif defaults.pue is not None:
            self.inputs.add("pue", defaults.pue, "defaults.pue", "declared", "[defaults]")
            self.row["pue_source"] = "defaults.pue"
        elif c.power is not None:
            self.notes.append("facility energy, electricity and carbon not computed: no PUE "
                              "(set `pue` on the candidate or in [defaults])")

    # --- electricity and grid ---------------------------------------------------------------
    def _known_zone(self, zone: str) -> None:
        """Every zone, even one whose price and grid intensity are both overridden: the zone
        also gives the sovereignty's country, so a typo ("FRA") must not pass."""
        if zone not in self.mkt.zones:
            raise self.error("zone", f"unknown zone {zone!r}; known zones: "
                                     f"{', '.join(self.mkt.zones)}")

    def _zone_row(self, frame: pl.DataFrame, zone: str, missing: str) -> dict[str, Any] | None:
        """The zone's row of a market table, or None with a note `missing` ... for the zone."""
        row = _one(frame, zone=zone)
        if row is None:
            self.notes.append(f"{missing} for {zone} up to {self.mkt.vintage}")
        return row

    def _electricity(self, zone: str) -> None:
        c = self.c
        tariff = (self.proposal.tco[c.cost.tco].electricity
                  if isinstance(c.cost, TcoCost) else None)
        if c.electricity_eur_per_kwh is not None or isinstance(tariff, ContractTariff):
            value = (c.electricity_eur_per_kwh if c.electricity_eur_per_kwh is not None
                     else tariff.eur_per_kwh if isinstance(tariff, ContractTariff) else None)
            what = ("candidate override (electricity_eur_per_kwh)"
                    if c.electricity_eur_per_kwh is not None else "contract tariff of the TCO")
            self.inputs.add("contract_eur_per_kwh", value, f"{self.key}.electricity",
                            "declared", what)
            self.row["electricity_grade"] = "declared"
            self.row["electricity_source"] = what
            return
        price = self._zone_row(self.mkt.prices, zone,
                               "electricity per token not computed: no day-ahead price")
        if price is None:
            return
        wholesale = eur_per_kwh(float(price["price_eur_per_mwh"]))
        source = (f"day-ahead mean {zone} {price['month']} ({price['price_eur_per_mwh']:.2f} "
                  f"EUR/MWh, {price['intervals']} {price['resolution']} value(s)); "
                  f"{_cite(price)}")
        self.inputs.add("wholesale_eur_per_kwh", wholesale, f"market.electricity.{zone}",
                        "reference", source)
        if tariff is not None:
            assert isinstance(c.cost, TcoCost)
            k = f"tco.{c.cost.tco}.electricity"
            self.inputs.add("retail_multiplier", tariff.retail_multiplier,
                            f"{k}.retail_multiplier", "declared", "TCO tariff")
            self.inputs.add("grid_fee_eur_per_kwh", tariff.grid_fee_eur_per_kwh,
                            f"{k}.grid_fee_eur_per_kwh", "declared", "TCO tariff")
            source += " x retail multiplier + grid fee (TCO tariff)"
        self.row["electricity_grade"] = "reference"
        self.row["electricity_source"] = source
        if price["month"] != self.mkt.vintage:
            self.notes.append(f"electricity price for {zone} is from {price['month']}, the "
                              f"latest month available up to vintage {self.mkt.vintage}")
        self.prov.cite("electricity_price", f"{zone} {price['month']}", price)

    def _grid(self, zone: str) -> None:
        c = self.c
        if c.grid_gco2e_per_kwh is not None:
            self.inputs.add("grid_gco2e_per_kwh", c.grid_gco2e_per_kwh,
                            f"{self.key}.grid_gco2e_per_kwh", "declared", "candidate override")
            self.row["grid_grade"] = "declared"
            self.row["grid_source"] = "candidate override (grid_gco2e_per_kwh)"
            return
        intensity = self._zone_row(self.mkt.intensities, zone,
                                   "carbon not computed: no grid intensity")
        if intensity is None:
            return
        source = (f"{zone} {intensity['year']} annual mean "
                  f"({intensity['intensity_gco2e_per_kwh']:g} gCO2e/kWh, "
                  f"{intensity['emission_factor_basis']}); {_cite(intensity)}")
        self.inputs.add("grid_gco2e_per_kwh", intensity["intensity_gco2e_per_kwh"],
                        f"market.grid.{zone}", "reference", source)
        self.row["grid_grade"] = "reference"
        self.row["grid_basis"] = f"{intensity['emission_factor_basis']}, location-based, annual"
        self.row["grid_source"] = source
        self.prov.cite("grid_intensity", f"{zone} {intensity['year']}", intensity)

    # --- embodied emissions -----------------------------------------------------------------
    def _embodied(self) -> None:
        c, table = self.c, self.mkt.embodied
        gpu = _one(table, item=c.gpu, kind="gpu")
        server = _one(table, item=f"server-{c.gpu_count}gpu", kind="server")
        if gpu is None:
            self.notes.append(f"embodied emissions not computed: no cited figure for {c.gpu}")
            return
        total = gpu["kgco2e"] * c.gpu_count + (server["kgco2e"] if server else 0.0)
        parts = f"{c.gpu_count} x {gpu['kgco2e']:g} kgCO2e ({c.gpu}, {gpu['source_url']})"
        if server:
            parts += f" + {server['kgco2e']:g} kgCO2e ({server['item']}, {server['source_url']})"
        else:
            self.notes.append(f"embodied emissions cover the GPUs only: no cited figure for a "
                              f"{c.gpu_count}-GPU server")
        self.inputs.add("embodied_kgco2e", total, f"{self.key}.embodied", "reference", parts)
        self.inputs.add("lifetime_years", self.proposal.embodied.lifetime_years,
                        "embodied.lifetime_years", "declared", "[embodied] lifetime")
        self.row["embodied_source"] = parts
        for item in (gpu, server):
            if item:
                self.prov.cite("embodied", item["item"], item)

    # --- sovereignty ----------------------------------------------------------------------
    def _sovereignty(self, zone: str) -> None:
        c = self.c
        facts = self.mkt.providers.get(c.provider)
        if c.deployment == "cloud" and facts is None:
            self.notes.append(f"provider {c.provider!r} has no facts in the reference data")
        computed = level_for(c.deployment, zone_country(zone), facts)
        if c.sovereignty_override is not None:
            o = c.sovereignty_override
            self.row["sovereignty_level"] = o.level
            self.row["sovereignty_reason"] = (f"level {o.level} by override (computed: "
                                              f"{computed.reason}); justification: "
                                              f"{o.justification}")
        else:
            self.row["sovereignty_level"] = computed.level
            self.row["sovereignty_reason"] = computed.reason


def _bounds(value: Number) -> tuple[float, float, float]:
    return (value.low, value.mode, value.high) if isinstance(value, Range) else \
        (value, value, value)


def _scaled(value: Number, factor: float) -> Number:
    """A number or range times a constant (a triangular scales to a triangular)."""
    low, mode, high = (factor * b for b in _bounds(value))
    return Range(low=low, mode=mode, high=high) if low < high else mode


def _spread(value: Number) -> str:
    low, mode, high = _bounds(value)
    return f"{mode:g}" if low == high else f"{mode:g} ({low:g} to {high:g})"


def _cite(row: dict[str, Any]) -> str:
    return (f"{row['source_url']} ({row['source_date']}, {row['licence']}, sha256 "
            f"{str(row['snapshot_sha256'])[:12]})")


def _sum_numbers(parts: list[Number]) -> Number:
    """Sum of numbers or ranges: bounds add (a conservative, fully correlated range)."""
    if not any(isinstance(p, Range) for p in parts):
        return float(sum(p for p in parts if not isinstance(p, Range)))
    bounds = [_bounds(p) for p in parts]
    return Range(low=sum(b[0] for b in bounds), mode=sum(b[1] for b in bounds),
                 high=sum(b[2] for b in bounds))
