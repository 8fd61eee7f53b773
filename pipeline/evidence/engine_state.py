"""What a running vLLM server says about its own KV cache and queue: production evidence of the
KV budget beside the benchmark figures (seed 003: a nonzero preemption rate says the KV budget
binds; docs/capacity.md, "Paged KV cache and the preemption onset").

- `startup_log`: a vLLM start-up log's KV cache: `# GPU blocks: N` (v0 executors, and v1's
  kv_cache_utils before the token count was printed), or `GPU KV cache size: N tokens` (later
  v1), with `Maximum concurrency for T tokens per request: Xx` when printed. Capacity in tokens
  = GPU blocks x block size: the block size is the `block_size=N` of the logged engine
  arguments when one is set, else vLLM's CUDA default of 16 (said in the notes); the logged
  concurrency must agree (blocks x block size / T = X, to its two decimals) or the block size
  is wrong and refused.
- `metrics_state`: the operational gauges and counters of a `/metrics` text file (one or more
  scrapes, as `sources.bench.aggregates.vllm_metrics` reads them): `vllm:num_requests_waiting`
  and `vllm:num_requests_running` (last and largest), the KV-cache usage (a 0-1 fraction:
  `vllm:kv_cache_usage_perc`, before vLLM 0.11 `vllm:gpu_cache_usage_perc`), the preemptions
  (`vllm:num_preemptions_total`: its increase between the first and last scrape, or its total
  since start for one scrape) and the capacity of `vllm:cache_config_info` (num_gpu_blocks x
  block_size). The counts (waiting, running, preemptions) and the capacity are summed over
  engines and models; the KV-cache usage, a share of each engine's own cache, is the largest
  engine's (the fullest cache is the one whose budget binds; a sum is no share: 0.71 + 0.97).
- `engine_state`: the files under the paths that are either, each read (`detect_startup_log`
  recognises a start-up log by its head), and `state_lines`, their text for `evidence inspect`.

Errors: a start-up log without a capacity line, or whose concurrency contradicts its block
size, raises `sources.errors.ParseError` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pipeline.evidence.files import head, walk
from sources.bench.aggregates import vllm_metrics
from sources.bench.jsondoc import decode_text
from sources.errors import ParseError

TOOL = "vllm-startup-log"
#: vLLM's default KV block size on CUDA (CacheConfig.block_size, when --block-size is not set)
DEFAULT_BLOCK_SIZE = 16

_GPU_BLOCKS = re.compile(r"# GPU blocks: ([\d,]*\d)(?:, # CPU blocks: ([\d,]*\d))?")
_KV_TOKENS = re.compile(r"GPU KV cache size: ([\d,]*\d) tokens")
_CONCURRENCY = re.compile(r"Maximum concurrency for ([\d,]*\d) tokens per request: ([\d.]+)x")
_BLOCK_ARG = re.compile(r"\bblock_size=(\d+)")
_VERSION = re.compile(r"vLLM API server version (\S+)")


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def detect_startup_log(top: bytes) -> bool:
    """A vLLM start-up log: its head holds the KV cache's capacity line."""
    text = top.decode("utf-8", "replace")
    return bool(_GPU_BLOCKS.search(text) or _KV_TOKENS.search(text))


def startup_log(data: bytes, *, path: str) -> dict[str, Any]:
    """The KV cache a start-up log reports (see the module docstring); the last engine start
    in the file counts (a log holding restarts says so in the notes)."""
    lines = decode_text(data, TOOL, path).splitlines()
    found: dict[str, tuple[int, re.Match[str]]] = {}
    starts = 0
    for n, line in enumerate(lines, start=1):
        for key, pattern in (("blocks", _GPU_BLOCKS), ("tokens", _KV_TOKENS),
                             ("concurrency", _CONCURRENCY), ("block_size", _BLOCK_ARG),
                             ("version", _VERSION)):
            match = pattern.search(line)
            if match:
                found[key] = (n, match)
                starts += key in ("blocks", "tokens")
    if "blocks" not in found and "tokens" not in found:
        raise ParseError(TOOL, path, "line 1", "no '# GPU blocks: N' nor 'GPU KV cache size: N "
                         "tokens' line: not a vLLM start-up log")
    notes = ["vLLM start-up log: the KV cache the engine allocated (production evidence)"]
    if starts > 1:
        notes.append(f"{starts} capacity lines (engine restarts or several workers): the last "
                     "counts")
    block_size = int(found["block_size"][1].group(1)) if "block_size" in found else None
    if block_size is None:
        notes.append(f"block size not in the log's engine arguments: vLLM's CUDA default "
                     f"{DEFAULT_BLOCK_SIZE} taken")
    block = block_size or DEFAULT_BLOCK_SIZE
    blocks = cpu_blocks = None
    if "blocks" in found:
        match = found["blocks"][1]
        blocks = _int(match.group(1))
        cpu_blocks = _int(match.group(2)) if match.group(2) else None
    tokens = blocks * block if blocks is not None else _int(found["tokens"][1].group(1))
    out: dict[str, Any] = {
        "path": path, "tool": TOOL, "gpu_blocks": blocks, "cpu_blocks": cpu_blocks,
        "block_size_tokens": block, "kv_capacity_tokens": tokens,
        "max_concurrency": None, "max_concurrency_request_tokens": None,
        "vllm_version": found["version"][1].group(1) if "version" in found else None,
        "notes": notes,
    }
    if "concurrency" in found:
        n, match = found["concurrency"]
        per_request, times = _int(match.group(1)), float(match.group(2))
        out["max_concurrency"], out["max_concurrency_request_tokens"] = times, per_request
        if blocks is not None and abs(blocks * block / per_request - times) > 0.006:
            raise ParseError(TOOL, path, f"line {n}", f"maximum concurrency {times}x for "
                             f"{per_request:,} tokens disagrees with {blocks:,} blocks x "
                             f"{block} tokens / {per_request:,} = "
                             f"{blocks * block / per_request:.2f}: the block size is not "
                             f"{block}")
    return out


def metrics_state(data: bytes, *, path: str) -> dict[str, Any]:
    """The queue, KV usage, preemptions and KV capacity of a `/metrics` text file (see the
    module docstring)."""
    scrapes = vllm_metrics.read_scrapes(decode_text(data, vllm_metrics.TOOL, path), path)

    def over_engines(counts: dict[Any, float], names: tuple[str, ...],
                     combine: Callable[[list[float]], float]) -> float | None:
        for name in names:
            values = [v for (n, _), v in counts.items() if n == name]
            if values:
                return combine(values)
        return None

    def series(*names: str, combine: Callable[[list[float]], float] = sum) -> list[float]:
        return [v for _, counts in scrapes
                if (v := over_engines(counts, names, combine)) is not None]

    waiting = series("vllm:num_requests_waiting")
    running = series("vllm:num_requests_running")
    usage = series("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", combine=max)
    preempted = series("vllm:num_preemptions_total")
    config = [dict(labels) for (name, labels) in scrapes[-1][1]
              if name == "vllm:cache_config_info"]
    blocks = sum(int(c["num_gpu_blocks"]) for c in config
                 if c.get("num_gpu_blocks", "None").isdigit()) if config else None
    block = next((int(c["block_size"]) for c in config
                  if c.get("block_size", "").isdigit()), None)
    notes = ["vLLM /metrics: the engine's own queue and KV cache (production evidence)"]
    if len(scrapes) == 1:
        notes.append("one scrape: waiting, running and KV usage at that moment; preemptions "
                     "since the server started")
    out: dict[str, Any] = {
        "path": path, "tool": vllm_metrics.TOOL, "scrapes": len(scrapes),
        "requests_waiting": waiting[-1] if waiting else None,
        "requests_waiting_max": max(waiting) if waiting else None,
        "requests_running": running[-1] if running else None,
        "requests_running_max": max(running) if running else None,
        "kv_cache_usage": usage[-1] if usage else None,
        "kv_cache_usage_max": max(usage) if usage else None,
        "preemptions": (preempted[-1] - preempted[0] if len(preempted) > 1 else preempted[-1])
        if preempted else None,
        "gpu_blocks": blocks or None, "block_size_tokens": block,
        "kv_capacity_tokens": blocks * block if blocks and block else None,
        "notes": notes,
    }
    if out["preemptions"]:
        notes.append(f"{out['preemptions']:,.0f} preemptions: the KV cache ran out and "
                     "sequences were evicted and recomputed, so the KV budget binds at this "
                     "load (seed 003)")
    if out["requests_waiting_max"]:
        full = out["kv_cache_usage_max"] is not None and out["kv_cache_usage_max"] >= 0.9
        notes.append(f"up to {out['requests_waiting_max']:,.0f} requests waiting: the "
                     "scheduler was at capacity, " + (
                         "the KV cache nearly full (the KV budget binds)" if full else
                         "the KV cache not full (max_num_seqs or the token budget binds, not "
                         "the KV cache)"))
    return out


def engine_state(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Each vLLM start-up log and `/metrics` file under `paths`, read."""
    out = []
    for root in paths:
        for path in walk(Path(root)):
            top = head(path)
            if detect_startup_log(top):
                out.append(startup_log(path.read_bytes(), path=str(path)))
            elif vllm_metrics.detect(top):
                out.append(metrics_state(path.read_bytes(), path=str(path)))
    return out


def _figure(value: float | None, unit: str = "", digits: int = 0) -> str:
    return "null" if value is None else f"{value:,.{digits}f}{unit}"


def state_lines(states: Sequence[dict[str, Any]]) -> list[str]:
    """The `evidence inspect` text of `engine_state`'s rows."""
    lines = ["Engine state (vLLM's own KV cache and queue)"] if states else []
    for s in states:
        capacity = (f"KV capacity {_figure(s['kv_capacity_tokens'])} tokens"
                    + (f" = {s['gpu_blocks']:,} blocks x {s['block_size_tokens']}"
                       if s.get("gpu_blocks") else ""))
        if s["tool"] == TOOL:
            extra = (f"; max concurrency {s['max_concurrency']}x at "
                     f"{s['max_concurrency_request_tokens']:,} tokens per request"
                     if s["max_concurrency"] is not None else "")
            lines.append(f"  {s['path']}: start-up log, {capacity}{extra}")
        else:
            usage = s["kv_cache_usage_max"]
            lines.append(
                f"  {s['path']}: /metrics ({s['scrapes']} scrape(s)), {capacity}; waiting "
                f"{_figure(s['requests_waiting'])} (max {_figure(s['requests_waiting_max'])}), "
                f"running {_figure(s['requests_running'])}, KV usage "
                f"{_figure(None if usage is None else usage * 100, ' %', 1)} max, "
                f"preemptions {_figure(s['preemptions'])}")
        lines.extend(f"    - {note}" for note in s["notes"])
    return lines
