"""`scorecard evidence add --prometheus`: the range queries' answers of a Prometheus server,
kept as files and added as such files are (`pipeline.evidence.add.add_evidence`). Apart from
`pipeline.evidence.add` so that adding files loads no HTTP client (requests and urllib3: tens
of milliseconds of every `evidence add`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.evidence.add import add_evidence
from sources import prometheus_query as prometheus


def add_prometheus(con: Any, url: str, start: float, end: float, *, step: float | None = None,
                   folder: Path, progress: Callable[[str, str], None] | None = None
                   ) -> tuple[list[tuple[str, Any]], list[str]]:
    """`evidence add --prometheus URL --query-window START..END`: the range queries of
    `sources.prometheus_query.QUERIES` (vLLM's counters and histograms, DCGM's power) run against
    the Prometheus at `url` over [start, end] (unix s), each answer kept as a file in
    `folder` (`prometheus-<query>-<start>-<end>.json`, what `curl .../query_range` would have
    saved) and added as such a file is, by the same readers. An answer without series (no
    such metric in the window) is noted, not added; none with any is a ValueError."""
    resolution = prometheus.step_s(start, end, step)
    folder.mkdir(parents=True, exist_ok=True)
    files, notes = [], []
    for name in prometheus.QUERIES:
        if progress:
            progress(f"Prometheus {name} query", "querying")
        data = prometheus.query_range(url, name, start, end, resolution)
        if not prometheus.has_series(data):
            notes.append(f"Prometheus: no {name} series over the window "
                         f"({prometheus.QUERIES[name]})")
            continue
        path = folder / f"prometheus-{name}-{start:.0f}-{end:.0f}.json"
        path.write_bytes(data)
        files.append(path)
    if not files:
        raise ValueError(f"Prometheus: no vLLM or DCGM series over the window ({url})")
    results, more = add_evidence(con, files, progress=progress)
    return results, notes + more
