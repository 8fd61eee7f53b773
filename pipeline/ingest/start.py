"""What an ingest run starts from: the request checked (sources, vintage, `--record` without
`--offline`), the Context its jobs get (base URLs from the environment, the store's region map
and ECB rates, the fetch deadlines from `--timeout` or $SCORECARD_HTTP_TIMEOUT_S) and the HTTP
session it fetches with."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from datetime import date

import duckdb
import requests

from pipeline.ingest.inputs import fx_rates, regions
from schemas.fields import vintage_refused
from sources.http import DEFAULT_POLICY, TIMEOUT_ENV
from sources.job import Context
from sources.registry import SOURCES

USER_AGENT = "inference-scorecard/0.1 (market-data ingest; +https://github.com/)"


class RequestError(ValueError):
    """An ingest request that cannot run; the message says why."""


def checked(sources: Sequence[str] | None, vintage: str | None, *, offline: bool,
            record: bool, today: date) -> tuple[list[str], str]:
    """The sources to run (default: all) and the vintage (default: `today`'s month)."""
    chosen = list(sources or SOURCES)
    unknown = [s for s in chosen if s not in SOURCES]
    if unknown:
        raise RequestError(f"unknown source(s): {', '.join(unknown)}; "
                           f"known: {', '.join(SOURCES)}")
    vintage = vintage or today.strftime("%Y-%m")
    if (why := vintage_refused(vintage, today.strftime("%Y-%m"))) is not None:
        raise RequestError(f"--vintage {vintage!r} {why}")
    if record and offline:
        raise RequestError("--record needs the network; it cannot be combined with --offline")
    return chosen, vintage


def deadline_s(flag: float | None) -> float:
    """The per-request deadline: `--timeout`, else $SCORECARD_HTTP_TIMEOUT_S, else the
    default policy's; a value that is not a positive number of seconds is a RequestError."""
    text = os.environ.get(TIMEOUT_ENV) if flag is None else str(flag)
    if text is None or text == "":
        return DEFAULT_POLICY.deadline_s
    where = "--timeout" if flag is not None else f"${TIMEOUT_ENV}"
    try:
        value = float(text)
    except ValueError:
        raise RequestError(f"{where} {text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise RequestError(f"{where} {text!r} must be a positive number of seconds")
    return value


def context(con: duckdb.DuckDBPyConnection, vintage: str, today: date,
            timeout_s: float | None = None) -> Context:
    """Base URLs can be pointed elsewhere (a replay server, a mirror) with
    SCORECARD_<SOURCE>_BASE_URL, e.g. SCORECARD_SCALEWAY_BASE_URL=http://127.0.0.1:8000.
    `timeout_s` is each request's total deadline (`deadline_s`); a source gets five times
    that, and at least the default's 300 s, for all its requests and retries."""
    deadline = deadline_s(timeout_s)
    policy = dataclasses.replace(DEFAULT_POLICY, deadline_s=deadline, timeout_s=min(
        DEFAULT_POLICY.timeout_s, deadline), source_deadline_s=max(
        DEFAULT_POLICY.source_deadline_s, 5 * deadline))
    # every source's host, and Ember's second one (its key-gated API)
    base_urls = {name: os.environ[f"SCORECARD_{name.upper()}_BASE_URL"]
                 for name in (*SOURCES, "ember_api")
                 if os.environ.get(f"SCORECARD_{name.upper()}_BASE_URL")}
    return Context(vintage=vintage, today=today, regions=regions(con),
                   fx_rates=lambda: fx_rates(con), base_urls=base_urls, policy=policy)


def session() -> requests.Session:
    """A session that names the project in its User-Agent."""
    opened = requests.Session()
    opened.headers["User-Agent"] = USER_AGENT
    return opened
