"""What every benchmark reader returns: one `BenchRun` per benchmark run found in a file.

A run holds the per-request frame in our column names and units (`REQUEST_COLUMNS`; null when
the tool wrote aggregates only), the aggregates the tool itself reported (`reported`, in our
names and units, so our figures can be checked against the tool's), the load level, the
benchmark window on the requests' clock and, when the file says so, in UTC, and which
definition of ITL/TPOT the tool used. Readers never invent per-request values.

Token basis, one for every reader: `output_tokens` (and `reported["total_output_tokens"]`,
`reported["output_tokens_per_s"]`) count every token the server generated, reasoning tokens
included (what the server's decode work and the usual `usage.completion_tokens` count). A
format that keeps reasoning apart (AIPerf: `output_token_count` is the visible tokens only) is
summed back to this basis by its reader, with a note. `pipeline.evidence.goodput` notes a run
whose throughput from the requests disagrees with the file's own by more than 1 %.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from schemas.evidence import BENCH_REQUESTS, ITL_DEFINITIONS, TPOT_DEFINITIONS
from schemas.fields import FIELDS

# Per-request columns (all times in s; `sent_s`/`done_s` on the run's own clock, the same clock
# as `BenchRun.window_start_s`). `itls_s` (the gaps, a list) is optional and not stored.
REQUEST_SCHEMA: dict[str, pl.DataType] = {
    name: FIELDS[name].dtype for name in BENCH_REQUESTS.columns
    if name not in ("bench_file", "run_index")  # the run's key, added when runs are stored
}
REQUEST_COLUMNS = tuple(REQUEST_SCHEMA)
ITLS = "itls_s"
#: a per-request flag standing in for `itls_s` when the gaps were not kept (the evidence cache):
#: whether the request had gap data
GAPS_KNOWN = "gaps_known"

# How the source defines its gap and TPOT figures is recorded on every run; the allowed words
# (token / chunk / request_mean / none, ...) live with the table declarations.
__all__ = ["GAPS_KNOWN", "ITLS", "ITL_DEFINITIONS", "REQUEST_COLUMNS", "TPOT_DEFINITIONS",
           "BenchRun"]


@dataclass(frozen=True)
class BenchRun:
    tool: str
    path: str
    run_index: int
    requests: pl.DataFrame | None
    reported: Mapping[str, float | int | None]
    concurrency: int | None = None
    request_rate_per_s: float | None = None
    window_start_s: float | None = None
    window_end_s: float | None = None
    duration_s: float | None = None
    started_at_utc: datetime | None = None
    ended_at_utc: datetime | None = None
    clock_uncertainty_s: float | None = None
    itl_definition: str = "none"
    tpot_definition: str = "none"
    label: str | None = None
    model: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: the ITL percentiles over the default window's completed requests, when the gaps
    #: themselves were not kept (runs read back from the evidence cache); None otherwise
    itl_summary: Mapping[str, float | int | None] | None = None

    @property
    def aggregate_only(self) -> bool:
        return self.requests is None

    @property
    def window_s(self) -> float | None:
        if self.window_start_s is not None and self.window_end_s is not None:
            return self.window_end_s - self.window_start_s
        return self.duration_s


def conform(frame: pl.DataFrame) -> pl.DataFrame:
    """Add missing canonical columns as nulls, cast to the canonical dtypes, keep `itls_s`."""
    cols = [
        (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
        for name, dtype in REQUEST_SCHEMA.items()
    ]
    if ITLS in frame.columns:
        cols.append(pl.col(ITLS).cast(pl.List(pl.Float64())))
    return frame.select(cols)
