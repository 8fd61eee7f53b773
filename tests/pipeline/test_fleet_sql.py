"""The fleet energy query defined once (`pipeline.evidence.power.fleet_sql`): over a generated
fleet (three GPUs, three days, a gap, a log starting inside the window, a window across
midnight, a counter reset) its DuckDB text gives `fleet_energy`'s figures, the Spark SQL
rendered from it gives the same joules on pyspark in local mode (skipped without Java), the
Trino text parses as Trino, and `evidence sql` / `evidence add --fleet-result` take a result
back, refusing one of another window."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.evidence.power.energy import Window
from pipeline.evidence.power.fleet import fleet_energy
from pipeline.evidence.power.fleet_sql import RESULT_COLUMNS, fleet_result, query_text

WINDOW = Window(datetime(2026, 11, 20, 22, tzinfo=UTC), datetime(2026, 11, 21, 2, tzinfo=UTC))

# Three GPUs read every 60 s from 11-20 00:00 to 11-22 23:59 (3 days), at constant power:
# A 100 W; B 200 W, silent from 11-20 23:00 to 23:30 (a 1,860 s interval, 23:00 .. 23:31, is
# a gap: more than 3 x 60 s; integrated at its 200 W); C 300 W, its log starting at 22:01,
# 60 s into the window (an edge within 3 x 60 s: extended at 300 W). The counter (energy_j)
# counts watts x seconds since the GPU's first reading; C's drops to 0 at midnight (a reset,
# integrated from its power).
# Over the window 22:00 .. 02:00 (14,400 s, across midnight): (100 + 200 + 300) W x 14,400 s
# = 8,640,000 J, 600 W on average; idle power, each GPU's mean power outside the window:
# 100 + 200 + 300 = 600 W. Samples in the window: A 241 (22:00 .. 02:00 inclusive), B 241 -
# 30 (23:01 .. 23:30 silent) = 211, C 240 (22:01 .. 02:00): 692, fewest 211.
EXPECTED_J = 8_640_000.0


def _fleet(folder: Path, counter: bool) -> Path:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    energy = (", CASE WHEN g = 'C' AND m >= 1440 THEN w * (m - 1440) * 60.0 "
              "ELSE w * (m - first_m) * 60.0 END AS energy_j" if counter else "")
    con.execute(f"""COPY (
      SELECT gpu_uuid, timestamp_utc, power_w{energy},
             strftime(timestamp_utc, '%Y-%m-%d') AS day
      FROM (SELECT g AS gpu_uuid, g, m, w, first_m, w AS power_w,
                   TIMESTAMPTZ '2026-11-20 00:00:00+00' + to_seconds(m * 60) AS timestamp_utc
            FROM (VALUES ('A', 100.0::DOUBLE, 0), ('B', 200.0, 0), ('C', 300.0, 1321))
                 gpus(g, w, first_m), range(3 * 1440) minutes(m)
            WHERE m >= first_m AND NOT (g = 'B' AND m BETWEEN 1381 AND 1410)))
      TO '{folder}' (FORMAT parquet, PARTITION_BY (day))""")
    return folder


def _run_duckdb(text: str) -> dict[str, Any]:
    con = duckdb.connect()
    cursor = con.execute(text.split("\n", 1)[1])
    names = [c[0] for c in cursor.description]
    rows = cursor.fetchall()
    assert len(rows) == 1
    return dict(zip(names, rows[0], strict=True))


@pytest.mark.parametrize("counter", [False, True])
def test_the_duckdb_text_gives_fleet_energys_figures(tmp_path: Path, counter: bool) -> None:
    folder = _fleet(tmp_path / "fleet", counter)
    method = "counter" if counter else "trapezoid"
    a, b = WINDOW.start_utc.timestamp(), WINDOW.end_utc.timestamp()
    row = _run_duckdb(query_text("duckdb", str(folder), a, b, method))
    assert tuple(row) == RESULT_COLUMNS
    ours, _ = fleet_energy(folder, WINDOW)
    assert ours.method == method
    assert row["energy_j"] == pytest.approx(EXPECTED_J, rel=1e-12)
    assert row["energy_j"] == pytest.approx(ours.energy_j, rel=1e-12)
    assert row["idle_power_w"] == pytest.approx(600.0, rel=1e-12)
    assert row["idle_power_w"] == pytest.approx(ours.idle_power_w, rel=1e-12)
    assert (row["gpus"], row["gpus_not_covered"], row["gaps"], row["gap_s"]) == (3, 0, 1, 1860.0)
    assert row["edge_s"] == 60.0
    assert (row["samples_in_window"], row["fewest_samples_in_window"]) == (692, 211)
    assert row["samples_in_window"] == ours.samples_in_window
    assert row["resets"] == (1 if counter else 0) == len(ours.resets)


def test_a_log_too_short_for_the_window_is_counted_not_covered(tmp_path: Path) -> None:
    """C's log starts at 22:01: a window from 21:00 leads it by 3,660 s (> 3 x 60 s)."""
    folder = _fleet(tmp_path / "fleet", False)
    a = datetime(2026, 11, 20, 21, tzinfo=UTC).timestamp()
    row = _run_duckdb(query_text("duckdb", str(folder), a, a + 3600, "trapezoid"))
    assert row["gpus_not_covered"] == 1


def _spark() -> Any:
    if shutil.which("java") is None:
        pytest.skip("no Java runtime (apt-get install default-jre-headless; .ci/run does)")
    pyspark = pytest.importorskip("pyspark.sql", reason="pyspark (a dev dependency) missing")
    return (pyspark.SparkSession.builder.master("local[2]").appName("scorecard-test")
            .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4").getOrCreate())


def test_the_spark_text_gives_the_same_joules_on_pyspark(tmp_path: Path) -> None:
    """The rendered Spark SQL on a real distributed engine (local mode): the same figures as
    DuckDB's, for both methods."""
    spark = _spark()
    try:
        for counter in (False, True):
            folder = _fleet(tmp_path / f"fleet-{counter}", counter)
            method = "counter" if counter else "trapezoid"
            a, b = WINDOW.start_utc.timestamp(), WINDOW.end_utc.timestamp()
            ours = _run_duckdb(query_text("duckdb", str(folder), a, b, method))
            text = query_text("spark", str(folder), a, b, method)
            assert "unix_micros" in text.lower() and "read_parquet" not in text
            (row,) = spark.sql(text).collect()  # the text as printed, its header comment too
            theirs = row.asDict()
            # fed back as docs/energy.md shows: the row as JSON, with the query's text
            (tmp_path / "fleet.sql").write_text(text)
            (tmp_path / "result.json").write_text(json.dumps(theirs))
            back = fleet_result(tmp_path / "result.json", tmp_path / "fleet.sql")
            assert back.energy_j == pytest.approx(EXPECTED_J, rel=1e-12)
            assert theirs["energy_j"] == pytest.approx(EXPECTED_J, rel=1e-12)
            for key in RESULT_COLUMNS:
                if isinstance(ours[key], float):
                    assert theirs[key] == pytest.approx(ours[key], rel=1e-12), key
                else:
                    assert theirs[key] == ours[key], key
    finally:
        spark.stop()


@pytest.mark.parametrize("method", ["trapezoid", "counter"])
def test_the_trino_text_parses_as_trino(method: str) -> None:
    a, b = WINDOW.start_utc.timestamp(), WINDOW.end_utc.timestamp()
    text = query_text("trino", "hive.telemetry.fleet_power", a, b, method)
    tree = sqlglot.parse_one(text.split("\n", 1)[1], read="trino")
    assert isinstance(tree, sqlglot.exp.Select)
    upper = text.upper()
    assert "TO_UNIXTIME(" in upper and "EPOCH_US" not in upper
    assert ("APPROX_PERCENTILE(" in upper) == (method == "counter")
    assert "hive.telemetry.fleet_power" in text
    with pytest.raises(ValueError, match="Trino table name"):
        query_text("trino", "x; DROP TABLE y", a, b, method)


def test_evidence_sql_then_the_result_back(tmp_path: Path) -> None:
    folder = _fleet(tmp_path / "fleet", False)
    runner = CliRunner()
    printed = runner.invoke(app, ["evidence", "sql", str(folder), "--window-start",
                                  "2026-11-20T22:00:00+00:00", "--window-end",
                                  "2026-11-21T02:00:00+00:00", "--dialect", "duckdb"])
    assert printed.exit_code == 0, printed.output
    query = tmp_path / "query.sql"
    query.write_text(printed.stdout)
    duckdb.connect().execute(f"COPY ({printed.stdout.split(chr(10), 1)[1]}) "
                             f"TO '{tmp_path / 'result.csv'}' (HEADER)")
    back = runner.invoke(app, ["evidence", "add", "--fleet-result", str(tmp_path / "result.csv"),
                               "--fleet-query", str(query), "--json"])
    assert back.exit_code == 0, back.output
    report = json.loads(back.stdout)
    assert report["energy_j"] == pytest.approx(EXPECTED_J, rel=1e-12)
    assert report["average_power_w"] == pytest.approx(600.0, rel=1e-12)  # 8,640,000 / 14,400
    assert report["grade"] == "production" and report["boundary"] == "gpu_board"
    import hashlib

    digest = hashlib.sha256(query.read_bytes()).hexdigest()
    assert report["power"].startswith("power = { watts = 600.0")
    assert f"sha256:{digest}" in report["power"]
    # a result of another window is refused, named
    other = runner.invoke(app, ["evidence", "sql", str(folder), "--window-start",
                                "2026-11-20T22:00:00+00:00", "--window-end",
                                "2026-11-21T03:00:00+00:00"])
    (tmp_path / "other.sql").write_text(other.stdout)
    refused = runner.invoke(app, ["evidence", "add", "--fleet-result",
                                  str(tmp_path / "result.csv"), "--fleet-query",
                                  str(tmp_path / "other.sql")])
    assert refused.exit_code == 1
    assert "window_end_utc" in refused.output and "another query" in refused.output


def test_evidence_sql_refuses_a_naive_window(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["evidence", "sql", str(tmp_path), "--window-start",
                                      "2026-11-20T22:00:00", "--window-end",
                                      "2026-11-21T02:00:00"])
    assert result.exit_code == 1 and "offset" in result.output



def test_export_then_add_gives_the_same_energy(tmp_path: Path) -> None:
    """The round trip: an nvidia-smi log added to a store, `export --parquet`, then `evidence
    add --parquet` of the exported fleet folder: the same energy as the log's own, over the
    window. Two GPUs at 1 Hz for 10 s (11:00:00 .. 11:00:10 UTC): A 100 + 10 t W, B 200 W
    silent from t = 4 to 8. Over [2.5 s, 7.5 s]: A 100 x 5 + 5 x (7.5^2 - 2.5^2) = 750 J,
    B 200 W x 5 s = 1,000 J: 1,750 J."""
    from pipeline.evidence.power.logs import power_from_evidence

    readings = [("A", s, 100.0 + 10 * s) for s in range(11)] + [
        ("B", s, 200.0) for s in (0, 1, 2, 3, 4, 8, 9, 10)]
    log = tmp_path / "smi.csv"
    log.write_text("timestamp, uuid, power.draw [W]\n" + "".join(
        f"2026/11/20 11:00:{s:02d}.000, {gpu}, {watts:.2f} W\n"
        for s, gpu, watts in sorted((s, g, w) for g, s, w in readings)))
    db, out = tmp_path / "store.duckdb", tmp_path / "out"
    runner = CliRunner()
    added = runner.invoke(app, ["evidence", "add", str(log), "--tz", "UTC", "--db", str(db)])
    assert added.exit_code == 0, added.output
    exported = runner.invoke(app, ["export", "--parquet", str(out), "--db", str(db)])
    assert exported.exit_code == 0, exported.output
    assert f"{out / 'fleet_power_samples'}: 19 rows" in exported.output
    assert (out / "fleet_power_samples" / "day=2026-11-20").is_dir()
    start, end = "2026-11-20T11:00:02.500000+00:00", "2026-11-20T11:00:07.500000+00:00"
    back = runner.invoke(app, ["evidence", "add", "--parquet", str(out / "fleet_power_samples"),
                               "--window-start", start, "--window-end", end, "--json"])
    assert back.exit_code == 0, back.output
    fleet = json.loads(back.stdout)
    own = power_from_evidence(log, datetime.fromisoformat(start), datetime.fromisoformat(end),
                              "UTC").energy
    assert fleet["energy_j"] == pytest.approx(1750.0, rel=1e-12)
    assert fleet["energy_j"] == pytest.approx(own.energy_j, rel=1e-12)
    assert fleet["idle_power_w"] == pytest.approx(own.idle_power_w, rel=1e-12)
    assert fleet["gpus"] == ["A", "B"]


def test_a_result_with_nan_or_another_layout_is_refused(tmp_path: Path) -> None:
    """A result that is not the query's one row is an error naming the file and key, and
    nothing is printed but the error."""
    a, b = WINDOW.start_utc.timestamp(), WINDOW.end_utc.timestamp()
    query = tmp_path / "q.sql"
    query.write_text(query_text("duckdb", "fleet", a, b, "trapezoid"))
    runner = CliRunner()
    (tmp_path / "nan.json").write_text('{"energy_j": NaN}')
    nan = runner.invoke(app, ["evidence", "add", "--fleet-result", str(tmp_path / "nan.json"),
                              "--fleet-query", str(query)])
    assert nan.exit_code == 1 and "NaN is not a number" in nan.output
    (tmp_path / "short.csv").write_text("energy_j\n5\n")
    short = runner.invoke(app, ["evidence", "add", "--fleet-result", str(tmp_path / "short.csv"),
                                "--fleet-query", str(query)])
    assert short.exit_code == 1 and "no column 'window_start_utc'" in short.output
    # a missing file is named as the other commands name it, not as Python's errno text
    for result, text, absent in ((tmp_path / "none.json", query, tmp_path / "none.json"),
                                 (tmp_path / "short.csv", tmp_path / "none.sql",
                                  tmp_path / "none.sql")):
        gone = runner.invoke(app, ["evidence", "add", "--fleet-result", str(result),
                                   "--fleet-query", str(text)])
        assert gone.exit_code == 1 and gone.stderr == f"error: {absent}: no such file\n"
