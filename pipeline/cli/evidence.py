"""`scorecard evidence ...`: measured evidence on the command line.

- `inspect`: what benchmark files, sweep folders and traces give (counts, percentiles,
  goodput, the knee), and with `--power` the power log's energy and J/token at the operating
  point.
- `add`: benchmark results and power logs into the DuckDB store (pipeline.evidence.bench.add_evidence).

Heavy imports (polars, duckdb, the readers) happen inside the commands so `scorecard --help`
is fast; pipeline/cli.py mounts `evidence_app` as `scorecard evidence`. The format names in the
help are written out here for that reason (tests check them against the readers' registries).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

T = TypeVar("T")

#: sources.bench.registry.FORMATS and sources.power.registry.FORMATS (in its detection order)
BENCH_FORMATS = ("vllm", "guidellm", "aiperf", "llmperf", "mlperf", "trace", "vllm-metrics")
POWER_FORMATS = ("aiperf-telemetry", "dcgm-exporter", "nvidia-smi", "nvidia-smi-dmon", "zeus",
                 "codecarbon", "amd-smi", "ptdaemon")

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
    as_json: Annotated[bool, typer.Option("--json", help="Print only JSON on stdout.")
                       ] = False,
) -> None:
    """Print what was parsed and computed: per run counts, percentiles, goodput; the knee."""
    from pipeline.evidence.bench import (
        build_report,
        energy_at_operating_point,
        load_runs,
        operating_point,
    )
    from pipeline.evidence.goodput import Slo
    from sources.errors import ParseError

    try:
        slo = Slo(ttft_ms=math.inf if ttft_ms is None else ttft_ms, tpot_ms=tpot_ms,
                  max_itl_ms=max_itl_ms, attainment=attainment, ttft_p99_ms=ttft_p99_ms,
                  tpot_p99_ms=tpot_p99_ms)
        bounds = _window(window)
        loaded = load_runs(paths, fmt=fmt, tz=tz)
        report = build_report(loaded, slo, bounds)
        if power is not None:
            from pipeline.evidence.energy import EnergyError
            from schemas.table import ValidationFailed

            ev = operating_point(loaded, report, slo, ", ".join(str(p) for p in paths))
            try:
                report["power"] = energy_at_operating_point(ev, power, tz=tz, fmt=power_format)
            except (EnergyError, ValidationFailed) as err:
                raise _fail(f"power log {power}: {err}") from None
    except (ParseError, ValueError, OSError) as err:
        raise _fail(str(err)) from None
    if ttft_ms is None:
        for run in report["runs"]:
            run["notes"].append("no --ttft-ms: every completed request passes the TTFT limit")
    if as_json:
        sys.stdout.write(json.dumps(report, sort_keys=True, indent=2, allow_nan=False) + "\n")
        return
    typer.echo(_table(report))


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

    from pipeline.evidence.bench import add_evidence
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


def _fmt(value: Any, scale: float = 1.0, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value * scale:,.{digits}f}"
    return str(value)


def _table(report: dict[str, Any]) -> str:
    head = ("tool", "conc", "rate", "offered", "done", "failed", "passed", "window_s",
            "goodput_tok/s", "raw_tok/s", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
            "tpot_p99_ms", "agg_only")
    rows = [head]
    for r in report["runs"]:
        rows.append((r["tool"], _fmt(r["concurrency"]), _fmt(r["request_rate"]),
                     _fmt(r["offered"]), _fmt(r["completed"]), _fmt(r["failed"]),
                     _fmt(r["passed"]), _fmt(r["window_s"], digits=2),
                     _fmt(r["token_goodput_per_s"]), _fmt(r["output_tokens_per_s"]),
                     _fmt(r["ttft_p50_s"], 1000), _fmt(r["ttft_p99_s"], 1000),
                     _fmt(r["tpot_p50_s"], 1000), _fmt(r["tpot_p99_s"], 1000),
                     "yes" if r["aggregate_only"] else "no"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True))
             for row in rows]
    for r in report["runs"]:
        lines.append(f"\n{r['path']} (run {r['run_index']}):")
        lines.extend(f"  - {note}" for note in r["notes"])
    sweep = report["sweep"]
    if sweep is not None and sweep["load_variable"] is None:
        lines.append("")
        lines.extend(f"  - {note}" for note in sweep["notes"])
    elif sweep is not None:
        knee = sweep["knee_concurrency"] if sweep["knee_concurrency"] is not None else (
            sweep["knee_request_rate"])
        lines.append(f"\nsweep over {sweep['load_variable']}: knee {_fmt(knee)} at "
                     f"{_fmt(sweep['knee_tokens_per_s'])} tokens/s goodput, saturated "
                     f"{sweep['saturated']}")
        lines.extend(f"  - {note}" for note in sweep["notes"])
    energy = report.get("power")
    if energy is not None:
        lines.append(f"\npower over the operating point: {_fmt(energy.get('energy_j'))} J, "
                     f"{_fmt(energy.get('energy_j_per_goodput_token'), digits=3)} J per goodput "
                     f"token, {_fmt(energy.get('energy_j_per_output_token'), digits=3)} J per "
                     "output token")
        lines.extend(f"  - {note}" for note in energy.get("notes", []))
    return "\n".join(lines)
