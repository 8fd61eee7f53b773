"""The report's sizing table shows the Little's-law instance count only when some candidate
has one (a request-shaped demand and an operating concurrency)."""

from __future__ import annotations

from reports.frames import SIZING_HEADERS, sizing_frame
from tests.reports.conftest import fragment


def _row(cid: str, littles: int | None) -> dict[str, object]:
    return {"candidate": cid, "capacity": "provisioned", "instances": 4,
            "billed_instances": 4.0, "utilisation": 0.625, "monthly_cost_eur": 16819.2,
            "annual_mwh": 21.6, "annual_tco2e": 0.67, "littles_law_instances": littles}


def test_littles_law_column_when_present() -> None:
    frame = sizing_frame(fragment({"sizing": [_row("lab", 3), _row("cloud", None)]}))
    assert frame["littles_law_instances"].to_list() == [3, None]
    assert SIZING_HEADERS["littles_law_instances"] == "Instances (Little's law) (count)"


def test_littles_law_column_left_out_when_no_candidate_has_it() -> None:
    frame = sizing_frame(fragment({"sizing": [_row("lab", None)]}))
    assert "littles_law_instances" not in frame.columns
    assert frame["instances"].to_list() == [4]
    # a result written before the key existed reads the same way
    old = _row("lab", None)
    del old["littles_law_instances"]
    assert sizing_frame(fragment({"sizing": [old]})).columns == frame.columns
