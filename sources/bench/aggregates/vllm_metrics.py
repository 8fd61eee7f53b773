"""vLLM `/metrics` Prometheus scrapes: production evidence (grade `production`).

A file holds one or more scrapes of one server, each preceded by a comment line
`# scraped_at: <ISO-8601 with offset, or unix seconds>` (or `# scrape_utc:`/`# scrape_time:`,
as for dcgm-exporter; e.g.
`{ echo "# scraped_at: $(date -u +%FT%TZ)"; curl -s host:8000/metrics; } >> scrapes.txt`);
sample timestamps in the exposition (ms) are used when there is no such comment. The first and
last scrapes bound the window: counter differences give completed requests
(`request_success_total` with finished_reason stop/length/repetition), errors (`error`),
aborted (`abort`, read as incomplete) and output tokens (`generation_tokens_total`); histogram
differences give TTFT (`time_to_first_token_seconds`), TPOT
(`request_time_per_output_token_seconds`), ITL (`inter_token_latency_seconds`, one
observation per streamed output event, so chunk gaps; before 0.11
`time_per_output_token_seconds`) and e2e percentiles, **estimated** from buckets by linear
interpolation within a bucket (as Prometheus' histogram_quantile does). These are server-side
figures: no network, no client queue. Engines and models are summed (the models are listed in
the notes). There is no per-request data, so goodput under an SLO is not computed. A counter
that went down between scrapes (a restart) is an error.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from sources.bench.jsondoc import decode_text, head
from sources.bench.run import BenchRun
from sources.errors import ParseError
from sources.scrape_time import SCRAPE_TIME_COMMENT

TOOL = "vllm-metrics"

_SCRAPED = re.compile(SCRAPE_TIME_COMMENT)
_OK_REASONS = ("stop", "length", "repetition")
_HISTOGRAMS = {"ttft": ("vllm:time_to_first_token_seconds",),
               "tpot": ("vllm:request_time_per_output_token_seconds",),
               "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
               "e2e": ("vllm:e2e_request_latency_seconds",)}
_QUANTILES = (50, 90, 95, 99)

#: one series' identity: its name and its labels
Key = tuple[str, frozenset[tuple[str, str]]]
#: each counter, histogram bucket, _count and _sum series' value (or increase)
Counts = dict[Key, float]
# one scrape: time, {(name, frozenset(labels)): value}
Scrape = tuple[float | None, Counts]
#: the series whose increase over the window is read (counters and histogram parts)
COUNTED = ("_total", "_bucket", "_count", "_sum")
#: said of every run: the histogram percentiles are interpolated
ESTIMATES_NOTE = "percentiles are estimates from histogram buckets (linear within a bucket)"


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes)
    return b"# TYPE vllm:" in top or (b"\nvllm:" in top and b"_total" in top)


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    scrapes = read_scrapes(decode_text(data, TOOL, path), path)
    first, last = scrapes[0], scrapes[-1]
    notes = ["vLLM /metrics scrapes: server-side figures (no network, no client queue)",
             ESTIMATES_NOTE]
    t1 = last[0]
    if t1 is None:
        raise ParseError(TOOL, path, "scrape 1", "no scrape time: put '# scraped_at: "
                         "<ISO-8601 or unix seconds>' before each scrape")
    if len(scrapes) == 1:
        created = [v for (name, _), v in last[1].items()
                   if name == "vllm:generation_tokens_created"]
        if not created:
            raise ParseError(TOOL, path, "scrape 1", "one scrape and no "
                             "vllm:generation_tokens_created: the window is unknown")
        t0 = min(created)
        base: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
        notes.append("one scrape: the window runs from the counters' creation (server start) "
                     "to the scrape, idle time included")
    else:
        if first[0] is None:
            raise ParseError(TOOL, path, "scrape 1", "no scrape time")
        t0, base = first[0], first[1]
        notes.append(f"window: first to last of {len(scrapes)} scrapes")
    if t1 <= t0:
        raise ParseError(TOOL, path, f"scrape {len(scrapes)}", "scrape times not increasing")
    delta = _delta(base, last[1], path)
    models = sorted({v for (_, labels) in last[1] for k, v in labels if k == "model_name"})
    return [window_run(delta, t0=t0, t1=t1, models=models, notes=notes, path=path)]


def window_run(delta: Counts, *, t0: float, t1: float, models: Sequence[str],
               notes: Sequence[str], path: str, run_index: int = 0) -> BenchRun:
    """The run of the window [t0, t1] (unix s) from the increases `delta` of its counters and
    histogram buckets over it: the one place /metrics increases become figures, for the text
    scrapes here and for Prometheus query_range exports (`vllm_metrics_range`)."""
    window = t1 - t0

    def total(name: str, **match: str) -> float:
        return sum(v for (n, labels), v in delta.items() if n == name
                   and all((k, val) in labels for k, val in match.items()))

    completed = sum(total("vllm:request_success_total", finished_reason=r) for r in _OK_REASONS)
    failed = total("vllm:request_success_total", finished_reason="error")
    aborted = total("vllm:request_success_total", finished_reason="abort")
    tokens = total("vllm:generation_tokens_total")
    reported: dict[str, float | int | None] = {
        "completed": int(completed), "failed": int(failed), "incomplete": int(aborted),
        "offered": int(completed + failed + aborted), "duration_s": window,
        "total_output_tokens": int(tokens), "output_tokens_per_s": tokens / window,
        "request_throughput_per_s": completed / window,
    }
    for metric, names in _HISTOGRAMS.items():
        name = next((n for n in names if any(k[0] == f"{n}_bucket" for k in delta)), None)
        if name is not None:
            reported.update(_quantiles(delta, name, metric, path))
    notes = list(notes)
    if len(models) > 1:
        notes.append(f"several models summed: {', '.join(models)}")
    return BenchRun(
        tool=TOOL, path=path, run_index=run_index, requests=None, reported=reported,
        window_start_s=0.0, window_end_s=window, duration_s=window,
        started_at_utc=datetime.fromtimestamp(t0, UTC),
        ended_at_utc=datetime.fromtimestamp(t1, UTC), clock_uncertainty_s=1.0,
        itl_definition="chunk", tpot_definition="last_minus_first_over_n_minus_1",
        model=models[0] if len(models) == 1 else None, notes=tuple(notes),
    )


def _time(text: str, path: str, where: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if not 0 <= seconds < 1e11:  # finite and a representable date
            raise ParseError(TOOL, path, where, f"scraped_at {text!r} is out of range")
        return seconds
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ParseError(TOOL, path, where, f"scraped_at {text!r} is neither unix seconds nor "
                         "ISO-8601") from None
    if moment.tzinfo is None:
        raise ParseError(TOOL, path, where, f"scraped_at {text!r} has no timezone offset")
    return moment.timestamp()


def read_scrapes(text: str, path: str) -> list[Scrape]:
    """The scrapes of the file, split at its scrape-time comments, each parsed by
    prometheus_client's parser of the text exposition (sample names, labels, values and
    timestamps as Prometheus reads them)."""
    chunks: list[tuple[float | None, int, list[str]]] = [(None, 1, [])]  # time, line, lines
    for n, line in enumerate(text.splitlines(), start=1):
        marker = _SCRAPED.match(line)
        if marker:
            chunks.append((_time(marker.group(1), path, f"line {n}"), n + 1, []))
        else:
            chunks[-1][2].append(line)
    scrapes: list[Scrape] = []
    for when, first, lines in chunks:
        current: Counts = {}
        stamps: list[float] = []
        for name, labels, number, stamp in _samples(lines, first, path):
            if stamp is not None:
                stamps.append(stamp)
            if math.isfinite(number):
                current[(name, labels)] = number
        if current or stamps:
            scrapes.append((when if when is not None else _max(stamps), current))
    if not scrapes:
        raise ParseError(TOOL, path, "line 1", "no samples")
    if not any(k[0] == "vllm:generation_tokens_total" for k in scrapes[-1][1]):
        raise ParseError(TOOL, path, "vllm:generation_tokens_total", "missing: not a vLLM "
                         "/metrics scrape")
    return scrapes


def _samples(lines: list[str], first: int, path: str
             ) -> list[tuple[str, frozenset[tuple[str, str]], float, float | None]]:
    """(name, labels, value, timestamp in s) of one scrape's lines (the first is line
    `first` of the file), by prometheus_client's parser; a line it refuses is a ParseError
    naming it."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        families = list(text_string_to_metric_families("\n".join(lines) + "\n"))
    except (ValueError, TypeError, IndexError):
        for i, line in enumerate(lines):  # which line: each alone (only on a failure)
            if line.strip() and not line.startswith("#"):
                try:
                    list(text_string_to_metric_families(line + "\n"))
                except (ValueError, TypeError, IndexError):
                    raise ParseError(TOOL, path, f"line {first + i}",
                                     "not a Prometheus sample line") from None
        raise ParseError(TOOL, path, f"line {first}", "not a Prometheus text exposition "
                         "(a TYPE or HELP line it refuses)") from None
    out = []
    for family in families:
        for sample in family.samples:
            stamp = None if sample.timestamp is None else float(sample.timestamp)
            if stamp is not None and not 0 <= stamp < 1e11:
                raise ParseError(TOOL, path, sample.name, f"timestamp {stamp} out of range")
            out.append((sample.name, frozenset(sample.labels.items()), float(sample.value),
                        stamp))
    return out


def _max(values: list[float]) -> float | None:
    return max(values) if values else None


def _delta(base: dict[tuple[str, frozenset[tuple[str, str]]], float],
           last: dict[tuple[str, frozenset[tuple[str, str]]], float], path: str
           ) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for key, value in last.items():
        name = key[0]
        if not name.endswith(COUNTED):
            continue
        diff = value - base.get(key, 0.0)
        if diff < -1e-9:
            raise ParseError(TOOL, path, f"{name}{dict(key[1])}", "counter went down between "
                             "scrapes (server restart?): the window cannot be measured")
        out[key] = diff
    return out


def _quantiles(delta: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
               metric: str, path: str) -> dict[str, float | int | None]:
    buckets: dict[float, float] = defaultdict(float)
    for (n, labels), value in delta.items():
        if n == f"{name}_bucket":
            le = dict(labels).get("le")
            if le is None:
                continue
            try:
                bound = math.inf if le == "+Inf" else float(le)
            except ValueError:
                raise ParseError(TOOL, path, f"{name}_bucket", f"bad le {le!r}") from None
            buckets[bound] += value
    count = sum(v for (n, _), v in delta.items() if n == f"{name}_count")
    total = sum(v for (n, _), v in delta.items() if n == f"{name}_sum")
    out: dict[str, float | int | None] = {f"{metric}_count": int(count)}
    out[f"{metric}_mean_s"] = total / count if count else None
    bounds = sorted(buckets)
    for q in _QUANTILES:
        out[f"{metric}_p{q}_s"] = _bucket_quantile(bounds, buckets, count, q / 100)
    return out


def _bucket_quantile(bounds: list[float], cumulative: dict[float, float], count: float,
                     q: float) -> float | None:
    if count <= 0 or not bounds:
        return None
    rank = q * count
    lower, below = 0.0, 0.0
    for le in bounds:
        if cumulative[le] >= rank:
            if math.isinf(le):
                return lower  # in the +Inf bucket: the highest finite bound, as Prometheus
            inside = cumulative[le] - below
            return lower + (le - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = le, cumulative[le]
    return None
