"""A benchmark run's configuration: the engine settings it was measured under, so that runs are
pooled only within one configuration and a candidate takes the best one under the SLO.

Settings (canonical names, values as text): engine, engine_version, model, precision,
accelerator (the GPU's name as the file gives it), tp, pp,
dp, ep, gpu_count, max_num_seqs, max_num_batched_tokens, chunked_prefill, spec_decoding,
prefix_caching. They come, later sources overriding earlier ones, from

1. the run's own keys (`BenchRun.params`: vLLM's extra keys, which hold `vllm bench sweep`'s
   serve parameters and `--metadata key=value`; GuideLLM/AIPerf config blocks as the readers
   put them there) under any of the names in `ALIASES`, and the run's served model;
2. `vllm bench sweep` folder names on the file's path: every `SERVE--k=v-k2=v2` setting (the
   `BENCH--` part is the load and the workload, not the configuration; `max_concurrency` and
   `request_rate` are the sweep's load variable);
3. a sidecar the user writes, `configuration.toml`, in the file's folder or any folder above
   it up to the evidence root (nearer folders override): top-level keys apply to every file
   below, a `[files."GLOB"]` table to the file names matching GLOB.

A run's precision is its quantisation when one is named (`quantization`, `quant`, ...), its
dtype (`dtype`, `torch_dtype`) only when none is, and a `precision` given as such over both:
`dtype=bfloat16, quantization=fp8` is fp8 in whatever order the keys come (`_precision`).

`gpus` gives the GPU count of a run's settings: `gpu_count` when given, else tp x pp x dp when
any of them is (EP shares the TP x DP GPUs), else None.

- `configuration`: a run's settings, from the three places above (the sidecars looked for up
  to the evidence root); `key` turns settings into a hashable key and `label` into their text
  ("tp=2, max_num_seqs=64", or "no settings recorded").
- `SIDECAR`: the sidecar's file name (the folder walk leaves it out).

Errors: a sidecar that is not valid TOML, or whose values are not scalars, raises
`sources.errors.ParseError` naming the file and key.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from sources.bench.run import BenchRun
from sources.errors import ParseError

SIDECAR = "configuration.toml"

SETTINGS = ("engine", "engine_version", "model", "precision", "accelerator", "tp", "pp", "dp", "ep",
            "gpu_count", "max_num_seqs", "max_num_batched_tokens", "chunked_prefill",
            "spec_decoding", "prefix_caching")

#: the two halves of a precision, kept apart while the settings are read (`_precision`)
_DTYPE, _QUANTIZATION = "dtype", "quantization"
#: quantisation values that name none (the engine's default of no quantisation)
_NO_QUANTIZATION = {"", "none", "null", "false", "no"}

#: names the tools and teams use, to the canonical setting
ALIASES: dict[str, str] = {
    **{name: name for name in SETTINGS},
    "framework": "engine", "inference_engine": "engine", "engine_name": "engine",
    "version": "engine_version", "vllm_version": "engine_version",
    "sglang_version": "engine_version", "trtllm_version": "engine_version",
    "precision_mode": "precision",
    "dtype": _DTYPE, "torch_dtype": _DTYPE, "quantization": _QUANTIZATION,
    "quantization_method": _QUANTIZATION, "quant": _QUANTIZATION,
    "tensor_parallel_size": "tp", "tensor_parallel": "tp", "tp_size": "tp",
    "pipeline_parallel_size": "pp", "pipeline_parallel": "pp", "pp_size": "pp",
    "data_parallel_size": "dp", "data_parallel": "dp", "dp_size": "dp",
    "expert_parallel_size": "ep", "expert_parallel": "ep", "ep_size": "ep",
    "enable_expert_parallel": "ep",
    "hardware": "accelerator", "hw": "accelerator", "gpu": "accelerator",
    "gpu_name": "accelerator", "gpu_type": "accelerator", "gpu_model": "accelerator",
    "accelerator_type": "accelerator",
    "num_gpus": "gpu_count", "gpus": "gpu_count", "n_gpus": "gpu_count",
    "world_size": "gpu_count",
    "enable_chunked_prefill": "chunked_prefill",
    "speculative_config": "spec_decoding", "speculative_model": "spec_decoding",
    "num_speculative_tokens": "spec_decoding", "spec": "spec_decoding",
    "spec_decode": "spec_decoding",
    "enable_prefix_caching": "prefix_caching",
}

#: load variables and bookkeeping: never part of a configuration
_NOT_SETTINGS = {"max_concurrency", "request_rate", "concurrency", "run_number", "num_prompts"}
_SERVE = re.compile(r"^SERVE--(.*?)(?:-BENCH--.*)?$")
_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)=([^=]*?)(?=-[A-Za-z_][A-Za-z0-9_.]*=|$)")


def configuration(run: BenchRun, root: Path | None = None) -> dict[str, str]:
    """The settings `run` was measured under (see the module docstring for the order)."""
    settings: dict[str, str] = {}
    if run.model:
        settings["model"] = run.model
    for name, value in run.params.items():
        canonical = ALIASES.get(name.lower())
        if canonical is not None:
            settings[canonical] = _text(value)
    path = Path(run.path)
    for part in path.parent.parts:
        match = _SERVE.match(part)
        if match:
            for name, value in _PAIR.findall(match.group(1)):
                if name.lower() not in _NOT_SETTINGS:
                    settings[ALIASES.get(name.lower(), name)] = _text(value)
    for folder in _folders(path, root):
        sidecar = folder / SIDECAR
        if sidecar.is_file():
            settings.update(_sidecar(str(sidecar), path.name))
    return _precision(settings)


def _precision(settings: dict[str, str]) -> dict[str, str]:
    """One `precision` from the two halves a run may record: the quantisation, when one is
    named, is the precision (`dtype=bfloat16, quantization=fp8` ran in fp8: the dtype is
    then the activations' or the unquantised layers'); the dtype only when no quantisation
    is named. A `precision` given as such (InferenceX's, a sidecar's) is kept over both.
    Each half is read in the order above (a later source overrides the same half), so the
    order the keys come in does not decide the precision."""
    dtype = settings.pop(_DTYPE, None)
    quantization = settings.pop(_QUANTIZATION, None)
    if quantization is not None and quantization.lower() in _NO_QUANTIZATION:
        quantization = None
    chosen = quantization or dtype
    if chosen is not None:
        settings.setdefault("precision", chosen)
    return settings


def key(settings: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(settings.items()))


def label(settings: dict[str, str]) -> str:
    shown = {k: v for k, v in settings.items() if k != "model"} or settings
    if not shown:
        return "no settings recorded"
    return ", ".join(f"{k}={v}" for k, v in sorted(shown.items(), key=_order))


def gpus(settings: dict[str, str]) -> int | None:
    """The configuration's GPU count, or None when it records neither gpu_count nor TP/PP/DP."""
    if "gpu_count" in settings:
        return _int(settings["gpu_count"])
    sizes = [_int(settings[k]) for k in ("tp", "pp", "dp") if k in settings]
    if not sizes or any(s is None for s in sizes):
        return None
    count = 1
    for s in sizes:
        count *= s  # type: ignore[operator]
    return count


def _order(item: tuple[str, str]) -> tuple[int, str]:
    name = item[0]
    return (SETTINGS.index(name) if name in SETTINGS else len(SETTINGS), name)


def _int(text: str) -> int | None:
    try:
        value = int(float(text))
    except ValueError:
        return None
    return value if value >= 1 else None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip()
    if text.lower() in ("true", "false"):
        return text.lower()
    try:
        return str(int(text))  # "064" and 64 are one setting
    except ValueError:
        return text


def _folders(path: Path, root: Path | None) -> list[Path]:
    """The folders from `root` (or the file's own folder) down to the file's folder."""
    folder = path.parent
    if root is None:
        return [folder]
    root = root if root.is_dir() else root.parent
    chain = [folder]
    while folder != root and root in folder.parents:
        folder = folder.parent
        chain.append(folder)
    return list(reversed(chain))


def _read_sidecar(name: str) -> dict[str, Any]:
    return _parsed_sidecar(name, Path(name).stat().st_mtime_ns)


@cache
def _parsed_sidecar(name: str, mtime_ns: int) -> dict[str, Any]:
    try:
        with Path(name).open("rb") as file:
            return tomllib.load(file)
    except tomllib.TOMLDecodeError as err:
        raise ParseError("configuration", name, "TOML", str(err)) from None


def _sidecar(name: str, file_name: str) -> dict[str, str]:
    doc = _read_sidecar(name)
    out: dict[str, str] = {}
    tables = doc.get("files", {})
    if not isinstance(tables, dict):
        raise ParseError("configuration", name, "key 'files'", "expected a table of globs")
    for key_, value in doc.items():
        if key_ == "files":
            continue
        out[_setting(name, key_, value)] = _text(value)
    for glob, table in tables.items():
        if not isinstance(table, dict):
            raise ParseError("configuration", name, f"files.{glob!r}", "expected a table")
        if fnmatch.fnmatch(file_name, glob):
            for key_, value in table.items():
                out[_setting(name, f"files.{glob!r}.{key_}", value)] = _text(value)
    return out


def _setting(name: str, where: str, value: Any) -> str:
    if not isinstance(value, str | int | float | bool):
        raise ParseError("configuration", name, f"key {where!r}",
                         f"expected a text, number or boolean, got {type(value).__name__}")
    leaf = where.rsplit(".", 1)[-1]
    return ALIASES.get(leaf.lower(), leaf)
