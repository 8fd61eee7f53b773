"""A candidate's evidence that gives nothing is a bad input named by its key, as a missing
path is: an empty (or mistyped) benchmark folder, and a file that is no power log, each one
line naming the proposal, the candidate's key and the file, exit 1, nothing written. Before,
the empty folder published a scorecard with the candidate excluded ("no benchmark run found",
no file or key named), and a bad power file named neither the proposal nor the key and hinted
at a `--format` option `run` does not have."""

from __future__ import annotations

from pathlib import Path

from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app


def run(tmp_path: Path, **fields: str) -> tuple[int, str]:
    path = tmp_path / "p.toml"
    path.write_text(proposal("evidence named", candidate("a", **fields)))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(path), "--db", str(tmp_path / "s.duckdb"),
                                      "--out", str(out)])
    assert not out.exists()  # nothing written on a refusal
    return result.exit_code, result.stderr


def test_an_empty_benchmark_folder_is_refused_naming_its_key(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "notes.txt").write_text("not a benchmark")
    code, err = run(tmp_path, throughput='{ evidence = "results" }')
    assert code == 1
    assert (f"{tmp_path / 'p.toml'}: candidates[0] (id 'a').throughput.evidence: bench: "
            f"{tmp_path / 'results'}: files: no benchmark run found (1 file(s) skipped: not a "
            "benchmark format this project reads)") in err


def test_a_file_that_is_no_power_log_is_refused_naming_its_key(tmp_path: Path) -> None:
    (tmp_path / "power.csv").write_text("a,b\n1,2\n")
    code, err = run(tmp_path, power='{ evidence = "power.csv" }')
    assert code == 1
    assert f"{tmp_path / 'p.toml'}: candidates[0] (id 'a').power.evidence: power: " in err
    assert "format = ... in the proposal or --power-format on the command line" in err
