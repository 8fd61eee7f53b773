"""Install anywhere (issue 17): the wheel built on a machine without a working C compiler
leaves the nvidia-smi C extension out (it is optional) and still installs and runs: the polars
reader reads every file, `scorecard --version` says which reader is in use, and a power log
gives the same figures as the source tree's install (which has the C fast path when built).

The wheel is built by `uv build --offline` with CC=/bin/false (the extension's compile fails,
setuptools goes on), installed with `uv pip install --no-deps --offline` into a new virtual
environment that finds the dependencies in this project's environment (a plain path line in a
.pth file: the project's own editable path is not added), and run from outside the project."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
POWER_LOG = ROOT / "tests" / "fixtures" / "power" / "nvidia_smi_nounits.csv"

pytestmark = pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH")


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env or os.environ.copy())
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a virtual environment holding the wheel built without a compiler."""
    tmp = tmp_path_factory.mktemp("install")
    build = os.environ.copy()
    build["CC"] = "/bin/false"
    _run(["uv", "build", "--wheel", "--offline", "-o", str(tmp / "dist"), str(ROOT)], tmp,
         build)
    wheel = next((tmp / "dist").glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "pipeline/cli/__init__.py" in names
    assert {"reports/templates/report.html", "reports/templates/style.css"} <= set(names)
    assert not [n for n in names if n.endswith((".so", ".pyd"))], names  # no extension
    env = tmp / "venv"
    _run(["uv", "venv", "--python", sys.executable, str(env)], tmp)
    python = env / "bin" / "python"
    _run(["uv", "pip", "install", "--no-deps", "--offline", "--python", str(python),
          str(wheel)], tmp)
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                      "['purelib'])"], tmp).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n",
                                           encoding="utf-8")
    return env / "bin"


def test_the_wheel_without_the_extension_runs_the_polars_reader(installed: Path,
                                                                tmp_path: Path) -> None:
    found = _run([str(installed / "python"), "-c", "import pipeline; print(pipeline.__file__)"],
                 tmp_path).stdout
    assert str(installed.parent) in found  # the wheel's copy, not the source tree
    version = _run([str(installed / "scorecard"), "--version"], tmp_path).stdout
    assert "nvidia-smi reader: polars (the C extension is not built)" in version


def test_a_power_log_reads_the_same_without_the_extension(installed: Path,
                                                          tmp_path: Path) -> None:
    args = ["evidence", "inspect", str(POWER_LOG), "--tz", "UTC"]
    wheel = _run([str(installed / "scorecard"), *args], tmp_path).stdout
    tree = _run([sys.executable, "-m", "pipeline", *args], ROOT).stdout
    # both installs agree line for line, on the fixture's figures: GPUs 0 and 1 at 300 W and
    # 400 W, sampled at 0, 1 and 2 s: 700 W together, 700 W x 2 s = 1,400 J
    assert wheel == tree
    assert "6 samples" in wheel and "mean 700.0 W" in wheel and "energy 1,400.0 J" in wheel
