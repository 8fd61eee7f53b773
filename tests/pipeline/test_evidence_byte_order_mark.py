"""Evidence files re-saved with a UTF-8 byte-order mark (Notepad, Excel's "CSV UTF-8") are
recognised by `evidence inspect` and `evidence add` as they are without one: a sweep keeps
every load level, a paired AIPerf run stays one run, an nvidia-smi dmon log is loaded."""

from __future__ import annotations

import json
import shutil
from datetime import UTC
from pathlib import Path

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli.evidence import evidence_app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "pipeline" / "example_results"
FIXTURES = ROOT / "tests" / "fixtures"
BOM = b"\xef\xbb\xbf"
#: the example sweep's concurrency-4 level, the one the test re-saves with a BOM
LEVEL_4 = "vllm-infqps-concurrency4-m-20260816-160201.json"

app = typer.Typer()
app.add_typer(evidence_app, name="evidence")
runner = CliRunner()


def bommed_copy(source: Path, folder: Path) -> Path:
    """`source` written into `folder` with a BOM in front of its bytes."""
    folder.mkdir(exist_ok=True)
    target = folder / source.name
    target.write_bytes(BOM + source.read_bytes())
    return target


def sweep(tmp_path: Path) -> Path:
    """The `scorecard init` example sweep, its concurrency-4 file re-saved with a BOM."""
    folder = tmp_path / "sweep"
    shutil.copytree(EXAMPLE, folder)
    bommed_copy(EXAMPLE / LEVEL_4, folder)
    return folder


def test_inspect_keeps_the_sweep_level_saved_with_a_bom(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "inspect", str(sweep(tmp_path)),
                                 "--ttft-ms", "1500", "--tpot-ms", "60", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert sorted(run["concurrency"] for run in report["runs"]) == [1, 2, 4]
    assert "skipped" not in result.stderr
    # level 4: 8 requests x 20 output tokens in 0.98 s; every TTFT (0.1 or 0.5 s) is under
    # 1.5 s and every TPOT (10 ms) under 60 ms, so all pass: 160 / 0.98 = 163.3 tokens/s,
    # above level 2's 4 x 20 / 0.68 = 117.6 (the knee without the BOM'd file)
    assert report["sweep"]["knee_concurrency"] == 4
    assert report["sweep"]["knee_tokens_per_s"] == pytest.approx(160 / 0.98)


def test_add_loads_the_sweep_level_saved_with_a_bom(tmp_path: Path) -> None:
    db = str(tmp_path / "ev.duckdb")
    result = runner.invoke(app, ["evidence", "add", str(sweep(tmp_path)), "--db", db])
    assert result.exit_code == 0, result.stderr
    # 1 run row + 8 request rows
    assert f"{LEVEL_4}: loaded, 9 rows" in result.stdout
    con = duckdb.connect(db)
    assert con.execute("SELECT list(concurrency ORDER BY concurrency), sum(reported_completed)"
                       " FROM core__bench_runs").fetchall() == [([1, 2, 4], 4 + 4 + 8)]


def test_inspect_reads_an_aiperf_run_saved_with_a_bom(tmp_path: Path) -> None:
    run = FIXTURES / "bench" / "aiperf_run"
    for name in ("profile_export.jsonl", "profile_export_aiperf.json"):
        bommed_copy(run / name, tmp_path / "run")
    slo = ["--ttft-ms", "300", "--tpot-ms", "200", "--max-itl-ms", "200", "--json"]
    bommed = runner.invoke(app, ["evidence", "inspect", str(tmp_path / "run"), *slo])
    assert bommed.exit_code == 0, bommed.stderr
    (row,) = json.loads(bommed.stdout)["runs"]  # the records and the summary: one run
    # tests/sources/bench/test_bench_aiperf.py::test_records_fixture: req-1 and req-3 pass,
    # 4 + 1 tokens in the 2 s window = 2.5 tokens/s
    assert (row["concurrency"], row["passed"], row["token_goodput_per_s"]) == (2, 2, 2.5)
    plain = runner.invoke(app, ["evidence", "inspect", str(run), *slo])
    (expected,) = json.loads(plain.stdout.replace(str(run), str(tmp_path / "run")))["runs"]
    assert row.pop("sha256") != expected.pop("sha256")  # the bytes differ, not what they say
    assert row == expected


def test_add_loads_a_dmon_log_saved_with_a_bom(tmp_path: Path) -> None:
    bommed_copy(FIXTURES / "power" / "nvidia_smi_dmon_2gpu.txt", tmp_path / "power")
    db = str(tmp_path / "ev.duckdb")
    result = runner.invoke(app, ["evidence", "add", str(tmp_path / "power"), "--db", db,
                                 "--tz", "UTC"])
    assert result.exit_code == 0, result.stderr
    assert "nvidia_smi_dmon_2gpu.txt: loaded, 6 rows" in result.stdout
    rows = duckdb.connect(db).execute(
        "SELECT device_id, min(sample_utc), sum(power_w), count(power_w)"
        " FROM core__power_samples GROUP BY device_id ORDER BY device_id").fetchall()
    # 11:00:00 to 11:00:02, GPU0 3 x 300 W; GPU1 400 W, '-' (null), 400 W; the cut last
    # line dropped
    assert [(r[0], r[1].astimezone(UTC).hour, r[2], r[3]) for r in rows] == [
        ("0", 11, 900.0, 3), ("1", 11, 800.0, 2)]
