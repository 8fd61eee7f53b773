"""The gate tables (sources/reference/regulatory_rules.csv, sovereignty_objectives.csv) go
through parse -> validate -> load into a real DuckDB like the other reference tables, and a
run's gates read them from there: each gate traces to its stored row (URL, date, licence,
snapshot), which `scorecard explain` and the run's sources (the workbook's Sources sheet)
show. Expected outcomes worked out by hand from the rules in the comments."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from bundled_files import changed
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.engine.questions.explain import explain, render
from pipeline.engine.scorecard import compute, figures
from pipeline.ingest.bundled import load_bundled
from pipeline.inputs import resolve
from pipeline.inputs.market.read import read_market
from schemas.proposal import parse
from schemas.table import ValidationFailed
from sources import bundled

#: a German own site started 2026-09-01 (EnEfG § 11(2)), 800 kW connected (>= 300 kW), no
#: IT power given (the EED's scope needs it), assessed on 2026-12-01
SITE = ('{ source = "site survey", commissioned_on = 2026-09-01, connected_power_kw = 800, '
        'renewable_share = 1.0, energy_reuse_factor = 0.12 }')
TEXT = proposal("gates", "[policy]\nregulation_as_of = 2026-12-01\n",
                candidate("de-13", zone='"DE-LU"', pue="1.3", site=SITE))
RULE = b"enefg-11-2-pue-1.2,EnEfG \xc2\xa7 11,DE,EnEfG \xc2\xa7 11(2) Satz 1 Nr. 1,"


def _sha(name: str) -> str:
    return hashlib.sha256(bundled.read(name).content).hexdigest()


def _run(db: Path, files: dict[str, bundled.RawFile] | None = None
         ) -> tuple[dict[str, Any], list[dict[str, Any]], Any]:
    con = store.connect(db)
    load_bundled(con, files)
    mkt = read_market(con, bundled.VINTAGE)
    con.close()
    p = parse(TEXT, "p.toml")
    resolved = resolve(p, "p.toml", mkt)
    card = compute(p, resolved, mkt, draws=50)
    row = card.table.row(0, named=True)
    return ({g["gate"]: g for g in row["gates"]}, card.sources,
            (figures(p, resolved, mkt), resolved))


def test_the_gate_tables_are_stored_with_their_snapshots(db: Path) -> None:
    con = store.connect(db)
    load_bundled(con)
    rules = con.execute("SELECT rule_id, gate_metric, gate_limit, snapshot_sha256 "
                        "FROM core__regulatory_rules ORDER BY rowid").fetchall()
    # the file's 9 rules in its order, each row the file's snapshot
    assert [r[0] for r in rules] == [
        "enefg-11-1-pue-1.5", "enefg-11-1-pue-1.3", "enefg-11-2-pue-1.2", "enefg-11-2-erf-10",
        "enefg-11-2-erf-15", "enefg-11-2-erf-20", "enefg-11-5-res-50", "enefg-11-5-res-100",
        "eed-12-reporting"]
    assert rules[2][1:3] == ("pue", 1.2)
    assert {r[3] for r in rules} == {_sha(bundled.RULES_FILE)}
    objectives = con.execute("SELECT objective, weight_pct, snapshot_sha256 "
                             "FROM core__sovereignty_objectives ORDER BY objective").fetchall()
    assert [o[:2] for o in objectives] == [("SOV-1", 15), ("SOV-2", 10), ("SOV-3", 10),
                                          ("SOV-4", 15), ("SOV-5", 20), ("SOV-6", 15),
                                          ("SOV-7", 10), ("SOV-8", 5)]
    assert {o[2] for o in objectives} == {_sha(bundled.OBJECTIVES_FILE)}
    # the snapshots are stored as every bundled file's are
    assert con.execute("SELECT count(*) FROM raw_snapshots WHERE sha256 IN (?, ?)",
                       [_sha(bundled.RULES_FILE), _sha(bundled.OBJECTIVES_FILE)]
                       ).fetchall() == [(2,)]
    con.close()


def test_a_rule_the_schema_refuses_is_not_loaded(db: Path) -> None:
    con = store.connect(db)
    load_bundled(con)
    # a source that is no URL: the row checks of sources/regulation.py let it through, the
    # table's pandera schema (source_url ^https?://) does not; nothing of that load is kept
    bad = changed(regulatory_rules=(b",https://gesetze.legal/bund/enefg/11,",
                                   b",gesetze.legal/bund/enefg/11,"))
    with pytest.raises(ValidationFailed) as caught:
        load_bundled(con, bad)
    assert "core__regulatory_rules" in caught.value.report()
    assert "source_url" in caught.value.report()
    assert con.execute("SELECT count(*), min(source_url) FROM core__regulatory_rules "
                       "WHERE rule_id = 'enefg-11-1-pue-1.5'").fetchall() == [
        (1, "https://gesetze.legal/bund/enefg/11")]
    con.close()


def test_the_gates_read_the_stored_rows_and_cite_them(db: Path) -> None:
    gates, sources, _ = _run(db)
    # PUE 1.3 against § 11(2)'s <= 1.2: fails, citing the stored row
    assert gates["enefg-11-2-pue-1.2"]["status"] == "fail"
    cited = {(s["kind"], s["subject"]): s for s in sources}
    rule = cited[("regulatory_rule", "enefg-11-2-pue-1.2")]
    assert rule["url"] == "https://gesetze.legal/bund/enefg/11"
    assert rule["date"] == "2026-12-02"
    assert rule["licence"].startswith("German federal statute")
    assert rule["snapshot_sha256"] == _sha(bundled.RULES_FILE)
    # no IT power given: the EED's scope test needs data, citing the instrument's rule
    assert gates["EED art. 12 scope"]["status"] == "needs_data"
    assert cited[("regulatory_rule", "EED art. 12 scope")]["snapshot_sha256"] == (
        _sha(bundled.RULES_FILE))
    framework = [s for s in sources if s["kind"] == "sovereignty_objectives"]
    assert [s["snapshot_sha256"] for s in framework] == [_sha(bundled.OBJECTIVES_FILE)]


def test_a_stored_rule_changed_changes_the_gate(db: Path) -> None:
    # the store's rule at 1.35 instead of 1.2 (the package's file unchanged): the run reads
    # the store, so PUE 1.3 <= 1.35 passes, and the citation is the altered file's snapshot
    altered = changed(regulatory_rules=(RULE + b'"built and operated to reach PUE <= 1.2',
                                       RULE + b'"built and operated to reach PUE <= 1.35'),
                     )
    raw = altered[bundled.RULES_FILE]
    altered[bundled.RULES_FILE] = bundled.RawFile(raw.name, raw.content.replace(
        b"pue,max,1.2,2026-07-01", b"pue,max,1.35,2026-07-01", 1))
    gates, sources, _ = _run(db, altered)
    assert gates["enefg-11-2-pue-1.2"]["status"] == "pass"
    assert "pue 1.3 meets <= 1.35" in str(gates["enefg-11-2-pue-1.2"]["reason"])
    cited = {(s["kind"], s["subject"]): s for s in sources}
    assert cited[("regulatory_rule", "enefg-11-2-pue-1.2")]["snapshot_sha256"] == (
        hashlib.sha256(altered[bundled.RULES_FILE].content).hexdigest())


def test_explain_shows_each_gates_source(db: Path) -> None:
    _, _, (shown, resolved) = _run(db)
    chain = explain(shown, resolved, "de-13", "sovereignty")
    by_gate = {g["gate"]: g for g in chain["gates"]}
    short = _sha(bundled.RULES_FILE)[:12]
    assert by_gate["enefg-11-2-pue-1.2"]["source"] == (
        "https://gesetze.legal/bund/enefg/11 (2026-12-02, German federal statute (official "
        f"work; § 5 UrhG), sha256 {short})")
    text = render(chain)
    # the rubric's objectives with their stored source (the framework's PDF, its snapshot)
    assert ("EU Cloud Sovereignty Framework v1.2.1: SEAL the facts support\n  source: "
            "https://commission.europa.eu/document/download/") in text
    assert f"sha256 {_sha(bundled.OBJECTIVES_FILE)[:12]})" in text
    assert ("  fail: EnEfG § 11(2) Satz 1 Nr. 1: pue 1.3 breaks <= 1.2 (start of operation "
            "2026-09-01) [site: site survey]\n"
            "      source: https://gesetze.legal/bund/enefg/11 (2026-12-02") in text


def test_the_example_workbook_lists_the_gates_sources(tmp_path: Path, db: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "pipeline" / "example_proposal.toml"
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(example), "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    sheet = openpyxl.load_workbook(out / "scorecard.xlsx")["Sources"]
    rows = [r for r in sheet.iter_rows(values_only=True) if r and r[0] in (
        "regulatory_rule", "sovereignty_objectives")]
    # the example's own German node gives no site: each instrument's scope test needs data,
    # and it cites the rule it read; every candidate's rubric cites the objectives
    subjects = " | ".join(str(r[1]) for r in rows)
    for subject in ("EnEfG § 11 scope", "EED art. 12 scope",
                    "EU Cloud Sovereignty Framework v1.2.1, SOV-1 .. SOV-8"):
        assert subject in subjects
    assert all(_sha(bundled.RULES_FILE)[:12] in " ".join(map(str, r)) or
               _sha(bundled.OBJECTIVES_FILE)[:12] in " ".join(map(str, r)) for r in rows)


def test_a_run_of_an_earlier_vintage_reads_the_same_rules(db: Path) -> None:
    # the bundled load is vintage 2026-10; a 2026-09 run still has the law: the 9 rules and
    # the 8 objectives (the rules' own dates say when each applies)
    con = store.connect(db)
    load_bundled(con)
    earlier = read_market(con, "2026-09")
    con.close()
    assert earlier.regulatory_rules is not None and earlier.sovereignty_objectives is not None
    assert earlier.regulatory_rules.height == 9
    assert earlier.sovereignty_objectives["objective"].to_list() == [
        f"SOV-{n}" for n in range(1, 9)]


def test_a_rule_a_newer_load_dropped_is_not_read(db: Path) -> None:
    # the package as shipped, then a copy without the rule enefg-11-1-pue-1.5 (its whole
    # line) loaded at a later vintage: the rules read are that later load's, all of them and
    # only them (before, each rule_id came from its own latest load, so the dropped rule was
    # read forever from the first)
    from pipeline.store import market
    con = store.connect(db)
    load_bundled(con)
    shipped = market.regulatory_rules(con)["rule_id"].to_list()
    assert "enefg-11-1-pue-1.5" in shipped
    raw = bundled.read(bundled.RULES_FILE)
    lines = raw.content.splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(b"enefg-11-1-pue-1.5,")]
    assert len(kept) == len(lines) - 1
    files = {n: bundled.read(n) for n in bundled.FILES}
    files[bundled.RULES_FILE] = bundled.RawFile(raw.name, b"".join(kept))
    load_bundled(con, files, vintage="2099-01")
    read = market.regulatory_rules(con)["rule_id"].to_list()
    con.close()
    # the shipped rules in the file's order, less the dropped one
    assert read == [r for r in shipped if r != "enefg-11-1-pue-1.5"]
