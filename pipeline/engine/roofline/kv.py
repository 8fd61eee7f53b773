"""The KV cache as a serving engine holds it (seed 003, ../shared/seeds/003_*.txt): how many
sequences fit when each reserves its whole context (a pre-paged engine) against a paged cache
that allocates blocks of `block_size` tokens on demand, the concurrency at which a paged
engine starts to preempt, and the request length the cache is sized for (the p95 rule, one
place for the scan and the estimate's KV note).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from pipeline.engine.roofline.model import RooflineInputError, RooflineInputs, estimate


def sized_request_tokens(prompt: float | None, output: float | None,
                         prompt_p95: float | None, output_p95: float | None
                         ) -> tuple[float, float] | None:
    """The prompt and output tokens of the request the KV cache must hold: each length's p95
    where given, else its mean; None without a mean prompt and output."""
    if prompt is None or output is None:
        return None
    return (prompt_p95 if prompt_p95 is not None else prompt,
            output_p95 if output_p95 is not None else output)


def paged_capacity(inputs: RooflineInputs, *, sequence_tokens: int,
                   reserved_tokens: int | None = None) -> dict[str, Any]:
    """Sequences the KV cache holds beside the weights and the reserve:

    - `naive_sequences`: each sequence reserves `reserved_tokens` (the context window, a
      contiguous reservation: inputs.context by default) whatever it uses;
    - `paged_sequences`: blocks of `block_size` tokens (16 when not given, vLLM's default)
      allocated as used, a sequence of L tokens taking ceil(L / block size) blocks;
    - `preemption_onset_concurrency`: the first concurrency whose sequences, each grown to
      `sequence_tokens`, need more blocks than the cache has: a paged engine preempts
      (evicts and recomputes) from there, so a nonzero preemption rate says the KV budget binds.
    """
    if sequence_tokens < 1:
        raise RooflineInputError("sequence_tokens", f"must be at least 1, got {sequence_tokens!r}")
    reserved = reserved_tokens if reserved_tokens is not None else inputs.context
    if reserved < sequence_tokens:
        raise RooflineInputError("context", f"the reserved context ({reserved}) is below the "
                                            f"sequence's {sequence_tokens} tokens")
    block = inputs.block_size or 16
    paged = estimate(dataclasses.replace(inputs, block_size=block))
    tokens = estimate(dataclasses.replace(inputs, block_size=None)).kv_capacity_tokens or 0
    blocks = (paged.kv_capacity_tokens or 0) // block
    per_sequence = math.ceil(sequence_tokens / block)
    fits = blocks // per_sequence
    naive = tokens // reserved
    return {
        "block_size": block, "kv_blocks": blocks, "kv_capacity_tokens": blocks * block,
        "sequence_tokens": sequence_tokens, "blocks_per_sequence": per_sequence,
        "reserved_tokens": reserved, "naive_sequences": naive, "paged_sequences": fits,
        "paged_over_naive": fits / naive if naive else None,
        "preemption_onset_concurrency": fits + 1,
    }
