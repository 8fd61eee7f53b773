"""`scorecard evidence inspect`: the DESIGN section 9 JSON contract, run through typer."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from pipeline.cli.evidence import BENCH_FORMATS, POWER_FORMATS, evidence_app

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "bench"
SAMPLES = ROOT / ".." / "shared" / "samples"

RUN_KEYS = {"path", "tool", "concurrency", "request_rate", "offered", "completed", "failed",
            "passed", "window_s", "request_goodput_per_s", "token_goodput_per_s",
            "output_tokens_per_s", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s",
            "aggregate_only"}
SWEEP_KEYS = {"knee_concurrency", "knee_request_rate", "knee_tokens_per_s", "saturated"}

app = typer.Typer()
app.add_typer(evidence_app, name="evidence")
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["evidence", "inspect", *args])
    return result.exit_code, result.stdout, result.stderr


def test_sweep_folder_json_contract() -> None:
    code, out, _ = invoke(str(FIXTURES / "vllm_sweep"), "--ttft-ms", "300", "--tpot-ms", "50",
                          "--json")
    assert code == 0
    report = json.loads(out)  # only JSON on stdout
    assert set(report) >= {"runs", "sweep"}  # extended by configurations, choose
    assert len(report["runs"]) == 3
    for run in report["runs"]:
        assert set(run) >= RUN_KEYS
        assert list(run) == sorted(run)  # sorted keys
    assert set(report["sweep"]) >= SWEEP_KEYS
    # see tests/pipeline/test_goodput.py::test_sweep_fixture_knee: knee 2 at 80 tokens/s
    assert report["sweep"]["knee_concurrency"] == 2
    assert report["sweep"]["knee_tokens_per_s"] == 80.0
    assert report["sweep"]["saturated"] is True


def test_trace_with_window() -> None:
    code, out, _ = invoke(str(FIXTURES / "trace_worked_example.jsonl"), "--ttft-ms", "300",
                          "--max-itl-ms", "100", "--window", "0,2", "--json")
    assert code == 0
    (run,) = json.loads(out)["runs"]
    # the worked example: 1.0 req/s, 2.5 tokens/s, offered 6
    assert (run["request_goodput_per_s"], run["token_goodput_per_s"], run["offered"]) == (
        1.0, 2.5, 6)
    assert json.loads(out)["sweep"] is None


def test_real_vllm_samples_readable_table() -> None:
    folder = SAMPLES / "vllm"
    if not folder.exists():
        pytest.skip("samples absent")
    code, out, _ = invoke(str(folder), "--ttft-ms", "1000", "--tz", "UTC")
    assert code == 0
    assert "goodput_tok/s" in out and "aggregate-only" in out


def test_bad_inputs_exit_1_with_a_message() -> None:
    code, _, err = invoke(str(FIXTURES / "nope.json"), "--json")
    assert code == 1 and "no such file" in err
    code, _, err = invoke(str(FIXTURES / "trace_worked_example.jsonl"), "--window", "2,1")
    assert code == 1 and "--window" in err
    code, _, err = invoke(str(FIXTURES / "trace_worked_example.jsonl"), "--format", "vllm")
    assert code == 1 and "vllm" in err


def test_help_is_fast_to_import() -> None:
    # the command module must not pull polars in at import time
    import subprocess
    import sys
    code = ("import sys; import pipeline.cli.evidence; "
            "print('polars' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "False"


def test_adding_files_loads_no_http_client(tmp_path: Path) -> None:
    # `evidence add FILE` in a whole process: requests (and urllib3 under it) is for
    # `--prometheus` only, whose reader lives apart (pipeline.evidence.prometheus)
    import subprocess
    import sys
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes((FIXTURES / "trace_worked_example.jsonl").read_bytes())
    code = ("import sys\nfrom pipeline.cli import app\n"
            "try:\n    app(['evidence', 'add', sys.argv[1], '--db', sys.argv[2]])\n"
            "except SystemExit as done:\n    print(done.code)\n"
            "print([m for m in ('requests', 'urllib3') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code, str(trace), str(tmp_path / "s.duckdb")],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip().splitlines()[-2:] == ["0", "[]"]


def test_add_is_idempotent(tmp_path: Path) -> None:
    import duckdb

    db = str(tmp_path / "ev.duckdb")
    source = FIXTURES / "vllm_detailed_small.json"
    first = runner.invoke(app, ["evidence", "add", str(source), "--db", db])
    # one run row + five request rows
    assert first.exit_code == 0 and "loaded, 6 rows" in first.stdout
    again = runner.invoke(app, ["evidence", "add", str(source), "--db", db])
    assert again.exit_code == 0 and "unchanged, 6 rows" in again.stdout
    con = duckdb.connect(db)
    assert con.execute("SELECT count(*) FROM core__bench_requests").fetchall() == [(5,)]
    (row,) = con.execute("SELECT bench_tool, concurrency, reported_completed, snapshot_sha256 "
                         "FROM core__bench_runs").fetchall()
    assert row[:3] == ("vllm", 2, 4)
    (raw,) = con.execute("SELECT sha256 FROM raw_snapshots").fetchall()
    assert raw[0] == row[3]


def test_add_bad_file_loads_nothing(tmp_path: Path) -> None:
    import duckdb

    bad = tmp_path / "bad.json"
    bad.write_text('{"duration": 1.0, "completed": 3')  # truncated
    db = str(tmp_path / "ev.duckdb")
    result = runner.invoke(app, ["evidence", "add", str(bad), "--db", db])
    assert result.exit_code == 1 and "bad.json" in result.stderr
    con = duckdb.connect(db)
    tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables"
                                        ).fetchall()}
    if "core__bench_runs" in tables:
        assert con.execute("SELECT count(*) FROM core__bench_runs").fetchall() == [(0,)]


POWER = ROOT / "tests" / "fixtures" / "power"


def test_add_loads_power_logs_beside_benchmarks(tmp_path: Path) -> None:
    import shutil

    import duckdb

    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(FIXTURES / "vllm_detailed_small.json", folder)
    shutil.copy(POWER / "nvidia_smi_nounits.csv", folder)
    (folder / "README.md").write_text("how the run was made\n")
    db = str(tmp_path / "ev.duckdb")
    first = runner.invoke(app, ["evidence", "add", str(folder), "--db", db, "--tz", "Europe/Paris"])
    assert first.exit_code == 0, first.stderr
    # the benchmark: 1 run + 5 requests; the power log: 3 ticks x 2 GPUs; the README skipped
    assert "vllm_detailed_small.json: loaded, 6 rows" in first.stdout
    assert "nvidia_smi_nounits.csv: loaded, 6 rows" in first.stdout
    assert "README.md: skipped (neither a benchmark result nor a power log" in first.stderr
    again = runner.invoke(app, ["evidence", "add", str(folder), "--db", db, "--tz", "Europe/Paris"])
    assert "nvidia_smi_nounits.csv: unchanged, 6 rows" in again.stdout
    con = duckdb.connect(db)
    rows = con.execute("SELECT device_id, min(sample_utc), sum(power_w), any_value(snapshot_sha256)"
                       " FROM core__power_samples GROUP BY device_id ORDER BY device_id"
                       ).fetchall()
    # 11:00 in Paris in November is 10:00 UTC; GPU0 3 x 300 W, GPU1 3 x 400 W
    assert [(r[0], r[1].astimezone(UTC).hour, r[2]) for r in rows] == [
        ("0", 10, 900.0), ("1", 10, 1200.0)]
    (digest,) = con.execute("SELECT sha256 FROM raw_snapshots WHERE source = 'power'"
                            ).fetchone() or (None,)
    assert rows[0][3] == digest


def test_add_names_a_file_that_is_neither(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not evidence\n")
    result = runner.invoke(app, ["evidence", "add", str(notes), "--db",
                                 str(tmp_path / "ev.duckdb")])
    assert result.exit_code == 1
    assert "notes.txt" in result.stderr
    assert "neither a benchmark result" in result.stderr and "nvidia-smi" in result.stderr


def test_an_empty_or_blank_file_is_said_to_be_so(tmp_path: Path) -> None:
    # not "neither a benchmark result ... nor a power log": a file with nothing in it
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "blank.csv").write_bytes(b"\n  \n")
    db = str(tmp_path / "ev.duckdb")
    for name, said in (("empty.csv", "the file is empty"),
                       ("blank.csv", "the file holds only whitespace")):
        for command in (["add", "--db", db], ["inspect"]):
            result = runner.invoke(app, ["evidence", *command, str(tmp_path / name)])
            assert result.exit_code == 1
            assert result.stderr == (f"error: evidence: {tmp_path / name}: (file): {said}: no "
                                     "benchmark result or power log to read\n")
    # in a folder, skipped with the same reason beside the files that are evidence
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "empty.csv").write_bytes(b"")
    (folder / "vllm.json").write_bytes((FIXTURES / "vllm_detailed_small.json").read_bytes())
    added = runner.invoke(app, ["evidence", "add", str(folder), "--db", db])
    assert added.exit_code == 0, added.output
    assert f"{folder / 'empty.csv'}: skipped (the file is empty)\n" in added.stderr

def test_add_power_log_without_timezone_loads_nothing(tmp_path: Path) -> None:
    import duckdb

    db = str(tmp_path / "ev.duckdb")
    result = runner.invoke(app, ["evidence", "add", str(POWER / "nvidia_smi_nounits.csv"),
                                 "--db", db])
    assert result.exit_code == 1
    assert "nvidia_smi_nounits.csv" in result.stderr and "timezone" in result.stderr
    con = duckdb.connect(db)
    tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables"
                                        ).fetchall()}
    if "core__power_samples" in tables:
        assert con.execute("SELECT count(*) FROM core__power_samples").fetchall() == [(0,)]


def test_power_at_the_operating_point() -> None:
    # The energy example: two GPUs at 1 Hz, t = 0..4 s, GPU0 300 500 500 500 300 W,
    # GPU1 200 400 400 400 200 W; the trace's window is [1, 3] s (first sent 11:00:01, last
    # done 11:00:03 UTC): 1,000 J + 800 J = 1,800 J. Three requests of 300 tokens pass
    # TTFT <= 300 ms: 900 goodput tokens in the window -> 2.0 J/token.
    folder = FIXTURES / "energy_run"
    code, out, _ = invoke(str(folder), "--ttft-ms", "300", "--power", str(folder), "--tz", "UTC",
                          "--json")
    assert code == 0
    report = json.loads(out)
    (run,) = report["runs"]
    assert run["token_goodput_per_s"] == pytest.approx(450.0)  # 900 tokens / 2 s
    assert report["power"]["energy_j"] == pytest.approx(1800.0)
    assert report["power"]["energy_j_per_goodput_token"] == pytest.approx(2.0)
    # without --power: the contract keys runs and sweep, and the configurations, no power
    code, out, _ = invoke(str(folder), "--ttft-ms", "300", "--json")
    assert set(json.loads(out)) == {"runs", "sweep", "configurations", "choose"}


def test_power_needs_a_utc_window() -> None:
    # vLLM's naive `date` without --tz: no UTC window, so no energy, and the reason says so
    code, out, _ = invoke(str(FIXTURES / "vllm_detailed_small.json"), "--ttft-ms", "300",
                          "--power", str(FIXTURES / "energy_run" / "power.csv"), "--json")
    assert code == 0
    power = json.loads(out)["power"]
    assert power["energy_j_per_goodput_token"] is None and "--tz" in power["notes"][0]


def test_add_to_a_file_that_is_not_a_database_exits_1(tmp_path: Path) -> None:
    db = tmp_path / "notes.duckdb"
    db.write_text("not a database\n")
    result = runner.invoke(app, ["evidence", "add", str(FIXTURES / "vllm_detailed_small.json"),
                                 "--db", str(db)])
    # DuckDB refuses the file: exit 1 with one line naming it, not an uncaught duckdb.Error
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("error: ") and "notes.duckdb" in result.stderr


def test_format_choices_are_the_registries_and_listed_in_help() -> None:
    from sources.bench.registry import FORMATS as BENCH
    from sources.power.registry import FORMATS as POWER

    # written out in evidence_cli (the registries import polars): they must not drift
    assert sorted(BENCH_FORMATS) == sorted(BENCH)
    assert list(POWER_FORMATS) == list(POWER)
    from pipeline.cli import app as scorecard  # the real CLI's help (plain, as docs/cli.md)

    for command in ("inspect", "add"):
        result = runner.invoke(scorecard, ["evidence", command, "-h"])
        assert result.exit_code == 0
        flat = "".join(result.stdout.split())  # rich may wrap the choices
        # enums: the choices are the option's metavar, `--format <vllm|guidellm|...>`
        assert "--format<" + "|".join(BENCH_FORMATS) + ">" in flat, command
        assert "--power-format<" + "|".join(POWER_FORMATS) + ">" in flat, command
        assert "--db<path>" in flat, command
    command_group = typer.main.get_command(app).commands["evidence"]  # type: ignore[attr-defined]
    helps = {p.name: p.help for p in command_group.commands["inspect"].params}
    assert "--power" in helps["tz"]


def test_a_format_outside_the_choices_is_refused_naming_them(tmp_path: Path) -> None:
    for command in ("inspect", "add"):
        result = runner.invoke(app, ["evidence", command, str(FIXTURES), "--format", "vlm",
                                     "--db", str(tmp_path / "s.duckdb")])
        # click's usage error: exit 2, the option and the allowed values named, nothing read
        assert result.exit_code == 2, command
        assert "'--format'" in result.stderr and "'vllm-metrics'" in result.stderr, command
    assert not (tmp_path / "s.duckdb").exists()


def test_inspect_a_power_log_alone_prints_its_summary() -> None:
    # tests/fixtures/power/nvidia_smi_2gpu_gap_na_truncated.csv: GPU 0 at 300 W and GPU 1 at
    # 400 W each second 11:00:00-11:00:10 UTC, GPU 0 missing 05-07 (a 4 s gap from 04 to 08),
    # one [N/A] and a truncated last line (20 rows, 18 readings). Energy over the 10 s span by
    # trapezoid: 300 x 10 + 400 x 10 = 7,000 J, mean 700 W; the peak instant sums 700 W.
    log = ROOT / "tests" / "fixtures" / "power" / "nvidia_smi_2gpu_gap_na_truncated.csv"
    code, out, _ = invoke(str(log), "--tz", "UTC", "--json")
    assert code == 0
    p = json.loads(out)["power_log"]
    assert p["devices"] == ["0", "1"] and p["samples"] == 18
    assert p["span_s"] == pytest.approx(10.0)
    assert p["energy_j"] == pytest.approx(7000.0)
    assert p["mean_power_w"] == pytest.approx(700.0)
    assert p["peak_power_w"] == pytest.approx(700.0)
    assert [(g["device_id"], g["duration_s"]) for g in p["gaps"]] == [("0", 4.0)]
    code, out, _ = invoke(str(log), "--tz", "UTC")
    assert code == 0 and "mean 700.0 W, peak 700.0 W, energy 7,000.0 J" in out


def test_add_says_what_the_energy_will_skip_as_inspect_does(tmp_path: Path) -> None:
    # the log above: 20 rows loaded, 2 of them without power (one [N/A], the truncated last
    # line), kept in the store with their note; `add` says so as `inspect` does, and again
    # when the file is unchanged; a log with a value everywhere gets no such note
    log = ROOT / "tests" / "fixtures" / "power" / "nvidia_smi_2gpu_gap_na_truncated.csv"
    said = ("2 sample(s) without power or energy skipped (1 x power.draw was [N/A]; 1 x "
            "truncated last line: power dropped)")
    _, out, _ = invoke(str(log), "--tz", "UTC")
    assert said in out
    db = str(tmp_path / "ev.duckdb")
    for status in ("loaded", "unchanged"):
        added = runner.invoke(app, ["evidence", "add", str(log), "--tz", "UTC", "--db", db])
        assert added.exit_code == 0, added.output
        line, note = added.stdout.splitlines()
        assert line.startswith(f"{log}: {status}, 20 rows")
        assert note == (f"note: {log}: {said} when its energy is computed (kept in the store "
                        "with their note)")
    whole = runner.invoke(app, ["evidence", "add", str(POWER / "nvidia_smi_nounits.csv"),
                                "--tz", "UTC", "--db", db])
    assert whole.exit_code == 0 and "note:" not in whole.stdout

def test_amd_smi_start_end_pair_from_the_command_line() -> None:
    # tests/fixtures/bench/energy_run/trace.jsonl: window [1, 3] s (11:00:01-11:00:03 UTC),
    # 900 goodput tokens under TTFT <= 300 ms (test_power_at_the_operating_point). The amd-smi
    # snapshots: GPU0 4000 - 1000 = 3000 J, GPU1 6000 - 2000 = 4000 J: 7,000 J placed at the
    # window's edges -> 7000 / 900 = 7.778 J per goodput token
    trace = FIXTURES / "energy_run" / "trace.jsonl"
    power = ROOT / "tests" / "fixtures" / "power"
    code, out, err = invoke(str(trace), "--ttft-ms", "300", "--tz", "UTC", "--json",
                            "--power-start", str(power / "amdsmi_energy_start.csv"),
                            "--power-end", str(power / "amdsmi_energy_end.csv"))
    assert code == 0, err
    energy = json.loads(out)["power"]
    assert energy["energy_j"] == pytest.approx(7000.0)
    assert energy["energy_j_per_goodput_token"] == pytest.approx(7000.0 / 900)
    code, _, err = invoke(str(trace), "--power-start", str(power / "amdsmi_energy_start.csv"))
    assert code == 1 and "--power-start and --power-end together" in err


VLLM_METRICS = ROOT / ".." / "shared" / "samples" / "vllm_metrics"


@pytest.mark.skipif(not VLLM_METRICS.exists(), reason="../shared/samples absent")
def test_raw_metrics_text_takes_its_scrape_time_from_the_command_line() -> None:
    # er0080's vLLM 0.25.1 /metrics scrape, as curl wrote it: no '# scraped_at:' line
    loaded = VLLM_METRICS / "er0080_metrics_vllm_0_25_1_loaded.txt"
    code, _, err = invoke(str(loaded))
    assert code == 1 and "no scrape time" in err
    code, out, err = invoke(str(loaded), "--scraped-at", "2026-08-18T02:13:33Z", "--json")
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    # one scrape: the window runs from the counters' _created to the time given
    assert run["ended_at_utc"] == "2026-08-18T02:13:33+00:00"
    assert run["completed"] == 600
    assert run["token_goodput_per_s"] is None  # bucket estimates prove no share
    code, out, _ = invoke(str(loaded), "--scraped-at",
                          "er0080_metrics_vllm_0_25_1_loaded.txt=1787019213", "--json")
    assert code == 0 and json.loads(out)["runs"][0]["ended_at_utc"].startswith("2026-08-18")


def test_a_truncated_json_file_is_named_with_where_it_breaks(tmp_path: Path) -> None:
    # '{"date": "2026", "completed": 4, "ttfts": [0.1, ' stops after 49 characters: no
    # format recognises it, and the message says where the JSON breaks, not "neither a
    # benchmark result nor a power log"
    path = tmp_path / "bench.json"
    path.write_text('{"date": "2026", "completed": 4, "ttfts": [0.1, ', encoding="utf-8")
    result = runner.invoke(app, ["evidence", "inspect", str(path)])
    assert result.exit_code == 1
    assert f"{path}: line 1 column 49: invalid JSON" in result.stderr
