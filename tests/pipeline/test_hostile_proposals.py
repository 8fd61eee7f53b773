"""Hostile proposals end in one line and exit 1, never a traceback: TOML nested thousands
deep (RecursionError in the TOML reader), 10^5 candidates (refused up front with the limit,
not two minutes into a cross join)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()


@pytest.mark.parametrize("text", [
    "x = " + "[" * 5000 + "]" * 5000,
    "[proposal]\nname = 'x'\nx = " + "{a = " * 2000 + "1" + "}" * 2000,
])
def test_a_proposal_nested_thousands_deep_exits_1(text: str, tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text)
    result = runner.invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                 "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 1
    assert f"{path}: nested too deeply to read" in result.output


CANDIDATE = """
[[candidates]]
id = "c{n}"
label = "cloud {n}"
deployment = "cloud"
provider = "scaleway"
region = "fr-par-2"
gpu = "H100-SXM-80GB"
gpu_count = 1
throughput = {{ tokens_per_s = 1000, source = "test" }}
cost = {{ eur_per_hour = 3, source = "test" }}
power = {{ watts = 700, boundary = "gpu_board", source = "test" }}
"""


def test_100000_candidates_are_refused_up_front(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("[proposal]\nname = 'many'\n[slo]\nttft_ms = 300\ntpot_ms = 50\n"
                    + "".join(CANDIDATE.format(n=n) for n in range(100_000)))
    db = tmp_path / "s.duckdb"
    result = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert (f"{path}: candidates: 100,000 candidates; at most 10,000 are compared in one "
            "proposal") in result.output
    assert not db.exists()  # refused before the store was opened, let alone a cross join
