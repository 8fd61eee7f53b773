"""`scorecard estimate`: the roofline capacity model (pipeline/engine/roofline/) from the command
line. The options are declared here; resolving them into inputs (flags, `--from-toml`, the
bundled reference tables, stated defaults, a measured sweep) and the calibration are
pipeline/inputs/evidence/estimate.py, the report pipeline/engine/roofline/report.py.
pipeline/cli/__init__.py registers the command with `app.command("estimate")(estimate)`. The
engine is imported inside the command so `scorecard --help` stays fast.
"""

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class PrecisionChoice(StrEnum):
    bf16 = "bf16"
    fp8 = "fp8"


# The --help text of each option ("": none). An option's name is its TOML key and its flag is
# the name with dashes (`bandwidth_gbs`, `--bandwidth-gbs`), as pipeline/inputs/evidence/estimate.py
# reads them.
HELP: dict[str, str] = {
    "model": "Model id from sources/reference/models.csv (fills the architecture flags).",
    "gpu": "GPU id from sources/reference/hardware.csv (fills budget, bandwidth, compute).",
    "precision": "bf16 or fp8: weight bytes and the GPU compute column (default: bf16).",
    "params": "Total parameters.",
    "active_params": "Parameters used per token (MoE) (default: --params).",
    "layers": "Transformer layers.",
    "q_heads": "Query heads.",
    "kv_heads": "KV heads.",
    "head_dim": "Dimension of one attention head.",
    "cache_bytes": "Bytes per cached K/V element (default: 2).",
    "batch": "Concurrent sequences.",
    "context": "Tokens of context each sequence holds.",
    "prompt_tokens": "Prompt length for the TTFT bound and the sizing (default: --context).",
    "weights_gb": "Weights in GB (1e9 B) (default: params x precision bytes).",
    "reserve_gb": "Per-GPU reserve for activations and runtime (default: 10% of the budget).",
    "budget_gb": "Per-GPU memory budget in GB.",
    "bandwidth_gbs": "Per-GPU memory bandwidth in GB/s.",
    "tflops": "Per-GPU dense compute in TFLOP/s.",
    "tensor_parallel": "GPUs each layer is split over (default: 1).",
    "vocab_size": "Vocabulary (rows of the embedding and LM head).",
    "hidden_size": "Model width (columns of the embedding and LM head).",
    "experts": "MoE experts per layer (with --experts-per-token).",
    "experts_per_token": "MoE experts each token is routed to (top-k).",
    "lookup_embeddings": "Leave the looked-up input embedding out of the per-token traffic "
                         "(default: the model table's field, else no).",
    "allreduce_us": "Latency of one all-reduce in us (NVLink about 5-100, PCIe 2,000-8,000); "
                    "adds layers x 2 x it per decode step under TP (default: not counted).",
    "pipeline_parallel": "Pipeline stages (default: 1).",
    "microbatches": "Microbatches in flight through the stages (default: --batch).",
    "replicas": "Independent replicas of the TP x PP group (default: 1).",
    "kv_read_factor": "Reads of the KV cache per decode step: about 3 for Hugging Face "
                      "transformers' naive cache, 1 for paged engines (default: 1).",
    "block_size": "Paged KV cache block in tokens (vLLM: 16): capacity in whole blocks, the "
                  "naive vs paged sequences and the preemption onset (default: "
                  "token-granular).",
    "requests_per_s": "Sizing: sustained requests/s to serve.",
    "output_tokens": "Sizing and sweep: mean output tokens per request.",
    "peak_factor": "Sizing: peak over mean request rate (default: 1).",
    "headroom": "Sizing: share of capacity kept free at the peak (default: 0).",
    "efficiency": "Sizing: share of the roofline reached (default: 1).",
    "tpot_ms": "Sizing: TPOT in ms as a planning input (default: the step / efficiency).",
    "compare_gpus": "Compare TP x replicas topologies on this many GPUs.",
    "compare_concurrency": "With --compare-gpus: total concurrency levels (e.g. 2,64,1024) "
                           "at which every TP x replicas topology is compared and the winner "
                           "named (the crossover).",
    "allreduce_us_by_tp": "One all-reduce's latency per TP degree in us, e.g. 2:6,4:10 "
                          "(default: --allreduce-us for every degree).",
    "kv_link_gbs": "Disaggregated prefill: GB/s of the link the prompt's KV crosses from the "
                   "prefill pool to the decode replica (NVLink ~900, 400 Gb/s RDMA 50): the "
                   "transfer is added to TTFT, the decode steps carry no prefill.",
    "sweep": "Closed-loop concurrency levels to predict, e.g. 1,2,4,8.",
    "chunk_budget": "Chunked-prefill token budget per step: for the sweep (default: no "
                    "chunking) and the serving estimate that --output-tokens gives at --batch "
                    "clients per replica when --context is the prompt, as a proposal's "
                    "(default: vLLM's on the GPU, 8,192 from 70 GiB except an A100, else "
                    "2,048).",
    "measured_tokens_per_s": "Sweep: measured decode tokens/s per level, to compare.",
    "sweep_evidence": "Sweep: benchmark files (a file or folder) of a measured closed-loop "
                      "sweep to compare per level (C / TPOT p50, TTFT p50); its levels by "
                      "default.",
    "serialised": "Sweep: a server running one request at a time (FIFO), as a naive HF loop.",
    "prefix_hit_rate": "Share of the prompt's prefill served from the prefix cache: the serving "
                       "estimate computes the rest only (fewer mixed steps, shorter TTFT, more "
                       "goodput); the warm-decode sizing's TTFT is that shorter prefill.",
    "prefix_hit_range": "The hit rate's range as low,high around --prefix-hit-rate: the "
                        "serving estimate's goodput range.",
    "spec_acceptance": "Sizing: speculative decoding acceptance rate (0 to below 1).",
    "spec_draft_tokens": "Sizing: tokens drafted per verification (default: 4).",
    "spec_draft_ms": "Sizing: time of one draft step in ms (default: 0).",
    "spec_draft_model": "Sizing: draft model id from models.csv: its roofline step on the same "
                        "GPUs is the draft step (instead of --spec-draft-ms).",
    "calibrate_tpot_ms": "Measured TPOT at concurrency 1 (ms): calibrates bandwidth.",
    "calibrate_context": "Cached tokens during that measurement.",
    "calibrate_ttft_ms": "Measured TTFT at concurrency 1 (ms): calibrates compute.",
    "calibrate_prompt_tokens": "Prompt tokens of that measurement.",
    "calibration_source": "The measured run (file, date) calibrated from.",
    "calibration_gpu": "GPU id the measured run was on, if not this one: its MBU and MFU "
                       "(over that GPU's datasheet peaks) are applied to this GPU's peaks.",
    "from_toml": "TOML file whose `estimate` table (or top level) holds the options, keys named "
                 "like the flags (q_heads, bandwidth_gbs, ...).",
    "json_output": "Print only JSON.",
    "models_csv": "(Hidden, for tests) a models table read instead of the bundled one.",
    "hardware_csv": "(Hidden, for tests) a hardware table read instead of the bundled one.",
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
    experts: Annotated[int | None, typer.Option(help=HELP["experts"])] = None,
    experts_per_token: Annotated[int | None, typer.Option(help=HELP["experts_per_token"])] = None,
    lookup_embeddings: Annotated[bool | None, typer.Option(
        "--lookup-embeddings/--no-lookup-embeddings", help=HELP["lookup_embeddings"])] = None,
    allreduce_us: Annotated[float | None, typer.Option(help=HELP["allreduce_us"])] = None,
    pipeline_parallel: Annotated[int | None, typer.Option(help=HELP["pipeline_parallel"])] = None,
    microbatches: Annotated[int | None, typer.Option(help=HELP["microbatches"])] = None,
    replicas: Annotated[int | None, typer.Option(help=HELP["replicas"])] = None,
    kv_read_factor: Annotated[float | None, typer.Option(help=HELP["kv_read_factor"])] = None,
    block_size: Annotated[int | None, typer.Option(help=HELP["block_size"])] = None,
    requests_per_s: Annotated[float | None, typer.Option(help=HELP["requests_per_s"])] = None,
    output_tokens: Annotated[int | None, typer.Option(help=HELP["output_tokens"])] = None,
    peak_factor: Annotated[float | None, typer.Option(help=HELP["peak_factor"])] = None,
    headroom: Annotated[float | None, typer.Option(help=HELP["headroom"])] = None,
    efficiency: Annotated[float | None, typer.Option(help=HELP["efficiency"])] = None,
    tpot_ms: Annotated[float | None, typer.Option(help=HELP["tpot_ms"])] = None,
    compare_gpus: Annotated[int | None, typer.Option(help=HELP["compare_gpus"])] = None,
    compare_concurrency: Annotated[str | None, typer.Option(
        help=HELP["compare_concurrency"])] = None,
    allreduce_us_by_tp: Annotated[str | None, typer.Option(
        help=HELP["allreduce_us_by_tp"])] = None,
    kv_link_gbs: Annotated[float | None, typer.Option(help=HELP["kv_link_gbs"])] = None,
    sweep: Annotated[str | None, typer.Option(help=HELP["sweep"])] = None,
    chunk_budget: Annotated[int | None, typer.Option(help=HELP["chunk_budget"])] = None,
    measured_tokens_per_s: Annotated[str | None, typer.Option(
        help=HELP["measured_tokens_per_s"])] = None,
    sweep_evidence: Annotated[Path | None, typer.Option(help=HELP["sweep_evidence"])] = None,
    serialised: Annotated[bool | None, typer.Option(
        "--serialised/--batched", help=HELP["serialised"])] = None,
    prefix_hit_rate: Annotated[float | None, typer.Option(help=HELP["prefix_hit_rate"])] = None,
    prefix_hit_range: Annotated[str | None, typer.Option(help=HELP["prefix_hit_range"])] = None,
    spec_acceptance: Annotated[float | None, typer.Option(help=HELP["spec_acceptance"])] = None,
    spec_draft_tokens: Annotated[int | None, typer.Option(help=HELP["spec_draft_tokens"])] = None,
    spec_draft_ms: Annotated[float | None, typer.Option(help=HELP["spec_draft_ms"])] = None,
    spec_draft_model: Annotated[str | None, typer.Option(help=HELP["spec_draft_model"])] = None,
    calibrate_tpot_ms: Annotated[float | None, typer.Option(help=HELP["calibrate_tpot_ms"])] = None,
    calibrate_context: Annotated[int | None, typer.Option(help=HELP["calibrate_context"])] = None,
    calibrate_ttft_ms: Annotated[float | None, typer.Option(help=HELP["calibrate_ttft_ms"])] = None,
    calibrate_prompt_tokens: Annotated[int | None, typer.Option(
        help=HELP["calibrate_prompt_tokens"])] = None,
    calibration_source: Annotated[str | None, typer.Option(help=HELP["calibration_source"])] = None,
    calibration_gpu: Annotated[str | None, typer.Option(help=HELP["calibration_gpu"])] = None,
    from_toml: Annotated[Path | None, typer.Option(help=HELP["from_toml"])] = None,
    models_csv: Annotated[Path | None, typer.Option(hidden=True, help=HELP["models_csv"])] = None,
    hardware_csv: Annotated[Path | None, typer.Option(
        hidden=True, help=HELP["hardware_csv"])] = None,
    json_output: Annotated[bool, typer.Option("--json", help=HELP["json_output"])] = False,
) -> None:
    """Design-stage capacity estimate: KV-cache fit, memory budget, the warm-decode roofline
    ceiling and the TTFT bound, with every assumption (GB = 1e9 bytes); with --requests-per-s
    the replicas a request rate needs, with --compare-gpus the TP x replicas topologies, with
    --sweep a closed-loop serving sweep (chunked prefill) against measured levels."""
    options = dict(locals())  # each option by its name, which is its TOML key
    for name in ("from_toml", "models_csv", "hardware_csv", "json_output"):
        del options[name]
    options["precision"] = precision.value if precision else None
    options["sweep_evidence"] = str(sweep_evidence) if sweep_evidence else None

    from pipeline.engine.roofline.report import (
        EstimateError,
        estimate_report,
        render_json,
        render_text,
    )
    from pipeline.inputs.evidence.estimate import resolve

    try:
        data = estimate_report(*resolve(options, from_toml, models_csv, hardware_csv))
    except EstimateError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    typer.echo(render_json(data) if json_output else render_text(data))
