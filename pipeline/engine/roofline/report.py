"""What `scorecard estimate` prints: the `--json` object (every roofline output at the top
level, DESIGN section 9, then the inputs, assumptions, sources and calibration) and the text
table, built from the inputs and context the options resolved into
(pipeline/inputs/evidence/estimate.py).
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.engine.roofline import kv, planning
from pipeline.engine.roofline.model import (
    RooflineInputError,
    RooflineInputs,
    RooflineResult,
    estimate,
)


class EstimateError(Exception):
    """Bad input, with a message naming the flag, TOML key or file at fault."""


def estimate_report(inputs: RooflineInputs, context: dict[str, Any]) -> dict[str, Any]:
    """The `--json` object for the inputs and context the options resolved into
    (`pipeline.inputs.estimate.resolve`); an EstimateError names the option at fault."""
    out = report(inputs, estimate(inputs), context)
    plan = context["plan"]
    try:
        out["serving"] = _serving(inputs, context)
        out["sizing"] = planning.sizing(inputs, plan, out["serving"])
        out["topologies"] = (planning.topologies(
            inputs, plan["compare_gpus"], planning.allreduce_by_tp(
                plan.get("allreduce_us_by_tp"))) if plan.get("compare_gpus") is not None
            else None)
        out["sweep"] = planning.sweep(inputs, plan)
        out["kv_paging"] = _kv_paging(inputs, plan)
        out["crossover"] = _crossover(inputs, plan)
    except RooflineInputError as err:
        flag = "--" + err.field.replace("_", "-")
        raise EstimateError(f"{flag}: {str(err).split(': ', 1)[1]}") from None
    return out


def _crossover(inputs: RooflineInputs, plan: dict[str, Any]) -> dict[str, Any] | None:
    """With --compare-concurrency (and --compare-gpus): the TP x replicas topologies at equal
    total concurrency and which wins (planning.crossover)."""
    if plan.get("compare_concurrency") is None:
        return None
    if plan.get("compare_gpus") is None:
        raise RooflineInputError("compare_concurrency", "give --compare-gpus, the GPUs the "
                                 "topologies share")
    levels = planning.numbers(plan["compare_concurrency"], "compare_concurrency", int)
    return planning.crossover(inputs, plan["compare_gpus"], levels,
                              planning.allreduce_by_tp(plan.get("allreduce_us_by_tp")))


def _kv_paging(inputs: RooflineInputs, plan: dict[str, Any]) -> dict[str, Any] | None:
    """With --block-size: the paged cache against a naive one (kv.paged_capacity), each
    sequence grown to prompt + output tokens (the context without --output-tokens), the naive
    engine reserving the larger of the context and that length."""
    if inputs.block_size is None:
        return None
    prompt = inputs.prompt_tokens or inputs.context
    used = prompt + int(plan["output_tokens"]) if plan.get("output_tokens") else inputs.context
    return kv.paged_capacity(inputs, sequence_tokens=max(used, 1),
                             reserved_tokens=max(inputs.context, used, 1))


def _serving(inputs: RooflineInputs, context: dict[str, Any]) -> dict[str, Any] | None:
    """The serving estimate at the batch as each replica's concurrency, when a load is given
    (`output_tokens`): chunked prefill at the chunk budget (vLLM's default on the GPU when
    none is given) or a serialised server, as a proposal's serving-form estimate computes it.
    None for the warm-decode form's inputs: no chunk budget, not serialised, and a context
    other than the prompt (a batch at a stated context, as a proposal's `batch`, `context`;
    the serving model holds every sequence at the prompt's KV)."""
    plan = context["plan"]
    if plan.get("kv_link_gbs") is not None and plan.get("serialised"):
        raise RooflineInputError("kv_link_gbs", "a disaggregated prefill pool and --serialised "
                                 "(one request at a time on one replica) do not go together: "
                                 "give --kv-link-gbs or --serialised, not both")
    prompt = inputs.prompt_tokens or inputs.context
    if plan.get("output_tokens") is None or (
            not (plan.get("chunk_budget") or plan.get("serialised") or plan.get("kv_link_gbs"))
            and prompt != inputs.context):
        if plan.get("prefix_hit_range") is not None:
            raise RooflineInputError("prefix_hit_range", "the range is the serving estimate's "
                                     "goodput range, and there is none: give --output-tokens "
                                     "(the load) with the prompt as the context, or a "
                                     "--chunk-budget")
        return None
    return planning.serving(
        inputs, concurrency=inputs.batch, prompt_tokens=inputs.prompt_tokens or inputs.context,
        output_tokens=int(plan["output_tokens"]), chunk_tokens=plan.get("chunk_budget"),
        serialised=bool(plan.get("serialised")), gpu=context.get("gpu"),
        # an efficiency replaces the model's measured error, as in a proposal
        error_range=None if plan.get("efficiency") is not None else context.get("error_range"),
        error_source=None if plan.get("efficiency") is not None
        else context.get("error_source"),
        prefix_hit_rate=_hit_rates(plan), kv_link_gb_per_s=plan.get("kv_link_gbs"))


def _hit_rates(plan: dict[str, Any]) -> float | tuple[float, float, float] | None:
    """--prefix-hit-rate (the mode) with --prefix-hit-range "low,high" around it."""
    hit, span = plan.get("prefix_hit_rate"), plan.get("prefix_hit_range")
    if span is None:
        return hit
    try:
        low, high = (float(x) for x in span.replace(" ", "").split(","))
    except ValueError:
        raise RooflineInputError("prefix_hit_range", f"must be two rates, low,high, got "
                                 f"{span!r}") from None
    if hit is None:
        raise RooflineInputError("prefix_hit_range", "give --prefix-hit-rate, the mode")
    if not 0.0 <= low <= hit <= high <= 1.0:
        raise RooflineInputError("prefix_hit_range", f"must hold 0 <= low <= the rate {hit:g} "
                                 f"<= high <= 1, got {span!r}")
    return (low, hit, high)


def report(inputs: RooflineInputs, result: RooflineResult, context: dict[str, Any]
           ) -> dict[str, Any]:
    """The `--json` object: every output at the top level (DESIGN section 9), then the inputs,
    assumptions (defaults taken first), sources and calibration."""
    out = result.to_dict()
    out["assumptions"] = [*context["defaults"], *result.assumptions]
    out["inputs"] = {**inputs.row(), "calibration_source": inputs.calibration_source}
    out["grade"] = "estimated"
    for key in ("model", "gpu", "precision", "sources", "calibration"):
        out[key] = context[key]
    return out


def _fmt(value: float | None, digits: int = 2) -> str:
    return "null" if value is None else f"{value:,.{digits}f}"


def render_text(data: dict[str, Any]) -> str:
    """The human-readable report: memory budget, bounds, ceiling, the binding bound, and the
    assumptions."""
    i = data["inputs"]
    tp = i["tensor_parallel"]
    what = [x for x in (data["model"], data["gpu"] and f"on {data['gpu']}",
                        data["precision"], tp > 1 and f"tensor parallel x{tp}") if x]
    ceiling = data["tokens_per_s_ceiling"]
    max_batch = data["max_batch"]
    # (label, number, unit, note); a row without a number is a section heading
    rows: list[tuple[str, str, str, str]] = [
        ("Memory budget" + (f" (x{tp} GPUs)" if tp > 1 else ""), "", "", ""),
        ("budget", _fmt(data["memory_budget_gb"]), "GB", ""),
        ("weights", _fmt(i["weights_gb"]), "GB", ""),
        ("reserve", _fmt(i["reserve_gb"] * tp), "GB", ""),
        ("KV cache", _fmt(data["cache_gb"]), "GB",
         f"{data['kv_bytes_per_token']:,.0f} B/token x batch {i['batch']:,.0f} x context "
         f"{i['context']:,.0f}"),
        ("required", _fmt(data["required_gb"]), "GB", ""),
        ("headroom", _fmt(data["headroom_gb"]), "GB", ""),
        ("max batch", "null" if max_batch is None else f"{max_batch:,}", "seq",
         "at this context, within the budget"),
        ("Warm decode step", "", "", ""),
        ("traffic", _fmt(data["traffic_gb"], 3), "GB", "per step"),
        ("memory time", _fmt(data["memory_ms"], 3), "ms", ""),
        ("compute time", _fmt(data["compute_ms"], 3), "ms", ""),
        ("step", _fmt(data["step_ms"], 3), "ms",
         f"{data['bound']}-bound: intensity {data['arithmetic_intensity_flop_per_byte']:,.1f} "
         f"vs ridge {data['ridge_flop_per_byte']:,.1f} FLOP/B"),
        ("ceiling", _fmt(ceiling, 1), "tok/s",
         "batch / step" if ceiling is not None else f"none: {data['ceiling_reason']}"),
        ("Prefill", "", "", ""),
        ("prompt", f"{i['prompt_tokens'] or i['context']:,.0f}", "tokens",
         f"{data['prefill_flops']:.3e} FLOP"),
        ("TTFT lower bound", _fmt(data["ttft_lower_bound_ms"], 3), "ms",
         f"compute {_fmt(data['prefill_compute_ms'], 3)} ms, weights read "
         f"{_fmt(data['prefill_memory_ms'], 3)} ms"),
    ]
    width = max(len(number) for _, number, _, _ in rows)
    lines = ["Roofline estimate (grade: estimated, never a measurement)"
             + (" - " + ", ".join(what) if what else "")]
    for label, number, unit, note in rows:
        if not number:
            lines.append(label)
            continue
        line = f"  {label:<17} {number:>{width}} {unit:<6}"
        lines.append((line + f"  {note}" if note else line).rstrip())
    if data["calibration"]:
        cal = data["calibration"]
        lines.append(f"Calibrated from: {cal['source']}")
        for share, rate, peak, unit in (("mbu", "bandwidth_gb_per_s", "peak_bandwidth_gb_per_s",
                                         "GB/s"),
                                        ("mfu", "tflops", "peak_tflops", "TFLOP/s")):
            if cal.get(share) is not None:
                lines.append(f"  {share.upper()} {cal[share]:.1%}: {cal[rate]:,.1f} of "
                             f"{cal[peak]:,.1f} {unit} ({cal['peaks']})")
        if cal.get("headroom"):
            lines.append(f"  {cal['headroom']}")
    lines.extend(_planning_text(data))
    lines.append("Assumptions")
    lines.extend(f"  - {a}" for a in data["assumptions"])
    for s in data["sources"]:
        lines.append(f"Source: {s['table']} {s['key']}: {s['source_url']} "
                     f"({s['source_date']}, {s['licence']})")
    return "\n".join(lines)


def _planning_text(data: dict[str, Any]) -> list[str]:
    """The sizing, topology and sweep sections, when asked for."""
    lines: list[str] = []
    sv = data.get("serving")
    if sv:
        lines.append(f"Serving estimate (closed loop, concurrency {sv['concurrency']} per replica"
                     f" x {sv['replicas']})")
        if sv["goodput_tokens_per_s"] is None:
            lines.append(f"  none: {sv['reason']}")
        else:
            band = sv["goodput_range"]
            lines.append(f"  goodput {sv['goodput_tokens_per_s']:,.1f} tok/s"
                         + (f" (range {band['low']:,.1f} to {band['high']:,.1f})" if band
                            else "")
                         + f", TPOT {sv['tpot_ms']:,.1f} ms, TTFT {sv['ttft_s']:,.2f} s "
                         "(prefill queue included"
                         + (f", KV transfer {sv['kv_transfer_ms']:,.2f} ms"
                            if sv.get("kv_transfer_ms") is not None else "")
                         + "); roofline ceiling at this load "
                         f"{sv['ceiling_tokens_per_s']:,.1f} tok/s")
        lines.extend(f"  - {a}" for a in sv["assumptions"])
    s = data.get("sizing")
    if s and "reason" in s:
        lines += ["Sizing", f"  none: {s['reason']}"]
    elif s:
        lines += [
            "Sizing (the larger of Little's law and goodput)",
            f"  {s['requests_per_s']:,.4g} requests/s of {s['prompt_tokens']:,.0f} prompt + "
            f"{s['output_tokens']:,.0f} output tokens; concurrency {s['operating_concurrency']}",
            f"  TTFT {s['ttft_ms']:,.1f} ms + ({s['output_tokens']:,.0f} - 1) x TPOT "
            f"{s['tpot_ms']:,.2f} ms = {s['request_duration_s']:,.3f} s per request",
            f"  {s['replica_requests_per_s']:,.3f} requests/s per instance -> "
            f"{s['littles_law_instances']} instances = {s['littles_law_gpus']} GPUs "
            f"(goodput-based: {s['goodput_instances']} instances)",
            f"  sized on {s['instances']} instances = {s['gpus']} GPUs ({s['binding']} binds: "
            "the larger count)",
        ]
        lines.extend(f"  - {a}" for a in s["assumptions"])
    if data.get("topologies"):
        lines.append("Topologies on the same GPUs (batch per replica as given)")
        for t in data["topologies"]:
            total, per = t["tokens_per_s_total"], t["tokens_per_s_per_gpu"]
            lines.append(f"  TP{t['tensor_parallel']} x {t['replicas']}: " + (
                f"TPOT {t['tpot_ms']:,.2f} ms (all-reduce {t['collective_ms']:,.2f} ms), "
                f"{total:,.0f} tok/s, {per:,.1f} tok/s per GPU" if t["fits"] else
                f"does not fit: {t['reason']}"))
    co = data.get("crossover")
    if co:
        lines.append(f"Topologies at equal total concurrency on {co['gpus']} GPUs")
        for level in co["levels"]:
            parts = [f"TP{t['tensor_parallel']} x {t['replicas']} "
                     + (f"{t['tokens_per_s_total']:,.0f} tok/s, TPOT {t['tpot_ms']:,.2f} ms"
                        if t["fits"] else "does not fit" if t["batch_per_replica"] else
                        "uneven split")
                     for t in level["topologies"]]
            lines.append(f"  C={level['concurrency']}: " + "; ".join(parts)
                         + f" -> {level['winner'] or 'none fits'}")
        for x in co["crossovers"]:
            lines.append(f"  crossover at C={x['concurrency']}: {x['from']} -> {x['to']}")
        lines.extend(f"  - {a}" for a in co["assumptions"])
    kp = data.get("kv_paging")
    if kp:
        lines += [
            f"Paged KV cache ({kp['block_size']}-token blocks)",
            f"  {kp['kv_blocks']:,} blocks = {kp['kv_capacity_tokens']:,} tokens; a sequence "
            f"of {kp['sequence_tokens']:,} tokens takes {kp['blocks_per_sequence']} blocks",
            f"  {kp['paged_sequences']:,} sequences paged vs {kp['naive_sequences']:,} when "
            f"each reserves {kp['reserved_tokens']:,} tokens; preemption from concurrency "
            f"{kp['preemption_onset_concurrency']:,}",
        ]
    sw = data.get("sweep")
    if sw:
        lines.append("Closed-loop sweep (predicted)")
        compared = {r["concurrency"]: r for r in sw["comparison"] or []}
        for r in sw["levels"]:
            if not r["kv_fits"]:
                lines.append(f"  C={r['concurrency']}: beyond the KV capacity")
                continue
            line = (f"  C={r['concurrency']}: TPOT {r['tpot_ms']:,.1f} ms, "
                    f"{r['decode_tokens_per_s']:,.1f} tok/s decode, TTFT {r['ttft_s']:,.2f} s")
            c = compared.get(r["concurrency"])
            if c and c["measured_decode_tokens_per_s"] is not None:
                line += (f"; measured {c['measured_decode_tokens_per_s']:,.1f} tok/s, error "
                         f"{c['error_decode_tokens_per_s']:+.0%}")
            if c and c.get("measured_ttft_s") is not None:
                line += (f"; TTFT measured {c['measured_ttft_s']:,.2f} s, error "
                         f"{c['error_ttft_s']:+.0%}")
            lines.append(line)
        if sw.get("measured_source"):
            lines.append(f"  measured: {sw['measured_source']}")
        lines.extend(f"  - {a}" for a in sw["assumptions"])
    return lines


def render_json(data: dict[str, Any]) -> str:
    """The `--json` output: sorted keys, no NaN."""
    return json.dumps(data, sort_keys=True, indent=2, allow_nan=False)
