"""The public sample files of ../shared/samples (never copied into this repository)."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"


def sample(relative: str) -> Path:
    """The sample at `relative` under ../shared/samples, or skip the test when it is absent."""
    path = SAMPLES / relative
    if not path.exists():
        pytest.skip(f"sample {relative} not available (../shared/samples is absent)")
    return path
