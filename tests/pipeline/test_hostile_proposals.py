"""Hostile proposals end in one line and exit 1, never a traceback: TOML nested thousands
deep (RecursionError in the TOML reader)."""

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
