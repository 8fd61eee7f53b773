"""The package's import graph, read from the source (every `import`, at module level or inside a
function): no cycle between modules, and the direction between the packages and rooms holds.

- schemas imports none of pipeline, sources, reports (it declares; it knows no stage);
- sources never imports pipeline or reports (a source knows its API, not the engine);
- reports never imports sources or pipeline (it renders the engine's result, not raw inputs;
  what it needs of the formulas, their Excel forms, is declared in schemas);
- pipeline.engine computes from plain data: it imports none of the rooms that read files or the
  store (pipeline.inputs, .evidence, .store, .ingest), nor the jobs (pipeline.run, .workspace,
  .cli), nor sources, but for the pure helpers of ALLOWED;
- pipeline.store never imports pipeline.engine (it answers with frames);
- nothing imports pipeline.cli (but `python -m pipeline`), and only pipeline.cli imports
  inside functions (there, to keep `scorecard --help` fast).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "sources", "schemas", "reports")
#: module prefix -> the module prefixes its modules must not import
FORBIDDEN = {"schemas": {"pipeline", "sources", "reports"},
             "sources": {"pipeline", "reports"},
             "reports": {"sources", "pipeline"},
             "reports.figures": {"reports.html"},
             "pipeline.engine": {"pipeline.inputs", "pipeline.evidence", "pipeline.store",
                                 "pipeline.ingest", "pipeline.run", "pipeline.workspace",
                                 "pipeline.compare", "pipeline.folders", "pipeline.cli",
                                 "sources"},
             "pipeline.store": {"pipeline.engine", "pipeline.inputs", "pipeline.compare"}}
#: module prefix -> the modules it may import although FORBIDDEN covers them: pure helpers,
#: each with the reason (none: the engine needs nothing from the rooms that read)
ALLOWED: dict[str, set[str]] = {"pipeline.engine": set()}


def within(module: str, prefix: str) -> bool:
    """Whether `module` is the module or package `prefix`, or one inside it."""
    return module == prefix or module.startswith(prefix + ".")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


KNOWN = modules()


def target(name: str) -> str | None:
    """The module of ours that `import name` runs: the longest known prefix."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in KNOWN:
            return candidate
        parts.pop()
    return None


def imports(module: str, path: Path) -> Iterator[tuple[str, int, bool]]:
    """(imported module of ours, line, inside a function) for each import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST, in_function: bool) -> Iterator[tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if (found := target(alias.name)) is not None:
                        yield found, child.lineno, in_function
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:  # relative: resolve against this module's package
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in child.names:  # `from a import b` may import the module a.b
                    found = target(f"{base}.{alias.name}") or target(base)
                    if found is not None:
                        yield found, child.lineno, in_function
            yield from visit(child, nested)

    yield from visit(tree, False)


GRAPH = {m: sorted({(t, line, inside) for t, line, inside in imports(m, p) if t != m})
         for m, p in KNOWN.items()}


def test_the_walker_sees_module_and_function_imports() -> None:
    # pipeline/cli/__init__.py imports pipeline.run inside its `run` command and registers the
    # other command modules at module level
    edges = GRAPH["pipeline.cli"]
    assert any(t == "pipeline.run" and inside for t, _, inside in edges)
    assert any(t.startswith("pipeline.cli.") and not inside for t, _, inside in edges)


def test_a_rule_covers_a_module_and_the_modules_inside_it_only() -> None:
    assert within("pipeline.engine", "pipeline.engine")
    assert within("pipeline.engine.roofline.model", "pipeline.engine")
    assert not within("pipeline.engineering", "pipeline.engine")
    assert not within("pipeline", "pipeline.engine")


@pytest.mark.parametrize("prefix", sorted(FORBIDDEN))
def test_import_direction(prefix: str) -> None:
    allowed = ALLOWED.get(prefix, set())
    wrong = [f"{module}:{line} imports {imported}"
             for module, edges in GRAPH.items() if within(module, prefix)
             for imported, line, _ in edges
             if any(within(imported, f) for f in FORBIDDEN[prefix]) and imported not in allowed]
    assert not wrong, "\n".join(wrong)


def test_only_the_cli_imports_inside_functions_and_nothing_imports_the_cli() -> None:
    wrong = []
    for module, edges in GRAPH.items():
        # `python -m pipeline` (pipeline/__main__.py) is the CLI's other door
        in_cli = module in ("pipeline.cli", "pipeline.__main__") or module.startswith(
            "pipeline.cli.")
        for imported, line, inside in edges:
            if inside and not in_cli:
                wrong.append(f"{module}:{line} imports {imported} inside a function")
            if not in_cli and (imported == "pipeline.cli" or imported.startswith("pipeline.cli.")):
                wrong.append(f"{module}:{line} imports the CLI ({imported})")
    assert not wrong, "\n".join(wrong)


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, []):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_cycles_finds_a_loop_and_not_a_chain() -> None:
    assert cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert cycles({"a": ["b"], "b": ["c"], "c": []}) == []


def test_no_import_cycle() -> None:
    plain = {m: sorted({t for t, _, _ in edges}) for m, edges in GRAPH.items()}
    assert cycles(plain) == []


def test_the_readers_do_not_import_the_http_stack() -> None:
    """The readers of saved files (every format's registry, the saved Prometheus answers among
    them) import no `requests`: the live queries are in sources/prometheus_query.py, apart
    (about 40 ms of every `evidence add` and `run` with evidence, before)."""
    assert not _loads("sources.power.registry, sources.bench.registry", "requests")


def test_adding_evidence_builds_no_result_models() -> None:
    """What `scorecard evidence add` imports (the CLI, the add, the power logs' reader and the
    store) leaves out `schemas.result`, whose ~45 pydantic models took about 48 ms to build
    at import (`pipeline.store.scorecards` imported it for a type and one read back; the
    stored document is now validated by its reader, `pipeline/compare.py`)."""
    assert not _loads("pipeline.cli, pipeline.evidence.add, pipeline.evidence.power.logs, "
                      "pipeline.store", "schemas.result")


def _loads(modules: str, module: str) -> bool:
    """Whether importing `modules` (comma-separated) in a fresh interpreter loads `module`."""
    code = f"import sys, {modules}; print({module!r} in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return {"True": True, "False": False}[done.stdout.strip()]


def test_the_models_annotations_are_not_postponed() -> None:
    """schemas/proposal.py and schemas/result.py define their pydantic models without
    `from __future__ import annotations`: postponed, every field's annotation is a string that
    pydantic evaluates back (an eval each) when it defines the model, at every run's import. A
    string is left only where a field names a class defined after it: DeclaredCost.term
    (Term)."""
    from pydantic import BaseModel

    import schemas.proposal
    import schemas.result

    strings = sorted(f"{model.__name__}.{name}"
                     for module in (schemas.proposal, schemas.result)
                     for model in vars(module).values()
                     if isinstance(model, type) and issubclass(model, BaseModel)
                     and model.__module__ == module.__name__
                     for name, annotation in vars(model).get("__annotations__", {}).items()
                     if isinstance(annotation, str))
    assert strings == ["DeclaredCost.term"]
