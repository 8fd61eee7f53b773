"""The bundled example's JSON, byte for byte (generated-at fixed): a change in any figure, key
or source shows up here. Accept a deliberate change with SCORECARD_UPDATE_SNAPSHOTS=1 and
review the diff of tests/fixtures/reports/example_scorecard.json."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.run import execute

SNAPSHOT = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "example_scorecard.json"
FIXED = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


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
    assert documents[0] == SNAPSHOT.read_text(encoding="utf-8")
