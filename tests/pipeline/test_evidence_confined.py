"""Evidence paths stay inside the proposal's folder: `evidence = "../../etc"`, an absolute
path elsewhere or a symbolic link out are refused naming the key (exit 1), unless the
proposal sets `allow_outside = true`; a file beside the proposal is read."""

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
