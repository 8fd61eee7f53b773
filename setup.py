"""The build's one addition to pyproject.toml's declarations (issue 33): an install compiles
the project's own modules.

uv compiles what it installs into the environment (`[tool.uv] compile-bytecode`), but the
project itself is an editable install, a .pth file naming this folder, whose modules uv never
sees: where PYTHONDONTWRITEBYTECODE=1 (this machine, many CI images) every process compiled
them again. Here the editable build compiles them in place, into the `__pycache__` folders
Python reads them from (ignored by git); a module edited since is compiled in memory, as
before. tests/test_bytecode.py checks that a second process compiles none of them.
"""

from __future__ import annotations

import compileall
from pathlib import Path

from setuptools import setup
from setuptools.command.editable_wheel import editable_wheel

ROOT = Path(__file__).resolve().parent
PACKAGES = ("pipeline", "sources", "schemas", "reports")


def compile_project(root: Path = ROOT) -> bool:
    """Every module of the project's packages compiled into its `__pycache__` (as Python's
    import would write it: timestamp-checked); False when one does not compile."""
    return all(compileall.compile_dir(root / package, quiet=1, workers=0)
               for package in PACKAGES if (root / package).is_dir())


class CompiledEditable(editable_wheel):
    def run(self) -> None:
        super().run()
        compile_project()


if __name__ == "__main__":  # run by setuptools' build backend
    setup(cmdclass={"editable_wheel": CompiledEditable})
