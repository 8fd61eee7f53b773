"""The roofline's reference defaults and reference rows: the weight bytes and compute column of
each precision, the default KV-cache bytes and reserve, and which model and GPU columns feed
which input (core__model_architectures and core__hardware rows, which
pipeline/inputs/evidence/estimate.py reads from the bundled tables for `scorecard estimate`).

Each default formula is written once and serves both the frame path (`with_reference_inputs`,
polars expressions) and the scalar one (`scorecard estimate`, plain numbers).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

import polars as pl

from pipeline.engine.roofline.model import GB, F, RooflineInputError, RooflineInputs, _f

WEIGHT_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0}
COMPUTE_COLUMN: dict[str, str] = {"bf16": "bf16_dense_tflops", "fp8": "fp8_dense_tflops"}
DEFAULT_CACHE_BYTES = 2.0  # a BF16/FP16 KV cache, the engines' default even for FP8 weights
DEFAULT_RESERVE_SHARE = 0.10  # vLLM's gpu_memory_utilization=0.9 leaves 10% of the GPU

#: the roofline inputs a core__model_architectures row gives.
MODEL_FIELDS: tuple[str, ...] = ("params", "active_params", "layers", "q_heads", "kv_heads",
                                 "head_dim", "vocab_size", "hidden_size", "tied_embeddings",
                                 "lookup_embeddings", "experts", "experts_per_token")
#: roofline input -> the core__hardware column giving it (compute: COMPUTE_COLUMN[precision]).
GPU_COLUMNS: dict[str, str] = {"budget_gb": "memory_gb",
                               "bandwidth_gb_per_s": "memory_bandwidth_gb_per_s"}
_GPU_FIELDS = (*GPU_COLUMNS.values(), *COMPUTE_COLUMN.values())
_FLOAT_INPUTS = ("weights_gb", "reserve_gb", "budget_gb", "bandwidth_gb_per_s", "tflops",
                 "cache_bytes")

N = TypeVar("N", float, pl.Expr)


def default_weights_gb(params: N, weight_bytes: N) -> N:
    """Weights from the parameter count alone (no quantisation scales, no 16-bit layers)."""
    return params * weight_bytes / GB


def default_reserve_gb(budget_gb: N) -> N:
    """The per-GPU reserve: DEFAULT_RESERVE_SHARE of the per-GPU budget."""
    return budget_gb * DEFAULT_RESERVE_SHARE


# --- reference rows -> inputs ------------------------------------------------------------


def with_reference_inputs(frame: F, precision: str | None = None) -> F:
    """Add the roofline inputs a frame of joined reference rows implies: a model's architecture
    columns (params, ...) and a GPU's hardware columns (memory_gb, memory_bandwidth_gb_per_s,
    bf16_dense_tflops, fp8_dense_tflops), plus the caller's `batch` and `context`.

    Where an input column is already there (an override per candidate), its non-null values
    win and only its nulls take the default. `precision` applies to every row; None reads a
    per-row `precision` column ("bf16" or "fp8")."""
    names = frame.collect_schema().names()
    if precision is None:
        if "precision" not in names:
            raise RooflineInputError("precision", "give a precision or a `precision` column")
        chosen = pl.col("precision")
    elif precision in WEIGHT_BYTES:
        chosen = pl.lit(precision)
    else:
        raise RooflineInputError("precision", f"must be one of {sorted(WEIGHT_BYTES)}, "
                                              f"got {precision!r}")
    weight_bytes = chosen.replace_strict(WEIGHT_BYTES, return_dtype=pl.Float64)
    tflops = pl.when(chosen == "bf16").then(_f(COMPUTE_COLUMN["bf16"])) \
        .when(chosen == "fp8").then(_f(COMPUTE_COLUMN["fp8"]))
    gpu_budget = _f(GPU_COLUMNS["budget_gb"])
    budget = pl.col("budget_gb") if "budget_gb" in names else gpu_budget
    defaults = {
        "weights_gb": default_weights_gb(_f("params"), weight_bytes),
        "budget_gb": gpu_budget,
        "reserve_gb": default_reserve_gb(budget.cast(pl.Float64)),
        "bandwidth_gb_per_s": _f(GPU_COLUMNS["bandwidth_gb_per_s"]),
        "tflops": tflops,
        "cache_bytes": pl.lit(DEFAULT_CACHE_BYTES),
    }
    return frame.with_columns(
        (pl.coalesce(_f(name), default) if name in names else default).alias(name)
        for name, default in defaults.items()
    )


def inputs_from_reference(model_row: Mapping[str, Any], gpu_row: Mapping[str, Any], *,
                          precision: str, batch: int, context: int,
                          **overrides: Any) -> RooflineInputs:
    """RooflineInputs for a model (a core__model_architectures row) on a GPU (a core__hardware
    row); `overrides` (any RooflineInputs field) win over the defaults, as in
    `with_reference_inputs` (a budget override moves the default reserve with it)."""
    names = [f.name for f in dataclasses.fields(RooflineInputs)]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise RooflineInputError(unknown[0], "not a roofline input")
    row = ({k: model_row.get(k) for k in MODEL_FIELDS} | {k: gpu_row.get(k) for k in _GPU_FIELDS}
           | {"batch": batch, "context": context} | overrides)
    floats = {k: pl.Float64 for k in (*_GPU_FIELDS, *_FLOAT_INPUTS) if k in row}
    mapped = with_reference_inputs(pl.DataFrame([row], schema_overrides=floats),
                                   precision).row(0, named=True)
    if mapped["tflops"] is None:
        raise RooflineInputError("tflops", f"GPU {gpu_row.get('gpu')!r} has no "
                                           f"{COMPUTE_COLUMN[precision]} figure; give the "
                                           "compute rate")
    cited = {"rates_source": f"{gpu_row.get('gpu')} datasheet, {gpu_row['source_url']}"} \
        if gpu_row.get("source_url") and not {"bandwidth_gb_per_s", "tflops"} & set(overrides) \
        else {}
    values = {k: mapped[k] for k in names if k in mapped} | cited
    for k in ("experts", "experts_per_token", "microbatches"):
        if values.get(k) is not None:
            values[k] = int(values[k])
    return RooflineInputs(**values)


def with_model(inputs: RooflineInputs, model_row: Mapping[str, Any], *,
               precision: str) -> RooflineInputs:
    """The same GPUs, topology, batch and context with another model (a core__model_architectures
    row, e.g. a speculative draft): its architecture and its weights at the precision's bytes;
    the calibration and rates stay the target's."""
    fields: dict[str, Any] = {k: model_row.get(k) for k in MODEL_FIELDS}
    for k in ("experts", "experts_per_token"):
        if fields.get(k) is not None:
            fields[k] = int(fields[k])
    return dataclasses.replace(
        inputs, **fields, prompt_tokens=None, microbatches=None,
        weights_gb=default_weights_gb(float(model_row["params"]), WEIGHT_BYTES[precision]))
