"""`scorecard evidence inspect`: what benchmark files give, with a power log's energy and
J/token at their operating point, and the report as the table the command prints.

- `inspect_report(paths, slo, *, fmt=None, tz=None, window=None, power=None, power_fmt=None,
  run_notes=(), choose="goodput_per_gpu", gpu_count=None) -> dict`:
  `pipeline.evidence.bench.inspect`'s `{"runs", "sweep", "configurations", "choose"}` report
  (the DESIGN section 9 contract, extended) and, with a `power` log, its energy over the
  operating point's window under "power"; `run_notes` are added to every run's notes.
- `energy_at_operating_point(ev, power_path, *, tz=None, fmt=None) -> dict`: the power log's
  energy over a `ThroughputEvidence` window (`pipeline.evidence.power`) and J per goodput token
  and per output token of that window (DESIGN section 7).
- `report_table(report) -> str`: one line per run (counts, goodput, percentiles in ms), then
  each run's notes, the sweep's knee, the configurations (each one's GPUs, knee, goodput and
  goodput per GPU, the best marked `*`) when the runs record settings, and the energy at the
  operating point.

Errors: those of the readers (`sources.errors.ParseError`, FileNotFoundError); a power log that
gives no energy over the window raises `PowerLogError` naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.evidence.bench import ThroughputEvidence, build_report, load_runs, operating_point
from pipeline.evidence.energy import EnergyError
from pipeline.evidence.goodput import Slo
from pipeline.evidence.power import power_from_evidence
from schemas.table import ValidationFailed


class PowerLogError(ValueError):
    """The power log gives no energy over the operating point; the message names the log."""


def inspect_report(paths: Sequence[Path], slo: Slo, *, fmt: str | None = None,
                   tz: str | None = None, window: tuple[float, float] | None = None,
                   power: Path | None = None, power_fmt: str | None = None,
                   run_notes: Sequence[str] = (), choose: str = "goodput_per_gpu",
                   gpu_count: int | None = None) -> dict[str, Any]:
    loaded = load_runs(paths, fmt=fmt, tz=tz, cached=window is None)
    report = build_report(loaded, slo, window, choose=choose, gpu_count=gpu_count)
    if power is not None:
        ev = operating_point(loaded, report, slo, ", ".join(str(p) for p in paths))
        try:
            report["power"] = energy_at_operating_point(ev, power, tz=tz, fmt=power_fmt)
        except (EnergyError, ValidationFailed) as err:
            raise PowerLogError(f"power log {power}: {err}") from err
    for run in report["runs"]:
        run["notes"].extend(run_notes)
    return report


def energy_at_operating_point(ev: ThroughputEvidence, power_path: Path, *,
                              tz: str | None = None, fmt: str | None = None
                              ) -> dict[str, Any]:
    """`None` figures carry a reason in "notes"."""
    if ev.window_start_utc is None or ev.window_end_utc is None:
        return {"energy_j_per_goodput_token": None, "energy_j_per_output_token": None,
                "notes": ["the operating point has no UTC window (a vLLM `date` needs --tz; a "
                          "trace on its own clock has none; runs pooled at one level have "
                          "none): energy cannot be aligned"]}
    power = power_from_evidence(Path(power_path), ev.window_start_utc, ev.window_end_utc, tz,
                                uncertainty_s=ev.clock_uncertainty_s or 0.0, format=fmt)
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
