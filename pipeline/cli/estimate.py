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


# The --help text of each option ("": none). An option's name is its TOML key and its flag is
# the name with dashes (`bandwidth_gbs`, `--bandwidth-gbs`), as the engine's options.py reads them.
HELP: dict[str, str] = {
    "model": "Model id from sources/reference/models.csv (fills the architecture flags).",
    "gpu": "GPU id from sources/reference/hardware.csv (fills budget, bandwidth, compute).",
    "precision": "bf16 or fp8: weight bytes and the GPU compute column (default: bf16).",
    "params": "Total parameters.",
    "active_params": "Parameters used per token (MoE) (default: --params).",
    "layers": "",
    "q_heads": "Query heads.",
    "kv_heads": "KV heads.",
    "head_dim": "",
    "cache_bytes": "Bytes per cached K/V element (default: 2).",
    "batch": "Concurrent sequences.",
    "context": "Tokens of context each sequence holds.",
    "prompt_tokens": "Prompt length for the TTFT bound (default: --context).",
    "weights_gb": "Weights in GB (1e9 B) (default: params x precision bytes).",
    "reserve_gb": "Per-GPU reserve for activations and runtime (default: 10% of the budget).",
    "budget_gb": "Per-GPU memory budget in GB.",
    "bandwidth_gbs": "Per-GPU memory bandwidth in GB/s.",
    "tflops": "Per-GPU dense compute in TFLOP/s.",
    "tensor_parallel": "GPUs the model is split over (default: 1).",
    "vocab_size": "",
    "hidden_size": "",
    "calibrate_tpot_ms": "Measured TPOT at concurrency 1 (ms): calibrates bandwidth.",
    "calibrate_context": "Cached tokens during that measurement.",
    "calibrate_ttft_ms": "Measured TTFT at concurrency 1 (ms): calibrates compute.",
    "calibrate_prompt_tokens": "Prompt tokens of that measurement.",
    "calibration_source": "The measured run (file, date) calibrated from.",
    "from_toml": "TOML file whose `estimate` table (or top level) holds the options, keys named "
                 "like the flags (q_heads, bandwidth_gbs, ...).",
    "json_output": "Print only JSON.",
}


def estimate(
    model: Annotated[str | None, typer.Option(help=HELP["model"])] = None,
    gpu: Annotated[str | None, typer.Option(help=HELP["gpu"])] = None,
    precision: Annotated[PrecisionChoice | None, typer.Option(help=HELP["precision"])] = None,
    params: Annotated[float | None, typer.Option(help=HELP["params"])] = None,
    active_params: Annotated[float | None, typer.Option(help=HELP["active_params"])] = None,
    layers: Annotated[int | None, typer.Option(help=HELP["layers"])] = None,
    q_heads: Annotated[int | None, typer.Option(help=HELP["q_heads"])] = None,
    kv_heads: Annotated[int | None, typer.Option(help=HELP["kv_heads"])] = None,
    head_dim: Annotated[int | None, typer.Option(help=HELP["head_dim"])] = None,
    cache_bytes: Annotated[float | None, typer.Option(help=HELP["cache_bytes"])] = None,
    batch: Annotated[int | None, typer.Option(help=HELP["batch"])] = None,
    context: Annotated[int | None, typer.Option(help=HELP["context"])] = None,
    prompt_tokens: Annotated[int | None, typer.Option(help=HELP["prompt_tokens"])] = None,
    weights_gb: Annotated[float | None, typer.Option(help=HELP["weights_gb"])] = None,
    reserve_gb: Annotated[float | None, typer.Option(help=HELP["reserve_gb"])] = None,
    budget_gb: Annotated[float | None, typer.Option(help=HELP["budget_gb"])] = None,
    bandwidth_gbs: Annotated[float | None, typer.Option(help=HELP["bandwidth_gbs"])] = None,
    tflops: Annotated[float | None, typer.Option(help=HELP["tflops"])] = None,
    tensor_parallel: Annotated[int | None, typer.Option(help=HELP["tensor_parallel"])] = None,
    vocab_size: Annotated[int | None, typer.Option(help=HELP["vocab_size"])] = None,
    hidden_size: Annotated[int | None, typer.Option(help=HELP["hidden_size"])] = None,
    calibrate_tpot_ms: Annotated[float | None, typer.Option(help=HELP["calibrate_tpot_ms"])] = None,
    calibrate_context: Annotated[int | None, typer.Option(help=HELP["calibrate_context"])] = None,
    calibrate_ttft_ms: Annotated[float | None, typer.Option(help=HELP["calibrate_ttft_ms"])] = None,
    calibrate_prompt_tokens: Annotated[int | None, typer.Option(
        help=HELP["calibrate_prompt_tokens"])] = None,
    calibration_source: Annotated[str | None, typer.Option(help=HELP["calibration_source"])] = None,
    from_toml: Annotated[Path | None, typer.Option(help=HELP["from_toml"])] = None,
    models_csv: Annotated[Path | None, typer.Option(hidden=True)] = None,
    hardware_csv: Annotated[Path | None, typer.Option(hidden=True)] = None,
    json_output: Annotated[bool, typer.Option("--json", help=HELP["json_output"])] = False,
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
