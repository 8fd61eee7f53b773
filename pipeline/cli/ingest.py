"""`scorecard ingest` and `scorecard sources` (registered by pipeline/cli.py). Heavy imports
stay inside the functions so `scorecard --help` starts fast."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

VINTAGE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
USER_AGENT = "inference-scorecard/0.1 (market-data ingest; +https://github.com/)"


def ingest(
    sources: Annotated[list[str] | None, typer.Argument(
        help="Sources to ingest (default: all). See `scorecard sources`.")] = None,
    vintage: Annotated[str | None, typer.Option(
        help="Market-data month YYYY-MM (default: the current month, UTC).")] = None,
    offline: Annotated[bool, typer.Option(
        help="Touch no network: re-parse the stored raw snapshots of that vintage.")] = False,
    db: Annotated[str | None, typer.Option(help="DuckDB file (default $SCORECARD_DB or "
                                           "./scorecard.duckdb).")] = None,
    record: Annotated[str | None, typer.Option(
        help="Also write every fetched response under DIR/<source>/ (to refresh test "
             "fixtures where network exists).")] = None,
) -> None:
    """Pull this month's market data (prices, grid, FX) into the store as a new vintage."""
    from datetime import UTC, datetime

    import requests
    from rich.console import Console

    from pipeline import store
    from pipeline.ingest.pull import FAILED, LOADED, NOTHING, UNCHANGED, exit_code
    from pipeline.ingest.pull import ingest as run_ingest
    from sources.registry import SOURCES

    err = Console(stderr=True)
    chosen = list(sources or SOURCES)
    unknown = [s for s in chosen if s not in SOURCES]
    if unknown:
        err.print(f"unknown source(s): {', '.join(unknown)}; known: {', '.join(SOURCES)}")
        raise typer.Exit(1)
    today = datetime.now(UTC).date()
    vintage = vintage or today.strftime("%Y-%m")
    if not VINTAGE.match(vintage):
        err.print(f"--vintage {vintage!r} is not YYYY-MM")
        raise typer.Exit(1)
    if record and offline:
        err.print("--record needs the network; it cannot be combined with --offline")
        raise typer.Exit(1)
    con = store.connect(store.db_path(db))
    ctx = _context(con, vintage, today)
    session: requests.Session | None = None
    if not offline:
        session = requests.Session()
        session.headers["User-Agent"] = USER_AGENT
    results = _run_with_progress(con, session, chosen, ctx, offline, err, run_ingest,
                                 Path(record) if record else None)
    for result in results:
        style = {LOADED: "green", UNCHANGED: "cyan", FAILED: "red"}.get(result.status, "yellow")
        err.print(f"[{style}]{result.line()}[/{style}]", highlight=False, markup=True)
        for note in result.notes:
            err.print(f"    note: {note}", highlight=False, markup=False)
    if offline and all(result.status == NOTHING for result in results):
        err.print(f"nothing stored for vintage {vintage} in {store.db_path(db)}: run "
                  "`scorecard ingest` with the network first (or `scorecard run`, which "
                  "works offline on the bundled reference data)", highlight=False)
    code = exit_code(results)
    con.close()
    if code:
        raise typer.Exit(code)


def _run_with_progress(con, session, chosen, ctx, offline, err, run_ingest,  # type: ignore[no-untyped-def]
                       record_dir):
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        tasks = {name: bar.add_task(f"{name}: waiting", total=None) for name in chosen}

        def progress(source: str, stage: str) -> None:
            bar.update(tasks[source], description=f"{source}: {stage}")

        return run_ingest(con, session, chosen, ctx, offline=offline, progress=progress,
                          record_dir=record_dir)


def _context(con, vintage, today):  # type: ignore[no-untyped-def]
    """Base URLs can be pointed elsewhere (a replay server, a mirror) with
    SCORECARD_<SOURCE>_BASE_URL, e.g. SCORECARD_SCALEWAY_BASE_URL=http://127.0.0.1:8000."""
    import os

    from pipeline.ingest.inputs import fx_rates, regions
    from sources.job import Context
    from sources.registry import SOURCES

    # every job's host, and Ember's second one (its key-gated API)
    base_urls = {name: os.environ[f"SCORECARD_{name.upper()}_BASE_URL"]
                 for name in (*SOURCES, "ember_api")
                 if os.environ.get(f"SCORECARD_{name.upper()}_BASE_URL")}
    return Context(vintage=vintage, today=today, regions=regions(con),
                   fx_rates=lambda: fx_rates(con), base_urls=base_urls)


def sources_cmd(
    db: Annotated[str | None, typer.Option(help="DuckDB file (default $SCORECARD_DB or "
                                           "./scorecard.duckdb).")] = None,
) -> None:
    """List each source: what it provides, licence, key needed, last good fetch, rows."""
    import os
    from datetime import UTC

    from pipeline import store
    from sources.registry import SOURCES

    path = store.db_path(db)
    status: dict[str, tuple[object, object, object]] = {}
    if path.exists():
        con = store.connect(path)
        for source, finished, rows, vintage in con.execute(
                "SELECT source, max(finished_at_utc), arg_max(row_count, finished_at_utc), "
                "arg_max(vintage, finished_at_utc) FROM loads WHERE status = 'ok' "
                "GROUP BY source").fetchall():
            status[source] = (finished.astimezone(UTC), rows, vintage)
        con.close()
    def last(name: str) -> str:
        finished, rows, vintage = status.get(name, (None, None, None))
        return "never" if finished is None else (
            f"{finished:%Y-%m-%d %H:%M} UTC (vintage {vintage}, {rows} rows)")

    for name, module in SOURCES.items():
        env = module.ENV_VAR
        key = "none needed" if env is None else (
            f"{env} ({'set' if os.environ.get(env) else 'not set'}"
            f"{'' if module.NEEDS_KEY else '; optional, extra data when set'})")
        typer.echo(f"{name}: provides {', '.join(t.name for t in module.PROVIDES)}")
        typer.echo(f"  licence: {module.LICENCE}")
        typer.echo(f"  key: {key}")
        typer.echo(f"  last good load: {last(name)}")
    typer.echo("bundled: reference data shipped with the package (sources/reference/*.csv), "
               "loaded by `scorecard run`")
    typer.echo("  licence: per row (sources/reference/README.md)")
    typer.echo("  key: none needed")
    typer.echo(f"  last good load: {last('bundled')}")
