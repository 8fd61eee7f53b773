"""Installed without a C compiler (the optional nvidia-smi extension not built): every command
still works, the polars path reads nvidia-smi logs to the same frame, and `--version` says
which reader is in use. The missing build is made real in a fresh interpreter where the
extension module cannot be imported."""

from __future__ import annotations

import subprocess
import sys

# a clean nvidia-smi log: the compiled scan reads it when it is there
LOG = ("timestamp, index, power.draw [W]\n"
       + "".join(f"2026/11/20 11:00:{s:02d}.000, {g}, {100 + s + g}.00 W\n"
                 for s in range(30) for g in range(2)))

SCRIPT = """
import sys
if sys.argv[1] == "without":
    sys.modules["sources.power._nvidia_smi_scan"] = None  # as if never built
from sources.power import nvidia_smi
from pipeline.cli import version_line
frame = nvidia_smi.parse(sys.stdin.buffer.read(), path="gpu.csv", tz="Europe/Paris")
print(version_line())
print(nvidia_smi.scan is None)
frame.write_csv(sys.stdout)
"""


def _run(mode: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], input=LOG.encode(),
                         capture_output=True, check=True)
    return out.stdout.decode().splitlines()


def test_the_polars_path_reads_what_the_scan_reads() -> None:
    with_scan, without = _run("with"), _run("without")
    assert with_scan[0].endswith("(nvidia-smi reader: C fast path)")
    assert without[0].endswith("(nvidia-smi reader: polars (the C extension is not built))")
    assert (with_scan[1], without[1]) == ("False", "True")
    assert len(without) == 2 + 1 + 60  # header + 30 s x 2 GPUs
    assert without[2:] == with_scan[2:]
