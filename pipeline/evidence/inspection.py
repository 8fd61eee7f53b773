"""`scorecard evidence inspect`: what benchmark files give, with a power log's energy and
J/token at their operating point, and the report as the table the command prints.

- `inspect_report`: `pipeline.evidence.bench.inspect`'s `{"runs", "sweep", "configurations",
  "choose"}` report (the DESIGN section 9 contract, extended) and, with a `power` log, its
  energy over the operating point's window under "power" (or, with `power_pair` = an `amd-smi
  metric -E` start and end snapshot, the energy between them placed at the window's edges);
  `run_notes` are added to every run's notes; `cache`, a store, is where files `evidence add`
  loaded are read back from (`pipeline.evidence.cache`).
- `energy_at_operating_point`: a power log's energy over a `ThroughputEvidence` window
  (`pipeline.evidence.power.logs`) and J per goodput token and per output token of that window
  (DESIGN section 7).
- `power_summary` (a `{"power_log": {...}}` report) and `power_table` (its text): power logs
  inspected alone (devices, samples, span, gaps, mean and peak W, energy J over the span).
- `report_table`: the text of an `inspect_report` report, one line per run (counts, goodput,
  percentiles in ms), then each run's notes, the sweep's knee, the configurations (each one's
  GPUs, knee, goodput and goodput per GPU, the best marked `*`) when the runs record settings,
  and the energy at the operating point.

Errors: those of the readers (`sources.errors.ParseError`, FileNotFoundError); paths that hold
no benchmark run, a ParseError naming them; a power log that
gives no energy over the window raises `PowerLogError` naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.evidence.bench import ThroughputEvidence, loaded_report, operating_point
from pipeline.evidence.goodput import Slo
from pipeline.evidence.power.energy import EnergyError, EnergyResult, window_energy
from pipeline.evidence.power.logs import power_from_evidence, power_from_snapshots, read_power_files
from pipeline.evidence.power.measured import PowerEvidence
from pipeline.evidence.power.streamed import streamed_energy
from schemas.table import ValidationFailed


class PowerLogError(ValueError):
    """The power log gives no energy over the operating point; the message names the log."""


def inspect_report(paths: Sequence[Path], slo: Slo, *, fmt: str | None = None,
                   tz: str | None = None, window: tuple[float, float] | None = None,
                   power: Path | None = None, power_fmt: str | None = None,
                   run_notes: Sequence[str] = (), choose: str = "goodput_per_gpu",
                   gpu_count: int | None = None,
                   power_pair: tuple[Path, Path] | None = None,
                   scraped_at: Sequence[str] = (), cache: Any | None = None) -> dict[str, Any]:
    loaded, report = loaded_report(paths, slo, fmt=fmt, tz=tz, window=window, choose=choose,
                                   gpu_count=gpu_count, scraped_at=scraped_at, cache=cache)
    if power_pair is not None:
        ev = operating_point(loaded, report, slo, ", ".join(str(p) for p in paths))
        try:
            report["power"] = _pair_energy(ev, *power_pair)
        except (EnergyError, ValidationFailed) as err:
            raise PowerLogError(f"amd-smi snapshots {power_pair[0]}, {power_pair[1]}: {err}"
                                ) from err
    if power is not None:
        ev = operating_point(loaded, report, slo, ", ".join(str(p) for p in paths))
        try:
            report["power"] = energy_at_operating_point(ev, power, tz=tz, fmt=power_fmt,
                                                        cache=cache)
        except (EnergyError, ValidationFailed) as err:  # each names the log(s) it read
            raise PowerLogError(str(err)) from err
    for run in report["runs"]:
        run["notes"].extend(run_notes)
    return report


def power_summary(paths: Sequence[Path], *, tz: str | None = None, fmt: str | None = None
                  ) -> dict[str, Any]:
    """What power logs alone give (`evidence inspect POWERLOG`): under "power_log", the GPUs
    (devices), samples, the span every device covers, its gaps, mean and peak power (W) and
    energy (J) over that span, at the boundary and by the method `window_energy` picks (a
    single big log part by part: `pipeline.evidence.power.streamed`, to the same figures)."""
    files: list[Any] = []
    notes: list[str] = []
    streamed = (streamed_energy(Path(paths[0]), None, tz=tz, fmt=fmt, peak=True)
                if len(paths) == 1 else None)
    peak: Any
    runs: list[tuple[str, EnergyResult | str]] = []
    if streamed is not None:  # a big log, part by part
        result, peak, count = streamed.result, streamed.peak_power_w, streamed.samples
        files.append(streamed.file)
    else:
        frames: list[pl.DataFrame] = []
        for path in paths:
            samples, read, skipped = read_power_files(Path(path), tz=tz, format=fmt)
            frames.append(samples)
            files.extend(read)
            notes.extend(skipped)
        samples = pl.concat(frames)
        origin = ", ".join(f.path for f in files)
        result = window_energy(samples, None, origin=origin)
        runs = _runs(samples, result.boundary, origin)
        chosen = samples.filter(pl.col("measurement_boundary") == result.boundary)
        peak = chosen.drop_nulls("power_w").group_by("sample_utc").agg(
            pl.col("power_w").sum())["power_w"].max()
        count = chosen.filter(pl.col("power_w").is_not_null()
                              | pl.col("energy_counter_j").is_not_null()).height
    summary = {
        "devices": list(result.gpus),
        "samples": count,
        "span_start_utc": result.window.start_utc.isoformat(),
        "span_end_utc": result.window.end_utc.isoformat(),
        "span_s": result.window.duration_s,
        "gaps": [{"device_id": g.device_id, "start_utc": g.start_utc.isoformat(),
                  "end_utc": g.end_utc.isoformat(), "duration_s": g.duration_s,
                  "kind": g.kind} for g in result.gaps],
        "mean_power_w": result.average_power_w,
        # the highest sum over devices of readings taken at one instant (None: counters only)
        "peak_power_w": peak if isinstance(peak, float | int) else None,
        "energy_j": result.energy_j, "boundary": result.boundary, "method": result.method,
        "files": [{"path": f.path, "sha256": f.sha256, "tool": f.tool, "rows": f.rows}
                  for f in files],
        "notes": [*notes, *result.notes,
                  "energy over the span every device covers (no benchmark window given)"],
    }
    if runs:
        over = _over_runs(runs, result.boundary)
        summary.update(over, notes=[*notes, *over["notes"]])
    return {"power_log": summary}


def _runs(samples: pl.DataFrame, boundary: str, origin: str
          ) -> list[tuple[str, EnergyResult | str]]:
    """A log of several runs one after the other (a CodeCarbon file's `run_id`s, Zeus
    windows: series that never overlap in time) gives each run's energy at `boundary` (or why
    it has none); a log of one series, or of series read at the same time (two collectors of
    one GPU: `window_energy` keeps one), gives []."""
    at = samples.filter(pl.col("measurement_boundary") == boundary)
    spans = at.group_by("series_id").agg(start=pl.col("sample_utc").min(),
                                         end=pl.col("sample_utc").max()).sort("start", "end")
    if spans.height < 2 or (spans["start"].slice(1) < spans["end"].slice(0, spans.height - 1)
                            ).any():
        return []
    runs: list[tuple[str, EnergyResult | str]] = []
    for run in spans["series_id"]:
        try:
            runs.append((run, window_energy(at.filter(pl.col("series_id") == run), None,
                                            origin=f"{origin} run {run}", boundary=boundary)))
        except EnergyError as err:
            runs.append((run, str(err)))
    return runs


def _over_runs(runs: list[tuple[str, EnergyResult | str]], boundary: str) -> dict[str, Any]:
    """The summary's figures over runs in sequence: each run's span and energy, the span from
    the first run's start to the last one's end, the energy as the sum of the runs' (null
    when a run has none) and the mean power over the runs' summed durations."""
    measured = [r for _, r in runs if isinstance(r, EnergyResult)]
    complete = len(measured) == len(runs)
    total = sum(r.energy_j for r in measured) if complete else None
    seconds = sum(r.window.duration_s for r in measured)
    start = min(r.window.start_utc for r in measured)
    end = max(r.window.end_utc for r in measured)
    missing = [f"run {run}: no energy ({why})" for run, why in runs if isinstance(why, str)]
    return {
        "runs": [{"run": run, "start_utc": r.window.start_utc.isoformat(),
                  "end_utc": r.window.end_utc.isoformat(), "duration_s": r.window.duration_s,
                  "energy_j": r.energy_j, "mean_power_w": r.average_power_w}
                 if isinstance(r, EnergyResult) else
                 {"run": run, "start_utc": None, "end_utc": None, "duration_s": None,
                  "energy_j": None, "mean_power_w": None} for run, r in runs],
        "span_start_utc": start.isoformat(), "span_end_utc": end.isoformat(),
        "span_s": (end - start).total_seconds(),
        "gaps": [{"device_id": g.device_id, "start_utc": g.start_utc.isoformat(),
                  "end_utc": g.end_utc.isoformat(), "duration_s": g.duration_s,
                  "kind": g.kind} for r in measured for g in r.gaps],
        "energy_j": total,
        "mean_power_w": total / seconds if total is not None and seconds > 0 else None,
        "notes": [f"{len(runs)} runs one after the other: energy at boundary {boundary} is "
                  "the sum of the runs' (nothing is measured between runs), mean power over "
                  "their summed duration", *missing,
                  *dict.fromkeys(n for r in measured for n in r.notes)],
    }


def power_table(report: dict[str, Any]) -> str:
    p = report["power_log"]
    lines = [f"power log: {len(p['devices'])} device(s) ({', '.join(p['devices'])}), "
             f"{p['samples']:,} samples at boundary {p['boundary']} ({p['method']})",
             f"span {p['span_start_utc']} .. {p['span_end_utc']} ({_fmt(p['span_s'], digits=1)} "
             f"s), {len(p['gaps'])} gap(s)",
             f"mean {_fmt(p['mean_power_w'])} W, peak {_fmt(p['peak_power_w'])} W, energy "
             f"{_fmt(p['energy_j'])} J"]
    lines.extend(f"  run {r['run']}: {r['start_utc']} .. {r['end_utc']} "
                 f"({_fmt(r['duration_s'], digits=1)} s), energy {_fmt(r['energy_j'])} J, "
                 f"mean {_fmt(r['mean_power_w'])} W" for r in p.get("runs", []))
    lines.extend(f"  gap on {g['device_id']}: {g['start_utc']} .. {g['end_utc']} "
                 f"({_fmt(g['duration_s'])} s, {g['kind']})" for g in p["gaps"])
    lines.extend(f"  - {note}" for note in p["notes"])
    return "\n".join(lines)


def _pair_energy(ev: ThroughputEvidence, start: Path, end: Path) -> dict[str, Any]:
    """The energy between two `amd-smi metric -E` snapshots placed at the operating point's
    window edges, and J per token of that window."""
    if ev.window_start_utc is None or ev.window_end_utc is None:
        return {"energy_j_per_goodput_token": None, "energy_j_per_output_token": None,
                "notes": ["the operating point has no UTC window: the snapshots cannot be "
                          "placed at its edges"]}
    return _per_token(ev, power_from_snapshots(start, end, ev.window_start_utc,
                                               ev.window_end_utc))


def energy_at_operating_point(ev: ThroughputEvidence, power_path: Path, *,
                              tz: str | None = None, fmt: str | None = None,
                              cache: Any | None = None) -> dict[str, Any]:
    """`None` figures carry a reason in "notes"."""
    if ev.window_start_utc is None or ev.window_end_utc is None:
        return {"energy_j_per_goodput_token": None, "energy_j_per_output_token": None,
                "notes": ["the operating point has no UTC window (a vLLM `date` needs --tz; a "
                          "trace on its own clock has none; runs pooled at one level have "
                          "none): energy cannot be aligned"]}
    return _per_token(ev, power_from_evidence(
        Path(power_path), ev.window_start_utc, ev.window_end_utc, tz,
        uncertainty_s=ev.clock_uncertainty_s or 0.0, format=fmt, cache=cache))


def _per_token(ev: ThroughputEvidence, power: PowerEvidence) -> dict[str, Any]:
    """The power evidence's summary with J per goodput and per output token of the window."""
    out = power.as_dict()
    out["energy_j_per_goodput_token"] = (None if ev.goodput_tokens is None
                                         else power.joules_per_token(ev.goodput_tokens))
    out["energy_j_per_output_token"] = (None if ev.output_tokens is None
                                        else power.joules_per_token(ev.output_tokens))
    out["goodput_tokens"] = ev.goodput_tokens
    out["output_tokens"] = ev.output_tokens
    return out


def report_table(report: dict[str, Any]) -> str:
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
    configs = report.get("configurations") or []
    if len(configs) > 1 or any(set(c["settings"]) - {"model"} for c in configs):
        lines.append(f"\nconfigurations ({len(configs)}, runs pooled only within one; best "
                     f"under the SLO by {report.get('choose', 'goodput_per_gpu')}):")
        lines.extend(_config_lines(configs))
    energy = report.get("power")
    if energy is not None:
        lines.append(f"\npower over the operating point: {_fmt(energy.get('energy_j'))} J, "
                     f"{_fmt(energy.get('energy_j_per_goodput_token'), digits=3)} J per goodput "
                     f"token, {_fmt(energy.get('energy_j_per_output_token'), digits=3)} J per "
                     "output token")
        lines.extend(f"  - {note}" for note in energy.get("notes", []))
    return "\n".join(lines)


def _config_lines(configs: list[dict[str, Any]]) -> list[str]:
    head = ("", "configuration", "gpus", "runs", "knee", "goodput_tok/s", "per_gpu_tok/s")
    rows = [head] + [(
        "*" if c["best"] else "", c["label"],
        _fmt(c["gpus"]) if c["gpus"] is not None else (
            f"{c['gpus_assumed']}?" if c["gpus_assumed"] else "-"),
        str(len(c["runs"])),
        "-" if c["knee"] is None else f"{c['load_variable']} {_fmt(c['knee'])}",
        _fmt(c["tokens_per_s"]), _fmt(c["tokens_per_s_per_gpu"]),
    ) for c in configs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  " + "  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                              for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    lines.append("  (* the best; gpus N? = not recorded, the --gpus given)")
    return lines


def _fmt(value: Any, scale: float = 1.0, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value * scale:,.{digits}f}"
    return str(value)
