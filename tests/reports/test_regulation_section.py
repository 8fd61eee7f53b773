"""The report's section on regulatory gates and the sovereignty rubric (reports/html/
regulation.py): a rubric table by framework objective, the gates with their outcome, legal
basis and citation, foreign text escaped; a result stored before the keys says so."""

from __future__ import annotations

import json
from pathlib import Path

from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from reports.frames import frames_of, gates_frame, rubric_frame
from reports.html.regulation import regulation_view
from reports.html.report import render_html
from schemas.result import Result

SITE = ('{ source = "survey <script>alert(1)</script>", commissioned_on = 2026-09-01, '
        'connected_power_kw = 800, it_power_kw = 600, renewable_share = 1.0, '
        'energy_reuse_factor = 0.12, eu_reporting = true }')


def _result(tmp_path: Path, db: Path) -> Result:
    path = tmp_path / "p.toml"
    path.write_text(proposal("gates", "[policy]\nregulation_as_of = 2026-12-01\n",
                             candidate("de", zone='"DE-LU"', pue="1.3", site=SITE),
                             candidate("fr", zone='"FR"')), encoding="utf-8")
    run = CliRunner().invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert run.exit_code == 0, run.output
    return Result.model_validate(json.loads(run.stdout))


def test_the_rubric_and_gates_in_the_json_and_the_report(tmp_path: Path, db: Path) -> None:
    result = _result(tmp_path, db)
    rubric = rubric_frame(result)
    # eight objectives per candidate, SOV-1 .. SOV-8 in order
    assert rubric.height == 16
    assert rubric.filter(rubric["id"] == "de")["objective"].to_list() == [
        f"SOV-{n}" for n in range(1, 9)]
    gates = gates_frame(result)
    failed = gates.filter(gates["status"] == "fail")
    # the one failure: the German site at PUE 1.3 > 1.2 (EnEfG § 11(2)), with its citation
    assert failed.select("id", "legal_basis", "source_url").rows() == [
        ("de", "EnEfG § 11(2) Satz 1 Nr. 1", "https://gesetze.legal/bund/enefg/11")]
    view = regulation_view(frames_of(result))
    assert view is not None
    # the rubric by objective: own hardware in the EU supports SEAL-4 on SOV-1 .. SOV-3 and
    # establishes none on the others ("–")
    assert view["rubric"][0] == ["de", "SEAL-4", "SEAL-4", "SEAL-4", "–", "–", "–", "–", "–"]
    html = render_html(result)
    section = html[html.index('<section id="regulation">'):]
    section = section[:section.index("</section>")]
    assert 'id="rubric-table"' in section and 'id="gates-table"' in section
    assert "FAIL (excluded)" in section and "pue 1.3 breaks &lt;= 1.2" in section
    # the site's source is foreign text: escaped, never markup
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in section


def test_a_result_stored_before_the_rubric_says_so(tmp_path: Path, db: Path) -> None:
    document = json.loads(_result(tmp_path, db).model_dump_json())
    for c in document["candidates"]:
        del c["sovereignty_rubric"], c["gates"]
    old = Result.model_validate(document)
    assert regulation_view(frames_of(old)) is None
    html = render_html(old)
    section = html[html.index('<section id="regulation">'):]
    assert "Sovereignty rubric and regulatory gates: not computed" in section[
        :section.index("</section>")]
