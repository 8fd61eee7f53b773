"""Shared test set-up: Hypothesis without wall-clock deadlines, a fresh store per test
(the public samples are found through tests/samples.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# Wall-clock deadlines make property tests flaky on a shared 2-core machine; the tests bound
# their own sizes instead.
settings.register_profile("default", deadline=None)
settings.load_profile("default")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store.duckdb"
