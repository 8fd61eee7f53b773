"""Parsed once: the benchmark runs of a file already read come back from the store's cache
(`pipeline.store.evidence`) by the file's sha256 instead of being parsed again.

Every reader is handed the store whose cache it uses (`cache=con`; `pipeline.evidence.bench.
load_runs` looks each file up in it and adds each file it parses to it); without one (None),
files are parsed as always and each function below is a no-op. `scorecard evidence add` fills
it; `scorecard run`/`explain`/`diff` hand over the store they opened, when it is writable
(pipeline/workspace.py's `Opened.cache`), through `pipeline.inputs.resolve`.

- `reader_key`: what besides the bytes decides the runs: the format forced
  (or "detected"), the timezone, and a digest of the readers' code (sources/bench/*.py), so
  a changed reader parses again.
- `lookup` gives a file's runs back from the cache (None when it holds none) and `remember`
  adds a file's parsed runs to it. A run's gaps (`itls_s`, often 1e7 values) are not kept:
  their percentiles over the default window are (`BenchRun.itl_summary`, computed by
  `run_metrics`), with a per-request `gaps_known` flag; a `--window` read parses the file.
- The same store is where `pipeline.evidence.power.logs` reads back the samples of a power log
  `evidence add` loaded (unchanged size and modification time, same format and timezone)
  instead of parsing the file.
- `known_digest`: the sha256 recorded for a file whose size and
  modification time (ns) are unchanged, so an unchanged file is not even read (as git's
  index does); a file rewritten within the same nanosecond with the same size is the only
  change it misses.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from dataclasses import fields, replace
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

import sources.bench
from pipeline.evidence.goodput import Slo, run_metrics
from pipeline.store import evidence as store
from sources.bench.run import GAPS_KNOWN, ITLS, BenchRun

_TIMES = ("started_at_utc", "ended_at_utc")
_ANY = Slo(ttft_ms=math.inf)  # the gaps' percentiles do not depend on the SLO


@cache
def _readers_digest() -> str:
    folder = Path(sources.bench.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def known_digest(con: Any | None, path: Path) -> str | None:
    """The sha256 recorded in the store `con` for `path` when its size and modification time
    are those recorded (the file is then not read again), else None."""
    if con is None:
        return None
    st = path.stat()
    return store.digest_of(con, str(path.resolve()), st.st_size, st.st_mtime_ns)


def reader_key(fmt: str | None, tz: str | None) -> str:
    return f"{fmt or 'detected'}|{tz or ''}|{_readers_digest()}"


def lookup(con: Any | None, sha256: str, path: str, fmt: str | None, tz: str | None
           ) -> list[BenchRun] | None:
    if con is None:
        return None
    found = store.get(con, sha256, reader_key(fmt, tz))
    if found is None:
        return None
    runs_json, blob = found
    frames = pl.read_parquet(io.BytesIO(blob)) if blob is not None else None
    runs = []
    for position, item in enumerate(json.loads(runs_json)):
        requests = None
        if item.pop("has_requests") and frames is not None:
            requests = frames.filter(pl.col("__run") == position).drop("__run")
            if item.get("itl_summary") is None and GAPS_KNOWN in requests.columns:
                requests = requests.drop(GAPS_KNOWN)  # a run of the file that had no gaps
        for key in _TIMES:
            if item[key] is not None:
                item[key] = datetime.fromisoformat(item[key])
        item["notes"] = tuple(item["notes"])
        runs.append(replace(BenchRun(requests=requests, **item), path=path))
    return runs


def remember(con: Any | None, sha256: str, path: str, fmt: str | None, tz: str | None,
             runs: list[BenchRun]) -> None:
    if con is None:
        return
    items, parts = [], []
    for position, run in enumerate(runs):
        item = {f.name: getattr(run, f.name) for f in fields(run) if f.name != "requests"}
        for key in _TIMES:
            item[key] = None if item[key] is None else item[key].isoformat()
        item.update(reported=dict(run.reported), params=dict(run.params),
                    notes=list(run.notes), has_requests=run.requests is not None)
        requests = run.requests
        if requests is not None and ITLS in requests.columns:
            # the gaps (often 1e7 values) are not kept: their percentiles over the default
            # window are, computed as run_metrics computes them, with a flag per request
            item["itl_summary"] = {k: v for k, v in run_metrics(run, _ANY).items()
                                   if k.startswith("itl_")}
            requests = requests.with_columns(pl.col(ITLS).is_not_null().alias(GAPS_KNOWN)
                                             ).drop(ITLS)
        items.append(item)
        if requests is not None:
            parts.append(requests.with_columns(pl.lit(position, pl.Int64()).alias("__run")))
    blob = None
    if parts:
        buffer = io.BytesIO()
        pl.concat(parts, how="diagonal_relaxed").write_parquet(buffer)
        blob = buffer.getvalue()
    store.put(con, sha256, reader_key(fmt, tz), path, json.dumps(items), blob)
    st = Path(path).stat()
    store.put_digest(con, str(Path(path).resolve()), st.st_size, st.st_mtime_ns, sha256)
