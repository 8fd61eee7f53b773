"""Speed of a big nvidia-smi log (issue 4): 8 GPUs x 10 Hz x 36 h = 10,368,000 rows.

Run by hand (not collected by pytest):  uv run python benchmarks/power_log.py
[--hours 36] [--keep DIR] [--runs 3]. It writes the log with a seeded generator, then, in each
of `runs` fresh processes, times a bare DuckDB `count(*)` over `read_csv` of the file and our
path (read bytes, parse, order check, validate: `read_power`; energy over a 1-hour window:
`window_energy`), and reports the peak memory (max RSS) of that process. Target (issue 4):
ratio_to_duckdb <= 2, peak_rss_gb <= 2.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

GPUS, HZ = 8, 10


def generate(path: Path, hours: float) -> int:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(20261129)
    ticks = int(HZ * 3600 * hours)
    start = np.datetime64("2026-11-20T00:00:00.000")
    times = start + (np.arange(ticks) * (1000 // HZ)).astype("timedelta64[ms]")
    stamps = pl.Series(times).dt.strftime("%Y/%m/%d %H:%M:%S%.3f").to_numpy().repeat(GPUS)
    frame = pl.DataFrame({
        "t": stamps, "i": np.tile(np.arange(GPUS), ticks),
        "p": rng.uniform(200, 700, ticks * GPUS).round(2)})
    lines = frame.select(pl.format("{}, {}, {} W", "t", "i", "p"))
    with path.open("w") as out:
        out.write("timestamp, index, power.draw [W]\n")
        lines.write_csv(out, include_header=False, quote_style="never")
    return frame.height


def measure(path: Path) -> dict[str, float]:
    import resource

    import duckdb

    from pipeline.evidence.energy import Window, window_energy
    from sources.power.registry import read_power

    begin = time.perf_counter()
    rows = duckdb.execute("SELECT count(*) FROM read_csv(?)", [str(path)]).fetchone()
    duck_s = time.perf_counter() - begin
    begin = time.perf_counter()
    _, frame = read_power(path.read_bytes(), path=str(path), tz="UTC")
    read_s = time.perf_counter() - begin
    begin = time.perf_counter()
    result = window_energy(frame, Window(datetime(2026, 11, 20, 10, tzinfo=UTC),
                                         datetime(2026, 11, 20, 11, tzinfo=UTC)),
                           origin=str(path))
    energy_s = time.perf_counter() - begin
    return {"rows": float(rows[0]) if rows else 0.0, "duckdb_count_s": duck_s,
            "read_parse_validate_s": read_s, "energy_s": energy_s,
            "ratio_to_duckdb": (read_s + energy_s) / duck_s,
            "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
            "average_power_w": result.average_power_w}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", type=float, default=36.0)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        path = folder / "nvidia_smi_big.csv"
        if not path.exists():
            print(f"generated {generate(path, args.hours):,} rows", file=sys.stderr)
        runs = []
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, __file__, "--measure", str(path)],
                                 check=True, capture_output=True, text=True)
            runs.append(json.loads(out.stdout))
            print(json.dumps(runs[-1], sort_keys=True))
        ratios = sorted(run["ratio_to_duckdb"] for run in runs)
        print(f"ratio to DuckDB count(*): median {ratios[len(ratios) // 2]:.2f} "
              f"(runs {', '.join(f'{r:.2f}' for r in ratios)}); peak RSS at most "
              f"{max(run['peak_rss_gb'] for run in runs):.2f} GB")


if __name__ == "__main__":
    main()
