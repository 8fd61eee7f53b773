"""Completeness before replacement: the checks a source's parsed answer passes before it may
replace that source's rows of a vintage (docs/sources.md, "Completeness").

A load replaces all of a source's rows of a vintage, so an answer that is valid but partial
(one zone answering empty, a page missing, a header-only file next to a good one) would
silently delete good rows. Here:

- duplicates: rows sharing a table key across or within snapshots are dropped (and counted)
  when identical in every value; when they differ the batch is refused, naming the first key
  and where it came from;
- coverage: per table and zone (region for offers, currency for FX), the answer must hold at
  least what the last good load of the vintage holds: no zone, table or interval lost.

An answer that fails raises `Incomplete` (a ParseError: the source fails, exit 2, its rows
stay as they were) saying what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import polars as pl

from pipeline import store
from schemas.table import Table
from sources.errors import ParseError

#: Columns that say where a row came from, not what it says: two rows differing only there
#: are the same row (a page served twice).
_PROVENANCE = ("source_url", "source_date", "licence")
#: How many missing zones an error names before "and N more".
_NAMED = 5


class Incomplete(ParseError):
    """A source's answer is valid but holds less than what it would replace."""


def _zone_column(columns: Sequence[str]) -> str | None:
    return next((c for c in ("region", "zone", "currency") if c in columns), None)


def _counted_column(table_key: Sequence[str], columns: Sequence[str]) -> str:
    """What coverage counts per zone: intervals, rate days, else offers (the key's last
    distinguishing column)."""
    for name in ("interval_start_utc", "rate_date", "offer_id"):
        if name in columns:
            return name
    return table_key[-1]


def drop_duplicates(source: str, batches: Sequence[store.Batch],
                    notes: list[str]) -> list[store.Batch]:
    """The batches without repeated keys: identical repeats (every value but provenance
    equal) dropped and counted in `notes`; a conflicting repeat raises ParseError naming its
    key and origins."""
    by_table: dict[str, list[int]] = {}
    for index, batch in enumerate(batches):
        by_table.setdefault(batch.table.name, []).append(index)
    kept = list(batches)
    for name, indices in by_table.items():
        table = batches[indices[0]].table
        key = list(table.key)
        values = [c for c in table.columns if c not in key and c not in _PROVENANCE]
        rows = pl.concat([
            batches[i].frame.select([*key, *values]).with_columns(
                pl.lit(i).alias("_batch"), pl.int_range(pl.len()).alias("_row"))
            for i in indices], how="vertical_relaxed")
        repeated = rows.filter(pl.struct(key).is_duplicated())
        if not repeated.height:
            continue
        distinct = repeated.group_by(key).agg(
            pl.struct(values).n_unique().alias("_versions") if values
            else pl.lit(1).alias("_versions"),
            pl.col("_batch"), pl.col("_row").min().alias("_first"))
        conflicts = distinct.filter(pl.col("_versions") > 1)
        if conflicts.height:
            first = conflicts.sort("_first").row(0, named=True)
            origins = sorted({batches[i].origin for i in first["_batch"]})
            shown = ", ".join(f"{k}={first[k]}" for k in key)
            raise ParseError(source, ", ".join(origins), f"{name} key",
                             f"{conflicts.height} key(s) given twice with different values, "
                             f"the first {shown}: refused rather than keep one at random")
        dropped = rows.with_columns(
            pl.struct(["_batch", "_row"]).rank("ordinal").over(key).alias("_nth")
        ).filter(pl.col("_nth") > 1)
        for i in indices:
            drop = dropped.filter(pl.col("_batch") == i)["_row"]
            if drop.len():
                batch = batches[i]
                frame = batch.frame.with_row_index("_row").filter(
                    ~pl.col("_row").is_in(drop.implode())).drop("_row")
                kept[i] = store.Batch(batch.table, frame, batch.snapshot_sha256,
                                      batch.origin, batch.validated)
        notes.append(f"{name}: {dropped.height} identical duplicate row(s) dropped")
    return kept


def check_coverage(con: duckdb.DuckDBPyConnection, source: str, vintage: str,
                   tables: Sequence[Table], batches: Sequence[store.Batch]) -> None:
    """Raise Incomplete when the answer holds, for some table the source provides and some
    zone, fewer intervals (or offers, or rate days) than the source's rows of `vintage` hold
    now, i.e. than its last good load gave."""
    missing: list[str] = []
    for table in tables:
        name, columns = table.name, list(table.columns)
        zone = _zone_column(columns)
        if zone is None:
            continue
        counted = _counted_column(table.key, columns)
        before = store.coverage(con, source, vintage, name, zone, counted)
        if not before:
            continue
        frames = [b.frame.select(zone, counted) for b in batches if b.table.name == name]
        now: dict[str, int] = {}
        if frames:
            now = {str(z): int(n) for z, n in pl.concat(frames).group_by(zone).agg(
                pl.col(counted).n_unique()).iter_rows()}
        for value, had in sorted(before.items()):
            has = now.get(value, 0)
            if has < had:
                what = "none" if has == 0 else f"{has}"
                missing.append(f"{name} {zone} {value}: {what} of the {had} "
                               f"{counted.removesuffix('_utc')} value(s) the last good load "
                               "holds")
    if missing:
        shown = "; ".join(missing[:_NAMED])
        if len(missing) > _NAMED:
            shown += f"; and {len(missing) - _NAMED} more"
        raise Incomplete(source, "(this answer)", "coverage",
                         f"incomplete answer, the earlier rows are kept: {shown}")
