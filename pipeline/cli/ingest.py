"""`scorecard ingest` and `scorecard sources` (registered by pipeline/cli/__init__.py). Heavy
imports stay inside the functions so `scorecard --help` starts fast; the run's checks and setup
are `pipeline.ingest.start`'s, the run itself `pipeline.ingest.pull`'s."""

from pathlib import Path
from typing import Annotated

import typer


def ingest(
    sources: Annotated[list[str] | None, typer.Argument(
        help="Sources to ingest (default: all). See `scorecard sources`.")] = None,
    vintage: Annotated[str | None, typer.Option(
        help="Market-data month YYYY-MM (default: the current month, UTC).")] = None,
    offline: Annotated[bool, typer.Option(
        "--offline",
        help="Touch no network: re-parse the stored raw snapshots of that vintage.")] = False,
    db: Annotated[Path | None, typer.Option(
        "--db", help="DuckDB file (default: $SCORECARD_DB or ./scorecard.duckdb).",
        show_default=False)] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Load nothing: say for each source whether it is configured (its "
                        "key set when it needs one) and a cheap request of its API "
                        "answers 2xx (401/403 to a key sent: key refused; other: "
                        "failing); exit 2 if any is not.")] = False,
    record: Annotated[Path | None, typer.Option(
        help="Also write every fetched response into this folder, one subfolder per source "
             "(to refresh test fixtures where network exists).")] = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Print every note as written (URLs included), not folded "
                                "by kind with a count.")] = False,
    timeout: Annotated[float | None, typer.Option(
        help="Each request's total deadline in seconds (connect and every read; default "
             "$SCORECARD_HTTP_TIMEOUT_S, else 60); a source gets 5x that, at least 300.")
    ] = None,
) -> None:
    """Pull this month's market data (prices, grid, FX) into the store as a new vintage."""
    from datetime import UTC, datetime

    from rich.console import Console
    from rich.text import Text

    from pipeline import store
    from pipeline.ingest import start
    from pipeline.ingest.notes import fold
    from pipeline.ingest.pull import FAILED, LOADED, NOTHING, UNCHANGED, exit_code
    from pipeline.ingest.pull import ingest as run_ingest

    err = Console(stderr=True)
    today = datetime.now(UTC).date()
    try:
        chosen, vintage = start.checked(sources, vintage, offline=offline,
                                        record=record is not None, today=today)
        start.deadline_s(timeout)
    except start.RequestError as error:
        err.print(Text(f"error: {error}"), soft_wrap=True)
        raise typer.Exit(1) from None
    if check:
        from pipeline.ingest.check import check as check_sources

        found = check_sources(chosen, timeout_s=min(start.deadline_s(timeout), 10.0))
        for item in found:
            typer.echo(item.line())
        raise typer.Exit(0 if all(item.ok for item in found) else 2)
    con = store.connect(store.db_path(db))
    ctx = start.context(con, vintage, today, timeout)
    session = None if offline else start.session()
    results = _run_with_progress(con, session, chosen, ctx, offline, err, run_ingest,
                                 record)
    for result in results:
        style = {LOADED: "green", UNCHANGED: "cyan", FAILED: "red"}.get(result.status, "yellow")
        # foreign text (server bodies) as Text, never markup; one line, never wrapped
        err.print(Text(result.line(), style=style), soft_wrap=True)
        for note in result.notes if verbose else fold(result.notes):
            err.print(Text(f"    note: {note}"), soft_wrap=True)
    if offline and all(result.status == NOTHING for result in results):
        err.print(Text(f"nothing stored for vintage {vintage} in {store.db_path(db)}: run "
                       "`scorecard ingest` with the network first (or `scorecard run`, which "
                       "works offline on the bundled reference data)"), soft_wrap=True)
    code = exit_code(results)
    con.close()
    if code:
        raise typer.Exit(code)


def _run_with_progress(con, session, chosen, ctx, offline, err, run_ingest,  # type: ignore[no-untyped-def]
                       record_dir):
    import sys

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        tasks = {name: bar.add_task(f"{name}: waiting", total=None) for name in chosen}
        # not on a terminal (cron, CI) the bar shows nothing: one plain line per source as it
        # starts, so a log says how far the run got (and which source hangs); each source's
        # result follows in the summary
        plain = not err.is_terminal
        started: set[str] = set()

        def progress(source: str, stage: str) -> None:
            bar.update(tasks[source], description=f"{source}: {stage}")
            if plain and source not in started:
                started.add(source)
                print(f"{source}: {stage} ...", file=sys.stderr, flush=True)

        return run_ingest(con, session, chosen, ctx, offline=offline, progress=progress,
                          record_dir=record_dir)


def sources_cmd(
    db: Annotated[Path | None, typer.Option(
        "--db", help="DuckDB file (default: $SCORECARD_DB or ./scorecard.duckdb).",
        show_default=False)] = None,
) -> None:
    """List each source: what it provides, licence, key, last good load, last attempt.

    The last attempt is the latest load whatever came of it, with its error when it failed."""
    import os

    import duckdb

    from pipeline import store
    from pipeline.ingest.pull import MAX_ERROR_CHARS, unnamed
    from pipeline.stdout import to_stdout
    from sources.registry import SOURCES
    from sources.text import one_line

    path = store.db_path(db)
    status: dict[str, store.LastLoad] = {}
    attempts: dict[str, store.Attempt] = {}
    if path.exists():
        con = store.connect(path, read_only=True)  # only reads: other readers share it
        try:
            status = store.last_good_loads(con)
            attempts = store.last_attempts(con)
        except duckdb.CatalogException:  # a store no load ever wrote to
            status, attempts = {}, {}
        con.close()
    else:  # a mistyped --db or $SCORECARD_DB would otherwise read as "nothing ever loaded"
        typer.echo(f"no store at {path}: every load below reads never (check --db or "
                   "$SCORECARD_DB)", err=True)

    def last(name: str) -> str:
        if name not in status:
            return "never"
        done = status[name]
        return (f"{done.finished_at:%Y-%m-%d %H:%M} UTC (vintage {done.vintage}, "
                f"{done.row_count} rows)")

    def attempt(name: str) -> str:
        """The latest load whatever came of it: its error when it failed; `ingest` records
        no load of a source it skips for its missing key."""
        if name not in attempts:
            env = SOURCES[name].ENV_VAR
            missing = SOURCES[name].NEEDS_KEY and env and not os.environ.get(env)
            return f"never: skipped, no key ({env} not set)" if missing else "never"
        tried = attempts[name]
        said = f"{tried.started_at:%Y-%m-%d %H:%M} UTC (vintage {tried.vintage}): "
        error = unnamed(tried.error or "no error recorded", name)
        return said + (tried.status if tried.status == "ok" else
                       f"{tried.status}: {one_line(error, MAX_ERROR_CHARS)}")

    lines = []
    for name, module in SOURCES.items():
        env = module.ENV_VAR
        key = "none needed" if env is None else (
            f"{env} ({'set' if os.environ.get(env) else 'not set'}"
            f"{'' if module.NEEDS_KEY else '; optional, extra data when set'})")
        lines += [f"{name}: provides {', '.join(t.name for t in module.PROVIDES)}",
                  f"  licence: {module.LICENCE}", f"  key: {key}",
                  f"  last good load: {last(name)}", f"  last attempt: {attempt(name)}"]
    lines += ["bundled: reference data shipped with the package (sources/reference/*.csv), "
              "loaded by `scorecard run`", "  licence: per row (sources/reference/README.md)",
              "  key: none needed", f"  last good load: {last('bundled')}"]
    to_stdout(lambda: typer.echo("\n".join(lines)))  # `scorecard sources | head` ends quietly
