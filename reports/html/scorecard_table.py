"""The full scorecard as a great-tables table (the report's appendix): one row per candidate,
units in labels, p5-p95 ranges where the result has them (a degenerate one printed as its
single value), grades spelled out, Pareto rank, frontier rows highlighted, excluded rows
greyed, notes saying where the sources are and what the grades mean.

Reads the result (schemas/result.py) and its scorecard frame (reports/frames.py), never the
engine, so a stored scorecard renders the same as a fresh one. great-tables escapes cell text
and source notes itself.

While a run's table cache is active (the store's), a table already rendered from the same
inputs by the same code is taken from it (keyed by the sha256 of the table's inputs, this
module, reports/frames.py, the schemas it reads (the figures' declarations, the result, the
default objectives of a proposal), and the great-tables and polars versions), so a rerun on
unchanged figures neither imports great-tables nor renders the table again. great-tables is
imported where a table is rendered, not with the module.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
from collections.abc import MutableMapping
from contextlib import AbstractContextManager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

import reports.frames
import schemas.outputs
from reports.figures.charts import caching
from reports.frames import (
    HEADERS,
    METRICS,
    degenerate,
    has_p_frontier,
    has_ranges,
    in_sentence,
)
from schemas.outputs import OBJECTIVES, OUTPUTS, RANGED, columns_for, layout
from schemas.proposal import DEFAULT_OBJECTIVES
from schemas.result import CandidateResult, Result

if TYPE_CHECKING:
    from great_tables import GT

#: the figures the table shows (declared shown in "scorecard"), and those with a p5–p95 range
FIGURES = columns_for("scorecard")
RANGED_HERE = tuple(m for m in RANGED if m in FIGURES)
#: figures shown only when some candidate has them: those a result may lack (a lifecycle
#: view, a workload profile, P(frontier): no required key of a candidate)
OPTIONAL_COLUMNS = tuple(f for f in FIGURES if f not in CandidateResult.model_fields
                         or not CandidateResult.model_fields[f].is_required())
#: the candidate's keys shown beside a figure
_BESIDE = {"tokens_per_s": ("grades",), "energy_j_per_token": ("energy_boundary",),
           "sovereignty_level": ("status",), "p_frontier": ("dominated_by",)}
#: the spanner over the figures per million tokens
PER_MTOK = "Per million tokens"

NOT_COMPUTED = "not computed for this proposal"

#: the figures the table's subtitle says the better way of (their declared `better`): those
#: of the default objectives
COMPARED = tuple(OBJECTIVES[o][0] for o in DEFAULT_OBJECTIVES)


def better_text(columns: tuple[str, ...] = COMPARED) -> str:
    """The way each figure is better, in words: "lower CPM, energy and carbon are better,
    higher sovereignty is better"."""
    ways: dict[str | None, list[str]] = {}
    for column in columns:
        ways.setdefault(OUTPUTS[column].better, []).append(in_sentence(column))
    said = []
    for way, names in ways.items():
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        said.append(f"{way} {listed} {'is' if len(names) == 1 else 'are'} better")
    return ", ".join(said)


def status(candidate: CandidateResult) -> str:
    rank = candidate.pareto_rank
    if rank == 1:
        return "1 (frontier)"
    return str(rank) if candidate.eligible else "excluded"


def _grade(grade: pl.Expr) -> pl.Expr:
    """A grade as the table shows it: the word itself (no letter needing a legend)."""
    return grade.fill_null("none")


def candidates_frame(result: Result, frame: pl.DataFrame) -> pl.DataFrame:
    """The result's scorecard frame (`frame`) with the display-only columns the table needs;
    a p5–p95 range that prints as one number at the table's decimals is dropped (the point
    figure alone)."""
    for m in RANGED_HERE:
        flat = pl.Series([degenerate(lo, hi, METRICS[m].decimals) for lo, hi in
                          zip(frame[f"{m}_p5"], frame[f"{m}_p95"], strict=True)])
        frame = frame.with_columns(
            pl.when(flat).then(None).otherwise(pl.col(f"{m}_p5")).alias(f"{m}_p5"),
            pl.when(flat).then(None).otherwise(pl.col(f"{m}_p95")).alias(f"{m}_p95"))
    power = pl.Series([c.detail.get("power_grade") for c in result.candidates],
                      dtype=pl.String())
    return frame.with_columns(
        pl.format("{} · {}", "provider", "zone").alias("where"),
        pl.concat_str([_grade(pl.col("tokens_per_s_grade")), _grade(pl.col("cost_grade")),
                       _grade(pl.lit(power))], separator=" / ").alias("grades"),
        pl.Series("status", [status(c) for c in result.candidates], dtype=pl.String()),
        pl.when(pl.col("eligible")).then(pl.lit("yes")).otherwise(pl.lit("no")).alias(
            "eligible_text"),
        (pl.col("pareto_rank") == 1).fill_null(False).alias("frontier"),
    )


#: the keys of the result the table reads (`table_inputs`): the cache key covers exactly these
TABLE_KEYS = ("proposal", "vintage", "token_basis", "sources", "candidates")
#: the code that turns the table's inputs into its HTML: a change in any of it renders afresh
_RENDERERS = (Path(__file__), Path(reports.frames.__file__),
              *(Path(schemas.outputs.__file__).with_name(name) for name in (
                  "outputs.py", "outputs.toml", "result.py", "proposal.py")))

_CACHE: ContextVar[MutableMapping[str, str] | None] = ContextVar("table_cache", default=None)


def table_cache(cache: MutableMapping[str, str]
                ) -> AbstractContextManager[MutableMapping[str, str]]:
    """While active, `scorecard_html` takes a table's HTML from `cache` when its key is there
    and stores every table it renders into it."""
    return caching(_CACHE, cache)


def table_inputs(result: Result) -> dict[str, Any]:
    """The part of the result the table is rendered from (TABLE_KEYS that are there), as
    plain data: what its cache key is made of."""
    return result.model_dump(include=set(TABLE_KEYS), exclude_unset=True)


@functools.cache
def _renderer_digest() -> bytes:
    digest = hashlib.sha256()
    for package in ("great-tables", "polars"):
        digest.update(f"{package} {importlib.metadata.version(package)}\n".encode())
    for path in _RENDERERS:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


def table_key(inputs: dict[str, Any]) -> str:
    """The cache key of a table: sha256 of the renderers' digest and the inputs' canonical
    JSON."""
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    return hashlib.sha256(_renderer_digest() + text.encode()).hexdigest()


def scorecard_html(result: Result, frame: pl.DataFrame) -> str:
    """The full scorecard table as HTML from the result and its scorecard frame, from the
    active `table_cache` when the same inputs were rendered by the same code, else rendered
    by great-tables (and kept there)."""
    cache = _CACHE.get()
    if cache is None:
        return _render(result, frame)
    key = table_key(table_inputs(result))
    if (kept := cache.get(key)) is not None:
        return kept
    html = _render(result, frame)
    cache[key] = html
    return html


def _render(result: Result, frame: pl.DataFrame) -> str:
    html: str = scorecard_gt(result, frame).as_raw_html()
    return html


def per_mtok(figures: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The figures in the table's order, and those under the PER_MTOK spanner: the ones per
    million tokens (unit `.../Mtok`) together, where the last of them is declared."""
    spanned = [f for f in figures if OUTPUTS[f].unit.endswith("/Mtok")]
    ordered: list[str] = []
    for f in figures:
        if f not in spanned:
            ordered.append(f)
        elif f == spanned[-1]:
            ordered += spanned
    return ordered, spanned


def scorecard_gt(result: Result, frame: pl.DataFrame) -> GT:
    from great_tables import GT, loc, style

    frame = candidates_frame(result, frame)
    ranged = has_ranges(result)
    ordered, spanned = per_mtok(FIGURES)
    shown = list(layout(ordered, lead=("where",), beside=_BESIDE))
    range_cols = [f"{m}_{p}" for m in RANGED_HERE for p in ("p5", "p95")]
    frame = frame.select("id", *shown, *range_cols, "frontier")
    labels: dict[str, Any] = {k: OUTPUTS[k].label for k in FIGURES}
    # the level range with an en dash, as the other ranges of the table; a probability's
    # name says its unit
    labels.update({k: v for k, v in (
        ("sovereignty_level", HEADERS["sovereignty_level"].replace("-", "–")),
        ("p_frontier", "P(frontier)")) if k in labels})
    if ranged:
        for m in RANGED_HERE:
            labels[m] = f"{OUTPUTS[m].label} (p5–p95)"
    table = (
        GT(frame, rowname_col="id", id="scorecard")
        .tab_header(title=f"Scorecard: {result.proposal}",
                    subtitle=f"Market data vintage {result.vintage}; {better_text()}; per "
                             f"million {result.token_basis} tokens")
        .cols_label(
            where="Provider · zone",
            grades="Grade of goodput / cost / power", energy_boundary="Energy boundary",
            status="Pareto rank", dominated_by="Dominated by", **labels,
        )
        .tab_spanner(PER_MTOK, spanned)
        .tab_stubhead("Id")
        .cols_width({"id": "150px", "grades": "120px", "dominated_by": "130px"})
        .tab_options(table_font_size="13px", data_row_padding="4px")
    )
    for column in FIGURES:
        if column in METRICS:
            table = table.fmt_number(columns=column, decimals=METRICS[column].decimals)
    for m in RANGED_HERE:
        table = table.fmt_number(columns=[f"{m}_p5", f"{m}_p95"],
                                 decimals=METRICS[m].decimals)
        # "{0}<< (p5–p95)>>": the bracket vanishes when a candidate has no range.
        table = table.cols_merge(columns=[m, f"{m}_p5", f"{m}_p95"],
                                 pattern="{0}<< ({1}–{2})>>")
    table = table.fmt_percent(
        columns=[f for f in FIGURES if OUTPUTS[f].unit == "probability"], decimals=0)
    hidden = ["frontier", *(c for c in OPTIONAL_COLUMNS if frame[c].is_null().all())]
    table = (
        table.cols_hide(hidden)
        .sub_missing(columns="dominated_by", missing_text="—")
        .sub_missing(columns=[c for c in shown if c not in (*RANGED_HERE, "dominated_by")],
                     missing_text="n/a")
        .sub_missing(columns=list(RANGED_HERE), missing_text="n/a")
        .tab_style(style.fill(color="#e3f2e1"), loc.body(rows=pl.col("frontier")))
        .tab_style(style.text(weight="bold"), loc.stub(rows=pl.col("frontier")))
        .tab_style(style.text(color="#8a8a8a"), loc.body(rows=pl.col("status") == "excluded"))
        .tab_style(style.text(color="#8a8a8a"), loc.stub(rows=pl.col("status") == "excluded"))
    )
    for note in source_notes(result):
        table = table.tab_source_note(note)
    return table


def source_notes(result: Result) -> list[str]:
    """The table's notes (great-tables escapes them): where the sources are listed, what the
    grades mean, which figures are missing and what the row colours say."""
    notes = []
    if result.sources:
        notes.append(f"Sources: {len(result.sources)} source figure(s), each with its URL, "
                     "date, licence and content hash under Sources.")
    notes.append("Grades: measured (own benchmark and power files), production (serving "
                 "metrics), reference (a public source), estimated (a model), declared (typed "
                 "into the proposal with a source); each input's grade and source are listed "
                 "under Assumptions.")
    if not has_ranges(result):
        notes.append(f"p5–p95 ranges: {NOT_COMPUTED}.")
    if not has_p_frontier(result):
        notes.append(f"P(frontier): {NOT_COMPUTED}.")
    notes.append("Highlighted rows: the Pareto frontier (rank 1) among eligible candidates; "
                 "grey rows: excluded by the policy (reason under Candidates).")
    return notes
