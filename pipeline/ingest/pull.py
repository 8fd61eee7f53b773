"""Market-data ingestion: for each selected source, fetch -> raw snapshot -> parse -> load.

Each response is stored as a raw snapshot as it arrives, and each snapshot's bytes are read
back when it is parsed, so a source's memory is one page plus its parsed rows.

One source's failure (HTTP error, parse error, validation failure) is recorded in `loads`
with a one-line reason, leaves that source's previous data untouched, and does not stop the
other sources. `offline` re-parses the raw snapshots of the latest load of that vintage
instead of touching the network.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from urllib.parse import urlsplit

import duckdb
import polars as pl
import requests

from pipeline import store
from pipeline.ingest import complete
from pipeline.store.snapshots import sweep_orphans
from schemas.table import ValidationFailed
from sources.errors import ParseError, reading
from sources.http import ByteBudget, Fetched, FetchError
from sources.job import Context, Raw
from sources.registry import SOURCES
from sources.text import one_line, redact, redact_bytes

#: The longest error line a source's result carries (the whole reason, still one line).
MAX_ERROR_CHARS = 1000

#: The bytes one source's responses may hold in all (each response is capped at 64 MB).
SOURCE_MAX_BYTES = 512 * 1024 * 1024

#: What a source's run ended as.
LOADED, UNCHANGED, FAILED, SKIPPED, NOTHING = "loaded", "unchanged", "failed", "skipped", "none"


@dataclass
class SourceResult:
    source: str
    status: str
    rows: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    snapshots: int = 0

    def line(self) -> str:
        text = f"{self.source}: {self.status}"
        if self.status in (LOADED, UNCHANGED):
            text += f", {self.rows} rows from {self.snapshots} snapshot(s)"
        if self.error:
            text += f": {unnamed(self.error, self.source)}"
        return text


Progress = Callable[[str, str], None]


def _quiet(source: str, stage: str) -> None:
    """Default progress callback: say nothing."""


def ingest(con: duckdb.DuckDBPyConnection, session: requests.Session | None,
           sources: Sequence[str], ctx: Context, *, offline: bool = False,
           progress: Progress = _quiet, record_dir: Path | None = None) -> list[SourceResult]:
    """Run each source in `sources` (names from SOURCES, in SOURCES order) and report each.

    With `record_dir`, every fetched response is also written to
    record_dir/<source>/<n>_<last path part>, to refresh test fixtures where network exists
    (the bytes never hold a secret: tokens travel in headers or redacted query parameters)."""
    unknown = [s for s in sources if s not in SOURCES]
    if unknown:
        raise ValueError(f"unknown source(s) {unknown}; known: {list(SOURCES)}")
    secrets = configured_secrets()
    results = []
    for name in [s for s in SOURCES if s in sources]:
        # each source has its own deadline, counted from its start
        policy = dataclasses.replace(
            ctx.policy, not_after=time.monotonic() + ctx.policy.source_deadline_s,
            budget=ByteBudget(name, source_max_bytes()))
        result = _run_one(con, session, name, dataclasses.replace(ctx, policy=policy),
                          offline, progress, record_dir, secrets)
        results.append(result)
    return results


def source_max_bytes() -> int:
    """What one source's responses may hold in all: $SCORECARD_SOURCE_MAX_BYTES, else
    SOURCE_MAX_BYTES."""
    text = os.environ.get("SCORECARD_SOURCE_MAX_BYTES", "")
    return int(text) if text.isdigit() and int(text) > 0 else SOURCE_MAX_BYTES


def configured_secrets() -> list[str]:
    """Every key a source may send (the values of their ENV_VARs that are set): what is
    redacted from every message, note, `loads.error` and stored snapshot."""
    names = {source.ENV_VAR for source in SOURCES.values() if source.ENV_VAR}
    return sorted({os.environ[name] for name in names if os.environ.get(name)})


def _run_one(con: duckdb.DuckDBPyConnection, session: requests.Session | None, name: str,
             ctx: Context, offline: bool, progress: Progress,
             record_dir: Path | None = None, secrets: Sequence[str] = ()) -> SourceResult:
    result = _run_source(con, session, name, ctx, offline, progress, record_dir, secrets)
    if result.error:
        result.error = one_line(redact(result.error, secrets), MAX_ERROR_CHARS)
    result.notes = [one_line(redact(note, secrets)) for note in result.notes]
    return result


def _run_source(con: duckdb.DuckDBPyConnection, session: requests.Session | None, name: str,
                ctx: Context, offline: bool, progress: Progress, record_dir: Path | None,
                secrets: Sequence[str]) -> SourceResult:
    def clean(text: str) -> str:
        return one_line(redact(text, secrets), MAX_ERROR_CHARS)

    source = SOURCES[name]
    result = SourceResult(name, FAILED)
    env_var = source.ENV_VAR
    if not offline and source.NEEDS_KEY and env_var and not os.environ.get(env_var):
        result.status = SKIPPED
        result.error = f"{env_var} is not set (set it to ingest this source)"
        return result
    raws: list[Raw] = []  # what is parsed: each snapshot's bytes are read when it is parsed
    try:
        if offline:
            progress(name, "reading stored snapshots")
            raws = stored_snapshots(con, name, ctx.vintage)
            if not raws:
                result.status = NOTHING
                result.error = f"no stored snapshots for vintage {ctx.vintage}"
                return result
        else:
            if session is None:
                raise ValueError("a requests.Session is needed to fetch")
            progress(name, "fetching")
            raws = fetch_and_store(con, source.fetch(session, ctx), name, secrets,
                                   record_dir / name if record_dir is not None else None)
        if source.ACCUMULATE and not offline:
            known = {r.sha256 for r in raws}
            earlier = [r for r in stored_snapshots(con, name, ctx.vintage, good_only=True)
                       if r.sha256 not in known]
            if earlier:
                result.notes.append(f"{len(earlier)} earlier snapshot(s) of {ctx.vintage} "
                                    "re-parsed to keep the accumulated history")
            raws = earlier + raws
        result.snapshots = len(raws)
        progress(name, f"parsing {len(raws)} snapshot(s)")
        batches = []
        for raw in sorted(raws, key=lambda r: r.fetched_at):
            raw = dataclasses.replace(raw, data=store.snapshot_content(con, raw.sha256))
            try:
                with reading(name, raw.url):  # overflow, recursion, a type error: a ParseError
                    frames = source.parse(raw, ctx, result.notes)
            except ParseError as error:  # which answer: its URL (zone) and its fetch time
                raise ParseError(error.source, error.path, error.where,
                                 f"{error.reason} (answer fetched "
                                 f"{raw.fetched_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC)"
                                 ) from None
            for table, frame in frames:
                batches.append(store.Batch(table, frame, raw.sha256, raw.url))
        if source.ACCUMULATE:
            batches = newest_wins(batches)
        batches = complete.drop_duplicates(name, batches, result.notes)
        if not any(batch.frame.height for batch in batches):
            # a valid but empty answer (a month the API no longer serves) must not replace the
            # month's good rows with none
            raise ParseError(name, f"{len(raws)} answer(s)", f"vintage {ctx.vintage}",
                             nothing_to_load(raws, ctx.vintage))
        complete.check_coverage(con, name, ctx.vintage, source.PROVIDES, batches)
        progress(name, "loading")
        loaded = store.load(con, name, ctx.vintage, batches, clean=clean,
                            fetches=fetches(raws))
    except FetchError as error:
        result.error = clean(str(error))
        store.record_failure(con, name, ctx.vintage, [], result.error)
    except ParseError as error:
        result.error = clean(f"parse error: {error}")
        store.record_failure(con, name, ctx.vintage, [r.sha256 for r in raws], result.error,
                             fetches=fetches(raws))
    except ValidationFailed as error:  # store.load has recorded it in `loads`
        result.error = "validation failed: " + error.report(max_cases=3).replace("\n", " ")
    except store.LoadFailed as error:  # recorded by store.load too
        result.error = str(error)
    except (duckdb.Error, pl.exceptions.PolarsError, ValueError, KeyError) as error:
        # not a known failure mode: still this source's failure only, never the run's
        result.error = clean(f"{type(error).__name__}: {error}")
        store.record_failure(con, name, ctx.vintage, [r.sha256 for r in raws], result.error,
                             fetches=fetches(raws))
    else:
        result.status = loaded.status
        result.rows = loaded.row_count
    if result.status == FAILED:
        # pages stored before the fetch stopped short, which no load links: not kept
        sweep_orphans(con)
    progress(name, result.status)
    return result


def unnamed(message: str, name: str) -> str:
    """An error as a line that names its source already shows it (`ecb: failed: ...`,
    `scorecard sources`): without the source's name in front, which the error keeps where it
    stands alone (`loads.error`) and FetchError or ParseError put there. After a parse
    error's "parse error: " too."""
    for lead in ("", "parse error: "):
        if message.startswith(f"{lead}{name}: "):
            return lead + message.removeprefix(f"{lead}{name}: ")
    return message


#: The answers a "nothing to load" failure names one by one.
NAMED_ANSWERS = 3
#: Request parameters that say which zone an answer is about.
_ZONE_PARAMS = ("zone", "bzn", "in_Domain", "region")


def nothing_to_load(raws: Sequence[Raw], vintage: str) -> str:
    """Why a source has nothing to load, naming each answer's zone, fetch day and URL (an
    Electricity Maps history fetched on the 1st at 00:30 holds only the month before)."""
    named = []
    for raw in raws[:NAMED_ANSWERS]:
        zone = next((f"zone {raw.params[k]}, " for k in _ZONE_PARAMS if k in raw.params), "")
        named.append(f"{zone}fetched {raw.fetched_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC "
                     f"from {raw.url}")
    more = len(raws) - NAMED_ANSWERS
    return (f"nothing to load: none holds a row of {vintage} ("
            + "; ".join(named) + (f"; and {more} more" if more > 0 else "") + ")")


def fetch_and_store(con: duckdb.DuckDBPyConnection, responses: Iterable[Fetched], name: str,
                    secrets: Sequence[str], record_dir: Path | None = None) -> list[Raw]:
    """Store each response as it arrives (redacted, content-addressed) and keep only what
    cites it, so a source's pages are never all in memory (a source may send dozens of pages
    of tens of MB). The Raws come back without their bytes (`data` empty): each is
    read from the store when it is parsed."""
    raws = []
    for number, item in enumerate(responses, start=1):
        if record_dir is not None:
            record(item, record_dir, number)
        data = redact_bytes(item.data, secrets)  # a body that echoes the key
        sha = store.save_snapshot(con, data, source=name, url=item.url, params=item.params,
                                  fetched_at=item.fetched_at)
        raws.append(Raw(sha, item.url, dict(item.params), b"", item.fetched_at))
        del item, data  # not held while the next response is fetched
    return raws


def record(item: Fetched, folder: Path, number: int) -> Path:
    """Write the response's bytes under `folder`, named by its order and URL path."""
    folder.mkdir(parents=True, exist_ok=True)
    tail = urlsplit(item.url).path.rstrip("/").rsplit("/", 1)[-1] or "index"
    path = folder / f"{number:03d}_{re.sub(r'[^A-Za-z0-9._-]+', '_', tail)}"
    path.write_bytes(item.data)
    return path


def newest_wins(batches: list[store.Batch]) -> list[store.Batch]:
    """Batches ordered oldest first: drop from each the rows whose table key a later batch
    also holds, so a re-published hour keeps its newest value and keys stay unique."""
    kept: list[store.Batch] = []
    seen: dict[str, pl.DataFrame] = {}
    for batch in reversed(batches):
        key = list(batch.table.key)
        frame = batch.frame
        if batch.table.name in seen:
            frame = frame.join(seen[batch.table.name], on=key, how="anti", nulls_equal=True)
        seen[batch.table.name] = pl.concat([seen.get(batch.table.name, frame.head(0)
                                                     ).select(key), frame.select(key)])
        kept.append(store.Batch(batch.table, frame, batch.snapshot_sha256, batch.origin))
    return list(reversed(kept))


def fetches(raws: Sequence[Raw]) -> list[store.Fetch]:
    """What a load records of the responses it read: snapshot, URL, parameters, time."""
    return [store.Fetch(r.sha256, r.url, r.params, r.fetched_at) for r in raws]


def stored_snapshots(con: duckdb.DuckDBPyConnection, source: str, vintage: str,
                     good_only: bool = False) -> list[Raw]:
    """The raw snapshots of the latest load of `source` for `vintage` that recorded any
    (with `good_only`, of the latest successful load), without their bytes."""
    return [Raw(*snapshot) for snapshot in
            store.latest_load_snapshots(con, source, vintage, good_only=good_only,
                                        content=False)]


def exit_code(results: Sequence[SourceResult]) -> int:
    """0 when every source loaded, was unchanged or was skipped for a missing key; 2 when a
    source failed, or when nothing at all was available (DESIGN section 9)."""
    if any(r.status == FAILED for r in results):
        return 2
    if results and all(r.status in (NOTHING, SKIPPED) for r in results):
        return 2
    return 0
