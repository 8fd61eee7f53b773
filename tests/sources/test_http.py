"""sources.http.fetch against a real local HTTP server: retries, Retry-After, caps, secrets."""

from __future__ import annotations

import time

import pytest
import requests
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from sources.http import FetchError, FetchPolicy, fetch, retry_after_s


@pytest.fixture
def session() -> requests.Session:
    with requests.Session() as s:
        yield s


def quick(session: requests.Session, url: str, waits: list[float], **kw):  # type: ignore[no-untyped-def]
    """fetch with a fast policy (3 retries, 0.01 s backoff, waits recorded); `kw` holds request
    arguments and policy fields alike."""
    knobs = {name: kw.pop(name) for name in ("retries", "timeout_s", "max_wait_s", "max_bytes")
             if name in kw}
    policy = FetchPolicy(**{"retries": 3, **knobs}, backoff_s=0.01, sleep=waits.append)
    return fetch(session, url, source="test", policy=policy, **kw)


def test_retries_503_then_succeeds(httpserver: HTTPServer, session: requests.Session) -> None:
    for _ in range(2):
        httpserver.expect_ordered_request("/x").respond_with_data("busy", status=503)
    httpserver.expect_ordered_request("/x").respond_with_data(b"ok", content_type="text/plain")
    waits: list[float] = []
    got = quick(session, httpserver.url_for("/x"), waits)
    assert got.data == b"ok" and got.status == 200
    # two failures -> two waits of backoff_s * 2**attempt: 0.01 * 1, 0.01 * 2
    assert waits == pytest.approx([0.01, 0.02])
    assert got.headers["content-type"].startswith("text/plain")
    assert got.fetched_at.tzinfo is not None


def test_429_honours_retry_after_capped(httpserver: HTTPServer,
                                        session: requests.Session) -> None:
    httpserver.expect_ordered_request("/x").respond_with_data(
        "slow down", status=429, headers={"Retry-After": "7"})
    httpserver.expect_ordered_request("/x").respond_with_data(
        "slow down", status=429, headers={"Retry-After": "600"})
    httpserver.expect_ordered_request("/x").respond_with_data("ok")
    waits: list[float] = []
    got = quick(session, httpserver.url_for("/x"), waits, max_wait_s=30)
    assert got.data == b"ok"
    # Retry-After 7 s is honoured as is; 600 s is capped at max_wait_s = 30 s
    assert waits == [7.0, 30.0]


def test_500_every_time_gives_up_naming_source_url_status(
        httpserver: HTTPServer, session: requests.Session) -> None:
    httpserver.expect_request("/x").respond_with_data("boom", status=500)
    waits: list[float] = []
    with pytest.raises(FetchError) as caught:
        quick(session, httpserver.url_for("/x"), waits, retries=2)
    assert caught.value.status == 500
    assert str(caught.value).startswith(f"test: {httpserver.url_for('/x')}: HTTP 500")
    assert "gave up after 3 attempts" in str(caught.value)
    assert len(waits) == 2  # 3 attempts, 2 waits in between
    assert len(httpserver.log) == 3


def test_401_fails_at_once_without_leaking_the_secret(
        httpserver: HTTPServer, session: requests.Session) -> None:
    httpserver.expect_request("/api").respond_with_data(
        "Unauthorized token s3cr3t-token", status=401)
    waits: list[float] = []
    with pytest.raises(FetchError) as caught:
        quick(session, httpserver.url_for("/api"), waits,
              params={"securityToken": "s3cr3t-token", "documentType": "A44"},
              secret_params=("securityToken",))
    message = str(caught.value)
    assert "s3cr3t-token" not in message
    assert "securityToken=***" in message and "HTTP 401" in message
    assert waits == [] and len(httpserver.log) == 1


def test_secrets_with_url_characters_are_redacted_as_encoded_too(
        session: requests.Session) -> None:
    # A key with + / = is sent percent-encoded (a%2Bb%2Fc%3D%3D); an error that repeats the
    # URL (here: nothing listens on the port) must hide that form too.
    waits: list[float] = []
    with pytest.raises(FetchError) as caught:
        quick(session, "http://127.0.0.1:9/api", waits, retries=0,
              params={"api_key": "a+b/c==", "zone": "FR"}, secret_params=("api_key",))
    message = str(caught.value)
    assert "a%2Bb%2Fc%3D%3D" not in message and "a+b/c==" not in message
    assert "api_key=***" in message and "zone=FR" in message


def test_secret_params_and_headers_are_redacted_in_the_result(
        httpserver: HTTPServer, session: requests.Session) -> None:
    httpserver.expect_request("/api", headers={"auth-token": "hdr-secret"},
                              query_string={"key": "qs-secret", "zone": "FR"}
                              ).respond_with_data("{}")
    got = quick(session, httpserver.url_for("/api"), [],
                params={"key": "qs-secret", "zone": "FR"}, headers={"auth-token": "hdr-secret"},
                secret_params=("key",), secret_headers=("auth-token",))
    assert got.params == {"key": "***", "zone": "FR"}
    assert "qs-secret" not in got.url and "key=***" in got.url
    assert "hdr-secret" not in repr(got)


def test_timeout_is_retried_then_reported(httpserver: HTTPServer,
                                          session: requests.Session) -> None:
    def slow(request: Request) -> Response:
        time.sleep(0.5)
        return Response("late")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    waits: list[float] = []
    with pytest.raises(FetchError) as caught:
        quick(session, httpserver.url_for("/slow"), waits, retries=1, timeout_s=0.1)
    assert "Timeout" in str(caught.value) and caught.value.status is None
    assert len(waits) == 1


def test_size_cap_with_content_length(httpserver: HTTPServer,
                                      session: requests.Session) -> None:
    httpserver.expect_request("/big").respond_with_data(b"x" * 2000)
    with pytest.raises(FetchError, match="2000 bytes exceeds the cap of 1000"):
        quick(session, httpserver.url_for("/big"), [], max_bytes=1000)


def test_size_cap_while_streaming_without_length(httpserver: HTTPServer,
                                                 session: requests.Session) -> None:
    def stream(request: Request) -> Response:
        return Response((b"y" * 500 for _ in range(10)), direct_passthrough=True)

    httpserver.expect_request("/stream").respond_with_handler(stream)
    with pytest.raises(FetchError, match="exceeds the cap of 1200 bytes"):
        quick(session, httpserver.url_for("/stream"), [], max_bytes=1200)


def test_connection_refused_fails_at_once(session: requests.Session) -> None:
    waits: list[float] = []
    with pytest.raises(FetchError, match="connection refused") as caught:
        quick(session, "http://127.0.0.1:9/nothing", waits, retries=3)
    assert caught.value.status is None and waits == []  # no retry: nothing listens there
    assert "\n" not in str(caught.value)


def test_a_name_that_does_not_resolve_fails_at_once(session: requests.Session) -> None:
    # .invalid never resolves (RFC 6761): offline, ingest used to retry this five times
    waits: list[float] = []
    with pytest.raises(FetchError, match="does not resolve") as caught:
        quick(session, "http://scorecard-test.invalid/x", waits, retries=3)
    assert caught.value.status is None and waits == []  # no retry, no wait


def test_retry_after_http_date() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 11, 29, 8, 0, 0, tzinfo=UTC)
    # 08:00:12 - 08:00:00 = 12 s
    assert retry_after_s("Sun, 29 Nov 2026 08:00:12 GMT", now) == 12.0
    assert retry_after_s("garbage", now) is None


def test_redirect_loop_fails_at_once(httpserver: HTTPServer, session: requests.Session) -> None:
    httpserver.expect_request("/loop").respond_with_data(
        "", status=302, headers={"Location": httpserver.url_for("/loop")})
    waits: list[float] = []
    with pytest.raises(FetchError, match="TooManyRedirects"):
        quick(session, httpserver.url_for("/loop"), waits)
    assert waits == []  # not retried


def test_a_trickling_server_is_cut_at_the_request_deadline(
        httpserver: HTTPServer, session: requests.Session) -> None:
    # a byte every 0.2 s for 10 s: every socket read succeeds well within timeout_s = 5 s, so
    # only the total deadline (1 s) can stop it; 2 attempts of ~1 s each, then failed
    def trickle(request: Request) -> Response:
        def body():  # type: ignore[no-untyped-def]
            for _ in range(50):
                yield b"x"
                time.sleep(0.2)
        return Response(body(), direct_passthrough=True)

    httpserver.expect_request("/trickle").respond_with_handler(trickle)
    policy = FetchPolicy(retries=1, backoff_s=0.0, sleep=lambda s: None, timeout_s=5.0,
                         deadline_s=1.0)
    with pytest.raises(FetchError, match="deadline passed while the body was arriving"):
        fetch(session, httpserver.url_for("/trickle"), source="test", policy=policy)
    # the 1 s deadline cut each attempt (retries=1: two), not the 10 s the body takes
    assert len(httpserver.log) == 2


def test_the_source_deadline_stops_retries(httpserver: HTTPServer,
                                           session: requests.Session) -> None:
    # 500 every time, backoff 5 s, but the source has 1 s left: the first wait would pass it,
    # so it gives up after one attempt without sleeping
    httpserver.expect_request("/x").respond_with_data("boom", status=500)
    waits: list[float] = []
    policy = FetchPolicy(retries=4, backoff_s=5.0, sleep=waits.append,
                         not_after=time.monotonic() + 1.0)
    with pytest.raises(FetchError, match="would pass the source's deadline") as caught:
        fetch(session, httpserver.url_for("/x"), source="test", policy=policy)
    assert waits == [] and len(httpserver.log) == 1 and caught.value.status == 500
    late = FetchPolicy(not_after=time.monotonic() - 1.0)
    with pytest.raises(FetchError, match="deadline passed before attempt 1"):
        fetch(session, httpserver.url_for("/x"), source="test", policy=late)


def test_a_far_retry_after_is_capped_and_reported(httpserver: HTTPServer,
                                                  session: requests.Session) -> None:
    httpserver.expect_request("/x").respond_with_data(
        "slow down", status=429, headers={"Retry-After": "86400"})
    waits: list[float] = []
    with pytest.raises(FetchError) as caught:
        quick(session, httpserver.url_for("/x"), waits, retries=1, max_wait_s=30)
    # one wait of 30 s (the cap), not a day; the message says what the server asked
    assert waits == [30.0]
    assert "Retry-After 86400" in str(caught.value) and "capped at 30 s" in str(caught.value)


def test_a_redirect_to_another_host_drops_the_secret_header(
        httpserver: HTTPServer, session: requests.Session) -> None:
    # localhost and 127.0.0.1 are two hosts to the client (one server here): the token must
    # not follow the redirect from one to the other, as requests does for Authorization
    seen: list[str | None] = []

    def final(request: Request) -> Response:
        seen.append(request.headers.get("auth-token"))
        return Response("{}")

    other = httpserver.url_for("/final").replace("localhost", "127.0.0.1")
    httpserver.expect_request("/start").respond_with_data(
        "", status=302, headers={"Location": other})
    httpserver.expect_request("/same").respond_with_data(
        "", status=302, headers={"Location": "/final"})
    httpserver.expect_request("/final").respond_with_handler(final)
    for path in ("/start", "/same"):
        got = quick(session, httpserver.url_for(path), [], headers={"auth-token": "tok-123"},
                    secret_headers=("auth-token",))
        assert got.data == b"{}"
    assert seen == [None, "tok-123"]  # dropped across hosts, kept on the same host


def test_an_echoed_secret_is_redacted_in_every_form(httpserver: HTTPServer,
                                                    session: requests.Session) -> None:
    import base64

    secret = "k+y/=Z"
    # echoed plain, percent-encoded upper and lower case, and base64
    echoed = (f"bad key {secret} / k%2By%2F%3DZ / k%2by%2f%3dZ / "
              f"{base64.b64encode(secret.encode()).decode()} [/bold]\x1b[31m")
    httpserver.expect_request("/api").respond_with_data(echoed, status=403)
    with pytest.raises(FetchError) as caught:
        quick(session, httpserver.url_for("/api"), [], params={"key": secret},
              secret_params=("key",))
    message = str(caught.value)
    for form in (secret, "k%2By%2F%3DZ", "k%2by%2f%3dZ", "ayt5Lz1a"):
        assert form not in message
    assert message.count("***") >= 4 + 1  # four echoes and the URL's key=***
    assert "\x1b" not in message and "\\x1b" in message  # the escape shown, not sent
