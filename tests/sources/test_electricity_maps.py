"""Electricity Maps v4: the real DK-DK2 samples; the token never leaves the request."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import requests
import samples
from pytest_httpserver import HTTPServer

from schemas.market import GRID_INTENSITY
from sources.errors import ParseError
from sources.http import FetchError, FetchPolicy
from sources.market import electricity_maps as em

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "electricity_maps"
URL = "https://api.electricitymaps.com/v4/carbon-intensity/history?zone=DK-DK2"
FAST = FetchPolicy(backoff_s=0.0, sleep=lambda s: None)


def recorded_body(name: str) -> bytes:
    """The samples wrap the verbatim v4 body in a recording envelope: unwrap it."""
    path = samples.sample(f"electricity_maps/{name}")
    return json.dumps(json.loads(path.read_bytes())["body"]).encode()


def test_real_history_sample() -> None:
    notes: list[str] = []
    frame = GRID_INTENSITY.validate(em.parse_history(
        recorded_body("grid-lab_v4_carbon-intensity__history_DK-DK2.json"), url=URL,
        vintage="2026-08", fetched_on=date(2026, 8, 22), notes=notes), URL)
    assert frame.height == 24 and set(frame["resolution"]) == {"hour"}
    assert frame["interval_start_utc"][0] == datetime(2026, 8, 21, 18, tzinfo=UTC)
    assert frame["intensity_gco2e_per_kwh"][:3].to_list() == [246.0, 272.0, 236.0]
    assert set(frame["emission_factor_basis"]) == {"lifecycle"}
    assert notes == [f"{URL}: 2 of 24 value(s) are estimates"]


def test_unauthorized_body_is_a_parse_error() -> None:
    body = (b'{"error":"Request unauthorized for zoneKey=FR","message":"You do not have '
            b'access to this specific endpoint for this specific zone."}')
    with pytest.raises(ParseError, match=r"server said .*Request unauthorized"):
        em.parse_history(body, url=URL, vintage="2026-08", fetched_on=date(2026, 8, 22))


def test_direct_basis_is_kept() -> None:
    body = (FIXTURES / "history_FR_2026-11-27.json").read_bytes().replace(
        b'"lifecycle"', b'"direct"')
    frame = em.parse_history(body, url=URL, vintage="2026-11", fetched_on=date(2026, 11, 27))
    assert set(frame["emission_factor_basis"]) == {"direct"}


def test_token_goes_in_a_header_and_nowhere_else(httpserver: HTTPServer) -> None:
    body = (FIXTURES / "history_FR_2026-11-27.json").read_bytes()
    httpserver.expect_request("/v4/carbon-intensity/history",
                              headers={"auth-token": "em-secret-token"},
                              query_string={"zone": "FR", "disableCallerLookup": "true",
                                            "emissionFactorType": "lifecycle"}
                              ).respond_with_data(body)
    with requests.Session() as session:
        [got] = em.fetch_history(session, "FR", "em-secret-token",
                                 base_url=httpserver.url_for("").rstrip("/"), policy=FAST)
    assert "em-secret-token" not in repr(got)
    assert b"em-secret-token" not in got.data


def test_401_message_does_not_hold_the_token(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v4/carbon-intensity/history").respond_with_data(
        '{"message": "Invalid token em-secret-token"}', status=401)
    with requests.Session() as session, pytest.raises(FetchError) as caught:
        em.fetch_history(session, "FR", "em-secret-token",
                         base_url=httpserver.url_for("").rstrip("/"), policy=FAST)
    assert "HTTP 401" in str(caught.value) and "em-secret-token" not in str(caught.value)
