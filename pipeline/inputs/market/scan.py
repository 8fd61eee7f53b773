"""The market as candidates: each `[[scan]]` of a proposal expanded, before any candidate is
resolved, into one generated candidate per offer of the vintage and precision that fits the
model in memory and passes the scan's filters (docs/proposal.md, "The market as candidates").

An offer fits at a precision when one sequence of the scan's context fits in its KV cache
beside the weights and every GPU's reserve, one replica over all the offer's GPUs: the
roofline's `max_batch` (pipeline/engine/roofline), from the hardware and model tables, is at
least 1. Each offer left out is listed with its reason; the counts (offers considered,
fitting, kept by the scan's filters, candidates generated) go to the result beside the
eligible ones (pipeline/engine/scorecard.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.engine.ranking.sovereignty import level_for, zone_country
from pipeline.engine.resolved import Market
from pipeline.engine.roofline import roofline
from pipeline.engine.roofline.kv import sized_request_tokens
from pipeline.engine.roofline.model import GB
from pipeline.engine.roofline.reference import (
    COMPUTE_COLUMN,
    DEFAULT_RESERVE_SHARE,
    MODEL_FIELDS,
    with_reference_inputs,
)
from schemas.proposal import Candidate, Proposal, ProposalError, Scan


@dataclass
class Expansion:
    """A scan's generated candidates, what each says of its making, and the counts."""

    candidates: list[Candidate] = field(default_factory=list)
    #: candidate id -> the note saying which offer and scan made it, and why it fits
    notes: dict[str, str] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)


def expand(proposal: Proposal, path: Path | str, mkt: Market
           ) -> tuple[Proposal, list[Expansion]]:
    """`proposal` with each scan's generated candidates after the hand-listed ones, and each
    scan's expansion (the proposal itself when it has no scan)."""
    if not proposal.scan:
        return proposal, []
    expansions = [_expand(i, s, proposal, str(path), mkt) for i, s in enumerate(proposal.scan)]
    taken = {c.id for c in proposal.candidates}
    for e in expansions:
        for c in e.candidates:
            if c.id in taken:
                raise ProposalError(path, f"scan[{e.summary['scan']}]", f"generates candidate "
                                    f"id {c.id!r}, which is already used: rename the hand-listed "
                                    "candidate, or narrow one of the scans")
            taken.add(c.id)
    generated = [c for e in expansions for c in e.candidates]
    return proposal.model_copy(update={"candidates": [*proposal.candidates, *generated]}), \
        expansions


def _expand(i: int, s: Scan, proposal: Proposal, path: str, mkt: Market) -> Expansion:
    key = f"scan[{i}]"
    model = mkt.row("models", model=s.model)
    if model is None:
        raise ProposalError(path, f"{key}.model", f"unknown model {s.model!r}; known: "
                            f"{', '.join(mkt.models['model'].to_list())}")
    _known(path, f"{key}.gpus", s.gpus if isinstance(s.gpus, list) else [],
           mkt.hardware["gpu"].to_list(), "accelerator")
    _known(path, f"{key}.providers", s.providers or [],
           mkt.offers["provider_id"].unique().sort().to_list(), "provider with offers")
    _known(path, f"{key}.regions", s.regions or [],
           mkt.offers["region"].unique().sort().to_list(), "region with offers")
    if s.throughput.by_gpu is not None:
        _known(path, f"{key}.throughput.by_gpu", list(s.throughput.by_gpu),
               mkt.hardware["gpu"].to_list(), "accelerator")
    context = _context(s, proposal)
    if context is None:
        raise ProposalError(path, f"{key}.context", "the tokens of one sequence the KV cache "
                            "must hold: give `context`, or an estimate with its context, or "
                            "[demand] prompt_tokens and output_tokens")
    offers = mkt.offers.sort("provider_id", "offer_id", "region", "pricing_model")
    fit = _fit(offers, model, mkt.hardware, s.precisions, context)
    out = Expansion()
    left_out, fitting, kept = [], 0, 0
    for offer, fits in zip(offers.iter_rows(named=True), fit, strict=True):
        where = {"offer": f"{offer['provider_id']}:{offer['offer_id']}",
                 "region": offer["region"], "pricing": offer["pricing_model"]}
        fitted = [p for p, (ok, _) in fits.items() if ok]
        if not fitted:
            left_out.append({**where, "reason": "; ".join(
                f"{p}: {why}" for p, (_, why) in fits.items())})
            continue
        fitting += 1
        reason = _filtered(s, offer, mkt)
        if reason is not None:
            left_out.append({**where, "reason": reason})
            continue
        kept += 1
        for p in fitted:
            c = _candidate(i, s, offer, p)
            out.candidates.append(c)
            out.notes[c.id] = (f"generated by {key} from the offer {where['offer']} "
                               f"({offer['pricing_model']}, {offer['region']}): {fits[p][1]}")
    out.summary = {
        "scan": i, "model": s.model, "precisions": list(s.precisions),
        "context_tokens": context, "offers_considered": offers.height,
        "offers_fitting": fitting, "offers_kept": kept,
        "candidates_generated": len(out.candidates),
        "generated": [c.id for c in out.candidates], "left_out": left_out}
    return out


def _known(path: str, key: str, given: list[str], known: list[str], what: str) -> None:
    unknown = [g for g in given if g not in known]
    if unknown:
        raise ProposalError(path, key, f"unknown {what} {unknown[0]!r}; known: "
                            f"{', '.join(known)}")


def _context(s: Scan, proposal: Proposal) -> int | None:
    """The scan's `context`, else its estimate's (context, or prompt + output tokens), else
    the demand's request (prompt + output tokens, their p95 where given)."""
    if s.context is not None:
        return s.context
    e = s.throughput.estimate
    if e is not None and e.context is not None:
        return e.context
    if e is not None and e.prompt_tokens is not None and e.output_tokens is not None:
        return e.prompt_tokens + e.output_tokens
    d = proposal.demand
    sized = None if d is None else sized_request_tokens(
        d.prompt_tokens, d.output_tokens, d.prompt_tokens_p95, d.output_tokens_p95)
    return None if sized is None else round(sum(sized))


def _fit(offers: pl.DataFrame, model: dict[str, Any], hardware: pl.DataFrame,
         precisions: Sequence[str], context: int) -> list[dict[str, tuple[bool, str]]]:
    """Per offer, per precision: whether the model fits (one sequence of `context` tokens
    beside the weights and the reserve, one replica over the offer's GPUs), and in words."""
    shapes = offers.select("gpu", "gpu_count").unique().join(
        hardware, on="gpu", how="left").join(
        pl.DataFrame({"precision": precisions}), how="cross").with_columns(
        [pl.lit(model[k]).alias(k) for k in MODEL_FIELDS]
        + [pl.lit(1).alias("batch"), pl.lit(context).alias("context"),
           pl.col("gpu_count").alias("tensor_parallel")])
    known = shapes.filter(pl.col("memory_gb").is_not_null())
    figures = roofline(with_reference_inputs(known)) if known.height else known
    by_shape = {(r["gpu"], r["gpu_count"], r["precision"]): r
                for r in figures.iter_rows(named=True)}
    out = []
    for gpu, count in offers.select("gpu", "gpu_count").iter_rows():
        fits = {}
        for p in precisions:
            r = by_shape.get((gpu, count, p))
            fits[p] = _fits_in_words(r, gpu, count, p, context, model["model"])
        out.append(fits)
    return out


def _fits_in_words(r: dict[str, Any] | None, gpu: str, count: int, precision: str,
                   context: int, model: str) -> tuple[bool, str]:
    if r is None:
        return False, f"{gpu} is not in the hardware table"
    if r[COMPUTE_COLUMN[precision]] is None:
        return False, f"{gpu} has no {precision} compute figure (no {precision} support)"
    sequence_gb = context * r["kv_bytes_per_token"] / GB
    reserve_gb = count * r["reserve_gb"]
    words = (f"{model} {precision} weights {r['weights_gb']:.1f} GB + reserve "
             f"{reserve_gb:.1f} GB ({DEFAULT_RESERVE_SHARE:.0%} of each GPU) + KV "
             f"{sequence_gb:.2f} GB for one sequence of {context} tokens")
    budget = f"{r['memory_budget_gb']:.0f} GB ({count} x {r['memory_gb']:g} GB)"
    if not r["max_batch"]:
        return False, f"{words} exceed {budget}"
    return True, f"{words} fit in {budget} ({r['max_batch']} such sequences)"


def _filtered(s: Scan, offer: dict[str, Any], mkt: Market) -> str | None:
    """Why the scan's filters leave a fitting offer out (None: kept)."""
    if offer["pricing_model"] not in s.pricing:
        return f"pricing {offer['pricing_model']} is not in the scan's pricing"
    if isinstance(s.gpus, list) and offer["gpu"] not in s.gpus:
        return f"accelerator {offer['gpu']} is not in the scan's gpus"
    if s.providers is not None and offer["provider_id"] not in s.providers:
        return f"provider {offer['provider_id']} is not in the scan's providers"
    if s.regions is not None and offer["region"] not in s.regions:
        return f"region {offer['region']} is not in the scan's regions"
    if offer["zone"] is None:
        return f"region {offer['region']} has no known zone (sources/reference/regions.csv)"
    level = level_for("cloud", zone_country(offer["zone"]),
                      mkt.providers.get(offer["provider_id"]))
    if level.level < s.min_sovereignty:
        return (f"sovereignty {level.reason}, below the scan's min_sovereignty "
                f"{s.min_sovereignty}")
    if s.throughput.by_gpu is not None and offer["gpu"] not in s.throughput.by_gpu:
        return f"no throughput evidence for {offer['gpu']} in the scan's throughput.by_gpu"
    return None


def _candidate(i: int, s: Scan, offer: dict[str, Any], precision: str) -> Candidate:
    parts = (f"scan{i}", offer["provider_id"], offer["offer_id"], offer["region"],
             offer["pricing_model"], precision)
    cid = re.sub(r"[^A-Za-z0-9_.-]", "-", "-".join(parts))
    if s.throughput.estimate is not None:
        throughput: dict[str, Any] = {"estimate": {
            **s.throughput.estimate.model_dump(exclude_unset=True), "model": s.model,
            "precision": precision}}
    else:
        assert s.throughput.by_gpu is not None
        throughput = s.throughput.by_gpu[offer["gpu"]].model_dump(exclude_unset=True)
    return Candidate.model_validate({
        "id": cid,
        "label": (f"{offer['provider_id']} {offer['offer_id']} {precision}, "
                  f"{offer['region']} (generated by scan[{i}])"),
        "deployment": "cloud", "provider": offer["provider_id"], "region": offer["region"],
        "gpu": offer["gpu"], "gpu_count": offer["gpu_count"], "model": s.model,
        "precision": precision, "engine": s.engine, "throughput": throughput,
        "power": None if s.power is None else s.power.model_dump(exclude_unset=True),
        "cost": {"offer": f"{offer['provider_id']}:{offer['offer_id']}",
                 "pricing": offer["pricing_model"]},
    })
