"""GuideLLM `benchmarks.csv` (`--output kind=csv`, 0.4 to 0.8): one row per benchmark,
aggregates only.

Three header rows (group, name, unit: "Time to First Token" / "Successful ms" / "Percentiles")
then one row per benchmark. Read: `Benchmark/Strategy` (`synchronous` = concurrency 1,
`concurrent@N` = N, `constant@R`/`poisson@R` = R req/s, `throughput` neither),
`Timings/Duration` (s: the window, on the run's own clock: the CSV's times are naive and to the
second), `Request Counts` (successful, incomplete, errored, total), the "Successful ms"
statistics of Time to First Token and Inter Token Latency (GuideLLM's ITL is our TPOT,
token-weighted; its "Time per Output Token" includes the TTFT and is not used) and Request
Latency (s), and the output-token throughput mean. "Percentiles" cells are JSON lists in
GuideLLM's order p0.1, p1, p5, p10, p25, p50, p75, p90, p95, p99, p99.9.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sources.bench.jsondoc import decode_text, head, number
from sources.bench.run import BenchRun
from sources.bench.summary import summary_run
from sources.errors import ParseError

TOOL = "guidellm-csv"
_ORDER = ("p0.1", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9")
_LATENCY = {("Time to First Token", "Successful ms"): ("ttft", 1e-3),
            ("Inter Token Latency", "Successful ms"): ("tpot", 1e-3),
            ("Request Latency", "Successful Sec"): ("e2e", 1.0)}


def detect(path_or_bytes: str | Path | bytes) -> bool:
    top = head(path_or_bytes)
    return top.startswith(b"Run Info,") and b"Time to First Token" in top and (
        b"Request Counts" in top)


def parse(data: bytes, *, path: str, tz: str | None = None) -> list[BenchRun]:
    rows = list(csv.reader(io.StringIO(decode_text(data, TOOL, path))))
    if len(rows) < 4:
        raise ParseError(TOOL, path, "header", "expected three header rows and a benchmark row")
    groups, names, units = rows[0], rows[1], rows[2]
    runs = []
    for index, row in enumerate(rows[3:]):
        if not any(cell.strip() for cell in row):
            continue
        line = index + 4
        cells = {(g, n, u): v for g, n, u, v in zip(groups, names, units, row, strict=False)}

        def cell(group: str, name: str, unit: str = "", line: int = line,
                 cells: dict[tuple[str, str, str], str] = cells) -> float | None:
            text = cells.get((group, name, unit), "").strip()
            return number(text or None, TOOL, path, f"line {line} {group}/{name}")

        duration = cell("Timings", "Duration", "Sec")
        if duration is None or duration <= 0:
            raise ParseError(TOOL, path, f"line {line} Timings/Duration", "missing or not positive")
        counts = {k: cell("Request Counts", k) for k in ("Successful", "Incomplete", "Errored",
                                                         "Total")}
        reported: dict[str, float | int | None] = {
            "completed": None if counts["Successful"] is None else int(counts["Successful"]),
            "incomplete": None if counts["Incomplete"] is None else int(counts["Incomplete"]),
            "failed": None if counts["Errored"] is None else int(counts["Errored"]),
            "offered": None if counts["Total"] is None else int(counts["Total"]),
            "duration_s": duration,
            "output_tokens_per_s": cell("Token Throughput", "Successful Output Tokens/Sec",
                                        "Mean"),
        }
        for (group, name), (metric, scale) in _LATENCY.items():
            mean = cell(group, name, "Mean")
            reported[f"{metric}_mean_s"] = None if mean is None else mean * scale
            text = cells.get((group, name, "Percentiles"), "").strip()
            if text:
                try:
                    values = json.loads(text)
                except json.JSONDecodeError:
                    raise ParseError(TOOL, path, f"line {line} {group}/{name} Percentiles",
                                     "not a JSON list") from None
                if not isinstance(values, list) or len(values) != len(_ORDER):
                    raise ParseError(TOOL, path, f"line {line} {group}/{name} Percentiles",
                                     f"expected {len(_ORDER)} values")
                for q, value in zip(_ORDER, values, strict=True):
                    figure = number(value, TOOL, path, f"line {line} {group}/{name} {q}")
                    reported[f"{metric}_{q}_s"] = None if figure is None else figure * scale
        strategy = cells.get(("Benchmark", "Strategy", ""), "").strip()
        kind, _, load = strategy.partition("@")
        concurrency = 1 if kind == "synchronous" else (
            int(float(load)) if kind == "concurrent" and load else None)
        rate = float(load) if kind in ("constant", "poisson") and load else None
        runs.append(summary_run(
            TOOL, path, index, reported, concurrency=concurrency, rate=rate, duration=duration,
            params={"strategy": kind} if kind else {},
            notes=[f"GuideLLM CSV, strategy {strategy or 'unknown'}: aggregates only; window = "
                   "Duration on the run's own clock"],
            itl="request_mean", tpot="last_minus_first_over_n_minus_1"))
    return runs
