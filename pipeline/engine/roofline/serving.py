"""Serving dynamics beside the warm decode step (seed 004, ../shared/seeds/004_*.txt): chunked
prefill mixing with decode under a closed-loop client, the queue of a serialised server, the
prefill-cache and speculative-decoding effects, and a sweep's predicted versus measured levels.

The roofline gives a decode-only step and a prefill; real engines interleave them. With chunked
prefill and a per-step token budget, a prompt occupies ceil(prompt / budget) mixed steps, each
max(the decode step, the prefill chunk's compute) (`mixed_step_s`: it reads the weights and KV
as the decode step does and computes the chunk), during which every other decoding sequence
advances one token. Under a
closed loop of C clients, each of a request's N - 1 decode tokens shares a step with another
request's prefill chunk about ceil(prompt / budget) x (C - 1) times (at most N - 1), so

    TPOT(C) = (shared x t_mix + (N - 1 - shared) x TPOT_decode(C)) / (N - 1)

and decode throughput is C / TPOT(C) (the running sequences over TPOT, prefill time not in the
denominator, as the seed's chart). A serialised server (one request at a time under a FIFO lock)
makes a new request wait C - 1 full requests: TTFT = (C - 1) x T_req + its own TTFT. A batched
server runs one prefill at a time (the first waiting prompt takes the whole leftover budget,
seed 004), so a new prompt queues behind the prefills ahead of it: `batched_prefill_ttft_s`
solves that closed loop by mean value analysis (C clients alternating between one queue, the
prefill, and a delay, their N - 1 decode tokens).

`serving_point` is the one place a load (concurrency, prompt and output lengths, chunk budget,
batched or serialised) becomes TPOT, decode tokens/s and TTFT: `scorecard estimate --sweep`,
its sizing and a proposal's `throughput.estimate` all call it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from pipeline.engine.metrics import request_duration
from pipeline.engine.roofline.model import GB, RooflineInputError, RooflineInputs, estimate


def mixed_steps(prompt_tokens: int, budget_tokens: int) -> int:
    """Steps a prompt's chunked prefill occupies: ceil(prompt / per-step token budget)."""
    if budget_tokens < 1:
        raise RooflineInputError("chunk_budget", f"must be at least 1, got {budget_tokens!r}")
    return math.ceil(prompt_tokens / budget_tokens)


def mixed_step_s(decode_step_s: float, chunk_compute_s: float) -> float:
    """A step that decodes the batch and computes one prefill chunk: it still reads every
    weight and the batch's KV cache (the decode step's memory time at that batch) and computes
    the chunk, so under the roofline's ideal overlap it takes max(decode step, chunk compute)
    (seed 004: t_mix = the chunk's compute, 0.39 s against a ~30-60 ms decode step; the decode
    tokens' FLOPs are left out beside the chunk's, the seed's rounding error). Never faster
    than the decode-only step, so C / TPOT stays under the roofline ceiling."""
    return max(decode_step_s, chunk_compute_s)


def chunked_prefill_tpot_s(decode_tpot_s: float, mixed_step_s: float, *, prompt_tokens: int,
                           output_tokens: int, concurrency: int, budget_tokens: int) -> float:
    """Mean TPOT of a request under a closed loop of `concurrency` clients when the other
    requests' prefill chunks share its decode steps (see the module docstring)."""
    decode_tokens = output_tokens - 1
    if decode_tokens < 1:
        return decode_tpot_s
    shared = min(mixed_steps(prompt_tokens, budget_tokens) * (concurrency - 1), decode_tokens)
    return (shared * mixed_step_s + (decode_tokens - shared) * decode_tpot_s) / decode_tokens


def serialised_ttft_s(concurrency: int, ttft_s: float, tpot_s: float,
                      output_tokens: int) -> float:
    """TTFT on a server that runs one request at a time (FIFO) under a closed loop of C
    clients: every new request waits C - 1 whole requests, then its own prefill."""
    return (concurrency - 1) * request_duration(ttft_s, output_tokens, tpot_s) + ttft_s


def speculative_tokens_per_pass(acceptance: float, draft_tokens: int) -> float:
    """Expected tokens one verification pass yields with k drafted tokens each accepted with
    probability a: 1 + a + ... + a^k (seed 003: k = 4, a = 0.7 -> 2.77)."""
    if not 0.0 <= acceptance < 1.0:
        raise RooflineInputError("spec_acceptance", f"must be 0 to below 1, got {acceptance!r}")
    return sum(acceptance ** i for i in range(draft_tokens + 1))


def speculative_tpot_s(tpot_s: float, acceptance: float, draft_tokens: int,
                       draft_step_s: float) -> float:
    """Effective TPOT with speculative decoding: one target pass plus k draft steps per
    verification, over the expected tokens it yields."""
    passes = speculative_tokens_per_pass(acceptance, draft_tokens)
    return (tpot_s + draft_tokens * draft_step_s) / passes


def verification_step_ms(inputs: RooflineInputs, draft_tokens: int) -> float:
    """The target's step that checks k drafted tokens for each of the batch's sequences: a
    prefill-like pass over batch x (k + 1) tokens at the sequences' context. It reads the
    weights the batch x (k + 1) tokens touch (a MoE touches more experts), the batch's KV cache
    once, writes batch x (k + 1) tokens of K/V and computes batch x (k + 1) tokens' FLOPs, so
    it turns compute-bound at a large batch: max(memory, compute) / (1 - bubble) + the
    collectives, as the decode step."""
    if draft_tokens < 1:
        raise RooflineInputError("spec_draft_tokens", f"must be at least 1, got "
                                                      f"{draft_tokens!r}")
    tokens = inputs.batch * (draft_tokens + 1)
    one = estimate(inputs)
    wide = estimate(dataclasses.replace(inputs, batch=tokens))
    gb = (wide.weights_read_gb + inputs.kv_read_factor * one.cache_gb
          + tokens * one.kv_bytes_per_token / GB)
    group = inputs.tensor_parallel * inputs.pipeline_parallel
    memory_ms = gb / (group * inputs.bandwidth_gb_per_s) * 1e3
    return (max(memory_ms, wide.compute_ms) / (1.0 - one.pp_bubble_share)
            + one.collective_ms)


def speculative(inputs: RooflineInputs, *, acceptance: float, draft_tokens: int,
                draft_step_ms: float) -> dict[str, float]:
    """Speculative decoding at the inputs' batch and context: k draft steps (each
    `draft_step_ms`), then one verification of k + 1 tokens per sequence
    (`verification_step_ms`), yielding 1 + a + ... + a^k tokens per sequence. TPOT =
    (verification + k x draft) / tokens per pass; `factor` = the plain decode step / that TPOT,
    the goodput multiplier. Since the verification computes every drafted token, the
    tokens/s never exceeds the dense compute ceiling (batch x (k + 1) tokens per pass at the
    GPU's FLOP/s), nor the bandwidth ceiling of the verification's reads."""
    if draft_step_ms < 0:
        raise RooflineInputError("spec_draft_ms", f"must be 0 or more, got {draft_step_ms!r}")
    plain_ms = estimate(inputs).step_ms
    verify_ms = verification_step_ms(inputs, draft_tokens)
    tpot_ms = speculative_tpot_s(verify_ms, acceptance, draft_tokens, draft_step_ms)
    return {"plain_step_ms": plain_ms, "verification_ms": verify_ms,
            "draft_step_ms": draft_step_ms,
            "tokens_per_pass": speculative_tokens_per_pass(acceptance, draft_tokens),
            "tpot_ms": tpot_ms, "factor": plain_ms / tpot_ms,
            "tokens_per_s": inputs.batch / tpot_ms * 1e3}


def draft_step_ms(draft: RooflineInputs) -> float:
    """One decode step of a draft model at the target's batch and context (its roofline
    step on the same GPUs)."""
    return estimate(draft).step_ms


def batched_prefill_ttft_s(concurrency: int, prefill_s: float, decode_s: float) -> float:
    """TTFT of a batched server that runs one prefill at a time, under a closed loop of C
    clients: each request queues for the prefill (service time `prefill_s`, deterministic),
    then decodes for `decode_s` (its N - 1 tokens, a delay that does not queue). Mean value
    analysis over n = 1 .. C clients with the deterministic-service correction (a prompt that
    arrives during another's prefill waits half of it on average, one queued whole):

        R(n) = P x (1 + Q(n - 1) - U(n - 1) / 2),  X(n) = n / (R(n) + Z),
        Q(n) = X(n) x R(n),  U(n) = X(n) x P

    C = 1 gives the bare prefill; the wait grows as the prefill server fills (seed 004:
    1.25 s measured at C = 1, 3.14 s at C = 32)."""
    if concurrency < 1:
        raise RooflineInputError("concurrency", f"must be at least 1, got {concurrency!r}")
    queue = busy = 0.0
    response = prefill_s
    for n in range(1, concurrency + 1):
        response = prefill_s * (1.0 + queue - busy / 2.0)
        rate = n / (response + decode_s)
        queue, busy = rate * response, min(rate * prefill_s, 1.0)
    return response


def prefix_cached_tokens(prompt_tokens: int, hit_rate: float) -> int:
    """Prompt tokens a prefix-cache hit rate serves from the cache: floor(prompt x h), never
    the last token (the engine always computes it to sample the first output token)."""
    if not 0.0 <= hit_rate <= 1.0:
        raise RooflineInputError("prefix_hit_rate", f"must be 0 to 1, got {hit_rate!r}")
    return min(math.floor(prompt_tokens * hit_rate), prompt_tokens - 1)


def warm_prefill_s(inputs: RooflineInputs, hit_rate: float) -> float:
    """The prefill bound (TTFT without queueing) of one prompt of the inputs' prompt_tokens (or
    context) whose first `prefix_cached_tokens` come from the prefix cache: the prefill the
    serving model computes, with the cached tokens removed (their linear layers and their own
    attention; the attention of the rest over the cached prefix, and the weights' read, are
    still paid). A hit rate of 0 gives the cold bound."""
    prompt = inputs.prompt_tokens or inputs.context
    cached = prefix_cached_tokens(prompt, hit_rate)
    warm = estimate(dataclasses.replace(inputs, prefix_cached_tokens=cached))
    return warm.ttft_lower_bound_ms / 1e3


def kv_transfer_s(inputs: RooflineInputs, prompt_tokens: int, link_gb_per_s: float) -> float:
    """Moving one prompt's KV cache from a prefill worker to a decode worker over a link of
    `link_gb_per_s` (GB/s, all of the link the transfer uses): prompt x KV bytes per token /
    the link (seed 003: a 70B 8K prompt's ~2.6 GB in ~3 ms over NVLink, ~52 ms over 400 Gb/s
    RDMA). Not overlapped with the prefill: an upper bound where engines stream it by layer."""
    if not link_gb_per_s > 0 or math.isinf(link_gb_per_s):
        raise RooflineInputError("kv_link_gbs", f"must be a positive finite GB/s, got "
                                                f"{link_gb_per_s!r}")
    kv = estimate(dataclasses.replace(inputs, batch=1, context=prompt_tokens,
                                      prompt_tokens=prompt_tokens, microbatches=None))
    return prompt_tokens * kv.kv_bytes_per_token / GB / link_gb_per_s


def serving_point(inputs: RooflineInputs, concurrency: int, *, prompt_tokens: int,
                  output_tokens: int, budget_tokens: int | None,
                  serialised: bool = False, prefix_hit_rate: float = 0.0,
                  kv_link_gb_per_s: float | None = None) -> dict[str, Any]:
    """One replica under a closed loop of `concurrency` clients: the decode-only step at batch
    C (every sequence holding the prompt's KV), the mixed step (`mixed_step_s`: the decode
    step or one budget's prefill chunk at the inputs' compute rate, the slower), TPOT, decode
    throughput C / TPOT, the roofline ceiling C / decode step it stays under and TTFT (the
    prefill queue included). `prefix_hit_rate` h: the first floor(prompt x h) prompt tokens
    come from the prefix cache, so the prefill computes the rest only: fewer mixed steps
    (ceil(uncached / budget)), a shorter prefill and TTFT, and so a lower TPOT and a higher
    goodput (every sequence still holds the whole prompt's KV: shared prefix blocks are not
    credited). `budget_tokens` None: no chunked prefill (decode-only steps).
    `kv_link_gb_per_s`: disaggregated prefill: the prompts are prefilled on a separate pool
    (one replica's GPUs beside each decode replica, serving one prefill at a time) and their KV
    sent over that link, so the decode steps carry no prefill chunk (TPOT = the decode step)
    and TTFT = the prefill queue + the KV transfer (`kv_transfer_s`).
    `serialised`: one request at a time (batch 1, FIFO). Beyond the KV capacity (`kv_fits`
    false) the figures are null."""
    if output_tokens < 1:
        raise RooflineInputError("output_tokens", f"must be at least 1, got {output_tokens!r}")
    cached = prefix_cached_tokens(prompt_tokens, prefix_hit_rate)
    one = estimate(dataclasses.replace(inputs, batch=1, context=prompt_tokens,
                                       prompt_tokens=prompt_tokens, microbatches=None,
                                       prefix_cached_tokens=cached))
    prefill_s = one.ttft_lower_bound_ms / 1e3
    chunks = (mixed_steps(prompt_tokens - cached, budget_tokens) if budget_tokens is not None
              else None)
    batch = 1 if serialised else concurrency
    r = estimate(dataclasses.replace(inputs, batch=batch, context=prompt_tokens,
                                     prompt_tokens=prompt_tokens, microbatches=None))
    fits = r.max_batch is not None and r.max_batch >= batch
    decode_s = r.step_ms / 1e3
    mixed_s = mixed_step_s(decode_s, one.prefill_compute_ms / 1e3 / chunks) if chunks else None
    transfer_s = None
    if serialised:
        tpot = decode_s
        ttft = serialised_ttft_s(concurrency, prefill_s, tpot, output_tokens)
        tokens = 1.0 / tpot
    elif kv_link_gb_per_s is not None:
        tpot = decode_s
        mixed_s = None
        transfer_s = kv_transfer_s(inputs, prompt_tokens, kv_link_gb_per_s)
        ttft = batched_prefill_ttft_s(concurrency, prefill_s,
                                      transfer_s + (output_tokens - 1) * tpot) + transfer_s
        tokens = concurrency / tpot
    else:
        tpot = decode_s
        if mixed_s is not None and budget_tokens is not None:
            tpot = chunked_prefill_tpot_s(decode_s, mixed_s,
                                          prompt_tokens=prompt_tokens - cached,
                                          output_tokens=output_tokens, concurrency=concurrency,
                                          budget_tokens=budget_tokens)
        ttft = batched_prefill_ttft_s(concurrency, prefill_s, (output_tokens - 1) * tpot)
        tokens = concurrency / tpot
    return {
        "concurrency": concurrency, "kv_fits": fits,
        "max_batch": r.max_batch,
        "decode_step_ms": decode_s * 1e3 if fits else None,
        "mixed_step_ms": mixed_s * 1e3 if mixed_s is not None and fits else None,
        "tpot_ms": tpot * 1e3 if fits else None,
        "decode_tokens_per_s": tokens if fits else None,
        "ceiling_tokens_per_s": batch / decode_s if fits else None,
        "prefill_s": prefill_s, "prefix_cached_tokens": cached,
        "kv_transfer_ms": transfer_s * 1e3 if transfer_s is not None else None,
        "ttft_s": ttft if fits else None,
    }


def predict_sweep(inputs: RooflineInputs, concurrencies: Sequence[int], *,
                  prompt_tokens: int, output_tokens: int, budget_tokens: int | None,
                  serialised: bool = False, prefix_hit_rate: float = 0.0
                  ) -> list[dict[str, Any]]:
    """One `serving_point` row per concurrency level of a closed-loop sweep."""
    return [serving_point(inputs, c, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                          budget_tokens=budget_tokens, serialised=serialised,
                          prefix_hit_rate=prefix_hit_rate)
            for c in concurrencies]


def compare_levels(predicted: Sequence[dict[str, Any]], measured: dict[int, dict[str, float]],
                   keys: Sequence[str] = ("decode_tokens_per_s", "tpot_ms", "ttft_s"),
                   ) -> list[dict[str, Any]]:
    """Predicted versus measured per concurrency level: for each key, the measured figure and
    the error (predicted / measured - 1); null where either is missing."""
    out = []
    for row in predicted:
        got = measured.get(row["concurrency"], {})
        item: dict[str, Any] = {"concurrency": row["concurrency"]}
        for key in keys:
            p, m = row.get(key), got.get(key)
            item[f"predicted_{key}"] = p
            item[f"measured_{key}"] = m
            item[f"error_{key}"] = p / m - 1.0 if p is not None and m else None
        out.append(item)
    return out
