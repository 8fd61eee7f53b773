"""What `scorecard run` writes as JSON (stdout, scorecard.json, the stored run) carries no bidi
or control character from a proposal, as the other outputs; a demand no deployment has
(tokens_per_day = 1e308, finite and positive) is an input error naming the key, exit 1, not
an overflow (exit 3)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()
EXAMPLE = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")
RLO, ESC = "\u202e", "\x1b"


def run(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    done = runner.invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"), *args])
    return done.exit_code, done.stdout, done.stderr


def test_bidi_and_control_characters_never_reach_the_json(tmp_path: Path) -> None:
    # the first candidate's label gains an RLO (display spoofing) and an ESC (a TOML escape)
    text = EXAMPLE.replace('label = "', f'label = "{RLO}gpj.exe\\u001b[31m ', 1)
    assert text != EXAMPLE
    code, out, err = run(tmp_path, text, "--json")
    assert code == 0, err
    assert RLO not in out and ESC not in out and "\\u202e" not in out and "\\u001b" not in out
    labels = [c["label"] for c in json.loads(out)["candidates"]]
    assert any(label.startswith("gpj.exe[31m ") for label in labels)  # the text kept
    code, _, err = run(tmp_path, text, "--out", str(tmp_path / "out"))
    assert code == 0, err
    written = (tmp_path / "out" / "scorecard.json").read_text(encoding="utf-8")
    assert RLO not in written and ESC not in written and "gpj.exe[31m " in written


@pytest.mark.parametrize(("line", "key"), [
    ("tokens_per_day = 1e308", "tokens_per_day = 1e+308"),
    ("tokens_per_day = { low = 1e6, mode = 1e7, high = 1e300 }", "tokens_per_day = 1e+300"),
    # 10^15 / 86,400 = 1.157e10 requests/s at most
    # (the example's [demand] gives the request's prompt and output tokens)
    ("requests_per_s = 2e10", "requests_per_s = 2e+10"),
])
def test_a_demand_beyond_any_deployment_exits_1_naming_the_key(
        tmp_path: Path, line: str, key: str) -> None:
    text = EXAMPLE.replace("tokens_per_day = 500_000_000", line)
    assert text != EXAMPLE
    code, _, err = run(tmp_path, text, "--json")
    assert code == 1, err
    assert f"demand: {key}: at most" in err and "Traceback" not in err


def test_a_demand_at_the_bound_runs(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, EXAMPLE.replace("500_000_000", "1e15"), "--json")
    assert code == 0, err
    assert json.loads(out)["candidates"]
