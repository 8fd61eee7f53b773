"""A big power log's energy computed part by part (issue 27, R15): its samples are never all
in memory, as `evidence add` never holds them (`pipeline.evidence.power.logs`).

`streamed_energy` reads a log with a part reader (`sources.power.registry.read_power_parts`:
nvidia-smi) part by part and writes each part's readings (the samples with a power or energy
value) as Parquet into a temporary folder laid out as a fleet's (`gpu_uuid`, `timestamp_utc`,
`power_w`, `energy_j`, one `day=YYYY-MM-DD` partition per UTC day); DuckDB then computes the
energy over it by `pipeline.evidence.power.fleet.fleet_energy`, the rules of
`pipeline.evidence.power.energy.window_energy` in SQL, a day at a time under its memory
limit (tests/pipeline/test_power_streamed.py checks both paths give the same figures). The
temporary folder is removed on every exit.

It answers None (the caller reads the log whole) for a log under `STREAM_BYTES` (unless
`always`; `part_bytes` is the parts' size), a format without a part reader, or a log that is
not one stream per device at one boundary (what the fleet layout holds: nvidia-smi logs
always are).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from pipeline.evidence.power.energy import EnergyParams, EnergyResult, Window, skipped_note
from pipeline.evidence.power.fleet import _connect, _source, fleet_energy
from pipeline.evidence.power.hashing import file_sha256
from pipeline.evidence.power.measured import EvidenceFile
from sources.power.registry import PART_BYTES, read_power_parts

#: a log at least this big is computed part by part (a smaller one is read whole: faster)
STREAM_BYTES = 64 << 20


@dataclass(frozen=True)
class Streamed:
    """The energy over the window, the file read, its readings at the boundary (`samples`)
    and, when asked for (`inspect` shows it), the highest sum over devices of the power
    readings taken at one instant (None: not asked, or counters only)."""

    result: EnergyResult
    file: EvidenceFile
    samples: int
    peak_power_w: float | None


def streamed_energy(path: Path, window: Window | None, *, tz: str | None = None,
                    fmt: str | None = None, params: EnergyParams | None = None,
                    always: bool = False, part_bytes: int = PART_BYTES,
                    peak: bool = False) -> Streamed | None:
    if not path.is_file() or (path.stat().st_size < STREAM_BYTES and not always):
        return None
    found = read_power_parts(path, tz=tz, format=fmt, part_bytes=part_bytes)
    if found is None:
        return None
    tool, parts = found
    with tempfile.TemporaryDirectory(prefix="scorecard-power-") as tmp:
        folder = Path(tmp)
        rows, usable, skipped, ok = 0, 0, Counter[str | None](), True
        kinds: set[tuple[str, str]] = set()  # (boundary, series) seen
        streams: dict[str, str] = {}  # device -> its one series
        for k, part in enumerate(parts):
            rows += part.height
            kinds.update(part.select("measurement_boundary", "series_id").unique().iter_rows())
            for device, series in part.select("device_id", "series_id").unique().iter_rows():
                ok = ok and streams.setdefault(device, series) == series
            if len({boundary for boundary, _ in kinds}) > 1 or not ok:
                parts.close()  # type: ignore[attr-defined]
                return None
            empty = pl.col("power_w").is_null() & pl.col("energy_counter_j").is_null()
            skipped.update(dict(part.filter(empty)["note"].value_counts().iter_rows()))
            readings = part.filter(~empty)
            usable += readings.height
            _write(readings, folder, k)
        if not usable:
            return None  # the whole-file path names the file and what it lacks
        result, _ = fleet_energy(folder, window, params=params, origin=str(path))
        if skipped:  # first, as energy.py's `_usable` puts it
            result = replace(result, notes=(skipped_note(skipped), *result.notes))
        return Streamed(result, EvidenceFile(str(path), file_sha256(path), tool, rows), usable,
                        _peak(folder) if peak else None)


def _write(readings: pl.DataFrame, folder: Path, k: int) -> None:
    """One part's readings as Parquet, one file per UTC day it holds (`day=` partitions)."""
    frame = readings.select(
        gpu_uuid="device_id", timestamp_utc="sample_utc", power_w="power_w",
        **({"energy_j": "energy_counter_j"} if readings["energy_counter_j"].null_count()
           < readings.height else {}),
        day=pl.col("sample_utc").dt.date())
    for (day,), rows in frame.group_by("day", maintain_order=True):
        place = folder / f"day={day}"
        place.mkdir(exist_ok=True)
        rows.drop("day").write_parquet(place / f"part-{k:06d}.parquet")


def _peak(folder: Path) -> float | None:
    """The highest sum of power over the devices' readings at one instant."""
    con = _connect()
    try:
        (peak,), = con.execute(
            f"SELECT max(w) FROM (SELECT sum(power_w) AS w FROM {_source(folder)} "
            "WHERE power_w IS NOT NULL GROUP BY timestamp_utc)").fetchall()
    finally:
        con.close()
    return None if peak is None else float(peak)
