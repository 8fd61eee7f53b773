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


def test_both_counts_and_the_binding_one_beside_the_littles_law_count() -> None:
    # lab: goodput 3, Little's law 4 -> 4 instances, Little's law binds; cloud: no request
    # shape, goodput alone
    lab = {**_row("lab", 4), "goodput_instances": 3, "binding": "Little's law"}
    cloud = {**_row("cloud", None), "goodput_instances": 4, "binding": "goodput"}
    frame = sizing_frame(fragment({"sizing": [lab, cloud]}))
    assert frame["goodput_instances"].to_list() == [3, 4]
    assert frame["binding"].to_list() == ["Little's law", "goodput"]
    # without any Little's-law count neither column shows
    alone = sizing_frame(fragment({"sizing": [cloud]}))
    assert "binding" not in alone.columns and "goodput_instances" not in alone.columns
