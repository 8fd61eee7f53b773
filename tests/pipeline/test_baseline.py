"""The published baseline: every run is stored under its vintage and proposal identity (name +
sha256 of the parsed proposal); only a default run of the same proposal file, or `--publish`,
replaces the published scorecard that next month's run and `diff` compare with."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.run import default_out, publishes, slug
from schemas.proposal import parse

runner = CliRunner()
EXAMPLE = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")
NAME = parse(EXAMPLE, "example.toml").proposal.name
# a what-if variant under the same name: one declared hourly cost changed
VARIANT = EXAMPLE.replace("eur_per_hour = ", "eur_per_hour = 1", 1)


def _published(db: Path) -> list[tuple[str, str, str]]:
    con = duckdb.connect(str(db))
    rows = con.execute("SELECT vintage, proposal, proposal_sha256 FROM out__scorecard"
                       ).fetchall()
    con.close()
    return rows


def _runs(db: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(db))
    rows = con.execute("SELECT proposal_sha256, proposal_source FROM out__scorecard_run "
                       "ORDER BY generated_at_utc").fetchall()
    con.close()
    return rows


def test_a_what_if_json_run_leaves_the_published_scorecard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert VARIANT != EXAMPLE
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "s.duckdb"
    mine, variant = tmp_path / "proposal.toml", tmp_path / "what-if.toml"
    mine.write_text(EXAMPLE)
    variant.write_text(VARIANT)
    sha_mine = parse(EXAMPLE, "m").sha256()
    sha_variant = parse(VARIANT, "v").sha256()
    assert sha_mine != sha_variant

    first = runner.invoke(app, ["run", str(mine), "--db", str(db)])
    assert first.exit_code == 0, first.output
    assert "new store at" in first.stderr and "bundled reference data only" in first.stderr
    [(vintage, name, sha)] = _published(db)
    assert (name, sha) == (NAME, sha_mine)
    assert f"proposal sha256 {sha_mine[:12]}" in first.stdout
    # the outputs go to scorecard-out/<proposal-slug>/<vintage>/
    folder = tmp_path / "scorecard-out" / slug(NAME) / vintage
    assert json.loads((folder / "scorecard.json").read_text())["proposal"] == NAME

    what_if = runner.invoke(app, ["run", str(variant), "--db", str(db), "--json"])
    assert what_if.exit_code == 0, what_if.output
    assert json.loads(what_if.stdout)["proposal"] == NAME
    assert _published(db) == [(vintage, NAME, sha_mine)]  # as it was
    assert [r[0] for r in _runs(db)] == [sha_mine, sha_variant]  # both runs kept

    # the variant's default run: another proposal file, so still not published
    other = runner.invoke(app, ["run", str(variant), "--db", str(db)])
    assert other.exit_code == 0, other.output
    assert "not published" in other.stdout and str(mine.resolve()) in other.stdout
    assert _published(db) == [(vintage, NAME, sha_mine)]
    assert "store with no ingested data" in other.stderr

    # --out elsewhere: stored, not published, even for the published file
    elsewhere = runner.invoke(app, ["run", str(mine), "--db", str(db), "--out",
                                    str(tmp_path / "elsewhere")])
    assert elsewhere.exit_code == 0 and "stored as a run, not published" in elsewhere.stdout

    # diff names the stored run it compares with
    diffed = runner.invoke(app, ["diff", vintage, vintage, str(variant), "--db", str(db),
                                 "--json"])
    assert diffed.exit_code == 0, diffed.output
    document = json.loads(diffed.stdout)
    assert document["baseline_run"]["proposal_sha256"] == sha_mine
    # relative to the folder of the proposal diffed (what-if.toml's, the same): no
    # machine's folders in the document
    assert document["baseline_run"]["proposal_source"] == "proposal.toml"
    assert any(f"sha256 {sha_mine[:12]}" in n and "published" in n for n in document["notes"])
    assert any("differs from the one published" in n for n in document["notes"])

    published = runner.invoke(app, ["run", str(variant), "--db", str(db), "--json",
                                    "--publish"])
    assert published.exit_code == 0, published.output
    assert _published(db) == [(vintage, NAME, sha_variant)]


def test_who_publishes() -> None:
    run = store.StoredRun("2026-10", "p", "a" * 64, "/x/p.toml", "2026-10-01T00:00:00+00:00")
    default = {"json_out": False, "default_folder": True, "asked": False}
    assert publishes(None, "b" * 64, "/x/q.toml", **default) == (True, None)
    assert publishes(run, "b" * 64, "/x/p.toml", **default)[0]  # same file, edited
    assert publishes(run, "a" * 64, "/y/copy.toml", **default)[0]  # same proposal
    assert not publishes(run, "b" * 64, "/x/q.toml", **default)[0]
    assert not publishes(None, "b" * 64, "/x/q.toml", **{**default, "json_out": True})[0]
    assert not publishes(None, "b" * 64, "/x/q.toml", **{**default, "default_folder": False})[0]
    assert publishes(run, "b" * 64, "/x/q.toml", **{**default, "json_out": True,
                                                    "asked": True})[0]


def test_output_folder_per_proposal_and_vintage() -> None:
    assert slug("Sovereign 70B inference platform (example)") == \
        "sovereign-70b-inference-platform-example"
    # accents dropped by NFKD, not the letter: "Été" is "ete", "Évaluation" "evaluation"
    assert default_out("Été / 2026", "2026-10") == Path("scorecard-out/ete-2026/2026-10")
    assert slug("Évaluation des offres") == "evaluation-des-offres"


def test_names_without_an_ascii_form_keep_their_own_folders() -> None:
    # both names have no ASCII letter: each is 8 hex digits of the sha256 of its UTF-8 name
    # (they were both "proposal", one folder for two proposals)
    import hashlib
    first, second = "推論プラットフォーム", "別の提案"
    assert slug(first) == hashlib.sha256(first.encode()).hexdigest()[:8]
    assert slug(second) == hashlib.sha256(second.encode()).hexdigest()[:8]
    assert default_out(first, "2026-10") != default_out(second, "2026-10")
    # a name with some letters left keeps them, the tag telling it from its namesakes
    tag = hashlib.sha256("推論 platform".encode()).hexdigest()[:8]
    assert slug("推論 platform") == f"platform-{tag}" != slug("別の platform")


def test_a_bad_vintage_is_refused_before_anything_runs(db: Path) -> None:
    result = runner.invoke(app, ["run", "--db", str(db), "--json", "--vintage", "2026-13"])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --vintage '2026-13' is not a month YYYY-MM")
    assert not db.exists()


def test_the_proposals_store_path_beats_scorecard_db(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "env.duckdb"
    monkeypatch.setenv("SCORECARD_DB", str(elsewhere))
    folder = tmp_path / "team"
    folder.mkdir()
    proposal = folder / "p.toml"
    proposal.write_text('[store]\npath = "team.duckdb"\n\n' + EXAMPLE)
    result = runner.invoke(app, ["run", str(proposal), "--json"])
    assert result.exit_code == 0, result.output
    assert f"new store at {folder / 'team.duckdb'}" in result.stderr
    assert (folder / "team.duckdb").exists() and not elsewhere.exists()
    # the store's place is not part of the proposal's identity
    assert parse(proposal.read_text(), "p").sha256() == parse(EXAMPLE, "e").sha256()
    # --db still wins
    explicit = tmp_path / "explicit.duckdb"
    assert runner.invoke(app, ["run", str(proposal), "--json", "--db", str(explicit)]
                         ).exit_code == 0
    assert explicit.exists()
