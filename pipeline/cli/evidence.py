"""`scorecard evidence ...`: measured evidence on the command line.

- `inspect`: what benchmark files, sweep folders and traces give (counts, percentiles,
  goodput, the knee), and with `--power` the power log's energy and J/token at the operating
  point (pipeline.evidence.inspection).
- `add`: benchmark results and power logs into the DuckDB store (pipeline.evidence.add); with
  `--parquet DIR`, a fleet's Parquet power samples' window energy (pipeline.evidence.power.fleet);
  with `--fleet-result`, the result of the fleet query run elsewhere
  (pipeline.evidence.power.fleet_sql).
- `sql`: the fleet energy query for a window in DuckDB, Spark or Trino SQL.

Heavy imports (polars, duckdb, the readers) happen inside the commands so `scorecard --help`
is fast; pipeline/cli/__init__.py mounts `evidence_app` as `scorecard evidence`. The format
names in the help are written out here for that reason (tests check them against the readers'
registries).
"""

import json
import math
import os
import sys
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

T = TypeVar("T")

#: a file at least this big gets a bar of its bytes with a percentage while it is added
#: (smaller ones are done before a bar would say anything)
BAR_BYTES = 4 << 20
#: "1" shows the progress display when stderr is no terminal (as drawn on a terminal), "0"
#: hides it on a terminal; unset, it is shown on a terminal only
PROGRESS_ENV = "SCORECARD_PROGRESS"
Advance = Callable[[str, int, int], None]


class BenchFormat(StrEnum):
    """sources.bench.registry.FORMATS: the choices of --format (listed in --help)."""

    vllm = "vllm"
    guidellm = "guidellm"
    aiperf = "aiperf"
    llmperf = "llmperf"
    mlperf = "mlperf"
    trace = "trace"
    vllm_metrics = "vllm-metrics"
    vllm_metrics_range = "vllm-metrics-range"
    sglang = "sglang"
    trtllm_bench = "trtllm-bench"
    genai_perf = "genai-perf"
    inferencex = "inferencex"
    aiperf_csv = "aiperf-csv"
    guidellm_csv = "guidellm-csv"


class PowerFormat(StrEnum):
    """sources.power.registry.FORMATS in its detection order: the choices of --power-format."""

    aiperf_telemetry = "aiperf-telemetry"
    prometheus_range = "prometheus-range"
    dcgm_exporter = "dcgm-exporter"
    nvidia_smi = "nvidia-smi"
    nvidia_smi_dmon = "nvidia-smi-dmon"
    zeus = "zeus"
    codecarbon = "codecarbon"
    amd_smi = "amd-smi"
    ptdaemon = "ptdaemon"


BENCH_FORMATS = tuple(f.value for f in BenchFormat)
POWER_FORMATS = tuple(f.value for f in PowerFormat)


def _value(choice: StrEnum | None) -> str | None:
    return None if choice is None else choice.value


evidence_app = typer.Typer(help="Measured evidence: benchmark results (goodput, knee) and "
                           "power logs (energy, J/token).", no_args_is_help=True)


def _window(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = text.split(",")
    try:
        start, end = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"--window expects START,END in seconds, got {text!r}") from None
    if not (math.isfinite(start) and math.isfinite(end) and end > start):
        raise ValueError(f"--window END must be after START, got {text!r}")
    return start, end


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


@evidence_app.command("inspect")
def inspect_command(
    paths: Annotated[list[Path], typer.Argument(help="Benchmark files or folders (a sweep).")],
    fmt: Annotated[BenchFormat | None, typer.Option(
        "--format", help="Force a benchmark format.")] = None,
    tz: Annotated[str | None, typer.Option(
        help="Timezone of naive timestamps, e.g. Europe/Paris: vLLM's 'date', and the --power "
             "log's (nvidia-smi, dmon, CodeCarbon, PTDaemon).")] = None,
    ttft_ms: Annotated[float | None, typer.Option(
        help="SLO: time to first token limit, ms (omitted: no TTFT limit).")] = None,
    tpot_ms: Annotated[float | None, typer.Option(help="SLO: time per output token, ms.")
                       ] = None,
    max_itl_ms: Annotated[float | None, typer.Option(help="SLO: largest gap, ms.")] = None,
    ttft_p99_ms: Annotated[float | None, typer.Option(help="Knee: p99 TTFT limit, ms.")
                           ] = None,
    tpot_p99_ms: Annotated[float | None, typer.Option(help="Knee: p99 TPOT limit, ms.")
                           ] = None,
    attainment: Annotated[float, typer.Option(
        help="Share of requests that must pass at the knee.")] = 0.95,
    window: Annotated[str | None, typer.Option(
        help="START,END in seconds on the trace's clock.")] = None,
    power: Annotated[Path | None, typer.Option(
        help="Power log (file or folder): adds its energy over the operating point's window "
             "and J/token under a 'power' key.")] = None,
    power_format: Annotated[PowerFormat | None, typer.Option(
        help="Force the power log's format.")] = None,
    power_start: Annotated[Path | None, typer.Option(
        help="amd-smi metric -E --csv snapshot taken just before the benchmark (with "
             "--power-end): the energy between the two at the operating point.")] = None,
    power_end: Annotated[Path | None, typer.Option(
        help="amd-smi metric -E --csv snapshot taken just after the benchmark.")] = None,
    scraped_at: Annotated[list[str] | None, typer.Option(
        help="Scrape time of raw vLLM /metrics text without a '# scraped_at:' line "
             "(ISO-8601 with offset, or unix s): once per such file in the order read, or "
             "NAME=TIME.")] = None,
    choose: Annotated[str, typer.Option(
        help="Of several configurations, the best by goodput_per_gpu or goodput.")
    ] = "goodput_per_gpu",
    gpus: Annotated[int | None, typer.Option(
        min=1, help="GPU count of configurations that record none (for goodput per GPU).")
    ] = None,
    db: Annotated[Path | None, typer.Option(
        "--db", help="DuckDB file: read files already added (`evidence add`, same sha256) from "
        "it instead of parsing them again, and add the others (no default: $SCORECARD_DB is "
        "not read; without --db inspect opens no store).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print only JSON on stdout.")
                       ] = False,
) -> None:
    """Print what was parsed and computed: per run counts, percentiles, goodput; the knee;
    the configurations (engine settings), each with its own sweep, and the best marked. Power
    logs alone: their devices, samples, span, gaps, mean and peak W and energy."""
    import duckdb

    from pipeline.evidence.engine_state import detect_startup_log, engine_state
    from pipeline.evidence.files import head, split_files
    from pipeline.evidence.goodput import Slo
    from pipeline.evidence.inspection import (
        inspect_report,
        power_summary,
        power_table,
        report_table,
    )
    from pipeline.evidence.power.energy import EnergyError
    from pipeline.store import StoreError, connect, db_path
    from schemas.table import ValidationFailed
    from sources.errors import ParseError

    try:
        slo = Slo(ttft_ms=math.inf if ttft_ms is None else ttft_ms, tpot_ms=tpot_ms,
                  max_itl_ms=max_itl_ms, attainment=attainment, ttft_p99_ms=ttft_p99_ms,
                  tpot_p99_ms=tpot_p99_ms)
        if (power_start is None) != (power_end is None):
            raise ValueError("give --power-start and --power-end together")
        states = engine_state(paths)  # vLLM's start-up logs and /metrics: its KV and queue
        paths = [p for p in paths if not (p.is_file() and detect_startup_log(head(p)))]
        bench, logs, _ = split_files(paths, fmt=_value(fmt), power_fmt=_value(power_format))
        if states and not bench and not logs:  # start-up logs alone: no run, no sweep
            _print_state({"runs": [], "sweep": None, "engine_state": states}, as_json)
            return
        if logs and not bench and power is None:  # power logs alone: their summary
            report = power_summary(paths, tz=tz, fmt=_value(power_format))
            if as_json:
                _print_json(report)
            else:
                typer.echo(power_table(report))
            return
        con = None if db is None else connect(db_path(db), tables=())
        try:
            report = inspect_report(
                paths, slo, fmt=_value(fmt), tz=tz, window=_window(window), power=power,
                power_fmt=_value(power_format), run_notes=() if ttft_ms is not None else (
                    "no --ttft-ms: every completed request passes the TTFT limit",),
                choose=choose, gpu_count=gpus,
                power_pair=None if power_start is None or power_end is None
                else (power_start, power_end), scraped_at=scraped_at or (), cache=con)
        finally:
            if con is not None:
                con.close()
    except (ParseError, ValueError, OSError, duckdb.Error, EnergyError, ValidationFailed,
            StoreError) as err:  # PowerLogError is a ValueError
        raise _fail(str(err)) from None
    if states:
        report["engine_state"] = states
    if as_json:
        _print_json(report)
        return
    typer.echo(report_table(report))
    if states:
        _print_state({"engine_state": states}, False)


def _print_state(report: dict[str, Any], as_json: bool) -> None:
    """vLLM's own KV cache and queue (pipeline/evidence/engine_state.py), JSON or text."""
    from pipeline.evidence.engine_state import state_lines

    if as_json:
        sys.stdout.write(json.dumps(report, sort_keys=True, indent=2, allow_nan=False) + "\n")
    else:
        typer.echo("\n".join(state_lines(report["engine_state"])))


@evidence_app.command("add")
def add_command(
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Benchmark results, power logs, or folders of them.", show_default=False)] = None,
    db: Annotated[Path | None, typer.Option(
        "--db", help="DuckDB file (default: $SCORECARD_DB or ./scorecard.duckdb). The raw "
        "bytes of files above 16 MiB are kept compressed beside it, in <file>.raw/: copy or "
        "move the two together.", show_default=False)] = None,
    fmt: Annotated[BenchFormat | None, typer.Option(
        "--format", help="Force a benchmark format (files no reader recognises are then read "
        "as benchmark results).")] = None,
    power_fmt: Annotated[PowerFormat | None, typer.Option(
        "--power-format", help="Force a power-log format (files no reader recognises are then "
        "read as power logs).")] = None,
    tz: Annotated[str | None, typer.Option(
        help="Timezone of naive timestamps, e.g. Europe/Paris: vLLM's 'date', nvidia-smi, "
             "dmon, CodeCarbon and PTDaemon logs.")] = None,
    parquet: Annotated[Path | None, typer.Option(
        "--parquet", help="A fleet's power samples as Parquet partitioned by day (Hive layout: "
        "gpu_uuid, timestamp_utc, power_w, optional energy_j): print the window energy, "
        "computed by DuckDB over the files (nothing is loaded into memory or the store).",
        show_default=False)] = None,
    window_start: Annotated[str | None, typer.Option(
        help="With --parquet: the window's start, ISO 8601 with offset (default: the span "
             "every GPU covers).", show_default=False)] = None,
    window_end: Annotated[str | None, typer.Option(
        help="With --parquet: the window's end, ISO 8601 with offset.", show_default=False)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="With --parquet: print only JSON.")
                       ] = False,
    fleet_result: Annotated[Path | None, typer.Option(
        "--fleet-result", help="The one-row result (CSV with a header, or JSON) of the query "
        "`scorecard evidence sql` printed, as an engine wrote it (with --fleet-query): print "
        "its energy and a candidate's `power = { ... }` line citing the query's sha256.",
        show_default=False)] = None,
    fleet_query: Annotated[Path | None, typer.Option(
        "--fleet-query", help="With --fleet-result: the query's text, as `scorecard evidence "
        "sql` printed it.", show_default=False)] = None,
    prometheus: Annotated[str | None, typer.Option(
        "--prometheus", help="A Prometheus server's URL: run the range queries of vLLM's "
        "counters and histograms and DCGM's power over --query-window and add the answers "
        "as saved query_range files are (token, if any, in $SCORECARD_PROMETHEUS_TOKEN).",
        show_default=False)] = None,
    query_window: Annotated[str | None, typer.Option(
        "--query-window", help="With --prometheus: START..END, ISO 8601 with offset.",
        show_default=False)] = None,
    step_s: Annotated[float | None, typer.Option(
        "--step-s", help="With --prometheus: the queries' resolution, s (default: the finest "
        "within Prometheus' 11,000 points, 1 s at least).", show_default=False)] = None,
    save_to: Annotated[Path | None, typer.Option(
        "--save-to", help="With --prometheus: the folder the answers are kept in (default: a "
        "new temporary folder, printed).", show_default=False)] = None,
) -> None:
    """Load benchmark runs and requests, and power-log samples, into DuckDB (idempotent, by
    content hash). Each file is recognised by its content; in folders, other files are
    skipped, and a benchmark file that cannot be read is skipped, named, and makes the
    command exit 1 once the others are added. With --parquet, the energy of a fleet's
    Parquet power samples instead; with --fleet-result, that of a fleet query run elsewhere
    (Spark, Trino)."""
    if fleet_result is not None or fleet_query is not None:
        if fleet_result is None or fleet_query is None or paths or parquet is not None:
            raise _fail("--fleet-result and --fleet-query go together, without files or "
                        "--parquet")
        _fleet_result(fleet_result, fleet_query, as_json)
        return
    if prometheus is not None or query_window is not None:
        if prometheus is None or query_window is None or paths or parquet is not None:
            raise _fail("--prometheus and --query-window go together, without files or "
                        "--parquet")
        _prometheus(prometheus, query_window, step_s, save_to, db)
        return
    if step_s is not None or save_to is not None:
        raise _fail("--step-s and --save-to go with --prometheus URL")
    if parquet is not None:  # before the readers' imports: the fleet's path needs none
        if paths or db is not None or fmt is not None or power_fmt is not None:
            raise _fail("--parquet computes a fleet's energy from its files and adds nothing: "
                        "give files to add, or --parquet DIR (with --window-start, "
                        "--window-end, --json), not both")
        _fleet(parquet, window_start, window_end, as_json)
        return
    from pipeline.evidence.power.hashing import HashedAhead

    hashed = HashedAhead(paths or [])  # big files hashed while the rest imports
    import duckdb

    from pipeline.evidence.add import add_files, evidence_files
    from pipeline.evidence.bench import UNREADABLE
    from pipeline.store import LoadFailed, StoreError, connect, db_path
    from pipeline.store.db import new_store
    from schemas.table import ValidationFailed
    from sources.errors import ParseError

    if not paths:
        raise _fail("give files or folders to add, or --parquet DIR")
    if window_start is not None or window_end is not None or as_json:
        raise _fail("--window-start, --window-end and --json go with --parquet DIR")
    store_file = db_path(db)
    made = new_store(store_file)  # a refusal leaves none of it behind
    con = None
    try:
        files = evidence_files(paths, fmt=_value(fmt), power_fmt=_value(power_fmt))
        con = connect(store_file)  # after the refusal of paths holding no evidence
        results, notes = _with_progress(lambda progress, advance: add_files(
            con, files, paths, fmt=_value(fmt), power_fmt=_value(power_fmt), tz=tz,
            progress=progress, hashed=hashed, advance=advance))
    except (ParseError, ValidationFailed, LoadFailed, StoreError, duckdb.Error, ValueError,
            OSError) as err:
        if con is not None:
            con.close()
        if made is not None:  # the store, its WAL and the folders made for it
            made.remove()
        raise _fail(str(err)) from None
    _print_loads(results, notes, con)
    unread = sum(UNREADABLE in n for n in notes)
    if unread:  # a scripted add must not lose a sweep point silently
        raise _fail(f"{unread} file(s) could not be read and were skipped (above); the "
                    "others were added: fix or remove them and add again")


def _print_json(report: dict[str, Any]) -> None:
    """Only JSON on stdout: sorted keys, no NaN or infinity."""
    sys.stdout.write(json.dumps(report, sort_keys=True, indent=2, allow_nan=False) + "\n")


def _print_loads(results: list[tuple[str, Any]], notes: list[str], con: Any) -> None:
    """What `evidence add` loaded: its notes on stderr, then one line per file, naming the
    load a file's new reading replaced, and a note under a power log with samples the
    energy will skip (`evidence inspect` says the same)."""
    from pipeline.evidence.add import replaced_load, skipped_samples

    for note in notes:
        typer.echo(note, err=True)
    for name, result in results:
        old = replaced_load(con, result.load_id) if result.status == "loaded" else None
        typer.echo(f"{name}: {result.status}, {result.row_count} rows (load {result.load_id}"
                   + (")" if old is None else f"; it replaces load {old}, the same file read "
                      "with other settings, as --tz or --format)"))
        if skipped := skipped_samples(con, result.load_id):
            typer.echo(f"note: {name}: {skipped} when its energy is computed (kept in the "
                       "store with their note)")


def _moments(start: str, end: str, options: str) -> tuple[datetime, datetime]:
    """A window's start and end, ISO 8601 with an offset (a naive time is no instant)."""
    moments = datetime.fromisoformat(start), datetime.fromisoformat(end)
    if any(m.tzinfo is None for m in moments):
        raise ValueError(f"{options}: a time needs an offset (e.g. +00:00)")
    return moments


def _fleet(folder: Path, start: str | None, end: str | None, as_json: bool) -> None:
    """`evidence add --parquet`: the fleet's energy over the window, as text or JSON."""
    import duckdb

    from pipeline.evidence.power.energy import EnergyError
    from pipeline.evidence.power.fleet import power_from_parquet

    try:
        if (start is None) != (end is None):
            raise ValueError("give --window-start and --window-end together")
        moments = (None, None) if start is None or end is None else _moments(
            start, end, "--window-start/--window-end")
        evidence = _with_progress(lambda progress, advance: power_from_parquet(
            folder, moments[0], moments[1]))
    except (ValueError, OSError, duckdb.Error, EnergyError) as err:
        raise _fail(str(err)) from None
    report = evidence.as_dict()
    if as_json:
        _print_json(report)
        return
    typer.echo(f"{folder}: {report['energy_j']:,.1f} J over {report['window_s']:,.0f} s "
               f"({report['average_power_w']:,.1f} W average) by {report['method']}, "
               f"{len(report['gpus'])} GPUs, {report['samples_in_window']:,} samples in the "
               f"window, {len(report['gaps'])} gap(s), {len(report['files'])} file(s)")
    for note in report["notes"]:
        typer.echo(f"note: {note}")


def _prometheus(url: str, window: str, step: float | None, save_to: Path | None,
                db: Path | None) -> None:
    """`evidence add --prometheus`: the range queries' answers added to the store."""
    import tempfile

    import duckdb

    from pipeline.evidence.prometheus import add_prometheus
    from pipeline.store import LoadFailed, StoreError, connect, db_path
    from schemas.table import ValidationFailed
    from sources.errors import ParseError
    from sources.http import FetchError

    try:
        start_text, sep, end_text = window.partition("..")
        if not sep:
            raise ValueError(f"--query-window expects START..END, got {window!r}")
        moments = _moments(start_text.strip(), end_text.strip(), "--query-window")
        folder = save_to or Path(tempfile.mkdtemp(prefix="scorecard-prometheus-"))
        con = connect(db_path(db))
        results, notes = _with_progress(lambda progress, _advance: add_prometheus(
            con, url, moments[0].timestamp(), moments[1].timestamp(), step=step,
            folder=folder, progress=progress))
    except (FetchError, ParseError, ValidationFailed, LoadFailed, StoreError, duckdb.Error,
            ValueError, OSError) as err:
        raise _fail(str(err)) from None
    typer.echo(f"answers kept in {folder}", err=True)
    _print_loads(results, notes, con)


def _fleet_result(result: Path, query: Path, as_json: bool) -> None:
    """`evidence add --fleet-result`: a fleet query's result, as text or JSON."""
    from pipeline.evidence.power.fleet_sql import fleet_result, power_line

    try:
        evidence = fleet_result(result, query)
    except (ValueError, OSError) as err:
        raise _fail(str(err)) from None
    report = evidence.as_dict() | {"power": power_line(evidence, query)}
    if as_json:
        _print_json(report)
        return
    typer.echo(f"{result}: {report['energy_j']:,.1f} J over {report['window_s']:,.0f} s "
               f"({report['average_power_w']:,.1f} W average) by {report['method']}, "
               f"{report['samples_in_window']:,} samples in the window")
    for note in report["notes"]:
        typer.echo(f"note: {note}")
    typer.echo(report["power"])


class Dialect(StrEnum):
    """pipeline.evidence.power.fleet_sql.DIALECTS: the choices of `evidence sql --dialect`."""

    duckdb = "duckdb"
    spark = "spark"
    trino = "trino"


@evidence_app.command("sql")
def sql_command(
    path: Annotated[str, typer.Argument(
        help="The fleet's Parquet folder (DuckDB, Spark), or the Trino table over it "
             "(catalog.schema.table).")],
    window_start: Annotated[str, typer.Option(
        help="The window's start, ISO 8601 with offset.", show_default=False)],
    window_end: Annotated[str, typer.Option(
        help="The window's end, ISO 8601 with offset.", show_default=False)],
    dialect: Annotated[Dialect, typer.Option(help="The engine the query is for.")
                       ] = Dialect.duckdb,
    method: Annotated[str, typer.Option(
        help="trapezoid (power) or counter (energy_j, every GPU with two readings).")
    ] = "trapezoid",
    margin_s: Annotated[float, typer.Option(
        help="Samples read on either side of the window, s.")] = 3600.0,
) -> None:
    """Print the fleet energy query (one row: energy, idle power, gaps, GPUs not covered) for
    a window, in the engine's SQL, to run where the samples lie; `evidence add --fleet-result
    R --fleet-query Q` takes its result back."""
    from pipeline.evidence.power.fleet_sql import query_text

    try:
        moments = _moments(window_start, window_end, "--window-start/--window-end")
        if not (math.isfinite(margin_s) and margin_s >= 0):
            raise ValueError("--margin-s must be a number of seconds, 0 or more")
        text = query_text(dialect.value, path, moments[0].timestamp(), moments[1].timestamp(),
                          method, margin_s=margin_s)
    except ValueError as err:
        raise _fail(str(err)) from None
    sys.stdout.write(text)


def _with_progress(work: Callable[[Callable[[str, str], None], Advance | None], T]) -> T:
    """Run `work(progress, advance)` with a spinner on stderr saying what it is doing, and for
    how long, and for a file of `BAR_BYTES` or more a bar of its bytes read with the
    percentage (all gone when done). Not on a stderr that is no terminal, where rich would
    draw nothing (and importing it would be time spent for nothing), unless
    SCORECARD_PROGRESS=1 says to draw it as on a terminal."""
    forced = os.environ.get(PROGRESS_ENV)
    if forced == "0" or (forced != "1" and not sys.stderr.isatty()):
        return work(lambda what, stage: None, None)  # None: files read whole, uncounted
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        SpinnerColumn,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.table import Column

    # the figures keep their width: a long description is cut at the line's end, not them
    with Progress(SpinnerColumn(), TaskProgressColumn(table_column=Column(min_width=4,
                                                                        no_wrap=True)),
                  BarColumn(bar_width=20), TextColumn("{task.fields[size]}", table_column=Column(
                      no_wrap=True)), TimeElapsedColumn(),
                  TextColumn("{task.description}", table_column=Column(
                      ratio=1, no_wrap=True, overflow="ellipsis")), expand=True,
                  console=Console(stderr=True, force_terminal=forced == "1" or None),
                  transient=True) as bar:
        task = bar.add_task("reading", total=None, size="")

        def advance(what: str, done: int, total: int) -> None:
            if total < BAR_BYTES:  # a small file: the spinner alone
                bar.update(task, total=None, completed=0, size="")
            else:
                bar.update(task, total=total, completed=done,
                           size=f"{done / 1e6:,.1f}/{total / 1e6:,.1f} MB")

        return work(lambda what, stage: bar.update(task, description=f"{what}: {stage}"),
                    advance)
