"""XLSX workbook, CSV and Parquet exports: numbers as numbers, units in headers, snapshots of
the cell values, identical on a second run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reports.outputs import write_csv, write_outputs, write_parquet
from reports.xlsx import read_values, write_xlsx
from tests.reports.conftest import check_snapshot, without_optional


def test_xlsx_cell_values_snapshot_and_repeatable(full: dict[str, Any], tmp_path: Path) -> None:
    first, second = tmp_path / "a.xlsx", tmp_path / "b.xlsx"
    write_xlsx(full, first)
    write_xlsx(full, second)
    values = read_values(first)
    assert values == read_values(second)
    check_snapshot("result_full.xlsx.json",
                   json.dumps(values, indent=1, ensure_ascii=False, default=str) + "\n")
    assert list(values) == ["About", "Scorecard", "Breakdown", "Assumptions", "Sources",
                            "Sizing", "Break-even", "P(frontier)", "Pairwise"]


def test_xlsx_numbers_are_numbers_and_headers_carry_units(full: dict[str, Any],
                                                          tmp_path: Path) -> None:
    path = tmp_path / "s.xlsx"
    write_xlsx(full, path)
    sheet = read_values(path)["Scorecard"]
    header, rows = sheet[0], sheet[1:]
    assert "CPM (EUR/Mtok)" in header and "Carbon (gCO2e/Mtok)" in header
    cpm = header.index("CPM (EUR/Mtok)")
    by_id = {r[0]: r for r in rows}
    # FR H200 in the fixture: 14 EUR/h / (4000 tokens/s x 3600 / 1e6) = 0.97222 EUR/Mtok.
    assert isinstance(by_id["onprem-fr-h200-fp8"][cpm], float)
    assert by_id["onprem-fr-h200-fp8"][cpm] == pytest.approx(0.972222, rel=1e-5)
    assert len(rows) == len(full["candidates"])
    sizing = read_values(path)["Sizing"]
    assert sizing[0][0] == "Candidate id" and sizing[1][1] == "provisioned"
    assert sizing[1][2] == 2  # instances stay integers
    # Break-even: the fixture's one curve (FR H200 vs Scaleway), 6 points, one row each
    even = read_values(path)["Break-even"]
    assert even[0] == ["Candidate id", "Versus (cloud candidate id)", "Cloud CPM (EUR/Mtok)",
                       "Break-even volume (tokens/day)", "Volume (tokens/day)",
                       "CPM at this volume (EUR/Mtok)"]
    assert len(even) == 1 + 6
    # first point: 1e7 tokens/day at 33.6 EUR/Mtok; Scaleway's CPM 1.954537 EUR/Mtok; the
    # curves meet at 171,906,977 tokens/day (all as written in the fixture)
    assert even[1] == ["onprem-fr-h200-fp8", "scaleway-h100x8-fp8",
                       pytest.approx(1.954537, rel=1e-6), 171906977.0, 10000000.0, 33.6]


def test_xlsx_sheets_without_figures_say_not_computed(full: dict[str, Any],
                                                      tmp_path: Path) -> None:
    path = tmp_path / "bare.xlsx"
    write_xlsx(without_optional(full), path)
    values = read_values(path)
    for sheet in ("Sizing", "Break-even", "P(frontier)", "Pairwise"):
        assert values[sheet] == [[f"{sheet}: not computed for this proposal"]]


def test_csv_and_parquet_hold_the_scorecard_table(full: dict[str, Any], tmp_path: Path) -> None:
    csv, parquet = tmp_path / "s.csv", tmp_path / "s.parquet"
    write_csv(full, csv)
    write_parquet(full, parquet)
    check_snapshot("result_full.csv", csv.read_text(encoding="utf-8"))
    from_csv = pl.read_csv(csv)
    from_parquet = pl.read_parquet(parquet)
    assert from_parquet.columns == from_csv.columns
    assert from_parquet["id"].to_list() == [c["id"] for c in full["candidates"]]
    assert from_parquet.schema["cpm_eur_per_mtok"] == pl.Float64()
    assert from_parquet["cpm_eur_per_mtok"].to_list() == [c["cpm_eur_per_mtok"]
                                                          for c in full["candidates"]]
    # the p5 of FR H200's CPM: 0.97222 x 0.88 = 0.855556 (fixture spread)
    fr = from_parquet.filter(pl.col("id") == "onprem-fr-h200-fp8")
    assert fr["cpm_eur_per_mtok_p5"].item() == pytest.approx(0.855556, rel=1e-5)
    # excluded candidate: no rank, null not 0
    azure = from_parquet.filter(pl.col("id") == "azure-nd-h100-v5-fp8")
    assert azure["pareto_rank"].item() is None and azure["eligible"].item() is False


def test_write_outputs_writes_every_file(full: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("altair", reason="charts need altair (a project dependency)")

    written = write_outputs(full, tmp_path / "out")
    assert [p.name for p in written] == ["scorecard.html", "scorecard.xlsx", "scorecard.csv",
                                         "scorecard.parquet"]
    assert all(p.stat().st_size > 0 for p in written)
