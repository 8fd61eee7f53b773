"""A candidate's busy and idle power (W) and its PUE. Power is declared with its boundary,
estimated from the GPUs' TDP times a fraction (at the GPU boards), or measured from a power
log (or a fleet's Parquet samples, `power = { parquet = "DIR" }`, computed by DuckDB over the
files) aligned to the throughput evidence's window; the PUE is the candidate's or [defaults].

A figure the proposal leaves out is derived, never a reason to exclude (issue 26): the busy
and idle power from the hardware table's TDP times the bundled busy and idle fractions (graded
`estimated`), the
PUE from the bundled default of the kind of site (own room, colocation, cloud provider, or the
provider's published figure), graded `assumed`; each a range from
sources/reference/power_defaults.csv, drawn in the Monte Carlo and noted. Under
`policy.allow_estimates = false` no power is derived: the candidate is compared without its
energy and carbon (pipeline/engine/scorecard.py `_gate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from pipeline.evidence.files import head
from pipeline.evidence.power.fleet import power_from_parquet
from pipeline.evidence.power.logs import power_from_evidence
from pipeline.evidence.power.measured import PowerEvidence
from pipeline.inputs.draft import Draft
from pipeline.inputs.evidence.identity import check_identity
from pipeline.inputs.ranges import scaled, spread
from pipeline.inputs.records import checks, file_listing, shown
from schemas.proposal import (
    DeclaredPower,
    EstimatedPower,
    EvidencePower,
    ParquetPower,
    Range,
    TcoCost,
)
from sources.bundled import POWER_DEFAULTS_FILE as DEFAULTS_FILE
from sources.errors import ParseError
from sources.power.registry import gpu_names


def resolve_power(d: Draft, window: Any) -> None:
    """The power inputs; `window` is the throughput evidence (or None) a power log is read
    over."""
    p = d.c.power
    if p is None:
        if d.proposal.policy.allow_estimates:
            _derived(d)
        else:
            d.notes.append("energy, electricity and carbon per token not computed: no power "
                           "figure, and policy.allow_estimates = false derives none from the "
                           "TDP (declare power = { watts, boundary, source } or evidence)")
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


def _defaults(d: Draft) -> pl.DataFrame:
    """The bundled busy and idle fractions of TDP and default PUEs by kind of site, each a
    range with its source (sources/reference/power_defaults.csv, as the store holds it)."""
    assert d.mkt.power_defaults is not None, "read_market reads the power defaults"
    return d.mkt.power_defaults


def _default(d: Draft, figure: str, site: str) -> tuple[Range, str, str]:
    """The (range, citation, key) of a bundled default, cited in the run's sources. One key
    per default: every candidate using it shares its Monte Carlo draw (one assumption)."""
    row = d.mkt.row("power_defaults", default_figure=figure, default_site=site)
    if row is None:
        raise LookupError(f"sources/reference/{DEFAULTS_FILE} has no {figure} for {site}")
    key = f"power_defaults.{figure}.{site}"
    d.prov.cite("power_default", key, row)
    cited = f"{row['source_url']} ({row['source_date']}, {row['licence']})"
    return Range(low=row["default_low"], mode=row["default_mode"],
                 high=row["default_high"]), cited, key


def _derived(d: Draft) -> None:
    """No power declared: the GPUs' TDP (hardware table or [hardware.NAME]) times the bundled
    busy fraction, and for the idle hours times the bundled idle fraction, at the GPU boards,
    graded `estimated`."""
    c, tdp = d.c, d.gpu_row()["tdp_w"]
    fraction, cited, key = _default(d, "busy_tdp_fraction", "any")
    source = (f"derived: {c.gpu_count} x {tdp:g} W TDP ({c.gpu}) x busy fraction "
              f"{spread(fraction)}; {cited}")
    # the Monte Carlo draws one range per key: a key per wattage, so nodes of other TDPs or
    # GPU counts keep their own range (one shared key gave them one node's watts)
    d.inputs.add("busy_power_w", scaled(fraction, tdp * c.gpu_count),
                 f"{key}[{tdp * c.gpu_count:g} W]", "estimated", source)
    d.row["power_grade"] = "estimated"
    d.row["energy_boundary"] = "gpu_board"
    d.row["power_source"] = source
    idle, idle_cited, idle_key = _default(d, "idle_tdp_fraction", "any")
    d.inputs.add("idle_power_w", scaled(idle, tdp * c.gpu_count),
                 f"{idle_key}[{tdp * c.gpu_count:g} W]", "estimated",
                 f"derived: {c.gpu_count} x {tdp:g} W TDP ({c.gpu}) x idle fraction "
                 f"{spread(idle)}; {idle_cited}")
    d.notes.append(f"power not declared: estimated from the TDP, {c.gpu_count} x {tdp:g} W x "
                   f"{spread(fraction)} busy and x {spread(idle)} idle at the GPU boards "
                   f"(sources/reference/{DEFAULTS_FILE}); declare power or give a power log "
                   "to replace it")


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
        try:
            ev = power_from_evidence(path, start, end, p.tz, uncertainty_s=uncertainty,
                                     format=p.format, cache=d.cache)
        except ParseError as err:  # named by the key that gave the file
            raise d.error(key, str(err)) from None
    grade = ev.grade if isinstance(p, ParquetPower) else _identity(d, p, ev)
    factor, scaling = _to_candidate_gpus(d, ev, grade)
    source = shown(str(path), d.prov.folder)  # as the report shows it: no local path
    d.inputs.add("busy_power_w", ev.average_power_w * factor, f"{d.key}.power", grade,
                 f"{source}{scaling}")
    if ev.energy.idle_power_w is not None and p.idle_watts is None:
        d.inputs.add("idle_power_w", ev.energy.idle_power_w * factor, f"{d.key}.power.idle",
                     grade, f"{source} (samples outside the benchmark window){scaling}")
    d.row["power_grade"] = grade
    d.row["energy_boundary"] = ev.boundary
    files = [(f.path, f.sha256) for f in ev.files]
    d.row["power_source"] = f"{given} ({ev.method}): {file_listing(files, d.prov.folder)}"
    d.notes.extend(ev.notes)
    d.prov.add_files(files)


def _to_candidate_gpus(d: Draft, ev: PowerEvidence, grade: str) -> tuple[float, str]:
    """The factor that makes a proxy log's power the candidate's node's, and the words saying
    so: a log at the GPU boards on other GPUs than the candidate's `gpu_count` (accepted only
    as a declared proxy, `_identity`) is scaled by the candidate's count over the log's, 2
    GPUs at 600 W standing in for 8 as 600 x 8/2 = 2,400 W (its idle power likewise), and
    noted; 1 otherwise (a log of the candidate's count, or at a boundary that has none)."""
    logged, wanted = len(ev.energy.gpus), d.c.gpu_count
    if grade != "proxy" or ev.boundary != "gpu_board" or not logged or logged == wanted:
        return 1.0, ""
    factor = wanted / logged
    d.notes.append(f"proxy power scaled to the candidate's GPUs: the log covers {logged} GPUs "
                   f"({ev.average_power_w:,.6g} W), the candidate has {wanted}: x "
                   f"{wanted}/{logged} = {ev.average_power_w * factor:,.6g} W (an idle power "
                   "read from it likewise); the per-GPU power is the proxy's")
    return factor, f" (x {wanted}/{logged}: {logged} GPUs logged, the candidate's {wanted})"


def resolve_pue(d: Draft) -> None:
    c, defaults = d.c, d.proposal.defaults
    if c.pue is not None:
        d.inputs.add("pue", c.pue, f"{d.key}.pue", "declared", "candidate")
        d.row["pue_source"] = "candidate"
    elif defaults.pue is not None:
        d.inputs.add("pue", defaults.pue, "defaults.pue", "declared", "[defaults]")
        d.row["pue_source"] = "defaults.pue"
    else:
        _assumed_pue(d)


def site_kind(d: Draft) -> str:
    """The kind of site a candidate runs in, for its default PUE: the cloud provider (its own
    published figure when the bundled defaults have one), a colocation site (an on-prem
    candidate whose TCO hosting is `colocation`), or the organisation's own room."""
    c = d.c
    if c.deployment != "on_prem":  # a cloud, or the one serving an API
        sites = _defaults(d).filter(pl.col("default_figure") == "pue")["default_site"
                                                                         ].to_list()
        return c.provider if c.provider in sites else "cloud"
    hosting = d.proposal.tco[c.cost.tco].hosting if isinstance(c.cost, TcoCost) else None
    return "colocation" if hosting is not None and hosting.kind == "colocation" else "own_site"


def _assumed_pue(d: Draft) -> None:
    """No PUE declared: the bundled default of the candidate's kind of site, graded
    `assumed`."""
    site = site_kind(d)
    pue, cited, key = _default(d, "pue", site)
    source = f"assumed: default PUE for site kind {site} {spread(pue)}; {cited}"
    d.inputs.add("pue", pue, key, "assumed", source)
    d.row["pue_source"] = source
    d.notes.append(f"PUE not declared: assumed {spread(pue)}, the default for site kind "
                   f"{site} (sources/reference/{DEFAULTS_FILE}); set `pue` to replace it")


def _identity(d: Draft, p: EvidencePower, ev: PowerEvidence) -> str:
    """The logs' GPUs against the candidate's (pipeline/inputs/evidence/identity.py): the
    names the logs record (nvidia-smi's `name` column, DCGM's `modelName`, AIPerf's
    `gpu_model_name`) and, for logs at the GPU boards, how many GPUs they cover, which must
    be the candidate's `gpu_count` (the busy power is the candidate's GPUs'). A mismatch
    raises naming the logs; a declared `proxy` grades the power `proxy` (on another count,
    scaled by `_to_candidate_gpus`). Returns the grade."""
    names = tuple(dict.fromkeys(name for f in ev.files
                                for name in gpu_names(f.tool, head(Path(f.path)))))
    count = len(ev.energy.gpus) if ev.boundary == "gpu_board" else None
    identity = check_identity(d, {}, p.evidence, p.proxy, declaration="power",
                              gpu_count=count, accelerators=names)
    d.row["evidence_checks"] = [*d.row["evidence_checks"],
                                *checks("power", identity, [])]
    return "proxy" if p.proxy is not None and not identity.held else ev.grade

