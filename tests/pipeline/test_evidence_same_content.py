"""One benchmark given in two formats counts once (issue 33): GuideLLM writes the same report
as JSON or YAML; a folder holding both gives each run once, by what the runs say, not by the
files' bytes (which differ)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from samples import sample

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
