"""Parsed once (issue 13): a second `scorecard run` of a proposal whose evidence is a ~100 MB
vLLM `--save-detailed` result costs at most 1.3x a run without it.

Generates (seeded) the result with `benchmarks/bench_goodput.py`'s generator, writes two
proposals on one store (the same candidate with a declared throughput, and with the file as
its evidence), then times in this process, each through the `scorecard run --json` command:

  1. baseline: the declared proposal (median of --repeat runs, after one warm-up that loads
     the bundled reference data);
  2. cold: the evidence proposal, the file parsed (and kept in the store's evidence cache);
  3. cached: the evidence proposal again, its runs read from the store by the file's sha256.

Each command opens the store and its evidence cache itself (pipeline/workspace.py `opened`).

    uv run python benchmarks/evidence_cache.py [--requests 20000] [--tokens 500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner

from pipeline.cli import app

HERE = Path(__file__).resolve().parent
CANDIDATE = """[proposal]
name = "cache"
[slo]
ttft_ms = 1000
tpot_ms = 50
[[candidates]]
id = "lab"
label = "lab"
deployment = "on_prem"
provider = "self"
zone = "FR"
gpu = "H100-SXM-80GB"
gpu_count = 8
pue = 1.3
throughput = {throughput}
power = {{ watts = 5600, boundary = "gpu_board", source = "rated" }}
cost = {{ eur_per_hour = 30.0, source = "quote" }}
"""


def generator() -> object:
    spec = importlib.util.spec_from_file_location("bench_goodput", HERE / "bench_goodput.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    result = CliRunner().invoke(app, args)
    elapsed = time.perf_counter() - start
    if result.exit_code != 0:
        raise SystemExit(f"scorecard {' '.join(args)} failed:\n{result.output}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--tokens", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        evidence = folder / "vllm_detailed.json"
        evidence.write_bytes(generator().generate(args.requests, args.tokens))  # type: ignore[attr-defined]
        declared = folder / "declared.toml"
        declared.write_text(CANDIDATE.format(
            throughput='{ tokens_per_s = 3000, source = "declared" }'))
        measured = folder / "measured.toml"
        measured.write_text(CANDIDATE.format(throughput='{ evidence = "vllm_detailed.json" }'))
        db = str(folder / "store.duckdb")
        base = ["--db", db, "--json"]
        timed(["run", str(declared), *base])  # warm-up: the store and its reference data
        baseline = statistics.median(timed(["run", str(declared), *base])
                                     for _ in range(args.repeat))
        cold = timed(["run", str(measured), *base])
        cached = statistics.median(timed(["run", str(measured), *base])
                                   for _ in range(args.repeat))
        size = evidence.stat().st_size / 1e6
    print(f"evidence file: {size:,.1f} MB ({args.requests:,} requests x {args.tokens} gaps)")
    print(f"run without evidence (median of {args.repeat}): {baseline:.2f} s")
    print(f"run with it, first (parsed, cached): {cold:.2f} s = {cold / baseline:.2f}x")
    print(f"run with it, again (from the store, median of {args.repeat}): {cached:.2f} s = "
          f"{cached / baseline:.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main()
