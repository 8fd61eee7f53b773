"""Benchmark evidence for the scorecard: read result files, compute goodput, pick the knee.

API (what the scorecard and `scorecard evidence inspect` use):

- `throughput_from_evidence(path: Path, slo: Slo, *, fmt=None, tz=None) -> ThroughputEvidence`
  `path` is a benchmark file or a folder of them (a sweep). `tokens_per_s` is the token
  goodput at the knee of a sweep, or the run's token goodput for a single run (the mean over
  runs when several runs share one load level); None with a reason in `notes` when it cannot be
  computed (e.g. an aggregate-only file). `output_tokens_per_s` is the raw throughput of the
  same run(s), shown beside it, never instead of it. `grade` is "measured" for benchmark
  files and "production" for vLLM /metrics scrapes (which give raw throughput and bucket
  percentile estimates, never goodput). `window_start_utc`/`window_end_utc` bound
  the chosen run in UTC when the file says so (vLLM needs `tz` for its naive `date`), with
  `clock_uncertainty_s`; the power/energy side aligns its samples to them. `window_s`,
  `goodput_tokens` and `output_tokens` let energy be divided by the tokens of the window.
  `files` lists (path, sha256) of every file read.
- `load_runs(paths, *, fmt=None, tz=None, keep=None) -> Loaded`: files and folders to runs.
  Folders are walked by `walk` (recursively in name order; hidden files and folders, vLLM
  `*.pytorch.json` side files, and the `summary.json` beside `vllm bench sweep` `run=N.json`
  files are left out); a file is read only when a reader recognises its head, others are
  skipped with a note (a folder may hold power logs too). `keep(path, bytes) -> sha256` is
  handed each file read (evidence add keeps them as raw snapshots). The two files of one
  AIPerf run (`X.jsonl` + `X_aiperf.json`) or one LLMPerf run (`X_individual_responses.json`
  + `X_summary.json`) given together become one run.
- `walk(path) -> [Path]`: the one folder walk of evidence (benchmark results and power logs);
  `head(path)`: a file's first 64 kB, all any detector looks at.
- `inspect(paths, slo, *, fmt=None, tz=None, window=None) -> dict`: the DESIGN section 9
  contract `{"runs": [...], "sweep": {...} | None}`.
- `operating_point(loaded, report, slo, source) -> ThroughputEvidence`: the same choice for
  runs already loaded; `energy_at_operating_point(ev, power_path, tz=None, fmt=None)`: the
  power log's energy over that window (pipeline.evidence.power) and J per goodput token and
  per output token, for `evidence inspect --power`.
- `bench_frames(loaded) -> (runs, requests)`: the rows of `core__bench_runs` and
  `core__bench_requests` (schemas/evidence.py), validated (raises ValidationFailed).
- `add_evidence(con, paths, *, fmt=None, power_fmt=None, tz=None) -> ([(file, LoadResult)],
  notes)`: keeps each file's bytes as a raw snapshot and loads, in one transaction per file, a
  benchmark result's runs and requests (source `bench:<sha256 prefix>`) or a power log's
  samples (`core__power_samples`, source `power:<sha256 prefix>`), vintage `evidence`: adding
  the same file twice changes nothing; invalid rows load nothing (ValidationFailed, raised
  by the readers' validation before any row is written; the raw snapshot of a benchmark file
  that parsed is kept). In folders, files that are neither are skipped (see `split_files`).

Errors: a file that cannot be read raises `sources.errors.ParseError` naming the file and the
place; a missing path raises FileNotFoundError.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.evidence.goodput import Slo, run_metrics, sweep_metrics
from pipeline.store import sha256
from schemas.evidence import BENCH_REQUESTS, BENCH_RUNS
from schemas.fields import FIELDS
from sources.bench.jsondoc import HEAD_BYTES
from sources.bench.registry import FORMATS, detect_format, parse_bench
from sources.bench.run import REQUEST_COLUMNS, BenchRun
from sources.errors import ParseError


@dataclass(frozen=True)
class Loaded:
    runs: list[BenchRun]
    files: list[tuple[str, str]]  # (path, sha256)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ThroughputEvidence:
    tokens_per_s: float | None
    grade: str
    output_tokens_per_s: float | None
    source_path: str
    files: tuple[tuple[str, str], ...]
    window_start_utc: datetime | None = None
    window_end_utc: datetime | None = None
    clock_uncertainty_s: float | None = None
    window_s: float | None = None
    goodput_tokens: float | None = None
    output_tokens: float | None = None
    concurrency: int | None = None
    request_rate: float | None = None
    slo: Slo | None = None
    notes: tuple[str, ...] = ()


def walk(path: Path) -> list[Path]:
    """The evidence files under `path` (itself when a file), in name order: hidden files and
    folders (`.ipynb_checkpoints/`) are left out, as are vLLM `*.pytorch.json` side files and
    the `summary.json` of a folder holding `vllm bench sweep` `run=N.json` files (the same runs
    twice). The one folder walk of benchmark results and power logs."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.is_file():
        return [path]
    found = sorted(p for p in path.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    sweep_dirs = {p.parent for p in found if p.name.startswith("run=") and p.suffix == ".json"}
    return [p for p in found if not p.name.endswith(".pytorch.json")
            and not (p.name == "summary.json" and p.parent in sweep_dirs)]


def load_runs(paths: Sequence[Path], *, fmt: str | None = None, tz: str | None = None,
              keep: Callable[[Path, bytes], str] | None = None) -> Loaded:
    """`keep(path, data) -> sha256`, when given, is handed each file's bytes once read (evidence
    add keeps them as raw snapshots) and its digest is the one recorded."""
    parsed: list[tuple[Path, str | None, list[BenchRun]]] = []
    files: list[tuple[str, str]] = []
    notes: list[str] = []
    for root in paths:
        in_folder = Path(root).is_dir()
        for path in walk(Path(root)):
            name = str(path)
            tool = fmt or detect_format(head(path))  # the detectors look at the head only
            if in_folder and tool is None:
                notes.append(f"{name}: skipped (not a benchmark format this project reads)")
                continue
            data = path.read_bytes()
            parsed.append((path, tool, parse_bench(data, path=name, fmt=tool, tz=tz)))
            files.append((name, keep(path, data) if keep else sha256(data)))
    return Loaded(_pair(parsed, notes), files, notes)


def head(path: Path) -> bytes:
    """A file's first 64 kB: all that any detector, benchmark or power, looks at."""
    with path.open("rb") as file:
        return file.read(HEAD_BYTES)


def _pair(parsed: list[tuple[Path, str | None, list[BenchRun]]], notes: list[str]
          ) -> list[BenchRun]:
    """Join the two files of one run (AIPerf records + summary, LLMPerf individual + summary)
    when both were given: the reader's `partner(name)` names the other file."""
    by_path = {path: (tool, runs) for path, tool, runs in parsed}
    used: set[Path] = set()
    out: list[BenchRun] = []
    for path, tool, runs in parsed:
        reader = FORMATS.get(tool or "")
        partner = getattr(reader, "partner", None)
        if path in used:
            continue
        if partner is None or len(runs) != 1:
            out.extend(runs)
            continue
        other_name = partner(path.name)
        other = path.with_name(other_name) if other_name else None
        if other is not None and other in by_path and by_path[other][0] == tool \
                and len(by_path[other][1]) == 1 and other not in used:
            mine, theirs = runs[0], by_path[other][1][0]
            detail, summary = (mine, theirs) if theirs.aggregate_only else (theirs, mine)
            if not detail.aggregate_only and summary.aggregate_only:
                out.append(reader.combine(detail, summary))  # type: ignore[union-attr]
                used.update({path, other})
                notes.append(f"{detail.path} and {summary.path} read as one run")
                continue
        out.extend(runs)
    return out


def inspect(paths: Sequence[Path], slo: Slo, *, fmt: str | None = None, tz: str | None = None,
            window: tuple[float, float] | None = None) -> dict[str, Any]:
    loaded = load_runs(paths, fmt=fmt, tz=tz)
    return build_report(loaded, slo, window)


def build_report(loaded: Loaded, slo: Slo, window: tuple[float, float] | None
                 ) -> dict[str, Any]:
    """`inspect` for runs already loaded."""
    runs = [run_metrics(run, slo, window) for run in loaded.runs]
    for m, run in zip(runs, loaded.runs, strict=True):
        m["sha256"] = dict(loaded.files).get(run.path)
    sweep = sweep_metrics(runs, slo)
    if sweep is not None and loaded.notes:
        sweep["notes"] = [*sweep["notes"], *loaded.notes]
    elif loaded.notes and runs:
        runs[0]["notes"] = [*runs[0]["notes"], *loaded.notes]
    return {"runs": runs, "sweep": sweep}


def throughput_from_evidence(path: Path, slo: Slo, *, fmt: str | None = None,
                             tz: str | None = None) -> ThroughputEvidence:
    loaded = load_runs([Path(path)], fmt=fmt, tz=tz)
    return operating_point(loaded, build_report(loaded, slo, None), slo, str(path))


def operating_point(loaded: Loaded, report: dict[str, Any], slo: Slo, source: str
                    ) -> ThroughputEvidence:
    """The throughput the scorecard uses from an `inspect` report of `loaded` runs: the knee
    of a sweep, else the run (or the mean of runs at one level)."""
    if not loaded.runs:
        return ThroughputEvidence(None, "measured", None, source, tuple(loaded.files),
                                  slo=slo, notes=("no benchmark run found", *loaded.notes))
    metrics, sweep = report["runs"], report["sweep"]
    notes: list[str] = list(loaded.notes)
    chosen = list(zip(metrics, loaded.runs, strict=True))
    if sweep is not None and sweep["load_variable"] is not None:
        notes.extend(sweep["notes"])
        key = "concurrency" if sweep["load_variable"] == "concurrency" else "request_rate"
        knee = sweep["knee_concurrency"] if key == "concurrency" else sweep["knee_request_rate"]
        if knee is None:
            notes.append("no knee: no level of the sweep meets the SLO")
            best = max(metrics, key=lambda m: m["output_tokens_per_s"] or 0.0)
            return ThroughputEvidence(
                None, "measured", best["output_tokens_per_s"], source, tuple(loaded.files),
                slo=slo, notes=tuple(notes))
        chosen = [(m, r) for m, r in chosen if m[key] is not None and float(m[key]) == knee]
        notes.append(f"operating point: the knee at {key} {knee}")
    elif len(chosen) > 1:
        notes.append(f"{len(chosen)} runs at one load level: their mean is used")
    # at a knee, the sweep's own pooled figure (the mean over the level's runs)
    tokens = (sweep["knee_tokens_per_s"] if sweep is not None and sweep["load_variable"]
              is not None else _mean([m["token_goodput_per_s"] for m, _ in chosen]))
    raw = _mean([m["output_tokens_per_s"] for m, _ in chosen])
    for m, _ in chosen:
        if m["token_goodput_per_s"] is None and m["goodput_null_reason"]:
            notes.append(f"{m['path']}: {m['goodput_null_reason']}")
    m0, r0 = chosen[0]
    one = len(chosen) == 1
    window_s = m0["window_s"] if one else None
    grade = "production" if all(r.tool == "vllm-metrics" for _, r in chosen) else "measured"
    return ThroughputEvidence(
        tokens_per_s=tokens, grade=grade, output_tokens_per_s=raw, source_path=source,
        files=tuple(loaded.files),
        window_start_utc=r0.started_at_utc if one else None,
        window_end_utc=r0.ended_at_utc if one else None,
        clock_uncertainty_s=r0.clock_uncertainty_s if one else None,
        window_s=window_s,
        goodput_tokens=None if window_s is None or m0["token_goodput_per_s"] is None
        else m0["token_goodput_per_s"] * window_s,
        output_tokens=None if window_s is None or m0["output_tokens_per_s"] is None
        else m0["output_tokens_per_s"] * window_s,
        concurrency=m0["concurrency"], request_rate=m0["request_rate"], slo=slo,
        notes=tuple(notes),
    )


def energy_at_operating_point(ev: ThroughputEvidence, power_path: Path, *,
                              tz: str | None = None, fmt: str | None = None
                              ) -> dict[str, Any]:
    """Energy of the power log over the operating point's UTC window, and J per goodput token
    and per output token of that window (DESIGN section 7). `None` figures carry a reason."""
    from pipeline.evidence.power import power_from_evidence

    if ev.window_start_utc is None or ev.window_end_utc is None:
        return {"energy_j_per_goodput_token": None, "energy_j_per_output_token": None,
                "notes": ["the operating point has no UTC window (a vLLM `date` needs --tz; a "
                          "trace on its own clock has none; runs pooled at one level have "
                          "none): energy cannot be aligned"]}
    power = power_from_evidence(Path(power_path), ev.window_start_utc, ev.window_end_utc, tz,
                                uncertainty_s=ev.clock_uncertainty_s or 0.0, format=fmt)
    out = power.as_dict()
    out["energy_j_per_goodput_token"] = (None if ev.goodput_tokens is None
                                         else power.joules_per_token(ev.goodput_tokens))
    out["energy_j_per_output_token"] = (None if ev.output_tokens is None
                                        else power.joules_per_token(ev.output_tokens))
    out["goodput_tokens"] = ev.goodput_tokens
    out["output_tokens"] = ev.output_tokens
    return out


def bench_frames(loaded: Loaded) -> tuple[pl.DataFrame, pl.DataFrame]:
    runs = pl.DataFrame([{
        "bench_tool": r.tool, "bench_file": r.path, "run_index": r.run_index,
        "run_label": r.label, "served_model": r.model, "concurrency": r.concurrency,
        "request_rate_per_s": r.request_rate_per_s, "window_start_s": r.window_start_s,
        "window_end_s": r.window_end_s, "window_s": r.window_s,
        "started_at_utc": r.started_at_utc, "ended_at_utc": r.ended_at_utc,
        "clock_uncertainty_s": r.clock_uncertainty_s, "aggregate_only": r.aggregate_only,
        "itl_definition": r.itl_definition, "tpot_definition": r.tpot_definition,
        **{f"reported_{k}": r.reported.get(k) for k in _REPORTED},
        "reported_offered": r.reported.get("offered"),
        "note": "; ".join(r.notes) or None,
    } for r in loaded.runs], schema={c: FIELDS[c].dtype for c in BENCH_RUNS.columns})
    parts = [r.requests.select(
        pl.lit(r.path).alias("bench_file"), pl.lit(r.run_index, pl.Int64()).alias("run_index"),
        *[c for c in REQUEST_COLUMNS])
        for r in loaded.runs if r.requests is not None]
    requests = pl.concat(parts) if parts else pl.DataFrame(
        schema={c: FIELDS[c].dtype for c in BENCH_REQUESTS.columns})
    origin = ", ".join(p for p, _ in loaded.files)
    return (BENCH_RUNS.validate(runs, origin), BENCH_REQUESTS.validate(requests, origin))


def split_files(paths: Sequence[Path], *, fmt: str | None = None,
                power_fmt: str | None = None) -> tuple[list[Path], list[Path], list[str]]:
    """The files under `paths` as (benchmark results, power logs, notes on files skipped).
    Detection looks at each file's head; a file neither reader recognises is a benchmark
    result when `fmt` is given, else a power log when `power_fmt` is, else skipped in a
    folder and an error when named (ParseError, listing both families of formats)."""
    from sources.power.registry import FORMATS as POWER_FORMATS

    bench: list[Path] = []
    power: list[Path] = []
    notes: list[str] = []
    for root in map(Path, paths):
        for path in walk(root):
            top = head(path)
            if detect_format(top) is not None:
                bench.append(path)
            elif _is_power_log(top, path):
                power.append(path)
            elif fmt is not None or power_fmt is not None:
                (bench if fmt is not None else power).append(path)
            elif root.is_dir():
                notes.append(f"{path}: skipped (neither a benchmark result nor a power log "
                             "this project reads)")
            else:
                raise ParseError("evidence", str(path), "format", (
                    "neither a benchmark result (formats: "
                    f"{', '.join(sorted(FORMATS))}) nor a power log (formats: "
                    f"{', '.join(POWER_FORMATS)}); force one with --format or --power-format"))
    return bench, power, notes


def _is_power_log(top: bytes, path: Path) -> bool:
    from sources.power.registry import detect_format as power_format

    try:
        return bool(power_format(top, str(path)))
    except ParseError:
        return False


def add_evidence(con: Any, paths: Sequence[Path], *, fmt: str | None = None,
                 power_fmt: str | None = None, tz: str | None = None,
                 progress: Callable[[str, str], None] | None = None
                 ) -> tuple[list[tuple[str, Any]], list[str]]:
    """`progress(what, stage)` is told what is being done (a 36-hour power log takes ~20 s)."""
    from pipeline.evidence.power import add_power_logs

    bench, power, notes = split_files(paths, fmt=fmt, power_fmt=power_fmt)
    if progress and bench:
        progress(f"{len(bench)} benchmark file(s)", "reading and loading")
    results = _add_bench(con, bench, fmt=fmt, tz=tz) if bench else []
    return results + add_power_logs(con, power, fmt=power_fmt, tz=tz, progress=progress), notes


def _add_bench(con: Any, paths: Sequence[Path], *, fmt: str | None, tz: str | None
               ) -> list[tuple[str, Any]]:
    from pipeline.store import Batch, ensure_tables, load, save_snapshot
    from schemas.evidence import EVIDENCE_TABLES

    ensure_tables(con, EVIDENCE_TABLES)
    # each file's bytes are kept as they are read (raw snapshots, like a fetch's): read once
    loaded = load_runs(paths, fmt=fmt, tz=tz, keep=lambda path, data: save_snapshot(
        con, data, source="bench", url=path.resolve().as_uri()))
    runs_frame, requests_frame = bench_frames(loaded)
    results = []
    for name, digest in loaded.files:
        if not any(r.path == name for r in loaded.runs):
            continue  # the summary half of a paired run: its figures are in its partner's row
        batches = [  # bench_frames validated them
            Batch(BENCH_RUNS, runs_frame.filter(pl.col("bench_file") == name), digest, name,
                  validated=True),
            Batch(BENCH_REQUESTS, requests_frame.filter(pl.col("bench_file") == name), digest,
                  name, validated=True),
        ]
        results.append((name, load(con, f"bench:{digest[:16]}", "evidence", batches)))
    return results


_REPORTED = ("completed", "failed", "duration_s", "total_output_tokens",
             "request_throughput_per_s", "output_tokens_per_s", "request_goodput_per_s",
             "ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s")


def _mean(values: list[float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)
