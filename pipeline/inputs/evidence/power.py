"""A candidate's busy and idle power (W) and its PUE. Power is declared with its boundary,
estimated from the GPUs' TDP times a fraction (at the GPU boards), or measured from a power
log (or a fleet's Parquet samples, `power = { parquet = "DIR" }`, computed by DuckDB over the
files) aligned to the throughput evidence's window; the PUE is the candidate's or [defaults]."""

from __future__ import annotations

from typing import Any

from pipeline.evidence.power.fleet import power_from_parquet
from pipeline.evidence.power.logs import power_from_evidence
from pipeline.evidence.power.measured import PowerEvidence
from pipeline.inputs.draft import Draft
from pipeline.inputs.ranges import scaled, spread
from pipeline.inputs.records import file_listing
from schemas.proposal import DeclaredPower, EstimatedPower, ParquetPower


def resolve_power(d: Draft, window: Any) -> None:
    """The power inputs; `window` is the throughput evidence (or None) a power log is read
    over."""
    p = d.c.power
    if p is None:
        d.notes.append("energy, electricity and carbon per token not computed: no power "
                       "figure (declare power = { watts, boundary, source } or evidence)")
        return
    if isinstance(p, DeclaredPower):
        d.inputs.add("busy_power_w", p.watts, f"{d.key}.power.watts", "declared", p.source)
        d.row["power_grade"] = "declared"
        d.row["energy_boundary"] = p.boundary
        d.row["power_source"] = p.source
    elif isinstance(p, EstimatedPower):
        _estimated(d, p)
    else:
        _measured(d, p, window)
    if p.idle_watts is not None:
        d.inputs.add("idle_power_w", p.idle_watts, f"{d.key}.power.idle_watts", "declared",
                     "proposal")
    elif not any(r["input"] == "idle_power_w" for r in d.inputs.rows):
        d.notes.append("no idle power: the idle share of the paid hours is counted at busy "
                       "power, an upper bound on energy and carbon per token; give "
                       "power.idle_watts")


def _estimated(d: Draft, p: EstimatedPower) -> None:
    c, tdp = d.c, d.gpu_row()["tdp_w"]
    source = f"{c.gpu_count} x {tdp:g} W TDP ({c.gpu}) x {spread(p.estimate.tdp_fraction)}"
    d.inputs.add("busy_power_w", scaled(p.estimate.tdp_fraction, tdp * c.gpu_count),
                 f"{d.key}.power.estimate", "estimated", source)
    d.row["power_grade"] = "estimated"
    d.row["energy_boundary"] = "gpu_board"
    d.row["power_source"] = source


def _measured(d: Draft, p: Any, window: Any) -> None:
    """Power from a power log (`evidence`) or a fleet's Parquet samples (`parquet`)."""
    start = window.window_start_utc if window is not None else None
    end = window.window_end_utc if window is not None else None
    uncertainty = (window.clock_uncertainty_s or 0.0) if window is not None else 0.0
    ev: PowerEvidence
    if isinstance(p, ParquetPower):
        key, given = "power.parquet", p.parquet
        path = d.evidence_path(p.parquet, key)
        ev = power_from_parquet(path, start, end, uncertainty_s=uncertainty)
    else:
        key, given = "power.evidence", p.evidence
        path = d.evidence_path(p.evidence, key)
        ev = power_from_evidence(path, start, end, p.tz, uncertainty_s=uncertainty,
                                 format=p.format, cache=d.cache)
    d.inputs.add("busy_power_w", ev.average_power_w, f"{d.key}.power", ev.grade, str(path))
    if ev.energy.idle_power_w is not None and p.idle_watts is None:
        d.inputs.add("idle_power_w", ev.energy.idle_power_w, f"{d.key}.power.idle", ev.grade,
                     f"{path} (samples outside the benchmark window)")
    d.row["power_grade"] = ev.grade
    d.row["energy_boundary"] = ev.boundary
    files = [(f.path, f.sha256) for f in ev.files]
    d.row["power_source"] = f"{given} ({ev.method}): {file_listing(files, d.prov.folder)}"
    d.notes.extend(ev.notes)
    d.prov.add_files(files)


def resolve_pue(d: Draft) -> None:
    c, defaults = d.c, d.proposal.defaults
    if c.pue is not None:
        d.inputs.add("pue", c.pue, f"{d.key}.pue", "declared", "candidate")
        d.row["pue_source"] = "candidate"
    elif defaults.pue is not None:
        d.inputs.add("pue", defaults.pue, "defaults.pue", "declared", "[defaults]")
        d.row["pue_source"] = "defaults.pue"
    elif c.power is not None:
        d.notes.append("facility energy, electricity and carbon not computed: no PUE (set "
                       "`pue` on the candidate or in [defaults])")
