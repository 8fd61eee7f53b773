"""An ingest request is checked before anything is opened; its Context takes base URLs from
the environment."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from pipeline import store
from pipeline.ingest import start
from sources.registry import SOURCES

TODAY = date(2026, 11, 27)


def test_defaults_are_every_source_and_this_month() -> None:
    assert start.checked(None, None, offline=False, record=False, today=TODAY) == (
        list(SOURCES), "2026-11")
    assert start.checked(["ecb"], "2026-09", offline=True, record=False, today=TODAY) == (
        ["ecb"], "2026-09")


@pytest.mark.parametrize(("sources", "vintage", "offline", "record", "message"), [
    (["nope"], None, False, False, "unknown source\\(s\\): nope; known: ecb"),
    (None, "2026-13", False, False, "--vintage '2026-13' is not a month YYYY-MM"),
    # a month to come holds no market data: refused before anything is fetched
    (None, "2026-12", False, False, "--vintage '2026-12' is after this month \\(2026-11\\)"),
    (None, None, True, True, "--record needs the network"),
])
def test_a_request_that_cannot_run_says_why(sources: list[str] | None, vintage: str | None,
                                            offline: bool, record: bool, message: str) -> None:
    with pytest.raises(start.RequestError, match=message):
        start.checked(sources, vintage, offline=offline, record=record, today=TODAY)


def test_context_base_urls_come_from_the_environment(db: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORECARD_SCALEWAY_BASE_URL", "http://127.0.0.1:8000")
    monkeypatch.setenv("SCORECARD_EMBER_API_BASE_URL", "http://127.0.0.1:8001")
    ctx = start.context(store.connect(db), "2026-11", TODAY)
    assert ctx.base_urls == {"scaleway": "http://127.0.0.1:8000",
                             "ember_api": "http://127.0.0.1:8001"}
    assert (ctx.vintage, ctx.today) == ("2026-11", TODAY)
    assert start.session().headers["User-Agent"] == start.USER_AGENT
