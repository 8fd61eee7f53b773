"""Each candidate resolved in turn, input by input, into the run's static rows, input rows and
sources; the sovereignty level (computed, or overridden with a justification) closes the row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from pipeline.engine.resolved import INPUT_SCHEMA, STATIC_SCHEMA, Market, Resolved
from pipeline.engine.sovereignty import level_for, zone_country
from pipeline.inputs.cost import resolve_capacity, resolve_cost
from pipeline.inputs.draft import Draft
from pipeline.inputs.embodied import resolve_embodied
from pipeline.inputs.evidence.power import resolve_power, resolve_pue
from pipeline.inputs.evidence.quality import (
    Reference,
    precisions_of,
    reference_quality,
    resolve_quality,
)
from pipeline.inputs.evidence.throughput import resolve_throughput
from pipeline.inputs.latency import resolve_latency
from pipeline.inputs.plausibility import check_plausible
from pipeline.inputs.records import Provenance
from pipeline.inputs.regulation import resolve_regulation
from pipeline.inputs.zone_inputs import (
    check_known_zone,
    resolve_electricity,
    resolve_grid,
    resolve_market_grid,
)
from schemas.proposal import Proposal, ProposalError


def resolve(proposal: Proposal, path: Path | str, mkt: Market, cache: Any | None = None
            ) -> Resolved:
    """The proposal at `path`, its candidates resolved against the market `mkt`; benchmark
    files and power logs parsed before are read back from the store `cache` (when given)."""
    prov = Provenance()
    statics, inputs = [], []
    reference = reference_quality(proposal, str(path), mkt, prov)
    precisions = precisions_of(proposal)
    for i, c in enumerate(proposal.candidates):
        static, rows = _candidate(Draft(i, c, proposal, str(path), mkt, prov, cache),
                                  reference, precisions)
        statics.append(static)
        inputs.extend(rows)
    return Resolved(pl.DataFrame(statics, schema=STATIC_SCHEMA),
                    pl.DataFrame(inputs, schema=INPUT_SCHEMA), prov.as_list())


def _candidate(d: Draft, reference: Reference | None, precisions: frozenset[str]
               ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    _check_gpu(d)
    window = resolve_throughput(d)
    resolve_quality(d, reference, precisions)
    zone = resolve_cost(d)
    resolve_capacity(d)
    resolve_latency(d)
    check_known_zone(d, zone)
    d.row["zone"] = zone
    resolve_power(d, window)
    resolve_pue(d)
    resolve_electricity(d, zone)
    resolve_grid(d, zone)
    resolve_market_grid(d, zone)
    resolve_embodied(d)
    check_plausible(d)
    _sovereignty(d, zone)
    resolve_regulation(d, zone)
    d.row["notes"] = d.notes
    return d.row, d.inputs.rows


def _check_gpu(d: Draft) -> None:
    """The candidate's `gpu` is in the reference hardware table or a [hardware.NAME] of the
    proposal; a declared name that the table also has is refused (one set of figures)."""
    known_gpus = d.mkt.hardware["gpu"].to_list()
    declared = d.proposal.hardware
    clash = sorted(set(declared) & set(known_gpus))
    if clash:
        raise ProposalError(d.path, f"hardware.{clash[0]}", "this accelerator is in the "
                            "reference hardware table (sources/reference/hardware.csv): use "
                            "its figures, or declare yours under another name")
    if d.c.gpu not in known_gpus and d.c.gpu not in declared:
        extra = f"; declared: {', '.join(sorted(declared))}" if declared else \
            " (or declare it: [hardware.NAME] with memory_gb, memory_bandwidth_gb_per_s, " \
            "bf16_dense_tflops, fp8_dense_tflops, tdp_w, source)"
        raise d.error("gpu", f"unknown accelerator {d.c.gpu!r}; known: "
                             f"{', '.join(known_gpus)}{extra}")


def _sovereignty(d: Draft, zone: str) -> None:
    c = d.c
    facts = d.mkt.providers.get(c.provider)
    if c.deployment != "on_prem" and facts is None:
        d.notes.append(f"provider {c.provider!r} has no facts in the reference data")
    computed = level_for(c.deployment, zone_country(zone), facts)
    if c.sovereignty_override is not None:
        o = c.sovereignty_override
        d.row["sovereignty_level"] = o.level
        d.row["sovereignty_reason"] = (f"level {o.level} by override (computed: "
                                       f"{computed.reason}); justification: {o.justification}")
    else:
        d.row["sovereignty_level"] = computed.level
        d.row["sovereignty_reason"] = computed.reason
