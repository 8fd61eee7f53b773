"""Benchmark: a `[[scan]]` of the bundled market for one model across every precision and
region (issue 30's "a scan of the bundled market ... <= 10 s warm").

    uv run python benchmarks/scan.py [--runs 3] [--model Llama-3.1-70B]

The scan proposal is the bundled example (its SLO, policy, demand, TCO profile, 10,000 draws
and its hand-listed candidates) with one `[[scan]]` appended: the model at bf16 and fp8, any
accelerator, every provider and region, a roofline estimate for the goodput. Timed, on one
warm store (--db in a temporary folder, loaded once before timing), each a separate process:
the example alone (the baseline) and the example with the scan, as `scorecard run --json`
(engine and store) and as a full `scorecard run` (every output file). Also timed in-process:
the expansion alone (`pipeline.inputs.market.scan.expand` on the market read once). Prints the
scan's counts, the median wall times, peak RSS (`/usr/bin/time -f %M`), the ratio to the
example alone measured in the same run, and `uptime` before and after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

TARGET_S = 10.0


def scan_block(model: str) -> str:
    return (f'\n[[scan]]\nmodel = "{model}"\nprecisions = ["bf16", "fp8"]\n'
            'throughput = { estimate = { batch = 8, context = 4096, efficiency = { low = 0.3, '
            'mode = 0.4, high = 0.5 } } }\n'
            'power = { estimate = { tdp_fraction = { low = 0.6, mode = 0.7, high = 0.8 } } }\n')


def run_once(file: Path, db: Path, out: Path | None) -> tuple[float, float, int, str]:
    """Wall seconds, peak RSS (MB), exit code and stdout of one `scorecard run` process;
    with `out` None, `run --json`."""
    cmd = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "pipeline", "run", str(file),
           "--db", str(db), *(["--json"] if out is None else ["--out", str(out)])]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    lines = done.stderr.strip().splitlines()
    rss_kb = float(lines[-1]) if lines and lines[-1].isdigit() else 0.0
    if done.returncode:
        print(f"  exit {done.returncode}: {done.stderr.strip()[-600:]}", file=sys.stderr)
    return wall, rss_kb / 1024, done.returncode, done.stdout


def expansion_seconds(file: Path, db: Path, runs: int) -> tuple[float, dict[str, int]]:
    """Median wall seconds of the scan's expansion alone, in-process on a market read once,
    and the scan's counts."""
    from pipeline import store
    from pipeline.inputs import read_market
    from pipeline.inputs.market.scan import expand
    from schemas.proposal import parse

    proposal = parse(file.read_text(encoding="utf-8"), str(file))
    con = store.connect(db, read_only=True)
    try:
        vintage = store.latest_vintage(con)
        assert vintage is not None
        market = read_market(con, vintage, proposal.workload)
    finally:
        con.close()
    expand(proposal, file, market)  # warm: imports, polars' first calls
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        _, [e] = expand(proposal, file, market)
        times.append(time.perf_counter() - t0)
    counts = {k: v for k, v in e.summary.items() if isinstance(v, int) and k != "scan"}
    return statistics.median(times), counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per case (median quoted)")
    parser.add_argument("--model", default="Llama-3.1-70B")
    args = parser.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime before: {load}", flush=True)
    example = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        files = {"example": Path(tmp) / "example.toml", "scan": Path(tmp) / "scan.toml"}
        files["example"].write_text(example, encoding="utf-8")
        files["scan"].write_text(example + scan_block(args.model), encoding="utf-8")
        run_once(files["example"], db, Path(tmp) / "warm")  # load the bundled data
        seconds, counts = expansion_seconds(files["scan"], db, max(args.runs, 5))
        print(f"scan of the bundled market for {args.model}, bf16 and fp8, every provider and "
              f"region: {counts}", flush=True)
        print(f"expansion alone (in-process, warm market): {seconds * 1e3:.1f} ms (median of "
              f"{max(args.runs, 5)})", flush=True)
        for mode in ("json", "full"):
            base = None
            for name in ("example", "scan"):
                results = [run_once(files[name], db, None if mode == "json" else
                                    Path(tmp) / f"out-{name}-{r}") for r in range(args.runs)]
                wall = statistics.median(r[0] for r in results)
                rss = max(r[1] for r in results)
                codes = sorted({r[2] for r in results})
                base = base or wall
                n = ""
                if mode == "json" and codes == [0]:
                    n = f", {len(json.loads(results[0][3])['candidates'])} candidates"
                verdict = "" if name == "example" else (
                    f"; target <= {TARGET_S:g} s warm: "
                    + ("met" if wall <= TARGET_S and codes == [0] else "NOT met"))
                what = ("scorecard run --json" if mode == "json"
                        else "scorecard run (every output file)")
                print(f"{what}, {name}{n}: {wall:.2f} s wall (median of {args.runs}), peak RSS "
                      f"{rss:.0f} MB, {wall / base:.2f}x the example alone, exit "
                      f"{','.join(map(str, codes))}{verdict}", flush=True)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime: {load}")


if __name__ == "__main__":
    main()
