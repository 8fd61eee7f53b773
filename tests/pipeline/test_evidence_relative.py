"""The report names evidence files relative to the proposal's folder: the sources list and
the per-candidate source text show `evidence/sweep/<file>`, never the folder the command ran
from or the absolute path (no URL: the path and the sha256 name the file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.inputs.records import file_listing, shown
from tests.pipeline.test_measured_candidate import FIXTURES, PROPOSAL

runner = CliRunner()
SWEEP = FIXTURES / "bench" / "vllm_sweep"


def test_shown_is_relative_to_the_folder() -> None:
    assert shown("work/p/evidence/a.json", "work/p") == "evidence/a.json"
    assert shown("/srv/data/a.json", "/srv/p") == "../data/a.json"  # under allow_outside
    assert shown("work/a.json", None) == "work/a.json"
    # 12 hex characters of the hash after the relative path
    assert file_listing([("p/e/a.json", "ab" * 32)], "p") == "e/a.json (sha256 abababababab)"


def test_the_report_lists_evidence_relative_to_the_proposal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "proposals" / "lab"
    shutil.copytree(SWEEP, folder / "evidence" / "sweep")
    text = (PROPOSAL.replace("allow_outside = true", "")
            .replace(str(SWEEP), "evidence/sweep"))
    power = str(FIXTURES / "scorecard" / "nvidia_smi_sweep_window.csv")
    shutil.copy(power, folder / "evidence" / "power.csv")
    text = text.replace(power, "evidence/power.csv")
    (folder / "p.toml").write_text(text)
    monkeypatch.chdir(tmp_path)  # the command runs two folders above the proposal
    result = runner.invoke(app, ["run", "proposals/lab/p.toml", "--db",
                                 str(tmp_path / "s.duckdb"), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    evidence = {s["subject"]: s for s in doc["sources"] if s["kind"] == "evidence"}
    names = sorted(p.name for p in SWEEP.iterdir())
    assert {f"evidence/sweep/{n}" for n in names} <= set(evidence)
    assert "evidence/power.csv" in evidence
    assert all(not s.startswith(("proposals", "/", "..")) for s in evidence)
    assert evidence["evidence/power.csv"]["url"] is None  # named by path and hash only
    # nothing the committee reads carries the analyst's folders
    assert str(tmp_path) not in result.stdout
    # the candidate's own source lines name the files the same way, never from the cwd
    [candidate] = doc["candidates"]
    for key in ("tokens_per_s_source", "power_source"):
        source = candidate["detail"][key]
        assert "proposals/lab" not in source and "evidence/" in source, source
    # and so do its inputs' sources (the goodput, the operating point, the power), also when
    # the proposal is given by its absolute path (a cron job's): the report files showed
    # /abs/proposals/lab/evidence/sweep there
    absolute = runner.invoke(app, ["run", str(folder / "p.toml"), "--db",
                                   str(tmp_path / "s.duckdb"), "--json"])
    assert absolute.exit_code == 0, absolute.output
    assert str(tmp_path) not in absolute.stdout
    for each in (doc, json.loads(absolute.stdout)):
        [candidate] = each["candidates"]
        sources = {i["input"]: i["source"] for i in candidate["inputs"]
                   if i["input"] in ("tokens_per_s", "operating_concurrency", "busy_power_w")}
        assert sources["tokens_per_s"] == "evidence/sweep"
        assert sources["operating_concurrency"].endswith("of evidence/sweep")
        assert sources["busy_power_w"].startswith("evidence/power.csv")
