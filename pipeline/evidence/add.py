"""`scorecard evidence add`: benchmark results and power logs, each recognised by its content,
into the store.

`add_evidence` gives each file's `LoadResult` and notes: the files under the paths given, split
by `pipeline.evidence.files.split_files`; benchmark results loaded by
`pipeline.evidence.bench.add_bench_files` (runs and requests, source `bench:<sha256 prefix>`),
power logs by `pipeline.evidence.power.logs.add_power_logs` (`core__power_samples`, source
`power:<sha256 prefix>`), vintage `evidence`, each file's bytes kept as a raw snapshot: adding
the same file twice changes nothing; invalid rows load nothing (ValidationFailed, raised by the
readers' validation before any row is written). The notes name the files of folders that are
neither and were skipped. `hashed` (`pipeline.evidence.power.hashing.HashedAhead`) holds the
digests of big files hashed beforehand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pipeline.evidence.bench import add_bench_files
from pipeline.evidence.files import split_files
from pipeline.evidence.power.hashing import HashedAhead
from pipeline.evidence.power.logs import add_power_logs
from sources import prometheus_query as prometheus


def add_evidence(con: Any, paths: Sequence[Path], *, fmt: str | None = None,
                 power_fmt: str | None = None, tz: str | None = None,
                 progress: Callable[[str, str], None] | None = None,
                 hashed: HashedAhead | None = None,
                 advance: Callable[[str, int, int], None] | None = None
                 ) -> tuple[list[tuple[str, Any]], list[str]]:
    """`progress(what, stage)` is told what is being done (a big power log takes seconds),
    `advance(file, done, total)` how many of a file's bytes are read (the progress bar)."""
    bench, power, notes = split_files(paths, fmt=fmt, power_fmt=power_fmt)
    if progress and bench:
        progress(f"{len(bench)} benchmark file(s)", "reading and loading")
    in_folder = any(Path(p).is_dir() for p in paths)
    results = add_bench_files(con, bench, fmt=fmt, tz=tz, progress=progress,
                              notes=notes if in_folder else None,
                              advance=advance, said=notes) if bench else []
    return results + add_power_logs(con, power, fmt=power_fmt, tz=tz, progress=progress,
                                    hashed=hashed, advance=advance), notes


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
