"""What the benchmark scripts share: one figure set per fresh child process.

- `peak_rss_gb`: this process's peak RSS from VmHWM (`ru_maxrss` would carry the parent's
  over exec).
- `figures`: the child's wall seconds since a start time, CPU seconds (user + sys) and peak
  RSS, with any further figures given, as one JSON line on stdout.
- `measured`: a script run with `--child` and its arguments in a fresh process, its JSON line
  read back, with the whole process's wall seconds as `process_s`.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def peak_rss_gb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1e6
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def figures(begin: float, **more: Any) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall_s": time.perf_counter() - begin,
                      "cpu_s": usage.ru_utime + usage.ru_stime,
                      "peak_rss_gb": peak_rss_gb(), **more}))


def measured(script: str, *args: str) -> dict[str, Any]:
    begin = time.perf_counter()
    out = subprocess.run([sys.executable, script, "--child", *args],
                         check=True, capture_output=True, text=True)
    found: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    found["process_s"] = time.perf_counter() - begin
    return found
