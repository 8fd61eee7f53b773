"""What the engine computes from, as plain data: the run's candidates resolved (`Resolved`: a
static row per candidate, a row per numeric input, the sources cited) and the market of a
vintage (`Market`: its tables as frames). `pipeline.inputs` reads and builds both; the engine
never reads a file or the store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import polars as pl

from pipeline.engine.ranking.sovereignty import ProviderFacts

T = TypeVar("T")

#: a configuration's settings as the static row holds them: (setting, value) pairs
SETTINGS = pl.List(pl.Struct({"setting": pl.String(), "value": pl.String()}))

STATIC_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(), "label": pl.String(), "deployment": pl.String(),
    "provider": pl.String(), "zone": pl.String(), "region": pl.String(),
    "gpu": pl.String(), "gpu_count": pl.Int64(), "model": pl.String(),
    "precision": pl.String(), "engine": pl.String(), "cost_model": pl.String(),
    "capacity": pl.String(),
    "tokens_per_s_grade": pl.String(), "tokens_per_s_source": pl.String(),
    "raw_tokens_per_s": pl.Float64(), "no_goodput_reason": pl.String(),
    "cost_grade": pl.String(), "cost_source": pl.String(),
    "power_grade": pl.String(), "energy_boundary": pl.String(), "power_source": pl.String(),
    "pue_source": pl.String(),
    "electricity_grade": pl.String(), "electricity_source": pl.String(),
    "grid_grade": pl.String(), "grid_basis": pl.String(), "grid_source": pl.String(),
    "market_grid_source": pl.String(),
    "embodied_source": pl.String(),
    "sovereignty_level": pl.Int64(), "sovereignty_reason": pl.String(),
    "example_data": pl.Boolean(), "notes": pl.List(pl.String()),
    # the configuration surface of a candidate's benchmark evidence (one row per configuration;
    # settings as (setting, value) pairs, since their names vary): `configuration_rows`
    "evidence_configurations": pl.List(pl.Struct({
        "configuration": SETTINGS, "label": pl.String(), "gpus": pl.Int64(),
        "goodput_tokens_per_s": pl.Float64(), "goodput_per_gpu_tokens_per_s": pl.Float64(),
        "knee_concurrency": pl.Float64(), "passes": pl.Boolean(), "chosen": pl.Boolean(),
        "runs": pl.Int64()})),
    "evidence_configuration": SETTINGS,
    # quality evidence against policy.quality's reference (pipeline/inputs/evidence/
    # quality.py), and the reason a candidate is not eligible for it
    "quality": pl.Struct({
        "reference": pl.String(), "tasks": pl.List(pl.Struct({
            "task": pl.String(), "metric": pl.String(), "value": pl.Float64(),
            "reference_value": pl.Float64(), "drop": pl.Float64(), "stderr": pl.Float64(),
            "within_tolerance": pl.Boolean()})),
        "grade": pl.String()}),
    "quality_exclusion": pl.String(),
    # under policy.quality: reference, held, not held, same as the reference, not validated
    # or waived (pipeline/inputs/evidence/quality.py)
    "quality_validation": pl.String(),
    # the benchmark evidence's identity check (pipeline/inputs/evidence/identity.py), or null
    "identity_check": pl.String(),
    # the EU Cloud Sovereignty Framework rubric (one row per objective) and the regulatory
    # gates with their outcomes (pipeline/engine/ranking/gates.py), and the exclusion failures make
    "sovereignty_rubric": pl.List(pl.Struct({
        "objective": pl.String(), "title": pl.String(), "weight_pct": pl.Float64(),
        "seal": pl.Int64(), "evidence": pl.String()})),
    "gates": pl.List(pl.Struct({
        "gate": pl.String(), "legal_basis": pl.String(), "requirement": pl.String(),
        "status": pl.String(), "reason": pl.String(), "source_url": pl.String(),
        "source_date": pl.String()})),
    "gate_exclusion": pl.String(),
    # every check on the candidate's evidence, per input (`pipeline.inputs.records.checks`)
    "evidence_checks": pl.List(pl.Struct({
        "input": pl.String(), "check": pl.String(), "outcome": pl.String(),
        "detail": pl.String()})),
    # the power logs' and the quality results' identity checks (the same module), or null
    "power_identity_check": pl.String(), "quality_identity_check": pl.String(),
}
INPUT_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(), "input": pl.String(), "key": pl.String(), "low": pl.Float64(),
    "mode": pl.Float64(), "high": pl.Float64(), "grade": pl.String(), "source": pl.String(),
}


@dataclass(frozen=True)
class Resolved:
    """A run's candidates resolved: what the metric steps compute from."""

    static: pl.DataFrame  # one row per candidate: identity, grades, sources, notes
    inputs: pl.DataFrame  # one row per (candidate, numeric input): key, low, mode, high, ...
    sources: list[dict[str, Any]]
    #: per [[scan]] of the proposal: its counts, generated ids and offers left out
    #: (pipeline/inputs/market/scan.py)
    scans: list[dict[str, Any]] = field(default_factory=list)


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
    providers: dict[str, ProviderFacts]
    zones: list[str]
    profile: pl.DataFrame | None = None  # per zone, weighted by the workload's hourly profile
    #: ECB rates up to the vintage's last day: declared amounts in other currencies
    fx: pl.DataFrame | None = None
    #: per country, the latest residual mix (market-based carbon where no contract covers)
    residual_mixes: pl.DataFrame | None = None
    #: other systems' published per-request figures, shown beside the candidates' own
    published_per_request: pl.DataFrame | None = None
    #: per country and consumption band, the latest non-household price components (an
    #: all-in tariff's network costs and taxes and levies)
    tariff_components: pl.DataFrame | None = None
    #: the rules of the regulatory gates and the sovereignty framework's objectives, as
    #: stored (core__regulatory_rules, core__sovereignty_objectives), with their sources
    regulatory_rules: pl.DataFrame | None = None
    sovereignty_objectives: pl.DataFrame | None = None
    #: the bundled ranges of power figures a proposal leaves out (core__power_defaults)
    power_defaults: pl.DataFrame | None = None
    #: the per-token prices of API offers as of the vintage (core__api_prices)
    api_prices: pl.DataFrame | None = None
    #: the rows `row` found, each lookup made once per run (not init: `dataclasses.replace`
    #: of another vintage's tables starts empty)
    _found: dict[tuple[Any, ...], dict[str, Any] | None] = field(
        default_factory=dict, init=False, compare=False, repr=False)

    #: what `once` made, by key
    _made: dict[tuple[Any, ...], Any] = field(
        default_factory=dict, init=False, compare=False, repr=False)

    def once(self, key: tuple[Any, ...], make: Callable[[], T]) -> T:
        """`make()` for `key`, made once per run: a lookup or conversion thousands of
        candidates repeat on the same market (an offer's rows, a declared amount in EUR).
        What it makes is shared, so it must not be changed by its callers."""
        if key not in self._made:
            self._made[key] = make()
        made: T = self._made[key]
        return made

    def row(self, table: str, **where: Any) -> dict[str, Any] | None:
        """The first row of the market table `table` (`hardware`, `regions`, `prices`, ...)
        where each column equals its value, or None. Each lookup is made once per run (a
        thousand candidates name the same few GPUs, regions and zones, where a polars filter
        per lookup adds up), each caller given its own copy of the row."""
        key = (table, *sorted(where.items()))
        if key not in self._found:
            rows = getattr(self, table).filter(**where)
            self._found[key] = rows.row(0, named=True) if rows.height else None
        found = self._found[key]
        return None if found is None else dict(found)
