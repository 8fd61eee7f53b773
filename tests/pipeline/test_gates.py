"""Regulatory gates (pipeline/engine/ranking/gates.py) and the sovereignty rubric by framework
objective (pipeline/engine/ranking/sovereignty.py rubric_for), through the real resolve and
compute on the bundled reference data; every expected outcome worked out by hand from
sources/reference/regulatory_rules.csv in the comments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from proposals import candidate, proposal

from pipeline.engine.ranking.sovereignty import ProviderFacts, Qualification, rubric_for
from pipeline.engine.resolved import Market
from pipeline.engine.scorecard import Scorecard, compute
from pipeline.inputs import resolve
from schemas.proposal import ProposalError, parse
from sources.bundled import OBJECTIVES_FILE, RULES_FILE, RawFile, read
from sources.errors import ParseError
from sources.regulation import parse_objectives, parse_rules

#: a German own site's facts, started 1 September 2026 (after the 1 July 2026 cut-off of
#: EnEfG § 11(2)), 800 kW connected (EnEfG scope >= 300 kW), 600 kW IT (EED scope >= 500 kW)
SITE = ('{ source = "site survey 2026-11", commissioned_on = 2026-09-01, '
        'connected_power_kw = 800, it_power_kw = 600, renewable_share = 1.0, '
        'energy_reuse_factor = 0.12, eu_reporting = true }')
POLICY = "[policy]\nregulation_as_of = 2026-12-01\n"


def card(market: Market, text: str) -> Scorecard:
    path = Path("p.toml")
    parsed = parse(text, path)
    return compute(parsed, resolve(parsed, path, market), market, draws=50)


def gates_of(sc: Scorecard, cid: str) -> dict[str, dict[str, object]]:
    row = sc.table.filter(sc.table["id"] == cid).row(0, named=True)
    return {g["gate"]: g for g in row["gates"]}


def row(sc: Scorecard, cid: str) -> dict[str, object]:
    return sc.table.filter(sc.table["id"] == cid).row(0, named=True)


def test_a_german_site_at_pue_1_3_started_after_july_2026_fails_the_pue_gate(
        market: Market) -> None:
    text = proposal("gates", POLICY,
                    candidate("de-13", zone='"DE-LU"', pue="1.3", site=SITE),
                    candidate("de-115", zone='"DE-LU"', pue="1.15", site=SITE),
                    candidate("fr-13", zone='"FR"', pue="1.3", site=SITE))
    sc = card(market, text)
    de = gates_of(sc, "de-13")
    # started 2026-09-01 >= 2026-07-01: § 11(2) Nr. 1 applies from the start of operation
    # (built to reach PUE <= 1.2), in force on 2026-12-01; 1.3 > 1.2: fails
    assert de["enefg-11-2-pue-1.2"]["status"] == "fail"
    assert "pue 1.3 breaks <= 1.2" in str(de["enefg-11-2-pue-1.2"]["reason"])
    # the § 11(1) rules cover sites started before 2026-07-01 only: not listed
    assert "enefg-11-1-pue-1.5" not in de and "enefg-11-1-pue-1.3" not in de
    # ERF: started in [2026-07-01, 2027-07-01): at least 10 %; 12 % passes; the 15 % and
    # 20 % rules cover later starts
    assert de["enefg-11-2-erf-10"]["status"] == "pass"
    assert "enefg-11-2-erf-15" not in de and "enefg-11-2-erf-20" not in de
    # renewable share 100 %: the 50 % rule (since 2024-01-01) passes; the 100 % rule is in
    # force from 2027-01-01, after the assessment day: not applicable yet, and would be met
    assert de["enefg-11-5-res-50"]["status"] == "pass"
    assert de["enefg-11-5-res-100"]["status"] == "not_applicable"
    assert "would meet" in str(de["enefg-11-5-res-100"]["reason"])
    # EED: 600 kW IT >= 500 kW, and the operator reports: passes
    assert de["eed-12-reporting"]["status"] == "pass"
    excluded = row(sc, "de-13")
    assert excluded["eligible"] is False
    reason = str(excluded["exclusion_reason"])
    assert "fails EnEfG § 11(2) Satz 1 Nr. 1: pue 1.3 breaks <= 1.2" in reason
    assert "https://gesetze.legal/bund/enefg/11" in reason
    # the same site at PUE 1.15 <= 1.2 passes and stays eligible
    assert gates_of(sc, "de-115")["enefg-11-2-pue-1.2"]["status"] == "pass"
    assert row(sc, "de-115")["eligible"] is True
    # a French site is under no EnEfG rule: only the EU reporting duty
    assert list(gates_of(sc, "fr-13")) == ["eed-12-reporting"]
    assert row(sc, "fr-13")["eligible"] is True


def test_a_site_not_yet_started_is_checked_against_what_it_must_be_built_to(
        market: Market) -> None:
    planned = SITE.replace("2026-09-01", "2027-03-01")
    de = gates_of(card(market, proposal("planned", POLICY, candidate(
        "de", zone='"DE-LU"', pue="1.3", site=planned))), "de")
    # starting 2027-03-01, after the assessment day 2026-12-01: § 11(2) still binds the
    # site being built (no in-force date of its own), so PUE 1.3 > 1.2 fails already
    assert de["enefg-11-2-pue-1.2"]["status"] == "fail"


def test_an_older_site_meets_1_5_now_and_is_told_of_the_2030_limit(market: Market) -> None:
    older = SITE.replace("2026-09-01", "2019-03-01")
    text = proposal("older", "[policy]\nregulation_as_of = 2027-08-01\n",
                    candidate("de", zone='"DE-LU"', pue="1.4", site=older))
    de = gates_of(card(market, text), "de")
    # started before 2026-07-01: § 11(1). On 2027-08-01 the 1.5 limit (from 2027-07-01) is
    # in force: 1.4 <= 1.5 passes; the 1.3 limit starts 2030-07-01: 1.4 would fail it
    assert de["enefg-11-1-pue-1.5"]["status"] == "pass"
    assert de["enefg-11-1-pue-1.3"]["status"] == "not_applicable"
    assert "in force from 2030-07-01" in str(de["enefg-11-1-pue-1.3"]["reason"])
    assert "would fail" in str(de["enefg-11-1-pue-1.3"]["reason"])
    # the ERF rules are for sites started from 2026-07-01: not listed
    assert not [g for g in de if "erf" in g]
    # on 2027-08-01 the 100 % renewable rule is in force: 100 % passes
    assert de["enefg-11-5-res-100"]["status"] == "pass"


def test_a_gate_without_its_facts_says_so_and_does_not_exclude(market: Market) -> None:
    no_start = ('{ source = "survey", connected_power_kw = 800, it_power_kw = 400 }')
    small = '{ source = "survey", connected_power_kw = 200, it_power_kw = 150 }'
    text = proposal("missing", POLICY,
                    candidate("bare", zone='"DE-LU"'),
                    candidate("nostart", zone='"DE-LU"', site=no_start),
                    candidate("small", zone='"DE-LU"', site=small),
                    candidate("nopue", zone='"DE-LU"', site=SITE).replace("pue = 1.3\n", ""))
    sc = card(market, text)
    bare = gates_of(sc, "bare")
    # no site table: each instrument's scope is unknown: one needs_data row per instrument
    assert {g: o["status"] for g, o in bare.items()} == {
        "EnEfG § 11 scope": "needs_data", "EED art. 12 scope": "needs_data"}
    assert "site.connected_power_kw" in str(bare["EnEfG § 11 scope"]["reason"])
    nostart = gates_of(sc, "nostart")
    # in EnEfG scope (800 >= 300) but no start of operation: every windowed rule needs it
    assert nostart["enefg-11-2-pue-1.2"]["status"] == "needs_data"
    assert nostart["enefg-11-1-pue-1.5"]["status"] == "needs_data"
    assert "site.commissioned_on" in str(nostart["enefg-11-2-pue-1.2"]["reason"])
    # renewable share not given: needs data; 400 kW IT < 500 kW: the EED duty does not apply
    assert nostart["enefg-11-5-res-50"]["status"] == "needs_data"
    assert nostart["EED art. 12 scope"]["status"] == "not_applicable"
    # 200 kW < 300 kW: EnEfG § 11 does not apply
    assert gates_of(sc, "small")["EnEfG § 11 scope"]["status"] == "not_applicable"
    # no declared PUE: the assumed default is no evidence of the site's figure
    nopue = gates_of(sc, "nopue")["enefg-11-2-pue-1.2"]
    assert nopue["status"] == "needs_data" and "assumed default" in str(nopue["reason"])
    assert all(row(sc, c)["eligible"] for c in ("bare", "nostart", "small", "nopue"))


def cloud(cid: str, provider: str, region: str) -> str:
    block = candidate(cid, deployment='"cloud"', provider=f'"{provider}"', zone='""',
                      region=f'"{region}"')
    return block.replace('zone = ""\n', "")


def test_a_seal_minimum_excludes_by_the_rubric_of_each_objective(market: Market) -> None:
    text = proposal("seal", '[policy]\nmin_seal = { "SOV-2" = 2, "SOV-7" = 1 }\n',
                    cloud("scw", "scaleway", "fr-par-2"), cloud("az", "azure", "swedencentral"))
    sc = card(market, text)
    # Scaleway: EU provider and parent, EU region, no exposure: SOV-2 supports SEAL-2 >= 2;
    # no qualification recorded: SOV-7 not established, so that gate needs data, and the
    # policy's minimum, unknown, is not met: not eligible, the reason says which objective
    scw = gates_of(sc, "scw")
    assert scw["seal SOV-2"]["status"] == "pass"
    assert scw["seal SOV-7"]["status"] == "needs_data"
    assert row(sc, "scw")["eligible"] is False
    assert "does not establish EU Cloud Sovereignty Framework v1.2.1, SOV-7 at least SEAL-1" \
        in str(row(sc, "scw")["exclusion_reason"])
    # Azure: US company under the CLOUD Act in an EU region: SOV-2 supports SEAL-1 < 2
    az = gates_of(sc, "az")
    assert az["seal SOV-2"]["status"] == "fail"
    assert "EU Cloud Sovereignty Framework v1.2.1, SOV-2 at least SEAL-2" in str(
        row(sc, "az")["exclusion_reason"])
    # a cloud offer's data-centre duties are the provider's: no site gates
    assert [g for g in az if not g.startswith("seal")] == []
    rubric = {r["objective"]: r["seal"] for r in row(sc, "az")["sovereignty_rubric"]}
    assert rubric == {"SOV-1": 0, "SOV-2": 1, "SOV-3": 1, "SOV-4": None, "SOV-5": None,
                      "SOV-6": None, "SOV-7": None, "SOV-8": None}


def facts(**kw: object) -> ProviderFacts:
    base: dict[str, object] = dict(
        provider_id="p", provider_name="P SAS", hq_country="FR", parent_company=None,
        parent_hq_country=None, non_eu_law_exposure=False, exposure_basis=None,
        qualifications=())
    base.update(kw)
    return ProviderFacts(**base)  # type: ignore[arg-type]


def qualification(scheme: str, covers: bool) -> Qualification:
    return Qualification(scheme=scheme, version="3.2", scope="IaaS", covers_gpu_offers=covers,
                         qualified_on="2025-12-17", source_url="https://example.org/q")


def test_the_rubric_reads_qualifications_with_their_scope_and_date() -> None:
    snc = rubric_for("cloud", "FR", facts(qualifications=(qualification("SecNumCloud", True),)))
    # an immunity qualification covering the offer: SEAL-3 on SOV-2 and SOV-7, its scope and
    # date in the evidence
    assert snc["SOV-2"][0] == 3 and snc["SOV-7"][0] == 3
    assert "SecNumCloud 3.2 (IaaS, qualified 2025-12-17" in snc["SOV-7"][1]
    c5 = rubric_for("cloud", "DE", facts(hq_country="DE",
                                         qualifications=(qualification("BSI C5", True),)))
    # a certification without immunity: SOV-7 SEAL-2, SOV-2 stays at 2
    assert c5["SOV-2"][0] == 2 and c5["SOV-7"][0] == 2
    other = rubric_for("cloud", "FR", facts(qualifications=(qualification("SecNumCloud",
                                                                          False),)))
    # held for another product line: no SEAL established for the offer, and said so
    assert other["SOV-7"][0] is None and "not covering the GPU offer" in other["SOV-7"][1]
    assert rubric_for("cloud", "US", facts())["SOV-2"][0] == 0
    assert rubric_for("on_prem", "FR", None)["SOV-5"][0] is None


@pytest.mark.parametrize(("block", "key"), [
    ('site = { source = "s", renewable_share = 1.5 }', "site.renewable_share"),
    ('site = { source = "s", commissioned_on = "soon" }', "site.commissioned_on"),
    ('site = { source = "s", connected_power_kw = -3 }', "site.connected_power_kw"),
])
def test_a_bad_site_value_is_an_error_naming_its_key(block: str, key: str) -> None:
    text = proposal("bad", candidate("x")) + block + "\n"
    with pytest.raises(ProposalError) as err:
        parse(text, "p.toml")
    assert f"candidates[0] (id 'x').{key}" in str(err.value)


def test_bad_policy_and_cloud_site_are_errors() -> None:
    with pytest.raises(ProposalError, match=r"policy\.min_seal"):
        parse(proposal("bad", '[policy]\nmin_seal = { "SOV-9" = 2 }\n', candidate("x")), "p")
    with pytest.raises(ProposalError, match=r"policy\.min_seal"):
        parse(proposal("bad", '[policy]\nmin_seal = { "SOV-2" = 5 }\n', candidate("x")), "p")
    cloud_site = cloud("c", "scaleway", "fr-par-2") + 'site = { source = "survey" }\n'
    with pytest.raises(ProposalError, match="a cloud provider's data centre"):
        parse(proposal("bad", cloud_site), "p")


def test_the_cli_exits_1_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(proposal("bad", candidate("x")) + 'site = { source = "s", '
                    'energy_reuse_factor = 2 }\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", "from pipeline.cli import app; app()", "run",
                           str(path), "--db", str(tmp_path / "s.duckdb"), "--offline"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "site.energy_reuse_factor" in done.stderr


IDENTITY = "d47fcd988060aa4d887d49f48fa7a53f7b4f58c75e7fa1f35d3fe7c5874a17e2"


def test_an_unchanged_proposal_keeps_its_identity() -> None:
    # the sha256 of this proposal before the site, min_seal and regulation_as_of keys existed
    # (computed with the code before them)
    assert parse(proposal("same", candidate("x")), "p").sha256() == IDENTITY


def test_the_rule_table_is_checked_row_by_row() -> None:
    raw = read(RULES_FILE)
    assert parse_rules(raw).height == 9
    bad = raw.content.replace(b",pue,max,1.5,", b",pue2,max,1.5,", 1)
    with pytest.raises(ParseError, match=r"line 2, column 'metric'"):
        parse_rules(RawFile(raw.name, bad))


def test_the_objectives_table_is_checked() -> None:
    raw = read(OBJECTIVES_FILE)
    # the framework's weights 15 + 10 + 10 + 15 + 20 + 15 + 10 + 5 = 100 %
    assert parse_objectives(raw)["weight_pct"].to_list() == [15, 10, 10, 15, 20, 15, 10, 5]
    # SOV-5 at 25 %: the weights add up to 105, which the parser refuses
    bad = raw.content.replace(b"Supply chain sovereignty,20,", b"Supply chain sovereignty,25,")
    with pytest.raises(ParseError, match="add up to 105"):
        parse_objectives(RawFile(raw.name, bad))


def test_the_eu_reporting_duty_by_it_power(market: Market) -> None:
    from datetime import date

    from pipeline.engine.ranking import gates
    from pipeline.inputs.reference.regulation import rules

    def outcome(**site: object) -> tuple[str, str]:
        [o] = gates.evaluate("on_prem", "ES", gates.SiteFacts(**site),  # type: ignore[arg-type]
                             rules(market), date(2026, 12, 1))
        return o["status"], o["reason"]

    # 600 kW IT >= 500 kW: the duty applies; not reporting breaks it, reporting meets it
    assert outcome(it_power_kw=600, eu_reporting=False) == (
        "fail", "operator reporting declared absent breaks (reporting required)")
    assert outcome(it_power_kw=600, eu_reporting=True)[0] == "pass"
    assert outcome(it_power_kw=600)[0] == "needs_data"
    # 499 kW < 500 kW: out of scope
    assert outcome(it_power_kw=499, eu_reporting=False)[0] == "not_applicable"
    # Norway is in the EEA, not the EU: the directive's rule is not applied there
    assert gates.evaluate("on_prem", "NO", gates.SiteFacts(it_power_kw=600), rules(market),
                          date(2026, 12, 1)) == []
