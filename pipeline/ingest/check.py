"""`scorecard ingest --check`: for each source, whether it is configured (its key set when it
needs one) and its host answers (any HTTP status counts: the host is there), loading nothing
and writing nothing to the store."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import requests

from pipeline.ingest.start import session
from sources.registry import SOURCES


@dataclass(frozen=True)
class Check:
    source: str
    url: str
    configured: bool
    key: str  # "no key needed", "EMBER_API_KEY set", "EMBER_API_KEY not set", ...
    reachable: bool
    answer: str  # "HTTP 200" or the connection error

    @property
    def ok(self) -> bool:
        return self.configured and self.reachable

    def line(self) -> str:
        state = "ok" if self.ok else ("not configured" if not self.configured
                                      else "unreachable")
        return f"{self.source}: {state}: {self.key}; {self.url}: {self.answer}"


def base_url(name: str) -> str:
    """The source's base URL: $SCORECARD_<SOURCE>_BASE_URL, else the module's BASE_URL."""
    return os.environ.get(f"SCORECARD_{name.upper()}_BASE_URL") or SOURCES[name].BASE_URL


def check(chosen: Sequence[str], timeout_s: float = 10.0) -> list[Check]:
    """One Check per source, in the order given."""
    http = session()
    found = []
    for name in chosen:
        module = SOURCES[name]
        env = module.ENV_VAR
        has_key = env is not None and bool(os.environ.get(env))
        configured = has_key or not module.NEEDS_KEY
        key = ("no key needed" if env is None else
               f"{env} {'set' if has_key else 'not set'}"
               + ("" if module.NEEDS_KEY else " (optional)"))
        url = base_url(name)
        try:
            answer = http.get(url, timeout=timeout_s, allow_redirects=False, stream=True)
            answer.close()
            reachable, said = True, f"HTTP {answer.status_code}"
        except requests.RequestException as error:
            reachable, said = False, f"no answer ({type(error).__name__})"
        found.append(Check(name, url, configured, key, reachable, said))
    return found
