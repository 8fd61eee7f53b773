"""The scorecard as a great-tables table: one row per candidate, units in labels, p5-p95
ranges where the result has them, grades, eligibility and Pareto rank, frontier rows
highlighted, excluded rows greyed, sources cited in source notes.

Reads the result dict (DESIGN section 9), never the engine, so a stored scorecard renders the
same as a fresh one. great-tables escapes cell text and source notes itself.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from great_tables import GT, loc, style

from reports.frames import (
    HEADERS,
    METRICS,
    RANGE_METRICS,
    has_p_frontier,
    has_ranges,
    in_sentence,
    scorecard_frame,
)
from schemas.outputs import OUTPUTS

#: columns shown only when some candidate has them (a lifecycle view, a workload profile)
OPTIONAL_COLUMNS = ("embodied_gco2e_per_mtok", "electricity_eur_per_mtok_time_matched",
                    "carbon_gco2e_per_mtok_time_matched")

NOT_COMPUTED = "not computed for this proposal"

#: the figures the table's subtitle says the better way of (their declared `better`)
COMPARED = ("cpm_eur_per_mtok", "energy_j_per_token", "carbon_gco2e_per_mtok",
            "sovereignty_level")


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


def status(candidate: dict[str, Any]) -> str:
    rank = candidate.get("pareto_rank")
    if rank == 1:
        return "1 (frontier)"
    return str(rank) if candidate["eligible"] else "excluded"


#: grade -> the letter the table shows (the legend is a source note)
GRADE_LETTERS = {"measured": "M", "production": "P", "reference": "R", "estimated": "E",
                 "declared": "D"}


def _letter(grade: pl.Expr) -> pl.Expr:
    return grade.replace_strict(GRADE_LETTERS, default="–", return_dtype=pl.String())


def candidates_frame(result: dict[str, Any]) -> pl.DataFrame:
    """The scorecard frame with the display-only columns the table needs."""
    frame = scorecard_frame(result)
    power = pl.Series([(c.get("detail") or {}).get("power_grade")
                       for c in result["candidates"]], dtype=pl.String())
    return frame.with_columns(
        pl.format("{} · {}", "provider", "zone").alias("where"),
        pl.concat_str([_letter(pl.col("tokens_per_s_grade")), _letter(pl.col("cost_grade")),
                       _letter(pl.lit(power))], separator=" ").alias("grades"),
        pl.Series("status", [status(c) for c in result["candidates"]], dtype=pl.String()),
        pl.when(pl.col("eligible")).then(pl.lit("yes")).otherwise(pl.lit("no")).alias(
            "eligible_text"),
        (pl.col("pareto_rank") == 1).fill_null(False).alias("frontier"),
    )


def scorecard_gt(result: dict[str, Any]) -> GT:
    frame = candidates_frame(result)
    ranged = has_ranges(result)
    shown = ["label", "where", "tokens_per_s", "grades", "cost_eur_per_hour",
             "energy_j_per_token", "energy_boundary", "cpm_eur_per_mtok",
             "facility_kwh_per_mtok", "electricity_eur_per_mtok", "carbon_gco2e_per_mtok",
             *OPTIONAL_COLUMNS, "sovereignty_level", "eligible_text", "status",
             "p_frontier", "dominated_by"]
    range_cols = [f"{m}_{p}" for m in RANGE_METRICS for p in ("p5", "p95")]
    frame = frame.select("id", *shown, *range_cols, "frontier")
    labels: dict[str, Any] = {k: m.label for k, m in METRICS.items()}
    if ranged:
        for m in RANGE_METRICS:
            labels[m] = f"{METRICS[m].label} (p5–p95)"
    table = (
        GT(frame, rowname_col="id", id="scorecard")
        .tab_header(title=f"Scorecard: {result['proposal']}",
                    subtitle=f"Market data vintage {result['vintage']}; {better_text()}; per "
                             f"million {result.get('token_basis', 'output')} tokens")
        .cols_label(
            label="Candidate", where="Provider · zone",
            grades="Grades (goodput, cost, power)", energy_boundary="Energy boundary",
            # the level range with an en dash, as the other ranges of the table
            sovereignty_level=HEADERS["sovereignty_level"].replace("-", "–"),
            eligible_text="Eligible",
            status="Pareto rank", p_frontier="P(frontier)", dominated_by="Dominated by",
            **labels,
        )
        .tab_spanner("Per million tokens", ["cpm_eur_per_mtok", "facility_kwh_per_mtok",
                                            "electricity_eur_per_mtok", "carbon_gco2e_per_mtok",
                                            *OPTIONAL_COLUMNS])
        .tab_stubhead("Id")
        .cols_width({"id": "120px", "label": "190px", "dominated_by": "130px"})
        .tab_options(table_font_size="13px", data_row_padding="4px")
    )
    for column, metric in METRICS.items():
        table = table.fmt_number(columns=column, decimals=metric.decimals)
    for m in RANGE_METRICS:
        table = table.fmt_number(columns=[f"{m}_p5", f"{m}_p95"],
                                 decimals=METRICS[m].decimals)
        # "{0}<< (p5–p95)>>": the bracket vanishes when a candidate has no range.
        table = table.cols_merge(columns=[m, f"{m}_p5", f"{m}_p95"],
                                 pattern="{0}<< ({1}–{2})>>")
    table = table.fmt_percent(columns="p_frontier", decimals=0)
    hidden = ["frontier"] + ([] if has_p_frontier(result) else ["p_frontier"])
    hidden += [c for c in OPTIONAL_COLUMNS if frame[c].is_null().all()]
    table = (
        table.cols_hide(hidden)
        .sub_missing(columns="dominated_by", missing_text="—")
        .sub_missing(columns=[c for c in shown if c not in (*RANGE_METRICS, "dominated_by")],
                     missing_text="n/a")
        .sub_missing(columns=list(RANGE_METRICS), missing_text="n/a")
        .tab_style(style.fill(color="#e3f2e1"), loc.body(rows=pl.col("frontier")))
        .tab_style(style.text(weight="bold"), loc.stub(rows=pl.col("frontier")))
        .tab_style(style.text(color="#8a8a8a"), loc.body(rows=pl.col("status") == "excluded"))
        .tab_style(style.text(color="#8a8a8a"), loc.stub(rows=pl.col("status") == "excluded"))
    )
    for note in source_notes(result):
        table = table.tab_source_note(note)
    return table


def source_notes(result: dict[str, Any]) -> list[str]:
    """One-line citations (great-tables escapes them): market sources, then the rest."""
    notes = [f"Source: {s['kind']} {s['subject']}: {s['url']} ({s['date']}, {s['licence']})"
             for s in result["sources"]]
    notes.append("Grades: M measured, P production, R reference, E estimated, D declared "
                 "(from the proposal); each input's grade and source are listed under "
                 "Assumptions.")
    if not has_ranges(result):
        notes.append(f"p5–p95 ranges: {NOT_COMPUTED}.")
    if not has_p_frontier(result):
        notes.append(f"P(frontier): {NOT_COMPUTED}.")
    notes.append("Highlighted rows: the Pareto frontier (rank 1) among eligible candidates; "
                 "grey rows: excluded by the policy (reason under Candidates).")
    return notes
