"""vLLM `/metrics` as a Prometheus HTTP API `query_range` export: production evidence (grade
`production`), the same run the text scrapes give (`sources.bench.aggregates.vllm_metrics`).

The file holds the JSON answer `{"status": "success", "data": {"resultType": "matrix",
"result": [{"metric": {"__name__": "vllm:...", ...}, "values": [[unix s, "value"], ...]}]}}`
of one query (e.g. `curl -G .../api/v1/query_range --data-urlencode
'query={__name__=~"vllm:.*"}' -d start=... -d end=... -d step=15s > vllm.json`), or several
answers (a JSON list of them, or one after the other as `curl ... >> vllm.json` leaves them).
Series of counters (`_total`), histogram buckets (`_bucket`, with `le`), `_count` and `_sum`
are read; gauges, `_created` and series of other exporters are ignored; a series saved twice
(overlapping queries) is merged point by point.

Each server (the `instance` label; one server when there is none) is one run, its engines and
models summed as in the text scrapes. Its window runs from its first to its last sample; each
series' increase over it is Prometheus' `increase()` without extrapolation: the sum of the
rises between consecutive samples, a fall (a counter reset, the server restarted) counting
the value after it as the rise, so a restart mid-window loses nothing but what the server did
between its last scrape before and the restart. A series counts from its own first sample. The
increases become figures (throughput, completed/failed/aborted, histogram percentiles) in the
text reader's `window_run`. An answer with status "error" is an error quoting Prometheus'
message (made safe to show); a value that is not a number, or times that do not increase, is an
error naming the document, the series and the point.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

from sources import prometheus
from sources.bench.aggregates.vllm_metrics import (
    COUNTED,
    ESTIMATES_NOTE,
    Counts,
    Key,
    window_run,
)
from sources.bench.jsondoc import head
from sources.bench.run import BenchRun
from sources.errors import ParseError
from sources.text import one_line

TOOL = "vllm-metrics-range"
_NAME = re.compile(rb'"__name__"\s*:\s*"vllm:')
_SERVER = "instance"


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes)
    return (top.lstrip()[:1] in (b"{", b"[") and b'"resultType"' in top
            and b'"matrix"' in top and _NAME.search(top) is not None)


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    series = _series(data, path)
    servers: dict[str | None, dict[Key, list[tuple[float, float]]]] = defaultdict(dict)
    for key, points in series.items():
        servers[dict(key[1]).get(_SERVER)][key] = points
    runs = []
    ordered = sorted(servers.items(), key=lambda kv: (kv[0] is not None, kv[0] or ""))
    for index, (server, members) in enumerate(ordered):
        where = f"{_SERVER} {server!r}" if server is not None else "data.result"
        if not any(name == "vllm:generation_tokens_total" for name, _ in members):
            raise ParseError(TOOL, path, where, "no vllm:generation_tokens_total series: "
                             "query it too (or {__name__=~\"vllm:.*\"})")
        t0 = min(points[0][0] for points in members.values())
        t1 = max(points[-1][0] for points in members.values())
        if t1 <= t0:
            raise ParseError(TOOL, path, where, "one sample time only: the window is empty "
                             "(query a range, not an instant)")
        notes = ["vLLM /metrics from a Prometheus query_range export: server-side figures "
                 "(no network, no client queue)", ESTIMATES_NOTE,
                 f"window: first to last sample of {len(members)} series"
                 + (f" of {_SERVER} {server}" if server is not None else "")]
        resets = sorted({name for (name, _), points in members.items() if _resets(points)})
        if resets:
            notes.append(f"counter resets (server restart?) counted as increase() does: "
                         f"{', '.join(resets)}")
        short = [name for (name, _), points in members.items()
                 if points[0][0] - t0 > 1.0 or t1 - points[-1][0] > 1.0]
        if short:
            notes.append(f"{len(short)} series cover less than the window (first: {short[0]}): "
                         "each counts from its own first to its own last sample")
        delta: Counts = {key: increase(points) for key, points in members.items()}
        models = sorted({v for _, labels in members for k, v in labels if k == "model_name"})
        runs.append(window_run(delta, t0=t0, t1=t1, models=models, notes=notes, path=path,
                               run_index=index))
    return runs


def increase(points: list[tuple[float, float]]) -> float:
    """A counter's increase over its samples (time-ordered): the rises between consecutive
    values, a fall (a reset to zero) counting the value after it as the rise, as Prometheus'
    `increase()` corrects resets (without its extrapolation to the range's ends)."""
    total = 0.0
    for (_, before), (_, after) in pairwise(points):
        total += after - before if after >= before else after
    return total


def _resets(points: list[tuple[float, float]]) -> bool:
    return any(after < before for (_, before), (_, after) in pairwise(points))


def _series(data: bytes, path: str) -> dict[Key, list[tuple[float, float]]]:
    merged: dict[Key, dict[float, float]] = {}
    for where, entry in prometheus.series(data, TOOL, path):
        _add(merged, entry, where, path)
    if not any(merged.values()):
        raise ParseError(TOOL, path, "data.result", "no vllm: counter or histogram series "
                         "with samples")
    return {key: sorted(points.items()) for key, points in merged.items() if points}


def _add(merged: dict[Key, dict[float, float]], entry: object, where: str, path: str) -> None:
    labels = entry.get("metric") if isinstance(entry, dict) else None
    if not isinstance(entry, dict) or not isinstance(labels, dict):
        raise ParseError(TOOL, path, f"{where}.metric", "expected an object of labels")
    name = labels.get("__name__")
    if name is None:
        raise ParseError(TOOL, path, f"{where}.metric", "no __name__: save the raw series "
                         "(a query like rate(...) or sum(...) drops the name and the counts)")
    name = str(name)
    if not name.startswith("vllm:") or not name.endswith(COUNTED):
        return
    shown = one_line(name, 80)
    values = entry.get("values")
    if values is None and "histograms" in entry:
        raise ParseError(TOOL, path, f"{where} ({shown})", "native histograms are not read: "
                         "query the classic _bucket series")
    if not isinstance(values, list):
        raise ParseError(TOOL, path, f"{where} ({shown}).values", "expected a list of points")
    key: Key = (name, frozenset((str(k), str(v)) for k, v in labels.items()
                                if k != "__name__"))
    points = merged.setdefault(key, {})
    last = -math.inf
    for p, point in enumerate(values):
        at = f"{where} ({shown}) values[{p}]"
        stamp, value = prometheus.point(point, TOOL, path, at)
        if stamp <= last:
            raise ParseError(TOOL, path, at, "times do not increase within the series")
        last = stamp
        if points.get(stamp, value) != value:
            raise ParseError(TOOL, path, at, f"saved twice with different values at {stamp}")
        points[stamp] = value
