"""XLSX workbook, CSV and Parquet exports: numbers as numbers, units in headers, number formats
per unit, snapshots of the cell contents (formula text for the Scorecard's formulas), identical
on a second run; CSV and Parquet stackable across months, Parquet fields carrying their units.
The workbook's formulas are evaluated in test_workbook.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from openpyxl import load_workbook

from reports.files.outputs import write_csv, write_outputs, write_parquet
from reports.files.xlsx import write_xlsx
from tests.reports.conftest import check_snapshot, typed, without_optional


def read_values(path: Path, *, cached: bool = False) -> dict[str, list[list[Any]]]:
    """Every sheet's cells: formula text for a formula, or (`cached`) the value stored with it
    (the engine's)."""
    book = load_workbook(path, read_only=True, data_only=cached)
    return {ws.title: [list(r) for r in ws.iter_rows(values_only=True)] for ws in book}


def test_xlsx_cell_values_snapshot_and_repeatable(full: dict[str, Any], tmp_path: Path) -> None:
    first, second = tmp_path / "a.xlsx", tmp_path / "b.xlsx"
    write_xlsx(typed(full), first)
    write_xlsx(typed(full), second)
    values = read_values(first)
    assert values == read_values(second)
    # byte for byte: the document stamps are the result's generated_at and the zip entries
    # are dated 1980-01-01 (xlsxwriter in memory), not the clock
    assert first.read_bytes() == second.read_bytes()
    check_snapshot("result_full.xlsx.json",
                   json.dumps(values, indent=1, ensure_ascii=False, default=str) + "\n")
    assert list(values) == ["About", "Scorecard", "Inputs", "Breakdown", "Assumptions",
                            "Evidence", "Sources", "Sizing", "Break-even", "P(frontier)",
                            "Pairwise", "Sovereignty rubric", "Gates"]
    # the rubric and gates sheets hold the result's rows: 7 candidates x 8 objectives, and
    # the example's 5 own sites' scope rows (4 EED, 1 EnEfG) with their outcome
    assert len(values["Sovereignty rubric"]) == 1 + 7 * 8
    assert [r[4] for r in values["Gates"][1:]] == ["needs_data"] * 5


def test_xlsx_numbers_are_numbers_and_headers_carry_units(full: dict[str, Any],
                                                          tmp_path: Path) -> None:
    path = tmp_path / "s.xlsx"
    write_xlsx(typed(full), path)
    sheet = read_values(path, cached=True)["Scorecard"]
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
    write_xlsx(typed(without_optional(full)), path)
    values = read_values(path)
    for sheet in ("Sizing", "Break-even", "P(frontier)", "Pairwise"):
        assert values[sheet] == [[f"{sheet}: not computed for this proposal"]]


def test_csv_and_parquet_hold_the_scorecard_table(full: dict[str, Any], tmp_path: Path) -> None:
    csv, parquet = tmp_path / "s.csv", tmp_path / "s.parquet"
    write_csv(typed(full), csv)
    write_parquet(typed(full), parquet)
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
    pytest.importorskip("vl_convert", reason="charts need vl-convert-python (a project dependency)")

    written = write_outputs(typed(full), tmp_path / "out")
    assert [p.name for p in written] == ["scorecard.html", "scorecard.xlsx", "scorecard.csv",
                                         "scorecard.parquet"]
    assert all(p.stat().st_size > 0 for p in written)


def test_write_outputs_builds_the_frames_once(full: dict[str, Any], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file is written from one set of the result's frames (reports/frames.py
    `Frames`): each frame is built once per run, not once per renderer."""
    import reports.frames

    built: list[str] = []

    def counting(name: str) -> Any:
        build = getattr(reports.frames, name)

        def counted(result: Any) -> pl.DataFrame:
            built.append(name)
            return build(result)
        return counted

    for name in ("scorecard_frame", "assumptions_frame", "sizing_frame", "sources_frame"):
        monkeypatch.setattr(reports.frames, name, counting(name))
    write_outputs(typed(full), tmp_path / "out")
    assert sorted(built) == ["assumptions_frame", "scorecard_frame", "sizing_frame",
                             "sources_frame"]


def test_csv_and_parquet_stack_across_months(full: dict[str, Any], tmp_path: Path) -> None:
    """Two months of the same proposal, written into month folders, read back as one table
    by polars and by DuckDB: the run columns tell the rows apart."""
    october, november = dict(full), dict(full)
    october["proposal_sha256"] = november["proposal_sha256"] = "ab" * 32
    november["vintage"] = "2026-11"
    for result in (october, november):
        folder = tmp_path / result["vintage"]
        folder.mkdir()
        write_parquet(typed(result), folder / "scorecard.parquet")
        write_csv(typed(result), folder / "scorecard.csv")
    n = len(full["candidates"])
    stacked = pl.read_parquet(tmp_path / "*" / "scorecard.parquet")
    assert stacked.columns[:4] == ["vintage", "proposal", "proposal_sha256", "id"]
    assert stacked.height == 2 * n
    assert stacked.group_by("vintage").len().sort("vintage").rows() == [
        ("2026-10", n), ("2026-11", n)]
    assert stacked["proposal"].unique().to_list() == [full["proposal"]]
    assert stacked["proposal_sha256"].unique().to_list() == ["ab" * 32]
    rows = duckdb.sql(f"SELECT vintage, count(*) FROM read_parquet('{tmp_path}/*/scorecard"
                      ".parquet') GROUP BY vintage ORDER BY vintage").fetchall()
    assert rows == [("2026-10", n), ("2026-11", n)]
    csv = pl.read_csv(tmp_path / "*" / "scorecard.csv")
    assert csv.height == 2 * n and csv.columns == stacked.columns


def test_parquet_fields_carry_their_units(full: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "s.parquet"
    write_parquet(typed(full), path)
    schema = pq.read_schema(path)

    def unit(name: str) -> bytes | None:
        return (schema.field(name).metadata or {}).get(b"unit")

    # declared units (schemas/outputs.toml); a range column has its metric's
    assert unit("cpm_eur_per_mtok") == b"EUR/Mtok"
    assert unit("cpm_eur_per_mtok_p95") == b"EUR/Mtok"
    assert unit("energy_j_per_token") == b"J/token"
    assert unit("carbon_gco2e_per_mtok") == b"gCO2e/Mtok"
    assert unit("tokens_per_s") == b"tokens/s"
    assert unit("p_frontier") == b"probability"
    assert unit("gpu_count") == b"count"
    # names, flags and ranks have none
    assert unit("id") is None and unit("vintage") is None and unit("eligible") is None
    numeric = [f.name for f in schema if str(f.type) in ("double", "int64")]
    assert [n for n in numeric if unit(n) is None] == ["pareto_rank"]


def test_a_result_without_its_proposal_sha256_writes_null(full: dict[str, Any],
                                                          tmp_path: Path) -> None:
    full.pop("proposal_sha256", None)
    write_parquet(typed(full), tmp_path / "s.parquet")
    frame = pl.read_parquet(tmp_path / "s.parquet")
    assert frame["proposal_sha256"].null_count() == frame.height
    assert frame["vintage"].to_list() == [full["vintage"]] * frame.height
