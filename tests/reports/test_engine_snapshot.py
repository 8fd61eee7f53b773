"""The bundled example's JSON (generated-at fixed): a change in any figure, key or source
shows up here. Keys, strings, integers and nulls must match exactly; floats to 1e-12 relative,
because the last bit of a sum depends on the CPU's vector width (a rerun of the same commit on
another machine moved `tokens_per_day` from ...097 to ...093). Accept a deliberate change
with SCORECARD_UPDATE_SNAPSHOTS=1 and review the diff of
tests/fixtures/reports/example_scorecard.json."""

from __future__ import annotations

import json
import math
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pipeline.run import execute

SNAPSHOT = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "example_scorecard.json"
FIXED = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def first_difference(a: Any, b: Any, where: str = "$") -> str | None:
    """The JSON path of the first place where `a` and `b` differ, or None."""
    if isinstance(a, float) and isinstance(b, float):
        return None if math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0) else f"{where}: {a} != {b}"
    if type(a) is not type(b):
        return f"{where}: {a!r} != {b!r}"
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return f"{where}: keys {sorted(a.keys() ^ b.keys())} differ"
        return next((d for k in sorted(a) if (d := first_difference(a[k], b[k], f"{where}.{k}"))),
                    None)
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} != {len(b)} items"
        return next((d for i, (x, y) in enumerate(zip(a, b, strict=True))
                     if (d := first_difference(x, y, f"{where}[{i}]"))), None)
    return None if a == b else f"{where}: {a!r} != {b!r}"


def test_first_difference_sees_a_changed_figure_and_not_the_last_bit() -> None:
    assert first_difference({"x": [1.0, "a"]}, {"x": [1.0 + 1e-15, "a"]}) is None
    assert first_difference({"x": [1.0, "a"]}, {"x": [1.0001, "a"]}) == "$.x[0]: 1.0 != 1.0001"
    assert first_difference({"x": 1}, {"x": 1.0}) == "$.x: 1 != 1.0"
    assert first_difference({"x": None}, {"y": None}) == "$: keys ['x', 'y'] differ"


def test_example_json_matches_its_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    documents = []
    for run in (1, 2):  # two runs, two fresh stores: identical documents
        code = execute(None, vintage=None, out=None, db=tmp_path / f"s{run}.duckdb",
                       json_out=True, now=FIXED)
        assert code == 0
        documents.append(capsys.readouterr().out)
    assert documents[0] == documents[1]
    if os.environ.get("SCORECARD_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(documents[0], encoding="utf-8")
    assert SNAPSHOT.exists(), "snapshot missing: run with SCORECARD_UPDATE_SNAPSHOTS=1"
    difference = first_difference(json.loads(SNAPSHOT.read_text(encoding="utf-8")),
                                  json.loads(documents[0]))
    assert difference is None, difference
