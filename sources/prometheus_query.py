"""`evidence add --prometheus`: the range queries sent to a live Prometheus (its HTTP API's
`query_range`), bounded and redacted as the market sources' requests are. The answers are read
by the readers of saved files (sources/prometheus.py and the two readers it names); this module
is apart so those readers do not import the HTTP stack."""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace

import requests

from sources.http import DEFAULT_POLICY, FetchPolicy, fetch

#: a bearer token for a Prometheus behind authentication, read from the environment only (sent
#: as `Authorization: Bearer ...`, redacted from every message, as the market sources' keys)
TOKEN_ENV = "SCORECARD_PROMETHEUS_TOKEN"
#: the range queries `evidence add --prometheus` runs, each answer read by the reader of saved
#: query_range files: vLLM's counters and histogram parts (sources/bench/aggregates/
#: vllm_metrics_range.py), DCGM's power and energy (sources/power/prometheus_range.py)
QUERIES = {
    "vllm": '{__name__=~"vllm:.+_(total|bucket|count|sum)"}',
    "dcgm": '{__name__=~"DCGM_FI_DEV_POWER_USAGE|DCGM_FI_DEV_POWER_USAGE_INSTANT'
            '|DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"}',
}
#: Prometheus refuses a range query of more than 11,000 points per series
MAX_POINTS = 11_000
#: the most bytes one answer may take (a week of vLLM histograms at 15 s is ~100 MB)
MAX_BYTES = 256 * 1024 * 1024


def step_s(start: float, end: float, step: float | None = None) -> float:
    """The query's resolution: `step`, or the finest (1 s at least) within MAX_POINTS; a step
    giving more points than Prometheus takes is a ValueError."""
    if not (math.isfinite(start) and math.isfinite(end) and end > start):
        raise ValueError("the query window's end must be after its start")
    finest = max(1.0, math.ceil((end - start) / (MAX_POINTS - 1)))
    if step is None:
        return finest
    if not (math.isfinite(step) and step > 0) or (end - start) / step > MAX_POINTS - 1:
        raise ValueError(f"a step of {step:g} s gives more than {MAX_POINTS} points over the "
                         f"window: {finest:g} s or more")
    return step


def query_range(base_url: str, name: str, start: float, end: float, step: float, *,
                session: requests.Session | None = None,
                policy: FetchPolicy | None = None) -> bytes:
    """The answer of `QUERIES[name]` over [start, end] (unix s) from the Prometheus at
    `base_url` (its /api/v1/query_range), by sources.http.fetch: bounded (deadline, retries,
    MAX_BYTES), the token of TOKEN_ENV sent and redacted; a FetchError names the URL."""
    chosen = policy or DEFAULT_POLICY
    if chosen.max_bytes > MAX_BYTES:
        chosen = replace(chosen, max_bytes=MAX_BYTES)
    token = os.environ.get(TOKEN_ENV)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    params = {"query": QUERIES[name], "start": f"{start:.3f}", "end": f"{end:.3f}",
              "step": f"{step:g}s"}
    got = fetch(session or requests.Session(), base_url.rstrip("/") + "/api/v1/query_range",
                source="prometheus", params=params, headers=headers,
                secret_headers=("Authorization",), policy=chosen)
    return got.data


def has_series(data: bytes) -> bool:
    """Whether an answer holds any series (an empty matrix: no such metric in the window)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return True  # the reader names what is wrong with it
    body = doc.get("data") if isinstance(doc, dict) else None
    return not (isinstance(body, dict) and body.get("result") == [])
