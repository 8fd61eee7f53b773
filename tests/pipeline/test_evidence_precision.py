"""Issue 26, item 2 (precision identity): a run's precision is its quantisation when one is
named, its dtype only when none is (pipeline/evidence/configuration.py `_precision`), whatever
order the two come in; and a candidate's precision goes through the alias table wherever
quality compares it (pipeline/inputs/evidence/quality.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from proposals import candidate, proposal
from samples import sample
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.evidence.configuration import configuration
from sources.bench.registry import parse_bench

#: a real `vllm bench serve` result (vLLM 0.25.1, facebook/opt-125m, 8 requests at
#: max_concurrency 2), whose own keys name no precision
RUN = "vllm/er0080_sweep_maxseqs4_run0.json"


def _settings(folder: Path, extra: dict[str, str] | None = None,
              sidecar: str | None = None) -> dict[str, str]:
    folder.mkdir(parents=True)
    doc = json.loads(sample(RUN).read_text(encoding="utf-8"))
    (folder / "run.json").write_text(json.dumps({**doc, **(extra or {})}), encoding="utf-8")
    if sidecar is not None:
        (folder / "configuration.toml").write_text(sidecar, encoding="utf-8")
    (run,) = parse_bench((folder / "run.json").read_bytes(), path=str(folder / "run.json"))
    return configuration(run, folder)


@pytest.mark.parametrize("serve", ["SERVE--dtype=bfloat16-quantization=fp8",
                                   "SERVE--quantization=fp8-dtype=bfloat16"])
def test_the_quantisation_is_the_precision_in_either_order(tmp_path: Path, serve: str
                                                            ) -> None:
    # before: the last of the two names read won, so the second order came out bfloat16
    settings = _settings(tmp_path / f"{serve}-BENCH--max_concurrency=2")
    assert settings["precision"] == "fp8"


def test_the_files_quantisation_and_a_sidecars_dtype(tmp_path: Path) -> None:
    # the file says quantization fp8 (a vLLM --metadata key), the sidecar dtype bfloat16:
    # the sidecar is read later, and before it overrode the quantisation
    settings = _settings(tmp_path / "r", {"quantization": "fp8"}, 'dtype = "bfloat16"\n')
    assert settings["precision"] == "fp8"


def test_the_dtype_when_no_quantisation_is_named(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "r", {"dtype": "bfloat16", "quantization": "None"})
    assert settings["precision"] == "bfloat16"
    assert "dtype" not in settings and "quantization" not in settings


def test_a_precision_given_as_such_is_kept(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "r", {"dtype": "bfloat16"}, 'precision = "nvfp4"\n')
    assert settings["precision"] == "nvfp4"


def test_the_quantised_run_is_refused_for_a_bf16_candidate(tmp_path: Path, db: Path) -> None:
    """End to end: the real file in a `vllm bench sweep` folder naming dtype after the
    quantisation is an fp8 run, not the bf16 candidate's evidence."""
    folder = tmp_path / "SERVE--quantization=fp8-dtype=bfloat16-BENCH--max_concurrency=2"
    folder.mkdir()
    shutil.copy(sample(RUN), folder / "run.json")
    path = tmp_path / "p.toml"
    path.write_text(proposal("precision", candidate(
        "opt", model='"facebook/opt-125m"', precision='"bf16"',
        throughput=f'{{ evidence = "{folder.name}" }}')), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 1, result.output
    assert "precision: the file says fp8, the candidate bf16" in " ".join(result.stderr.split())


def test_candidates_precisions_are_compared_through_the_alias_table(tmp_path: Path, db: Path
                                                                    ) -> None:
    """`BF16` and `bfloat16` are one precision: no candidate is told its precision differs
    from the other's (before, the raw lower-cased labels were compared: "bf16 differs from
    other candidates' (bfloat16)")."""
    path = tmp_path / "p.toml"
    path.write_text(proposal("precision", candidate("a", precision='"BF16"'),
                             candidate("b", precision='"bfloat16"')), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    notes = [n for c in json.loads(result.stdout)["candidates"] for n in c["notes"]]
    assert not [n for n in notes if "differs from other candidates'" in n]
