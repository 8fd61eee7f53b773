"""Energy over a window from power samples (DESIGN section 7, the contract).

- **Counter first.** When every device of the chosen boundary has a cumulative energy counter
  (DCGM, NVML via AIPerf or Zeus, amd-smi, CodeCarbon), energy is the difference of the
  counter, interpolated linearly at the window's edges (= constant power between readings).
  A drop of the counter is a reset: that one interval is integrated from power when both ends
  have it, else filled at the device's median counter power of its other intervals (an error
  when there are none, e.g. a start/end snapshot pair), and the reset is reported.
- **Else trapezoid.** Power is taken as linear between samples and integrated exactly over the
  window, edges interpolated.
- GPUs (devices) are summed; one device read through several streams (two exporters) is
  counted once, from the stream that covers the window best.
- An interval longer than `gap_factor` x the device's median sample period is a **gap**: it is
  still integrated (linear power, or the counter's difference) but reported. A log that starts
  or ends inside the window by at most one gap threshold is extended at its edge power and
  reported as a gap; further short of the window is an error. A device with only two readings
  (one Zeus or CodeCarbon measurement window, a snapshot pair) is never extended: the window
  must lie within its interval.
- Boundaries (gpu_board, node, wall, facility) are never summed: one is chosen.
- The benchmark window carries an alignment uncertainty u (s): the energy is recomputed over
  the window shifted by -u and +u, giving `energy_range_j`.
- Idle power: mean power of samples more than u outside the window, summed over devices (null
  when some device has none).

All arithmetic is on float seconds since the Unix epoch; inputs are tz-aware UTC.
`window_energy` works in three steps: `_choose` (boundary, samples with a value, one stream
per device, window, method), `_integrate` (the energy over the window and the shifted ones),
`_qualify` (gaps, resets, idle power, notes and the stability reasons of `EnergyParams`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import polars as pl

from schemas.power import BOUNDARIES


class EnergyError(ValueError):
    """The samples cannot give an energy for the window; the message names the origin."""


@dataclass(frozen=True)
class Window:
    """A benchmark window in UTC and how sure we are of its position (seconds, +/-)."""

    start_utc: datetime
    end_utc: datetime
    uncertainty_s: float = 0.0

    def __post_init__(self) -> None:
        for name in ("start_utc", "end_utc"):
            if getattr(self, name).tzinfo is None:
                raise ValueError(f"window {name} is naive; give a timezone-aware datetime")
        if self.end_utc <= self.start_utc:
            raise ValueError(f"window ends ({self.end_utc}) before it starts ({self.start_utc})")
        if not (self.uncertainty_s >= 0 and math.isfinite(self.uncertainty_s)):
            raise ValueError(f"window uncertainty must be >= 0 s, not {self.uncertainty_s}")

    @property
    def duration_s(self) -> float:
        return (self.end_utc - self.start_utc).total_seconds()


@dataclass(frozen=True)
class EnergyParams:
    """Thresholds of the energy computation, kept apart from the function."""

    gap_factor: float = 3.0       # gap: interval > gap_factor x the device's median period
    min_samples: int = 10         # fewer samples per device in the window: unstable
    min_window_s: float = 60.0    # a shorter window is dominated by ramp-up and edges
    max_gap_share: float = 0.05   # more of the window inside gaps: unstable
    max_clock_share: float = 0.01  # alignment uncertainty above this share of the window


@dataclass(frozen=True)
class Gap:
    device_id: str
    start_utc: datetime
    end_utc: datetime
    duration_s: float
    kind: str  # "gap", "before_first_sample", "after_last_sample"


@dataclass(frozen=True)
class Reset:
    device_id: str
    at_utc: datetime
    before_j: float
    after_j: float


@dataclass(frozen=True)
class EnergyResult:
    energy_j: float
    average_power_w: float
    boundary: str
    method: str  # "counter" | "trapezoid"
    gpus: tuple[str, ...]
    window: Window
    gaps: tuple[Gap, ...]
    resets: tuple[Reset, ...]
    samples_in_window: int
    samples_outside_window: int
    idle_power_w: float | None
    energy_range_j: tuple[float, float] | None
    stable: bool
    stability_reasons: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    def joules_per_token(self, tokens: float) -> float | None:
        return joules_per_token(self.energy_j, tokens)


def joules_per_token(energy_j: float, tokens: float) -> float | None:
    """Energy per token = window energy / tokens of the chosen basis in that window."""
    if tokens is None or not tokens > 0:
        return None
    return energy_j / tokens


def _seconds(moment: pl.Expr) -> pl.Expr:
    """UTC datetimes (us) -> float seconds since the Unix epoch."""
    return moment.dt.epoch("us") / 1e6


def utc_of(seconds: float) -> datetime:
    """The UTC moment of unix seconds (the energy rules' clock, in memory and over Parquet)."""
    return datetime.fromtimestamp(seconds, tz=UTC)


def _epoch(moment: datetime) -> float:
    return moment.timestamp()


def _only_value(frame: pl.DataFrame, name: str) -> object | None:
    """The value of a column when every row holds it (no nulls), else None: one comparison
    pass, not a hash of 10 million strings (and no materialising of a constant column)."""
    value, same = frame.select(
        pl.col(name).first().alias("value"),
        (pl.col(name) == pl.col(name).first()).fill_null(False).all().alias("same"),
    ).row(0) if frame.height else (None, False)
    return value if same else None


def _choose_boundary(frame: pl.DataFrame, boundary: str | None, origin: str
                     ) -> tuple[str, list[str]]:
    only = _only_value(frame, "measurement_boundary")
    present = [str(only)] if only is not None else sorted(
        frame["measurement_boundary"].drop_nulls().unique().to_list(), key=BOUNDARIES.index)
    if not present:
        raise EnergyError(f"{origin}: no power or energy samples")
    if boundary is not None:
        if boundary not in present:
            raise EnergyError(f"{origin}: no samples with boundary {boundary!r} "
                              f"(present: {', '.join(present)})")
        return boundary, []
    notes = []
    if len(present) > 1:
        notes.append(f"boundaries {', '.join(present)} present; used {present[0]} "
                     "(boundaries are never summed)")
    return present[0], notes


def _choose_series(usable: pl.DataFrame, a: float | None, b: float | None
                   ) -> tuple[pl.DataFrame, list[str], bool]:
    """One stream per device: the one overlapping the window most, then with most samples."""
    # a column without nulls (or all null) needs no pass: its count is the group's length
    # (or 0, added after the aggregation: a literal in `agg` takes a slow path)
    nulls = {name: usable[name].null_count() for name in ("power_w", "energy_counter_j")}
    counts = {f"n_{short}": pl.len() if nulls[name] == 0 else pl.col(name).count()
              for name, short in (("power_w", "power"), ("energy_counter_j", "counter"))
              if nulls[name] < usable.height}
    # usable is in time order: first/last reading instead of min/max; one series (the usual
    # case) grouped by device alone, half the hashing on a 10-million-row log
    one_series = _only_value(usable, "series_id")
    keys = ["device_id"] if one_series is not None else ["device_id", "series_id"]
    spans = usable.group_by(keys).agg(  # plain aggregations: the fast path of group_by
        first=pl.col("sample_utc").first(), last=pl.col("sample_utc").last(), n=pl.len(),
        power_sum_w=pl.col("power_w").sum(), **counts
    ).with_columns(_seconds(pl.col("first")), _seconds(pl.col("last")),
                   **{name: pl.lit(0, pl.UInt32) for name in ("n_power", "n_counter")
                      if name not in counts})
    if one_series is not None:
        spans = spans.with_columns(series_id=pl.lit(one_series, usable.schema["series_id"]))
    lo = pl.lit(a) if a is not None else pl.col("first")
    hi = pl.lit(b) if b is not None else pl.col("last")
    ranked = spans.with_columns(
        overlap=(pl.min_horizontal("last", hi) - pl.max_horizontal("first", lo)).clip(0)
    ).sort(["device_id", "overlap", "n", "series_id"], descending=[False, True, True, False])
    chosen = ranked.group_by("device_id", maintain_order=True).first()
    notes = []
    dropped = ranked.join(chosen.select("device_id", "series_id"), how="anti",
                          on=["device_id", "series_id"])
    # a series outside the window (another run of a CodeCarbon file) is not worth a note
    for row in dropped.filter(pl.col("overlap") > 0).join(
            chosen.select("device_id", used="series_id"), on="device_id").iter_rows(named=True):
        notes.append(f"device {row['device_id']} also read by {row['series_id']!r}; "
                     f"used {row['used']!r} only")
    return chosen, notes, dropped.height > 0


def _intervals(rows: pl.DataFrame, method: str, params: EnergyParams) -> pl.DataFrame:
    """Consecutive readings of each device as intervals with their energy `e` (J)."""
    value = "energy_counter_j" if method == "counter" else "power_w"
    # `rows` are in time order (window_energy sorts the samples): time order within each
    # device is all the window expressions below need
    readings = rows.filter(pl.col(value).is_not_null())
    iv = (
        readings.with_columns(
            t1=pl.col("t").shift(-1).over("device_id"),
            p1=pl.col("power_w").shift(-1).over("device_id"),
            c1=pl.col("energy_counter_j").shift(-1).over("device_id"),
        )
        .filter(pl.col("t1").is_not_null())
        .with_columns(dt=pl.col("t1") - pl.col("t"))
    )
    iv = iv.with_columns(
        period=pl.col("dt").filter(pl.col("dt") > 0).median().over("device_id"))
    trapezoid = (pl.col("power_w") + pl.col("p1")) / 2 * pl.col("dt")
    if method == "counter":
        diff = pl.col("c1") - pl.col("energy_counter_j")
        # two readings at one instant (unvalidated input) make an empty interval, not a reset
        iv = iv.with_columns(reset=(diff < 0) & (pl.col("dt") > 0)).with_columns(
            e=pl.when(~pl.col("reset")).then(diff)
            .when(pl.col("power_w").is_not_null() & pl.col("p1").is_not_null()).then(trapezoid))
        typical_w = (pl.col("e") / pl.col("dt")).filter(~pl.col("reset") & (pl.col("dt") > 0))
        iv = iv.with_columns(
            e=pl.when(pl.col("dt") == 0).then(0.0).otherwise(
                pl.col("e").fill_null(pl.col("dt") * typical_w.median().over("device_id"))))
    else:
        iv = iv.with_columns(reset=pl.lit(False), e=trapezoid)
    return iv.with_columns(is_gap=pl.col("dt") > params.gap_factor * pl.col("period"))


def _energy_over(iv: pl.DataFrame, method: str, a: float, b: float, params: EnergyParams,
                 origin: str, lone: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-device energy over [a, b] and the edge shortfalls; raises when not covered. An edge
    shortfall up to one gap threshold is extended, except for the `lone` devices, whose two
    readings are one measurement window (Zeus, CodeCarbon, a snapshot pair): their "period" is
    that whole window, so nothing beyond it is known."""
    left = pl.max_horizontal("t", pl.lit(a))
    right = pl.min_horizontal("t1", pl.lit(b))
    if method == "counter":
        clipped = pl.col("e") * (right - left) / pl.col("dt")
    else:
        slope = (pl.col("p1") - pl.col("power_w")) / pl.col("dt")
        p_left = pl.col("power_w") + slope * (left - pl.col("t"))
        p_right = pl.col("power_w") + slope * (right - pl.col("t"))
        clipped = (p_left + p_right) / 2 * (right - left)
    inside = iv.filter(right > left).with_columns(e_window=clipped)
    unknown = inside.filter(pl.col("e").is_null())
    if unknown.height:
        row = unknown.row(0, named=True)
        raise EnergyError(
            f"{origin}: energy counter of device {row['device_id']} dropped from "
            f"{row['energy_counter_j']} J to {row['c1']} J between its only readings (a reset, "
            "or readings from different runs): energy unknown")
    edges = iv.group_by("device_id").agg(  # iv is in time order within each device
        first=pl.col("t").first(), last=pl.col("t1").last(), period=pl.col("period").first(),
        p_first=(pl.col("e") / pl.col("dt")).filter(pl.col("dt") > 0).first(),
        p_last=(pl.col("e") / pl.col("dt")).filter(pl.col("dt") > 0).last(),
    ).with_columns(
        lead=(pl.col("first") - a).clip(0), trail=(b - pl.col("last")).clip(0),
        tolerance=pl.when(pl.col("device_id").is_in(lone)).then(0.0)
        .otherwise(params.gap_factor * pl.col("period")),
    )
    short = edges.filter((pl.col("lead") > pl.col("tolerance"))
                         | (pl.col("trail") > pl.col("tolerance")))
    if short.height:
        row = short.sort("device_id").row(0, named=True)
        raise EnergyError(
            f"{origin}: power log does not cover the window for device {row['device_id']}: "
            f"it covers {utc_of(row['first']).isoformat()} .. {utc_of(row['last']).isoformat()}, "
            f"window {utc_of(a).isoformat()} .. {utc_of(b).isoformat()}")
    per_device = (
        edges.join(inside.group_by("device_id").agg(e_window=pl.col("e_window").sum()),
                   on="device_id", how="left")
        .with_columns(energy_j=pl.col("e_window").fill_null(0.0)
                      + pl.col("lead") * pl.col("p_first").fill_null(0.0)
                      + pl.col("trail") * pl.col("p_last").fill_null(0.0))
        .sort("device_id")
    )
    return per_device, inside


def _near_window(rows: pl.DataFrame, chosen: pl.DataFrame, lo: float, hi: float
                 ) -> pl.DataFrame:
    """The rows (sorted by time) the window's energy depends on: every chosen stream's
    readings in [lo, hi] plus at least its last reading before and first after, found by
    binary search with a widening margin instead of a pass over a 10-million-row log. Only
    these rows get the float seconds `t` the arithmetic below works in."""
    micros = rows["sample_utc"].to_physical()
    margin = max(60.0, 0.05 * (hi - lo))
    need = chosen.select("device_id", "series_id", "first", "last")
    while True:
        i = int(micros.search_sorted(math.floor((lo - margin) * 1e6), "left"))
        j = int(micros.search_sorted(math.ceil((hi + margin) * 1e6), "right"))
        near = rows.slice(i, j - i).with_columns(t=_seconds(pl.col("sample_utc")))
        if i == 0 and j == rows.height:
            return near
        got = near.group_by("device_id", "series_id").agg(
            lo_t=pl.col("t").min(), hi_t=pl.col("t").max())
        check = need.join(got, on=["device_id", "series_id"], how="left")
        complete = check.select(
            (((pl.col("lo_t") <= lo) | (pl.col("lo_t") == pl.col("first")))
             & ((pl.col("hi_t") >= hi) | (pl.col("hi_t") == pl.col("last")))).fill_null(False)
            .all()).item()
        if complete:
            return near
        margin *= 4


def window_energy(samples: pl.DataFrame, window: Window | None = None, *, origin: str,
                  boundary: str | None = None, params: EnergyParams | None = None,
                  method: str | None = None) -> EnergyResult:
    """Energy of all devices of one boundary over `window` (the whole common span of the log
    when None). `samples` holds POWER_SAMPLES columns; `origin` names the file(s) in errors.
    `method` forces "counter" or "trapezoid" (to compare them); by default counter first."""
    params = params or EnergyParams()
    choice = _choose(samples, window, origin=origin, boundary=boundary, method=method)
    return _qualify(choice, _integrate(choice, params, origin), params)


@dataclass(frozen=True)
class _Choice:
    """What the energy is computed from: `rows`, the usable samples (in time order) of the
    `streams` chosen (one per device, with its span and counts, from `_choose_series`), over
    `window` ([a, b] in float seconds), by `method`."""

    boundary: str
    rows: pl.DataFrame
    streams: pl.DataFrame
    window: Window
    a: float
    b: float
    method: str
    notes: list[str]


@dataclass(frozen=True)
class _Integral:
    """The energy over the window: per device (with its edge shortfalls), the reading intervals
    overlapping the window (`inside`), the readings within the uncertainty of it (`near`, with
    float seconds `t`) and the range over the window shifted by +/- the uncertainty."""

    energy_j: float
    per_device: pl.DataFrame
    inside: pl.DataFrame
    near: pl.DataFrame
    energy_range_j: tuple[float, float] | None
    notes: list[str]


def _choose(samples: pl.DataFrame, window: Window | None, *, origin: str,
            boundary: str | None, method: str | None) -> _Choice:
    """The boundary, the samples with a value, one stream per device, the window (the span
    every device covers when None) and the method (counter when every device has one)."""
    chosen_boundary, notes = _choose_boundary(samples, boundary, origin)
    # Every pass over the whole of a 10-million-row log costs: only one grouping (in
    # _choose_series) sees every row; the rest works on the rows near the window.
    usable = _usable(samples, chosen_boundary, notes)
    a = _epoch(window.start_utc) if window else None
    b = _epoch(window.end_utc) if window else None
    chosen, series_notes, some_dropped = _choose_series(usable, a, b)
    notes += series_notes
    if window is None:
        a, b = float(chosen["first"].max()), float(chosen["last"].min())  # type: ignore[arg-type]
        if not b > a:
            raise EnergyError(f"{origin}: the devices' logs do not overlap in time")
        window = Window(utc_of(a), utc_of(b))
    assert a is not None and b is not None
    method = _choose_method(chosen, method, origin, notes)
    rows = (usable if not some_dropped else usable.join(
        chosen.select("device_id", "series_id"), on=["device_id", "series_id"],
        maintain_order="left"))
    return _Choice(chosen_boundary, rows, chosen, window, a, b, method, notes)


def _usable(samples: pl.DataFrame, boundary: str, notes: list[str]) -> pl.DataFrame:
    """The samples of `boundary` with a power or energy value, in time order; those without
    are counted by their note in `notes`."""
    frame = samples
    if _only_value(samples, "measurement_boundary") != boundary:  # else: no copy
        frame = samples.filter(pl.col("measurement_boundary") == boundary)
    usable = frame.filter(pl.col("power_w").is_not_null()
                          | pl.col("energy_counter_j").is_not_null())
    if usable.height < frame.height:
        skipped = (frame.filter(pl.col("power_w").is_null()
                                & pl.col("energy_counter_j").is_null())
                   .group_by("note").len().iter_rows())
        notes.append(skipped_note(dict(skipped)))
    if not usable["sample_utc"].is_sorted():
        usable = usable.sort("sample_utc", maintain_order=True)
    return usable


def skipped_note(skipped: Mapping[str | None, int]) -> str:
    """What the energy leaves out, the samples without power or energy counted by their note
    (the reader's reason: "truncated last line: power dropped"), most first: the one wording of
    `evidence inspect`, `evidence add` and a candidate's notes."""
    listed = "; ".join(f"{n} x {note or 'no value'}" for note, n in sorted(
        skipped.items(), key=lambda item: (-item[1], item[0] or "")))
    return f"{sum(skipped.values())} sample(s) without power or energy skipped ({listed})"


def _choose_method(chosen: pl.DataFrame, method: str | None, origin: str, notes: list[str]
                   ) -> str:
    """`method` when every chosen stream has two readings for it, else counter when every one
    has two counter readings, else trapezoid (with a note when some have counters)."""
    if method not in (None, "counter", "trapezoid"):
        raise ValueError(f"method must be 'counter' or 'trapezoid', not {method!r}")
    if method is not None:
        column = "n_counter" if method == "counter" else "n_power"
        if not (chosen[column] >= 2).all():
            raise EnergyError(f"{origin}: method {method} needs 2 readings per device")
        return method
    if (chosen["n_counter"] >= 2).all():
        return "counter"
    if (chosen["n_power"] >= 2).all():
        if (chosen["n_counter"] > 0).any():
            notes.append("energy counters missing on some devices; integrated power instead")
        return "trapezoid"
    few = chosen.filter((pl.col("n_counter") < 2) & (pl.col("n_power") < 2))
    raise EnergyError(f"{origin}: device {few['device_id'][0]} has fewer than 2 power or "
                      "energy readings")


def _integrate(choice: _Choice, params: EnergyParams, origin: str) -> _Integral:
    """The energy of every device over the window, and over the window shifted by -u and +u
    (u its uncertainty) for the range; raises when the log does not cover the window."""
    a, b, method, chosen = choice.a, choice.b, choice.method, choice.streams
    u = choice.window.uncertainty_s
    near = _near_window(choice.rows, chosen, a - u, b + u)
    iv = _intervals(near, method, params)
    # devices with a single interval of the method's readings in the whole log
    lone = chosen.filter(pl.col("n_counter" if method == "counter" else "n_power") == 2
                         )["device_id"].to_list()
    per_device, inside = _energy_over(iv, method, a, b, params, origin, lone)
    missing = set(chosen["device_id"].to_list()) - set(per_device["device_id"].to_list())
    if missing:
        raise EnergyError(f"{origin}: device {sorted(missing)[0]} has no two {method} "
                          "readings around the window")
    energy = float(per_device["energy_j"].sum())
    notes = []
    energy_range: tuple[float, float] | None = None
    if u > 0:
        try:
            shifted = [float(_energy_over(iv, method, a + s, b + s, params, origin, lone)[0]
                             ["energy_j"].sum()) for s in (-u, u)]
            energy_range = (min([*shifted, energy]), max([*shifted, energy]))
        except EnergyError:
            notes.append(f"the log does not cover the window shifted by +/-{u} s: "
                         "no energy range")
    return _Integral(energy, per_device, inside, near, energy_range, notes)


def _qualify(choice: _Choice, integral: _Integral, params: EnergyParams) -> EnergyResult:
    """The result with what qualifies it: gaps, counter resets, pro-rated intervals, samples
    in and out of the window, idle power, and the reasons it is unstable (`params`)."""
    a, b, chosen = choice.a, choice.b, choice.streams
    per_device, inside, near = integral.per_device, integral.inside, integral.near
    u = choice.window.uncertainty_s
    notes = list(choice.notes)
    duration = b - a

    gaps = _gaps(per_device, inside, a, b)
    resets = tuple(
        Reset(r["device_id"], utc_of(r["t1"]), r["energy_counter_j"], r["c1"])
        for r in inside.filter(pl.col("reset")).sort("device_id", "t").iter_rows(named=True))
    if resets:
        notes.append(f"{len(resets)} energy-counter reset(s) in the window: those intervals "
                     "integrated from power where present, else filled at the device's median "
                     "counter power")

    prorated = inside.filter(((pl.col("t") < a) | (pl.col("t1") > b))
                             & (pl.col("dt") > duration / 2))
    if prorated.height:
        notes.append(f"{prorated.height} reading interval(s) longer than half the window were "
                     "pro-rated to it (constant power assumed within them)")

    in_window = near.filter((pl.col("t") >= a) & (pl.col("t") <= b))
    counts = in_window.group_by("device_id").len()["len"].to_list()
    reasons = stability_reasons(min(counts) if len(counts) == chosen.height else 0, duration,
                                sum(g.duration_s for g in gaps), chosen.height, u,
                                len(resets), params)

    energy = integral.energy_j
    return EnergyResult(
        energy_j=energy, average_power_w=energy / duration, boundary=choice.boundary,
        method=choice.method, gpus=tuple(per_device["device_id"].to_list()),
        window=choice.window, gaps=tuple(gaps), resets=resets,
        samples_in_window=in_window.height,
        samples_outside_window=choice.rows.height - in_window.height,
        idle_power_w=_idle_power(near, chosen, a - u, b + u),
        energy_range_j=integral.energy_range_j, stable=not reasons,
        stability_reasons=tuple(reasons), notes=(*notes, *integral.notes))


def stability_reasons(fewest: int, duration_s: float, gap_s: float, devices: int,
                      uncertainty_s: float, resets: int, params: EnergyParams) -> list[str]:
    """Why an energy is unstable (none: stable), from the fewest samples a device has in the
    window, the window's length, the seconds of gaps (summed over devices), the devices, the
    window's alignment uncertainty and the counter resets (also used by
    `pipeline.evidence.power.fleet`)."""
    reasons: list[str] = []
    if fewest < params.min_samples:
        reasons.append(f"few_samples:{fewest}")
    if duration_s < params.min_window_s:
        reasons.append(f"short_window:{duration_s:g}s")
    gap_share = gap_s / (duration_s * devices)
    if gap_share > params.max_gap_share:
        reasons.append(f"large_gaps:{gap_share:.1%}")
    if uncertainty_s / duration_s > params.max_clock_share:
        reasons.append(f"clock_uncertainty:{uncertainty_s:g}s_of_{duration_s:g}s")
    if resets:
        reasons.append(f"counter_resets:{resets}")
    return reasons


def _gaps(per_device: pl.DataFrame, inside: pl.DataFrame, a: float, b: float) -> list[Gap]:
    """The long intervals inside [a, b], then each device's edges extended to it."""
    gaps = [Gap(r["device_id"], utc_of(r["t"]), utc_of(r["t1"]), r["dt"], "gap")
            for r in inside.filter(pl.col("is_gap")).sort("device_id", "t").iter_rows(named=True)]
    for r in per_device.iter_rows(named=True):
        if r["lead"] > 0:
            gaps.append(Gap(r["device_id"], utc_of(a), utc_of(r["first"]), r["lead"],
                            "before_first_sample"))
        if r["trail"] > 0:
            gaps.append(Gap(r["device_id"], utc_of(r["last"]), utc_of(b), r["trail"],
                            "after_last_sample"))
    return gaps


def _idle_power(near: pl.DataFrame, chosen: pl.DataFrame, lo: float, hi: float
                ) -> float | None:
    """Mean power of each device's readings outside [lo, hi], summed over devices (None when
    some device has none). `near` holds every reading in [lo, hi]: a device's idle readings
    are all its readings (counted in `chosen`) but these, with no pass over the whole log."""
    t = pl.col("t")
    busy = near.filter((t >= lo) & (t <= hi)).group_by("device_id").agg(
        busy_sum_w=pl.col("power_w").sum(), busy_n=pl.col("power_w").count())
    idle = chosen.join(busy, on="device_id", how="left").select(
        n=pl.col("n_power").cast(pl.Int64) - pl.col("busy_n").fill_null(0),
        sum_w=pl.col("power_sum_w") - pl.col("busy_sum_w").fill_null(0.0))
    return float((idle["sum_w"] / idle["n"]).sum()) if (idle["n"] > 0).all() else None
