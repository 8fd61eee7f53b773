"""`scorecard estimate`: the roofline capacity model (pipeline/engine/roofline/) from the command
line. The options are declared here; resolving them into inputs (flags, `--from-toml`, the
bundled reference tables, stated defaults), calibration and the report are
pipeline/engine/roofline/options.py and report.py. pipeline/cli/__init__.py registers the
command with `app.command("estimate")(estimate)`. The engine is imported inside the command so
`scorecard --help` stays fast.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class PrecisionChoice(StrEnum):
    bf16 = "bf16"
    fp8 = "fp8"


def estimate(
    model: Annotated[str | None, typer.Option(help="Model id from sources/reference/models.csv "
                     "(fills the architecture flags).")] = None,
    gpu: Annotated[str | None, typer.Option(help="GPU id from sources/reference/hardware.csv "
                   "(fills budget, bandwidth, compute).")] = None,
    precision: Annotated[PrecisionChoice | None, typer.Option(
        help="bf16 or fp8: weight bytes and the GPU compute column (default: bf16).")] = None,
    params: Annotated[float | None, typer.Option(help="Total parameters.")] = None,
    active_params: Annotated[float | None, typer.Option(
        help="Parameters used per token (MoE) (default: --params).")] = None,
    layers: Annotated[int | None, typer.Option()] = None,
    q_heads: Annotated[int | None, typer.Option(help="Query heads.")] = None,
    kv_heads: Annotated[int | None, typer.Option(help="KV heads.")] = None,
    head_dim: Annotated[int | None, typer.Option()] = None,
    cache_bytes: Annotated[float | None, typer.Option(
        help="Bytes per cached K/V element (default: 2).")] = None,
    batch: Annotated[int | None, typer.Option(help="Concurrent sequences.")] = None,
    context: Annotated[int | None, typer.Option(
        help="Tokens of context each sequence holds.")] = None,
    prompt_tokens: Annotated[int | None, typer.Option(
        help="Prompt length for the TTFT bound (default: --context).")] = None,
    weights_gb: Annotated[float | None, typer.Option(
        help="Weights in GB (1e9 B) (default: params x precision bytes).")] = None,
    reserve_gb: Annotated[float | None, typer.Option(
        help="Per-GPU reserve for activations and runtime (default: 10% of the budget).")
    ] = None,
    budget_gb: Annotated[float | None, typer.Option(help="Per-GPU memory budget in GB.")] = None,
    bandwidth_gbs: Annotated[float | None, typer.Option(
        help="Per-GPU memory bandwidth in GB/s.")] = None,
    tflops: Annotated[float | None, typer.Option(help="Per-GPU dense compute in TFLOP/s.")
                      ] = None,
    tensor_parallel: Annotated[int | None, typer.Option(
        help="GPUs the model is split over (default: 1).")] = None,
    vocab_size: Annotated[int | None, typer.Option()] = None,
    hidden_size: Annotated[int | None, typer.Option()] = None,
    calibrate_tpot_ms: Annotated[float | None, typer.Option(
        help="Measured TPOT at concurrency 1 (ms): calibrates bandwidth.")] = None,
    calibrate_context: Annotated[int | None, typer.Option(
        help="Cached tokens during that measurement.")] = None,
    calibrate_ttft_ms: Annotated[float | None, typer.Option(
        help="Measured TTFT at concurrency 1 (ms): calibrates compute.")] = None,
    calibrate_prompt_tokens: Annotated[int | None, typer.Option(
        help="Prompt tokens of that measurement.")] = None,
    calibration_source: Annotated[str | None, typer.Option(
        help="The measured run (file, date) calibrated from.")] = None,
    from_toml: Annotated[Path | None, typer.Option(
        help="TOML file whose `estimate` table (or top level) holds the options, keys named "
        "like the flags (q_heads, bandwidth_gbs, ...).")] = None,
    models_csv: Annotated[Path | None, typer.Option(hidden=True)] = None,
    hardware_csv: Annotated[Path | None, typer.Option(hidden=True)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print only JSON.")] = False,
) -> None:
    """Design-stage capacity estimate: KV-cache fit, memory budget, the warm-decode roofline
    ceiling and the TTFT bound, with every assumption (GB = 1e9 bytes)."""
    options = dict(locals())  # each option by its name, which is its TOML key
    for name in ("from_toml", "models_csv", "hardware_csv", "json_output"):
        del options[name]
    options["precision"] = precision.value if precision else None

    from pipeline.engine.roofline.options import EstimateError
    from pipeline.engine.roofline.report import estimate_report, render_json, render_text

    try:
        data = estimate_report(options, from_toml, models_csv, hardware_csv)
    except EstimateError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    typer.echo(render_json(data) if json_output else render_text(data))
