"""The sequences a user walks, through the CLI on one store: each later command sees what the
earlier ones left (a command alone passing says nothing about the order users run them in)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from proposals import measured
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

import pipeline.evidence.bench as bench
from pipeline.cli import app
from pipeline.store import power_samples
from schemas.fields import is_vintage

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "fixtures" / "bench" / "vllm_detailed_small.json"
runner = CliRunner()


def scorecard(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def process(*args: str) -> tuple[int, str, str]:
    """`scorecard ARGS` in a process of its own, as a user runs it: its exit code is the
    CLI's last word on an error that escapes a command (CliRunner would report 1 for any)."""
    done = subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True,
                          text=True, timeout=120, check=False, cwd=ROOT)
    return done.returncode, done.stdout, done.stderr


def test_evidence_add_then_run_and_explain_take_the_market_month(tmp_path: Path) -> None:
    """`evidence add` records its load under the vintage `evidence` (no month): the next plain
    `run` and `explain` must still take the latest market month, the bundled data's 2026-10
    (sources/reference/README.md), not `evidence` (they exited 3 before)."""
    db = str(tmp_path / "s.duckdb")
    code, _, err = scorecard("evidence", "add", str(BENCH), "--db", db)
    assert code == 0, err
    code, out, err = scorecard("run", "--db", db, "--json")
    assert code == 0, err
    assert json.loads(out)["vintage"] == "2026-10"
    code, out, err = scorecard("explain", "onprem-fr-h200-fp8", "cpm_eur_per_mtok", "--db", db,
                               "--json")
    assert code == 0, err
    assert json.loads(out)["candidate"] == "onprem-fr-h200-fp8"


@pytest.mark.parametrize("text", ["2026-11\n", "\uff12\uff10\uff12\uff16-11", "2026-13",
                                  "2026-1", " 2026-11"])
def test_a_vintage_is_a_month_in_ascii_digits_and_nothing_else(text: str) -> None:
    assert not is_vintage(text)


def test_a_bogus_vintage_is_refused_before_anything_runs(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    code, _, err = scorecard("run", "--db", str(db), "--vintage", "\uff12\uff10\uff12\uff16-11")
    assert code == 1
    assert "is not a month YYYY-MM" in err
    assert not db.exists()  # refused before the store is opened
    assert is_vintage("2026-11")


def _damaged(path: Path) -> Path:
    """A real store with its header overwritten: DuckDB's own 'not a valid database file'."""
    scorecard("run", "--db", str(path), "--json")
    with path.open("r+b") as f:
        f.write(b"\0" * 4096)
    return path


STORES = {
    "empty file": lambda p: (p.write_bytes(b""), p)[1],
    "text file": lambda p: (p.write_text("vintage,zone\n2026-11,FR\n"), p)[1],
    "damaged store": _damaged,
}


@pytest.mark.parametrize("kind", list(STORES))
@pytest.mark.parametrize("command", [("run", "--json"), ("evidence", "add", str(BENCH))])
def test_a_file_that_is_no_store_is_one_line_naming_it_and_exit_1(
        kind: str, command: tuple[str, ...], tmp_path: Path) -> None:
    db = STORES[kind](tmp_path / "s.duckdb")
    before = db.read_bytes()
    code, _, err = process(*command, "--db", str(db))
    assert code == 1, err  # was 3, "unexpected error (a bug)"
    assert err.startswith(f"error: {db}: not a scorecard store") and err.count("\n") == 1
    assert db.read_bytes() == before  # left as it was


def test_a_store_whose_folder_is_a_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    code, _, err = process("run", "--json", "--db", str(tmp_path / "f" / "s.duckdb"))
    assert code == 1 and err.startswith(f"error: {tmp_path / 'f' / 's.duckdb'}: cannot make "
                                        "its folder")


def test_a_proposal_that_is_no_regular_file_or_too_big_is_refused_before_it_is_read(
        tmp_path: Path) -> None:
    """`scorecard run /dev/zero` read without end before; a device, a pipe or a folder is
    refused up front, a file past MAX_PROPOSAL_BYTES (64 MiB) after that many bytes."""
    import os

    from pipeline.workspace import MAX_PROPOSAL_BYTES
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (MAX_PROPOSAL_BYTES + 1))
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b'name = "x"\n\xff\xfe')
    expected = {"/dev/zero": "not a regular file", str(fifo): "not a regular file",
                str(tmp_path): "not a regular file",
                str(big): f"larger than {MAX_PROPOSAL_BYTES:,} bytes",
                str(binary): "not UTF-8 text (byte 11)"}
    for path, message in expected.items():
        code, _, err = scorecard("run", path, "--db", str(tmp_path / "s.duckdb"), "--json")
        assert code == 1 and f"{path}: {message}" in err, (path, err)


# --- the sequences the README, docs/monthly.md, docs/evidence.md and docs/energy.md show ----

EXAMPLE_ID = "onprem-fr-h200-fp8"  # a TCO candidate in FR: its electricity is the wholesale price
EMBER = ROOT / "tests" / "fixtures" / "ember" / "wholesale_monthly_2026-09_to_11.csv"
EMBER_PATH = ("/public-downloads/price/outputs/"
              "european_wholesale_electricity_price_data_monthly.csv")


def ok(*args: str) -> str:
    """`scorecard ARGS` in this process, which must succeed: its stdout."""
    code, out, err = scorecard(*args)
    assert code == 0, (args, out, err)
    return out


def run_json(*args: str) -> dict[str, Any]:
    return json.loads(ok("run", *args, "--json"))


def candidate_of(document: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in document["candidates"] if c["id"] == cid)


def test_readme_tour_init_run_explain_sources_on_a_fresh_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README's tour from a fresh folder: `init` writes the proposal the next `run` computes;
    that run publishes into scorecard-out/<slug>/2026-10/ and the store; `explain` answers
    with the run's own figure; `sources` lists the bundled load the run made."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCORECARD_DB", raising=False)  # ./scorecard.duckdb, as in the tour
    ok("init", "my-proposal")
    proposal = tmp_path / "my-proposal" / "proposal.toml"
    assert proposal.is_file() and (tmp_path / "my-proposal" / "proposal.schema.json").is_file()
    code, out, err = scorecard("run", str(proposal))
    assert code == 0, err
    assert "new store at" in err and "bundled reference data only, vintage 2026-10" in err
    assert "published" in out and "not published" not in out
    # init names the copy for its folder: its runs publish apart from the bundled example's
    folder = tmp_path / "scorecard-out" / "my-proposal-from-the-example" / "2026-10"
    written = json.loads((folder / "scorecard.json").read_text())
    assert {p.name for p in folder.iterdir()} >= {
        "scorecard.html", "scorecard.json", "scorecard.xlsx", "scorecard.csv",
        "scorecard.parquet"}
    assert written["vintage"] == "2026-10"
    store_file = tmp_path / "scorecard.duckdb"
    assert store_file.is_file()
    con = duckdb.connect(str(store_file), read_only=True)
    assert con.execute("SELECT vintage, proposal FROM out__scorecard").fetchall() == [
        ("2026-10", written["proposal"])]
    con.close()
    # `run --json` of the bundled example: the same proposal, the same figures
    again = run_json()
    assert (candidate_of(again, EXAMPLE_ID)["cpm_eur_per_mtok"]
            == pytest.approx(candidate_of(written, EXAMPLE_ID)["cpm_eur_per_mtok"]))
    for args in ((), (str(proposal),)):  # the bundled example, and the proposal `init` wrote
        chain = json.loads(ok("explain", EXAMPLE_ID, "cpm_eur_per_mtok", *args, "--json"))
        assert chain["candidate"] == EXAMPLE_ID
        assert chain["value"] == pytest.approx(
            candidate_of(written, EXAMPLE_ID)["cpm_eur_per_mtok"])
        # the example plans 48 months: the chain is its first month's
        assert chain["horizon"]["first_month_value"] == pytest.approx(
            candidate_of(written, EXAMPLE_ID)["detail"]["first_month_cpm_eur_per_mtok"])
    lines = ok("sources").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("bundled: "))
    assert "(vintage 2026-10, " in lines[at + 3]
    assert lines[lines.index("ember: provides core__electricity_prices, core__grid_intensity")
                 + 3] == "  last good load: never"


def test_a_new_store_names_the_bundled_month_not_the_month_asked(tmp_path: Path) -> None:
    """`run --vintage 2026-11` on a new store reads the bundled data, whose month is
    2026-10 (the notice said the month asked, as if the store held data of it)."""
    code, _, err = scorecard("run", "--db", str(tmp_path / "s.duckdb"), "--vintage",
                             "2026-11", "--json")
    assert code == 0, err
    assert (f"new store at {tmp_path / 's.duckdb'}: bundled reference data only, vintage "
            "2026-10 (") in err


def serve_ember(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch,
                body: bytes | None = None) -> None:
    """Ember's public wholesale CSV (FR 2026-10 at 70.0, 2026-11 at 65.0 EUR/MWh; DE 90.0,
    95.5) from the local server; without EMBER_API_KEY only this file is fetched."""
    httpserver.clear()
    httpserver.expect_request(EMBER_PATH).respond_with_data(
        EMBER.read_bytes() if body is None else body)
    monkeypatch.setenv("SCORECARD_EMBER_BASE_URL", httpserver.url_for("").rstrip("/"))
    monkeypatch.delenv("EMBER_API_KEY", raising=False)


def test_monthly_rerun_ingest_run_diff_explain_sources(
        tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/monthly.md's commands with SCORECARD_DB set once: last month published, this
    month's ingest from the (local) source, run --publish, diff against the stored baseline,
    explain and sources; then the failure path: a broken answer keeps the month's rows."""
    monkeypatch.setenv("SCORECARD_DB", str(tmp_path / "store" / "scorecard.duckdb"))
    monkeypatch.chdir(tmp_path)
    proposal = tmp_path / "proposal.toml"
    ok("init", str(tmp_path))
    reports = tmp_path / "reports"
    # last month, published: the baseline next month's diff must find in the store
    ok("run", str(proposal), "--vintage", "2026-10", "--out", str(reports / "2026-10"),
       "--publish")
    october = json.loads((reports / "2026-10" / "scorecard.json").read_text())

    serve_ember(httpserver, monkeypatch)
    code, _, err = scorecard("ingest", "ember", "--vintage", "2026-11")
    assert code == 0, err
    assert "ember: loaded, 6 rows" in err
    lines = ok("sources").splitlines()
    at = lines.index("ember: provides core__electricity_prices, core__grid_intensity")
    assert lines[at + 3].startswith("  last good load: 20")
    assert lines[at + 3].endswith("(vintage 2026-11, 6 rows)")
    # the same bytes again change nothing (a rerun after a failure is safe)
    code, _, err = scorecard("ingest", "ember", "--vintage", "2026-11")
    assert code == 0 and "ember: unchanged" in err, err

    out = ok("run", str(proposal), "--vintage", "2026-11", "--out", str(reports / "2026-11"),
             "--publish")
    assert "published" in out
    november = json.loads((reports / "2026-11" / "scorecard.json").read_text())
    assert november["vintage"] == "2026-11"
    # the report's change section compares with the month published before it
    assert "No earlier vintage was compared" in (
        reports / "2026-10" / "scorecard.html").read_text()
    assert "vintage 2026-10 to 2026-11" in (reports / "2026-11" / "scorecard.html").read_text()
    # the FR wholesale price moved (2026-11's Ember row), so the FR node's electricity did
    before, after = (candidate_of(d, EXAMPLE_ID)["electricity_eur_per_mtok"]
                     for d in (october, november))
    assert after != pytest.approx(before)
    # a plain `run` (no --vintage) now takes the month ingested, not the bundled 2026-10
    assert run_json(str(proposal))["vintage"] == "2026-11"

    html = reports / "2026-11" / "diff.html"
    text = ok("diff", "2026-10", "2026-11", str(proposal), "--html", str(html))
    assert "2026-10 -> 2026-11" in text and html.stat().st_size > 0
    diff = json.loads(ok("diff", "2026-10", "2026-11", str(proposal), "--json"))
    assert diff["baseline"] != "recomputed"  # last month's stored run, found in the store
    assert diff["baseline_run"]["vintage"] == "2026-10"
    # the file relative to the proposal's folder: no output shows this machine's folders
    assert diff["baseline_run"]["proposal_source"] == "proposal.toml"
    assert diff["rows_used"]["2026-11"]["ember"] == "2026-11"
    change = candidate_of(diff, EXAMPLE_ID)["change"]["electricity_eur_per_mtok"]
    assert change["a"] == pytest.approx(before) and change["b"] == pytest.approx(after)
    # the whole change is the electricity price's; nothing else moved
    assert change["by_cause"]["electricity price"] == pytest.approx(after - before)
    assert all(value == 0 for cause, value in change["by_cause"].items()
               if cause != "electricity price")

    chain = json.loads(ok("explain", EXAMPLE_ID, "electricity", str(proposal), "--json"))
    assert chain["value"] == pytest.approx(after)
    wholesale = {i["input"]: i for i in chain["inputs"]}["wholesale_eur_per_kwh"]
    assert wholesale["value"] == pytest.approx(0.065)  # 65.0 EUR/MWh, 2026-11's row
    assert "FR 2026-11" in wholesale["source"] and "Ember" in wholesale["source"]
    october_chain = json.loads(ok("explain", EXAMPLE_ID, "electricity", str(proposal),
                                  "--vintage", "2026-10", "--json"))
    assert october_chain["value"] == pytest.approx(before)

    # the source fails the next time (a body that is no CSV): exit 2, the month's rows kept
    serve_ember(httpserver, monkeypatch, b"<html>maintenance</html>")
    code, _, err = scorecard("ingest", "ember", "--vintage", "2026-11")
    assert code == 2 and "ember: failed" in err, err
    assert lines[at + 3] in ok("sources").splitlines()  # the last good load, as it was
    con = duckdb.connect(str(tmp_path / "store" / "scorecard.duckdb"), read_only=True)
    [(error,)] = con.execute("SELECT error FROM loads WHERE status = 'failed' AND source = "
                             "'ember' AND vintage = '2026-11'").fetchall()
    con.close()
    assert "parse error" in error  # the failure is recorded, as docs/monthly.md says
    assert (candidate_of(run_json(str(proposal)), EXAMPLE_ID)["electricity_eur_per_mtok"]
            == pytest.approx(after))


def test_evidence_add_then_run_inspect_and_explain_read_it_from_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/evidence.md and docs/energy.md: `evidence add` of a sweep and its power log, then a
    proposal whose candidate reads that evidence is scored from what the add left in the store
    (the benchmark's parsed runs, the log's readings), as are `evidence inspect --db` and
    `explain`; the next plain `run` still takes the market month (R1)."""
    folder = tmp_path / "proposal"
    shutil.copytree(ROOT / "tests" / "fixtures" / "bench" / "vllm_sweep", folder / "bench")
    (folder / "power").mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "scorecard" / "nvidia_smi_sweep_window.csv",
                folder / "power" / "smi.csv")
    proposal = folder / "proposal.toml"
    proposal.write_text(measured("measured", '{ evidence = "bench", tz = "UTC" }',
                                 '{ evidence = "power", tz = "UTC" }'))
    db = str(tmp_path / "s.duckdb")
    added = ok("evidence", "add", str(folder / "bench"), str(folder / "power"), "--tz", "UTC",
               "--db", db)
    assert added.count(": loaded, ") == 4  # three runs of the sweep and the log
    again = ok("evidence", "add", str(folder / "bench"), str(folder / "power"), "--tz", "UTC",
               "--db", db)
    assert again.count(": unchanged, ") == 4  # the same bytes again write nothing

    def parse_bench(*args: object, **kwargs: object) -> None:
        raise AssertionError("a benchmark file added to the store was parsed again")

    real_parse = bench.parse_bench
    monkeypatch.setattr(bench, "parse_bench", parse_bench)
    # the knee of the sweep (concurrency 2, 80 tokens/s) and 700 W over its window:
    # 8.75 J/token; CPM 5.76 EUR/h / (80 x 0.0036) = 20 EUR/Mtok (test_measured_candidate.py)
    (lab,) = run_json(str(proposal), "--db", db)["candidates"]
    # graded estimated: 4 req/s x 0.34 s = 1.36 in flight at concurrency 2, -32 %, outside
    # Little's law's 10 % tolerance (measured before that rule; test_measured_candidate.py)
    assert lab["tokens_per_s_grade"] == "estimated"
    assert lab["tokens_per_s"] == pytest.approx(80.0)
    assert lab["energy_j_per_token"] == pytest.approx(8.75)
    assert lab["cpm_eur_per_mtok"] == pytest.approx(20.0)
    report = json.loads(ok("evidence", "inspect", str(folder / "bench"), "--tz", "UTC",
                           "--ttft-ms", "300", "--tpot-ms", "50", "--db", db, "--json"))
    assert report["sweep"]["knee_concurrency"] == 2
    assert report["sweep"]["knee_tokens_per_s"] == pytest.approx(80.0)
    # `explain` opens the store read-only and so without its evidence cache (docs/evidence.md,
    # "Parsed once"): it parses the files, and must answer what `run` answered
    monkeypatch.setattr(bench, "parse_bench", real_parse)
    chain = json.loads(ok("explain", "lab", "energy_j_per_token", str(proposal), "--db", db,
                          "--json"))
    assert chain["value"] == pytest.approx(8.75)

    # the log's readings are read back from the store, not from the file: doubled there,
    # the next run sees 1,400 W over the window, 17.5 J/token
    con = duckdb.connect(db)
    con.execute(f"UPDATE {power_samples.READINGS} SET power_w = power_w * 2")
    con.close()
    (lab,) = run_json(str(proposal), "--db", db)["candidates"]
    assert lab["energy_j_per_token"] == pytest.approx(17.5)
    report = json.loads(ok("evidence", "inspect", str(folder / "bench"), "--power",
                           str(folder / "power"), "--tz", "UTC", "--ttft-ms", "300",
                           "--tpot-ms", "50", "--db", db, "--json"))
    assert report["power"]["energy_j_per_goodput_token"] == pytest.approx(17.5)
    # and the market month is still the bundled one, not the evidence's vintage
    assert run_json("--db", db)["vintage"] == "2026-10"
    # nothing but the store is left beside it (R14: `evidence add` left a .duckdb.tmp/)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proposal", "s.duckdb"]


def test_run_twice_publishes_and_diff_compares_with_the_stored_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/monthly.md, "The store and the published baseline": a default `run` of a proposal
    publishes, a second one of the same file republishes the same figures; after an edit,
    a `--json` what-if run is stored but not published, and `diff` of the month with itself
    compares today's proposal with the published run it finds in the store."""
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "s.duckdb")
    ok("init", str(tmp_path))
    proposal = tmp_path / "proposal.toml"
    first = ok("run", str(proposal), "--db", db)
    second = ok("run", str(proposal), "--db", db)
    assert "not published" not in first and "not published" not in second
    same = json.loads(ok("diff", "2026-10", "2026-10", str(proposal), "--db", db, "--json"))
    assert same["baseline_run"]["proposal_source"] == "proposal.toml"
    assert all(change["change"] == 0 for c in same["candidates"]
               for change in c["change"].values())
    published = json.loads(next((tmp_path / "scorecard-out").rglob("scorecard.json"))
                           .read_text())
    # a what-if: the declared hourly cost of the H100 node (11.0 EUR/h) raised to 13.2
    cid = "onprem-fr-h100-fp16"
    proposal.write_text(proposal.read_text().replace("eur_per_hour = 11.0,",
                                                     "eur_per_hour = 13.2,", 1))
    what_if = candidate_of(run_json(str(proposal), "--db", db), cid)
    stored = candidate_of(published, cid)
    assert what_if["cpm_eur_per_mtok"] == pytest.approx(stored["cpm_eur_per_mtok"] * 1.2)
    diff = json.loads(ok("diff", "2026-10", "2026-10", str(proposal), "--db", db, "--json"))
    # the file relative to the proposal's folder: no output shows this machine's folders
    assert diff["baseline_run"]["proposal_source"] == "proposal.toml"
    assert any("differs from the one published" in note for note in diff["notes"])
    change = candidate_of(diff, cid)["change"]["cpm_eur_per_mtok"]
    assert change["a"] == pytest.approx(stored["cpm_eur_per_mtok"])  # the published run's
    assert change["b"] == pytest.approx(what_if["cpm_eur_per_mtok"])
    # the market did not move: none of the change is a market cause's
    market = ("FX", "GPU price", "electricity price", "grid intensity")
    assert all(change["by_cause"][cause] == 0 for cause in market)
    chain = json.loads(ok("explain", cid, "cpm_eur_per_mtok", str(proposal), "--db", db,
                          "--json"))
    assert chain["value"] == pytest.approx(what_if["cpm_eur_per_mtok"])  # today's


def test_ingest_then_offline_reingest_then_run(
        tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/monthly.md: `ingest --offline` re-parses the stored raw snapshots of the vintage
    the earlier ingest kept (R6: it failed when two requests had returned the same bytes)."""
    body = (ROOT / "tests" / "fixtures" / "scaleway" / "servers_nl-ams-1_page1.json")
    httpserver.expect_request(re.compile(r"/instance/v1/zones/[^/]+/products/servers")
                              ).respond_with_data(body.read_bytes())
    monkeypatch.setenv("SCORECARD_SCALEWAY_BASE_URL", httpserver.url_for("").rstrip("/"))
    db = str(tmp_path / "s.duckdb")
    ok("run", "--db", db, "--json")  # the bundled data: the region map the ingest reads
    code, _, err = scorecard("ingest", "scaleway", "--vintage", "2026-11", "--db", db)
    assert code == 0 and "scaleway: loaded" in err, err
    zones = {request.path.split("/")[4] for request, _ in httpserver.log}
    assert len(zones) >= 2, zones  # two zones, one body: the case of R6
    code, _, err = scorecard("ingest", "scaleway", "--offline", "--vintage", "2026-11",
                             "--db", db)
    assert code == 0 and "scaleway: unchanged" in err, err
    document = run_json("--db", db)
    assert document["vintage"] == "2026-11"
    cid = "scaleway-h100x8-fp8"
    chain = json.loads(ok("explain", cid, "cpm_eur_per_mtok", "--db", db, "--json"))
    assert chain["value"] == pytest.approx(candidate_of(document, cid)["cpm_eur_per_mtok"])


def test_an_fx_ingest_of_next_month_leaves_last_month_and_its_diff_to_fx(
        tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/monthly.md with the ECB source: last month published on the bundled rates, this
    month's ECB file ingested; last month recomputes as published and the diff gives the
    USD-priced candidate's whole change to FX (nothing else moved)."""
    httpserver.expect_request("/eurofxref-hist-90d.xml").respond_with_data(
        (ROOT / "tests" / "fixtures" / "ecb" / "eurofxref-hist-90d_excerpt.xml").read_bytes())
    monkeypatch.setenv("SCORECARD_ECB_BASE_URL", httpserver.url_for("").rstrip("/"))
    db = str(tmp_path / "s.duckdb")
    cid = "azure-nd-h100-v5-fp8"  # priced in USD
    october = run_json("--vintage", "2026-10", "--db", db, "--publish")
    code, _, err = scorecard("ingest", "ecb", "--vintage", "2026-11", "--db", db)
    assert code == 0 and "ecb: loaded" in err, err
    november = candidate_of(run_json("--db", db), cid)
    assert november["cpm_eur_per_mtok"] != pytest.approx(
        candidate_of(october, cid)["cpm_eur_per_mtok"])  # the USD rate moved
    diff = json.loads(ok("diff", "2026-10", "2026-11", "--db", db, "--json"))
    assert diff["baseline"] == "stored"
    change = candidate_of(diff, cid)["change"]["cpm_eur_per_mtok"]
    assert change["by_cause"]["method/assumptions"] == pytest.approx(0, abs=1e-9)
    assert change["by_cause"]["FX"] == pytest.approx(change["change"])
    # and last month, computed again, is what was published
    again = candidate_of(run_json("--vintage", "2026-10", "--db", db), cid)
    assert again["cpm_eur_per_mtok"] == pytest.approx(
        candidate_of(october, cid)["cpm_eur_per_mtok"])


def test_every_test_docs_reliability_md_names_exists() -> None:
    """docs/reliability.md names the test that holds each promise (`file::test`, or `::test`
    after a file named before it): each must be a test of that file."""
    text = (ROOT / "docs" / "reliability.md").read_text()
    named: list[tuple[str, str]] = []
    current = None
    for found in re.finditer(r"([\w/]+\.py)|::(\w+)", text):
        if found[1]:
            current = found[1]
        elif current is not None:
            named.append((current, found[2]))
    assert len(named) > 60
    missing = [f"{file}::{name}" for file, name in named
               if not (ROOT / "tests" / file).is_file() or f"def {name}("
               not in (ROOT / "tests" / file).read_text()]
    assert not missing


@pytest.mark.parametrize("command", ["add", "inspect"])
def test_evidence_that_is_a_device_or_a_pipe_is_refused_naming_it(command: str,
                                                                   tmp_path: Path) -> None:
    """`evidence add /dev/zero` exited 0 having read nothing (a device is neither a file nor a
    folder to walk); a named pipe would block a reader for ever. Both are refused, one line."""
    import os
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    limits = [] if command == "add" else ["--ttft-ms", "1500", "--tpot-ms", "60"]
    for path in ("/dev/zero", str(fifo)):
        code, _, err = scorecard("evidence", command, path, *limits,
                                 "--db", str(tmp_path / "s.duckdb"))
        assert code == 1, err
        assert f"{path}: (path): not a regular file or a folder" in err


@pytest.fixture
def full_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 2 MiB tmpfs (root and mount needed, else the test skips): a store on it fills it."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", str(folder)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (root and mount(8) are needed)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_a_full_disk_is_one_line_naming_the_file_and_the_store_keeps_its_loads(
        full_disk: Path) -> None:
    """A commit that cannot write its WAL: DuckDB ends the transaction itself, and the
    ROLLBACK after it said 'cannot rollback - no transaction is active' (exit 3), hiding the
    cause. Now the cause, the file, exit 1; what was loaded before is still there."""
    db = full_disk / "s.duckdb"
    code, _, err = process("evidence", "add", str(BENCH), "--db", str(db))
    assert code == 0, err  # 2.3 MB written: the 2 MiB disk is full now
    more = ROOT / "tests" / "fixtures" / "bench" / "vllm_append_result.jsonl"
    for command in (("run", "--json"), ("evidence", "add", str(more))):
        code, _, err = process(*command, "--db", str(db))
        assert code == 1, err
        assert "No space left on device" in err and f"{db}.wal" in err
        assert "no transaction is active" not in err and err.count("\n") == 1
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT vintage, status FROM loads").fetchall() == [
            ("evidence", "ok")]


def test_a_read_only_store_folder_is_one_line_naming_the_store_and_readers_answer(
        full_disk: Path, tmp_path: Path) -> None:
    """R9: a store whose folder is read-only exited 3 ("a bug"). The tests run as root, for
    whom a folder's mode stops no write, so the folder is a tmpfs remounted read-only: a
    writer (`run`, `evidence add` to the store or to a new one beside it) is one line naming
    the store and the cause, exit 1; a reader (`sources`, opened read-only) still answers;
    the store is left as it was."""
    db = full_disk / "s.duckdb"
    code, _, err = process("evidence", "add", str(BENCH), "--db", str(db))
    assert code == 0, err
    before = db.read_bytes()
    remounted = subprocess.run(["mount", "-o", "remount,ro", str(full_disk)],
                               capture_output=True, check=False)
    assert remounted.returncode == 0, remounted.stderr
    more = ROOT / "tests" / "fixtures" / "bench" / "vllm_append_result.jsonl"
    for command, store in ((("run", "--json", "--out", str(tmp_path / "out")), db),
                           (("evidence", "add", str(more)), db),
                           (("evidence", "add", str(more)), full_disk / "new.duckdb")):
        code, _, err = process(*command, "--db", str(store))
        assert code == 1, err
        assert f"{store}: cannot open the store" in err and "Read-only file system" in err
        assert "bug" not in err and err.count("\n") == 1, err
    code, out, err = process("sources", "--db", str(db))
    assert code == 0 and "ecb: provides core_ecb__fx_rates" in out, err
    assert db.read_bytes() == before and not (full_disk / "new.duckdb").exists()


def test_the_readme_tours_evidence_inspect_runs_as_written_on_a_fresh_clone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tour's `evidence inspect` line, taken from README.md as written and run after the
    tour's `init my-proposal` in a fresh folder, finds its files (it named a `results/` folder
    nothing wrote; `init` now writes the example results) and reports the sweep's knee:
    concurrency 4 at 163.3 tokens/s (160 tokens in 0.98 s) under TTFT 1500 ms and TPOT 60 ms."""
    import shlex
    tour = (ROOT / "README.md").read_text().split("## A five-minute tour", 1)[1]
    [line] = [line for line in tour.splitlines()
              if line.startswith("uv run scorecard evidence inspect")]
    args = shlex.split(line.split("#", 1)[0])[3:]  # after `uv run scorecard`
    monkeypatch.chdir(tmp_path)
    ok("init", "my-proposal")
    code, out, err = scorecard(*args)
    assert code == 0, err
    assert "knee 4 at 163.3 tokens/s goodput" in out
