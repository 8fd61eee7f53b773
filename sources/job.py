"""The one shape of a market source's ingest job, and what every job shares.

Each module in `sources.registry` has `fetch` (the responses for a vintage, yielded one by one
as they arrive, so ingest stores each page before the next is asked for) and `parse` (how one
stored snapshot turns back into canonical frames), with its constants declared in one `Source`
(the flags `NEEDS_KEY` and `ACCUMULATE` among them; `MarketSource` spells the whole shape out).
The requests go through `Context.fetch` or `Context.each_zone` (base URL override, fetch policy,
zones), a parse of one table through `single_table`.

parse reads only the snapshot (URL, params, bytes, fetch time) and the context, so an
`--offline` run re-parses stored snapshots exactly as a live run would.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple, Protocol, cast

import polars as pl
import requests

from schemas.table import Table
from sources.errors import ParseError
from sources.http import DEFAULT_POLICY, Fetched, FetchPolicy
from sources.offers import no_fx


class Source(NamedTuple):
    """A market source's constants in one declaration, unpacked into the module's SOURCE,
    BASE_URL, LICENCE, PROVIDES, ENV_VAR, NEEDS_KEY and ACCUMULATE (the names ingest reads):
    a source needs no key and does not accumulate unless it says so."""

    name: str
    base_url: str
    licence: str
    provides: tuple[Table, ...]
    env_var: str | None = None
    needs_key: bool = False
    accumulate: bool = False


@dataclass(frozen=True)
class Probe:
    """A cheap real request of the source's API that answers 2xx when the service is healthy
    (`scorecard ingest --check`): `path` (with its query) under the base URL, and where the
    key goes when ENV_VAR is set (a query parameter or a header, kept out of every line)."""

    path: str
    key_param: str | None = None
    key_header: str | None = None


@dataclass(frozen=True)
class Raw:
    """A stored raw snapshot, as parse sees it."""

    sha256: str
    url: str
    params: dict[str, str]
    data: bytes
    fetched_at: datetime

    @property
    def fetched_on(self) -> date:
        """The UTC day of the fetch: the `source_date` of the rows it gives."""
        return self.fetched_at.astimezone(UTC).date()


@dataclass(frozen=True)
class Context:
    """Everything a job needs besides the session: the vintage, the day of the run, the
    region map, the ECB rates known so far (a callable: the ecb job may just have loaded
    them), fetch policy and per-source base-URL and zone overrides (tests,
    SCORECARD_<SOURCE>_BASE_URL)."""

    vintage: str
    today: date
    regions: pl.DataFrame
    fx_rates: Callable[[], pl.DataFrame] = field(default=no_fx)
    policy: FetchPolicy = DEFAULT_POLICY
    base_urls: dict[str, str] = field(default_factory=dict)
    zones: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def fetch(self, fetch_kind: Callable[..., Iterable[Fetched]], session: requests.Session,
              *args: object, source: str, base_url: str) -> Iterator[Fetched]:
        """fetch_kind(session, *args) at the base URL `base_urls` gives `source` (else
        `base_url`, the module's BASE_URL), under the run's fetch policy: each response as
        it arrives (a request is made when the one before has been taken)."""
        yield from fetch_kind(session, *args, base_url=self.base_urls.get(source, base_url),
                              policy=self.policy)

    def each_zone(self, fetch_zone: Callable[..., Iterable[Fetched]],
                  session: requests.Session, *args: object, source: str, base_url: str,
                  zones: tuple[str, ...]) -> Iterator[Fetched]:
        """The responses of fetch_zone(session, zone, *args), as `fetch` makes them, for each
        zone of `source` in turn: `zones` (the module's DEFAULT_ZONES, or its regions or
        locations) unless the context's `zones` names some."""
        for zone in self.zones.get(source, zones):
            yield from self.fetch(fetch_zone, session, zone, *args, source=source,
                                  base_url=base_url)

    @property
    def month(self) -> tuple[date, date]:
        """First and last day of the vintage month, the last capped at today."""
        year, month = (int(p) for p in self.vintage.split("-"))
        first = date(year, month, 1)
        last = date(year, month, calendar.monthrange(year, month)[1])
        return first, min(last, max(self.today, first))

    def check_month(self, frame: pl.DataFrame, source: str, url: str, *,
                    margin: timedelta = timedelta(0)) -> pl.DataFrame:
        """`frame` as it is when every row's interval starts within the vintage month's local
        days in any European zone (UTC+0..+3: from 3 h before the month's first UTC midnight
        to the next month's), widened by `margin` on each side for an API that answers with
        whole market days around the window asked; else a ParseError naming the month asked
        and the span received, so an answer about another month is refused, never stored as
        this one."""
        first, _ = self.month
        days = calendar.monthrange(first.year, first.month)[1]
        start = datetime(first.year, first.month, 1, tzinfo=UTC) - timedelta(hours=3) - margin
        end = datetime(first.year, first.month, 1, tzinfo=UTC) + timedelta(days=days) + margin
        if frame.is_empty():
            return frame
        times = frame["interval_start_utc"]
        low, high = cast(datetime, times.min()), cast(datetime, times.max())
        if start <= low and high < end:
            return frame
        raise ParseError(source, url, "interval_start_utc",
                         f"the answer is about {low:%Y-%m-%d %H:%M} to "
                         f"{high:%Y-%m-%d %H:%M} UTC, not the vintage {self.vintage} "
                         f"(intervals from {start:%Y-%m-%d %H:%M} to before "
                         f"{end:%Y-%m-%d %H:%M} UTC): refused")

    def in_month(self, frame: pl.DataFrame) -> pl.DataFrame:
        """The rows whose interval starts in the vintage's month (UTC)."""
        return frame.filter(pl.col("interval_start_utc").dt.strftime("%Y-%m") == self.vintage)


#: What parse returns: each canonical table with the rows one snapshot gives it.
Frames = list[tuple[Table, pl.DataFrame]]


class MarketSource(Protocol):
    """What `sources.registry` holds: a source module, as ingest uses it (read-only
    properties here stand for the module's constants)."""

    @property
    def SOURCE(self) -> str: ...
    @property
    def BASE_URL(self) -> str: ...
    @property
    def LICENCE(self) -> str: ...
    @property
    def PROVIDES(self) -> tuple[Table, ...]: ...
    @property
    def ENV_VAR(self) -> str | None: ...
    @property
    def NEEDS_KEY(self) -> bool:
        """Skipped (not failed) when ENV_VAR is unset."""
    @property
    def ACCUMULATE(self) -> bool:
        """Each load re-includes the vintage's earlier snapshots."""
    @property
    def PROBE(self) -> Probe:
        """What `scorecard ingest --check` asks (a separate constant, not in `Source`)."""

    def fetch(self, session: requests.Session, ctx: Context) -> Iterator[Fetched]: ...

    def parse(self, raw: Raw, ctx: Context, notes: list[str]) -> Frames: ...


def cited(url: str, fetched_on: date, licence: str) -> list[pl.Expr]:
    """The provenance columns every market row ends with: source_url, source_date, licence."""
    return [pl.lit(url).alias("source_url"), pl.lit(fetched_on).alias("source_date"),
            pl.lit(licence).alias("licence")]


def single_table(table: Table, parse_kind: Callable[..., pl.DataFrame], raw: Raw, ctx: Context,
                 notes: list[str], **params: object) -> Frames:
    """The one table a snapshot fills: parse_kind(raw.data, url=, vintage=, fetched_on=,
    notes=, **params), the keywords every parse_<kind> of a source takes."""
    return [(table, parse_kind(raw.data, url=raw.url, vintage=ctx.vintage,
                               fetched_on=raw.fetched_on, notes=notes, **params))]
