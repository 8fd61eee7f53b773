"""`scorecard evidence ...`: measured evidence on the command line.

- `inspect`: what benchmark files, sweep folders and traces give (counts, percentiles,
  goodput, the knee), and with `--power` the power log's energy and J/token at the operating
  point (pipeline.evidence.inspection).
- `add`: benchmark results and power logs into the DuckDB store (pipeline.evidence.add).

Heavy imports (polars, duckdb, the readers) happen inside the commands so `scorecard --help`
is fast; pipeline/cli/__init__.py mounts `evidence_app` as `scorecard evidence`. The format
names in the help are written out here for that reason (tests check them against the readers'
registries).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

T = TypeVar("T")

#: sources.bench.registry.FORMATS and sources.power.registry.FORMATS (in its detection order)
BENCH_FORMATS = ("vllm", "guidellm", "aiperf", "llmperf", "mlperf", "trace", "vllm-metrics",
                 "sglang", "trtllm-bench", "genai-perf", "inferencex", "aiperf-csv",
                 "guidellm-csv")
POWER_FORMATS = ("aiperf-telemetry", "prometheus-range", "dcgm-exporter", "nvidia-smi",
                 "nvidia-smi-dmon", "zeus", "codecarbon", "amd-smi", "ptdaemon")

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
    fmt: Annotated[str | None, typer.Option(
        "--format", help=f"Force a format: {', '.join(BENCH_FORMATS)}.")
    ] = None,
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
    power_format: Annotated[str | None, typer.Option(
        help=f"Force the power log's format: {', '.join(POWER_FORMATS)}.")] = None,
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
        help="Read files already added (`evidence add`, same sha256) from this store instead "
             "of parsing them again, and add the others.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print only JSON on stdout.")
                       ] = False,
) -> None:
    """Print what was parsed and computed: per run counts, percentiles, goodput; the knee;
    the configurations (engine settings), each with its own sweep, and the best marked. Power
    logs alone: their devices, samples, span, gaps, mean and peak W and energy."""
    from contextlib import nullcontext

    import duckdb

    from pipeline.evidence.cache import using
    from pipeline.evidence.energy import EnergyError
    from pipeline.evidence.files import split_files
    from pipeline.evidence.goodput import Slo
    from pipeline.evidence.inspection import (
        inspect_report,
        power_summary,
        power_table,
        report_table,
    )
    from pipeline.store import connect, db_path
    from schemas.table import ValidationFailed
    from sources.errors import ParseError

    try:
        slo = Slo(ttft_ms=math.inf if ttft_ms is None else ttft_ms, tpot_ms=tpot_ms,
                  max_itl_ms=max_itl_ms, attainment=attainment, ttft_p99_ms=ttft_p99_ms,
                  tpot_p99_ms=tpot_p99_ms)
        if (power_start is None) != (power_end is None):
            raise ValueError("give --power-start and --power-end together")
        bench, logs, _ = split_files(paths, fmt=fmt, power_fmt=power_format)
        if logs and not bench and power is None:  # power logs alone: their summary
            report = power_summary(paths, tz=tz, fmt=power_format)
            if as_json:
                sys.stdout.write(json.dumps(report, sort_keys=True, indent=2,
                                            allow_nan=False) + "\n")
            else:
                typer.echo(power_table(report))
            return
        con = None if db is None else connect(db_path(str(db)), tables=())
        try:
            with using(con) if con is not None else nullcontext():
                report = inspect_report(
                    paths, slo, fmt=fmt, tz=tz, window=_window(window), power=power,
                    power_fmt=power_format, run_notes=() if ttft_ms is not None else (
                        "no --ttft-ms: every completed request passes the TTFT limit",),
                    choose=choose, gpu_count=gpus,
                    power_pair=None if power_start is None or power_end is None
                    else (power_start, power_end), scraped_at=scraped_at or ())
        finally:
            if con is not None:
                con.close()
    except (ParseError, ValueError, OSError, duckdb.Error, EnergyError,
            ValidationFailed) as err:  # PowerLogError is a ValueError
        raise _fail(str(err)) from None
    if as_json:
        sys.stdout.write(json.dumps(report, sort_keys=True, indent=2, allow_nan=False) + "\n")
        return
    typer.echo(report_table(report))


@evidence_app.command("add")
def add_command(
    paths: Annotated[list[Path], typer.Argument(
        help="Benchmark results, power logs, or folders of them.")],
    db: Annotated[str | None, typer.Option(help="DuckDB file (default $SCORECARD_DB or "
                                                "./scorecard.duckdb).")] = None,
    fmt: Annotated[str | None, typer.Option(
        "--format", help=f"Force a benchmark format: {', '.join(BENCH_FORMATS)} (files no "
        "reader recognises are then read as benchmark results).")] = None,
    power_fmt: Annotated[str | None, typer.Option(
        "--power-format", help=f"Force a power-log format: {', '.join(POWER_FORMATS)} (files "
        "no reader recognises are then read as power logs).")] = None,
    tz: Annotated[str | None, typer.Option(
        help="Timezone of naive timestamps, e.g. Europe/Paris: vLLM's 'date', nvidia-smi, "
             "dmon, CodeCarbon and PTDaemon logs.")] = None,
) -> None:
    """Load benchmark runs and requests, and power-log samples, into DuckDB (idempotent, by
    content hash). Each file is recognised by its content; in folders, other files are
    skipped."""
    import duckdb

    from pipeline.evidence.add import add_evidence
    from pipeline.store import LoadFailed, connect, db_path
    from schemas.table import ValidationFailed
    from sources.errors import ParseError

    try:
        con = connect(db_path(db))
        results, notes = _with_progress(lambda progress: add_evidence(
            con, paths, fmt=fmt, power_fmt=power_fmt, tz=tz, progress=progress))
    except (ParseError, ValidationFailed, LoadFailed, duckdb.Error, ValueError, OSError) as err:
        raise _fail(str(err)) from None
    for note in notes:
        typer.echo(note, err=True)
    for name, result in results:
        typer.echo(f"{name}: {result.status}, {result.row_count} rows (load {result.load_id})")


def _with_progress(work: Callable[[Callable[[str, str], None]], T]) -> T:
    """Run `work(progress)` with a spinner on stderr saying what it is doing, and for how long
    (gone when done)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("reading", total=None)
        return work(lambda what, stage: bar.update(task, description=f"{what}: {stage}"))
