"""What `scorecard estimate` adds for a capacity planner beside the roofline: request-level
sizing (through the metric steps of pipeline/engine/metrics.py, so the scorecard and the
estimate size alike), topologies of the same GPUs compared (TP x replicas, by tokens/s per GPU
and TPOT), and a closed-loop serving sweep with chunked prefill (serving.py), compared per level
with a measured sweep when one is given. Each section lists its assumptions.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import polars as pl

from pipeline.engine.fleet.sizing import binding
from pipeline.engine.metrics import evaluate
from pipeline.engine.roofline.model import RooflineInputError, RooflineInputs, estimate
from pipeline.engine.roofline.serving import (
    compare_levels,
    draft_step_ms,
    predict_sweep,
    serving_point,
    speculative,
    warm_prefill_s,
)

#: vLLM's default chunked-prefill budget (max_num_batched_tokens) for its OpenAI server:
#: 8,192 tokens on a GPU of at least 70 GiB that is not an A100, else 2,048
#: (EngineArgs.get_batch_defaults, vllm/engine/arg_utils.py,
#: https://github.com/vllm-project/vllm/blob/main/vllm/engine/arg_utils.py, read 2026-12-02)
VLLM_CHUNK_SOURCE = ("vLLM's default max_num_batched_tokens for its OpenAI server "
                     "(EngineArgs.get_batch_defaults in vllm/engine/arg_utils.py, "
                     "https://github.com/vllm-project/vllm/blob/main/vllm/engine/arg_utils.py, "
                     "read 2026-12-02): 8,192 on a GPU of at least 70 GiB other than an A100, "
                     "else 2,048")
_GIB = 2 ** 30


def default_chunk_tokens(gpu: str | None, budget_gb: float) -> int:
    """vLLM's default chunked-prefill budget on this GPU (VLLM_CHUNK_SOURCE)."""
    large = budget_gb * 1e9 >= 70 * _GIB and "a100" not in (gpu or "").lower()
    return 8192 if large else 2048


def serving(inputs: RooflineInputs, *, concurrency: int, prompt_tokens: int,
            output_tokens: int, chunk_tokens: int | None, serialised: bool,
            gpu: str | None = None,
            error_range: tuple[float, float, float] | None = None,
            error_source: str | None = None,
            prefix_hit_rate: float | tuple[float, float, float] | None = None,
            kv_link_gb_per_s: float | None = None,
            ) -> dict[str, Any]:
    """The serving estimate at one load, for `scorecard estimate` and a proposal alike: each
    replica under a closed loop of `concurrency` clients (serving.serving_point), goodput =
    decode tokens/s x replicas, TTFT (the prefill queue included) and TPOT. A batched server
    without `chunk_tokens` takes vLLM's default budget on `gpu` (`default_chunk_tokens`, the
    one place that default is applied; `chunk_default` says it was). With the model's
    measured error range (low, mode, high factors on goodput): `goodput_range` the model's
    goodput x each, and goodput, TPOT and TTFT at its mode (x mode, / mode: the prefill reaches
    the same share of the model as the decode); the model's own figures are kept as
    `model_goodput_tokens_per_s`, `model_tpot_ms`, `model_ttft_s`. Every goodput is capped at
    `ceiling_tokens_per_s`, the roofline ceiling at that load (C / decode step x replicas):
    an error factor above 1 does not lift a figure past what the GPUs can give. A
    `prefix_hit_rate` (h, or low, mode, high) removes that share of each prompt's prefill
    (serving.serving_point): goodput, TPOT and TTFT at the mode, the goodput range at low and
    high (with the error range: low x low, mode x mode, high x high), and `cold_ttft_s` the
    TTFT without the cache. `kv_link_gb_per_s`: disaggregated prefill (serving.serving_point):
    no chunk budget, TPOT the decode step, TTFT + the KV transfer (`kv_transfer_ms`), a prefill
    pool of one replica's GPUs beside each decode replica."""
    disaggregated = kv_link_gb_per_s is not None and not serialised
    chunk_default = not serialised and not disaggregated and chunk_tokens is None
    if serialised or disaggregated:
        chunk_tokens = None
    elif chunk_tokens is None:
        chunk_tokens = default_chunk_tokens(gpu, inputs.budget_gb)
    hits = ((prefix_hit_rate,) * 3 if isinstance(prefix_hit_rate, int | float)
            else prefix_hit_rate or (0.0, 0.0, 0.0))
    points = [serving_point(inputs, concurrency, prompt_tokens=prompt_tokens,
                            output_tokens=output_tokens, budget_tokens=chunk_tokens,
                            serialised=serialised, prefix_hit_rate=h,
                            kv_link_gb_per_s=kv_link_gb_per_s) for h in hits]
    point = points[1]
    cold = serving_point(inputs, concurrency, prompt_tokens=prompt_tokens,
                         output_tokens=output_tokens, budget_tokens=chunk_tokens,
                         serialised=serialised, kv_link_gb_per_s=kv_link_gb_per_s
                         ) if any(hits) else point
    per_replica = point["decode_tokens_per_s"]
    goodput = per_replica * inputs.replicas if per_replica is not None else None
    ceiling = (point["ceiling_tokens_per_s"] * inputs.replicas
               if point["ceiling_tokens_per_s"] is not None else None)
    reason = None if point["kv_fits"] else (
        f"{1 if serialised else concurrency} sequences of {prompt_tokens:,} tokens exceed the "
        f"KV capacity of a replica ({point['max_batch']} at that length)")
    steps = math.ceil(prompt_tokens / chunk_tokens) if chunk_tokens else None
    assumptions = [
        f"Closed loop of {concurrency} clients per replica x {inputs.replicas} replica(s): each "
        f"sends its next request ({prompt_tokens:,} prompt, {output_tokens:,} output tokens) "
        "when its last one ends; every sequence holds the prompt's KV (generated tokens not "
        "counted).",
        ("Serialised server: one request at a time (batch 1, FIFO): TTFT = (C - 1) x (TTFT + "
         "(N - 1) x TPOT) + its own; decode tokens/s = 1 / TPOT." if serialised else
         _disaggregated_words(kv_link_gb_per_s, point["kv_transfer_ms"]) if disaggregated else
         (f"Chunked prefill at {chunk_tokens:,} tokens per step: each prompt takes "
          f"{steps} mixed steps, each max(the decode step, "
          "the prefill chunk's compute) (it still reads the weights and the batch's KV), "
          "during which the other sequences advance one token; TPOT averages them in"
          + (f" (no budget given: {VLLM_CHUNK_SOURCE})" if chunk_default else ""))
         + "; goodput = C / TPOT per replica. One prefill runs at a time: a new prompt "
         "queues behind the prefills ahead of it (closed-loop mean value analysis), so TTFT "
         "rises with C."),
        _kv_words(inputs, any(hits)),
    ]
    out: dict[str, Any] = {
        "concurrency": concurrency, "replicas": inputs.replicas,
        "prompt_tokens": prompt_tokens, "output_tokens": output_tokens,
        "chunk_tokens": chunk_tokens, "chunk_default": chunk_default,
        "serialised": serialised, "ceiling_tokens_per_s": ceiling,
        "kv_fits": point["kv_fits"], "reason": reason,
        "decode_step_ms": point["decode_step_ms"], "mixed_step_ms": point["mixed_step_ms"],
        "tpot_ms": point["tpot_ms"], "ttft_s": point["ttft_s"],
        "prefill_s": point["prefill_s"],
        "prefix_hit_rate": prefix_hit_rate if any(hits) else None,
        "prefix_cached_tokens": point["prefix_cached_tokens"],
        "cold_ttft_s": cold["ttft_s"],
        "disaggregated": disaggregated, "kv_transfer_ms": point["kv_transfer_ms"],
        "goodput_tokens_per_s": goodput, "goodput_range": None,
        "model_goodput_tokens_per_s": goodput, "model_tpot_ms": point["tpot_ms"],
        "model_ttft_s": point["ttft_s"],
        "error_source": error_source, "assumptions": assumptions,
    }
    if any(hits):
        assumptions.append(
            f"Prefix cache: {point['prefix_cached_tokens']:,} of each prompt's "
            f"{prompt_tokens:,} tokens (hit rate {hits[1]:g}"
            + (f", range {hits[0]:g} to {hits[2]:g}" if hits[0] != hits[2] else "")
            + ") come from the cache, so the prefill computes the rest only: fewer mixed "
            "steps, a shorter prefill queue; every sequence still holds the whole prompt's KV "
            "(shared prefix blocks not credited).")
    if goodput is not None and ceiling is not None and (error_range is not None
                                                        or hits[0] != hits[2]):
        low, mode, high = error_range or (1.0, 1.0, 1.0)
        at = [p["decode_tokens_per_s"] * inputs.replicas for p in points]
        out["goodput_range"] = {"low": min(at[0] * low, ceiling),
                                "mode": min(at[1] * mode, ceiling),
                                "high": min(at[2] * high, ceiling)}
        out["goodput_tokens_per_s"] = out["goodput_range"]["mode"]
        out["tpot_ms"] = point["tpot_ms"] / mode
        out["ttft_s"] = point["ttft_s"] / mode
        out["cold_ttft_s"] = cold["ttft_s"] / mode
        assumptions.append(
            (f"Goodput range x {low:.3f} / {mode:.3g} / {high:.3f} (low / mode / high): the "
             f"model's measured error ({error_source})" if error_range is not None else
             "Goodput range from the prefix-cache hit rate's")
            + (f", at hit rates {hits[0]:g} / {hits[1]:g} / {hits[2]:g}"
               if hits[0] != hits[2] else "")
            + ("" if mode == 1 else f"; TPOT and TTFT / {mode:.3g}")
            + (f"; capped at the roofline ceiling {ceiling:,.1f} tokens/s (C / "
               "decode step x replicas)" if at[2] * high > ceiling else "")
            + ".")
    return out


def _kv_words(inputs: RooflineInputs, cached: bool) -> str:
    """The KV-cache inputs of a serving estimate, the defaults said as such (the same words
    for `scorecard estimate` and a proposal)."""
    factor = inputs.kv_read_factor
    return ("KV cache: " + (f"paged in blocks of {inputs.block_size} tokens (capacity in whole "
                            "blocks, a sequence taking whole blocks)" if inputs.block_size
                            else "contiguous, no block rounding (the default; block_size / "
                                 "--block-size for a paged cache, vLLM's 16)")
            + f"; read {factor:g} x per decode step"
            + (" (the default: once, as a paged-attention engine reads it; Hugging Face's naive "
               "cache about 3, kv_read_factor / --kv-read-factor)" if factor == 1 else "")
            + ("" if cached else "; no prefix cache (the default: hit rate 0; prefix_hit_rate "
                                 "/ --prefix-hit-rate)")
            + ".")


def _disaggregated_words(link_gb_per_s: float | None, transfer_ms: float | None) -> str:
    return (f"Disaggregated prefill: a prefill pool of one replica's GPUs beside each decode "
            "replica runs one prefill at a time (its queue by closed-loop mean value analysis), "
            f"then sends the prompt's KV over a {link_gb_per_s:g} GB/s link: "
            f"{transfer_ms or 0.0:,.2f} ms added to TTFT (not overlapped with the prefill; "
            "seed 003: ~3 ms NVLink, ~52 ms 400 Gb/s RDMA for a 70B 8K prompt). The decode "
            "steps carry no prefill chunk: TPOT = the decode step; goodput = C / TPOT per "
            "decode replica, on twice the GPUs.")


def sizing(inputs: RooflineInputs, plan: dict[str, Any],
           served: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Replicas for a request rate (`requests_per_s`, `output_tokens`; the prompt is the
    inputs' prompt_tokens or context): the goodput count and the Little's-law count, from the
    estimate at its batch (the operating concurrency), x `efficiency` (default 1), TPOT the
    step (or `tpot_ms`) and TTFT the prefill bound (warm: `serving.warm_prefill_s`, the
    prefill with the `prefix_hit_rate`'s cached tokens removed, as the serving model has it); with
    `served` (the `serving` estimate at that batch) its TPOT and TTFT, queueing included and
    the cached prefill removed (its `cold_ttft_s` beside)."""
    if plan.get("requests_per_s") is None:
        return None
    if plan.get("output_tokens") is None:
        raise RooflineInputError("output_tokens", "give the mean output tokens per request")
    r = estimate(inputs)
    if r.tokens_per_s_total is None:
        return {"reason": r.ceiling_reason}
    efficiency = plan.get("efficiency") or 1.0
    out_tokens = float(plan["output_tokens"])
    if served is not None and served["tpot_ms"] is None:
        return {"reason": served["reason"]}
    step_s = served["tpot_ms"] / 1e3 if served is not None else r.step_ms / 1e3
    tpot_s = (plan["tpot_ms"] / 1e3 if plan.get("tpot_ms") is not None
              else step_s / efficiency)
    assumptions = [
        f"Operating concurrency = batch {inputs.batch} per replica x {inputs.replicas} "
        "replica(s); a planner's operational figure sits below the KV ceiling (max batch "
        f"{r.max_batch}).",
        f"TPOT {tpot_s * 1e3:,.2f} ms: " + ("typed in (--tpot-ms), a planning input" if
                                          plan.get("tpot_ms") is not None else
                                          ("the serving model's TPOT" if served else
                                           "the decode step") + f" / efficiency {efficiency:g}"),
    ]
    hit = plan.get("prefix_hit_rate")
    if served is not None:
        # the serving model removed the cached prefill itself (serving.serving_point)
        cold_ttft_s = served["cold_ttft_s"] / efficiency
        ttft_s = served["ttft_s"] / efficiency
    else:
        cold_ttft_s = r.ttft_lower_bound_ms / 1e3 / efficiency
        ttft_s = (warm_prefill_s(inputs, hit) / efficiency if hit is not None
                  else cold_ttft_s)
    assumptions.append(f"TTFT {ttft_s * 1e3:,.1f} ms: the prefill bound for "
                       f"{inputs.prompt_tokens or inputs.context} prompt tokens / efficiency, "
                       + ("the prefill queue included" if served else "no queueing")
                       + (f", a prefix-cache hit rate {hit:g} on the prefill "
                                        f"(cold {cold_ttft_s * 1e3:,.1f} ms)" if hit else ""))
    acceptance = plan.get("spec_acceptance")
    if acceptance is not None:
        k = plan.get("spec_draft_tokens") or 4
        draft = plan.get("spec_draft_inputs")
        draft_ms = (draft_step_ms(draft) if draft is not None
                    else plan.get("spec_draft_ms") or 0.0)
        spec = speculative(inputs, acceptance=acceptance, draft_tokens=k, draft_step_ms=draft_ms)
        plain = tpot_s
        tpot_s = tpot_s / spec["factor"]
        assumptions.append(
            f"Speculative decoding: {k} drafted tokens at acceptance {acceptance:g}, draft step "
            f"{draft_ms:.3g} ms" + (f" ({plan['spec_draft_model']}'s roofline step)" if draft
                                    is not None else " (declared)")
            + f", verification of {k + 1} tokens per sequence {spec['verification_ms']:.3g} ms "
            f"against the plain step {spec['plain_step_ms']:.3g} ms: TPOT {plain * 1e3:,.2f} -> "
            f"{tpot_s * 1e3:,.2f} ms (a declared effect)")
    concurrency = inputs.batch * inputs.replicas
    evaluated = evaluate(pl.DataFrame({
        "tokens_per_s": [concurrency / tpot_s],
        "demand_requests_per_s": [float(plan["requests_per_s"])],
        "demand_tokens_per_day": [float(plan["requests_per_s"]) * 86_400.0 * out_tokens],
        "request_output_tokens": [out_tokens], "operating_concurrency": [float(concurrency)],
        "operating_ttft_s": [ttft_s], "operating_tpot_s": [tpot_s],
        "peak_factor": [float(plan.get("peak_factor") or 1.0)],
        "headroom": [float(plan["headroom"]) if plan.get("headroom") is not None else 0.0],
    }))
    row = evaluated.with_columns(binding(pl.col("goodput_instances"),
                                         pl.col("littles_law_instances")).alias("binding")
                                 ).row(0, named=True)
    littles, goodput = row["littles_law_instances"], row["goodput_instances"]
    # disaggregated prefill: each instance is a decode replica and its prefill pool
    pools = 2 if served is not None and served.get("disaggregated") else 1
    assumptions.append("Instances from goodput: ceil(peak output tokens/s / (instance goodput "
                       "x (1 - headroom))); from Little's law: ceil(peak requests/s / "
                       "(concurrency / request duration x (1 - headroom))); the Little's-law "
                       "count carries TTFT, the goodput count does not. The fleet takes the "
                       "larger (the metric steps' `instances`, as a proposal does).")
    return {
        "requests_per_s": float(plan["requests_per_s"]), "output_tokens": out_tokens,
        "prompt_tokens": inputs.prompt_tokens or inputs.context,
        "operating_concurrency": concurrency, "tpot_ms": tpot_s * 1e3,
        "ttft_ms": ttft_s * 1e3, "cold_ttft_ms": cold_ttft_s * 1e3,
        "request_duration_s": row["request_duration_s"],
        "replica_requests_per_s": row["replica_requests_per_s"],
        "instances": int(row["instances"]),
        "binding": row["binding"],
        "littles_law_instances": None if littles is None else int(littles),
        "goodput_instances": None if goodput is None else int(goodput),
        "gpus_per_instance": int(r.gpus) * pools,
        "littles_law_gpus": None if littles is None else int(littles * r.gpus) * pools,
        "gpus": int(row["instances"] * r.gpus) * pools,
        "assumptions": assumptions,
    }


def topologies(inputs: RooflineInputs, gpus: int,
               allreduce_us: dict[int, float] | None = None) -> list[dict[str, Any]]:
    """Each way of serving the model on `gpus` GPUs as TP x replicas (TP a power of two that
    divides the GPU count, PP 1), at the inputs' batch per replica: fits, TPOT (the step, with
    TP t's all-reduce cost: `_allreduce_us`, as `crossover` charges it), tokens/s in all and
    per GPU."""
    if gpus < 1:
        raise RooflineInputError("compare_gpus", f"must be at least 1, got {gpus!r}")
    rows = []
    for tp in _tp_degrees(gpus):
        r = estimate(dataclasses.replace(inputs, tensor_parallel=tp, pipeline_parallel=1,
                                         replicas=gpus // tp, microbatches=None,
                                         allreduce_us=_allreduce_us(inputs, tp, allreduce_us)))
        rows.append({
            "tensor_parallel": tp, "replicas": gpus // tp,
            "fits": r.tokens_per_s_total is not None, "tpot_ms": r.step_ms,
            "collective_ms": r.collective_ms,
            "tokens_per_s_total": r.tokens_per_s_total,
            "tokens_per_s_per_gpu": r.tokens_per_s_per_gpu,
            "reason": r.ceiling_reason,
        })
    return rows


def _allreduce_us(inputs: RooflineInputs, tp: int,
                  by_tp: dict[int, float] | None) -> float | None:
    """One all-reduce's latency (us) at TP `tp`: `--allreduce-us-by-tp`'s for that degree,
    else the inputs' `allreduce_us`; none without tensor parallelism."""
    return (by_tp or {}).get(tp, inputs.allreduce_us) if tp > 1 else None


def _tp_degrees(gpus: int) -> list[int]:
    """Tensor-parallel degrees of `gpus` GPUs: powers of two that divide the count."""
    return [1 << i for i in range(gpus.bit_length()) if gpus % (1 << i) == 0]


def allreduce_by_tp(text: str | None) -> dict[int, float]:
    """`--allreduce-us-by-tp "2:6,4:10"`: one all-reduce's latency (us) per TP degree."""
    if not text:
        return {}
    out = {}
    for item in text.replace(" ", "").split(","):
        tp, _, us = item.partition(":")
        try:
            out[int(tp)] = float(us)
        except ValueError:
            raise RooflineInputError("allreduce_us_by_tp", f"must be TP:us pairs such as "
                                     f"2:6,4:10, got {text!r}") from None
        if out[int(tp)] < 0 or int(tp) < 2:
            raise RooflineInputError("allreduce_us_by_tp", f"a degree of 2 or more and 0 or "
                                     f"more us each, got {item!r}")
    return out


def crossover(inputs: RooflineInputs, gpus: int, concurrencies: list[int],
              allreduce_us: dict[int, float] | None = None) -> dict[str, Any]:
    """TP x replicas on `gpus` GPUs at equal total concurrency (seed 003's TP2 x 2 against
    TP4 x 1): at each total concurrency C, every topology TP t x R = gpus / t replicas runs
    C / R sequences per replica (a level R does not divide is left out for that topology),
    the decode step with t's all-reduce cost (layers x 2 x `allreduce_us[t]`, else the inputs'
    `allreduce_us`); tokens/s in all = R x (C / R) / step = C / step. The winner at C has the
    most tokens/s among the topologies that fit (ties: the lower TPOT); `crossovers` are the
    levels where the winner changes. A wider TP reads each replica's weights over more GPUs
    (it wins while decode is memory-bound) and pays more all-reduces; at a large C decode turns
    compute-bound, where every topology computes alike, and the narrower one wins."""
    if gpus < 1:
        raise RooflineInputError("compare_gpus", f"must be at least 1, got {gpus!r}")
    by_tp = allreduce_us or {}
    levels = []
    winner_before = None
    crossovers = []
    for c in concurrencies:
        if c < 1:
            raise RooflineInputError("compare_concurrency", f"levels must be at least 1, got "
                                     f"{c!r}")
        rows = []
        for tp in _tp_degrees(gpus):
            replicas = gpus // tp
            row: dict[str, Any] = {"tensor_parallel": tp, "replicas": replicas,
                                   "batch_per_replica": None, "fits": False, "tpot_ms": None,
                                   "collective_ms": None, "tokens_per_s_total": None,
                                   "reason": None}
            if c % replicas:
                row["reason"] = f"{c} sequences do not split evenly over {replicas} replicas"
                rows.append(row)
                continue
            r = estimate(dataclasses.replace(
                inputs, tensor_parallel=tp, pipeline_parallel=1, replicas=replicas,
                batch=c // replicas, microbatches=None,
                allreduce_us=_allreduce_us(inputs, tp, allreduce_us)))
            row.update(batch_per_replica=c // replicas, fits=r.tokens_per_s_total is not None,
                       tpot_ms=r.step_ms, collective_ms=r.collective_ms,
                       tokens_per_s_total=r.tokens_per_s_total, reason=r.ceiling_reason)
            rows.append(row)
        fitting = [r for r in rows if r["fits"]]
        best = (max(fitting, key=lambda r: (r["tokens_per_s_total"], -r["tpot_ms"]))
                if fitting else None)
        name = f"TP{best['tensor_parallel']} x {best['replicas']}" if best else None
        if name is not None and winner_before is not None and name != winner_before:
            crossovers.append({"concurrency": c, "from": winner_before, "to": name})
        winner_before = name or winner_before
        levels.append({"concurrency": c, "topologies": rows, "winner": name})
    return {"gpus": gpus, "levels": levels, "crossovers": crossovers, "assumptions": [
        f"Equal total concurrency on {gpus} GPUs: each TP t x R replicas topology runs C / R "
        "sequences per replica at the inputs' context; warm decode steps (the roofline), "
        "tokens/s in all = C / step.",
        "All-reduce per decode step: layers x 2 x the latency of one all-reduce at that TP "
        "degree (" + "; ".join(
            [f"TP{t} {us:g} us" for t, us in sorted(by_tp.items())]
            + [("other degrees " if by_tp else "every degree ")
               + (f"{inputs.allreduce_us:g} us" if inputs.allreduce_us is not None
                  else "not counted: optimistic for the wider TP")])
        + "; seed 003: ~5 us on NVLink, ~25 us on PCIe).",
    ]}


def numbers(text: str, key: str, kind: type) -> list[Any]:
    """Comma-separated numbers of option `key`, each of `kind`."""
    try:
        return [kind(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise RooflineInputError(key, f"must be comma-separated numbers, got {text!r}") from None


def sweep(inputs: RooflineInputs, plan: dict[str, Any]) -> dict[str, Any] | None:
    """A closed-loop sweep over `sweep` concurrency levels ("1,2,4"), chunked prefill at
    `chunk_budget` tokens per step, `output_tokens` per request; with
    `measured_tokens_per_s` (one figure per level) or `measured_sweep` (per level, from
    benchmark files; its levels are the default), predicted vs measured and the error."""
    measured_sweep = plan.get("measured_sweep")
    if plan.get("sweep") is None and measured_sweep is None:
        return None
    if measured_sweep is not None and plan.get("measured_tokens_per_s") is not None:
        raise RooflineInputError("measured_tokens_per_s", "give the measured sweep as figures "
                                 "or as --sweep-evidence, not both")
    levels = (numbers(plan["sweep"], "sweep", int) if plan.get("sweep") is not None
              else sorted(measured_sweep or {}))
    if plan.get("output_tokens") is None:
        raise RooflineInputError("output_tokens", "give the output tokens per request")
    prompt = inputs.prompt_tokens or inputs.context
    serialised = bool(plan.get("serialised"))
    rows = predict_sweep(inputs, levels, prompt_tokens=prompt,
                         output_tokens=int(plan["output_tokens"]),
                         budget_tokens=plan.get("chunk_budget"), serialised=serialised,
                         prefix_hit_rate=plan.get("prefix_hit_rate") or 0.0)
    out: dict[str, Any] = {"levels": rows, "comparison": None, "assumptions": [
        f"Closed loop: C clients, each sends its next request when its last one ends; every "
        f"sequence holds the {prompt}-token prompt's KV (generated tokens not counted).",
        (f"Chunked prefill at {plan['chunk_budget']} tokens per step: a prompt takes "
         f"{math.ceil(prompt / plan['chunk_budget'])} mixed steps, each max(the decode step, "
         "the prefill chunk's compute time), during which each decoding sequence advances one "
         "token; TPOT averages "
         "them in; throughput = C / TPOT (prefill wall time not in the denominator)."
         if plan.get("chunk_budget") else
         "No chunked prefill given: decode-only steps (the plain roofline; over-predicts a "
         "server that mixes long prefills into decode)."),
        "One prefill runs at a time: a prompt waits behind the prefills ahead of it, so TTFT "
        "is the closed loop's response time at the prefill (mean value analysis) and rises "
        "with C.",
    ]}
    if serialised:
        out["assumptions"] = [
            "Serialised server: one request at a time (batch 1) under a FIFO lock and a closed "
            "loop of C clients: TTFT = (C - 1) x (TTFT + (N - 1) x TPOT) + its own TTFT; "
            "decode throughput 1 / TPOT at every C."]
    if plan.get("measured_tokens_per_s") is not None:
        measured = numbers(plan["measured_tokens_per_s"], "measured_tokens_per_s", float)
        if len(measured) != len(levels):
            raise RooflineInputError("measured_tokens_per_s",
                                     f"give one figure per level ({len(levels)}), got "
                                     f"{len(measured)}")
        out["comparison"] = compare_levels(
            rows, {c: {"decode_tokens_per_s": m} for c, m in zip(levels, measured,
                                                                  strict=True)},
            keys=("decode_tokens_per_s",))
    if measured_sweep is not None:
        out["comparison"] = compare_levels(rows, measured_sweep,
                                           keys=("decode_tokens_per_s", "tpot_ms", "ttft_s"))
        out["measured_source"] = plan.get("measured_source")
    return out
