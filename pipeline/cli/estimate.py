"""`scorecard estimate`: the roofline capacity model (pipeline/roofline.py) from the command line.

Values come from flags, else from a TOML table (`--from-toml`), else from the bundled reference
tables (`--model` in sources/reference/models.csv, `--gpu` in sources/reference/hardware.csv),
else from a stated default; each default used is printed as an assumption. The command is a
plain function: pipeline/cli.py registers it with `app.command("estimate")(estimate)`.
Heavy imports (polars, the model) stay inside functions so `scorecard --help` stays fast.
"""

from __future__ import annotations

import json
import tomllib
from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    import polars as pl

    from pipeline.engine.roofline import RooflineInputs, RooflineResult
    from schemas.table import Table

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "sources" / "reference"
MODELS_CSV = REFERENCE_DIR / "models.csv"
HARDWARE_CSV = REFERENCE_DIR / "hardware.csv"

# roofline input -> the flag that sets it (TOML keys are the flag names with underscores).
FLAGS: dict[str, str] = {
    "params": "--params",
    "active_params": "--active-params",
    "layers": "--layers",
    "q_heads": "--q-heads",
    "kv_heads": "--kv-heads",
    "head_dim": "--head-dim",
    "cache_bytes": "--cache-bytes",
    "batch": "--batch",
    "context": "--context",
    "prompt_tokens": "--prompt-tokens",
    "weights_gb": "--weights-gb",
    "reserve_gb": "--reserve-gb",
    "budget_gb": "--budget-gb",
    "bandwidth_gb_per_s": "--bandwidth-gbs",
    "tflops": "--tflops",
    "tensor_parallel": "--tensor-parallel",
    "vocab_size": "--vocab-size",
    "hidden_size": "--hidden-size",
}
_OTHER_KEYS = {
    "model": "--model", "gpu": "--gpu", "precision": "--precision",
    "calibrate_tpot_ms": "--calibrate-tpot-ms", "calibrate_context": "--calibrate-context",
    "calibrate_ttft_ms": "--calibrate-ttft-ms",
    "calibrate_prompt_tokens": "--calibrate-prompt-tokens",
    "calibration_source": "--calibration-source",
}
_INTEGERS = {"layers", "q_heads", "kv_heads", "head_dim", "batch", "context", "prompt_tokens",
             "tensor_parallel", "vocab_size", "hidden_size", "calibrate_context",
             "calibrate_prompt_tokens"}
_STRINGS = {"model", "gpu", "precision", "calibration_source"}
_MODEL_FIELDS = ("params", "active_params", "layers", "q_heads", "kv_heads", "head_dim",
                 "vocab_size", "hidden_size")


class PrecisionChoice(StrEnum):
    bf16 = "bf16"
    fp8 = "fp8"


class EstimateError(Exception):
    """Bad input, with a message naming the flag, TOML key or file at fault."""


def _toml_key(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


# --- reference tables ----------------------------------------------------------------------


def read_reference_csv(path: Path, table: Table) -> pl.DataFrame:
    """A reference CSV as a frame validated against its table, read by the same typed reader
    as the bundled data (sources/bundled.py)."""
    from schemas.fields import FIELDS
    from sources.bundled import read_typed_csv

    frame = read_typed_csv(path.read_bytes(), str(path),
                           {c: FIELDS[c].dtype for c in table.columns})
    return table.validate(frame, origin=str(path))


def _lookup(flag: str, name: str, path: Path, table: Table, key: str, missing: str
            ) -> dict[str, Any]:
    """One row of a reference table by id (case-insensitive); errors name the flag."""
    import polars as pl

    from schemas.table import ValidationFailed
    from sources.errors import ParseError

    if not path.exists():
        raise EstimateError(f"{flag}: {missing}")
    try:
        rows = read_reference_csv(path, table)
    except ValidationFailed as err:
        raise EstimateError(f"{flag}: {err.report()}") from None
    except ParseError as err:
        raise EstimateError(f"{flag}: {err}") from None
    hit = rows.filter(pl.col(key).str.to_lowercase() == name.lower())
    if hit.height == 0:
        known = ", ".join(sorted(rows[key].to_list()))
        raise EstimateError(f"{flag}: unknown {key} {name!r} in {path} (known: {known})")
    return hit.row(0, named=True)


def lookup_model(name: str, path: Path = MODELS_CSV) -> dict[str, Any]:
    """One core__model_architectures row by model id (case-insensitive)."""
    from schemas.architecture import MODEL_ARCHITECTURES

    return _lookup("--model", name, path, MODEL_ARCHITECTURES, "model",
                   f"model table {path} not found")


def lookup_gpu(name: str, path: Path = HARDWARE_CSV) -> dict[str, Any]:
    """One core__hardware row by GPU id (case-insensitive), with its citation."""
    from schemas.market import HARDWARE

    return _lookup("--gpu", name, path, HARDWARE, "gpu",
                   f"hardware table {path} not found; give --budget-gb, --bandwidth-gbs and "
                   "--tflops instead")


# --- resolving the inputs ------------------------------------------------------------------


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EstimateError(f"--from-toml: {path} not found") from None
    except tomllib.TOMLDecodeError as err:
        raise EstimateError(f"--from-toml: {path}: {err}") from None
    table = data.get("estimate", data)
    if not isinstance(table, dict):
        raise EstimateError(f"{path}: [estimate] must be a table")
    allowed = {_toml_key(f) for f in (*FLAGS.values(), *_OTHER_KEYS.values())}
    for key, value in table.items():
        if key not in allowed:
            raise EstimateError(f"{path}: unknown key {key!r} (expected one of "
                                f"{', '.join(sorted(allowed))})")
        if key in _STRINGS:
            if not isinstance(value, str):
                raise EstimateError(f"{path}: key {key!r} must be a string, got {value!r}")
        elif key in _INTEGERS:
            if isinstance(value, bool) or not isinstance(value, int):
                raise EstimateError(f"{path}: key {key!r} must be an integer, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise EstimateError(f"{path}: key {key!r} must be a number, got {value!r}")
    return table


class _Values:
    """Each value with where it came from, so an error names the flag or the TOML key."""

    def __init__(self, flags: dict[str, Any], toml: dict[str, Any], toml_path: Path | None):
        self.flags = {k: v for k, v in flags.items() if v is not None}
        self.toml = toml
        self.toml_path = toml_path
        self.origin: dict[str, str] = {}

    def get(self, key: str, flag: str) -> Any:
        """`key` is the roofline input name (or TOML key); the TOML key is the flag's name."""
        if key in self.flags:
            self.origin[key] = flag
            return self.flags[key]
        toml_key = _toml_key(flag)
        if toml_key in self.toml:
            self.origin[key] = f"{self.toml_path}: key {toml_key!r}"
            return self.toml[toml_key]
        return None

    def where(self, key: str, flag: str) -> str:
        return self.origin.get(key, flag)


def resolve(flags: dict[str, Any], toml_path: Path | None = None,
            models_csv: Path = MODELS_CSV, hardware_csv: Path = HARDWARE_CSV,
            ) -> tuple[RooflineInputs, dict[str, Any]]:
    """The roofline inputs from flags (keyed by roofline input name or TOML key), a TOML table
    and the reference tables; plus the context for the report (model, GPU, precision, sources,
    defaults taken, calibration)."""
    import dataclasses

    from pipeline.engine import roofline as rf

    toml = _read_toml(toml_path) if toml_path is not None else {}
    values = _Values(flags, toml, toml_path)
    model_name = values.get("model", "--model")
    gpu_name = values.get("gpu", "--gpu")
    precision = values.get("precision", "--precision") or "bf16"
    if isinstance(precision, Enum):
        precision = precision.value
    if precision not in rf.WEIGHT_BYTES:
        raise EstimateError(f"{values.where('precision', '--precision')}: must be one of "
                            f"{sorted(rf.WEIGHT_BYTES)}, got {precision!r}")
    model = lookup_model(model_name, models_csv) if model_name else None
    gpu = lookup_gpu(gpu_name, hardware_csv) if gpu_name else None

    resolved: dict[str, Any] = {}
    defaults: list[str] = []
    for name, flag in FLAGS.items():
        value = values.get(name, flag)
        if value is None and name in _MODEL_FIELDS and model is not None:
            value = model[name]
            values.origin[name] = f"--model {model['model']} ({name})"
        resolved[name] = value
    if model is not None:
        resolved["tied_embeddings"] = model["tied_embeddings"]

    hw = {"budget_gb": "memory_gb", "bandwidth_gb_per_s": "memory_bandwidth_gb_per_s",
          "tflops": rf.COMPUTE_COLUMN[precision]}
    for name, column in hw.items():
        if resolved[name] is None and gpu is not None:
            if gpu.get(column) is None:
                raise EstimateError(f"--gpu: {gpu['gpu']} has no {column} figure; give "
                                    f"{FLAGS[name]}")
            resolved[name] = gpu[column]
            values.origin[name] = f"--gpu {gpu['gpu']} ({column})"

    if resolved["weights_gb"] is None and resolved["params"] is not None:
        per = rf.WEIGHT_BYTES[precision]
        resolved["weights_gb"] = resolved["params"] * per / rf.GB
        defaults.append(f"Weights = {resolved['params']:,.0f} parameters x {per:g} B "
                        f"({precision}) = {resolved['weights_gb']:,.3f} GB: parameters only "
                        "(quantisation scales and layers kept in 16-bit are not counted); "
                        "give --weights-gb for the real checkpoint size.")
        values.origin["weights_gb"] = "--weights-gb (from --params and --precision)"
    if resolved["cache_bytes"] is None:
        resolved["cache_bytes"] = rf.DEFAULT_CACHE_BYTES
        defaults.append(f"KV cache stored in 16-bit ({rf.DEFAULT_CACHE_BYTES:g} B per element), "
                        "the engines' default even for FP8 weights; give --cache-bytes 1 for "
                        "an FP8 cache.")
    if resolved["reserve_gb"] is None and resolved["budget_gb"] is not None:
        resolved["reserve_gb"] = resolved["budget_gb"] * rf.DEFAULT_RESERVE_SHARE
        defaults.append(f"Reserve = {rf.DEFAULT_RESERVE_SHARE:.0%} of the per-GPU budget "
                        f"({resolved['reserve_gb']:,.2f} GB), what vLLM's default "
                        "gpu_memory_utilization=0.9 leaves aside; give --reserve-gb to change.")
        values.origin["reserve_gb"] = "--reserve-gb (10% of the budget)"
    if resolved["tensor_parallel"] is None:
        resolved["tensor_parallel"] = 1

    missing = [n for n in rf.REQUIRED_INPUTS if resolved[n] is None]
    if missing:
        hints = {"params": " or --model", "layers": " or --model", "q_heads": " or --model",
                 "kv_heads": " or --model", "head_dim": " or --model",
                 "budget_gb": " or --gpu", "bandwidth_gb_per_s": " or --gpu",
                 "tflops": " or --gpu"}
        wanted = ", ".join(FLAGS[n] + hints.get(n, "") for n in missing)
        raise EstimateError(f"missing {wanted}")
    for name in _INTEGERS & set(resolved):
        value = resolved[name]
        if isinstance(value, float) and not value.is_integer():
            raise EstimateError(f"{values.where(name, FLAGS[name])}: must be a whole number, "
                                f"got {value!r}")
        if isinstance(value, float):
            resolved[name] = int(value)

    try:
        inputs = rf.RooflineInputs(**resolved)
    except rf.RooflineInputError as err:
        where = values.where(err.field, FLAGS.get(err.field, err.field))
        raise EstimateError(f"{where}: {str(err).split(': ', 1)[1]}") from None

    calibration = _calibrate(inputs, values)
    if calibration is not None:
        inputs = rf.apply_calibration(inputs, calibration)

    sources = []
    if model is not None:
        sources.append({"table": "core__model_architectures", "key": model["model"],
                        **{k: _jsonable(model[k]) for k in ("source_url", "source_date",
                                                           "licence")}})
    if gpu is not None:
        sources.append({"table": "core__hardware", "key": gpu["gpu"],
                        **{k: _jsonable(gpu.get(k)) for k in ("source_url", "source_date",
                                                             "licence")}})
    context = {
        "model": model["model"] if model else None,
        "gpu": gpu["gpu"] if gpu else None,
        "precision": precision,
        "defaults": defaults,
        "sources": sources,
        "calibration": dataclasses.asdict(calibration) if calibration else None,
    }
    return inputs, context


def _calibrate(inputs: RooflineInputs, values: _Values) -> Any:
    from pipeline.engine import roofline as rf

    get = {k: values.get(k, flag) for k, flag in _OTHER_KEYS.items() if k.startswith("calib")}
    if get["calibrate_tpot_ms"] is None and get["calibrate_ttft_ms"] is None:
        return None
    pairs = (("calibrate_tpot_ms", "calibrate_context"),
             ("calibrate_ttft_ms", "calibrate_prompt_tokens"))
    for measured, needed in pairs:
        if get[measured] is not None and get[needed] is None:
            raise EstimateError(f"{_OTHER_KEYS[measured]} needs {_OTHER_KEYS[needed]}")
    if not get["calibration_source"]:
        raise EstimateError("--calibration-source: name the measured run (file, date) the "
                            "calibration comes from")
    try:
        return rf.calibrate(inputs, source=get["calibration_source"],
                            tpot_ms=get["calibrate_tpot_ms"],
                            context=get["calibrate_context"],
                            ttft_ms=get["calibrate_ttft_ms"],
                            prompt_tokens=get["calibrate_prompt_tokens"])
    except rf.RooflineInputError as err:
        key = {"tpot_ms": "calibrate_tpot_ms", "ttft_ms": "calibrate_ttft_ms"}.get(err.field)
        where = values.where(key, _OTHER_KEYS[key]) if key else err.field
        raise EstimateError(f"{where}: {str(err).split(': ', 1)[1]}") from None


def _jsonable(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


# --- output --------------------------------------------------------------------------------


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
        lines.append(f"Calibrated from: {data['calibration']['source']}")
    lines.append("Assumptions")
    lines.extend(f"  - {a}" for a in data["assumptions"])
    for s in data["sources"]:
        lines.append(f"Source: {s['table']} {s['key']}: {s['source_url']} "
                     f"({s['source_date']}, {s['licence']})")
    return "\n".join(lines)


# --- the command ---------------------------------------------------------------------------

def estimate(
    model: Annotated[str | None, typer.Option("--model", help="Model id from "
                     "sources/reference/models.csv (fills the architecture flags).")] = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help="GPU id from "
                   "sources/reference/hardware.csv (fills budget, bandwidth, compute).")] = None,
    precision: Annotated[PrecisionChoice | None, typer.Option(
        "--precision", help="bf16 or fp8: weight bytes and the GPU compute column "
        "(default: bf16).")] = None,
    params: Annotated[float | None, typer.Option("--params", help="Total parameters.")] = None,
    active_params: Annotated[float | None, typer.Option(
        "--active-params", help="Parameters used per token (MoE) (default: --params).")] = None,
    layers: Annotated[int | None, typer.Option("--layers")] = None,
    q_heads: Annotated[int | None, typer.Option("--q-heads", help="Query heads.")] = None,
    kv_heads: Annotated[int | None, typer.Option("--kv-heads", help="KV heads.")] = None,
    head_dim: Annotated[int | None, typer.Option("--head-dim")] = None,
    cache_bytes: Annotated[float | None, typer.Option(
        "--cache-bytes", help="Bytes per cached K/V element (default: 2).")] = None,
    batch: Annotated[int | None, typer.Option("--batch", help="Concurrent sequences.")] = None,
    context: Annotated[int | None, typer.Option(
        "--context", help="Tokens of context each sequence holds.")] = None,
    prompt_tokens: Annotated[int | None, typer.Option(
        "--prompt-tokens", help="Prompt length for the TTFT bound (default: --context).")] = None,
    weights_gb: Annotated[float | None, typer.Option(
        "--weights-gb", help="Weights in GB (1e9 B) (default: params x precision bytes).")
    ] = None,
    reserve_gb: Annotated[float | None, typer.Option(
        "--reserve-gb", help="Per-GPU reserve for activations and runtime (default: 10% of "
        "the budget).")] = None,
    budget_gb: Annotated[float | None, typer.Option(
        "--budget-gb", help="Per-GPU memory budget in GB.")] = None,
    bandwidth_gbs: Annotated[float | None, typer.Option(
        "--bandwidth-gbs", help="Per-GPU memory bandwidth in GB/s.")] = None,
    tflops: Annotated[float | None, typer.Option(
        "--tflops", help="Per-GPU dense compute in TFLOP/s.")] = None,
    tensor_parallel: Annotated[int | None, typer.Option(
        "--tensor-parallel", help="GPUs the model is split over (default: 1).")] = None,
    vocab_size: Annotated[int | None, typer.Option("--vocab-size")] = None,
    hidden_size: Annotated[int | None, typer.Option("--hidden-size")] = None,
    calibrate_tpot_ms: Annotated[float | None, typer.Option(
        "--calibrate-tpot-ms", help="Measured TPOT at concurrency 1 (ms): calibrates "
        "bandwidth.")] = None,
    calibrate_context: Annotated[int | None, typer.Option(
        "--calibrate-context", help="Cached tokens during that measurement.")] = None,
    calibrate_ttft_ms: Annotated[float | None, typer.Option(
        "--calibrate-ttft-ms", help="Measured TTFT at concurrency 1 (ms): calibrates "
        "compute.")] = None,
    calibrate_prompt_tokens: Annotated[int | None, typer.Option(
        "--calibrate-prompt-tokens", help="Prompt tokens of that measurement.")] = None,
    calibration_source: Annotated[str | None, typer.Option(
        "--calibration-source", help="The measured run (file, date) calibrated from.")] = None,
    from_toml: Annotated[Path | None, typer.Option(
        "--from-toml", help="TOML file whose `estimate` table (or top level) holds the "
        "options, keys named like the flags (q_heads, bandwidth_gbs, ...).")] = None,
    models_csv: Annotated[Path, typer.Option(hidden=True)] = MODELS_CSV,
    hardware_csv: Annotated[Path, typer.Option(hidden=True)] = HARDWARE_CSV,
    json_output: Annotated[bool, typer.Option("--json", help="Print only JSON.")] = False,
) -> None:
    """Design-stage capacity estimate: KV-cache fit, memory budget, the warm-decode roofline
    ceiling and the TTFT bound, with every assumption (GB = 1e9 bytes)."""
    from pipeline.engine import roofline as rf

    flags = {
        "model": model, "gpu": gpu, "precision": precision, "params": params,
        "active_params": active_params, "layers": layers, "q_heads": q_heads,
        "kv_heads": kv_heads, "head_dim": head_dim, "cache_bytes": cache_bytes,
        "batch": batch, "context": context, "prompt_tokens": prompt_tokens,
        "weights_gb": weights_gb, "reserve_gb": reserve_gb, "budget_gb": budget_gb,
        "bandwidth_gb_per_s": bandwidth_gbs, "tflops": tflops,
        "tensor_parallel": tensor_parallel, "vocab_size": vocab_size,
        "hidden_size": hidden_size, "calibrate_tpot_ms": calibrate_tpot_ms,
        "calibrate_context": calibrate_context, "calibrate_ttft_ms": calibrate_ttft_ms,
        "calibrate_prompt_tokens": calibrate_prompt_tokens,
        "calibration_source": calibration_source,
    }
    try:
        inputs, ctx = resolve(flags, from_toml, models_csv, hardware_csv)
        data = report(inputs, rf.estimate(inputs), ctx)
    except EstimateError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    if json_output:
        typer.echo(json.dumps(data, sort_keys=True, indent=2, allow_nan=False))
    else:
        typer.echo(render_text(data))
