"""`scorecard evidence add --prometheus URL --query-window START..END` against a real Prometheus
server (Debian's `prometheus`, started and stopped here) scraping a small local exporter that
serves recorded metrics: vLLM 0.25.1's real /metrics scrapes (idle, then loaded; ../shared/
samples/vllm_metrics) and dcgm-exporter's power gauges (tests/fixtures/power). The run added
is the one the text reader gives for the same two scrapes (the same readers), and the GPUs'
power samples are the exporter's. Skipped, with the reason, where the binary or the samples
are absent; .ci/run installs the binary."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
import pytest
from samples import sample
from typer.testing import CliRunner

from pipeline.cli import app
from sources.bench.aggregates import vllm_metrics

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "power"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _dcgm_power() -> str:
    """The first scrape's DCGM_FI_DEV_POWER_USAGE family of the dcgm fixture: GPU 0 at 300 W,
    GPU 1 at 400 W."""
    text = (FIXTURES / "dcgm_scrapes_2gpu.prom").read_text()
    first = text.split("# scrape_utc:")[1]
    return "".join(line + "\n" for line in first.splitlines()
                   if "DCGM_FI_DEV_POWER_USAGE " in line or
                   line.startswith("DCGM_FI_DEV_POWER_USAGE{"))


class _Exporter:
    """Serves `body` at /metrics (the test switches it from the idle to the loaded scrape)."""

    def __init__(self, body: str):
        self.body = body
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                data = exporter.body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", _port()), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.loads(answer.read())


def _wait(what: str, check: Any, seconds: float = 60.0) -> None:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"Prometheus: {what} not within {seconds:g} s")


def _scrapes(url: str) -> int:
    answer = _get(f"{url}/api/v1/query?query=count_over_time(up%5B5m%5D)")
    result = answer["data"]["result"]
    return int(float(result[0]["value"][1])) if result else 0


def test_evidence_add_from_a_live_prometheus(tmp_path: Path) -> None:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("no prometheus binary (apt-get install prometheus; .ci/run does)")
    idle = sample("vllm_metrics/er0080_metrics_vllm_0_25_1_idle.txt").read_text()
    loaded = sample("vllm_metrics/er0080_metrics_vllm_0_25_1_loaded.txt").read_text()
    power = _dcgm_power()
    assert power.count("\nDCGM_FI_DEV_POWER_USAGE{") == 2
    exporter = _Exporter(idle + power)
    port = _port()
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: recorded\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{exporter.port}']\n")
    log = (tmp_path / "prometheus.log").open("w")
    server = subprocess.Popen(
        [binary, f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        start = time.time()
        _wait("ready", lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200)
        _wait("two scrapes of the idle server", lambda: _scrapes(url) >= 2)
        exporter.body = loaded + power
        seen = _scrapes(url)
        _wait("two scrapes of the loaded server", lambda: _scrapes(url) >= seen + 2)
        end = time.time()
        db = tmp_path / "store.duckdb"
        window = (f"{time.strftime('%Y-%m-%dT%H:%M:%S+00:00', time.gmtime(start - 1))}.."
                  f"{time.strftime('%Y-%m-%dT%H:%M:%S+00:00', time.gmtime(end + 1))}")
        added = CliRunner().invoke(app, [
            "evidence", "add", "--prometheus", url, "--query-window", window, "--db", str(db),
            "--save-to", str(tmp_path / "answers")])
        assert added.exit_code == 0, added.output
        assert sorted(p.name.split("-")[1] for p in (tmp_path / "answers").iterdir()) == [
            "dcgm", "vllm"]
    finally:
        server.terminate()
        server.wait(timeout=30)
        exporter.stop()
        log.close()
    # the same readers: the text reader's run over the same two scrapes (idle, then loaded):
    # 600 requests finished by length and 165,293 output tokens (loaded minus idle's zeros)
    text = (f"# scraped_at: 1000\n{idle}# scraped_at: 1010\n{loaded}").encode()
    (expected,) = vllm_metrics.parse(text, path="two-scrapes.txt")
    assert expected.reported["completed"] == 600
    assert expected.reported["total_output_tokens"] == 165_293
    con = duckdb.connect(str(db), read_only=True)
    run = con.execute("SELECT reported_completed, reported_total_output_tokens, "
                      "reported_ttft_p50_s, reported_ttft_p99_s FROM core__bench_runs"
                      ).fetchall()
    assert run == [(600, 165_293, pytest.approx(expected.reported["ttft_p50_s"]),
                    pytest.approx(expected.reported["ttft_p99_s"]))]
    powers = con.execute("SELECT device_id, min(power_w), max(power_w), count(*) "
                         "FROM core__power_samples GROUP BY device_id ORDER BY device_id"
                         ).fetchall()
    con.close()
    assert [(gpu[:12], low, high) for gpu, low, high, _ in powers] == [
        ("GPU-aaaaaaaa", 300.0, 300.0), ("GPU-bbbbbbbb", 400.0, 400.0)]
    assert all(n >= 4 for *_, n in powers)  # at least the four scrapes waited for


def test_the_token_is_sent_from_the_environment_and_never_shown(
        tmp_path: Path, httpserver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Prometheus behind authentication (a local server answering the recorded DCGM
    query_range answer to the right bearer token, 403 otherwise): the token is read from
    $SCORECARD_PROMETHEUS_TOKEN, sent, and absent from what the command prints; with no
    vLLM series the command notes it and adds the power answer."""
    from werkzeug import Response

    answer = (FIXTURES / "prometheus_query_range_dcgm_2gpu.json").read_bytes()
    empty = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}})

    def handler(request: Any) -> Response:
        if request.headers.get("Authorization") != "Bearer s3cret-token":
            return Response("forbidden", status=403)
        query = request.args["query"]
        assert float(request.args["end"]) - float(request.args["start"]) == 600.0
        assert request.args["step"] == "1s"
        return Response(answer if "DCGM" in query else empty, content_type="application/json")

    httpserver.expect_request("/api/v1/query_range").respond_with_handler(handler)
    window = "2026-11-20T10:00:00+00:00..2026-11-20T10:10:00+00:00"
    args = ["evidence", "add", "--prometheus", httpserver.url_for("/"), "--query-window",
            window, "--db", str(tmp_path / "store.duckdb"), "--save-to", str(tmp_path / "a")]
    monkeypatch.setenv("SCORECARD_PROMETHEUS_TOKEN", "wrong-token-value")
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1 and "HTTP 403" in refused.output
    assert "wrong-token-value" not in refused.output
    assert not any((tmp_path / "a").glob("*.json"))  # nothing kept, nothing added
    monkeypatch.setenv("SCORECARD_PROMETHEUS_TOKEN", "s3cret-token")
    added = CliRunner().invoke(app, args)
    assert added.exit_code == 0, added.output
    assert "s3cret-token" not in added.output
    assert "no vllm series over the window" in added.output
    assert [p.name for p in (tmp_path / "a").iterdir()] == [
        "prometheus-dcgm-1795168800-1795169400.json"]
