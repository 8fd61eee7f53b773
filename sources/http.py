"""The one way every source talks HTTP: an injected session, deadlines, retries with
exponential backoff on 429/5xx/timeouts (honouring Retry-After, capped and reported), a size
cap enforced while streaming (per response, and per source with a `ByteBudget`), redirects
followed by hand (secret headers dropped when the host
changes), and secrets redacted from everything that is returned or raised.

Deadlines: `timeout_s` bounds each socket read, `deadline_s` one request in total (connect,
headers and every read of the body: a server sending a byte every 2 s is cut there), and
`not_after` (a `time.monotonic()` instant set per source by ingest) all of one source's
requests, retries and waits included. A name that does not resolve and a refused connection
fail at once: retrying them only costs time.

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
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import requests

from sources.text import REDACTED, one_line, redact

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 10
NOTABLE_HEADERS = ("content-type", "content-length", "etag", "last-modified", "date",
                   "retry-after", "x-total-count", "x-ratelimit-remaining")
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: Environment variable that sets `deadline_s` (as `scorecard ingest --timeout` does).
TIMEOUT_ENV = "SCORECARD_HTTP_TIMEOUT_S"

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


class ByteBudget:
    """What one source may fetch in response bodies in all, shared by all its requests (ingest
    stores each page as it arrives, so this bounds the store's growth and the time, not the
    memory). `take` counts bytes as they arrive and raises FetchError past the cap."""

    def __init__(self, source: str, max_bytes: int):
        self.source, self.max_bytes, self.used = source, max_bytes, 0

    def take(self, size: int, url: str) -> None:
        self.used += size
        if self.used > self.max_bytes:
            raise FetchError(self.source, url, f"the source's responses exceed its cap of "
                             f"{self.max_bytes} bytes in all (SCORECARD_SOURCE_MAX_BYTES)")


@dataclass(frozen=True)
class FetchPolicy:
    """How hard to try, and for how long. Tests pass a tiny backoff and a no-op `sleep` so
    they stay fast."""

    timeout_s: float = 30.0  # each connect and each socket read
    retries: int = 4
    backoff_s: float = 1.0
    max_wait_s: float = 120.0  # the longest wait between attempts (Retry-After included)
    max_bytes: int = DEFAULT_MAX_BYTES
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    deadline_s: float = 60.0  # one request in total: connect, headers, every body read
    not_after: float | None = None  # time.monotonic() past which no request starts or reads
    source_deadline_s: float = 300.0  # what ingest sets `not_after` to for each source
    budget: ByteBudget | None = field(default=None, compare=False)  # one source's bodies

    def left_s(self) -> float:
        """Seconds left before `not_after` (infinite without one)."""
        return float("inf") if self.not_after is None else self.not_after - time.monotonic()


#: The policy live runs use.
DEFAULT_POLICY = FetchPolicy()


def redact_url(url: str, secret_params: Collection[str]) -> str:
    """The URL with the values of `secret_params` replaced by ***."""
    if not secret_params:
        return url
    parts = urlsplit(url)
    query = [(k, REDACTED if k in secret_params else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit(parts._replace(query=urlencode(query, safe="*'(),$ ")))


def retry_after_s(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def fails_at_once(error: BaseException) -> str | None:
    """What a connection error is when retrying cannot help (the name does not resolve, the
    port refuses), or None (a reset, a timeout: worth another attempt)."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [error]
    while stack:
        found = stack.pop()
        if found is None or id(found) in seen:
            continue
        seen.add(id(found))
        name = type(found).__name__
        if name == "NameResolutionError" or "Name or service not known" in str(found) \
                or "nodename nor servname" in str(found) or "getaddrinfo failed" in str(found):
            return "the host name does not resolve (offline, or a wrong base URL?)"
        if isinstance(found, ConnectionRefusedError) or "Connection refused" in str(found):
            return "connection refused (nothing listens there)"
        stack += [found.__cause__, found.__context__,
                  *(a for a in getattr(found, "args", ()) if isinstance(a, BaseException)),
                  getattr(found, "reason", None)]
    return None


def fetch(session: requests.Session, url: str, *, source: str,
          params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
          secret_params: Collection[str] = (), secret_headers: Collection[str] = (),
          policy: FetchPolicy = DEFAULT_POLICY) -> Fetched:
    """GET `url` and return its bytes, or raise FetchError.

    Retries (at most `policy.retries` extra attempts) on 429, 5xx, timeouts and cut
    connections, waiting backoff_s * 2**attempt, or Retry-After when the server says so;
    either wait is capped at `max_wait_s` (a capped Retry-After is reported). A name that
    does not resolve, a refused connection and other 4xx (a 401 will not get better) fail at
    once. A body larger than `max_bytes` is refused while streaming; a request past
    `deadline_s`, or any past `policy.not_after`, is cut and reported.
    """
    retries, backoff_s = policy.retries, policy.backoff_s
    max_wait_s, sleep = policy.max_wait_s, policy.sleep
    sent_params = {k: str(v) for k, v in (params or {}).items()}
    secrets = [sent_params[k] for k in secret_params if k in sent_params]
    secrets += [v for k, v in (headers or {}).items() if k in secret_headers]
    safe_params = {k: (REDACTED if k in secret_params else v) for k, v in sent_params.items()}
    full_url = requests.Request("GET", url, params=sent_params or None).prepare().url or url
    shown_url = redact_url(full_url, secret_params)

    def failed(reason: str, status: int | None = None, where: str = shown_url) -> FetchError:
        return FetchError(source, redact(where, secrets),
                          one_line(redact(reason, secrets), 400), status)

    last_reason = "no attempt made"
    last_status: int | None = None
    for attempt in range(retries + 1):
        if policy.left_s() <= 0:
            raise failed(f"the source's deadline passed before attempt {attempt + 1} "
                         f"(last: {last_reason})", last_status)
        wait = backoff_s * 2 ** attempt
        try:
            got = _attempt(session, full_url, dict(headers or {}), secret_headers, policy,
                           source, secrets, secret_params)
        except _Retry as retry:
            last_status, last_reason = retry.status, retry.reason
            if retry.wait_s is not None:
                wait = retry.wait_s
                if wait > max_wait_s:
                    last_reason += f", capped at {max_wait_s:g} s"
        except (requests.ConnectionError, requests.Timeout) as error:
            last_status = None
            last_reason = f"{type(error).__name__}: {error}"
            at_once = fails_at_once(error)
            if at_once:
                raise failed(f"{at_once}: {last_reason}") from None
        except requests.RequestException as error:  # invalid URL and the like: no retry
            raise failed(f"{type(error).__name__}: {error}") from None
        else:
            return Fetched(source=source, data=got.data, url=got.url, params=safe_params,
                           status=got.status, headers=got.headers,
                           fetched_at=datetime.now(UTC))
        if attempt < retries:
            pause = min(wait, max_wait_s)
            if pause >= policy.left_s():
                raise failed(f"gave up after {attempt + 1} attempt(s): waiting {pause:g} s "
                             f"would pass the source's deadline; last: {last_reason}",
                             last_status)
            sleep(pause)
    raise failed(f"gave up after {retries + 1} attempts: {last_reason}", last_status)


class _Retry(Exception):
    """An attempt worth repeating: its status, reason and the wait the server asked for."""

    def __init__(self, status: int | None, reason: str, wait_s: float | None = None):
        super().__init__(reason)
        self.status, self.reason, self.wait_s = status, reason, wait_s


@dataclass(frozen=True)
class _Got:
    data: bytes
    url: str
    status: int
    headers: dict[str, str]


def _attempt(session: requests.Session, url: str, headers: dict[str, str],
             secret_headers: Collection[str], policy: FetchPolicy, source: str,
             secrets: Collection[str], secret_params: Collection[str]) -> _Got:
    """One attempt: GET `url`, its redirects followed by `follow`, the body read within the
    request's deadline."""
    started = time.monotonic()
    stop = min(started + policy.deadline_s, policy.not_after or float("inf"))
    response = follow(session, url, headers, secret_headers=secret_headers,
                      timeout_s=lambda: max(0.001, min(policy.timeout_s,
                                                       stop - time.monotonic())))
    with response:
        shown = redact(redact_url(response.url or url, secret_params), secrets)
        if response.status_code in RETRY_STATUSES:
            reason = f"HTTP {response.status_code} {response.reason or ''}".strip()
            told = retry_after_s(response.headers.get("Retry-After"))
            if told is not None:
                reason += f" (Retry-After {one_line(response.headers['Retry-After'], 40)})"
            raise _Retry(response.status_code, reason, told)
        if response.status_code >= 400:
            snippet = _read_capped(response, 500, source, shown, stop, tolerate=True)
            detail = one_line(redact(snippet.decode("utf-8", "replace").strip(), secrets))
            raise FetchError(source, shown, f"{response.reason}: {detail}".strip(": "),
                             response.status_code)
        try:
            data = _read_capped(response, policy.max_bytes, source, shown, stop,
                                budget=policy.budget)
        except requests.RequestException as error:
            raise _Retry(response.status_code, redact(f"body cut off: {error}", secrets)
                         ) from None
        return _Got(data, shown, response.status_code,
                    {k: response.headers[k] for k in NOTABLE_HEADERS
                     if k in response.headers})


def follow(session: requests.Session, url: str, headers: Mapping[str, str], *,
           secret_headers: Collection[str] = (), timeout_s: Callable[[], float]
           ) -> requests.Response:
    """GET `url` (streamed), following redirects by hand: to another host than `url`'s, the
    `secret_headers`, Authorization and Cookie are not sent (as requests does for
    Authorization). Each request's connect and read timeout is `timeout_s()` at its start
    (what is left of a deadline). Returns the final answer with its body unread (the caller
    reads or closes it); past `MAX_REDIRECTS` redirects, requests.TooManyRedirects carrying
    the last answer."""
    host = urlsplit(url).netloc
    sent = dict(headers)
    for _ in range(MAX_REDIRECTS + 1):
        wait_s = timeout_s()
        response = session.get(url, headers=sent, timeout=(wait_s, wait_s), stream=True,
                               allow_redirects=False)
        location = response.headers.get("Location")
        if response.status_code not in REDIRECT_STATUSES or not location:
            return response
        response.close()
        url = urljoin(response.url or url, location)
        if urlsplit(url).netloc != host:
            sent = {k: v for k, v in sent.items() if k not in secret_headers
                    and k.lower() not in ("authorization", "cookie")}
    raise requests.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects", response=response)


def _read_capped(response: requests.Response, max_bytes: int, source: str, url: str,
                 stop: float, tolerate: bool = False, budget: ByteBudget | None = None
                 ) -> bytes:
    """Read the body, refusing more than `max_bytes` (or, with `tolerate`, truncating: used
    only for the snippet of an error body) and cutting it at the `stop` instant
    (time.monotonic()): each read returns what has arrived, so a trickling server is cut
    there, not only a silent one."""
    declared = response.headers.get("Content-Length")
    if not tolerate and declared and declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(source, url, f"response of {declared} bytes exceeds the cap of "
                         f"{max_bytes} bytes", response.status_code)
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > stop:
            if tolerate:
                break
            raise _Retry(response.status_code, "the request's deadline passed while the body "
                         f"was arriving ({size} bytes read): a slow or stalled server")
        try:
            chunk = response.raw.read1(64 * 1024, decode_content=True)
        except Exception as error:  # urllib3's own errors: a cut or timed-out read
            raise requests.ConnectionError(f"{type(error).__name__}: {error}") from None
        if not chunk:
            break
        if budget is not None:
            budget.take(len(chunk), url)
        size += len(chunk)
        if size > max_bytes:
            if tolerate:
                chunks.append(chunk[: max_bytes - (size - len(chunk))])
                break
            raise FetchError(source, url, f"response exceeds the cap of {max_bytes} bytes",
                             response.status_code)
        chunks.append(chunk)
    return b"".join(chunks)
