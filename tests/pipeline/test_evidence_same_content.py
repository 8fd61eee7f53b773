"""One benchmark given in two formats counts once (issue 33): GuideLLM writes the same report
as JSON or YAML; a folder holding both gives each run once, by what the runs say, not by the
files' bytes (which differ)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import yaml
from samples import sample
from typer.testing import CliRunner

from pipeline.cli.evidence import evidence_app
from pipeline.evidence.bench import load_runs

YAML = "guidellm/guidellm_0.8.1_GENERATED_mock-server_concurrent-1-4_benchmarks.yaml"


def test_a_guidellm_report_as_json_and_as_yaml_counts_once(tmp_path: Path) -> None:
    # the public sample: one GuideLLM 0.8.1 report of 2 benchmarks (concurrency 1 and 4);
    # the JSON is the same report as GuideLLM's `--output kind=json` writes it
    source = sample(YAML)
    shutil.copy(source, tmp_path / "benchmarks.yaml")
    report = yaml.safe_load(source.read_text())
    (tmp_path / "benchmarks.json").write_text(json.dumps(report, indent=2))
    alone = load_runs([tmp_path / "benchmarks.yaml"])
    both = load_runs([tmp_path])
    assert [r.concurrency for r in alone.runs] == [1, 4]
    assert sorted(r.concurrency for r in both.runs) == [1, 4]  # not [1, 1, 4, 4]
    assert [Path(name).name for name, _ in both.files] == ["benchmarks.json"]
    said = [n for n in both.notes if "counted once" in n]
    assert said == [f"{tmp_path / 'benchmarks.yaml'}: the same runs as "
                    f"{tmp_path / 'benchmarks.json'} (one benchmark given twice, as JSON and "
                    "YAML say): counted once"]


def test_runs_that_differ_are_all_kept(tmp_path: Path) -> None:
    # the example sweep (pipeline/example_results): three vLLM runs at concurrency 1, 2, 4,
    # each its own content: none is dropped
    shutil.copytree(Path(__file__).resolve().parents[2] / "pipeline" / "example_results",
                    tmp_path / "sweep")
    loaded = load_runs([tmp_path / "sweep"])
    assert sorted(r.concurrency for r in loaded.runs) == [1, 2, 4]
    assert not [n for n in loaded.notes if "counted once" in n]


def test_evidence_add_loads_one_benchmark_given_twice_once_and_says_so(tmp_path: Path) -> None:
    # the same report as YAML and JSON, named on the command line: the YAML's runs (2) are
    # loaded, the JSON is named on stderr as counted once, and the store holds 2 runs
    report = yaml.safe_load(sample(YAML).read_text())
    shutil.copy(sample(YAML), tmp_path / "a.yaml")
    (tmp_path / "b.json").write_text(json.dumps(report))
    db = tmp_path / "s.duckdb"
    result = CliRunner().invoke(evidence_app, ["add", str(tmp_path / "a.yaml"),
                                               str(tmp_path / "b.json"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert f"{tmp_path / 'b.json'}: the same runs as {tmp_path / 'a.yaml'}" in result.stderr
    assert result.stdout.count(": loaded, ") == 1
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM core__bench_runs").fetchone() == (2,)


def test_read_back_from_the_store_the_pair_still_counts_once(tmp_path: Path) -> None:
    # both files added to a store, then read again with it: the runs come from the store
    # (unchanged files are not parsed), and the JSON is still the YAML's runs: 2, not 4 (the
    # check ran on parsed files only, so a second read counted [1, 1, 4, 4])
    report = yaml.safe_load(sample(YAML).read_text())
    shutil.copy(sample(YAML), tmp_path / "a.yaml")
    (tmp_path / "b.json").write_text(json.dumps(report))
    con = duckdb.connect(str(tmp_path / "s.duckdb"))
    paths = [tmp_path / "a.yaml", tmp_path / "b.json"]
    load_runs(paths, cache=con)
    stages: list[str] = []
    again = load_runs(paths, cache=con, progress=lambda what, stage: stages.append(stage))
    assert stages.count("read from the store (unchanged since it was parsed)") == 2
    assert sorted(r.concurrency for r in again.runs) == [1, 4]
    assert [n for n in again.notes if "counted once" in n] == [
        f"{tmp_path / 'b.json'}: the same runs as {tmp_path / 'a.yaml'} (one benchmark given "
        "twice, as JSON and YAML say): counted once"]
