"""The workbook computes the margins too (issue 15): headroom instances, the headroom's and the
redundancy's monthly cost and a TCO fleet's cost over its amortisation are formulas over the
Inputs sheet equal to the engine's figures, and changing `redundancy_instances` (one cell on
the Demand sheet) moves the fleets, their monthly cost and the redundancy's cost by the
hand-computed amount."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.outputs import OUTPUTS
from tests.pipeline.test_margins import MARGINS
from tests.reports.test_workbook import (
    check_every_step,
    demand_cell,
    no_errors_and_formulas_only_on_the_scorecard,
    scored,
)

NEW = ("headroom_instances", "monthly_headroom_cost_eur", "monthly_redundancy_cost_eur",
       "period_cost_eur")


def test_the_margins_are_formulas_equal_to_the_engine(tmp_path: Path) -> None:
    result, book = scored(MARGINS, tmp_path)
    assert [c["id"] for c in result["candidates"]] == ["declared", "own-tco", "elastic"]
    headers = [c.value for c in book.cells["Scorecard"][1]]
    for name in NEW:
        assert OUTPUTS[name].label in headers, name
    # every step cell of the 3 candidates equals the engine's ("" where it is null): 3 x the
    # 25 steps but the 5 of Little's law (no request shape), the TCO ones "" for the others;
    # one step more since issue 26's goodput_instances (3 x 26 before it)
    assert check_every_step(book, result) == 3 * 27
    no_errors_and_formulas_only_on_the_scorecard(book)

    col = {name: book.column("Scorecard", OUTPUTS[name].label)
           for name in (*NEW, "instances", "monthly_cost_eur")}
    # declared, row 2: 4 + 1 spare = 5 instances x 11 EUR/h x 730 h = 40,150 EUR/month; the
    # headroom's and the spare's instance 8,030 each; no amortisation (a price per hour)
    assert book.computed("Scorecard", f"{col['instances']}2") == 5
    assert book.computed("Scorecard", f"{col['monthly_cost_eur']}2") == pytest.approx(40_150.0)
    assert book.computed("Scorecard", f"{col['monthly_redundancy_cost_eur']}2") == (
        pytest.approx(8_030.0))
    assert book.computed("Scorecard", f"{col['period_cost_eur']}2") == ""
    # own-tco, row 3: 5 x 10,531.44 EUR/month x 48 months = 2,527,545.6 EUR
    # (tests/pipeline/test_margins.py works the TCO out)
    assert book.computed("Scorecard", f"{col['period_cost_eur']}3") == pytest.approx(
        2_527_545.6, rel=1e-9)
    # elastic, row 4: neither margin billed
    assert book.computed("Scorecard", f"{col['monthly_headroom_cost_eur']}4") == 0
    assert book.computed("Scorecard", f"{col['monthly_redundancy_cost_eur']}4") == 0

    # N+1 -> N+2 in the Demand sheet's one cell ([demand] redundancy_instances, every
    # candidate's): declared, 6 instances, 6 x 8,030 = 48,180 EUR/month, the redundancy
    # 2 x 8,030 = 16,060; the headroom stays at 1 instance, 8,030
    spare = demand_cell(book, "redundancy_instances")
    assert book.cells["Demand"][spare].value == 1
    solution = book.changed("Demand", spare, 2.0)
    assert book.computed("Scorecard", f"{col['instances']}2", solution) == 6
    assert book.computed("Scorecard", f"{col['monthly_cost_eur']}2", solution) == (
        pytest.approx(48_180.0, rel=1e-12))
    assert book.computed("Scorecard", f"{col['monthly_redundancy_cost_eur']}2",
                         solution) == pytest.approx(16_060.0, rel=1e-12)
    assert book.computed("Scorecard", f"{col['monthly_headroom_cost_eur']}2",
                         solution) == pytest.approx(8_030.0, rel=1e-12)
    # own-tco, row 3: 5 -> 6 instances, 6 x 10,531.44 EUR/month x 48 months = 3,033,054.72
    assert book.computed("Scorecard", f"{col['instances']}3") == 5
    assert book.computed("Scorecard", f"{col['instances']}3", solution) == 6
    assert book.computed("Scorecard", f"{col['period_cost_eur']}3", solution) == (
        pytest.approx(3_033_054.72, rel=1e-9))
    # elastic, row 4: spares are not billed, so still nothing
    assert book.computed("Scorecard", f"{col['monthly_redundancy_cost_eur']}4", solution) == 0
