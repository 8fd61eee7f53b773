"""The project's own modules are compiled at install (issue 33): uv compiles what it installs
into the environment, not the modules of the project's editable install, so where
PYTHONDONTWRITEBYTECODE=1 every process compiled them again. setup.py's editable build
compiles them in place.

A copy of the project (its packages, pyproject.toml, setup.py; no `__pycache__`) is installed
editable into a new virtual environment by `uv pip install -e --offline` (the dependencies
found in this project's environment by a plain path line in a .pth file, as tests/
test_install.py does); a process with PYTHONDONTWRITEBYTECODE=1 then imports every module of
the packages, counting those Python compiles from source (`SourceLoader.source_to_code`, which
reading a `__pycache__` file skips): none. The same count over a copy never installed shows
the count sees compiles (every module)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "sources", "schemas", "reports")

pytestmark = pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH")

#: run in the child: import every module of the packages under sys.argv[1] (but `__main__`),
#: print how many of them were compiled from source and how many were imported
COUNT = """
import importlib, importlib._bootstrap_external as ext, pkgutil, sys
root = sys.argv[1]
compiled = []
original = ext.SourceLoader.source_to_code
def counted(self, data, path, *args, **kwargs):
    if str(path).startswith(root):
        compiled.append(str(path))
    return original(self, data, path, *args, **kwargs)
ext.SourceLoader.source_to_code = counted
imported = 0
for package in sys.argv[2:]:
    module = importlib.import_module(package)
    assert module.__file__.startswith(root), module.__file__
    imported += 1
    for found in pkgutil.walk_packages(module.__path__, package + "."):
        if not found.name.endswith(".__main__"):  # (runs the CLI)
            importlib.import_module(found.name)
            imported += 1
print(len(compiled), imported)
"""


def _copy(to: Path) -> Path:
    to.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, to / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, to / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return to


def _compiled(python: str, project: Path) -> tuple[int, int]:
    env = os.environ | {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(project)}
    done = subprocess.run([python, "-c", COUNT, str(project), *PACKAGES], cwd=project,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    compiled, imported = done.stdout.split()
    return int(compiled), int(imported)


def test_an_install_compiles_the_projects_modules_so_a_process_compiles_none(
        tmp_path: Path) -> None:
    never = _copy(tmp_path / "never-installed")
    compiled, imported = _compiled(sys.executable, never)
    assert imported > 100 and compiled == imported  # every module compiled from source

    project = _copy(tmp_path / "project")
    venv = tmp_path / "venv"
    run = {"capture_output": True, "text": True, "timeout": 600}
    done = subprocess.run(["uv", "venv", "--python", sys.executable, str(venv)], **run)
    assert done.returncode == 0, done.stderr
    python = str(venv / "bin" / "python")
    build = os.environ | {"CC": "/bin/false", "PYTHONDONTWRITEBYTECODE": "1"}  # no extension
    done = subprocess.run(["uv", "pip", "install", "--no-deps", "--offline", "--python",
                           python, "-e", str(project)], env=build, **run)
    assert done.returncode == 0, done.stderr
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], **run).stdout.strip()
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n",
                                                 encoding="utf-8")
    compiled, imported = _compiled(python, project)
    assert (compiled, imported) == (0, imported) and imported > 100
