"""The canonical request trace (DESIGN section 6): JSON Lines, one request per line, for
in-house load generators.

Fields per line: `request_id`, `sent_s`, either `token_times_s` (a list: one timestamp per
output token) or `first_token_s` + `last_token_s` + `output_tokens`, `done_s`, `ok`, `error`,
`input_tokens`. All times are seconds on one clock of the writer's choice; `--window` is given
on that clock. With `token_times_s` the gaps are real token gaps (`itl_definition = "token"`);
lines without it have no gap data (a `--max-itl-ms` SLO cannot be judged for them).
The default window runs from the first `sent_s` to the last `done_s`. Values above 1e9 are
read as unix epoch seconds (said in the notes) so the window can be placed in UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from sources.bench.jsondoc import decode_text, head, json_lines
from sources.bench.run import ITLS, BenchRun, conform
from sources.errors import ParseError

TOOL = "trace"

EPOCH_THRESHOLD_S = 1e9

_SCHEMA: dict[str, pl.DataType] = {
    "request_id": pl.String(),
    "sent_s": pl.Float64(),
    "token_times_s": pl.List(pl.Float64()),
    "first_token_s": pl.Float64(),
    "last_token_s": pl.Float64(),
    "output_tokens": pl.Int64(),
    "done_s": pl.Float64(),
    "ok": pl.Boolean(),
    "error": pl.String(),
    "input_tokens": pl.Int64(),
}


def detect(path_or_bytes: str | Path | bytes) -> bool:
    first = head(path_or_bytes).lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"sent_s"' in first


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    text = decode_text(data, TOOL, path)
    lines = json_lines(text, TOOL, path)
    if not lines:
        raise ParseError(TOOL, path, "line 1", "empty trace: no request lines")
    records = []
    for n, record in lines:
        missing = [k for k in ("sent_s", "ok") if record.get(k) is None]
        if missing:
            raise ParseError(TOOL, path, f"line {n}", f"missing field(s) {missing}")
        records.append(_typed(record, n, path))
    try:
        raw = pl.DataFrame(records, schema=_SCHEMA, orient="row")
    except (OverflowError, pl.exceptions.PolarsError) as err:
        raise ParseError(TOOL, path, "lines", f"value out of range: {err}") from None
    line_no = pl.Series("line", [n for n, _ in lines])
    raw = raw.with_columns(line=line_no)
    _check_order(raw, path)

    times = pl.col("token_times_s")
    has_times = times.is_not_null()
    first = pl.when(has_times).then(times.list.first()).otherwise(pl.col("first_token_s"))
    last = pl.when(has_times).then(times.list.last()).otherwise(pl.col("last_token_s"))
    n_out = pl.when(has_times).then(times.list.len().cast(pl.Int64())).otherwise(
        pl.col("output_tokens"))
    gaps = times.list.diff(null_behavior="drop")
    frame = raw.select(
        request_id=pl.col("request_id").fill_null(pl.col("line").cast(pl.String())),
        sent_s=pl.col("sent_s"),
        done_s=pl.col("done_s").fill_null(last),
        ttft_s=pl.when(pl.col("ok")).then(first - pl.col("sent_s")),
        tpot_s=pl.when(pl.col("ok") & (n_out > 1)).then((last - first) / (n_out - 1)),
        max_itl_s=pl.when(pl.col("ok")).then(gaps.list.max()),
        e2e_s=pl.when(pl.col("ok")).then(pl.col("done_s").fill_null(last) - pl.col("sent_s")),
        output_tokens=n_out,
        input_tokens=pl.col("input_tokens"),
        ok=pl.col("ok"),
        incomplete=pl.lit(False),
        error=pl.col("error"),
        **{ITLS: pl.when(pl.col("ok")).then(gaps)},
    )
    frame = conform(frame)
    notes: list[str] = []
    with_times = raw["token_times_s"].is_not_null().sum()
    ok_without = (raw["ok"] & raw["token_times_s"].is_null()).sum()
    itl_definition = "token" if with_times else "none"
    if ok_without:
        notes.append(f"{ok_without} successful request(s) have no token_times_s: their gaps are "
                     "unknown")
    start = _float(frame["sent_s"].min())
    end = _float(frame["done_s"].max())
    if start is not None and (end is None or end < start):
        end = _float(frame["sent_s"].max())
    notes.append("default window: first sent_s to last done_s")
    started = ended = None
    if start is not None and end is not None and start > EPOCH_THRESHOLD_S:
        started = datetime.fromtimestamp(start, UTC)
        ended = datetime.fromtimestamp(end, UTC)
        notes.append("sent_s values above 1e9 read as unix epoch seconds")
    return [BenchRun(
        tool=TOOL, path=path, run_index=0, requests=frame, reported={},
        window_start_s=start, window_end_s=end,
        duration_s=None if start is None or end is None else end - start,
        started_at_utc=started, ended_at_utc=ended,
        clock_uncertainty_s=0.0 if started else None,
        itl_definition=itl_definition, tpot_definition="last_minus_first_over_n_minus_1",
        notes=tuple(notes),
    )]


_NUMBER = (int, float)


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _typed(record: dict, n: int, path: str) -> tuple:
    """The record's values in _SCHEMA order, each checked for its JSON type."""
    out = []
    for name, dtype in _SCHEMA.items():
        value = record.get(name)
        if value is None:
            good = True
        elif name == "request_id":
            good = isinstance(value, str | int) and not isinstance(value, bool)
            value = str(value) if good else value
        elif name == "token_times_s":
            good = isinstance(value, list) and all(
                isinstance(v, _NUMBER) and not isinstance(v, bool) for v in value)
            value = [float(v) for v in value] if good else value
        elif dtype == pl.Boolean():
            good = isinstance(value, bool)
        elif dtype == pl.String():
            good = isinstance(value, str)
        elif dtype == pl.Int64():
            good = isinstance(value, int) and not isinstance(value, bool)
        else:
            good = isinstance(value, _NUMBER) and not isinstance(value, bool)
            value = float(value) if good else value
        if not good:
            raise ParseError(TOOL, path, f"line {n}: field {name!r}",
                             f"cannot read {value!r} as {dtype}")
        out.append(value)
    return tuple(out)


def _check_order(raw: pl.DataFrame, path: str) -> None:
    bad = raw.filter(
        (pl.col("done_s") < pl.col("sent_s"))
        | (pl.col("token_times_s").list.first() < pl.col("sent_s"))
        | (pl.col("token_times_s").list.diff(null_behavior="drop").list.min() < 0)
        | (pl.col("first_token_s") < pl.col("sent_s"))
        | (pl.col("last_token_s") < pl.col("first_token_s"))
    )
    if bad.height:
        raise ParseError(TOOL, path, f"line {bad['line'][0]}",
                         "timestamps out of order (a token or done_s before sent_s, or token "
                         "times decreasing)")
