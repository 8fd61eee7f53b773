"""Speed of goodput on a large vLLM `--save-detailed` result (issue 4, "Speed").

Generates (seeded, deterministic) a vLLM result with N requests of ~K streamed chunks each,
then times, in the same run:
  1. bare parse: the fastest JSON parser available here (stdlib `json.loads`; polars'
     `read_json` and DuckDB's `read_json` were slower on this shape when measured);
  2. ours: `sources.bench.clients.vllm.parse` + `pipeline.evidence.goodput.run_metrics`
     (goodput, counts, TTFT/TPOT/ITL percentiles), and the metrics step alone;
  3. a straightforward per-request Python loop computing the same figures from the parsed
     dict (pass/fail per request, token goodput, sorted-list percentiles).
Targets: ours <= 2x the bare parse; the metrics step >= 10x faster than the loop.

    uv run python benchmarks/bench_goodput.py [--requests 100000] [--tokens 500]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.evidence.goodput import Slo, run_metrics
from sources.bench.clients import vllm

SLO = Slo(ttft_ms=1000, tpot_ms=50, max_itl_ms=200)


def generate(n: int, k: int, seed: int = 42) -> bytes:
    """A vLLM result: TTFT ~ U(0.05, 2) s, chunk gaps ~ Exp(mean 20 ms), k gaps per request.
    Random numbers come from polars' seeded hash so the file is the same on every run."""
    def uniform(column: pl.Expr, salt: int) -> pl.Expr:
        return (column.hash(seed + salt) % 1_000_003).cast(pl.Float64()) / 1_000_003 + 1e-7

    req = pl.DataFrame({"i": pl.arange(0, n, eager=True)})
    ttfts = req.select(0.05 + 1.95 * uniform(pl.col("i"), 1)).to_series().round(6)
    gaps = (
        pl.DataFrame({"j": pl.arange(0, n * k, eager=True)})
        .select((-uniform(pl.col("j"), 2).log() / 50.0).round(6).cast(pl.String()).alias("g"),
                (pl.col("j") // k).alias("i"))
        .group_by("i", maintain_order=True).agg(pl.col("g").str.join(", "))
    )["g"]
    itls = "[" + "], [".join(gaps.to_list()) + "]"
    head = {"date": "20260816-160853", "backend": "vllm", "endpoint_type": "vllm",
            "num_prompts": n, "request_rate": "inf", "max_concurrency": 256,
            "duration": 600.0, "completed": n, "failed": 0,
            "total_output_tokens": n * (k + 1), "request_throughput": n / 600.0,
            "output_throughput": n * (k + 1) / 600.0}
    body = (json.dumps(head)[:-1]
            + f', "input_lens": {json.dumps([512] * n)}'
            + f', "output_lens": {json.dumps([k + 1] * n)}'
            + f', "ttfts": {json.dumps(ttfts.to_list())}'
            + f', "itls": [{itls}]'
            + f', "errors": {json.dumps([""] * n)}'
            + f', "start_times": {json.dumps([540.0 * i / n for i in range(n)])}' + "}")
    return body.encode()


def loop_metrics(d: dict[str, Any], slo: Slo) -> dict[str, Any]:
    """The straightforward way: one Python iteration per request, sorted-list percentiles
    (the generated run sends every request in the first 540 s of 600, so all end in time)."""
    def pct(values: list[float], q: float) -> float | None:
        if not values:
            return None
        values = sorted(values)
        rank = (len(values) - 1) * q
        lo = math.floor(rank)
        hi = min(lo + 1, len(values) - 1)
        return values[lo] + (values[hi] - values[lo]) * (rank - lo)

    passed = tokens = 0
    ttfts: list[float] = []
    tpots: list[float] = []
    gaps: list[float] = []
    for ttft, itl, n, err in zip(d["ttfts"], d["itls"], d["output_lens"], d["errors"],
                                 strict=True):
        if err:
            continue
        ttfts.append(ttft)
        gaps.extend(itl)
        tpot = sum(itl) / (n - 1) if n > 1 else None
        if tpot is not None:
            tpots.append(tpot)
        ok = ttft <= slo.ttft_ms / 1000 + 1e-6  # the 1 µs tolerance of pipeline.evidence.goodput
        if ok and tpot is not None and slo.tpot_ms is not None:
            ok = tpot <= slo.tpot_ms / 1000 + 1e-6
        if ok and itl and slo.max_itl_ms is not None:
            ok = max(itl) <= slo.max_itl_ms / 1000 + 1e-6
        if ok:
            passed += 1
            tokens += n
    out = {"passed": passed, "token_goodput_per_s": tokens / d["duration"]}
    for name, values in (("ttft", ttfts), ("tpot", tpots), ("itl", gaps)):
        for q in (50, 90, 95, 99):
            out[f"{name}_p{q}_s"] = pct(values, q / 100)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--tokens", type=int, default=500)
    args = parser.parse_args()
    t = time.perf_counter()
    data = generate(args.requests, args.tokens)
    print(f"generated {len(data) / 1e6:.0f} MB in {time.perf_counter() - t:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "detailed.json"
        path.write_bytes(data)
        data = path.read_bytes()

    t = time.perf_counter()
    parsed = json.loads(data)
    bare = time.perf_counter() - t

    t = time.perf_counter()
    (run,) = vllm.parse(data, path="detailed.json")
    t_parse = time.perf_counter() - t
    t = time.perf_counter()
    ours = run_metrics(run, SLO)
    t_metrics = time.perf_counter() - t

    t = time.perf_counter()
    naive = loop_metrics(parsed, SLO)
    t_loop = time.perf_counter() - t

    assert ours["passed"] == naive["passed"], (ours["passed"], naive["passed"])
    assert math.isclose(ours["token_goodput_per_s"], naive["token_goodput_per_s"])
    for key in ("ttft_p99_s", "tpot_p50_s", "itl_p99_s"):
        assert math.isclose(ours[key], naive[key], rel_tol=1e-9), key
    total = t_parse + t_metrics
    print(f"requests {args.requests:,}, gaps {ours['itl_count']:,}")
    print(f"bare json.loads          {bare:7.2f} s")
    print(f"ours: parse              {t_parse:7.2f} s")
    print(f"ours: goodput+percentiles{t_metrics:7.2f} s")
    print(f"ours: total              {total:7.2f} s  = {total / bare:.2f} x bare parse "
          "(target <= 2)")
    print(f"per-request Python loop  {t_loop:7.2f} s  = {t_loop / t_metrics:.1f} x our metrics "
          "step (target >= 10)")
    print(f"token goodput {ours['token_goodput_per_s']:.1f} tokens/s, passed "
          f"{ours['passed']:,} of {ours['offered']:,}")


if __name__ == "__main__":
    main()
