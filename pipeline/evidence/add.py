"""`scorecard evidence add`: benchmark results and power logs, each recognised by its content,
into the store.

`add_evidence` gives each file's `LoadResult` and notes: the files under the paths given, split
by `pipeline.evidence.files.split_files` (`evidence_files`, which refuses paths that hold none,
before a store is opened; `add_files` adds them); benchmark results loaded by
`pipeline.evidence.bench.add_bench_files` (runs and requests, source `bench:<sha256 prefix>`),
power logs by `pipeline.evidence.power.logs.add_power_logs` (`core__power_samples`, source
`power:<sha256 prefix>`), vintage `evidence`, each file's bytes kept as a raw snapshot: adding
the same file twice changes nothing; invalid rows load nothing (ValidationFailed, raised by the
readers' validation before any row is written). The notes name the files of folders that are
neither and were skipped. `hashed` (`pipeline.evidence.power.hashing.HashedAhead`) holds the
digests of big files hashed beforehand. `skipped_samples` says what of a loaded power log
the energy will skip, and why. A Prometheus server's answers are added by
`pipeline.evidence.prometheus` (which loads the HTTP client this module does without).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pipeline.evidence.bench import UNREADABLE, add_bench_files
from pipeline.evidence.files import split_files
from pipeline.evidence.power.energy import skipped_note
from pipeline.evidence.power.hashing import HashedAhead
from pipeline.evidence.power.logs import add_power_logs
from pipeline.store import power_samples
from sources.errors import ParseError


def add_evidence(con: Any, paths: Sequence[Path], *, fmt: str | None = None,
                 power_fmt: str | None = None, tz: str | None = None,
                 progress: Callable[[str, str], None] | None = None,
                 hashed: HashedAhead | None = None,
                 advance: Callable[[str, int, int], None] | None = None
                 ) -> tuple[list[tuple[str, Any]], list[str]]:
    """`progress(what, stage)` is told what is being done (a big power log takes seconds),
    `advance(file, done, total)` how many of a file's bytes are read (the progress bar)."""
    return add_files(con, evidence_files(paths, fmt=fmt, power_fmt=power_fmt), paths, fmt=fmt,
                     power_fmt=power_fmt, tz=tz, progress=progress, hashed=hashed,
                     advance=advance)


EvidenceFiles = tuple[list[Path], list[Path], list[str]]


def evidence_files(paths: Sequence[Path], *, fmt: str | None = None,
                   power_fmt: str | None = None) -> EvidenceFiles:
    """`split_files`' benchmark results, power logs and notes, found before any store is
    opened: paths that hold neither (an empty folder, one of files no reader recognises) are
    a ParseError naming them, and nothing is written."""
    bench, power, notes = split_files(paths, fmt=fmt, power_fmt=power_fmt)
    if not bench and not power:
        skipped = sum("skipped" in n for n in notes)
        raise ParseError("evidence", ", ".join(map(str, paths)), "files", (
            "no benchmark result or power log found" + (
                f" ({skipped} file(s) skipped: neither format this project reads)"
                if skipped else "") + "; give files or folders of them (docs/evidence.md "
            "lists the formats), or force one with --format or --power-format"))
    return bench, power, notes


def add_files(con: Any, files: EvidenceFiles, paths: Sequence[Path], *,
              fmt: str | None = None, power_fmt: str | None = None, tz: str | None = None,
              progress: Callable[[str, str], None] | None = None,
              hashed: HashedAhead | None = None,
              advance: Callable[[str, int, int], None] | None = None
              ) -> tuple[list[tuple[str, Any]], list[str]]:
    """`add_evidence` for the `evidence_files` of `paths`."""
    bench, power, notes = files
    if progress and bench:
        progress(f"{len(bench)} benchmark file(s)", "reading and loading")
    in_folder = any(Path(p).is_dir() for p in paths)
    results = add_bench_files(con, bench, fmt=fmt, tz=tz, progress=progress,
                              notes=notes if in_folder else None,
                              advance=advance, said=notes) if bench else []
    if bench and not results and not power:  # every benchmark file of the folders skipped
        raise ParseError("evidence", ", ".join(map(str, paths)), "files", (
            "no file could be read, nothing was added: " + "; ".join(
                n for n in notes if UNREADABLE in n)
            + "; fix or remove the files, or force a format with --format"))
    return results + add_power_logs(con, power, fmt=power_fmt, tz=tz, progress=progress,
                                    hashed=hashed, advance=advance), notes


def replaced_load(con: Any, load_id: str) -> str | None:
    """The load whose rows `load_id` replaced: the same file's (its source is named by the
    file's sha256) latest earlier good load, read with other settings (another --tz, a format
    forced). A file has one reading in the store, the latest, and `export` writes that one."""
    rows = con.execute(
        "SELECT e.load_id FROM loads l JOIN loads e ON e.source = l.source "
        "AND e.vintage = l.vintage AND e.status = 'ok' AND e.load_id <> l.load_id "
        "AND e.started_at_utc <= l.started_at_utc WHERE l.load_id = ? "
        "ORDER BY e.started_at_utc DESC LIMIT 1", [load_id]).fetchall()
    return str(rows[0][0]) if rows else None


def skipped_samples(con: Any, load_id: str) -> str | None:
    """What the energy will skip of a power log's load, worded as `evidence inspect` words
    it; None when every sample has a value (or the load is a benchmark's)."""
    skipped = power_samples.valueless(con, load_id)
    return skipped_note(skipped) if skipped else None
