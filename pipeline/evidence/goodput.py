"""Goodput under an SLO, latency percentiles and the knee of a sweep (DESIGN section 7).

A request passes when it completed successfully inside the observation window, its TTFT is
within `ttft_ms`, its TPOT within `tpot_ms` (when set) and its largest gap within `max_itl_ms`
(when set); a one-token output passes the gap conditions vacuously. Request goodput = passing
requests / window seconds; token goodput = their output tokens / window seconds. Offered =
requests sent inside the window; completed = offered, successful and done by the window's end;
incomplete = offered but cancelled or done after the end; failed = offered and errored.
Percentiles are linear-interpolated (numpy's default, which vLLM uses) over completed requests
and come with their sample counts. Limits are compared with a 1 µs tolerance so that a value
exactly at the limit is not failed by floating-point noise (1 µs: epoch-second floats, as
GuideLLM writes them, resolve about 0.24 µs).

Aggregate-only runs take the tool's own aggregates; their token goodput is the conservative
percentile bound (`percentile_bound`: a reported percentile at or under its limit proves that
share passes, limits combined by the union bound; goodput = output throughput x the share when
it reaches the attainment), or an MLPerf Server result's own throughput when its constraints
are at least as strict as the SLO; their request goodput is the tool's when it reports
one (vLLM `request_goodput`, under the SLO the tool was given) and null with a reason otherwise.

A sweep's load variable is concurrency, or request rate when more runs differ in rate; runs
without it are left out of the knee with a note. The knee is the highest load level whose
attainment (passed / offered) reaches `slo.attainment` and whose p99s meet
`ttft_p99_ms`/`tpot_p99_ms` when set; several runs at one level are pooled (attainment from
summed counts, mean goodput, worst p99).

Checks on every run (docs/evidence.md, "Evidence that fits"): `operating_point_shortfall`, the
SLO rule an operating point must meet (a share of requests under `slo.attainment`, or a p99
over `ttft_p99_ms`/`tpot_p99_ms`, is not one);
`_basis_check`, a note when the throughput from the requests differs from the file's own by
over `BASIS_TOLERANCE`; `littles_law`, requests/s x mean latency against mean concurrency
within `LITTLE_TOLERANCE`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import polars as pl

from sources.bench.run import GAPS_KNOWN, ITLS, BenchRun

QUANTILES = (50, 90, 95, 99)
TOLERANCE_S = 1e-6
#: how far a run's output throughput from its requests may differ from the file's own figure
#: before a note says so: the files' rounding (two decimals) stays well under it, a token
#: basis or window that differs does not
BASIS_TOLERANCE = 0.01
#: Little's law: requests/s x mean latency may differ from the mean concurrency by this share
#: before a note says so and the grade drops to "estimated" (docs/evidence.md: a closed loop
#: ramps up and drains, holding fewer requests than its setting for about one request
#: latency at each end, a tenth in a run ten latencies long; the public samples' closed loops
#: (vLLM, GenAI-Perf, GuideLLM, TensorRT-LLM) agree within 3.1 %, while a figure off by more
#: is a run that is not what it says)
LITTLE_TOLERANCE = 0.1


@dataclass(frozen=True)
class Slo:
    """Per-request limits (ms) and the share of requests that must meet them (`attainment`);
    `ttft_p99_ms`/`tpot_p99_ms` are extra limits on a level's p99 when picking the knee."""

    ttft_ms: float
    tpot_ms: float | None = None
    max_itl_ms: float | None = None
    attainment: float = 0.95
    ttft_p99_ms: float | None = None
    tpot_p99_ms: float | None = None

    def __post_init__(self) -> None:
        for name in ("ttft_ms", "tpot_ms", "max_itl_ms", "ttft_p99_ms", "tpot_p99_ms"):
            value = getattr(self, name)
            if value is not None and not value > 0:  # inf = no limit; NaN fails here
                raise ValueError(f"slo.{name} must be a positive number of ms, got {value!r}")
        if not 0 < self.attainment <= 1:
            raise ValueError(f"slo.attainment must be in (0, 1], got {self.attainment!r}")


def _limit(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000.0 + TOLERANCE_S


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def run_metrics(run: BenchRun, slo: Slo, window: tuple[float, float] | None = None
                ) -> dict[str, Any]:
    """Everything `evidence inspect` shows for one run (keys of the DESIGN section 9 contract
    and more); figures that cannot be computed are None with a reason in `notes`."""
    notes = list(run.notes)
    out: dict[str, Any] = {
        "path": run.path, "tool": run.tool, "run_index": run.run_index, "label": run.label,
        "model": run.model, "params": dict(run.params), "concurrency": run.concurrency,
        "request_rate": run.request_rate_per_s, "aggregate_only": run.aggregate_only,
        "itl_definition": run.itl_definition, "tpot_definition": run.tpot_definition,
        "started_at_utc": None if run.started_at_utc is None else run.started_at_utc.isoformat(),
        "ended_at_utc": None if run.ended_at_utc is None else run.ended_at_utc.isoformat(),
        "clock_uncertainty_s": run.clock_uncertainty_s,
        "reported": {k: _clean(v) for k, v in sorted(run.reported.items())},
    }
    if run.requests is None:
        out.update(_aggregate_metrics(run, slo, window, notes))
    else:
        out.update(_request_metrics(run, run.requests, slo, window, notes))
    out.setdefault("token_basis", None)  # compared only with per-request data
    out["percentile_limits_met"] = _percentile_limits_met(out, slo)
    out["littles_law"] = littles_law(run, out, notes)
    out["notes"] = notes
    return {k: _clean(v) for k, v in out.items()}


def _percentile_limits_met(m: dict[str, Any], slo: Slo) -> bool | None:
    bounds = [(m.get(key), limit_s) for _, key, _, limit_s in p99_bounds(slo)]
    known = [(float(value), limit_s) for value, limit_s in bounds if value is not None]
    if len(known) < len(bounds):
        return None
    return all(value <= limit_s for value, limit_s in known)


def _request_metrics(run: BenchRun, df: pl.DataFrame, slo: Slo,
                     window: tuple[float, float] | None, notes: list[str]) -> dict[str, Any]:
    has_sent = df.height > 0 and df["sent_s"].null_count() < df.height
    if window is not None and not has_sent:
        notes.append("--window ignored: this file has no per-request send times")
        window = None
    start, end = window if window is not None else (run.window_start_s, run.window_end_s)
    if window is not None:
        notes.append(f"window [{start}, {end}) s given on the request clock")
    window_s = None if start is None or end is None else end - start

    if has_sent and start is not None and end is not None:
        offered = (pl.col("sent_s") >= start) & (pl.col("sent_s") < end)
        done_in = pl.col("done_s").is_null() | (pl.col("done_s") <= end + TOLERANCE_S)
    else:
        offered = pl.lit(True)
        done_in = pl.lit(True)
    ok = pl.col("ok") & ~pl.col("incomplete")
    completed = offered & ok & done_in
    incomplete = offered & (pl.col("incomplete") | (pl.col("ok") & ~done_in))
    failed = offered & ~pl.col("ok") & ~pl.col("incomplete")

    passes = completed & (pl.col("ttft_s") <= _limit(slo.ttft_ms))
    if slo.tpot_ms is not None:
        # a one-token output has no TPOT and passes; a longer one without a TPOT does not
        passes = passes & ((pl.col("output_tokens").fill_null(2) <= 1)
                           | (pl.col("tpot_s") <= _limit(slo.tpot_ms)))
    gaps_unknown = completed & (pl.col("output_tokens").fill_null(2) > 1)
    if ITLS in df.columns:
        gaps_unknown = gaps_unknown & pl.col(ITLS).is_null()
    elif GAPS_KNOWN in df.columns:
        gaps_unknown = gaps_unknown & ~pl.col(GAPS_KNOWN)
    if slo.max_itl_ms is not None:
        gap_ok = (pl.col("output_tokens").fill_null(2) <= 1) | pl.col("max_itl_s").is_null() | (
            pl.col("max_itl_s") <= _limit(slo.max_itl_ms))
        passes = passes & gap_ok
    tokens = pl.col("output_tokens").fill_null(0)
    flags = df.select(
        completed=completed, passes=passes.fill_null(False), incomplete=incomplete,
        failed=failed, offered=offered, gaps_unknown=gaps_unknown.fill_null(False),
        tokens=tokens, input_tokens=pl.col("input_tokens"),
        no_ttft=(completed & pl.col("ttft_s").is_null()).fill_null(False),
        no_tpot=(completed & (pl.col("output_tokens").fill_null(2) > 1)
                 & pl.col("tpot_s").is_null()).fill_null(False),
        over_ttft=(completed & (pl.col("ttft_s") > _limit(slo.ttft_ms))).fill_null(False),
        over_tpot=(completed & (pl.col("output_tokens").fill_null(2) > 1)
                   & (pl.col("tpot_s") > _limit(slo.tpot_ms))).fill_null(False)
        if slo.tpot_ms is not None else pl.lit(False),
        over_itl=(completed & (pl.col("max_itl_s") > _limit(slo.max_itl_ms))).fill_null(False)
        if slo.max_itl_ms is not None else pl.lit(False),
    )
    counts = flags.select(
        offered=pl.col("offered").sum(),
        completed=pl.col("completed").sum(),
        failed=pl.col("failed").sum(),
        incomplete=pl.col("incomplete").sum(),
        passed=pl.col("passes").sum(),
        gaps_unknown=pl.col("gaps_unknown").sum(),
        passed_tokens=pl.col("tokens").filter(pl.col("passes")).sum(),
        # null unless every passing request says its input length (the total token basis)
        passed_input_tokens=pl.when(pl.col("input_tokens").filter(pl.col("passes"))
                                    .null_count() == 0)
        .then(pl.col("input_tokens").filter(pl.col("passes")).sum()),
        completed_tokens=pl.col("tokens").filter(pl.col("completed")).sum(),
        no_ttft=pl.col("no_ttft").sum(),
        no_tpot=pl.col("no_tpot").sum(),
        over_ttft=pl.col("over_ttft").sum(),
        over_tpot=pl.col("over_tpot").sum(),
        over_itl=pl.col("over_itl").sum(),
    ).row(0, named=True)

    done = df.filter(flags["completed"])
    out: dict[str, Any] = {k: int(counts[k]) for k in
                           ("offered", "completed", "failed", "incomplete", "passed",
                            "over_ttft", "over_tpot", "over_itl")}
    out.update(window_s=window_s, window_start_s=start, window_end_s=end,
               passed_output_tokens=int(counts["passed_tokens"]),
               passed_input_tokens=None if counts["passed_input_tokens"] is None
               else int(counts["passed_input_tokens"]))
    out.update(_percentiles(done, "ttft_s", "ttft"))
    out.update(_percentiles(done, "tpot_s", "tpot"))
    if ITLS in done.columns and run.itl_definition in ("token", "chunk"):
        gaps = done.select(pl.col(ITLS).explode().drop_nulls().alias("itl_s"))
        out.update(_percentiles(gaps, "itl_s", "itl"))
    elif run.itl_summary is not None and window is None:
        out.update(run.itl_summary)  # the same figures, computed when the gaps were read
    else:
        out.update(_percentiles(pl.DataFrame({"itl_s": []}, schema={"itl_s": pl.Float64()}),
                                "itl_s", "itl"))
        notes.append(f"no per-gap data (itl_definition {run.itl_definition}): ITL percentiles "
                     "are null")
    out["attainment"] = out["passed"] / out["offered"] if out["offered"] else None
    out["e2e_mean_s"] = done.select(pl.col("e2e_s").fill_null(pl.col("done_s") - pl.col("sent_s"))
                                    .mean()).item()
    if has_sent and start is not None and window_s:
        # the time-average of requests in flight: each offered request's time inside the window
        held = df.filter(flags["offered"]).select(
            (pl.min_horizontal(pl.col("done_s").fill_null(end), pl.lit(end))
             - pl.max_horizontal(pl.col("sent_s"), pl.lit(start))).clip(lower_bound=0).sum()
        ).item()
        out["concurrency_mean"] = held / window_s
    reason = None
    if counts["no_ttft"]:
        notes.append(f"{counts['no_ttft']} completed request(s) have no TTFT: counted as not "
                     "passing")
    if slo.tpot_ms is not None and counts["no_tpot"]:
        notes.append(f"{counts['no_tpot']} completed request(s) with several output tokens have "
                     "no TPOT: counted as not passing --tpot-ms")
    if slo.max_itl_ms is not None and counts["gaps_unknown"]:
        reason = (f"{counts['gaps_unknown']} completed request(s) have no gap data, so "
                  "--max-itl-ms cannot be judged")
    elif window_s is None or window_s <= 0:
        reason = "the observation window is unknown or empty"
    if reason is None:
        assert window_s is not None
        out["request_goodput_per_s"] = counts["passed"] / window_s
        out["token_goodput_per_s"] = counts["passed_tokens"] / window_s
        out["request_throughput_per_s"] = counts["completed"] / window_s
        out["output_tokens_per_s"] = counts["completed_tokens"] / window_s
    else:
        notes.append(f"goodput is null: {reason}")
        out.update(request_goodput_per_s=None, token_goodput_per_s=None)
        if window_s:
            out["request_throughput_per_s"] = counts["completed"] / window_s
            out["output_tokens_per_s"] = counts["completed_tokens"] / window_s
        else:
            out.update(request_throughput_per_s=None, output_tokens_per_s=None)
    if reason is not None and slo.max_itl_ms is not None and counts["gaps_unknown"]:
        out["passed"] = None
        out["attainment"] = None
    out["goodput_null_reason"] = reason
    out["token_basis"] = None
    if window is None:  # the file's own figures are over its own window
        out["token_basis"] = _basis_check(out["output_tokens_per_s"],
                                          int(counts["completed_tokens"]), run.reported, notes)
    return out


def _basis_check(ours: float | None, tokens: int, reported: Mapping[str, Any],
                 notes: list[str]) -> dict[str, Any] | None:
    """The output throughput from the requests against the file's own summary figure: None
    when the file has none; else both, their difference and whether it is within
    `BASIS_TOLERANCE`, and a note when it is not, with both token totals when the file has
    one (totals that differ: the token basis; equal totals: the window)."""
    theirs = reported.get("output_tokens_per_s")
    if ours is None or not theirs:
        return None
    off = ours / theirs - 1.0
    within = abs(off) <= BASIS_TOLERANCE
    total = reported.get("total_output_tokens")
    totals = "" if total is None else f" ({tokens:,} output tokens counted, {int(total):,} in " \
        "the file's summary)"
    detail = (f"the output throughput from the requests, {ours:,.1f} tokens/s, "
              + (f"is within {BASIS_TOLERANCE:.0%} of the file's own {theirs:,.1f} tokens/s "
                 f"({off:+.1%})" if within else
                 f"differs from the file's own {theirs:,.1f} tokens/s by {off:+.1%}, over the "
                 f"{BASIS_TOLERANCE:.0%} tolerance{totals}: the token basis or the window "
                 "differ; the requests' figure is used"))
    if not within:
        notes.append(f"token basis: {detail}")
    return {"requests_tokens_per_s": ours, "file_tokens_per_s": theirs, "off": off,
            "within": within, "detail": detail}


def littles_law(run: BenchRun, m: dict[str, Any], notes: list[str]) -> dict[str, Any] | None:
    """Little's law on one run's metrics `m`: completed requests/s x mean request latency
    against the mean concurrency: a closed loop's concurrency setting (what the file claims
    and the Little's-law instance count uses), else the tool's own mean, else the
    time-average of requests in flight (every offered request) from the requests' times. The mean
    latency is the requests' (else the tool's) mean, else TTFT + TPOT x (mean output - 1)
    from the tool's means. None when a figure is missing; otherwise the figures, which mean
    concurrency was used, and whether they agree within `LITTLE_TOLERANCE` (a note if not)."""
    completed, window_s = m.get("completed"), m.get("window_s")
    # from the counts where known: a file's own requests/s may be rounded (AIPerf's CSV: 0.05)
    rate = completed / window_s if completed and window_s else m.get("request_throughput_per_s")
    latency, derived = m.get("e2e_mean_s"), ""
    total = run.reported.get("total_output_tokens")
    if latency is None and m.get("ttft_mean_s") is not None and m.get("tpot_mean_s") is not None \
            and completed and total is not None:
        latency = m["ttft_mean_s"] + m["tpot_mean_s"] * max(total / completed - 1.0, 0.0)
        derived = " (TTFT + TPOT x (mean output - 1), from the file's means)"
    if run.concurrency is not None and run.request_rate_per_s is None:
        # a closed loop's level; with a request rate, max_concurrency is only a cap
        held, basis = float(run.concurrency), "the concurrency setting"
    elif m.get("concurrency_mean") is not None:
        held, basis = float(m["concurrency_mean"]), (
            "the tool's mean concurrency" if run.requests is None
            else "the mean of requests in flight")
    else:
        return None
    if not rate or latency is None or not held:
        return None
    product = rate * latency
    off = product / held - 1.0
    within = abs(off) <= LITTLE_TOLERANCE
    detail = (f"{rate:.4g} requests/s x {latency:.4g} s mean latency{derived} = {product:.4g} "
              f"requests in flight, against {held:.4g} ({basis}): {off:+.0%}, "
              + (f"within the {LITTLE_TOLERANCE:.0%} tolerance" if within else
                 f"outside the {LITTLE_TOLERANCE:.0%} tolerance; the run is not what it says "
                 "(a load level, window or latency off): graded estimated"))
    if not within:
        notes.append(f"Little's law: {detail}")
    return {"requests_per_s": rate, "mean_latency_s": latency, "in_flight": product,
            "mean_concurrency": held, "basis": basis, "off": off, "within": within,
            "detail": detail}


def _percentiles(frame: pl.DataFrame, column: str, name: str) -> dict[str, Any]:
    col = pl.col(column).drop_nulls()
    row = frame.select(
        *[col.quantile(q / 100, interpolation="linear").alias(f"{name}_p{q}_s")
          for q in QUANTILES],
        col.mean().alias(f"{name}_mean_s"),
        col.count().alias(f"{name}_count"),
    ).row(0, named=True)
    return row


def _aggregate_metrics(run: BenchRun, slo: Slo, window: tuple[float, float] | None,
                       notes: list[str]) -> dict[str, Any]:
    r = run.reported
    if window is not None:
        notes.append("--window ignored: this run has aggregates only")
    completed = r.get("completed")
    failed = r.get("failed")
    offered = r.get("offered")
    if offered is None and completed is not None and failed is not None:
        offered = int(completed) + int(failed)
    window_s = run.window_s
    out: dict[str, Any] = {
        "offered": offered, "completed": completed, "failed": failed,
        "incomplete": r.get("incomplete"), "passed": None, "attainment": None,
        "window_s": window_s, "window_start_s": run.window_start_s,
        "window_end_s": run.window_end_s,
    }
    for name in ("ttft", "tpot", "itl"):
        for q in QUANTILES:
            out[f"{name}_p{q}_s"] = r.get(f"{name}_p{q}_s")
        out[f"{name}_mean_s"] = r.get(f"{name}_mean_s")
        out[f"{name}_count"] = r.get(f"{name}_count")
    out["e2e_mean_s"] = r.get("e2e_mean_s")
    out["concurrency_mean"] = r.get("concurrency_mean")
    tput = r.get("output_tokens_per_s")
    total = r.get("total_output_tokens")
    if tput is None and total is not None and window_s:
        tput = total / window_s
    out["output_tokens_per_s"] = tput
    req_tput = r.get("request_throughput_per_s")
    if req_tput is None and completed is not None and window_s:
        req_tput = completed / window_s
    out["request_throughput_per_s"] = req_tput
    out["request_goodput_per_s"] = r.get("request_goodput_per_s")
    out["token_goodput_per_s"] = None
    out["goodput_basis"] = None
    why = _summary_goodput(run, slo, out, notes)
    if why is None:
        out["goodput_null_reason"] = None
        return out
    reason = ("aggregate-only: no per-request latencies, so goodput under this SLO cannot be "
              f"computed ({why})" + ("; request_goodput_per_s is the tool's own figure under "
                                     "the SLO it was given"
                                     if out["request_goodput_per_s"] is not None else ""))
    out["goodput_null_reason"] = reason
    notes.append(reason)
    return out


#: the reported percentiles a summary-only run's bound can use: `ttft_p99_s`, `tpot_p99.9_s`
_REPORTED_PCT = re.compile(r"^(ttft|tpot)_p(\d+(?:\.\d+)?)_s$")
_LIMIT_NAMES = {"ttft": "TTFT", "tpot": "TPOT"}


def _summary_goodput(run: BenchRun, slo: Slo, out: dict[str, Any], notes: list[str]
                     ) -> str | None:
    """Goodput of a summary-only run into `out` (an MLPerf Server result under limits at
    least as strict as the SLO, else the percentile bound); returns None when it was set,
    else why it was not."""
    tput = out["output_tokens_per_s"]
    if tput is None:
        return "no output throughput reported"
    if run.tool == "vllm-metrics":  # interpolated inside buckets: not a bound on the share
        return ("histogram percentiles are estimates within buckets, so they prove no share "
                "of requests under a limit")
    if run.tool == "mlperf" and run.params.get("scenario") == "Server":
        refused = _mlperf_server(run, slo, out, notes)
        if refused is None:
            return None
        notes.append(f"MLPerf Server result not used directly: {refused}")
    share, reasons = percentile_bound(run.reported, slo, out.get("completed"))
    attainment = share
    offered, completed = out.get("offered"), out.get("completed")
    if share is not None and offered and completed is not None:
        attainment = share * completed / offered  # failed requests never pass
    if share is None or attainment is None:
        return "; ".join(reasons)
    out["attainment"] = attainment
    out["attainment_basis"] = "percentile bound"
    if attainment < slo.attainment - TOLERANCE_S:
        return (f"the percentile bound proves only {attainment:.4g} of the offered requests "
                f"pass, under the SLO's attainment {slo.attainment:g}: " + "; ".join(reasons))
    out["token_goodput_per_s"] = tput * share
    out["goodput_basis"] = "percentile bound"
    if out["request_goodput_per_s"] is None and out["request_throughput_per_s"] is not None:
        out["request_goodput_per_s"] = out["request_throughput_per_s"] * share
    notes.append(f"basis = \"percentile bound\": {'; '.join(reasons)}; together (union bound) "
                 f"at least {share:.4g} of the completed requests pass, so goodput = output "
                 f"throughput {tput:.6g} x {share:.4g} = {tput * share:.6g} tokens/s, a lower "
                 "bound graded measured")
    return None


def percentile_bound(reported: Mapping[str, Any], slo: Slo, completed: int | None = None
                     ) -> tuple[float | None, list[str]]:
    """The share of completed requests a run's reported percentiles prove to pass the SLO,
    and one reason per limit. A percentile at or under its limit proves at least that share
    passes that limit (p99 TTFT <= limit: >= 0.99; with `completed` = n known, the numpy
    linear p_q bounds the floor((n - 1) q) + 1 smallest values, the smaller share is taken);
    the limits combine by the union bound, 1 - the sum of the failing shares. None when a
    limit cannot be bounded at all (the largest gap of a request: no percentile of the gaps
    bounds it)."""
    if slo.max_itl_ms is not None:
        return None, ["--max-itl-ms: no reported percentile bounds a request's largest gap"]
    limits = [(metric, ms) for metric, ms in (("ttft", slo.ttft_ms), ("tpot", slo.tpot_ms))
              if ms is not None and math.isfinite(ms)]
    failing = 0.0
    reasons: list[str] = []
    for metric, ms in limits:
        name = _LIMIT_NAMES[metric]
        reported_q = sorted((float(m.group(2)), value) for key, value in reported.items()
                            if (m := _REPORTED_PCT.match(key)) and m.group(1) == metric
                            and value is not None)
        within = [q for q, value in reported_q if value <= ms / 1000.0 + TOLERANCE_S]
        if not reported_q:
            reasons.append(f"{name}: no percentile reported, nothing proven under {ms:g} ms")
            failing += 1.0
            continue
        if not within:
            q, value = reported_q[0]
            reasons.append(f"{name}: the lowest percentile reported, p{q:g} = "
                           f"{value * 1000:.4g} ms, is over {ms:g} ms")
            failing += 1.0
            continue
        q = max(within)
        value = dict(reported_q)[q]
        share = q / 100.0
        if completed:
            share = min(share, (math.floor((completed - 1) * share) + 1) / completed)
        failing += 1.0 - share
        reasons.append(f"{name} p{q:g} {value * 1000:.4g} ms <= {ms:g} ms proves >= {share:.4g}")
    if not limits:
        reasons.append("no latency limit: every completed request passes")
    return max(0.0, 1.0 - failing), reasons


def _mlperf_server(run: BenchRun, slo: Slo, out: dict[str, Any], notes: list[str]
                   ) -> str | None:
    """An MLPerf Server result is a throughput under p99 TTFT/TPOT constraints: its completed
    tokens per second is the goodput when the result is VALID and its constraints are at least
    as strict as the SLO (each at or under the SLO's limit, and the share they prove, 0.99 per
    limit the SLO sets, by the union bound, at least the SLO's attainment); None when used,
    else why not."""
    r = run.reported
    if r.get("result_valid") != 1:
        return "the result is not VALID"
    if slo.max_itl_ms is not None:
        return "MLPerf does not constrain the largest gap (--max-itl-ms)"
    checks = [("TTFT", slo.ttft_ms, r.get("constraint_ttft_p99_s"))]
    if slo.tpot_ms is not None:
        checks.append(("TPOT", slo.tpot_ms, r.get("constraint_tpot_p99_s")))
    for name, ms, limit_s in checks:
        if limit_s is None:
            return f"the log states no {name} constraint"
        if ms is not None and math.isfinite(ms) and limit_s > ms / 1000.0 + TOLERANCE_S:
            return f"its {name} constraint {limit_s * 1000:g} ms is looser than the SLO's {ms:g} ms"
    share = 1.0 - 0.01 * len(checks)
    if share < slo.attainment - TOLERANCE_S:
        return (f"its p99 constraints prove {share:g} of requests pass, under the SLO's "
                f"attainment {slo.attainment:g}")
    out["token_goodput_per_s"] = out["output_tokens_per_s"]
    out["attainment"] = share
    out["attainment_basis"] = "mlperf server constraints"
    out["goodput_basis"] = "mlperf server"
    limits = ", ".join(f"p99 {name} <= {float(limit_s or 0) * 1000:g} ms"
                       for name, _, limit_s in checks)
    notes.append(f"basis = \"mlperf server\": a VALID Server result under {limits}, at least "
                 f"as strict as the SLO (>= {share:g} of requests pass by the union bound): "
                 f"its {out['output_tokens_per_s']:.6g} completed tokens/s is the goodput")
    return None


# --- sweeps --------------------------------------------------------------------------------

LEVEL_SCHEMA: dict[str, pl.DataType] = {
    "load": pl.Float64(), "offered": pl.Int64(), "passed": pl.Int64(),
    "token_goodput_per_s": pl.Float64(), "ttft_p99_s": pl.Float64(),
    "tpot_p99_s": pl.Float64(), "run_attainment": pl.Float64(),
}


def sweep_metrics(runs: list[dict[str, Any]], slo: Slo) -> dict[str, Any] | None:
    """The sweep over several runs' metrics (from `run_metrics`), or None for a single run."""
    if len(runs) < 2:
        return None
    def distinct(key: str) -> int:
        return len({m[key] for m in runs if m[key] is not None})

    n_conc, n_rate = distinct("concurrency"), distinct("request_rate")
    if n_conc > 1 and n_conc >= n_rate:
        variable = "concurrency"
    elif n_rate > 1:
        variable = "request_rate"
    else:
        return {"load_variable": None, "knee_concurrency": None, "knee_request_rate": None,
                "knee_tokens_per_s": None, "knee_attainment": None, "saturated": None,
                "attainment_target": slo.attainment, "levels": [],
                "notes": ["not a sweep: the runs do not vary in concurrency or request rate, "
                          "so there is no knee"]}
    left_out = [m for m in runs if m[variable] is None]
    runs = [m for m in runs if m[variable] is not None]
    loads = [m[variable] for m in runs]
    levels = pl.DataFrame({
        "load": [float(x) for x in loads],
        "offered": [m["offered"] for m in runs],
        "passed": [m["passed"] for m in runs],
        "token_goodput_per_s": [m["token_goodput_per_s"] for m in runs],
        "ttft_p99_s": [m["ttft_p99_s"] for m in runs],
        "tpot_p99_s": [m["tpot_p99_s"] for m in runs],
        "run_attainment": [m.get("attainment") for m in runs],
    }, schema=LEVEL_SCHEMA).group_by("load").agg(
        runs=pl.len(),
        # from summed counts; runs with a bound only (summary-only files): the lowest bound
        attainment=pl.when(pl.col("passed").null_count() == 0)
        .then(pl.col("passed").sum() / pl.col("offered").sum())
        .when(pl.col("run_attainment").null_count() == 0)
        .then(pl.col("run_attainment").min()),
        token_goodput_per_s=pl.when(pl.col("token_goodput_per_s").null_count() == 0)
        .then(pl.col("token_goodput_per_s").mean()),
        ttft_p99_s=pl.col("ttft_p99_s").max(),
        tpot_p99_s=pl.col("tpot_p99_s").max(),
    )
    result = knee(levels, slo)
    result["load_variable"] = variable
    knee_load = result.pop("knee_load")
    result["knee_concurrency"] = (
        int(knee_load) if variable == "concurrency" and knee_load is not None else None)
    result["knee_request_rate"] = knee_load if variable == "request_rate" else None
    if left_out:
        result["notes"].append(
            f"{len(left_out)} run(s) without a {variable} (e.g. GuideLLM synchronous or "
            "throughput strategies, or a different load type) are left out of the knee")
    if levels["runs"].max() > 1:  # type: ignore[operator]
        result["notes"].append("several runs at one level are pooled: attainment from summed "
                               "counts, mean token goodput, worst p99")
    return result


def knee(levels: pl.DataFrame, slo: Slo) -> dict[str, Any]:
    """The knee of a sweep from one row per load level: columns `load`, `attainment`,
    `token_goodput_per_s` and (optional) `ttft_p99_s`, `tpot_p99_s`, `runs`."""
    frame = levels.with_columns(
        *[pl.lit(None, pl.Float64()).alias(c) for c in ("ttft_p99_s", "tpot_p99_s")
          if c not in levels.columns],
        *([pl.lit(1).alias("runs")] if "runs" not in levels.columns else []),
    )
    limits_ok = pl.lit(True)
    for _, key, _, limit_s in p99_bounds(slo):
        limits_ok = limits_ok & (pl.col(key) <= limit_s)
    frame = frame.with_columns(
        eligible=(pl.col("attainment") >= slo.attainment - TOLERANCE_S) & limits_ok,
    ).sort("load")
    notes: list[str] = []
    known = frame.filter(pl.col("eligible").is_not_null())
    passing = known.filter(pl.col("eligible"))
    knee_row = passing.row(-1, named=True) if passing.height else None
    unknown = frame.height - known.height
    if unknown:
        notes.append(f"{unknown} level(s) cannot be judged (aggregate-only or missing "
                     "percentiles)")
    if knee_row is None:
        saturated: bool | None = True if known.height else None
        notes.append("no level meets the SLO" if known.height else "no level can be judged")
    else:
        above = known.filter(pl.col("load") > knee_row["load"])
        saturated = bool(above.height and not above["eligible"].all())
        if not saturated:
            notes.append("the sweep never saturated: the highest level tested meets the SLO, "
                         "the knee may be higher")
    level_rows = [
        {k: _clean(v) for k, v in row.items()}
        for row in frame.select("load", "runs", "attainment", "token_goodput_per_s",
                                "ttft_p99_s", "tpot_p99_s", "eligible").iter_rows(named=True)
    ]
    return {
        "knee_load": None if knee_row is None else knee_row["load"],
        "knee_tokens_per_s": None if knee_row is None else _clean(knee_row["token_goodput_per_s"]),
        "knee_attainment": None if knee_row is None else knee_row["attainment"],
        "saturated": saturated,
        "attainment_target": slo.attainment,
        # a limit not given is infinite here and null in the report (JSON has no infinity)
        "slo": {k: None if isinstance(v, float) and math.isinf(v) else v
                for k, v in asdict(slo).items()},
        "levels": level_rows,
        "notes": notes,
    }


#: what an operating point refused by the SLO rule says would help
_WOULD_HELP = ("not an operating point, the candidate is not sized on it; a lower load level "
               "(concurrency or request rate) would help, or a sweep whose knee is found")

#: the SLO's p99 bounds: its field, the run's figure, the latency named
P99_BOUNDS = (("ttft_p99_ms", "ttft_p99_s", "TTFT"), ("tpot_p99_ms", "tpot_p99_s", "TPOT"))


def p99_bounds(slo: Slo) -> list[tuple[str, str, str, float]]:
    """The p99 bounds the SLO sets, each (its field, the run's figure, the latency named, the
    largest p99 within it in s): the one rule of a run's, a level's and a knee's p99s."""
    return [(field, key, name, getattr(slo, field) / 1000.0 + TOLERANCE_S)
            for field, key, name in P99_BOUNDS if getattr(slo, field) is not None]

#: the outcomes of a check on evidence (schemas/result.py EvidenceCheck)
PASSED, FAILED, NOT_CHECKED = "passed", "failed", "not checked"
#: a check's (name, outcome, detail)
Check = tuple[str, str, str]


def slo_checks(metrics: list[dict[str, Any]], slo: Slo) -> list[Check]:
    """The SLO rule's checks on runs at one load level (from `run_metrics`; several are
    pooled: summed counts, the worst p99): "SLO attainment", the share of offered requests
    meeting the SLO against `slo.attainment` (a summary-only run's share is what its
    percentile bound proves: a bound short of it proves nothing, not checked), and "SLO p99
    TTFT"/"SLO p99 TPOT" against the bounds the SLO declares."""
    m0 = metrics[0]
    level = (f" at concurrency {m0['concurrency']}" if m0.get("concurrency") is not None else
             f" at {m0['request_rate']:g} requests/s" if m0.get("request_rate") is not None
             else "")
    checks: list[Check] = []
    if all(m.get("passed") is not None and m.get("offered") for m in metrics):
        passed = sum(int(m["passed"]) for m in metrics)
        offered = sum(int(m["offered"]) for m in metrics)
        share = passed / offered
        met = share >= slo.attainment - TOLERANCE_S
        checks.append(("SLO attainment", PASSED if met else FAILED,
                       f"{passed} of {offered} offered requests ({share:.1%}) meet the SLO"
                       f"{level}, {'at or above' if met else 'under'} the "
                       f"{slo.attainment:.0%} slo.attainment asks"))
    elif all(m.get("goodput_basis") for m in metrics):
        checks.append(("SLO attainment", PASSED, f"{level.strip() or 'the run'}: basis "
                       f"\"{m0['goodput_basis']}\", at least the {slo.attainment:.0%} "
                       "slo.attainment asks is proven"))
    else:
        reasons = sorted({str(m.get("goodput_null_reason") or "no per-request data")
                          for m in metrics})
        checks.append(("SLO attainment", NOT_CHECKED, "; ".join(reasons)))
    for field, key, name, limit_s in p99_bounds(slo):
        values = [m.get(key) for m in metrics]
        if any(v is None for v in values):
            checks.append((f"SLO p99 {name}", NOT_CHECKED, f"the p99 {name}{level} is not "
                           "known"))
            continue
        worst = max(float(v) for v in values if v is not None)
        within = worst <= limit_s
        checks.append((f"SLO p99 {name}", PASSED if within else FAILED,
                       f"the p99 {name}{level} is {worst * 1000:,.1f} ms, "
                       f"{'within' if within else 'over'} the {getattr(slo, field):g} ms "
                       f"slo.{field} bound"))
    return checks


def operating_point_shortfall(checks: Sequence[Check]) -> str | None:
    """The SLO rule for an operating point, from the `slo_checks` of its runs at one level:
    runs whose share of offered requests meeting the SLO is below `slo.attainment`, or whose
    p99 TTFT or TPOT is over `slo.ttft_p99_ms`/`slo.tpot_p99_ms`, are not an operating point.
    Returns why, with the share attained and asked and each p99 over its bound, and what
    would help; None when every rule is met or cannot be judged (a summary-only run's share
    is its percentile bound, which refuses its goodput itself; a p99 not measured is not
    judged)."""
    failed = [detail for _, outcome, detail in checks if outcome == FAILED]
    return "; ".join(failed) + f": {_WOULD_HELP}" if failed else None


def run_checks(metrics: list[dict[str, Any]]) -> list[Check]:
    """The token-basis and Little's-law checks of runs (`run_metrics`), one each, over the
    runs: failed when a run fails it, else passed when a run passes it, else not checked;
    the detail names each run's file when there are several."""
    checks: list[Check] = []
    for name, key, missing in (
            ("token basis", "token_basis", "the file gives no output throughput of its own to "
                                           "compare (or no per-request data)"),
            ("Little's law", "littles_law", "a figure it needs (requests/s, mean latency, "
                                            "mean concurrency) is not known")):
        found = [(m["path"], m.get(key)) for m in metrics]
        outcomes = [NOT_CHECKED if f is None else PASSED if f["within"] else FAILED
                    for _, f in found]
        outcome = (FAILED if FAILED in outcomes else PASSED if PASSED in outcomes
                   else NOT_CHECKED)
        details = [missing if f is None else f["detail"] for _, f in found]
        checks.append((name, outcome, details[0] if len(found) == 1 else "; ".join(
            f"{path}: {d}" for (path, _), d in zip(found, details, strict=True))))
    return checks


#: a run's count of completed requests over each limit, and the limit's SLO field
OVER_LIMITS = (("over_ttft", "ttft_ms", "TTFT"), ("over_tpot", "tpot_ms", "TPOT"),
               ("over_itl", "max_itl_ms", "the longest gap between tokens"))


def no_goodput_reason(metrics: list[dict[str, Any]], slo: Slo) -> str:
    """Why no request met the SLO, for runs none of whose requests passed: the limit the most
    completed requests exceeded, with the counts summed over the runs."""
    completed = sum(m.get("completed") or 0 for m in metrics)
    text = "no request met the SLO at any load level"
    if not completed:
        return text + " (no request completed)"
    counts = [(sum(m.get(key) or 0 for m in metrics), getattr(slo, field), name)
              for key, field, name in OVER_LIMITS]
    worst, limit, name = max(counts, key=lambda c: c[0])
    if not worst:
        return text
    return (f"{text}: the limit failed most is {name} over {limit:g} ms, in {worst} of "
            f"{completed} completed requests")
