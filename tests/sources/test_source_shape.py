"""Every market-data source module is shaped alike (DESIGN section 3, STYLE habit 1): the same
constants, the job's `fetch(session, ctx)` and `parse(raw, ctx, notes)`, and lower-level
`fetch_<kind>`/`parse_<kind>` functions of one shape. Read through sources.registry alone, as
electricitymaps-contrib tests its parsers: no pipeline import."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Iterator

import pytest
import requests

from schemas.table import Table
from sources.http import Fetched
from sources.job import Context, Frames, MarketSource, Probe, Raw, Source
from sources.registry import SOURCES

MODULES = list(SOURCES.values())
#: The constants each module unpacks from its `Source(...)`, in the declaration's order.
CONSTANTS = ("SOURCE", "BASE_URL", "LICENCE", "PROVIDES", "ENV_VAR", "NEEDS_KEY", "ACCUMULATE")


def test_source_declares_the_constants_ingest_reads() -> None:
    """Source's fields, in order, are the constants of the MarketSource shape."""
    properties = {name for name, value in vars(MarketSource).items()
                  if isinstance(value, property)}
    assert properties == {*CONSTANTS, "PROBE"}  # PROBE: a constant of its own
    assert len(Source._fields) == len(CONSTANTS)
    assert [f.upper() for f in Source._fields[1:]] == list(CONSTANTS[1:])


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_constants(module) -> None:  # type: ignore[no-untyped-def]
    assert re.fullmatch(r"[a-z][a-z0-9_]*", module.SOURCE)
    assert re.fullmatch(r"https://[^\s]+[^/]", module.BASE_URL)  # no trailing slash
    assert isinstance(module.LICENCE, str) and module.LICENCE
    assert module.PROVIDES and all(isinstance(t, Table) for t in module.PROVIDES)
    assert module.ENV_VAR is None or re.fullmatch(r"[A-Z][A-Z0-9_]*", module.ENV_VAR)
    assert isinstance(module.NEEDS_KEY, bool) and isinstance(module.ACCUMULATE, bool)
    assert not module.NEEDS_KEY or module.ENV_VAR, "a key it needs is named in ENV_VAR"
    assert SOURCES[module.SOURCE] is module
    probe = module.PROBE  # what `ingest --check` asks: a path under the base URL
    assert isinstance(probe, Probe) and probe.path.startswith("/")
    assert (probe.key_param or probe.key_header) is None or module.ENV_VAR


def test_the_registry_runs_ecb_first() -> None:
    """USD prices are converted at parse time with the rates the ecb job loads."""
    assert next(iter(SOURCES)) == "ecb"
    assert len(SOURCES) == len(set(SOURCES.values())) == 11


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_job_signatures(module) -> None:  # type: ignore[no-untyped-def]
    expected = {
        "fetch": ({"session": requests.Session, "ctx": Context}, Iterator[Fetched]),
        "parse": ({"raw": Raw, "ctx": Context, "notes": list[str]}, Frames),
    }
    for name, (params, returns) in expected.items():
        function = getattr(module, name)
        assert function.__module__ == module.__name__, name
        signature = inspect.signature(function)
        assert list(signature.parameters) == list(params), name
        assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                   and p.default is inspect.Parameter.empty
                   for p in signature.parameters.values()), name
        hints = typing.get_type_hints(function)
        assert hints == {**params, "return": returns}, name


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_fetch_and_parse_signatures(module) -> None:  # type: ignore[no-untyped-def]
    functions = dict(inspect.getmembers(module, inspect.isfunction))
    fetchers = {n: f for n, f in functions.items()
                if n.startswith("fetch_") and f.__module__ == module.__name__}
    parsers = {n: f for n, f in functions.items()
               if n.startswith("parse_") and f.__module__ == module.__name__}
    assert fetchers and parsers
    for name, function in fetchers.items():
        params = inspect.signature(function).parameters
        first = next(iter(params.values()))
        assert first.name == "session" and first.default is inspect.Parameter.empty, name
        assert params["base_url"].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert "policy" in params, name
    for name, function in parsers.items():
        params = inspect.signature(function).parameters
        first = next(iter(params.values()))
        assert first.name == "data", name
        assert params["url"].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert not any(p.name in {"session", "con"} for p in params.values()), name


@pytest.mark.parametrize("module", [m for m in MODULES if hasattr(m, "GPU_MODELS")],
                         ids=lambda m: m.__name__)
def test_gpu_mappings_point_at_known_hardware(module) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    import polars as pl

    path = Path(__file__).resolve().parents[2] / "sources" / "reference" / "hardware.csv"
    if not path.exists():
        pytest.skip("sources/reference/hardware.csv not shipped")
    known = set(pl.read_csv(path)["gpu"])
    assert set(module.GPU_MODELS.values()) <= known, set(module.GPU_MODELS.values()) - known
