"""LibreOffice computes the workbook on opening: a price changed in the file (as a script or
another tool would change it, with no recalculation) moves CPM and the monthly cost when
LibreOffice opens it, and the untouched file gives the engine's figures. Under the bundled
example's plan the CPM is the horizon's (a value), and a changed price or demand moves the
first month's cost, fleet and Sizing sheet.

LibreOffice keeps the cached results of a file whose producer is Microsoft Excel and never
recalculates it by default; the workbook stores no cached results and names this project as
its producer (reports/files/xlsx.py `_Packager`), so every formula is computed on loading.
Headless LibreOffice (`soffice`, Debian's libreoffice-calc-nogui, which .ci/run installs)
converts the Scorecard sheet to CSV; skipped when it is absent.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter

from reports.files.xlsx import GENERATOR, write_xlsx
from schemas.outputs import OUTPUTS
from tests.reports.conftest import FIXTURES, typed

SOFFICE = shutil.which("soffice")
pytestmark = pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not "
                                "installed: apt-get install libreoffice-calc-nogui")


def scorecard_csv(book: Path, folder: Path, sheet: str = "Scorecard") -> list[dict[str, str]]:
    """A sheet (the Scorecard by default) as LibreOffice computes it on opening, as CSV: comma,
    double quote, UTF-8 (76), values as stored, not as shown (token 9 false), the sheet's
    number last."""
    number = [s.title for s in load_workbook(book, read_only=True).worksheets].index(sheet) + 1
    options = f"44,34,76,1,,0,false,true,false,false,false,{number}"
    subprocess.run(
        [str(SOFFICE), "--headless", "--norestore",
         f"-env:UserInstallation={(folder / 'profile').as_uri()}",
         "--convert-to", f"csv:Text - txt - csv (StarCalc):{options}",
         "--outdir", str(folder), str(book)],
        check=True, capture_output=True, timeout=120)
    written = folder / f"{book.stem}-{sheet}.csv"
    with written.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def with_input(book: Path, out: Path, cell: str, value: float, sheet: str = "Inputs") -> None:
    """A copy of `book` with `sheet`'s `cell` (Inputs by default) set to `value` in its XML,
    nothing else touched (no recalculation: what openpyxl or a script leaves)."""
    sheets = [s.title for s in load_workbook(book, read_only=True).worksheets]
    part = f"xl/worksheets/sheet{sheets.index(sheet) + 1}.xml"
    with zipfile.ZipFile(book) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == part:
                text, found = re.subn(rf'(<c r="{cell}"[^>]*><v>)[^<]*(</v>)',
                                      rf"\g<1>{value!r}\g<2>", data.decode("utf-8"))
                assert found == 1
                data = text.encode("utf-8")
            dst.writestr(info, data)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    result = json.loads((FIXTURES / "example_scorecard.json").read_text("utf-8"))
    path = tmp_path_factory.mktemp("lo") / "example.xlsx"
    write_xlsx(typed(result), path)
    return result, path


def test_the_workbook_names_this_project_as_its_producer(example: tuple[dict, Path]) -> None:
    with zipfile.ZipFile(example[1]) as book:
        app = book.read("docProps/app.xml").decode("utf-8")
    assert f"<Application>{GENERATOR}</Application>" in app and "Microsoft" not in app


def test_libreoffice_gives_the_engine_s_figures(example: tuple[dict, Path],
                                                tmp_path: Path) -> None:
    result, path = example
    rows = scorecard_csv(path, tmp_path)
    cpm, monthly = OUTPUTS["cpm_eur_per_mtok"].label, OUTPUTS["monthly_cost_eur"].label
    assert [r["Candidate id"] for r in rows] == [c["id"] for c in result["candidates"]]
    for row, candidate in zip(rows, result["candidates"], strict=True):
        engine = candidate["cpm_eur_per_mtok"]
        assert (row[cpm] == "") if engine is None else (
            float(row[cpm]) == pytest.approx(engine, rel=1e-9)), candidate["id"]
    # FR H100: 11 EUR/h x 6 instances x 730 h = 48,180 EUR/month
    assert float(rows[0][monthly]) == pytest.approx(48_180.0, rel=1e-12)


def first_price_set(path: Path, tmp_path: Path, eur_per_hour: float) -> list[dict[str, str]]:
    """The Scorecard sheet's rows, recalculated by LibreOffice, once the first candidate's
    price per hour in the Inputs sheet is `eur_per_hour`."""
    headers = [c.value for c in load_workbook(path, read_only=True)["Inputs"][1]]
    price = get_column_letter(headers.index(OUTPUTS["price_eur_per_hour"].label) + 1)
    changed = tmp_path / "changed.xlsx"
    with_input(path, changed, f"{price}2", eur_per_hour)
    return scorecard_csv(changed, tmp_path)


def test_a_price_changed_in_the_file_moves_cpm_in_libreoffice(example: tuple[dict, Path],
                                                              tmp_path: Path) -> None:
    result, _ = example
    # the Scorecard's formulas are one month's steps: the result without its plan (under a
    # plan the CPM is the horizon's, the engine's value: the next test)
    result = {k: v for k, v in result.items() if k != "plan"}
    path = tmp_path / "one-month.xlsx"
    write_xlsx(typed(result), path)
    rows = first_price_set(path, tmp_path, 22.0)
    cpm, monthly = OUTPUTS["cpm_eur_per_mtok"].label, OUTPUTS["monthly_cost_eur"].label
    # FR H100 serves 964.506 tokens/s per billed instance = 3.472222 Mtok per billed hour:
    # 22 EUR/h / 3.472222 = 6.336 EUR/Mtok (3.168 at 11); 22 x 6 x 730 = 96,360 EUR a month
    assert rows[0]["Candidate id"] == "onprem-fr-h100-fp16"
    assert float(rows[0][cpm]) == pytest.approx(6.336, rel=1e-12)
    assert float(rows[0][monthly]) == pytest.approx(96_360.0, rel=1e-12)
    # the next candidate does not move (its first month's CPM: the formula's)
    nxt = result["candidates"][1]
    assert float(rows[1][cpm]) == pytest.approx(
        nxt["detail"].get("first_month_cpm_eur_per_mtok", nxt["cpm_eur_per_mtok"]), rel=1e-9)


def test_under_a_plan_the_cpm_is_the_horizon_s_value(example: tuple[dict, Path],
                                                      tmp_path: Path) -> None:
    # the example plans 48 months: its CPM is the horizon's, written as the engine's value
    # (a change of price moves the first month's cost, a formula, not the plan's CPM)
    result, path = example
    assert "plan" in result
    rows = first_price_set(path, tmp_path, 22.0)
    cpm, monthly = OUTPUTS["cpm_eur_per_mtok"].label, OUTPUTS["monthly_cost_eur"].label
    assert float(rows[0][monthly]) == pytest.approx(96_360.0, rel=1e-12)
    assert float(rows[0][cpm]) == pytest.approx(result["candidates"][0]["cpm_eur_per_mtok"],
                                                rel=1e-9)


def test_libreoffice_computes_a_derived_demand_and_what_reads_it(tmp_path: Path) -> None:
    """A request-shaped demand: tokens/day is a formula over the request rate on the Demand
    sheet; LibreOffice computes it on opening (a cached 0 there made every figure reading it
    wrong), and the Scorecard's CPM and instances are the engine's."""
    from tests.reports.test_workbook import REQUESTS, scored

    result, book = scored(REQUESTS, tmp_path)
    demand = {row["Demand input"]: row["Value"] for row in
              scorecard_csv(book.path, tmp_path, "Demand")}
    # 20 requests/s x 86,400 s x 250 output tokens = 432,000,000 tokens/day
    assert float(demand[OUTPUTS["demand_tokens_per_day"].label]) == pytest.approx(432e6,
                                                                                   rel=1e-12)
    (row,) = scorecard_csv(book.path, tmp_path)
    (engine,) = result["candidates"]
    assert float(row[OUTPUTS["cpm_eur_per_mtok"].label]) == pytest.approx(
        engine["cpm_eur_per_mtok"], rel=1e-9)
    assert float(row[OUTPUTS["instances"].label]) == engine["detail"]["instances"]


def test_under_a_plan_every_figure_agrees_with_the_json(example: tuple[dict, Path],
                                                       tmp_path: Path) -> None:
    """Under a plan CPM, J/token and carbon are the horizon's; a formula reading them
    (energy per Mtok from J/token, its cost, the per-request figures) would mix the horizon's
    figure with one month's inputs (FR H200's kWh/Mtok was 0.62478 against the JSON's
    0.63301). LibreOffice's recalculation gives every figure the JSON holds."""
    result, path = example
    assert "plan" in result
    rows = scorecard_csv(path, tmp_path)
    names = {OUTPUTS[n].label: n for n in OUTPUTS}
    compared = set()
    for row, candidate in zip(rows, result["candidates"], strict=True):
        for label, cell in row.items():
            name = names.get(label)
            engine = candidate.get(name) if name in candidate else (
                candidate["detail"].get(name))
            if not isinstance(engine, (int, float)) or isinstance(engine, bool):
                continue
            assert cell != "", (candidate["id"], name)
            # a share's cell is stored as its percentage ("34.4466490299824%")
            number = float(cell[:-1]) / 100 if cell.endswith("%") else float(cell)
            assert number == pytest.approx(engine, rel=1e-9, abs=1e-12), (
                candidate["id"], name)
            compared.add(name)
    # the steps that read the plan's figures are among those compared
    assert {"facility_kwh_per_mtok", "electricity_eur_per_mtok", "energy_j_per_token",
            "carbon_gco2e_per_mtok", "monthly_cost_eur"} <= compared


def test_under_a_plan_the_demand_moves_the_sizing_and_the_recommendation_s_cost(
        example: tuple[dict, Path], tmp_path: Path) -> None:
    """The bundled example with its plan: Demand (tokens/day) 500M -> 1G on the Demand sheet
    moves every fleet of the first month, on the Scorecard, the Sizing sheet and the
    Recommendation's monthly cost; the CPMs are the horizon's values and stay."""
    result, path = example
    assert "plan" in result
    labels = [row[0] for row in load_workbook(path, read_only=True)["Demand"].iter_rows(
        values_only=True)]
    changed = tmp_path / "demand.xlsx"
    cell = f"B{labels.index(OUTPUTS['demand_tokens_per_day'].label) + 1}"
    with_input(path, changed, cell, 1e9, "Demand")
    cpm, monthly = OUTPUTS["cpm_eur_per_mtok"].label, OUTPUTS["monthly_cost_eur"].label
    instances = OUTPUTS["instances"].label
    card = {r["Candidate id"]: r for r in scorecard_csv(changed, tmp_path)}
    sizing = {r["Candidate id"]: r for r in scorecard_csv(changed, tmp_path, "Sizing")}
    # the Recommendation sheet's first row is "Recommended", the id, its note: read as CSV
    # headers, each figure's row is keyed by its label, its value under the id
    chosen = {r["Recommended"]: r for r in scorecard_csv(changed, tmp_path,
                                                         "Recommendation")}
    # FR H100: a peak of 1e9 / 86,400 x 2 = 23,148 tokens/s over 2,800 x (1 - 0.25) = 2,100
    # per instance: ceil(11.02) = 12 instances (6 at 500M), 12 x 11 EUR/h x 730 h = 96,360
    fr = "onprem-fr-h100-fp16"
    for row in (card[fr], sizing[fr]):
        assert float(row[instances]) == 12
        assert float(row[monthly]) == pytest.approx(96_360.0, rel=1e-12)
    engine = {c["id"]: c for c in result["candidates"]}
    assert float(card[fr][cpm]) == pytest.approx(engine[fr]["cpm_eur_per_mtok"], rel=1e-9)
    # the recommended OVHcloud fleet is elastic: 3.858 busy instances (above its floor of 2)
    # become 7.716, so its month doubles, 31,543.21 -> 63,086.42 EUR; its CPM, the
    # horizon's, is the engine's value
    ovh = engine["ovhcloud-h100x4-fp8"]
    assert result["recommendation"]["candidate"] == ovh["id"]
    assert chosen[cpm][ovh["id"]] != ""
    assert float(chosen[cpm][ovh["id"]]) == pytest.approx(ovh["cpm_eur_per_mtok"], rel=1e-9)
    assert float(chosen[monthly][ovh["id"]]) == pytest.approx(
        2 * ovh["detail"]["monthly_cost_eur"], rel=1e-9)
    assert round(2 * ovh["detail"]["monthly_cost_eur"], 2) == 63_086.42
