"""The options of `scorecard estimate` resolved into roofline inputs: each value comes from its
flag, else from a TOML table (`--from-toml`), else from the reference rows (`--model` in
core__model_architectures, `--gpu` in core__hardware, read from the bundled tables or the
files given), else from a stated default; each default taken is kept as an assumption, and
every error names the flag, TOML key or file at fault. A measured sweep (`--sweep-evidence`)
is read from its benchmark files here too; the engine's roofline/report.py builds the report
from what `resolve` returns.

Options are keyed by their TOML key, the flag's name with underscores (`bandwidth_gbs` for
`--bandwidth-gbs`), as the command's parameters are.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.engine.roofline import validation
from pipeline.engine.roofline.calibration import (
    Calibration,
    apply_calibration,
    calibrate,
    transfer,
)
from pipeline.engine.roofline.model import REQUIRED_INPUTS, RooflineInputError, RooflineInputs
from pipeline.engine.roofline.reference import (
    COMPUTE_COLUMN,
    DEFAULT_CACHE_BYTES,
    DEFAULT_RESERVE_SHARE,
    GPU_COLUMNS,
    MODEL_FIELDS,
    WEIGHT_BYTES,
    default_reserve_gb,
    default_weights_gb,
    with_model,
)
from pipeline.engine.roofline.report import EstimateError
from pipeline.evidence.bench import inspect
from pipeline.evidence.goodput import Slo
from schemas.architecture import MODEL_ARCHITECTURES
from schemas.market import HARDWARE
from schemas.table import Table, ValidationFailed
from sources import bundled
from sources.errors import ParseError

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
    "experts": "--experts",
    "experts_per_token": "--experts-per-token",
    "lookup_embeddings": "--lookup-embeddings",
    "allreduce_us": "--allreduce-us",
    "pipeline_parallel": "--pipeline-parallel",
    "microbatches": "--microbatches",
    "replicas": "--replicas",
    "kv_read_factor": "--kv-read-factor",
    "block_size": "--block-size",
}
_OTHER_KEYS = {
    "model": "--model", "gpu": "--gpu", "precision": "--precision",
    "calibrate_tpot_ms": "--calibrate-tpot-ms", "calibrate_context": "--calibrate-context",
    "calibrate_ttft_ms": "--calibrate-ttft-ms",
    "calibrate_prompt_tokens": "--calibrate-prompt-tokens",
    "calibration_source": "--calibration-source",
    "calibration_gpu": "--calibration-gpu",
    # request-level sizing, topologies and the serving sweep (planning.py)
    "requests_per_s": "--requests-per-s", "output_tokens": "--output-tokens",
    "peak_factor": "--peak-factor", "headroom": "--headroom", "efficiency": "--efficiency",
    "tpot_ms": "--tpot-ms", "compare_gpus": "--compare-gpus", "sweep": "--sweep",
    "chunk_budget": "--chunk-budget", "measured_tokens_per_s": "--measured-tokens-per-s",
    "prefix_hit_rate": "--prefix-hit-rate", "spec_acceptance": "--spec-acceptance",
    "spec_draft_tokens": "--spec-draft-tokens", "spec_draft_ms": "--spec-draft-ms",
    "sweep_evidence": "--sweep-evidence", "serialised": "--serialised",
    "spec_draft_model": "--spec-draft-model", "prefix_hit_range": "--prefix-hit-range",
    "compare_concurrency": "--compare-concurrency", "allreduce_us_by_tp": "--allreduce-us-by-tp",
    "kv_link_gbs": "--kv-link-gbs",
}
_INTEGERS = {"layers", "q_heads", "kv_heads", "head_dim", "batch", "context", "prompt_tokens",
             "tensor_parallel", "vocab_size", "hidden_size", "calibrate_context",
             "calibrate_prompt_tokens", "experts", "experts_per_token", "pipeline_parallel",
             "microbatches", "replicas", "output_tokens", "compare_gpus", "chunk_budget",
             "spec_draft_tokens", "block_size"}
_STRINGS = {"model", "gpu", "precision", "calibration_source", "calibration_gpu", "sweep",
            "measured_tokens_per_s", "sweep_evidence", "spec_draft_model", "prefix_hit_range",
            "compare_concurrency", "allreduce_us_by_tp"}
_BOOLEANS = {"lookup_embeddings", "serialised"}


def toml_key(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


# --- reference tables --------------------------------------------------------------------


def reference_file(table: Table, path: Path | None = None) -> bundled.RawFile:
    """The bundled file that feeds `table` (sources/reference/models.csv for
    core__model_architectures, hardware.csv for core__hardware), or the file at `path` in its
    place, named by its path. FileNotFoundError when `path` does not exist."""
    if path is None:
        return bundled.read(next(name for name, t in bundled.TABLE_FILES.items()
                                 if t is table))
    return bundled.RawFile(str(path), path.read_bytes())


def read_reference(raw: bundled.RawFile, table: Table) -> pl.DataFrame:
    """A reference file's rows, parsed by the bundled reader (sources.bundled.parse_table) and
    validated against `table`; a ParseError or ValidationFailed names the file."""
    return table.validate(bundled.parse_table(raw, table), origin=raw.name)


def _lookup(flag: str, name: str, path: Path | None, table: Table, key: str, missing: str
            ) -> dict[str, Any]:
    """One row of a reference table by id (case-insensitive); errors name the flag."""
    try:
        raw = reference_file(table, path)
    except FileNotFoundError:
        if path is None:
            raise
        raise EstimateError(f"{flag}: {missing}") from None
    try:
        rows = read_reference(raw, table)
    except ValidationFailed as err:
        raise EstimateError(f"{flag}: {err.report()}") from None
    except ParseError as err:
        raise EstimateError(f"{flag}: {err}") from None
    hit = rows.filter(pl.col(key).str.to_lowercase() == name.lower())
    if hit.height == 0:
        known = ", ".join(sorted(rows[key].to_list()))
        where = raw.url if path is None else raw.name
        raise EstimateError(f"{flag}: unknown {key} {name!r} in {where} (known: {known})")
    return hit.row(0, named=True)


def lookup_model(name: str, path: Path | None = None) -> dict[str, Any]:
    """One core__model_architectures row by model id (case-insensitive), from the bundled
    table or the file at `path`."""
    return _lookup("--model", name, path, MODEL_ARCHITECTURES, "model",
                   f"model table {path} not found")


def lookup_gpu(name: str, path: Path | None = None) -> dict[str, Any]:
    """One core__hardware row by GPU id (case-insensitive), with its citation, from the
    bundled table or the file at `path`."""
    return _lookup("--gpu", name, path, HARDWARE, "gpu",
                   f"hardware table {path} not found; give --budget-gb, --bandwidth-gbs and "
                   "--tflops instead")


# --- resolving the inputs ----------------------------------------------------------------


def read_toml(path: Path) -> dict[str, Any]:
    """The `estimate` table (or the top level) of a TOML file, each key a known option of the
    right type."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EstimateError(f"--from-toml: {path} not found") from None
    except tomllib.TOMLDecodeError as err:
        raise EstimateError(f"--from-toml: {path}: {err}") from None
    table = data.get("estimate", data)
    if not isinstance(table, dict):
        raise EstimateError(f"{path}: [estimate] must be a table")
    allowed = {toml_key(f) for f in (*FLAGS.values(), *_OTHER_KEYS.values())}
    for key, value in table.items():
        if key not in allowed:
            raise EstimateError(f"{path}: unknown key {key!r} (expected one of "
                                f"{', '.join(sorted(allowed))})")
        if key in _STRINGS:
            if not isinstance(value, str):
                raise EstimateError(f"{path}: key {key!r} must be a string, got {value!r}")
        elif key in _BOOLEANS:
            if not isinstance(value, bool):
                raise EstimateError(f"{path}: key {key!r} must be true or false, got "
                                    f"{value!r}")
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
        """The value of `flag` (given as the flag, else in the TOML file), recorded under
        `key` (the roofline input name, or the TOML key)."""
        name = toml_key(flag)
        if name in self.flags:
            self.origin[key] = flag
            return self.flags[name]
        if name in self.toml:
            self.origin[key] = f"{self.toml_path}: key {name!r}"
            return self.toml[name]
        return None

    def where(self, key: str, flag: str) -> str:
        return self.origin.get(key, flag)


def resolve(flags: dict[str, Any], toml_path: Path | None = None,
            models_csv: Path | None = None, hardware_csv: Path | None = None,
            ) -> tuple[RooflineInputs, dict[str, Any]]:
    """The roofline inputs from the options given (keyed by TOML key; None: not given), a TOML
    table and the reference tables (the bundled ones unless a path is given); plus the context
    for the report (model, GPU, precision, sources, defaults taken, calibration, and the plan:
    sizing, topology and sweep options, with the measured sweep when one is given)."""
    toml = read_toml(toml_path) if toml_path is not None else {}
    values = _Values(flags, toml, toml_path)
    model_name = values.get("model", "--model")
    gpu_name = values.get("gpu", "--gpu")
    precision = values.get("precision", "--precision") or "bf16"
    if precision not in WEIGHT_BYTES:
        raise EstimateError(f"{values.where('precision', '--precision')}: must be one of "
                            f"{sorted(WEIGHT_BYTES)}, got {precision!r}")
    model = lookup_model(model_name, models_csv) if model_name else None
    gpu = lookup_gpu(gpu_name, hardware_csv) if gpu_name else None

    resolved: dict[str, Any] = {}
    defaults: list[str] = []
    for name, flag in FLAGS.items():
        value = values.get(name, flag)
        if value is None and name in MODEL_FIELDS and model is not None:
            value = model[name]
            values.origin[name] = f"--model {model['model']} ({name})"
        resolved[name] = value
    if model is not None:
        resolved |= {name: model[name] for name in MODEL_FIELDS if name not in FLAGS}

    for name, column in {**GPU_COLUMNS, "tflops": COMPUTE_COLUMN[precision]}.items():
        if resolved[name] is None and gpu is not None:
            if gpu.get(column) is None:
                raise EstimateError(f"--gpu: {gpu['gpu']} has no {column} figure; give "
                                    f"{FLAGS[name]}")
            resolved[name] = gpu[column]
            values.origin[name] = f"--gpu {gpu['gpu']} ({column})"

    if resolved["weights_gb"] is None and resolved["params"] is not None:
        per = WEIGHT_BYTES[precision]
        resolved["weights_gb"] = default_weights_gb(float(resolved["params"]), per)
        defaults.append(f"Weights = {resolved['params']:,.0f} parameters x {per:g} B "
                        f"({precision}) = {resolved['weights_gb']:,.3f} GB: parameters only "
                        "(quantisation scales and layers kept in 16-bit are not counted); "
                        "give --weights-gb for the real checkpoint size.")
        values.origin["weights_gb"] = "--weights-gb (from --params and --precision)"
    if resolved["cache_bytes"] is None:
        resolved["cache_bytes"] = DEFAULT_CACHE_BYTES
        defaults.append(f"KV cache stored in 16-bit ({DEFAULT_CACHE_BYTES:g} B per element), "
                        "the engines' default even for FP8 weights; give --cache-bytes 1 for "
                        "an FP8 cache.")
    if resolved["reserve_gb"] is None and resolved["budget_gb"] is not None:
        resolved["reserve_gb"] = default_reserve_gb(float(resolved["budget_gb"]))
        defaults.append(f"Reserve = {DEFAULT_RESERVE_SHARE:.0%} of the per-GPU budget "
                        f"({resolved['reserve_gb']:,.2f} GB), what vLLM's default "
                        "gpu_memory_utilization=0.9 leaves aside; give --reserve-gb to change.")
        values.origin["reserve_gb"] = (f"--reserve-gb ({DEFAULT_RESERVE_SHARE:.0%} of the "
                                       "budget)")
    for name, default in (("tensor_parallel", 1), ("pipeline_parallel", 1), ("replicas", 1),
                          ("lookup_embeddings", False), ("kv_read_factor", 1.0)):
        if resolved[name] is None:
            resolved[name] = default
    if gpu is not None and all(values.origin.get(n, "").startswith("--gpu")
                               for n in ("bandwidth_gb_per_s", "tflops")):
        resolved["rates_source"] = f"{gpu['gpu']} datasheet, {gpu.get('source_url')}"

    missing = [n for n in REQUIRED_INPUTS if resolved[n] is None]
    if missing:
        hints = ({n: " or --model" for n in MODEL_FIELDS}
                 | {n: " or --gpu" for n in (*GPU_COLUMNS, "tflops")})
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
        inputs = RooflineInputs(**resolved)
    except RooflineInputError as err:
        where = values.where(err.field, FLAGS.get(err.field, err.field))
        raise EstimateError(f"{where}: {str(err).split(': ', 1)[1]}") from None

    run_gpu_name = values.get("calibration_gpu", "--calibration-gpu")
    run_gpu = _lookup("--calibration-gpu", run_gpu_name, hardware_csv, HARDWARE, "gpu",
                      f"hardware table {hardware_csv} not found") if run_gpu_name else None
    if run_gpu is not None:
        # a run on another GPU: calibrate on that GPU's datasheet rates, then carry the shares
        # (MBU, MFU) to this GPU's
        column = COMPUTE_COLUMN[precision]
        if run_gpu.get(column) is None:
            raise EstimateError(f"--calibration-gpu: {run_gpu['gpu']} has no {column} figure")
        run = dataclasses.replace(
            inputs, bandwidth_gb_per_s=float(run_gpu[GPU_COLUMNS["bandwidth_gb_per_s"]]),
            tflops=float(run_gpu[column]),
            rates_source=f"{run_gpu['gpu']} datasheet, {run_gpu.get('source_url')}")
        calibration = _calibrate(run, values, run_flag="--calibration-gpu")
        if calibration is None:
            raise EstimateError(f"{values.where('calibration_gpu', '--calibration-gpu')}: "
                                "needs the run's measurement: --calibrate-tpot-ms (with "
                                "--calibrate-context) or --calibrate-ttft-ms (with "
                                "--calibrate-prompt-tokens)")
        inputs = transfer(inputs, calibration, run=f"on {run_gpu['gpu']}")
    else:
        calibration = _calibrate(inputs, values, run_flag="--model")
        if calibration is not None:
            inputs = apply_calibration(inputs, calibration)

    sources = []
    for table, row, key in ((MODEL_ARCHITECTURES, model, "model"), (HARDWARE, gpu, "gpu")):
        if row is not None:
            sources.append({"table": table.name, "key": row[key],
                            **{k: _jsonable(row.get(k)) for k in ("source_url", "source_date",
                                                                 "licence")}})
    plan = {k: values.get(k, flag) for k, flag in _OTHER_KEYS.items()
            if not k.startswith("calibrat") and k not in ("model", "gpu", "precision")}
    if plan.get("spec_draft_model"):
        draft = _lookup("--spec-draft-model", plan["spec_draft_model"], models_csv,
                        MODEL_ARCHITECTURES, "model", f"model table {models_csv} not found")
        plan["spec_draft_inputs"] = with_model(inputs, draft, precision=precision)
    if plan.get("sweep_evidence"):
        plan["measured_sweep"], plan["measured_source"] = measured_sweep(
            Path(plan["sweep_evidence"]))
    error_range, error_source = serving_error(inputs)
    context = {
        "error_range": error_range, "error_source": error_source,
        "plan": plan,
        "model": model["model"] if model else None,
        "gpu": gpu["gpu"] if gpu else None,
        "precision": precision,
        "defaults": defaults,
        "sources": sources,
        "calibration": dataclasses.asdict(calibration) if calibration else None,
    }
    return inputs, context


def _calibrate(inputs: RooflineInputs, values: _Values, *, run_flag: str
               ) -> Calibration | None:
    """The calibration the options give (None: no measurement); an error names the flag at
    fault, `run_flag` when the measured run's model does not fit its GPUs."""
    get = {k: values.get(k, flag) for k, flag in _OTHER_KEYS.items()
           if k.startswith("calib") and k != "calibration_gpu"}
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
        return calibrate(inputs, source=get["calibration_source"],
                         tpot_ms=get["calibrate_tpot_ms"],
                         context=get["calibrate_context"],
                         ttft_ms=get["calibrate_ttft_ms"],
                         prompt_tokens=get["calibrate_prompt_tokens"])
    except RooflineInputError as err:
        key = {"tpot_ms": "calibrate_tpot_ms", "ttft_ms": "calibrate_ttft_ms"}.get(err.field)
        where = (values.where(key, _OTHER_KEYS[key]) if key else
                 run_flag if err.field == "model" else err.field)
        raise EstimateError(f"{where}: {str(err).split(': ', 1)[1]}") from None


def measured_sweep(path: Path) -> tuple[dict[int, dict[str, float]], str]:
    """A measured closed-loop sweep from benchmark files (any format the evidence readers
    take): per concurrency level, the decode throughput C / TPOT (p50, the runs' mean), TPOT
    and TTFT (p50); and the files read with their sha256, as the comparison's source."""
    if not path.exists():
        raise EstimateError(f"--sweep-evidence: no such file or folder: {path}")
    try:
        runs = inspect([path], Slo(ttft_ms=1e12))["runs"]
    except (ParseError, ValueError) as err:
        raise EstimateError(f"--sweep-evidence: {err}") from None
    levels: dict[int, list[dict[str, Any]]] = {}
    for run in runs:
        if run["concurrency"] and run["tpot_p50_s"]:
            levels.setdefault(int(run["concurrency"]), []).append(run)
    if not levels:
        raise EstimateError(f"--sweep-evidence: no run in {path} gives a concurrency and a TPOT")
    out = {}
    for c, level in sorted(levels.items()):
        tpot = sum(r["tpot_p50_s"] for r in level) / len(level)
        ttfts = [r["ttft_p50_s"] for r in level if r["ttft_p50_s"] is not None]
        out[c] = {"decode_tokens_per_s": c / tpot, "tpot_ms": tpot * 1e3,
                  "ttft_s": sum(ttfts) / len(ttfts) if ttfts else None}
    files = ", ".join(f"{r['path']} (sha256 {str(r.get('sha256'))[:12]})" for r in runs)
    return out, files


def _jsonable(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


@functools.cache
def validation_rows() -> tuple[dict[str, Any], ...]:
    """The serving model against every measured run of its validation set
    (pipeline/engine/roofline/validation.py), from the bundled model and GPU rows."""
    sweeps = validation.MEASURED
    models = {m: lookup_model(m) for m in {s.model for s in sweeps}}
    gpus = {g: lookup_gpu(g) for g in {s.gpu for s in sweeps}}
    return tuple(validation.validation_rows(models, gpus, sweeps))


def serving_error(inputs: RooflineInputs | None = None
                  ) -> tuple[tuple[float, float, float], str]:
    """The goodput range factors (low, mode, high) from the validation set's errors, and a
    sentence saying where they come from: of the predictions on the datasheet peaks when the
    inputs' rates are a datasheet's (not calibrated), else of the calibrated ones (typed-in
    rates are taken as effective rates)."""
    peaks = inputs is not None and inputs.calibration_source is None \
        and inputs.rates_source is not None
    basis = validation.PEAK if peaks else validation.CALIBRATED
    rows = validation_rows()
    ratios = validation.goodput_ratios(rows, basis)
    mape = validation.mape(rows, validation.GOODPUT, basis) or 0.0
    words = "datasheet-peak" if peaks else "calibrated"
    return validation.basis_range(rows, basis), (
        f"{len(ratios)} measured goodput points of docs/roofline.md's validation table, "
        f"{words} predictions: MAPE {mape:.1%}; measured / predicted from {min(ratios):.3f} to "
        f"{max(ratios):.3f}")
