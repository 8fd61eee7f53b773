"""The report templates are compiled once, not in every process (Jinja2's bytecode cache in
the user's own temporary folder), and that cache never fails a report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from jinja2 import Environment, PackageLoader

from reports.page import _CompiledTemplates

#: a child process that loads every template of the report and prints how many it compiled
CHILD = """
import jinja2
compiled = []
original = jinja2.Environment.compile
def counted(self, *args, **kwargs):
    compiled.append(args[1] if len(args) > 1 else kwargs.get("name"))
    return original(self, *args, **kwargs)
jinja2.Environment.compile = counted
from reports.page import templates
for name in templates().list_templates():
    templates().get_template(name)
print(len(templates().list_templates()), len(compiled))
"""


def _child(tmp: Path) -> tuple[int, int]:
    env = os.environ | {"TMPDIR": str(tmp)}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, check=True)
    listed, compiled = done.stdout.split()
    return int(listed), int(compiled)


def test_a_second_process_compiles_no_template(tmp_path: Path) -> None:
    listed, first = _child(tmp_path)
    assert listed >= 5 and first == listed  # a new temporary folder: each compiled once
    assert _child(tmp_path) == (listed, 0)  # read back, none compiled again


def test_a_cache_folder_that_vanished_costs_the_compile_only(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    cache = _CompiledTemplates(str(folder))
    shutil.rmtree(folder)
    environment = Environment(loader=PackageLoader("reports", "templates"), autoescape=True,
                              bytecode_cache=cache)
    name = environment.list_templates()[0]
    assert environment.get_template(name).name == name
