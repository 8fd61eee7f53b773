"""The one way every source talks HTTP: an injected session, a timeout, retries with
exponential backoff on 429/5xx/connection errors (honouring Retry-After, capped), a size cap
enforced while streaming, and secrets redacted from everything that is returned or raised.

Nothing here stores or logs: the caller keeps `Fetched.data` as a raw snapshot, and the
`url`/`params` it carries are already safe to store (no token, no key).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

import requests

REDACTED = "***"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
NOTABLE_HEADERS = ("content-type", "content-length", "etag", "last-modified", "date",
                   "retry-after", "x-total-count", "x-ratelimit-remaining")
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


class FetchError(Exception):
    """A fetch that failed for good. The message names source, URL (secrets redacted),
    status and reason; it never contains a secret value."""

    def __init__(self, source: str, url: str, reason: str, status: int | None = None):
        self.source = source
        self.url = url
        self.status = status
        self.reason = reason
        shown = f"HTTP {status}" if status is not None else "no response"
        super().__init__(f"{source}: {url}: {shown}: {reason}")


@dataclass(frozen=True)
class Fetched:
    """Raw bytes of one response and what is needed to cite and re-parse them."""

    source: str
    data: bytes
    url: str  # final URL, query secrets redacted
    params: dict[str, str]  # query parameters sent, secrets redacted
    status: int
    headers: dict[str, str]  # headers of note, lower-case names
    fetched_at: datetime  # tz-aware UTC


@dataclass(frozen=True)
class FetchPolicy:
    """How hard to try. Tests pass a tiny backoff and a no-op `sleep` so they stay fast."""

    timeout_s: float = 30.0
    retries: int = 4
    backoff_s: float = 1.0
    max_wait_s: float = 60.0
    max_bytes: int = DEFAULT_MAX_BYTES
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)


DEFAULT_POLICY = FetchPolicy()


def redact_url(url: str, secret_params: Collection[str]) -> str:
    """The URL with the values of `secret_params` replaced by ***."""
    if not secret_params:
        return url
    parts = urlsplit(url)
    query = [(k, REDACTED if k in secret_params else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit(parts._replace(query=urlencode(query, safe="*'(),$ ")))


def _redact_text(text: str, secrets: Collection[str]) -> str:
    """`text` without any secret, as written or as a URL carries it (a key "a+b/c==" is
    "a%2Bb%2Fc%3D%3D" in a query string that an error message repeats)."""
    for secret in secrets:
        if secret:
            for form in (secret, quote_plus(secret), quote(secret, safe="")):
                text = text.replace(form, REDACTED)
    return text


def retry_after_s(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def fetch(session: requests.Session, url: str, *, source: str,
          params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
          secret_params: Collection[str] = (), secret_headers: Collection[str] = (),
          policy: FetchPolicy = DEFAULT_POLICY) -> Fetched:
    """GET `url` and return its bytes, or raise FetchError.

    Retries (at most `policy.retries` extra attempts) on 429, 5xx and connection errors or
    timeouts, waiting backoff_s * 2**attempt, or Retry-After when the server says so; either
    wait is capped at `max_wait_s`. A body larger than `max_bytes` is refused while
    streaming, so a runaway response never fills memory. Other 4xx fail at once (a 401 will
    not get better).
    """
    timeout_s, retries, backoff_s = policy.timeout_s, policy.retries, policy.backoff_s
    max_wait_s, max_bytes, sleep = policy.max_wait_s, policy.max_bytes, policy.sleep
    sent_params = {k: str(v) for k, v in (params or {}).items()}
    secrets = [sent_params[k] for k in secret_params if k in sent_params]
    secrets += [v for k, v in (headers or {}).items() if k in secret_headers]
    safe_params = {k: (REDACTED if k in secret_params else v) for k, v in sent_params.items()}
    full_url = requests.Request("GET", url, params=sent_params or None).prepare().url or url
    shown_url = redact_url(full_url, secret_params)

    last_reason = "no attempt made"
    last_status: int | None = None
    for attempt in range(retries + 1):
        wait = backoff_s * 2 ** attempt
        try:
            response = session.get(url, params=sent_params or None, headers=dict(headers or {}),
                                   timeout=timeout_s, stream=True, allow_redirects=True)
        except (requests.ConnectionError, requests.Timeout) as error:
            last_status = None
            last_reason = _redact_text(f"{type(error).__name__}: {error}", secrets)
        except requests.RequestException as error:  # redirect loop, invalid URL: no retry
            raise FetchError(source, shown_url, _redact_text(
                f"{type(error).__name__}: {error}", secrets)) from None
        else:
            with response:
                final_url = redact_url(response.url or url, secret_params)
                if response.status_code in RETRY_STATUSES:
                    last_status = response.status_code
                    last_reason = f"{response.reason or 'retryable status'}"
                    told = retry_after_s(response.headers.get("Retry-After"))
                    if told is not None:
                        wait = told
                        last_reason += f" (Retry-After {response.headers['Retry-After']})"
                elif response.status_code >= 400:
                    snippet = _read_capped(response, 500, source, final_url, tolerate=True)
                    detail = _redact_text(snippet.decode("utf-8", "replace").strip(), secrets)
                    raise FetchError(source, final_url,
                                     f"{response.reason}: {detail[:300]}".strip(": "),
                                     response.status_code)
                else:
                    try:
                        data = _read_capped(response, max_bytes, source, final_url)
                    except requests.RequestException as error:
                        last_status = response.status_code
                        last_reason = _redact_text(f"body cut off: {error}", secrets)
                    else:
                        return Fetched(
                            source=source, data=data, url=final_url, params=safe_params,
                            status=response.status_code,
                            headers={k: response.headers[k] for k in NOTABLE_HEADERS
                                     if k in response.headers},
                            fetched_at=datetime.now(UTC),
                        )
        if attempt < retries:
            sleep(min(wait, max_wait_s))
    raise FetchError(source, shown_url,
                     f"gave up after {retries + 1} attempts: {last_reason}", last_status)


def _read_capped(response: requests.Response, max_bytes: int, source: str, url: str,
                 tolerate: bool = False) -> bytes:
    """Read the body, refusing more than `max_bytes` (or, with `tolerate`, truncating: used
    only for the snippet of an error body)."""
    declared = response.headers.get("Content-Length")
    if not tolerate and declared and declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(source, url, f"response of {declared} bytes exceeds the cap of "
                         f"{max_bytes} bytes", response.status_code)
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(chunk_size=64 * 1024):
        size += len(chunk)
        if size > max_bytes:
            if tolerate:
                chunks.append(chunk[: max_bytes - (size - len(chunk))])
                break
            raise FetchError(source, url, f"response exceeds the cap of {max_bytes} bytes",
                             response.status_code)
        chunks.append(chunk)
    return b"".join(chunks)



#: The policy live runs use.
DEFAULT_POLICY = FetchPolicy()
