"""Shared test set-up: Hypothesis without wall-clock deadlines, a fresh store per test, the
bundled market read once per session (the public samples are found through
tests/samples.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
