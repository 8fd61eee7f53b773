"""`scorecard ingest --check`: for each source, whether it is configured (its key set when it
needs one) and its service answers its probe (`PROBE`, a cheap real request of its API) with a
2xx, loading nothing and writing nothing to the store. A bare base URL may answer 404 on a
healthy API, so it is not what is asked; 401/403 to a probe that sent a key say the key is
refused, any other non-2xx (a 401/403 without a key included) that the service is failing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import requests

from pipeline.ingest.start import session
from sources.http import follow, redact_url
from sources.registry import SOURCES
from sources.text import one_line, redact

OK = "ok"
NOT_CONFIGURED = "not configured"
UNREACHABLE = "unreachable"
KEY_REFUSED = "key refused"
FAILING = "failing"


@dataclass(frozen=True)
class Check:
    source: str
    url: str  # the probe's URL, its key redacted
    configured: bool
    key: str  # "no key needed", "EMBER_API_KEY set", "EMBER_API_KEY not set", ...
    status: int | None  # the final HTTP status, None when nothing answered
    answer: str  # "HTTP 200" or the connection error
    keyed: bool = False  # whether the probe sent a key

    @property
    def state(self) -> str:
        if not self.configured:
            return NOT_CONFIGURED
        if self.status is None:
            return UNREACHABLE
        if 200 <= self.status < 300:
            return OK
        # a 401/403 to a request that sent no key is the service refusing it, not a key
        return KEY_REFUSED if self.keyed and self.status in (401, 403) else FAILING

    @property
    def ok(self) -> bool:
        return self.state == OK

    def line(self) -> str:
        refused = self.status in (401, 403)
        why = {KEY_REFUSED: " (the key is refused)",
               FAILING: " (the service refuses the request)" if refused
               else " (the service is failing)"}.get(self.state, "")
        return f"{self.source}: {self.state}: {self.key}; {self.url}: {self.answer}{why}"


def base_url(name: str) -> str:
    """The source's base URL: $SCORECARD_<SOURCE>_BASE_URL, else the module's BASE_URL."""
    return (os.environ.get(f"SCORECARD_{name.upper()}_BASE_URL")
            or SOURCES[name].BASE_URL).rstrip("/")


def _status(http: requests.Session, url: str, headers: dict[str, str],
            secret_headers: list[str], timeout_s: float) -> int:
    """The probe's final HTTP status, its body never read (a redirect still, when more were
    asked than are followed)."""
    try:
        answer = follow(http, url, headers, secret_headers=secret_headers,
                        timeout_s=lambda: timeout_s)
    except requests.TooManyRedirects as error:
        if error.response is None:
            raise
        return error.response.status_code
    answer.close()
    return answer.status_code


def check(chosen: Sequence[str], timeout_s: float = 10.0) -> list[Check]:
    """One Check per source, in the order given."""
    http = session()
    found = []
    for name in chosen:
        module = SOURCES[name]
        env, probe = module.ENV_VAR, module.PROBE
        secret = os.environ.get(env, "") if env else ""
        configured = bool(secret) or not module.NEEDS_KEY
        key = ("no key needed" if env is None else
               f"{env} {'set' if secret else 'not set'}"
               + ("" if module.NEEDS_KEY else " (optional)"))
        params = {probe.key_param: secret} if secret and probe.key_param else {}
        headers = {probe.key_header: secret} if secret and probe.key_header else {}
        url = base_url(name) + probe.path
        url = requests.Request("GET", url, params=params or None).prepare().url or url
        shown = redact_url(url, [probe.key_param] if probe.key_param else [])
        status: int | None
        try:
            # to another host the key (header) is not sent; the status is all a probe needs
            answer = _status(http, url, headers, [probe.key_header] if probe.key_header
                             else [], timeout_s)
            status, said = answer, f"HTTP {answer}"
        except requests.RequestException as error:
            status, said = None, f"no answer ({type(error).__name__})"
        found.append(Check(name, shown, configured, key, status,
                           one_line(redact(said, [secret] if secret else [])),
                           keyed=bool(params or headers)))
    return found
