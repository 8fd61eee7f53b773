"""Measured power for a scorecard candidate, from its power logs (`power = { evidence = ... }`).

API (what the scorecard calls): `power_from_evidence`, the `PowerEvidence` of a candidate's
power logs over a benchmark window. Its arguments:

- `path`: one power log, or a folder whose files are read when a power reader recognises them
  (other files, e.g. benchmark results beside the log, are skipped and listed in `notes`).
  All logs are read with `sources.power.registry.read_power` (format auto-detected or forced
  with `format`, e.g. "nvidia-smi", "dcgm-exporter") and pooled.
- `window_start_utc`/`window_end_utc`: the benchmark window (tz-aware; both or neither; None =
  the whole span every device covers). `uncertainty_s` is how far off the window's position
  may be (vLLM's `date` has 1 s resolution: +/-1 s), giving `energy.energy_range_j`.
- `tz`: timezone of naive timestamps (nvidia-smi, dmon, CodeCarbon, PTDaemon); required for
  those formats, the error names the file.
- `boundary`: gpu_board, node, wall or facility; by default the only one present, or the
  narrowest with a note.
- `params`: the `EnergyParams` of the energy rules (gap factor, stability), defaults when None.
- `cache`: a store whose logs loaded by `evidence add` are read back instead of parsed
  (`read_power_files`); None reads every file.

A single log of `pipeline.evidence.power.streamed.STREAM_BYTES` or more that a part reader
reads (nvidia-smi) is computed part by part instead (`streamed_energy`: its samples never all
in memory, the cache not used), to the same figures.

`PowerEvidence` (`pipeline.evidence.power.measured`) carries `average_power_w` over the window (=
energy / window seconds, the figure `energy [J/token] = average_power [W] / tokens_per_s`
uses), `energy_j`, `boundary`, `grade` ("measured"), `method` (counter or trapezoid), `notes`,
`files` (path, sha256, tool, rows) and the full `pipeline.evidence.power.energy.EnergyResult` (gaps,
resets, idle power, stability). `pipeline.evidence.power.fleet.power_from_parquet` gives the same
for a fleet's Parquet samples.

`power_from_snapshots` reads a pair of energy-counter snapshots without timestamps (`amd-smi
metric -E --csv`, taken just before and after the benchmark), placing them at the window's
edges: energy = end - start per GPU; a counter that dropped (reset, or snapshots of different
runs) is an error, never a figure.

`add_power_logs` (for `scorecard evidence add`, a `LoadResult` per file): each log's bytes kept
as a raw snapshot (read in pieces, stored in parts: `pipeline.store.snapshots`) while its
samples are loaded into `core__power_samples` (a view over two tables:
`pipeline.store.power_samples`) in one transaction, source `power:<sha256 prefix>`, vintage
`evidence`; the snapshot commits first (a process killed between the two leaves a snapshot no
load links, which the next writer's sweep removes). The same file again is `unchanged`: when its
size and modification time are unchanged, without reading it (but for `hashed`'s thread, which
cannot know beforehand); else once it is hashed, its rows not loaded (an nvidia-smi log's first
one or two parts are parsed meanwhile, in vain). nvidia-smi logs are read in parts of 16 MB
(`sources.power.registry.read_power_parts`), the next part parsed in a thread while this one is
inserted: a 36-hour log is never held whole. `hashed`
(`pipeline.evidence.power.hashing.HashedAhead`) holds digests taken before the add began.

Errors: `sources.errors.ParseError`, `schemas.table.ValidationFailed` (bad file),
`pipeline.evidence.power.energy.EnergyError` (log does not cover the window), `FileNotFoundError`.
"""

from __future__ import annotations

import contextlib
import hashlib
import queue
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from datetime import datetime
from functools import cache, partial
from pathlib import Path
from typing import Any

import polars as pl

import schemas.power
import sources.power
from pipeline.evidence import cache as evidence_cache
from pipeline.evidence.files import head, read_bytes, walk
from pipeline.evidence.power.energy import EnergyParams, Window, window_energy
from pipeline.evidence.power.hashing import HashedAhead, file_sha256
from pipeline.evidence.power.measured import EvidenceFile, PowerEvidence
from pipeline.evidence.power.streamed import streamed_energy
from pipeline.store import evidence as evidence_store
from pipeline.store import power_samples, sha256
from pipeline.store.loads import LoadResult, load_parts, previous_fingerprint
from schemas.power import POWER_SAMPLES
from sources.errors import ParseError
from sources.power import amd_smi
from sources.power.frame import canonical
from sources.power.registry import PART_BYTES, detect_format, read_power, read_power_parts


def read_power_files(path: Path, tz: str | None = None, format: str | None = None, *,
                     cache: Any | None = None
                     ) -> tuple[pl.DataFrame, tuple[EvidenceFile, ...], list[str]]:
    """All power samples under `path` (walked by `pipeline.evidence.files.walk`), the files read
    (with sha256) and notes on skipped files. A file is read whole only when a power reader
    recognises its head (or `format` is given); identical files (same sha256) are read once.
    With a store as `cache`, a log `evidence add` loaded into it with the same format and
    timezone comes back from the store in the order loaded, not parsed (nor read,
    when its size and modification time are those recorded)."""
    frames, files, notes, seen = [], [], [], set()
    explicit_file = path.is_file()
    for file in walk(path):
        try:
            tool = format or detect_format(head(file), str(file))
        except ParseError:
            if explicit_file:
                raise
            notes.append(f"{file}: not a power log; skipped")
            continue
        data = None
        digest = evidence_cache.known_digest(cache, file)  # size and mtime as recorded: not read
        if digest is None:
            data = file.read_bytes()
            digest = sha256(data)
        if digest in seen:
            notes.append(f"{file}: same content as a file already read; skipped")
            continue
        seen.add(digest)
        if cache is not None and (loaded := _same_load(cache, digest, format, tz)) is not None:
            # loaded by `evidence add` with these settings: read back in its order, not parsed
            frame = power_samples.stored(cache, loaded[0]).cast(
                pl.Schema(schemas.power.POWER_COLUMNS))
        else:
            tool, frame = read_power(file.read_bytes() if data is None else data,
                                     path=str(file), tz=tz, format=tool)
        frames.append(frame)
        files.append(EvidenceFile(str(file), digest, tool, frame.height))
    if not frames:
        raise ParseError("power", str(path), "files", "no power log found")
    return pl.concat(frames), tuple(files), notes


def _same_load(con: Any, digest: str, fmt: str | None, tz: str | None
               ) -> tuple[str, int] | None:
    """(load_id, rows) of the store's last load of the bytes `digest` read with the same
    format (forced, or detected) and timezone by the same readers' code, or None."""
    previous = previous_fingerprint(con, f"power:{digest[:16]}", "evidence")
    if previous is None or previous[2] != _fingerprint(digest, fmt, tz):
        return None
    return previous[0], previous[1]


def power_from_evidence(path: Path, window_start_utc: datetime | None,
                        window_end_utc: datetime | None, tz: str | None = None, *,
                        uncertainty_s: float = 0.0, boundary: str | None = None,
                        format: str | None = None, params: EnergyParams | None = None,
                        cache: Any | None = None) -> PowerEvidence:
    if (window_start_utc is None) != (window_end_utc is None):
        raise ValueError("give both window_start_utc and window_end_utc, or neither")
    window = (Window(window_start_utc, window_end_utc, uncertainty_s)
              if window_start_utc is not None and window_end_utc is not None else None)
    streamed = (streamed_energy(Path(path), window, tz=tz, fmt=format, params=params)
                if boundary in (None, "gpu_board") else None)
    files: tuple[EvidenceFile, ...]
    notes: list[str]
    if streamed is not None:  # a big log, part by part
        result, files, notes = streamed.result, (streamed.file,), []
    else:
        samples, files, notes = read_power_files(Path(path), tz=tz, format=format, cache=cache)
        origin = ", ".join(f.path for f in files)
        result = window_energy(samples, window, origin=origin, boundary=boundary,
                               params=params)
    if window is None:
        notes.append("no benchmark window given: energy over the span all devices cover")
    if not result.stable:
        notes.append("unstable: " + ", ".join(result.stability_reasons))
    return PowerEvidence(
        average_power_w=result.average_power_w, energy_j=result.energy_j,
        boundary=result.boundary, method=result.method, grade="measured",
        notes=tuple(notes) + result.notes, files=files, energy=result)


def add_power_logs(con: Any, files: Sequence[Path], *, fmt: str | None = None,
                   tz: str | None = None, progress: Callable[[str, str], None] | None = None,
                   hashed: HashedAhead | None = None,
                   advance: Callable[[str, int, int], None] | None = None
                   ) -> list[tuple[str, Any]]:
    """`advance(file, done, total)` hears the bytes of each log read and loaded so far."""
    def say(file: Path, stage: str) -> None:
        if progress:
            progress(str(file), stage)

    power_samples.ensure(con)  # on a store `connect` opened: its own tables only
    results = []
    for file in files:
        say(file, "checking")
        moved = None if advance is None else partial(advance, str(file))
        results.append((str(file), _add_power_log(con, file, fmt, tz, say, hashed, moved)))
    return results


def _add_power_log(con: Any, file: Path, fmt: str | None, tz: str | None,
                   say: Callable[[Path, str], None], hashed: HashedAhead | None,
                   advance: Callable[[int, int], None] | None = None) -> Any:
    """One log into the store. A file whose size and modification time are those recorded
    is answered from its recorded sha256, without reading it (but to write its snapshot's
    file beside the store again when it is missing: `restore_missing`, a stat when it is
    there; so too when it is found unchanged once hashed); else its bytes are hashed
    (streamed; or ahead, by `hashed`) while the first parts are parsed, and a log already
    loaded with the same reader settings is `unchanged`, its rows not loaded. Otherwise the
    rows are read part by part when the format allows it (nvidia-smi: a 36-hour log is never
    in memory whole) and loaded while the bytes are kept as a raw snapshot, read in 16 MB
    pieces, in a transaction of their own that commits before the load does
    (`snapshot_meanwhile`)."""
    st, name = file.stat(), str(file.resolve())
    recorded = evidence_store.digest_of(con, name, st.st_size, st.st_mtime_ns)
    if recorded is not None and (loaded := _same_load(con, recorded, fmt, tz)) is not None:
        evidence_store.restore_missing(con, file, recorded, source="power", size=st.st_size)
        return LoadResult(loaded[0], "unchanged", loaded[1])
    parts = read_power_parts(file, tz=tz, format=fmt)
    # the first parts are parsed while the bytes are hashed (in vain for a file touched but
    # not changed: a part's parse, on the other core)
    ahead = _read_ahead(parts[1]) if parts is not None else contextlib.nullcontext(None)
    with ahead as read_ahead:
        digest = recorded or (hashed.sha256(file, st) if hashed else None)
        if digest is None:
            say(file, f"hashing {st.st_size / 1e6:,.1f} MB")
            digest = file_sha256(file)
        loaded = None if digest == recorded else _same_load(con, digest, fmt, tz)
        if loaded is not None:  # (the recorded digest's load was looked up above)
            evidence_store.restore_missing(con, file, digest, source="power", size=st.st_size)
            evidence_store.put_digest(con, name, st.st_size, st.st_mtime_ns, digest)
            return LoadResult(loaded[0], "unchanged", loaded[1])
        if read_ahead is None:  # no part reader for this format: the file whole
            data = read_bytes(file, advance)
            if sha256(data) != digest:
                raise OSError(f"{file}: the file changed while it was being added; add it "
                              "again")
            rows: Iterable[pl.DataFrame] = [read_power(data, path=str(file), tz=tz,
                                                       format=fmt)[1]]
            del data
        else:
            rows = read_ahead if advance is None else _counted(read_ahead, st.st_size, advance)
        say(file, f"reading and loading its samples, keeping its {st.st_size / 1e6:,.1f} MB "
                  "as a raw snapshot meanwhile")
        with evidence_store.bounded_memory(con), evidence_store.snapshot_meanwhile(
                con, file, digest, source="power", size=st.st_size) as kept:
            result = load_parts(con, source=f"power:{digest[:16]}", vintage="evidence",
                                table=POWER_SAMPLES, snapshot_sha256=digest, parts=rows,
                                fingerprint=_fingerprint(digest, fmt, tz), snapshot_kept=kept)
    evidence_store.put_digest(con, name, st.st_size, st.st_mtime_ns, digest)
    return result


def _counted(parts: Iterator[pl.DataFrame], size: int, advance: Callable[[int, int], None]
             ) -> Iterator[pl.DataFrame]:
    """`parts` as they are, telling `advance` the bytes behind those loaded (a part is read
    from `PART_BYTES` of the file, cut at a line: the count is within a line of the truth)."""
    advance(0, size)
    for count, part in enumerate(parts, 1):
        yield part
        advance(min(count * PART_BYTES, size), size)
    advance(size, size)


@contextlib.contextmanager
def _read_ahead(parts: Iterator[pl.DataFrame]
                ) -> Generator[Iterator[pl.DataFrame], None, None]:
    """`parts` read one ahead in a thread from the moment the block is entered: the next part
    is parsed while DuckDB inserts this one (the scan, polars and DuckDB release the GIL). A
    part's error is raised by the iterator, in its turn; leaving the block, however early,
    stops the reading."""
    ready: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def produce() -> None:
        try:
            for part in parts:
                ready.put(("part", part))
                if stop.is_set():
                    return
            ready.put(("end", None))
        except BaseException as error:  # handed to the consumer, raised there
            ready.put(("error", error))

    def consume() -> Iterator[pl.DataFrame]:
        while True:
            kind, value = ready.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value

    thread = threading.Thread(target=produce, name="power-log-parts", daemon=True)
    thread.start()
    try:
        yield consume()
    finally:
        stop.set()
        while thread.is_alive():  # a producer blocked on a full queue is let through
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.05)
        thread.join()


def _fingerprint(digest: str, fmt: str | None, tz: str | None) -> str:
    """What decides a log's rows: its bytes (sha256), the format forced (or detected), the
    timezone and the readers' code (sources/power/*, schemas/power.py)."""
    return hashlib.sha256(f"{POWER_SAMPLES.name}|{digest}|{fmt or 'detected'}|{tz}|"
                          f"{_readers_digest()}".encode()).hexdigest()


@cache
def _readers_digest() -> str:
    digest = hashlib.sha256()
    for module in (sources.power, schemas.power):
        folder = Path(module.__file__ or "")
        for path in sorted(folder.parent.glob("*.py") if folder.name == "__init__.py"
                           else [folder]):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def power_from_snapshots(start_path: Path, end_path: Path, window_start_utc: datetime,
                         window_end_utc: datetime) -> PowerEvidence:
    window = Window(window_start_utc, window_end_utc)
    files, frames = [], []
    for path, moment in ((Path(start_path), window.start_utc), (Path(end_path), window.end_utc)):
        data = path.read_bytes()
        snapshot = amd_smi.parse_snapshot(data, path=str(path))
        frames.append(snapshot.with_columns(
            sample_utc=pl.lit(moment).cast(pl.Datetime("us", "UTC")),
            device_id=pl.col("gpu_index").cast(pl.String), series_id=pl.lit(amd_smi.TOOL),
            measurement_boundary=pl.lit("gpu_board")))
        files.append(EvidenceFile(str(path), sha256(data), amd_smi.TOOL,
                                  snapshot.height))
    origin = f"{start_path} -> {end_path}"  # a bad value may be in either file
    samples = POWER_SAMPLES.validate(canonical(pl.concat(frames)), origin=origin)
    result = window_energy(samples, window, origin=origin, method="counter")
    notes = ["snapshots placed at the window's edges: their timing is the window's"]
    return PowerEvidence(
        average_power_w=result.average_power_w, energy_j=result.energy_j,
        boundary=result.boundary, method=result.method, grade="measured",
        notes=tuple(notes) + result.notes, files=tuple(files), energy=result)
