"""Evidence paths stay inside the proposal's folder: `evidence = "../../etc"`, an absolute
path elsewhere, a symbolic link out, or one inside an evidence folder are refused naming the
key (exit 1), unless the proposal sets `allow_outside = true`; a file beside the proposal, or
a link inside the folder to one, is read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from proposals import measured
from typer.testing import CliRunner

from pipeline.cli import app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SWEEP = FIXTURES / "bench" / "vllm_sweep"
runner = CliRunner()


def proposal(evidence: str, allow: bool = False) -> str:
    return measured("confined", f'{{ evidence = "{evidence}", tz = "UTC" }}',
                    '{ watts = 700, boundary = "gpu_board", source = "declared" }',
                    allow_outside=allow)


def run(tmp_path: Path, text: str) -> tuple[int, str]:
    folder = tmp_path / "proposal"
    folder.mkdir(exist_ok=True)
    (folder / "p.toml").write_text(text)
    result = runner.invoke(app, ["run", str(folder / "p.toml"), "--db",
                                 str(tmp_path / "s.duckdb"), "--json"])
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output


@pytest.mark.parametrize("where", ["../../../../../../etc", "/etc", str(SWEEP)])
def test_evidence_outside_the_folder_is_refused(where: str, tmp_path: Path) -> None:
    code, output = run(tmp_path, proposal(where))
    assert code == 1, output
    assert "throughput.evidence" in output and "leads outside the proposal's folder" in output


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "proposal").mkdir()
    (tmp_path / "proposal" / "bench").symlink_to(SWEEP)
    code, output = run(tmp_path, proposal("bench"))
    assert code == 1 and "leads outside the proposal's folder" in output


def test_allow_outside_reads_it_and_a_copy_beside_is_read(tmp_path: Path) -> None:
    # the sweep's knee under TTFT 300 ms / TPOT 50 ms is concurrency 2 at 80 tokens/s
    # (tests/pipeline/test_measured_candidate.py): read from outside, then from a copy beside
    shutil.copytree(SWEEP, tmp_path / "proposal" / "bench")
    for text in (proposal(str(SWEEP), allow=True), proposal("bench")):
        code, output = run(tmp_path, text)
        assert code == 0, output
        (lab,) = json.loads(output[output.index("{"):])["candidates"]
        assert lab["tokens_per_s"] == pytest.approx(80.0)


def knee(output: str) -> float:
    (lab,) = json.loads(output[output.index("{"):])["candidates"]
    return float(lab["tokens_per_s"])


def test_a_symlink_in_an_evidence_folder_leading_out_is_refused(tmp_path: Path) -> None:
    # bench/ holds two of the sweep's runs; the third, concurrency 2 (the knee: 80 tokens/s,
    # 40 without it), is a link to a copy outside the proposal's folder
    bench, elsewhere = tmp_path / "proposal" / "bench", tmp_path / "elsewhere"
    name = next(p.name for p in SWEEP.iterdir() if "concurrency2" in p.name)
    shutil.copytree(SWEEP, bench, ignore=shutil.ignore_patterns(name))
    shutil.copytree(SWEEP, elsewhere)
    target = elsewhere / name
    (bench / name).symlink_to(target)
    code, output = run(tmp_path, proposal("bench"))
    assert code == 1, output
    flat = "".join(output.split())  # the message as one line, wherever it wraps
    assert "throughput.evidence" in flat and "leadsoutsidetheproposal'sfolder" in flat
    assert f"bench/{name}" in flat and str(target) in flat
    # allowed, the link is read
    code, output = run(tmp_path, proposal("bench", allow=True))
    assert code == 0, output
    assert knee(output) == pytest.approx(80.0)
    # the same file moved inside the proposal's folder, the link to it is read
    shutil.move(elsewhere, tmp_path / "proposal" / "runs")
    (bench / name).unlink()
    (bench / name).symlink_to(tmp_path / "proposal" / "runs" / name)
    code, output = run(tmp_path, proposal("bench"))
    assert code == 0, output
    assert knee(output) == pytest.approx(80.0)


def test_a_symlinked_folder_in_an_evidence_folder_leading_out_is_refused(
        tmp_path: Path) -> None:
    bench, elsewhere = tmp_path / "proposal" / "bench", tmp_path / "elsewhere"
    shutil.copytree(SWEEP, bench)
    elsewhere.mkdir()
    (bench / "more").symlink_to(elsewhere)
    code, output = run(tmp_path, proposal("bench"))
    assert code == 1, output
    flat = "".join(output.split())
    assert "leadsoutsidetheproposal'sfolder" in flat
    assert "bench/more" in flat and str(elsewhere) in flat
