"""Parsed once: `evidence add` keeps each benchmark file's parsed runs in the store keyed by
its sha256; later reads handed that store (`cache=con`) take them from there and
give the same figures; a folder with a bad file loads the others and names the one skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.evidence.bench import add_bench_files, inspect, load_runs
from pipeline.evidence.goodput import Slo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bench"
SLO = Slo(ttft_ms=300, tpot_ms=50)
runner = CliRunner()


def stages(paths: list[Path], con: duckdb.DuckDBPyConnection) -> list[str]:
    seen: list[str] = []
    load_runs(paths, progress=lambda what, stage: seen.append(stage), cache=con)
    return seen


def test_a_file_added_is_not_parsed_again_and_gives_the_same_figures(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "ev.duckdb"))
    folder = FIXTURES / "vllm_sweep"
    before = inspect([folder], SLO)
    add_bench_files(con, [folder])
    seen = stages([folder], con)
    # three files, each read from the store: no "parsing" stage
    assert sum("read from the store" in s for s in seen) == 3
    assert not any(s.startswith("parsing") for s in seen)
    after = inspect([folder], SLO, cache=con)
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)
    # the knee of tests/fixtures/bench/vllm_sweep (test_goodput.py): concurrency 2, 80 tokens/s
    assert after["sweep"]["knee_concurrency"] == 2
    assert after["sweep"]["knee_tokens_per_s"] == pytest.approx(80.0)


def test_a_changed_file_or_timezone_is_parsed_again(tmp_path: Path) -> None:
    con = duckdb.connect(":memory:")
    copy = tmp_path / "r.json"
    shutil.copy(FIXTURES / "vllm_detailed_small.json", copy)
    assert any(s.startswith("parsing") for s in stages([copy], con))
    assert not any(s.startswith("parsing") for s in stages([copy], con))
    doc = json.loads(copy.read_text())
    doc["duration"] = doc["duration"] * 2
    copy.write_text(json.dumps(doc))  # new bytes, new sha256
    assert any(s.startswith("parsing") for s in stages([copy], con))
    seen: list[str] = []
    load_runs([copy], tz="Europe/Paris", progress=lambda w, s: seen.append(s), cache=con)
    assert any(s.startswith("parsing") for s in seen)  # another reader key


def test_the_same_bytes_at_another_path_take_that_path(tmp_path: Path) -> None:
    con = duckdb.connect(":memory:")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    shutil.copy(FIXTURES / "vllm_detailed_small.json", a)
    shutil.copy(a, b)
    stages([a], con)
    (run,) = load_runs([b], cache=con).runs
    assert run.path == str(b)


def test_folder_with_a_bad_file_loads_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    shutil.copytree(FIXTURES / "vllm_sweep", folder)
    # recognised as vLLM by its head, but its duration is not a number: a ParseError
    doc = json.loads((FIXTURES / "vllm_detailed_small.json").read_text())
    (folder / "broken.json").write_text(json.dumps({**doc, "duration": "never"}))
    db = str(tmp_path / "ev.duckdb")
    result = runner.invoke(app, ["evidence", "add", str(folder), "--db", db])
    # the three readable files are added, but the command fails: a scripted add must not
    # lose a sweep point silently (it exited 0)
    assert result.exit_code == 1, result.output
    assert "broken.json: skipped, it could not be read" in result.stderr
    assert result.stdout.count(": loaded, ") == 3
    assert result.stderr.endswith("error: 1 file(s) could not be read and were skipped "
                                  "(above); the others were added: fix or remove them and "
                                  "add again\n")
    con = duckdb.connect(db)
    assert con.execute("SELECT count(*) FROM core__bench_runs").fetchall() == [(3,)]
    con.close()
    # inspect --db reads the three from the store; the bad file named alone is still an error
    shown = runner.invoke(app, ["evidence", "inspect", str(FIXTURES / "vllm_sweep"), "--db", db,
                                "--ttft-ms", "300", "--tpot-ms", "50", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["sweep"]["knee_concurrency"] == 2
    alone = runner.invoke(app, ["evidence", "add", str(folder / "broken.json"), "--db", db])
    assert alone.exit_code == 1 and "broken.json" in alone.stderr
