"""GuideLLM `benchmarks.json` reports, v0.3 to v0.8, and the same report written as YAML
(`--output kind=yaml`, read with PyYAML, imported only for such a file; the same keys as the
JSON).

Layouts: <=0.3 `{"benchmarks": [...]}` with `args` per benchmark; 0.4-0.6 a top-level `args`
and `config` per benchmark; >=0.7 `metadata.version = 2` and a top-level `config`. Each
benchmark becomes a run: its load is the strategy (`synchronous` = concurrency 1,
`concurrent` = `streams`, `constant`/`poisson` = `rate` req/s; `throughput` has neither), its
window `start_time`..`end_time` (epoch s, = measure_start/measure_end in >=0.4), its counts
`request_totals` (successful, errored, incomplete, total).

Per-request records (`requests.successful/errored/incomplete`) give sent, first and last token
and end times (epoch s), so TTFT and TPOT are ours; GuideLLM keeps no token timestamps, so the
gaps are unknown (`itl_definition = "request_mean"`: its `inter_token_latency_ms` is our TPOT).
When the lists were sampled (`sample_size`) or stripped, they do not cover the window: the run
is aggregate-only, said in the notes. Aggregates: TTFT percentiles from
`time_to_first_token_ms.successful`, TPOT from `inter_token_latency_ms.successful` (which
GuideLLM weights by tokens: count = sum of N - 1, so its percentiles are token-weighted).
`time_per_output_token_ms` includes the TTFT in >=0.4 and is not used.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from sources.bench.jsondoc import decode_text, head, integer, json_values, number
from sources.bench.run import BenchRun, conform
from sources.errors import ParseError

TOOL = "guidellm"

_GROUPS = ("successful", "errored", "incomplete")
_QUANTILES = {"p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes)
    if _is_yaml(top):
        return (b"guidellm" in top or b"request_totals:" in top
                or b"scheduler_metrics:" in top)
    return top.lstrip().startswith(b"{") and b'"benchmarks"' in top and (
        b'"generative_benchmark"' in top or b'"guidellm_version"' in top
        or b'"scheduler_metrics"' in top or b'"request_totals"' in top
        or b'"run_stats"' in top or (b'"args"' in top and b'"strategy"' in top))


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    if _is_yaml(head(data)):
        doc = _yaml_doc(data, path)
    else:
        values = json_values(data, TOOL, path)
        doc = values[0]
        if len(values) != 1 or not isinstance(doc, dict):
            raise ParseError(TOOL, path, "top level", "expected one JSON object")
    benchmarks = doc.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise ParseError(TOOL, path, "key 'benchmarks'", "missing or not a list")
    version = _version(doc)
    runs = []
    for i, bench in enumerate(benchmarks):
        if bench is None:
            continue
        if not isinstance(bench, dict):
            raise ParseError(TOOL, path, f"benchmarks[{i}]", "expected an object")
        runs.append(_run(bench, i, path, version))
    if not runs:
        raise ParseError(TOOL, path, "key 'benchmarks'", "no benchmark in the report")
    return runs


#: a top-level `benchmarks:` key of a YAML report (`--output kind=yaml`; GuideLLM dumps its
#: keys sorted, so it is the first line)
_YAML_KEY = re.compile(rb"(?m)^benchmarks:")


def _is_yaml(top: bytes) -> bool:
    """A YAML report: not a JSON object, with a top-level `benchmarks:` key in its head."""
    return not top.lstrip().startswith(b"{") and bool(
        _YAML_KEY.search(top))


def _yaml_doc(data: bytes, path: str) -> dict[str, Any]:
    """The YAML report as the JSON one's object (PyYAML's safe loader, aliases refused: a
    report has none, and a file of nested aliases could expand without bound)."""
    import yaml  # here, not with the module: every command imports the readers

    class _Loader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise ParseError(TOOL, path, f"line {mark.line + 1}",
                                 "YAML alias (*name): not in a GuideLLM report, refused")
            return super().compose_node(parent, index)

    text = decode_text(data, TOOL, path)
    try:
        doc = yaml.load(text, Loader=_Loader)  # a SafeLoader
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else "(file)"
        raise ParseError(TOOL, path, where, f"invalid YAML: {getattr(err, 'problem', err)}"
                         ) from None
    if not isinstance(doc, dict):
        raise ParseError(TOOL, path, "top level", "expected one YAML mapping")
    return doc


def _version(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata")
    if isinstance(meta, dict) and meta.get("guidellm_version"):
        return str(meta["guidellm_version"])
    if isinstance(meta, dict):
        return "0.5-0.6"
    return "0.4" if "args" in doc else "<=0.3"


def _dig(d: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _run(b: dict[str, Any], i: int, path: str, version: str) -> BenchRun:
    where = f"benchmarks[{i}]"
    notes = [f"GuideLLM report layout {version}"]
    strategy = _dig(b, "config", "strategy") or _dig(b, "args", "strategy") or {}
    kind = strategy.get("type_") if isinstance(strategy, dict) else None
    concurrency: int | None = None
    rate: float | None = None
    if kind == "synchronous":
        concurrency = 1
    elif kind == "concurrent":
        concurrency = integer(strategy.get("streams"), TOOL, path, f"{where}.strategy.streams")
    elif kind in ("constant", "poisson"):
        rate = number(strategy.get("rate"), TOOL, path, f"{where}.strategy.rate")
    elif kind == "throughput":
        notes.append("throughput strategy: as many requests as the client can send, no "
                     "fixed concurrency or rate")
    start = number(b.get("start_time"), TOOL, path, f"{where}.start_time")
    end = number(b.get("end_time"), TOOL, path, f"{where}.end_time")
    if start is None or end is None:
        raise ParseError(TOOL, path, f"{where}.start_time", "benchmark has no start/end time")
    if end < start:
        raise ParseError(TOOL, path, f"{where}.end_time", "ends before it starts")
    totals = _dig(b, "metrics", "request_totals") or b.get("request_totals") or {}
    if not isinstance(totals, dict):
        raise ParseError(TOOL, path, f"{where}.request_totals", "expected an object")
    reported: dict[str, float | int | None] = {
        "completed": integer(totals.get("successful"), TOOL, path, f"{where}.request_totals"),
        "failed": integer(totals.get("errored"), TOOL, path, f"{where}.request_totals"),
        "incomplete": integer(totals.get("incomplete"), TOOL, path, f"{where}.request_totals"),
        "offered": integer(totals.get("total"), TOOL, path, f"{where}.request_totals"),
        "duration_s": end - start,
    }
    raw_metrics = b.get("metrics")
    metrics: dict[str, Any] = raw_metrics if isinstance(raw_metrics, dict) else {}
    tokens = _dig(metrics, "output_token_count", "successful", "total_sum")
    total_tokens = number(tokens, TOOL, path, f"{where}.metrics.output_token_count")
    if total_tokens is not None:
        reported["total_output_tokens"] = int(total_tokens)
        if end > start:
            reported["output_tokens_per_s"] = total_tokens / (end - start)
    if reported["completed"] is not None and end > start:
        reported["request_throughput_per_s"] = reported["completed"] / (end - start)
    for name, key, scale in (("ttft", "time_to_first_token_ms", 1e-3),
                             ("tpot", "inter_token_latency_ms", 1e-3),
                             ("e2e", "request_latency", 1.0)):
        _summary(_dig(metrics, key, "successful"), name, scale, reported, path,
                 f"{where}.metrics.{key}")
    notes.append("the TPOT percentiles GuideLLM reports are its inter_token_latency_ms, "
                 "weighted by tokens (count = sum of N - 1), not per request")
    requests = _requests(b, i, path, reported, notes)
    return BenchRun(
        tool=TOOL, path=path, run_index=i, requests=requests, reported=reported,
        concurrency=concurrency, request_rate_per_s=rate,
        window_start_s=start, window_end_s=end, duration_s=end - start,
        started_at_utc=datetime.fromtimestamp(start, UTC),
        ended_at_utc=datetime.fromtimestamp(end, UTC), clock_uncertainty_s=0.0,
        itl_definition="request_mean", tpot_definition="last_minus_first_over_n_minus_1",
        model=_str(_dig(b, "config", "backend", "model") or _dig(b, "worker", "backend_model")),
        params={"strategy": str(kind)} if kind else {}, notes=tuple(notes),
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _summary(s: Any, name: str, scale: float, reported: dict[str, float | int | None],
             path: str, where: str) -> None:
    if not isinstance(s, dict):
        return
    count = integer(s.get("count"), TOOL, path, f"{where}.count")
    reported[f"{name}_count"] = count
    if not count:
        return  # GuideLLM writes 0.0 statistics for an empty group
    raw_pct = s.get("percentiles")
    pct: dict[str, Any] = raw_pct if isinstance(raw_pct, dict) else {}
    for key in _QUANTILES:
        raw = pct.get(key, s.get("median") if key == "p50" else None)
        value = number(raw, TOOL, path, f"{where}.percentiles.{key}")
        reported[f"{name}_{key}_s"] = None if value is None else value * scale
    mean = number(s.get("mean"), TOOL, path, f"{where}.mean")
    reported[f"{name}_mean_s"] = None if mean is None else mean * scale


def _requests(b: dict[str, Any], i: int, path: str, reported: dict[str, float | int | None],
              notes: list[str]) -> pl.DataFrame | None:
    groups = b.get("requests")
    if not isinstance(groups, dict):
        notes.append("no per-request lists: aggregate-only")
        return None
    lists = {g: groups.get(g) or [] for g in _GROUPS}
    for g, items in lists.items():
        if not isinstance(items, list):
            raise ParseError(TOOL, path, f"benchmarks[{i}].requests.{g}", "expected a list")
    kept = {g: len(lists[g]) for g in _GROUPS}
    totals = {"successful": reported["completed"], "errored": reported["failed"],
              "incomplete": reported["incomplete"]}
    if sum(kept.values()) == 0:
        notes.append("per-request lists are empty (stripped, or sample_size 0): aggregate-only")
        return None
    short = [g for g in _GROUPS if totals[g] is not None and kept[g] < totals[g]]  # type: ignore
    if short:
        notes.append("per-request lists are a sample (" + ", ".join(
            f"{g} {kept[g]} of {totals[g]}" for g in short) + "): they do not cover the "
            "window, so the run is treated as aggregate-only")
        return None
    rows = [_record(r, g, i, j, path) for g in _GROUPS for j, r in enumerate(lists[g])]
    raw = pl.DataFrame(rows, schema={
        "request_id": pl.String(), "sent": pl.Float64(), "first": pl.Float64(),
        "last": pl.Float64(), "done": pl.Float64(), "out": pl.Int64(), "inp": pl.Int64(),
        "group": pl.String(), "error": pl.String()}, orient="row")
    ok = pl.col("group") == "successful"
    frame = raw.select(
        request_id=pl.col("request_id"),
        sent_s=pl.col("sent"),
        done_s=pl.col("done"),
        ttft_s=pl.when(ok).then(pl.col("first") - pl.col("sent")),
        tpot_s=pl.when(ok & (pl.col("out") > 1)).then(
            (pl.col("last") - pl.col("first")) / (pl.col("out") - 1)),
        e2e_s=pl.when(ok).then(pl.col("done") - pl.col("sent")),
        output_tokens=pl.col("out"),
        input_tokens=pl.col("inp"),
        ok=ok,
        incomplete=pl.col("group") == "incomplete",
        error=pl.col("error"),
    )
    return conform(frame)


def _record(r: Any, group: str, i: int, j: int, path: str) -> tuple[Any, ...]:
    where = f"benchmarks[{i}].requests.{group}[{j}]"
    if not isinstance(r, dict):
        raise ParseError(TOOL, path, where, "expected a request object")
    timings = _dig(r, "info", "timings")
    if isinstance(timings, dict):  # >= 0.4
        sent = timings.get("request_start", r.get("request_start_time"))
        first = timings.get("first_token_iteration")
        last = timings.get("last_token_iteration")
        done = timings.get("request_end", r.get("request_end_time"))
        error = _dig(r, "info", "error")
        out = r.get("output_tokens", _dig(r, "output_metrics", "text_tokens"))
        inp = r.get("prompt_tokens", _dig(r, "input_metrics", "text_tokens"))
        rid = r.get("request_id") or _dig(r, "info", "request_id")
    else:  # <= 0.3
        sent, first, last, done = (r.get("start_time"), r.get("first_token_time"),
                                   r.get("last_token_time"), r.get("end_time"))
        error, out, inp, rid = (r.get("error"), r.get("output_tokens"), r.get("prompt_tokens"),
                                r.get("request_id"))
    values = [number(v, TOOL, path, f"{where}.{k}") for k, v in
              (("sent", sent), ("first_token", first), ("last_token", last), ("end", done))]
    if values[0] is None and group == "successful":
        raise ParseError(TOOL, path, where, "successful request has no start time")
    return (str(rid) if rid is not None else f"{group}-{j}", *values,
            integer(out, TOOL, path, f"{where}.output_tokens"),
            integer(inp, TOOL, path, f"{where}.prompt_tokens"), group,
            None if error is None else str(error))
