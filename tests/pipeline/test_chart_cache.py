"""A rerun of the same proposal on the same data draws no chart again: `scorecard run` keeps
each rendered SVG in the store (cache__chart_svg, keyed by the spec's sha256 and the vl-convert
version), so only a changed figure costs vl-convert's start (about 0.9 s a process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from reports.figures import charts
from tests.conftest import Calls

pytestmark = pytest.mark.skipif(charts.unavailable() is not None, reason="no vl-convert")
runner = CliRunner()


def _run(tmp_path: Path, out: str, *extra: str) -> str:
    done = runner.invoke(app, ["run", *extra, "--db", str(tmp_path / "s.duckdb"),
                               "--out", str(tmp_path / out)])
    assert done.exit_code == 0, done.output
    return (tmp_path / out / "scorecard.html").read_text(encoding="utf-8")


def test_a_rerun_draws_no_chart_and_writes_the_same_charts(tmp_path: Path,
                                                          chart_draws: Calls) -> None:
    first = _run(tmp_path, "a")
    drawn = chart_draws.count
    assert drawn > 0
    con = store.connect(tmp_path / "s.duckdb", read_only=True)
    kept = con.execute("SELECT count(*) FROM cache__chart_svg").fetchall()[0][0]
    con.close()
    assert kept == drawn  # every chart drawn is kept, once

    second = _run(tmp_path, "b")
    assert chart_draws.count == drawn  # nothing drawn
    svgs = [part.split("</svg>")[0] for part in first.split("<svg")[1:]]
    assert svgs and svgs == [part.split("</svg>")[0] for part in second.split("<svg")[1:]]


def test_a_changed_figure_is_drawn_again(tmp_path: Path, chart_draws: Calls) -> None:
    _run(tmp_path, "a")
    text = (Path(__file__).resolve().parents[2] / "pipeline" / "example_proposal.toml"
            ).read_text(encoding="utf-8")
    assert "tokens_per_day = 500_000_000" in text
    varied = tmp_path / "varied.toml"
    varied.write_text(text.replace("tokens_per_day = 500_000_000",
                                   "tokens_per_day = 400_000_000"), encoding="utf-8")
    before = chart_draws.count
    _run(tmp_path, "b", str(varied))
    assert chart_draws.count > before  # new figures, new specs: drawn
