"""The scorecard as a great-tables table: one row per candidate, units in labels, grades and
eligibility shown, frontier rows highlighted, sources cited in source notes.

Reads the JSON contract (DESIGN section 9), never the engine, so a stored scorecard renders
the same as a fresh one.
"""

from __future__ import annotations

import html
from typing import Any

import polars as pl
from great_tables import GT, loc, style

#: column -> (label with unit, decimals); the single place reports take metric labels from.
METRIC_LABELS: dict[str, tuple[str, int]] = {
    "tokens_per_s": ("Goodput (tokens/s)", 0),
    "cost_eur_per_hour": ("Cost (EUR/h)", 2),
    "cpm_eur_per_mtok": ("CPM (EUR/Mtok)", 3),
    "energy_j_per_token": ("Energy (J/token)", 3),
    "facility_kwh_per_mtok": ("Facility energy (kWh/Mtok)", 3),
    "electricity_eur_per_mtok": ("Electricity (EUR/Mtok)", 4),
    "carbon_gco2e_per_mtok": ("Carbon (gCO2e/Mtok)", 1),
}


def candidates_frame(result: dict[str, Any]) -> pl.DataFrame:
    rows = []
    for c in result["candidates"]:
        rank = c["pareto_rank"]
        rows.append({
            "id": c["id"],
            "label": c["label"],
            "where": f"{c['provider']} · {c['zone']}",
            **{k: c[k] for k in METRIC_LABELS},
            "tokens_per_s_grade": c["tokens_per_s_grade"],
            "energy_boundary": c["energy_boundary"],
            "sovereignty_level": c["sovereignty_level"],
            "status": ("frontier" if rank == 1 else f"rank {rank}" if c["eligible"]
                       else "excluded"),
            "dominated_by": ", ".join(c["dominated_by"] or []),
            "frontier": rank == 1,
        })
    return pl.DataFrame(rows, infer_schema_length=None)


def scorecard_gt(result: dict[str, Any]) -> GT:
    frame = candidates_frame(result)
    labels: dict[str, Any] = {k: v[0] for k, v in METRIC_LABELS.items()}
    table = (
        GT(frame, rowname_col="id", id="scorecard")
        .tab_header(title=f"Scorecard: {result['proposal']}",
                    subtitle=f"Market data vintage {result['vintage']}; lower CPM, energy and "
                             "carbon are better, higher sovereignty is better")
        .cols_hide(["frontier"])
        .cols_label(
            label="Candidate", where="Provider · zone", tokens_per_s_grade="Goodput grade",
            energy_boundary="Energy boundary", sovereignty_level="Sovereignty (0-4)",
            status="Pareto status", dominated_by="Dominated by", **labels,
        )
        .tab_spanner("Per million tokens", ["cpm_eur_per_mtok", "facility_kwh_per_mtok",
                                            "electricity_eur_per_mtok", "carbon_gco2e_per_mtok"])
        .sub_missing(missing_text="n/a")
        .tab_style(style.fill(color="#e3f2e1"), loc.body(rows=pl.col("frontier")))
        .tab_style(style.text(color="#8a8a8a"), loc.body(rows=pl.col("status") == "excluded"))
    )
    for column, (_, decimals) in METRIC_LABELS.items():
        table = table.fmt_number(columns=column, decimals=decimals)
    for note in source_notes(result):
        table = table.tab_source_note(note)
    return table


def source_notes(result: dict[str, Any]) -> list[str]:
    """Escaped one-line citations: market sources, then declared figures."""
    notes = []
    for s in result["sources"]:
        notes.append(html.escape(f"{s['kind']} {s['subject']}: {s['url']} ({s['date']}, "
                                 f"{s['licence']})"))
    notes.append("Figures graded 'declared' come from the proposal; see each candidate's "
                 "notes for its source.")
    return notes
