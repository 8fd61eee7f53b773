"""A warm `scorecard run` (the store already holds the bundled data, the charts and the
scorecard table rendered from the same inputs) redoes none of that work: the report's
great-tables scorecard comes from the store (cache__table_html, keyed by the sha256 of the
table's inputs, its rendering code and the great-tables and polars versions) and the same
bytes are written; a changed figure renders the table again; and a warm process never imports
the libraries only a cold run needs (issue 18: the main job's time)."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app, frozen_imports
from pipeline.store import caches
from reports.html import scorecard_table
from tests.conftest import Calls
from tests.reports.conftest import fragment

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "pipeline" / "example_proposal.toml"


def _pages(tmp_path: Path, renders: Calls, *proposals: str | None) -> list[tuple[str, int]]:
    """One run on the store in tmp_path per proposal (None: the bundled example): each run's
    page and how many tables great-tables rendered for it."""
    pages = []
    for i, proposal in enumerate(proposals):
        before = renders.count
        args = ["run", *([proposal] if proposal else []), "--db", str(tmp_path / "s.duckdb"),
                "--out", str(tmp_path / f"out{i}")]
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        page = (tmp_path / f"out{i}" / "scorecard.html").read_text(encoding="utf-8")
        pages.append((page, renders.count - before))
    return pages


def _tables_kept(tmp_path: Path) -> int:
    con = store.connect(tmp_path / "s.duckdb", read_only=True)
    try:
        return int(con.execute("SELECT count(*) FROM cache__table_html").fetchall()[0][0])
    finally:
        con.close()


def _table(page: str) -> str:
    start = page.index('<div id="scorecard"')
    return page[start:page.index("</table>", start)]


def test_a_rerun_renders_no_table_and_writes_the_same_page(tmp_path: Path,
                                                          table_renders: Calls) -> None:
    (first, drawn), (second, again) = _pages(tmp_path, table_renders, None, None)
    assert (drawn, again) == (1, 0)  # the second taken from the store
    assert _tables_kept(tmp_path) == 1
    # the whole page is the same but for its generation time
    assert re.sub(r"generated \S+", "", first) == re.sub(r"generated \S+", "", second)
    assert _table(first) == _table(second) and "Scorecard: " in _table(first)


def test_a_changed_figure_renders_the_table_again(tmp_path: Path,
                                                 table_renders: Calls) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert "tokens_per_day = 500_000_000" in text
    varied = tmp_path / "varied.toml"
    varied.write_text(text.replace("tokens_per_day = 500_000_000",
                                   "tokens_per_day = 400_000_000"), encoding="utf-8")
    (first, _), (second, drawn) = _pages(tmp_path, table_renders, None, str(varied))
    assert drawn == 1 and _tables_kept(tmp_path) == 2
    assert _table(first) != _table(second)


def test_the_key_covers_the_inputs_and_only_them() -> None:
    result = {"proposal": "p", "vintage": "2026-10", "sources": [], "generated_at": "t1",
              "candidates": [{"id": "a", "cpm_eur_per_mtok": 1.0}]}
    inputs = scorecard_table.table_inputs(fragment(result))
    assert "generated_at" not in inputs  # a rerun's new time is not a new table
    key = scorecard_table.table_key(inputs)
    assert key == scorecard_table.table_key(
        scorecard_table.table_inputs(fragment({**result, "generated_at": "t2"})))
    changed = {**result, "candidates": [{"id": "a", "cpm_eur_per_mtok": 1.5}]}
    assert scorecard_table.table_key(scorecard_table.table_inputs(fragment(changed))) != key


def test_a_warm_process_imports_no_great_tables(tmp_path: Path) -> None:
    # two whole processes on one store: the first renders and keeps the table, the second
    # finds it and never imports great-tables (nor vl-convert: the charts are kept too)
    code = ("import sys\nfrom pipeline.cli import app\n"
            "try:\n    app(['run', '--db', sys.argv[1], '--out', sys.argv[2]])\n"
            "except SystemExit:\n    pass\n"
            "print([m for m in ('great_tables', 'vl_convert', 'pandera') if m in sys.modules])")
    db, out = str(tmp_path / "s.duckdb"), str(tmp_path / "out")
    seen = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code, db, out], capture_output=True,
                              text=True, check=True, cwd=tmp_path)
        seen.append(done.stdout.strip().splitlines()[-1])
    assert "great_tables" in seen[0]
    assert seen[1] == "[]"


def test_the_stack_is_imported_frozen_and_collection_resumes() -> None:
    # a fresh process: pipeline.run (polars, duckdb, the engine) imported without the
    # collector; afterwards it is back on and the imported objects are frozen (about 120,000
    # tracked objects; the bare interpreter holds about 5,000)
    code = ("import gc\nfrom pipeline.cli import frozen_imports\n"
            "with frozen_imports('pipeline.run'):\n"
            "    on_inside = gc.isenabled()\n    import pipeline.run\n"
            "print(on_inside, gc.isenabled(), gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    inside, after, frozen = done.stdout.split()
    assert (inside, after) == ("False", "True") and int(frozen) > 100_000


def test_every_command_runs_with_the_collector(tmp_path: Path) -> None:
    # `scorecard` starts typer without the collector; a command that does not freeze its
    # imports (here one added for the test) gets it back before its body runs, and so does
    # `run` once its stack is imported (it is on after the run, the imports frozen)
    code = ("import gc, sys\nfrom pipeline.cli import app\n"
            "@app.command('probe')\ndef probe() -> None:\n    print('probe', gc.isenabled())\n"
            "for args in (['probe'], ['run', '--json', '--db', sys.argv[1]]):\n"
            "    try:\n        app(args)\n    except SystemExit:\n        pass\n"
            "print('after run', gc.isenabled(), gc.get_freeze_count() > 100_000)")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.duckdb")],
                          capture_output=True, text=True, check=True, cwd=tmp_path)
    lines = [line for line in done.stdout.splitlines() if line.startswith(("probe", "after"))]
    assert lines == ["probe True", "after run True True"]


def test_a_module_already_imported_changes_nothing() -> None:
    # this test process imported pipeline.cli already: no freeze, the collector untouched
    before = gc.get_freeze_count()
    with frozen_imports("pipeline.cli"):
        assert gc.isenabled()
    assert gc.get_freeze_count() == before and gc.isenabled()


def test_the_store_caches_answer_many_keys_at_once(tmp_path: Path) -> None:
    # a report's charts are looked up in one query: the kept ones come back (a missing key
    # is left out) and are marked used, so the eviction keeps them
    con = store.connect(tmp_path / "s.duckdb")
    try:
        cache = caches.ChartCache(con)
        cache["a"], cache["b"] = "<svg>a</svg>", "<svg>b</svg>"
        con.execute("UPDATE cache__chart_svg SET used_at_utc = TIMESTAMPTZ '2020-01-01'")
        assert cache.get_many(["a", "missing"]) == {"a": "<svg>a</svg>"}
        assert cache.get_many([]) == {}
        used = dict(con.execute("SELECT key, used_at_utc > TIMESTAMPTZ '2020-01-01' "
                                "FROM cache__chart_svg").fetchall())
        assert used == {"a": True, "b": False}
        tables = caches.TableCache(con)
        tables["t"] = "<table/>"
        assert tables.get_many(["t", "a"]) == {"t": "<table/>"} and len(cache) == 2
    finally:
        con.close()
