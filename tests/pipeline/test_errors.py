"""Bad proposals and bad reference rows: a message naming file, key or row and check; exit 1;
the database left as it was."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline import store
from pipeline.cli import app
from pipeline.ingest.bundled import load_bundled
from schemas.table import ValidationFailed
from sources import bundled
from sources.errors import ParseError

runner = CliRunner()
EXAMPLE = resources.files("pipeline").joinpath("example_proposal.toml").read_text("utf-8")


def snapshot(db: Path) -> dict[str, list]:
    con = duckdb.connect(str(db))
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
    state = {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall())) for t in tables}
    con.close()
    return state


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('cost = { offer = "scaleway:H100-SXM-8-80G", pricing = "on_demand" }',
         'cost = { offer = "scaleway:H100-SXM-16-80G", pricing = "on_demand" }',
         r"candidates\[4\] \(id 'scaleway-h100x8-fp8'\)\.cost\.offer: no offer "
         r"'scaleway:H100-SXM-16-80G'.*available: .*scaleway:H100-SXM-8-80G \(fr-par-2"),
        ('zone = "ES"', 'zone = "XX"',
         r"candidates\[3\] \(id 'onprem-es-h200-fp8'\)\.zone: unknown zone 'XX'; "
         r"known zones: AT, BE, DE-LU, ES, FR"),
        ('gpu = "H200-SXM-141GB"', 'gpu = "H900"',
         r"candidates\[1\] \(id 'onprem-fr-h200-fp8'\)\.gpu: unknown accelerator 'H900'"),
        ('id = "onprem-de-h200-fp8"', 'id = "onprem-fr-h200-fp8"',
         r"candidate id 'onprem-fr-h200-fp8' is used twice"),
        ("pue = { low = 1.25,", "pue = { low = 0.9,",
         r"candidates\[3\] \(id 'onprem-es-h200-fp8'\): pue = 0.9 is below 1"),
        ('cost = { tco = "hgx-h200" }', 'cost = { tco = "hgx-b200" }',
         r"candidates\[1\] \(id 'onprem-fr-h200-fp8'\)\.cost\.tco: 'hgx-b200' names no "
         r"\[tco.hgx-b200\] table \(defined: hgx-h200, hgx-h200-de\)"),
        # a pattern and a minimum length said in words, not as pydantic's regex and count
        ('id = "onprem-fr-h200-fp8"', 'id = "nœud-fr-h100-été"',
         r"candidates\[1\] \(id 'nœud-fr-h100-été'\)\.id: 'nœud-fr-h100-été': use ASCII "
         r"letters, digits, `_`, `\.` and `-` only \(no accents, no spaces\), starting with a "
         r"letter or digit\n"),
        ('throughput = { tokens_per_s = { low = 2400, mode = 2800, high = 3100 }, source = '
         '"example figure, declared: 70B BF16 on 8 x H100 SXM meets the 60 ms TPOT SLO at about '
         '350 tokens/s per GPU (docs/evidence.md: how to measure your own)" }',
         'throughput = { evidence = "results/", proxy = "H200" }',
         r"candidates\[0\] \(id 'onprem-fr-h100-fp16'\)\.throughput\.proxy: 'H200': a "
         r"proxy says why evidence of another model, precision or GPU stands in for the "
         r"candidate's own \(it is graded `proxy`\): write that reason as a sentence \(10 "
         r"characters at least, 4 given\)"),
        ("min_sovereignty = 2", "min_sovereignty = 2\nmax_cost = 3",
         r"policy\.max_cost: unknown key"),
    ],
)
def test_bad_proposal_exits_1_naming_file_and_key(tmp_path: Path, db: Path, old: str, new: str,
                                                  expected: str) -> None:
    assert runner.invoke(app, ["run", "--db", str(db), "--json"]).exit_code == 0
    before = snapshot(db)
    bad = tmp_path / "bad.toml"
    assert old in EXAMPLE
    bad.write_text(EXAMPLE.replace(old, new, 1))
    result = runner.invoke(app, ["run", str(bad), "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    message = result.stderr
    assert str(bad) in message
    assert __import__("re").search(expected, message), message
    assert snapshot(db) == before


def _altered(name: str, old: str, new: str) -> dict[str, bundled.RawFile]:
    files = {n: bundled.read(n) for n in bundled.FILES}
    text = files[name].content.decode()
    assert old in text
    files[name] = bundled.RawFile(name, text.replace(old, new, 1).encode())
    return files


def test_bad_reference_row_fails_validation_and_loads_nothing(db: Path) -> None:
    con = store.connect(db)
    load_bundled(con)
    before = con.execute("SELECT count(*), sum(tdp_w) FROM core__hardware").fetchall()
    # An H100 SXM board at 700 kW: a unit slip (W vs mW) the bounds exist to catch.
    files = _altered("hardware.csv", "H100-SXM-80GB,NVIDIA,SXM,80,3350,989.5,1979,700,",
                     "H100-SXM-80GB,NVIDIA,SXM,80,3350,989.5,1979,700000,")
    with pytest.raises(ValidationFailed) as caught:
        load_bundled(con, files)
    report = caught.value.report()
    assert "hardware.csv" in report and "core__hardware" in report
    assert "column 'tdp_w', check less_than_or_equal_to(3000)" in report
    assert "'gpu': 'H100-SXM-80GB'" in report  # the offending row is shown
    assert con.execute("SELECT count(*), sum(tdp_w) FROM core__hardware").fetchall() == before
    failed = con.execute("SELECT status, error FROM loads WHERE status = 'failed'").fetchall()
    assert len(failed) == 1 and "tdp_w" in failed[0][1]  # the report is stored


def test_unparseable_reference_value_names_file_line_and_column(db: Path) -> None:
    con = store.connect(db)
    files = _altered("electricity_prices_monthly.csv", "AT,2025-01,134.18",
                     "AT,2025-01,134,18")
    with pytest.raises(ParseError) as caught:
        load_bundled(con, files)
    # Line 2 is the first data row; the extra comma makes a field count error for polars,
    # or a bad number: either way the file is named.
    assert "electricity_prices_monthly.csv" in str(caught.value)
    files = _altered("electricity_prices_monthly.csv", "AT,2025-01,134.18", "AT,2025-01,n/a")
    with pytest.raises(ParseError, match=r"electricity_prices_monthly.csv: line 2, column "
                                         r"'price_eur_per_mwh': 'n/a' is not a Float64"):
        load_bundled(con, files)
    assert con.execute("SELECT count(*) FROM core__electricity_prices").fetchall() == [(0,)]
