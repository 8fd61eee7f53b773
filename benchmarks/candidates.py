"""Benchmark: whole-process `scorecard run` over proposals of 7 to 10,000 candidates (issue 18's
"candidates scale linearly" target; issue 30 item 4's shortlist at scale).

    uv run python benchmarks/candidates.py [--sizes 7,100,1000,10000] [--runs 1]
        [--modes json,full] [--keep DIR]

Each proposal is the bundled example's header (SLO, policy, demand, TCO profile, 10,000 draws)
with its seven candidates copied under new ids. Half the copies are near-duplicates of their
original (goodput and power within 0.1 %, each with its own overlapping goodput range), so
that the uncertainty boxes overlap and nothing prunes easily: the case that made the frontier
probability quadratic. The other half spread goodput over 0.6-1.4x and power over 0.8-1.2x.
Every `scorecard run` is a separate process on one warm store (--db in a temporary folder,
loaded once before timing), writing its full output (HTML, JSON, XLSX, CSV, Parquet) to a
temporary folder; `--json` runs (the engine part: resolve, metrics, Pareto, Monte Carlo,
sizing, the JSON and the store, no report files) are timed first. Prints, per size and mode:
the median wall time, the median CPU time (user + system: the machine's other load stretches
the wall time, not this), each with its spread (lowest-highest) over the runs, the peak RSS
of the process (`/usr/bin/time -f "%U %S %M"`), and the ratio to the 7-candidate run measured
in the same run; with
both modes, the report files' part (the full run's median less the engine's) and its ratio;
the growth exponent of each mode (log of the wall-time ratio over log of the size ratio, from
the 7-candidate run and between the two largest sizes: 1 is linear); then `uptime`'s load
average (before and after).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

#: issue 30 item 4: 1,000 candidates in <= 10 s; 10,000 end to end in <= 60 s and <= 4 GB
TARGETS = {1000: (10.0, 4096.0), 10_000: (60.0, 4096.0)}  # seconds, MB


def example_parts() -> tuple[str, list[str]]:
    """The bundled example: its header and its `[[candidates]]` blocks (text)."""
    text = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")
    head, *blocks = text.split("\n[[candidates]]\n")
    # comment lines between blocks belong to the next block: drop them from each block's tail
    return head, [re.sub(r"\n(#[^\n]*\n?|\n)*\Z", "\n", b) for b in blocks]


def _scale_line(block: str, key: str, factor: float, spread: tuple[float, float] | None
                ) -> str:
    """Multiply the numbers of `key = ...` (a scalar or a range) by `factor`; a scalar becomes a
    range `spread` around it when `spread` is given."""
    pattern = re.compile(rf"(?m)^({key} = \{{ )(.*)$")
    match = pattern.search(block)
    if match is None:
        return block
    line = match.group(2)

    def scaled(m: re.Match[str]) -> str:
        return f"{float(m.group(1).replace('_', '')) * factor:.6g}"

    name = "tokens_per_s" if key == "throughput" else "watts"
    scalar = re.search(rf"{name} = ([0-9_.]+)(?=,| )", line)
    if scalar is not None and spread is not None:
        value = float(scalar.group(1).replace("_", "")) * factor
        line = line.replace(scalar.group(0), f"{name} = {{ low = {value * spread[0]:.6g}, "
                                              f"mode = {value:.6g}, high = "
                                              f"{value * spread[1]:.6g} }}", 1)
    else:
        ranged = re.search(rf"{name} = \{{[^}}]*\}}", line)
        target = ranged.group(0) if ranged else (scalar.group(0) if scalar else "")
        if target:
            new = re.sub(r"(?<![A-Za-z_])([0-9][0-9_]*(?:\.[0-9]+)?)", scaled, target)
            line = line.replace(target, new, 1)
    if key == "power":
        line = re.sub(r"idle_watts = ([0-9_.]+)", lambda m: f"idle_watts = "
                      f"{float(m.group(1).replace('_', '')) * factor:.6g}", line)
    return block[:match.start(2)] + line + block[match.end(2):]


def proposal(n: int, seed: int = 18) -> str:
    """A proposal of `n` candidates (the example's seven first, unchanged, when n >= 7)."""
    head, blocks = example_parts()
    rng = random.Random(seed)
    out = [head.replace('name = "Sovereign 70B inference platform (example)"',
                        f'name = "Scaling benchmark, {n} candidates"')]
    for i in range(n):
        base = blocks[i % len(blocks)]
        if i < len(blocks):
            out.append(base)
            continue
        cid = re.search(r'id = "([^"]+)"', base).group(1)  # type: ignore[union-attr]
        block = base.replace(f'id = "{cid}"', f'id = "{cid}-{i:05d}"', 1)
        if i % 2:  # near-duplicate: overlapping ranges, point figures within 0.1 %
            tps, watts, spread = (1 + rng.uniform(-1e-3, 1e-3), 1 + rng.uniform(-1e-3, 1e-3),
                                  (0.9, 1.08))
        else:
            tps, watts, spread = rng.uniform(0.6, 1.4), rng.uniform(0.8, 1.2), (0.85, 1.1)
        block = _scale_line(block, "throughput", tps, spread)
        block = _scale_line(block, "power", watts, None)
        out.append(block)
    return "\n[[candidates]]\n".join(out)


def run_once(file: Path, db: Path, out: Path | None) -> tuple[float, float, int, float]:
    """Wall seconds and peak RSS (MB) of one `scorecard run` process, its exit code and its
    CPU seconds (user + system: what the machine's other load does not stretch); with `out`
    None, `run --json` (the engine and the store, no report files)."""
    cmd = ["/usr/bin/time", "-f", "%U %S %M", sys.executable, "-m", "pipeline", "run", str(file),
           "--db", str(db), *(["--json"] if out is None else ["--out", str(out)])]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    lines = done.stderr.strip().splitlines()
    user, system, rss_kb = (float(x) for x in lines[-1].split()) if lines and re.fullmatch(
        r"[0-9.]+ [0-9.]+ [0-9]+", lines[-1]) else (0.0, 0.0, 0.0)
    if done.returncode:
        print(f"  exit {done.returncode}: {done.stderr.strip()[-600:]}", file=sys.stderr)
    return wall, rss_kb / 1024, done.returncode, user + system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="7,100,1000")
    parser.add_argument("--runs", type=int, default=1, help="runs per size (median quoted)")
    parser.add_argument("--keep", type=Path, help="write the proposals here (and keep them)")
    parser.add_argument("--modes", default="json,full",
                        help="json: `run --json` (the engine part); full: every output file")
    args = parser.parse_args()
    sizes = sorted({7, *(int(s) for s in args.sizes.split(","))})  # the baseline first
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime before: {load}", flush=True)
    walls: dict[tuple[str, int], float] = {}
    failed = []  # (mode, size) of runs that exited non-zero: the script fails after them
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        db = Path(tmp) / "bench.duckdb"
        files = {}
        for n in sizes:
            files[n] = folder / f"candidates_{n}.toml"
            files[n].write_text(proposal(n), encoding="utf-8")
        run_once(files[7], db, Path(tmp) / "warm")  # load the bundled data into the store
        for mode in args.modes.split(","):
            base = None
            for n in sizes:
                results = [run_once(files[n], db, None if mode == "json" else
                                    Path(tmp) / f"out{n}-{r}") for r in range(args.runs)]
                wall = walls[mode, n] = statistics.median(r[0] for r in results)
                rss = max(r[1] for r in results)
                cpu = statistics.median(r[3] for r in results)
                codes = sorted({r[2] for r in results})
                if codes != [0]:
                    failed.append(f"{mode} {n:,}")
                base = base or wall
                target = TARGETS.get(n) if mode == "full" else None
                verdict = "" if target is None else (
                    f"; target <= {target[0]:g} s and <= {target[1] / 1024:g} GB: "
                    + ("met" if wall <= target[0] and rss <= target[1] and codes == [0]
                       else "NOT met"))
                what = ("scorecard run --json (engine, store; no report files)"
                        if mode == "json" else "scorecard run (every output file)")
                spread = [f" ({min(r[i] for r in results):.2f}-{max(r[i] for r in results):.2f})"
                          if args.runs > 1 else "" for i in (0, 3)]
                print(f"{what}, {n:,} candidates: {wall:.2f} s wall{spread[0]} (median of "
                      f"{args.runs}), {cpu:.2f} s CPU{spread[1]}, peak RSS {rss:.0f} MB, "
                      f"{wall / base:.2f}x the "
                      "7-candidate run, exit "
                      f"{','.join(map(str, codes))}{verdict}", flush=True)
    def exponent(mode: str, a: int, b: int) -> float:
        return math.log(walls[mode, b] / walls[mode, a]) / math.log(b / a)

    for mode in args.modes.split(","):
        sized = [n for n in sizes if (mode, n) in walls]
        pairs = [*itertools.pairwise(sized), *([(sized[0], sized[-1])] if len(sized) > 2
                                               else [])]
        for a, b in pairs:
            print(f"growth exponent ({mode}) from {a:,} to {b:,} candidates: "
                  f"{exponent(mode, a, b):.2f} (1 is linear)")
    parts = {n: walls["full", n] - walls["json", n] for n in sizes
             if ("full", n) in walls and ("json", n) in walls}
    for n, part in parts.items():
        print(f"report files (full run less run --json), {n:,} candidates: {part:.2f} s, "
              f"{part / parts[sizes[0]]:.2f}x the 7-candidate run's {parts[sizes[0]]:.2f} s"
              if parts[sizes[0]] > 0 else f"report files, {n:,} candidates: {part:.2f} s")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime: {load}")
    if failed:  # a timing of a run that stopped is no timing of the run
        sys.exit(f"runs that exited non-zero: {', '.join(failed)} (their errors above)")


if __name__ == "__main__":
    main()
