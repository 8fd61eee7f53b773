"""Shared test set-up: Hypothesis without wall-clock deadlines, a fresh store per test, the
bundled market read once per session (the public samples are found through
tests/samples.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from pipeline import store
from pipeline.engine.resolved import Market
from pipeline.ingest.bundled import load_bundled
from pipeline.inputs import read_market
from sources import bundled

# Wall-clock deadlines make property tests flaky on a shared 2-core machine; the tests bound
# their own sizes instead.
settings.register_profile("default", deadline=None)
settings.load_profile("default")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store.duckdb"


@pytest.fixture(scope="session")
def market(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Market]:
    """The bundled vintage's market (Market is frozen: tests share it)."""
    con = store.connect(Path(tmp_path_factory.mktemp("market")) / "store.duckdb")
    load_bundled(con)
    yield read_market(con, bundled.VINTAGE)
    con.close()


@dataclass
class Calls:
    """How many times a spied function was called."""

    count: int = 0


def _spy(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> Calls:
    calls, real = Calls(), getattr(module, name)

    def counted(*args: Any) -> Any:
        calls.count += 1
        return real(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.fixture
def chart_draws(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Counts the charts vl-convert draws during the test."""
    from reports.figures import charts
    return _spy(monkeypatch, charts, "_draw")


@pytest.fixture
def table_renders(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Counts the scorecard tables great-tables renders during the test."""
    from reports.html import scorecard_table
    return _spy(monkeypatch, scorecard_table, "_render")
