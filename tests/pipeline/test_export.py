"""`scorecard export --parquet DIR`: the store's core tables in the Hive layout
(`<table>/vintage=/source=`), read back with DuckDB to the same rows."""

from __future__ import annotations

from pathlib import Path

import duckdb
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.evidence.add import add_evidence
from pipeline.store import connect

ROOT = Path(__file__).resolve().parents[2]
POWER = ROOT / "tests" / "fixtures" / "power" / "nvidia_smi_nounits.csv"
BENCH = ROOT / "tests" / "fixtures" / "bench"


def test_export_round_trips(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    con = connect(db)
    add_evidence(con, [POWER, BENCH / "vllm_sweep"], tz="UTC")
    stored = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
              for t in ("core__power_samples", "core__bench_runs")}
    con.close()
    assert all(stored.values())  # something to export in both
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["export", "--parquet", str(out), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert f"{out / 'core__power_samples'}: {stored['core__power_samples']} rows" in result.stdout
    con = duckdb.connect(str(db), read_only=True)
    for table in stored:
        files = sorted((out / table).rglob("*.parquet"))
        assert files and all("vintage=evidence" in str(f) and "source=" in str(f)
                             for f in files)
        back = (f"read_parquet('{out / table}/**/*.parquet', hive_partitioning = true)")
        columns = ", ".join(c[0] for c in con.execute(f"DESCRIBE {table}").fetchall())
        # the same rows both ways (as multisets), and each row's partitions its load's
        for a, b in ((f"SELECT {columns} FROM {table}", f"SELECT {columns} FROM {back}"),
                     (f"SELECT {columns} FROM {back}", f"SELECT {columns} FROM {table}")):
            assert con.execute(f"SELECT count(*) FROM ({a} EXCEPT ALL {b})").fetchall() == [(0,)]
        assert con.execute(
            f"SELECT count(*) FROM {back} b JOIN loads l ON l.load_id = b.load_id "
            "WHERE l.vintage = b.vintage AND l.source = b.source").fetchall() == [
            (stored[table],)]
    # again: each table's folder replaced, not added to
    assert CliRunner().invoke(app, ["export", "--parquet", str(out), "--db", str(db)]
                              ).exit_code == 0
    assert con.execute(f"SELECT count(*) FROM read_parquet('{out}/core__power_samples/**/"
                       "*.parquet')").fetchall() == [(stored["core__power_samples"],)]


def test_export_without_a_store_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", "--parquet", str(tmp_path / "out"), "--db",
                                      str(tmp_path / "none.duckdb")])
    assert result.exit_code == 1 and "no store there" in result.stderr


def test_two_logs_by_index_export_as_two_sets_of_gpus(tmp_path: Path) -> None:
    """Two machines' nvidia-smi logs by index both have GPUs 0 and 1: the fleet layout keeps
    them apart (`<log sha256, 12 characters>:<index>`), so the folder reads back as four GPUs
    and the energy is both logs' (it was refused: "duplicated sample for device 0"). A
    device id that is a UUID is written as it is."""
    log = ROOT / "tests" / "fixtures" / "scorecard" / "nvidia_smi_sweep_window.csv"
    text = log.read_text(encoding="utf-8")
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(text, encoding="utf-8")
    # the other machine: every reading 10 W higher (other bytes, the same instants)
    lines = text.splitlines()
    second.write_text("\n".join([lines[0], *(f"{line.rsplit(',', 1)[0]}, "
                                             f"{float(line.rsplit(',', 1)[1]) + 10:.2f}"
                                             for line in lines[1:])]) + "\n",
                      encoding="utf-8")
    db, out = tmp_path / "s.duckdb", tmp_path / "out"
    runner = CliRunner()
    added = runner.invoke(app, ["evidence", "add", str(first), str(second), "--tz", "UTC",
                                "--db", str(db)])
    assert added.exit_code == 0, added.output
    assert runner.invoke(app, ["export", "--parquet", str(out), "--db", str(db)]
                         ).exit_code == 0
    fleet = out / "fleet_power_samples"
    con = duckdb.connect()
    gpus = con.execute(f"SELECT gpu_uuid, count(*) FROM read_parquet('{fleet}/**/*.parquet') "
                       "GROUP BY 1 ORDER BY 1").fetchall()
    con.close()
    # 21 readings per GPU per log (42 rows, GPUs 0 and 1), four GPUs of two logs
    assert len(gpus) == 4 and {n for _, n in gpus} == {21}
    assert {g.split(":")[1] for g, _ in gpus} == {"0", "1"}
    assert len({g.split(":")[0] for g, _ in gpus}) == 2
    read = runner.invoke(app, ["evidence", "add", "--parquet", str(fleet)])
    assert read.exit_code == 0, read.output
    assert "4 GPUs" in read.stdout
