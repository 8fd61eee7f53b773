"""The sequences a user walks, through the CLI on one store: each later command sees what the
earlier ones left (a command alone passing says nothing about the order users run them in)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from schemas.fields import is_vintage

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "fixtures" / "bench" / "vllm_detailed_small.json"
runner = CliRunner()


def scorecard(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_evidence_add_then_run_and_explain_take_the_market_month(tmp_path: Path) -> None:
    """`evidence add` records its load under the vintage `evidence` (no month): the next plain
    `run` and `explain` must still take the latest market month, the bundled data's 2026-10
    (sources/reference/README.md), not `evidence` (they exited 3 before)."""
    db = str(tmp_path / "s.duckdb")
    code, _, err = scorecard("evidence", "add", str(BENCH), "--db", db)
    assert code == 0, err
    code, out, err = scorecard("run", "--db", db, "--json")
    assert code == 0, err
    assert json.loads(out)["vintage"] == "2026-10"
    code, out, err = scorecard("explain", "onprem-fr-h200-fp8", "cpm_eur_per_mtok", "--db", db,
                               "--json")
    assert code == 0, err
    assert json.loads(out)["candidate"] == "onprem-fr-h200-fp8"


@pytest.mark.parametrize("text", ["2026-11\n", "\uff12\uff10\uff12\uff16-11", "2026-13",
                                  "2026-1", " 2026-11"])
def test_a_vintage_is_a_month_in_ascii_digits_and_nothing_else(text: str) -> None:
    assert not is_vintage(text)


def test_a_bogus_vintage_is_refused_before_anything_runs(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    code, _, err = scorecard("run", "--db", str(db), "--vintage", "\uff12\uff10\uff12\uff16-11")
    assert code == 1
    assert "is not a month YYYY-MM" in err
    assert not db.exists()  # refused before the store is opened
    assert is_vintage("2026-11")
