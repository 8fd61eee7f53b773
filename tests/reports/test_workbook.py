"""The workbook computes: its Scorecard's formulas, evaluated by the `formulas` package (an
Excel engine in Python; LibreOffice is not needed), give the engine's figures for every
candidate and step, an empty cell ("") where the engine's figure is null, and move by the
hand-computed amount when an input cell changes.

Two results: the bundled example's (tests/fixtures/reports/example_scorecard.json: a demand;
declared, TCO and on-demand prices; provisioned and elastic capacity) and a proposal without
a demand run through the engine here (declared utilisation, a TCO node, an elastic cloud, a
cloud candidate without a power figure: a null input).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from openpyxl.utils import get_column_letter

from pipeline.engine.metrics import STEPS
from pipeline.run import execute
from reports.files.xlsx import TEMPLATE_FUNCTIONS, fill, header, write_xlsx
from reports.frames import value
from schemas.outputs import OUTPUTS
from schemas.result import PLAN_FIGURES
from tests.proposals import candidate, proposal
from tests.reports.conftest import FIXTURES, typed

formulas = pytest.importorskip("formulas", reason="formulas (a dev dependency) evaluates it")

EXAMPLE = FIXTURES / "example_scorecard.json"
PROPOSAL = Path(__file__).resolve().parents[2] / "pipeline" / "example_proposal.toml"

IDLE = '{ watts = 5600, idle_watts = 800, boundary = "gpu_board", source = "TDP" }'
TCO = """
[policy]
min_sovereignty = 1
[tco.node]
source = "quote"
capex = { gpus = 280_000, servers = 45_000 }
amortisation_months = 48
cost_of_capital = 0.05
residual_eur = 25_000
maintenance_share_per_year = 0.06
staff_eur_per_year = 15_000
hosting = { kind = "colocation", eur_per_kw_month = 200 }
electricity = { basis = "wholesale", retail_multiplier = 1.0, grid_fee_eur_per_kwh = 0.045 }
[tco.own-site]
source = "quote"
capex = { gpus = 280_000, servers = 45_000 }
amortisation_months = 60
cost_of_capital = 0.0
maintenance_share_per_year = 0.05
hosting = { kind = "own_site", eur_per_year = 9_000 }
electricity = { basis = "contract", eur_per_kwh = 0.12 }
"""


def without(block: str, *keys: str) -> str:
    """A candidate block without the lines of `keys`."""
    return "".join(line + "\n" for line in block.splitlines()
                   if line.split(" = ")[0] not in keys)


#: no [demand]: declared utilisation (a price and a TCO node), an elastic cloud (busy hours
#: only), a cloud candidate without a power figure (a null input), and a TCO node on its own
#: site at a contract tariff, without cost of capital, residual or staff (PMT at rate 0);
#: allow_estimates = false derives no power from the TDP (none of them is estimated), so
#: the cloud candidate's power stays a null input
NO_DEMAND = proposal(
    "Workbook without demand",
    TCO.replace("[policy]\n", "[policy]\nallow_estimates = false\n"),
    candidate("own-declared", utilisation="0.55", power=IDLE),
    candidate("own-tco", zone='"DE-LU"', gpu='"H200-SXM-141GB"', pue="1.4",
              utilisation="0.7", power=IDLE, cost='{ tco = "node" }'),
    without(candidate(
        "ovh-elastic", deployment='"cloud"', provider='"ovhcloud"', gpu='"H100-PCIe-80GB"',
        gpu_count="4", throughput='{ tokens_per_s = 1500, source = "bench" }',
        power='{ watts = 1400, idle_watts = 240, boundary = "gpu_board", source = "TDP" }',
        cost='{ offer = "ovhcloud:h100-1520", pricing = "on_demand" }',
        capacity='"elastic"'), "zone"),
    without(candidate(
        "scaleway-no-power", deployment='"cloud"', provider='"scaleway"', pue="1.25",
        utilisation="0.6", throughput='{ tokens_per_s = 3600, source = "bench" }',
        cost='{ offer = "scaleway:H100-SXM-8-80G", pricing = "on_demand" }'), "zone", "power"),
    candidate("own-site", utilisation="0.5", power=IDLE, cost='{ tco = "own-site" }'),
)


#: a request-shaped demand and a roofline estimate (its batch is the operating concurrency):
#: the Little's-law steps have figures
REQUESTS = proposal(
    "Workbook request demand", """
[policy]
allow_estimates = true
[demand]
requests_per_s = 20
prompt_tokens = 800
output_tokens = 250
output_tokens_p95 = 600
peak_factor = 1.25
headroom = 0.2
""", candidate("est", power=IDLE, throughput='{ estimate = { model = "Llama-3.1-70B", '
               'precision = "fp8", batch = 32, context = 4096, efficiency = 0.6 } }'))

#: the figures the issue names, each a formula on the Scorecard
COMPUTED = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok",
            "electricity_eur_per_mtok", "facility_kwh_per_mtok", "cost_eur_per_hour",
            "billed_utilisation", "served_tokens_per_s", "average_power_w")


class Book:
    """A written workbook: its cells as openpyxl reads them (formula text, formats) and the
    values the `formulas` package computes for every formula."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cells = openpyxl.load_workbook(path)
        self.model = formulas.ExcelModel().loads(str(path)).finish()
        self.values = self.model.calculate()

    def column(self, sheet: str, label: str) -> str:
        """The letter of the column headed `label` on `sheet`."""
        headers = [c.value for c in self.cells[sheet][1]]
        return get_column_letter(headers.index(label) + 1)

    def computed(self, sheet: str, cell: str, solution: Any = None) -> Any:
        found = (solution or self.values)[f"'[{self.path.name}]{sheet.upper()}'!{cell}"]
        return found.value[0][0]

    def changed(self, sheet: str, cell: str, new: float) -> Any:
        """The whole workbook recomputed with one input cell set to `new`."""
        return self.model.calculate(
            inputs={f"'[{self.path.name}]{sheet.upper()}'!{cell}": new})


def same(got: Any, expected: float | None) -> bool:
    if expected is None:
        return got == ""
    return isinstance(got, int | float) and math.isclose(got, expected, rel_tol=1e-9)


def check_every_step(book: Book, result: dict[str, Any]) -> int:
    """Every step column on the Scorecard, every candidate: the computed value is the
    engine's (rel 1e-9), "" where the engine's is null; a mix's cell is that value itself
    (it has no Inputs to compute from). Returns the cells checked."""
    headers = [c.value for c in book.cells["Scorecard"][1]]
    checked, wrong = 0, []
    for step in STEPS:
        label = OUTPUTS[step.name].label
        if label not in headers:
            continue
        letter = book.column("Scorecard", label)
        for row, item in enumerate(typed(result).candidates, start=2):
            cell = book.cells["Scorecard"][f"{letter}{row}"]
            if item.deployment == "mix":
                got = "" if cell.value is None else cell.value
                assert cell.data_type != "f", (step.name, item.id)  # a value
            else:
                assert cell.data_type == "f", (step.name, item.id)  # a formula
                got = book.computed("Scorecard", f"{letter}{row}")
            expected = value(item, step.name)
            checked += 1
            if not same(got, expected):
                wrong.append((step.name, item.id, got, expected))
    assert wrong == []
    for name in COMPUTED:  # the figures are all there
        assert OUTPUTS[name].label in headers, name
    return checked


def no_errors_and_formulas_only_on_the_scorecard(book: Book) -> None:
    errors = [k for k, v in book.values.items()
              if isinstance(v.value[0][0], str) and v.value[0][0].startswith("#")]
    assert errors == []
    elsewhere = [ws.title for ws in book.cells for row in ws.iter_rows() for c in row
                 if c.data_type == "f" and ws.title not in ("Scorecard", "Demand", "Sizing",
                                                            "Recommendation")]
    assert elsewhere == []


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Book]:
    """The bundled example without its [horizon]: a row's formulas are one month's steps
    (under a plan the CPM, energy and carbon are the horizon's values:
    test_under_a_plan_the_objectives_are_the_engine_s_values)."""
    text = PROPOSAL.read_text("utf-8")
    start = text.index("[horizon]")
    return scored(text[:start] + text[text.index("\n\n", start) + 2:],
                  tmp_path_factory.mktemp("example"))


def test_under_a_plan_the_objectives_are_the_engine_s_values(tmp_path: Path) -> None:
    # the example's result (with its plan): the four figures the plan makes the horizon's are
    # values equal to the engine's, the other steps formulas; a Plan sheet holds the months
    result = json.loads(EXAMPLE.read_text("utf-8"))
    assert "plan" in result
    write_xlsx(typed(result), tmp_path / "plan.xlsx")
    book = Book(tmp_path / "plan.xlsx")
    for name in PLAN_FIGURES:
        letter = book.column("Scorecard", OUTPUTS[name].label)
        for row, item in enumerate(typed(result).candidates, start=2):
            cell = book.cells["Scorecard"][f"{letter}{row}"]
            assert cell.data_type == "n" or cell.value is None, (name, item.id)
            assert same(cell.value, value(item, name)) or (cell.value is None and
                                                           value(item, name) is None)
    monthly = book.column("Scorecard", OUTPUTS["monthly_cost_eur"].label)
    assert book.cells["Scorecard"][f"{monthly}2"].data_type == "f"
    plan = book.cells["Plan"]
    assert plan["A2"].value == result["plan"]["schedules"][0]["candidate"]
    assert plan.max_row == 1 + sum(len(s["months"]) for s in result["plan"]["schedules"])


def scored(text: str, folder: Path) -> tuple[dict[str, Any], Book]:
    """The engine's result for proposal `text` (`scorecard run --json`) and its workbook."""
    path = folder / "proposal.toml"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = execute(path, vintage=None, out=None, db=folder / "store.duckdb",
                       json_out=True)
    assert code == 0
    result = json.loads(out.getvalue())
    write_xlsx(typed(result), folder / "scorecard.xlsx")
    return result, Book(folder / "scorecard.xlsx")


@pytest.fixture(scope="module")
def no_demand(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Book]:
    return scored(NO_DEMAND, tmp_path_factory.mktemp("no_demand"))


def test_the_example_workbook_computes_the_engine_figures(
        example: tuple[dict[str, Any], Book]) -> None:
    result, book = example
    # 9 candidates x every step on the sheet (25 with a demand, no Little's law: the 21
    # before issue 15's headroom_instances and headroom, redundancy and period costs; 27 since
    # issue 26 split the goodput count, goodput_instances, from the binding `instances`; 32
    # with the market-based factor and carbon and the three per-request figures; 33 since
    # issue 30's API candidate brought token_cost_eur_per_hour); 10 with the hybrid, whose
    # cells hold the engine's values
    assert check_every_step(book, result) == 10 * 33
    no_errors_and_formulas_only_on_the_scorecard(book)
    monthly = book.column("Scorecard", OUTPUTS["monthly_cost_eur"].label)
    # FR H100: 11 EUR/h x 6 instances x 730 h = 48,180 EUR/month (the engine's, computed)
    assert book.computed("Scorecard", f"{monthly}2") == pytest.approx(48_180.0, rel=1e-12)


def test_changing_a_price_moves_cpm_and_the_monthly_cost(
        example: tuple[dict[str, Any], Book]) -> None:
    result, book = example
    assert result["candidates"][0]["id"] == "onprem-fr-h100-fp16"
    price = book.column("Inputs", OUTPUTS["price_eur_per_hour"].label)
    assert book.cells["Inputs"][f"{price}2"].value == 11.0
    solution = book.changed("Inputs", f"{price}2", 22.0)
    cpm = book.column("Scorecard", OUTPUTS["cpm_eur_per_mtok"].label)
    monthly = book.column("Scorecard", OUTPUTS["monthly_cost_eur"].label)
    # FR H100 serves 964.506 tokens/s per billed instance (u = 0.34447 of 2,800):
    # 964.506 x 3600 / 1e6 = 3.472222 Mtok/h; 11 EUR/h -> 3.168, 22 EUR/h -> 6.336 EUR/Mtok;
    # monthly 22 x 6 x 730 = 96,360 EUR (was 48,180)
    assert book.computed("Scorecard", f"{cpm}2") == pytest.approx(3.168, rel=1e-12)
    assert book.computed("Scorecard", f"{cpm}2", solution) == pytest.approx(6.336, rel=1e-12)
    assert book.computed("Scorecard", f"{monthly}2", solution) == pytest.approx(96_360.0,
                                                                                rel=1e-12)
    # the other candidates do not move: FR H200 stays at its engine CPM
    assert book.computed("Scorecard", f"{cpm}3", solution) == pytest.approx(
        result["candidates"][1]["cpm_eur_per_mtok"], rel=1e-12)


def test_a_proposal_without_demand_computes_too(
        no_demand: tuple[dict[str, Any], Book]) -> None:
    result, book = no_demand
    ids = [c["id"] for c in result["candidates"]]
    assert ids == ["own-declared", "own-tco", "ovh-elastic", "scaleway-no-power", "own-site"]
    # 5 candidates x the 16 steps a proposal without demand has figures for: the 21 of the
    # example but instances, busy and billed instances, monthly cost and monthly capital
    # and with the market-based factor and carbon and the three per-request figures (21)
    assert check_every_step(book, result) == 5 * 21
    no_errors_and_formulas_only_on_the_scorecard(book)
    cpm = book.column("Scorecard", OUTPUTS["cpm_eur_per_mtok"].label)
    used = book.column("Scorecard", OUTPUTS["billed_utilisation"].label)
    # own-declared: 11 / (4000 x 0.55 x 3600 / 1e6 = 7.92 Mtok/h) = 1.388889 EUR/Mtok
    assert book.computed("Scorecard", f"{cpm}2") == pytest.approx(11 / 7.92, rel=1e-12)
    # ovh-elastic: no demand, elastic -> only busy hours are paid: billed utilisation 1
    assert book.computed("Scorecard", f"{used}4") == 1
    # own-site: capital at rate 0 is capex / months: 325,000 / 60 x 12 / 8760 = 7.4201 EUR/h;
    # electricity at the contract's 0.12 EUR/kWh
    capital = book.column("Scorecard", OUTPUTS["capital_eur_per_hour"].label)
    assert book.computed("Scorecard", f"{capital}6") == pytest.approx(
        325_000 / 60 * 12 / 8760, rel=1e-12)
    tariff = book.column("Scorecard", OUTPUTS["electricity_eur_per_kwh"].label)
    assert book.computed("Scorecard", f"{tariff}6") == 0.12


def test_a_null_input_is_an_empty_cell_and_empty_figures(
        no_demand: tuple[dict[str, Any], Book]) -> None:
    result, book = no_demand
    nameless = result["candidates"][3]
    assert nameless["id"] == "scaleway-no-power" and nameless["energy_j_per_token"] is None
    power = book.column("Inputs", OUTPUTS["busy_power_w"].label)
    assert book.cells["Inputs"][f"{power}5"].value is None  # empty, not 0
    for name in ("energy_j_per_token", "average_power_w", "facility_kwh_per_mtok",
                 "electricity_eur_per_mtok", "carbon_gco2e_per_mtok"):
        letter = book.column("Scorecard", OUTPUTS[name].label)
        assert book.computed("Scorecard", f"{letter}5") == "", name
    # its CPM needs no power: 25.3308 EUR/h (bundled Scaleway offer) / (3600 x 0.6 x 0.0036)
    cpm = book.column("Scorecard", OUTPUTS["cpm_eur_per_mtok"].label)
    assert book.computed("Scorecard", f"{cpm}5") == pytest.approx(
        nameless["cpm_eur_per_mtok"], rel=1e-12)
    assert nameless["cpm_eur_per_mtok"] == pytest.approx(25.3308 / 7.776, rel=1e-4)


def test_changing_utilisation_moves_cpm(no_demand: tuple[dict[str, Any], Book]) -> None:
    _, book = no_demand
    used = book.column("Inputs", OUTPUTS["utilisation"].label)
    assert book.cells["Inputs"][f"{used}2"].value == 0.55
    solution = book.changed("Inputs", f"{used}2", 0.275)
    cpm = book.column("Scorecard", OUTPUTS["cpm_eur_per_mtok"].label)
    # half the utilisation, half the tokens per hour paid: 11 / 3.96 = 2.777778 EUR/Mtok
    assert book.computed("Scorecard", f"{cpm}2", solution) == pytest.approx(11 / 3.96,
                                                                            rel=1e-12)


def test_fill_turns_a_template_into_a_guarded_formula() -> None:
    refs = {"a": "Inputs!$B$2", "b": "C2"}
    # {x}: guarded; {x?}: bare; {x:d}: its default when empty; missing columns: "" or d
    assert fill("{a}/{b}", refs.get) == (
        '=IF(OR(Inputs!$B$2="",C2=""),"",IFERROR(Inputs!$B$2/C2,""))')
    assert fill('IF({a?}="",1,{a?})', refs.get) == (
        '=IFERROR(IF(Inputs!$B$2="",1,Inputs!$B$2),"")')
    assert fill("{b}*{z:1}", refs.get) == '=IF(OR(C2=""),"",IFERROR(C2*1,""))'
    assert fill("{b}*{z}", refs.get) == '=""'  # a column every candidate lacks: null
    assert fill("{b}+{z?}", refs.get) == '=IF(OR(C2=""),"",IFERROR(C2+"",""))'


def test_templates_use_only_functions_that_need_no_prefix() -> None:
    """The Scorecard skips xlsxwriter's future-function expansion
    (reports.files.xlsx._FormulaSheet):
    safe while every template calls only TEMPLATE_FUNCTIONS (Excel 2007 functions, which take no
    `_xlfn.` prefix)."""
    called = {name for s in STEPS if s.excel
              for name in re.findall(r"([A-Z][A-Z0-9.]*)\(", s.excel)}
    assert called <= set(TEMPLATE_FUNCTIONS)
    # (IFERROR and more ORs come from fill())
    assert called == {"IF", "OR", "CEILING", "PMT", "MAX", "MIN"}


def test_the_little_s_law_steps_compute_too(tmp_path: Path) -> None:
    result, book = scored(REQUESTS, tmp_path)
    # the Sizing sheet's formulas too, the binding and both counts among them: instances,
    # billed instances, utilisation, monthly cost, headroom instances and cost, MWh and tCO2e
    # a year, Little's-law and goodput instances, and which of the two binds
    assert check_sizing(book, result) == 11
    (est,) = result["candidates"]
    assert est["detail"]["littles_law_instances"] is not None
    # 1 candidate x 26 steps: the 30 but the four TCO-only ones a declared price leaves null
    # (capital, maintenance, monthly capital, cost over the amortisation); one cell more
    # since issue 26's goodput_instances step (27 before it); five more with the market-based
    # factor and carbon and the three per-request figures
    assert check_every_step(book, result) == 33
    no_errors_and_formulas_only_on_the_scorecard(book)
    for name in ("request_tpot_s", "request_duration_s", "request_duration_p95_s",
                 "replica_requests_per_s", "littles_law_instances"):
        assert OUTPUTS[name].label in [c.value for c in book.cells["Scorecard"][1]], name


def demand_cell(book: Book, name: str) -> str:
    """The Demand sheet's value cell of demand input `name`."""
    labels = [row[0].value for row in book.cells["Demand"].iter_rows()]
    return f"B{labels.index(OUTPUTS[name].label) + 1}"


def test_the_demand_is_one_cell_every_candidate_reads(
        example: tuple[dict[str, Any], Book]) -> None:
    result, book = example
    inputs = [c.value for c in book.cells["Inputs"][1]]
    assert OUTPUTS["demand_tokens_per_day"].label not in inputs  # not a column per candidate
    cell = demand_cell(book, "demand_tokens_per_day")
    assert book.cells["Demand"][cell].value == 500_000_000
    solution = book.changed("Demand", cell, 1e9)
    instances = book.column("Scorecard", OUTPUTS["instances"].label)
    monthly = book.column("Scorecard", OUTPUTS["monthly_cost_eur"].label)
    cpm = book.column("Scorecard", OUTPUTS["cpm_eur_per_mtok"].label)
    # FR H100 (row 2): the peak of 1e9 tokens/day at peak factor 2 is 1e9 / 86,400 x 2 =
    # 23,148.1 tokens/s; an instance gives 2,800 x (1 - 0.25 headroom) = 2,100: ceil(11.02)
    # = 12 instances (6 at 500 Mtok/day: 11,574.1 / 2,100 = 5.51); 11 EUR/h x 12 x 730 h =
    # 96,360 EUR a month; CPM 96,360 / (1e9 x 365 / 12 / 1e6 = 30,416.7 Mtok) = 3.168,
    # as at 500 Mtok/day (48,180 / 15,208.3): twice the fleet for twice the tokens
    assert book.computed("Scorecard", f"{instances}2", solution) == 12
    assert book.computed("Scorecard", f"{monthly}2", solution) == pytest.approx(96_360.0,
                                                                                rel=1e-12)
    assert book.computed("Scorecard", f"{cpm}2", solution) == pytest.approx(3.168, rel=1e-12)
    # every provisioned candidate's fleet moves with the one cell
    moved = [row for row, c in enumerate(result["candidates"], start=2)
             if c["detail"].get("instances") is not None
             and book.computed("Scorecard", f"{instances}{row}", solution)
             != book.computed("Scorecard", f"{instances}{row}")]
    assert len(moved) == sum(1 for c in result["candidates"]
                             if c["detail"].get("instances") is not None)


def test_a_request_rate_demand_drives_the_tokens_per_day_cell(tmp_path: Path) -> None:
    _, book = scored(REQUESTS, tmp_path)
    rate, tokens = (demand_cell(book, n) for n in ("demand_requests_per_s",
                                                   "demand_tokens_per_day"))
    assert book.cells["Demand"][tokens].data_type == "f"  # derived from the rate
    # 20 requests/s x 86,400 s x 250 output tokens (the output token basis) = 432 Mtok/day
    assert book.computed("Demand", tokens) == pytest.approx(432_000_000.0, rel=1e-12)
    solution = book.changed("Demand", rate, 40.0)
    assert book.computed("Demand", tokens, solution) == pytest.approx(864_000_000.0,
                                                                      rel=1e-12)


def check_sizing(book: Book, result: dict[str, Any]) -> int:
    """Every figure on the Sizing sheet is a formula giving the engine's sizing row (rel
    1e-9; "" where null). Returns the cells checked."""
    sheet = book.cells["Sizing"]
    headers = [c.value for c in sheet[1]]
    rows = {r["candidate"]: r for r in result["sizing"]}
    checked, wrong = 0, []
    for col, title in enumerate(headers, start=1):
        letter = get_column_letter(col)
        for row in range(2, sheet.max_row + 1):
            cell = sheet[f"{letter}{row}"]
            if cell.data_type != "f":
                continue
            name = next(n for n in rows[sheet[f"A{row}"].value] if title == header(n, "Sizing"))
            expected = rows[sheet[f"A{row}"].value][name]
            got = book.computed("Sizing", f"{letter}{row}")
            checked += 1
            if not (got == expected if isinstance(expected, str) else same(got, expected)):
                wrong.append((name, row, got, expected))
    assert wrong == []
    return checked


def test_the_sizing_sheet_computes_from_the_inputs(
        example: tuple[dict[str, Any], Book]) -> None:
    result, book = example
    # 9 candidates x 9 figures: instances, billed instances, utilisation, monthly cost,
    # headroom instances, headroom cost, period cost, MWh and tCO2e a year (the spares' cost,
    # the binding and the two counts are left off: no spares, no operating concurrency)
    assert check_sizing(book, result) == 9 * 9
    sheet = book.cells["Sizing"]
    headers = [c.value for c in sheet[1]]
    fr = next(r for r in range(2, sheet.max_row + 1)
              if sheet[f"A{r}"].value == "onprem-fr-h100-fp16")
    instances = get_column_letter(headers.index(header("instances", "Sizing")) + 1)
    mwh = get_column_letter(headers.index(header("annual_mwh", "Sizing")) + 1)
    solution = book.changed("Demand", demand_cell(book, "demand_tokens_per_day"), 1e9)
    # twice the demand: 6 -> 12 instances (test above); the facility energy per Mtok stays
    # (the same utilisation), so the MWh a year double
    assert book.computed("Sizing", f"{instances}{fr}", solution) == 12
    assert book.computed("Sizing", f"{mwh}{fr}", solution) == pytest.approx(
        2 * book.computed("Sizing", f"{mwh}{fr}"), rel=1e-12)


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Book]:
    """The bundled example's result with its plan (48 months, 30 % growth a year) and its
    workbook."""
    result = json.loads(EXAMPLE.read_text("utf-8"))
    assert result["plan"]["months"] == 48
    path = tmp_path_factory.mktemp("planned") / "plan.xlsx"
    write_xlsx(typed(result), path)
    return result, Book(path)


def test_under_a_plan_the_sizing_computes_the_first_month(
        planned: tuple[dict[str, Any], Book]) -> None:
    """Under a plan the sizing is the first month's (the engine's `sizing`), as the
    Scorecard's formulas are: the Sizing sheet's figures are formulas over them, but the MWh
    and tCO2e a year, which read the first month's facility energy and the horizon's carbon
    per Mtok (values there), stay the engine's values, labelled so."""
    result, book = planned
    # 9 candidates (the mix has no sizing row) x 7 formulas: instances, billed instances,
    # utilisation, monthly cost, headroom instances, headroom cost, period cost
    assert check_sizing(book, result) == 9 * 7
    sheet = book.cells["Sizing"]
    headers = [c.value for c in sheet[1]]
    rows = {r["candidate"]: r for r in result["sizing"]}
    for name in ("annual_mwh", "annual_tco2e"):
        col = headers.index(header(name, "Sizing")) + 1
        assert "not a formula" in sheet.cell(1, col).comment.text
        for row in range(2, sheet.max_row + 1):
            cell = sheet.cell(row, col)
            assert cell.data_type == "n" and same(cell.value, rows[sheet[f"A{row}"].value][name])
    fr = next(r for r in range(2, sheet.max_row + 1)
              if sheet[f"A{r}"].value == "onprem-fr-h100-fp16")
    instances = get_column_letter(headers.index(header("instances", "Sizing")) + 1)
    monthly = get_column_letter(headers.index(header("monthly_cost_eur", "Sizing")) + 1)
    solution = book.changed("Demand", demand_cell(book, "demand_tokens_per_day"), 1e9)
    # twice the first month's demand: a peak of 1e9 / 86,400 x 2 = 23,148 tokens/s over
    # 2,800 x (1 - 0.25) = 2,100 per instance: ceil(11.02) = 12 instances (6 at 500M), and
    # 12 x 11 EUR/h x 730 h = 96,360 EUR a month
    assert book.computed("Sizing", f"{instances}{fr}") == 6
    assert book.computed("Sizing", f"{instances}{fr}", solution) == 12
    assert book.computed("Sizing", f"{monthly}{fr}", solution) == pytest.approx(96_360.0,
                                                                                rel=1e-12)


def test_under_a_plan_the_recommendation_s_cpm_is_a_value_said_so(
        planned: tuple[dict[str, Any], Book]) -> None:
    """The recommended candidate's CPM is the horizon's under a plan: the engine's value,
    labelled "a value, not recomputed"; its monthly cost (the first month's) a formula that
    moves with the inputs."""
    result, book = planned
    chosen = result["recommendation"]["candidate"]
    assert chosen == "ovhcloud-h100x4-fp8"
    sheet = {row[0].value: row for row in book.cells["Recommendation"].iter_rows()}
    cpm = sheet[OUTPUTS["cpm_eur_per_mtok"].label]
    monthly = sheet[OUTPUTS["monthly_cost_eur"].label]
    engine = next(c for c in result["candidates"] if c["id"] == chosen)
    assert cpm[1].data_type == "n" and same(cpm[1].value, engine["cpm_eur_per_mtok"])
    assert "the horizon's CPM over the plan's 48 months: a value, not recomputed" in cpm[2].value
    assert monthly[1].data_type == "f" and "moves with the inputs" in monthly[2].value
    row = [c["id"] for c in result["candidates"]].index(chosen) + 2
    price = book.column("Inputs", OUTPUTS["price_eur_per_hour"].label)
    old = book.cells["Inputs"][f"{price}{row}"].value
    solution = book.changed("Inputs", f"{price}{row}", 2 * old)
    # elastic, billed 3.858 busy instances (above its floor of 2) x 11.20 EUR/h x 730 h =
    # 31,543.21 EUR a month; twice the price, twice the month
    assert book.computed("Recommendation", monthly[1].coordinate) == pytest.approx(
        engine["detail"]["monthly_cost_eur"], rel=1e-9)
    assert round(engine["detail"]["monthly_cost_eur"], 2) == 31_543.21
    assert book.computed("Recommendation", monthly[1].coordinate, solution) == pytest.approx(
        2 * engine["detail"]["monthly_cost_eur"], rel=1e-9)


def test_a_recommended_mix_s_figures_are_its_values_said_so(tmp_path: Path) -> None:
    """A mix's Scorecard row holds values (it has no Inputs), so the Recommendation sheet
    gives a recommended mix's CPM and monthly cost as those values, not as formulas said to
    move: the example's hybrid-fr-h200-api, 2.907 EUR/Mtok (the horizon's) and 58,549.07 EUR
    a month."""
    result = json.loads(EXAMPLE.read_text("utf-8"))
    result["recommendation"]["candidate"] = "hybrid-fr-h200-api"
    write_xlsx(typed(result), tmp_path / "mix.xlsx")
    sheet = {row[0].value: row for row in
             openpyxl.load_workbook(tmp_path / "mix.xlsx")["Recommendation"].iter_rows()}
    engine = next(c for c in result["candidates"] if c["id"] == "hybrid-fr-h200-api")
    for name, expected in (("cpm_eur_per_mtok", engine["cpm_eur_per_mtok"]),
                           ("monthly_cost_eur", engine["detail"]["monthly_cost_eur"])):
        _, cell, said = sheet[OUTPUTS[name].label]
        assert cell.data_type == "n" and same(cell.value, expected), name
        assert said.value.startswith("the mix's, from its parts: a value, not recomputed")


def test_the_recommendation_s_cost_moves_with_the_inputs(
        example: tuple[dict[str, Any], Book]) -> None:
    """The Recommendation sheet names the engine's choice (static) and gives its CPM and
    monthly cost as formulas over its Scorecard row (found by id): they are the engine's, and
    move when its price on Inputs changes."""
    result, book = example
    chosen = result["recommendation"]["candidate"]
    sheet = {row[0].value: row[1] for row in book.cells["Recommendation"].iter_rows()}
    assert sheet["Recommended"].value == chosen
    cpm_cell = sheet[OUTPUTS["cpm_eur_per_mtok"].label].coordinate
    monthly_cell = sheet[OUTPUTS["monthly_cost_eur"].label].coordinate
    engine = next(c for c in result["candidates"] if c["id"] == chosen)
    assert book.computed("Recommendation", cpm_cell) == pytest.approx(
        engine["cpm_eur_per_mtok"], rel=1e-9)
    row = [c["id"] for c in result["candidates"]].index(chosen) + 2
    price = book.column("Inputs", OUTPUTS["price_eur_per_hour"].label)
    old = book.cells["Inputs"][f"{price}{row}"].value
    solution = book.changed("Inputs", f"{price}{row}", 2 * old)
    # a price per hour twice as dear: the same fleet and served tokens, so CPM and the monthly
    # cost double exactly
    assert book.computed("Recommendation", cpm_cell, solution) == pytest.approx(
        2 * engine["cpm_eur_per_mtok"], rel=1e-9)
    assert book.computed("Recommendation", monthly_cell, solution) == pytest.approx(
        2 * book.computed("Recommendation", monthly_cell), rel=1e-9)


def test_an_elastic_floor_billed_hour_by_hour_computes_in_the_workbook(
        tmp_path: Path) -> None:
    """OVHcloud's floor raised from 2 to 3 instances in the example (without its plan), so
    `billed_instances` reads the 24 hour ratios on the Inputs sheet: busy 500e6 / 86,400 /
    1,500 = 3.858 instances on the day's mean; the profile's 18 quiet hours (weight 1 of a
    mean of 1.5) keep 3.858 x 2/3 = 2.572 busy, below the floor, so they bill 3; the 6
    evening hours (weight 3) 7.716: (18 x 3 + 6 x 7.716) / 24 = 4.179 (was max(3.858, 3)).
    The `formulas` engine computes every step of every row as the engine did (at the
    example's floor of 2 no hour binds, so the hour terms were all 0 there)."""
    text = PROPOSAL.read_text("utf-8")
    start = text.index("[horizon]")
    text = text[:start] + text[text.index("\n\n", start) + 2:]
    floor = "min_instances = 2          # always held, busy or not"
    assert text.count(floor) == 1
    result, book = scored(text.replace(floor, "min_instances = 3"), tmp_path)
    ovh = next(c for c in result["candidates"] if c["id"] == "ovhcloud-h100x4-fp8")
    assert ovh["detail"]["billed_instances"] == pytest.approx(4.179, abs=1e-3)
    assert check_every_step(book, result) == 10 * 33
    no_errors_and_formulas_only_on_the_scorecard(book)
