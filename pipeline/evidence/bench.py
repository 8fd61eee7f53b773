"""Benchmark evidence for the scorecard: read result files, compute goodput, pick the knee.

API (what the scorecard and `scorecard evidence inspect` use):

- `throughput_from_evidence`: the `ThroughputEvidence` of a benchmark file or a folder of them
  (a sweep), read under the SLO. `tokens_per_s` is the token goodput at the knee of a sweep, or
  the run's token goodput for a single run (the mean over runs when several runs share one load
  level); None with a reason in `notes` when it cannot be computed (e.g. an aggregate-only
  file), and None with `no_goodput_reason` when the run's requests meet the SLO less often than
  `slo.attainment` asks or its p99 is over a bound of the SLO
  (`goodput.operating_point_shortfall`). `output_tokens_per_s` is the raw
  throughput of the same run(s), shown beside it, never instead of it. `grade` is "measured"
  for benchmark files and "production" for vLLM /metrics scrapes (which give raw throughput and
  bucket percentile estimates, never goodput), "estimated" when a run of the operating point
  fails Little's law (`goodput.littles_law`). `window_start_utc`/`window_end_utc` bound the
  chosen run in UTC when the file says so (vLLM needs `tz` for its naive `date`), with
  `clock_uncertainty_s`; the power/energy side aligns its samples to them. `window_s`,
  `goodput_tokens` and `output_tokens` let energy be divided by the tokens of the window.
  `files` lists (path, sha256) of every file read.
- `load_runs`: files and folders to runs (a `Loaded`); its `cache`, a store, is where files
  parsed before are read back from (`pipeline.evidence.cache`).
  Folders are walked by `pipeline.evidence.files.walk`; a file is read only when a reader
  recognises its head, others are skipped with a note (a folder may hold power logs too).
  Its `keep` callback, when given, is handed each file read and gives its sha256 (evidence
  add keeps the bytes as raw snapshots). The two files of one AIPerf run (`X.jsonl` +
  `X_aiperf.json`) or one LLMPerf run (`X_individual_responses.json` + `X_summary.json`) given
  together become one run.
- `inspect`: the DESIGN section 9 contract `{"runs": [...], "sweep": {...} | None}` of files
  and folders (`loaded_report`: with the runs loaded; paths that hold no run are a
  ParseError); `build_report` the same for runs already loaded.
- `operating_point`: the same choice as `throughput_from_evidence` for runs already loaded (the
  power log's energy over its window is `pipeline.evidence.inspection.energy_at_operating_point`).
- `bench_frames`: the rows of `core__bench_runs` and `core__bench_requests`
  (schemas/evidence.py) of runs already loaded, validated (raises ValidationFailed).
- `add_bench_files`: keeps each file's bytes as a raw snapshot and loads, in one transaction
  per file, its runs and requests (source `bench:<sha256 prefix>`, vintage `evidence`): adding
  the same file twice changes nothing; invalid rows load nothing (ValidationFailed, raised by
  `bench_frames` before any row is written; the raw snapshot of a file that parsed is kept).
  `scorecard evidence add` calls it through `pipeline.evidence.add.add_evidence`, with power
  logs.

Errors: a file that cannot be read raises `sources.errors.ParseError` naming the file and the
place; a missing path raises FileNotFoundError.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from dataclasses import fields as fields_of
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.evidence import cache as evidence_cache
from pipeline.evidence.configuration import configuration, gpus, key, label
from pipeline.evidence.engine_state import detect_startup_log
from pipeline.evidence.files import head, read_bytes, walk
from pipeline.evidence.goodput import (
    NOT_CHECKED,
    TOLERANCE_S,
    Check,
    Slo,
    no_goodput_reason,
    operating_point_shortfall,
    p99_bounds,
    run_checks,
    run_metrics,
    slo_checks,
    sweep_metrics,
)
from pipeline.store import Batch, ensure_tables, load, save_snapshot, sha256, snapshots
from schemas.evidence import BENCH_REQUESTS, BENCH_RUNS, EVIDENCE_TABLES
from schemas.fields import FIELDS
from sources.bench.jsondoc import HEAD_BYTES
from sources.bench.registry import FORMATS, detect_format, parse_bench
from sources.bench.run import REQUEST_COLUMNS, BenchRun
from sources.errors import ParseError
from sources.scrape_time import SCRAPE_TIME_COMMENT


@dataclass(frozen=True)
class Loaded:
    runs: list[BenchRun]
    files: list[tuple[str, str]]  # (path, sha256)
    notes: list[str] = field(default_factory=list)
    #: each run's configuration settings, keyed by (path, run_index); computed when missing
    settings: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)

    def settings_of(self, run: BenchRun) -> dict[str, str]:
        found = self.settings.get((run.path, run.run_index))
        return found if found is not None else configuration(run)


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
    #: set when no request met the SLO: the candidate is not eligible, for this reason
    no_goodput_reason: str | None = None
    #: input tokens per output token of the requests meeting the SLO (the total token
    #: basis); None when a run gives no per-request input lengths
    input_per_output: float | None = None
    #: the settings of the configuration chosen (empty when none recorded), its label and GPU
    #: count (None when the evidence does not say), and every configuration's figures
    configuration: dict[str, str] = field(default_factory=dict)
    configuration_label: str | None = None
    configuration_gpus: int | None = None
    configurations: tuple[dict[str, Any], ...] = ()
    choose: str = "goodput_per_gpu"
    #: the operating point's median TTFT and TPOT (s; the mean over the runs at its level),
    #: with `concurrency` the request shape Little's law reads; None when not measured
    ttft_p50_s: float | None = None
    tpot_p50_s: float | None = None
    #: each benchmark file's "as of": the end of its latest run, UTC (ISO 8601, `Z`), for the
    #: files whose runs say when they ran (`run_ends`)
    file_dates: dict[str, str] = field(default_factory=dict)
    #: what was checked at the operating point (or the level that failed the SLO), as
    #: (check, outcome, detail): `goodput.slo_checks` and `goodput.run_checks`
    checks: tuple[Check, ...] = ()


def _once(parsed: list[tuple[Path, str | None, list[BenchRun]]],
          files: list[tuple[str, str]], notes: list[str]
          ) -> tuple[list[tuple[Path, str | None, list[BenchRun]]], list[tuple[str, str]]]:
    """Each benchmark once: a file whose runs say what an earlier file's say (one benchmark
    given twice, as GuideLLM writes JSON or YAML) is left out, with a note; whether its runs
    were parsed or read from the store."""
    seen: dict[str, str] = {}  # the runs' content -> the first file that gave them
    kept = []
    for entry, file in zip(parsed, files, strict=True):
        name = file[0]
        same = seen.setdefault(run_content(entry[2]), name) if entry[2] else name
        if same != name:
            notes.append(f"{name}: the same runs as {same} (one benchmark given twice, as "
                         "JSON and YAML say): counted once")
            continue
        kept.append((entry, file))
    return [e for e, _ in kept], [f for _, f in kept]


def load_runs(paths: Sequence[Path], *, fmt: str | None = None, tz: str | None = None,
              keep: Callable[[Path, bytes], str] | None = None, skip_bad: bool = False,
              progress: Callable[[str, str], None] | None = None, cached: bool = True,
              scraped_at: Sequence[str] = (), cache: Any | None = None,
              advance: Callable[[str, int, int], None] | None = None) -> Loaded:
    """`keep(path, data) -> sha256`, when given, is handed each file's bytes once read and
    parsed (evidence add keeps them as raw snapshots) and its digest is the one recorded.
    With a store as `cache`, a file whose sha256 is in its evidence cache
    (`pipeline.evidence.cache`) is not parsed again (and one parsed is added to it).
    `skip_bad`: a file of a folder that fails to parse is left out, named with its error in
    the notes (else its ParseError is raised).
    `progress(what, stage)` hears of each file read, with its size. `cached=False` parses
    every file (a `--window` needs the gaps, which the cache does not keep). `scraped_at`:
    when raw Prometheus text (vLLM /metrics) carries no scrape-time comment, the time of each
    such file, in the order read (`TIME`), or by file name (`NAME=TIME`); it is read as the
    `# scraped_at:` line the file lacks. `advance(file, done, total)` hears the bytes of
    each file read so far."""
    parsed: list[tuple[Path, str | None, list[BenchRun]]] = []
    files: list[tuple[str, str]] = []
    notes: list[str] = []
    roots: dict[str, Path] = {}
    scraped = [0]  # how many raw scrapes took a time given in order
    for root in paths:
        in_folder = Path(root).is_dir()
        for path in walk(Path(root)):
            name = str(path)
            tool = fmt or detect_format(head(path))  # the detectors look at the head only
            if in_folder and tool is None:
                top = head(path)
                notes.append(f"{name}: a vLLM start-up log: the engine's KV cache (evidence "
                             "inspect's engine state), not a benchmark run" if
                             detect_startup_log(top) else
                             f"{name}: skipped (not a benchmark format this project reads)")
                continue
            known = evidence_cache.known_digest(cache, path) if cached and keep is None else None
            runs = None if known is None else evidence_cache.lookup(cache, known, name, fmt, tz)
            if runs is not None and known is not None:
                if progress:
                    progress(name, "read from the store (unchanged since it was parsed)")
                parsed.append((path, tool, runs))
                files.append((name, known))
                roots[name] = Path(root)
                continue
            if progress:
                progress(name, f"reading {path.stat().st_size / 1e6:,.1f} MB")
            data = read_bytes(path, None if advance is None else partial(advance, name))
            digest = sha256(data)
            stamp = _scrape_time(path, tool, data, scraped_at, scraped)
            runs = (evidence_cache.lookup(cache, digest, name, fmt, tz)
                    if cached and stamp is None else None)
            if runs is None:
                if progress:
                    progress(name, f"parsing {len(data) / 1e6:,.1f} MB")
                try:
                    runs = parse_bench(data if stamp is None else
                                       f"# scraped_at: {stamp}\n".encode() + data,
                                       path=name, fmt=tool, tz=tz)
                except ParseError as err:
                    if not skip_bad:
                        raise
                    notes.append(f"{name}{UNREADABLE}{err}")
                    continue
                if stamp is None:
                    evidence_cache.remember(cache, digest, name, fmt, tz, runs)
                else:
                    notes.append(f"{name}: scrape time {stamp} given on the command line "
                                 "(--scraped-at)")
            elif progress:
                progress(name, "read from the store (parsed before, same sha256)")
            if keep:  # a file that could not be read leaves nothing in the store
                digest = keep(path, data)
            parsed.append((path, tool, runs))
            files.append((name, digest))
            roots[name] = Path(root)
    if len(parsed) > 1:
        parsed, files = _once(parsed, files, notes)
    runs = _pair(parsed, notes)
    settings = {(r.path, r.run_index): configuration(r, roots.get(r.path)) for r in runs}
    return Loaded(runs, files, notes, settings)


def run_content(runs: Sequence[BenchRun]) -> str:
    """What a file's runs say, whatever file they came from: the sha256 of every field but
    the path and the notes (a reader may name the file in them), the requests by row hash.
    Two files of one benchmark in two formats (GuideLLM JSON and YAML) give the same."""
    digest = hashlib.sha256()
    for run in runs:
        fields = {f.name: getattr(run, f.name) for f in fields_of(run)
                  if f.name not in ("path", "notes", "requests")}
        digest.update(repr(sorted((k, _plain(v)) for k, v in fields.items())).encode())
        if run.requests is not None:
            digest.update(repr(run.requests.schema).encode())
            digest.update(run.requests.hash_rows(seed=0).to_numpy().tobytes())
    return digest.hexdigest()


def _plain(value: Any) -> Any:
    return sorted(value.items()) if isinstance(value, Mapping) else value


def _scrape_time(path: Path, tool: str | None, data: bytes, given: Sequence[str],
                 used: list[int]) -> str | None:
    """The `--scraped-at` time for a raw vLLM /metrics file without a scrape-time comment."""
    if not given or tool != "vllm-metrics" or _SCRAPED.search(
            data[:HEAD_BYTES].decode("utf-8", "replace")):
        return None
    named = dict(g.split("=", 1) for g in given if "=" in g)
    if path.name in named:
        return named[path.name]
    plain = [g for g in given if "=" not in g]
    if used[0] < len(plain):
        used[0] += 1
        return plain[used[0] - 1]
    return None


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
    return _pair_by_content(out, notes)


def _pair_by_content(runs: list[BenchRun], notes: list[str]) -> list[BenchRun]:
    """Join the halves of a two-file run (AIPerf, LLMPerf) whose names do not pair (renamed
    files): in one folder, a per-request half and a summary half of one tool whose counts
    agree (successful requests = the summary's completed), when exactly one of each fits;
    a half left without a partner is said in the notes."""
    halves = [r for r in runs if getattr(FORMATS.get(r.tool), "partner", None) is not None
              and r.tool in _TWO_FILE]
    if not halves:
        return runs
    detail = [r for r in halves if not r.aggregate_only and not r.reported]
    summary = [r for r in halves if r.aggregate_only]
    joined: dict[int, BenchRun] = {}
    dropped: set[int] = set()
    for d in detail:
        assert d.requests is not None
        ok = int(d.requests["ok"].sum())
        fits = [s for s in summary if id(s) not in dropped and s.tool == d.tool
                and Path(s.path).parent == Path(d.path).parent
                and s.reported.get("completed") == ok]
        if len(fits) == 1:
            joined[id(d)] = FORMATS[d.tool].combine(d, fits[0])
            dropped.add(id(fits[0]))
            notes.append(f"warning: {d.path} and {fits[0].path} read as one run, paired by "
                         f"content ({ok} successful requests in both), not by name")
        else:
            notes.append(f"warning: {d.path} has no summary file beside it (by name or by "
                         "content): read alone" + (f" ({len(fits)} summaries fit)" if fits
                                                   else ""))
    for s in summary:
        if id(s) not in dropped:
            notes.append(f"warning: {s.path} has no per-request file beside it (by name or by "
                         "content): aggregates only")
    return [joined.get(id(r), r) for r in runs if id(r) not in dropped]


_SCRAPED = re.compile(SCRAPE_TIME_COMMENT, re.MULTILINE)

#: how a file of a folder that cannot be read is noted, after its name (it is skipped)
UNREADABLE = ": skipped, it could not be read: "

#: the formats whose one run may come as two files (per-request + summary)
_TWO_FILE = ("llmperf", "aiperf")


#: how a candidate whose evidence holds several configurations takes one
CHOICES = ("goodput_per_gpu", "goodput")


def _require_runs(loaded: Loaded, source: str) -> None:
    """An empty or mistyped folder is a bad input (as a power folder without a log is): a
    ParseError naming it, and how many of its files were skipped."""
    if not loaded.runs:
        skipped = sum("skipped" in n for n in loaded.notes)
        raise ParseError("bench", source, "files", "no benchmark run found" + (
            f" ({skipped} file(s) skipped: not a benchmark format this project reads)"
            if skipped else "") + "; give benchmark result files or folders of them "
            "(docs/evidence.md lists the formats), or force a format with format = ... in "
            "the proposal or --format on the command line")


def inspect(paths: Sequence[Path], slo: Slo, *, fmt: str | None = None, tz: str | None = None,
            window: tuple[float, float] | None = None, choose: str = "goodput_per_gpu",
            gpu_count: int | None = None, cache: Any | None = None) -> dict[str, Any]:
    return loaded_report(paths, slo, fmt=fmt, tz=tz, window=window, choose=choose,
                         gpu_count=gpu_count, cache=cache)[1]


def loaded_report(paths: Sequence[Path], slo: Slo, *, fmt: str | None = None,
                  tz: str | None = None, window: tuple[float, float] | None = None,
                  choose: str = "goodput_per_gpu", gpu_count: int | None = None,
                  scraped_at: Sequence[str] = (), cache: Any | None = None
                  ) -> tuple[Loaded, dict[str, Any]]:
    """The runs of `paths` and their `inspect` report; paths that hold no run (an empty
    folder, one of files no reader recognises) are a ParseError naming them."""
    loaded = load_runs(paths, fmt=fmt, tz=tz, cached=window is None, scraped_at=scraped_at,
                       cache=cache)
    if paths:
        _require_runs(loaded, ", ".join(map(str, paths)))
    return loaded, build_report(loaded, slo, window, choose=choose, gpu_count=gpu_count)


def build_report(loaded: Loaded, slo: Slo, window: tuple[float, float] | None, *,
                 choose: str = "goodput_per_gpu", gpu_count: int | None = None
                 ) -> dict[str, Any]:
    """`inspect` for runs already loaded. Runs are grouped by configuration; each group has
    its own sweep and operating point under "configurations" (in first-seen order, the best
    under the SLO by `choose` marked `best`); "sweep" is the best configuration's (all runs'
    when there is one configuration)."""
    if choose not in CHOICES:
        raise ValueError(f"choose must be one of {', '.join(CHOICES)}, got {choose!r}")
    runs = [run_metrics(run, slo, window) for run in loaded.runs]
    groups: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for i, (m, run) in enumerate(zip(runs, loaded.runs, strict=True)):
        m["sha256"] = dict(loaded.files).get(run.path)
        settings = loaded.settings_of(run)
        m["configuration"] = dict(settings)
        m["configuration_label"] = label(settings)
        groups.setdefault(key(settings), []).append(i)
    configs = []
    for members in groups.values():
        sub = [runs[i] for i in members]
        sweep = sweep_metrics(sub, slo)
        point = _config_point([loaded.runs[i] for i in members], sub, sweep, slo)
        settings = runs[members[0]]["configuration"]
        own = gpus(settings)
        count = own if own is not None else gpu_count
        tokens = point.tokens_per_s
        configs.append({
            "label": runs[members[0]]["configuration_label"], "settings": settings,
            "gpus": own, "gpus_assumed": count if own is None else None,
            "runs": members, "sweep": sweep,
            "load_variable": None if sweep is None else sweep["load_variable"],
            "knee": None if sweep is None else (
                sweep["knee_concurrency"] if sweep["knee_concurrency"] is not None
                else sweep["knee_request_rate"]),
            "knee_concurrency": None if sweep is None else sweep["knee_concurrency"],
            "run_count": len(members),
            "tokens_per_s": tokens,
            "tokens_per_s_per_gpu": None if tokens is None or not count else tokens / count,
            "output_tokens_per_s": point.output_tokens_per_s,
            "no_goodput_reason": point.no_goodput_reason,
            "best": False,
        })
    best = _best(configs, choose)
    if best is not None:
        configs[best]["best"] = True
    sweep = configs[best if best is not None else 0]["sweep"] if configs else None
    if sweep is not None:
        sweep = {**sweep, "notes": list(sweep["notes"])}
    if len(configs) > 1 and sweep is not None:
        sweep["notes"].append(f"the sweep of configuration {configs[best or 0]['label']!r}, "
                              f"the best of {len(configs)} under the SLO by {choose}")
    if sweep is not None and loaded.notes:
        sweep["notes"] = [*sweep["notes"], *loaded.notes]
    elif loaded.notes and runs:
        runs[0]["notes"] = [*runs[0]["notes"], *loaded.notes]
    return {"runs": runs, "sweep": sweep, "configurations": configs, "choose": choose}


def _best(configs: list[dict[str, Any]], choose: str) -> int | None:
    """The index of the configuration with the highest positive goodput (per GPU under
    `goodput_per_gpu`, where one whose GPU count is unknown counts its total), or None."""
    def score(c: dict[str, Any]) -> float:
        if choose == "goodput_per_gpu" and c["tokens_per_s_per_gpu"] is not None:
            return float(c["tokens_per_s_per_gpu"])
        return float(c["tokens_per_s"])

    ranked = [i for i, c in enumerate(configs) if c["tokens_per_s"]]
    return max(ranked, key=lambda i: score(configs[i])) if ranked else None


def throughput_from_evidence(path: Path, slo: Slo, *, fmt: str | None = None,
                             tz: str | None = None, choose: str = "goodput_per_gpu",
                             gpu_count: int | None = None, cache: Any | None = None
                             ) -> ThroughputEvidence:
    loaded = load_runs([Path(path)], fmt=fmt, tz=tz, cache=cache)
    report = build_report(loaded, slo, None, choose=choose, gpu_count=gpu_count)
    return operating_point(loaded, report, slo, str(path))


def operating_point(loaded: Loaded, report: dict[str, Any], slo: Slo, source: str
                    ) -> ThroughputEvidence:
    """The throughput the scorecard uses from an `inspect` report of `loaded` runs: the
    configuration marked best (the only one, or the first when none gives goodput), and in it
    the knee of its sweep, else the run (or the mean of runs at one level)."""
    _require_runs(loaded, source)
    configs = report.get("configurations") or [
        {"runs": list(range(len(loaded.runs))), "sweep": report["sweep"], "best": True,
         "label": "no settings recorded", "settings": {}, "gpus": None}]
    chosen_config = next((c for c in configs if c["best"]), configs[0])
    members = chosen_config["runs"]
    notes: list[str] = list(loaded.notes)
    choose = report.get("choose", "goodput_per_gpu")
    if len(configs) > 1:
        notes.append(_choice_note(configs, chosen_config, choose))
    elif set(chosen_config["settings"]) - {"model"}:
        notes.append(f"configuration: {chosen_config['label']}")
    point = _config_point([loaded.runs[i] for i in members],
                          [report["runs"][i] for i in members], chosen_config["sweep"], slo)
    return replace(
        point, source_path=source, files=tuple(loaded.files), notes=(*notes, *point.notes),
        configuration=dict(chosen_config["settings"]),
        configuration_label=chosen_config["label"],
        configuration_gpus=chosen_config["gpus"],
        configurations=tuple({k: v for k, v in c.items() if k not in ("sweep", "runs")}
                             for c in configs),
        choose=choose, file_dates=run_ends(loaded.runs))


def run_ends(runs: Sequence[BenchRun]) -> dict[str, str]:
    """Each file's latest run end in UTC (ISO 8601 to the second, `Z`), for the files whose
    runs record their window in UTC (vLLM with its `tz`, GuideLLM, AIPerf, ...)."""
    latest: dict[str, datetime] = {}
    for run in runs:
        end = run.ended_at_utc
        if end is None:
            continue
        end = end.astimezone(UTC) if end.tzinfo else end.replace(tzinfo=UTC)
        if run.path not in latest or end > latest[run.path]:
            latest[run.path] = end
    return {path: end.strftime("%Y-%m-%dT%H:%M:%SZ") for path, end in latest.items()}


def _choice_note(configs: list[dict[str, Any]], chosen: dict[str, Any], choose: str) -> str:
    def figure(c: dict[str, Any]) -> str:
        if c["tokens_per_s"] is None:
            return f"{c['label']}: no goodput"
        per = c["tokens_per_s_per_gpu"]
        gpus_text = (f" on {c['gpus']} GPU(s)" if c["gpus"] is not None else
                     f" on {c['gpus_assumed']} GPU(s) assumed (the candidate's gpu_count)"
                     if c["gpus_assumed"] else "")
        return (f"{c['label']}: {c['tokens_per_s']:.4g} tokens/s{gpus_text}"
                + ("" if per is None else f", {per:.4g} per GPU"))

    others = [figure(c) for c in configs if c is not chosen]
    if not chosen["best"]:
        return (f"{len(configs)} configurations in the evidence, kept apart; none gives goodput "
                f"under the SLO (by {choose}); shown: {figure(chosen)}; others: "
                + "; ".join(others))
    return (f"{len(configs)} configurations in the evidence, kept apart (runs pooled only "
            f"within one); the best under the SLO by {choose.replace('_', ' ')} is "
            f"{figure(chosen)}; others: " + "; ".join(others))


def _config_point(config_runs: list[BenchRun], metrics: list[dict[str, Any]],
                  sweep: dict[str, Any] | None, slo: Slo, source: str = "",
                  files: tuple[tuple[str, str], ...] = ()) -> ThroughputEvidence:
    """The operating point of one configuration's runs: the knee of their sweep, else the run
    (or the mean of runs at one level)."""
    notes: list[str] = []
    knee_said = ""
    chosen = list(zip(metrics, config_runs, strict=True))
    if sweep is not None and sweep["load_variable"] is not None:
        notes.extend(sweep["notes"])
        key = "concurrency" if sweep["load_variable"] == "concurrency" else "request_rate"
        knee = sweep["knee_concurrency"] if key == "concurrency" else sweep["knee_request_rate"]
        if knee is None:
            notes.append("no knee: no level of the sweep meets the SLO")
            best = max(metrics, key=lambda m: m["output_tokens_per_s"] or 0.0)
            judged = all(m["passed"] is not None for m in metrics)
            reason, level_checks = _no_knee_reason(metrics, sweep, key, slo)
            if judged and not any(m["passed"] for m in metrics):
                reason = no_goodput_reason(metrics, slo)
            return ThroughputEvidence(
                None, "measured", best["output_tokens_per_s"], source, files,
                slo=slo, notes=tuple(notes), no_goodput_reason=reason,
                checks=(*level_checks, *_NO_POINT))
        chosen = [(m, r) for m, r in chosen if m[key] is not None and float(m[key]) == knee]
        notes.append(f"operating point: the knee at {key} {knee}")
        knee_said = (f"the knee, the highest load level meeting the SLO "
                     f"({key.replace('_', ' ')} {knee:g}): ")
    else:
        if len(chosen) > 1:
            notes.append(f"{len(chosen)} runs at one load level: their mean is used")
        zero = all(m["passed"] == 0 for m in metrics)  # no request passed: the reason below
        level_checks = slo_checks(metrics, slo)
        short = None if zero else operating_point_shortfall(level_checks)
        if short is not None:
            return ThroughputEvidence(
                None, "measured", _mean([m["output_tokens_per_s"] for m in metrics]), source,
                files, slo=slo, notes=(*notes, short), no_goodput_reason=short,
                checks=(*level_checks, *run_checks(metrics)))
    # at a knee, the sweep's own pooled figure (the mean over the level's runs)
    tokens = (sweep["knee_tokens_per_s"] if sweep is not None and sweep["load_variable"]
              is not None else _mean([m["token_goodput_per_s"] for m, _ in chosen]))
    raw = _mean([m["output_tokens_per_s"] for m, _ in chosen])
    for m, _ in chosen:
        if m["token_goodput_per_s"] is None and m["goodput_null_reason"]:
            notes.append(f"{m['path']}: {m['goodput_null_reason']}")
        # how a summary-only run's goodput was had (or why MLPerf's was not used as it is)
        notes.extend(f"{m['path']}: {n}" for n in m["notes"]
                     if n.startswith(("basis = ", "MLPerf Server result not used",
                                      "token basis: ", "Little's law: ")))
    m0, r0 = chosen[0]
    one = len(chosen) == 1
    zero = tokens == 0 and all(m["passed"] == 0 for m, _ in chosen)
    window_s = m0["window_s"] if one else None
    grade = ("estimated" if any((m["littles_law"] or {}).get("within") is False
                                for m, _ in chosen) else
             "production" if all(r.tool == "vllm-metrics" for _, r in chosen) else
             "reference" if all(r.tool == "inferencex" for _, r in chosen) else "measured")
    return ThroughputEvidence(
        tokens_per_s=tokens, grade=grade, output_tokens_per_s=raw, source_path=source,
        files=files,
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
        no_goodput_reason=no_goodput_reason([m for m, _ in chosen], slo) if zero else None,
        input_per_output=_input_per_output([m for m, _ in chosen]),
        ttft_p50_s=_mean([m["ttft_p50_s"] for m, _ in chosen]),
        tpot_p50_s=_mean([m["tpot_p50_s"] for m, _ in chosen]),
        checks=(*[(name, outcome, knee_said + detail) for name, outcome, detail
                  in slo_checks([m for m, _ in chosen], slo)],
                *run_checks([m for m, _ in chosen])),
    )


#: the checks of an operating point when there is none
_NO_POINT: tuple[Check, ...] = tuple(
    (name, NOT_CHECKED, "no load level is an operating point")
    for name in ("token basis", "Little's law"))


def _no_knee_reason(metrics: list[dict[str, Any]], sweep: dict[str, Any], key: str,
                    slo: Slo) -> tuple[str, list[Check]]:
    """Why no level of a sweep is an operating point, and the SLO checks of the level it is
    said at: no level reaches the attainment (said at the lowest level tested), or the levels
    that reach it are over a p99 bound (said at the lowest of them)."""
    attained = [lv["load"] for lv in sweep["levels"] if lv["attainment"] is not None
                and lv["attainment"] >= slo.attainment - TOLERANCE_S]
    if attained:
        bounds = ", ".join(f"slo.{f} {getattr(slo, f):g} ms" for f, _, _, _ in p99_bounds(slo))
        head = (f"no load level of the sweep meets the SLO's p99 bounds ({bounds}): "
                f"{len(attained)} level(s) reach the attainment {slo.attainment:g} but are "
                "over a bound")
        at, where = min(attained), "the lowest of them"
    else:
        head = f"no load level of the sweep reaches the SLO's attainment {slo.attainment:g}"
        at = min(float(m[key]) for m in metrics if m[key] is not None)
        where = "the lowest level tested"
    level = slo_checks([m for m in metrics if m[key] is not None and float(m[key]) == at], slo)
    short = operating_point_shortfall(level)
    return head + ("" if short is None else f"; at {where}, {short}"), level


def _input_per_output(metrics: list[dict[str, Any]]) -> float | None:
    inputs = [m.get("passed_input_tokens") for m in metrics]
    outputs = sum(m.get("passed_output_tokens") or 0 for m in metrics)
    if any(i is None for i in inputs) or not outputs:
        return None
    return sum(i for i in inputs if i is not None) / outputs


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


def add_bench_files(con: Any, paths: Sequence[Path], *, fmt: str | None = None,
                    tz: str | None = None, notes: list[str] | None = None,
                    progress: Callable[[str, str], None] | None = None,
                    advance: Callable[[str, int, int], None] | None = None,
                    said: list[str] | None = None) -> list[tuple[str, Any]]:
    """`notes` (when given) receives the files of folders that could not be read and were
    skipped; without it such a file raises its ParseError. `said` receives the files whose
    runs an earlier file gave (one benchmark in two formats: its raw snapshot kept, its runs
    not loaded twice)."""
    ensure_tables(con, EVIDENCE_TABLES)
    # each file's bytes are kept as they are read (raw snapshots, like a fetch's): read once;
    # the parsed runs go to the store's cache, so later commands do not parse the file again
    loaded = load_runs(paths, fmt=fmt, tz=tz, keep=lambda path, data: save_snapshot(
        con, data, source="bench", url=path.resolve().as_uri(),
        beside_over=snapshots.BESIDE_BYTES),  # a big file's bytes beside the store
        skip_bad=notes is not None, progress=progress, cache=con, advance=advance)
    if notes is not None:
        notes.extend(n for n in loaded.notes if UNREADABLE in n)
    if said is not None:  # a file whose runs another file gave: kept, not loaded again
        said.extend(n for n in loaded.notes if n.endswith(": counted once"))
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
