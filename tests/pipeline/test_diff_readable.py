"""`scorecard diff` reads well in a monthly rerun: a partial month is flagged with the share of
the month its data cover, float noise is not listed as an input change, and written to a file
or a pipe nothing is wrapped. A real store; the CLI (in a subprocess for the pipe)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.compare import diff
from pipeline.engine.questions.diff import ELECTRICITY, GRID, RELATIVE_TOLERANCE
from pipeline.engine.scorecard import compute, to_contract
from pipeline.ingest.bundled import load_bundled
from pipeline.inputs import read_market, resolve
from pipeline.workspace import dumps
from schemas import proposal as proposal_file
from schemas.market import ELECTRICITY_PRICES
from tests.pipeline.test_diff import PROPOSAL, files_with_fr_price

runner = CliRunner()


def _ingested(con: duckdb.DuckDBPyConnection, load_id: str, vintage: str,
              fetched_at: datetime) -> None:
    """A good ecb load of `vintage` whose one response was fetched at `fetched_at`."""
    con.execute("INSERT INTO loads (load_id, source, vintage, started_at_utc, "
                "finished_at_utc, status) VALUES (?, 'ecb', ?, ?, ?, 'ok')",
                [load_id, vintage, fetched_at, fetched_at])
    con.execute("INSERT INTO load_fetches VALUES (?, 'sha', 'https://ecb.example/x.xml', "
                "'{}', ?)", [load_id, fetched_at])


@pytest.fixture
def december(db: Path) -> Path:
    """November (FR at 58 EUR/MWh) ingested on 1 December, so complete; December (FR at 87)
    ingested on 2 December at 06:00 UTC: a 2-day month."""
    con = store.connect(db)
    load_bundled(con, files_with_fr_price(58), "2026-11")
    load_bundled(con, files_with_fr_price(87), "2026-12")
    _ingested(con, "ecb-11", "2026-11", datetime(2026, 12, 1, 6, tzinfo=UTC))
    _ingested(con, "ecb-12", "2026-12", datetime(2026, 12, 2, 6, tzinfo=UTC))
    con.close()
    return db


def test_a_partial_month_is_flagged_with_its_share(december: Path, tmp_path: Path) -> None:
    args = ["diff", "2026-11", "2026-12", str(PROPOSAL), "--db", str(december)]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    # December fetched up to the 2nd: days 1 and 2 of 31, 2 / 31 = 0.0645 (6 %); November's
    # data were fetched after it ended, so it is not partial
    assert document["partial_months"] == {"2026-12": {
        "through": "2026-12-02", "days_covered": 2, "days_in_month": 31,
        "share_of_month": 2 / 31}}
    page = tmp_path / "diff.html"
    result = runner.invoke(app, [*args, "--html", str(page)])
    assert result.exit_code == 0, result.output
    said = ("2026-12 is a partial month: data up to 2026-12-02, 2 of 31 days (6% of the "
            "month); its monthly figures may move when the month is complete")
    assert result.stdout.startswith(f"warning: {said}\n")
    assert (f"<strong>Partial month:</strong> {said}.") in page.read_text(encoding="utf-8")


def test_a_run_of_a_partial_month_says_so_where_it_shows_its_vintage(december: Path,
                                                                   tmp_path: Path) -> None:
    # the run of December, 2 days in: its scorecard.json, its report's first screen and the
    # terminal carry the diff's flag (2 of 31 days, 6 %); they carried none
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(PROPOSAL), "--db", str(december), "--vintage",
                                 "2026-12", "--out", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    assert document["partial_month"] == {"through": "2026-12-02", "days_covered": 2,
                                         "days_in_month": 31, "share_of_month": 2 / 31}
    said = ("2026-12 is a partial month: data up to 2026-12-02, 2 of 31 days (6% of the "
            "month); its monthly figures may move when the month is complete")
    assert said in " ".join(result.stdout.split())  # wrapped at 80 columns
    assert f'id="partial-month"><strong>{said}</strong>' in (
        out / "scorecard.html").read_text(encoding="utf-8")
    # and the workbook's About sheet, right under the vintage
    about = load_workbook(out / "scorecard.xlsx", read_only=True)["About"]
    rows = [tuple(r) for r in about.iter_rows(values_only=True)][:3]
    assert rows[1] == ("Vintage", "2026-12") and rows[2] == ("Partial month", said)
    # November was fetched after it ended: complete, null, and nothing said
    result = runner.invoke(app, ["run", str(PROPOSAL), "--db", str(december), "--vintage",
                                 "2026-11", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["partial_month"] is None
    assert "partial month" not in result.stdout


def test_float_noise_is_not_an_input_change(december: Path, tmp_path: Path) -> None:
    """The stored run of November has capex 300000; today's proposal writes
    300000.0000000001, which parses to 300000 + 2 ulps (2 x 5.8e-11): a relative change of
    3.9e-16, far below RELATIVE_TOLERANCE (1e-9): float noise, not listed. A change of 1e-6
    relative (300000.3) is above it and listed."""
    original = PROPOSAL.read_text(encoding="utf-8")
    stored = runner.invoke(app, ["run", str(PROPOSAL), "--vintage", "2026-11", "--db",
                                 str(december), "--json", "--publish"])
    assert stored.exit_code == 0, stored.output
    noisy, moved = tmp_path / "noisy.toml", tmp_path / "moved.toml"
    noisy.write_text(original.replace("gpus = 300000 }", "gpus = 300000.0000000001 }", 1),
                     encoding="utf-8")
    moved.write_text(original.replace("gpus = 300000 }", "gpus = 300000.3 }", 1),
                     encoding="utf-8")
    assert 300000.0000000001 != 300000.0  # the noise is really there
    assert abs(300000.0000000001 - 300000) / 300000 < RELATIVE_TOLERANCE < 0.3 / 300000

    def changed_inputs(proposal: Path) -> list[str]:
        result = runner.invoke(app, ["diff", "2026-11", "2026-12", str(proposal), "--db",
                                     str(december), "--json"])
        assert result.exit_code == 0, result.output
        fr = next(c for c in json.loads(result.stdout)["candidates"] if c["id"] == "onprem-fr")
        return list(fr["changed_inputs"])

    assert changed_inputs(noisy) == []
    # printed to 4 significant digits, or as many more as tell the two apart
    assert changed_inputs(moved) == ["capex_eur: 300,000 -> 300,000.3"]


def test_an_input_change_prints_its_figures_as_the_diff_does(december: Path,
                                                             tmp_path: Path) -> None:
    """Today's proposal declares FR's throughput as 163.26530612244898 tokens/s (8000 / 49,
    as Python writes it) and its capex as 360000.00000000006 (a sum's float noise): the
    change reads 4,000 -> 163.3 and 300,000 -> 360,000, as the diff's other figures (4
    significant digits), not 4000.0 -> 163.26530612244898."""
    original = PROPOSAL.read_text(encoding="utf-8")
    stored = runner.invoke(app, ["run", str(PROPOSAL), "--vintage", "2026-11", "--db",
                                 str(december), "--json", "--publish"])
    assert stored.exit_code == 0, stored.output
    today = tmp_path / "today.toml"
    today.write_text(original.replace("gpus = 300000 }", "gpus = 360000.00000000006 }", 1)
                     .replace("tokens_per_s = 4000,", "tokens_per_s = 163.26530612244898,", 1),
                     encoding="utf-8")
    result = runner.invoke(app, ["diff", "2026-11", "2026-12", str(today), "--db",
                                 str(december), "--json"])
    assert result.exit_code == 0, result.output
    fr = next(c for c in json.loads(result.stdout)["candidates"] if c["id"] == "onprem-fr")
    assert fr["changed_inputs"] == ["tokens_per_s: 4,000 -> 163.3",
                                    "capex_eur: 300,000 -> 360,000"]
    result = runner.invoke(app, ["diff", "2026-11", "2026-12", str(today), "--db",
                                 str(december)])
    assert ("onprem-fr: inputs changed: tokens_per_s: 4,000 -> 163.3; capex_eur: 300,000 -> "
            "360,000") in result.stdout


def test_the_bundled_example_s_run_is_named_in_one_pair_of_parentheses(
        december: Path) -> None:
    """The bundled example's runs are stored with the source "(bundled example
    example_proposal.toml)": the note names it inside its own parentheses, not in a second
    pair ("from (bundled example ...)")."""
    proposal = proposal_file.parse(PROPOSAL.read_text(encoding="utf-8"), str(PROPOSAL))
    con = store.connect(december)
    market = read_market(con, "2026-11")
    result = to_contract(compute(proposal, resolve(proposal, str(PROPOSAL), market), market),
                         "2026-12-01T09:00:00+00:00", "test")
    store.save_scorecard(con, result, "text", dumps(result.document()),
                         proposal_sha256="ab" * 32,
                         source="(bundled example example_proposal.toml)")
    document = diff(con, "2026-11", "2026-12", proposal, str(PROPOSAL),
                    generated_at="2026-12-02T09:00:00+00:00", code_version="test")
    note = document.notes[0]
    assert note.startswith("A is the scorecard published for 2026-11 of 'Diff worked "
                           "example' (proposal sha256 abababababab, bundled example "
                           "example_proposal.toml, generated 2026-12-01"), note
    assert "((" not in note and "))" not in note


def test_a_group_changes_only_when_its_own_figures_do(db: Path) -> None:
    """2026-12 holds the same reference data as 2026-11 plus two days of FR hourly day-ahead
    prices (no hourly intensities): with a [workload], each vintage's profile frame has a
    row per zone with sub-daily data, and December's FR row has a price and a null
    intensity. Only the electricity price changed: grid intensity is not a changed group,
    and the carbon figures, which only the grid moves, do not change."""
    con = store.connect(db)
    load_bundled(con, files_with_fr_price(58), "2026-11")
    load_bundled(con, files_with_fr_price(58), "2026-12")
    start = datetime(2026, 12, 1, tzinfo=UTC)
    prices = pl.DataFrame({
        "vintage": "2026-12", "zone": "FR",
        "interval_start_utc": [start + timedelta(hours=h) for h in range(48)],
        "resolution": "hour", "price_eur_per_mwh": 90.0, "price_basis": "day_ahead",
        "source_url": "https://example.org/hourly", "source_date": date(2026, 12, 3),
        "licence": "CC BY 4.0"})
    sha = store.save_snapshot(con, b"hourly", source="test", url="https://example.org/hourly")
    store.load(con, "test-hourly", "2026-12",
               [store.Batch(ELECTRICITY_PRICES, prices, sha, "hourly")])
    flat = "[workload]\nhourly_profile = [" + ", ".join(["1"] * 24) + "]\n\n"
    text = PROPOSAL.read_text(encoding="utf-8").replace("[tco.node]", flat + "[tco.node]", 1)
    proposal = proposal_file.parse(text, str(PROPOSAL))
    assert proposal.workload is not None
    document = diff(con, "2026-11", "2026-12", proposal, str(PROPOSAL),
                    generated_at="2026-12-02T09:00:00+00:00", code_version="test",
                    use_stored=False)
    assert document.changed_groups == [ELECTRICITY]
    for c in document.candidates:
        assert c.change is not None
        for metric in ("carbon_gco2e_per_mtok", "carbon_market_gco2e_per_mtok"):
            assert c.change[metric].change == 0.0, (c.id, metric)
            assert c.change[metric].by_cause[GRID] == 0.0, (c.id, metric)


def test_written_to_a_pipe_nothing_is_wrapped(december: Path) -> None:
    """`scorecard diff > diff.txt`: off a terminal the table is as wide as its longest row
    and every note is one line (at 80 columns the causes and the notes were folded)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    args = ["2026-11", "2026-12", str(PROPOSAL), "--db", str(december)]
    text = subprocess.run([sys.executable, "-m", "pipeline.cli", "diff", *args],
                          capture_output=True, env=env, check=True,
                          text=True, encoding="utf-8").stdout
    document = json.loads(subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "diff", *args, "--json"],
        stdout=subprocess.PIPE, env=env, check=True, text=True, encoding="utf-8").stdout)
    lines = text.splitlines()
    for note in document["notes"]:
        assert f"note: {note}" in lines, note
    body = [line for line in lines if line.startswith("│")]
    # one line per candidate and metric: 3 candidates x 4 metrics (CPM, electricity,
    # carbon both ways), and no folded line (a continuation line has an empty id cell)
    assert len(body) == 3 * 4, "\n".join(body)
    assert not [line for line in body if re.match(r"│\s+│", line)]
    assert max(len(line) for line in lines) > 80
