"""`scorecard ingest` meeting hostile upstream text, through typer's CliRunner, a real local
HTTP server (SCORECARD_<SOURCE>_BASE_URL) and a real DuckDB file: rich markup in a body is
printed as text (no MarkupError, exit 2, every source's line printed), each result stays on
one line however long, an echoed key never reaches the output, `loads.error` or a stored
snapshot, and `--timeout` / $SCORECARD_HTTP_TIMEOUT_S are checked and applied."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import pytest
import typer
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from pipeline.cli.ingest import ingest
from pipeline.ingest import start

app = typer.Typer()
app.command("ingest")(ingest)
app.command("other")(lambda: None)  # two commands: `ingest` stays a subcommand
runner = CliRunner()


def test_markup_in_server_bodies_is_printed_as_text(tmp_path: Path, httpserver: HTTPServer,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # OVHcloud answers 404 with "[/bold]" in its page; Scaleway an error object with "[/red]"
    # and 200. Both used to end `ingest` in rich.errors.MarkupError.
    httpserver.expect_request("/1.0/order/catalog/public/cloud").respond_with_data(
        "<h1>Not [/bold] found [link=http://x]here[/link]</h1>", status=404)
    httpserver.expect_request(
        "/instance/v1/zones/fr-par-1/products/servers").respond_with_data(
        '{"error": "[/red] quota " , "message": "' + "x" * 400 + '"}')
    root = httpserver.url_for("").rstrip("/")
    monkeypatch.setenv("SCORECARD_OVHCLOUD_BASE_URL", root)
    monkeypatch.setenv("SCORECARD_SCALEWAY_BASE_URL", root)
    result = runner.invoke(app, ["ingest", "scaleway", "ovhcloud", "--vintage", "2026-11",
                                 "--db", str(tmp_path / "s.duckdb")])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    [scaleway] = [line for line in lines if line.startswith("scaleway: failed")]
    [ovh] = [line for line in lines if line.startswith("ovhcloud: failed")]
    assert "[/bold]" in ovh and "[link=http://x]" in ovh  # as sent, not interpreted
    assert "[/red]" in scaleway
    # the server said 400 x's: the quote is cut, and the line is one line (not wrapped at 80)
    assert len(scaleway) > 200 and "x" * 400 not in scaleway


def test_an_echoed_key_is_in_no_output_error_or_snapshot(
        tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "em/Tok+en="
    # the upstream echoes the request, the key in lower-case percent-encoding among others
    echo = ('{"error": "bad token em/Tok+en= (em%2ftok%2ben%3d? em%2FTok%2Ben%3D)", '
            '"message": "header auth-token: em/Tok+en="}')
    httpserver.expect_request("/v4/carbon-intensity/history").respond_with_data(echo)
    monkeypatch.setenv("SCORECARD_ELECTRICITY_MAPS_BASE_URL",
                       httpserver.url_for("").rstrip("/"))
    monkeypatch.setenv("ELECTRICITYMAPS_API_KEY", token)
    db = tmp_path / "s.duckdb"
    result = runner.invoke(app, ["ingest", "electricity_maps", "--vintage", "2026-11",
                                 "--db", str(db)])
    assert result.exit_code == 2 and "electricity_maps: failed: parse error" in result.output
    con = duckdb.connect(str(db), read_only=True)
    errors = " ".join(e for (e,) in con.execute("SELECT error FROM loads").fetchall())
    contents = b" ".join(bytes(c) for (c,) in con.execute(
        "SELECT content FROM raw_snapshots").fetchall())
    con.close()
    assert "bad token ***" in errors and contents.count(b"***") >= 2
    # "em%2ftok%2ben%3d" differs from the key's encoding in case only inside the hex digits
    # of "Tok": it is not the key and may stay; every true form is gone
    for form in (token, "em%2FTok%2Ben%3D", "em%2fTok%2ben%3d"):
        assert form not in result.output and form not in errors
        assert form.encode() not in contents


@pytest.mark.parametrize("args, env, message", [
    (["--timeout", "0"], None, "--timeout '0.0' must be a positive number of seconds"),
    (["--timeout", "nan"], None, "--timeout 'nan' must be a positive number of seconds"),
    ([], "soon", "$SCORECARD_HTTP_TIMEOUT_S 'soon' is not a number of seconds"),
])
def test_a_bad_timeout_exits_1(args: list[str], env: str | None, message: str, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    if env is not None:
        monkeypatch.setenv("SCORECARD_HTTP_TIMEOUT_S", env)
    result = runner.invoke(app, ["ingest", "ecb", *args, "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 1 and message in result.output


def test_timeout_flag_and_env_set_the_deadlines(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    con = duckdb.connect(str(tmp_path / "s.duckdb"))
    from pipeline import store
    store.ensure_tables(con, store.db.MARKET_TABLES)
    monkeypatch.setenv("SCORECARD_HTTP_TIMEOUT_S", "90")
    by_env = start.context(con, "2026-11", date(2026, 11, 29)).policy
    by_flag = start.context(con, "2026-11", date(2026, 11, 29), 10.0).policy
    con.close()
    # env 90 s: each request 90 s in total, reads capped at the 30 s default, the source
    # 5 x 90 = 450 s; the flag wins over the env: 10 s, reads 10 s, the source at least 300 s
    assert (by_env.deadline_s, by_env.timeout_s, by_env.source_deadline_s) == (90, 30, 450)
    assert (by_flag.deadline_s, by_flag.timeout_s, by_flag.source_deadline_s) == (10, 10, 300)
