"""`scorecard diff` reads well in a monthly rerun: a partial month is flagged with the share of
the month its data cover, float noise is not listed as an input change, and written to a file
or a pipe nothing is wrapped. A real store; the CLI (in a subprocess for the pipe)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.engine.questions.diff import RELATIVE_TOLERANCE
from pipeline.ingest.bundled import load_bundled
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
    assert changed_inputs(moved) == ["capex_eur: 300000.0 -> 300000.3"]


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
