"""Shared test helpers: where the public samples live, a fresh store per test."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# Wall-clock deadlines make property tests flaky on a shared 2-core machine; the tests bound
# their own sizes instead.
settings.register_profile("default", deadline=None)
settings.load_profile("default")

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO.parent / "shared" / "samples"


def sample(relative: str) -> Path:
    """A public sample file from ../shared/samples, or skip the test when it is absent."""
    path = SAMPLES / relative
    if not path.exists():
        pytest.skip(f"sample {relative} not available (../shared/samples is absent)")
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store.duckdb"
