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
digests of big files hashed beforehand. A Prometheus server's answers are added by
`pipeline.evidence.prometheus` (which loads the HTTP client this module does without).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pipeline.evidence.bench import add_bench_files
from pipeline.evidence.files import split_files
from pipeline.evidence.power.hashing import HashedAhead
from pipeline.evidence.power.logs import add_power_logs


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

