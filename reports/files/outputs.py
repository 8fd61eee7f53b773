"""Every file `scorecard run` writes besides the JSON, in one call, so the run (and a CI job)
lists one place: HTML, XLSX, CSV, Parquet and, on request, PDF. The CSV and Parquet files are
the scorecard table: one row per candidate, columns named with their unit
(`cpm_eur_per_mtok`, ...) as in the store, numbers as numbers, nulls as empty/null; strings
lose bidi and control characters, and in the CSV one that starts like a formula is written
as text with a leading apostrophe (`reports.cells`).

Both are stackable: every row starts with the run it is from (`vintage`, `proposal`,
`proposal_sha256`, from the result), so months and proposals concatenate into one table
(`pl.read_parquet("*/scorecard.parquet")`, DuckDB `read_parquet('*/scorecard.parquet')`).
The Parquet file carries each column's unit as field metadata (`{"unit": "EUR/Mtok"}`, from
schemas/outputs.toml; a range column `cpm_eur_per_mtok_p5` has its metric's unit).

The PDF needs headless Chromium: without it `write_outputs(..., pdf=True)` writes the rest,
then raises `reports.html.pdf.ChromiumMissing`, whose message says how to install it.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from reports.cells import plain, plain_all, spreadsheet_text
from reports.files.xlsx import unit_of, write_xlsx
from reports.frames import Frames, frames_of
from reports.html.pdf import write_pdf
from reports.html.report import write_html
from schemas.result import Diff, Result

STEM = "scorecard"
#: the vintage diff docs/monthly.md writes beside the report (`scorecard diff --html`, its text
#: and `--json`): a rerun of the month's `run` replaces it with the rest, as the rerun's own
#: `diff` commands write it again (a diff kept from before would describe the data it replaced)
DIFF_FILES = frozenset(f"diff.{suffix}" for suffix in ("html", "txt", "json"))
#: every file a report folder may hold (`write_outputs`' and the caller's scorecard.json, and
#: the diff): the folder is replaced whole, so pipeline.run refuses one holding anything else
REPORT_FILES = frozenset(f"{STEM}.{suffix}" for suffix in (
    "json", "html", "xlsx", "csv", "parquet", "pdf")) | DIFF_FILES


#: the columns that say which run a row is from, first in every CSV and Parquet row
RUN_COLUMNS = ("vintage", "proposal", "proposal_sha256")


def stackable_frame(result: Result, frames: Frames) -> pl.DataFrame:
    """The scorecard table, each row led by its run's vintage, proposal and proposal sha256
    (null when the result does not carry it)."""
    frame = frames.scorecard
    run = [pl.lit(value, dtype=pl.String()).alias(key) for key, value in zip(
        RUN_COLUMNS, (result.vintage, result.proposal, result.proposal_sha256), strict=True)]
    return frame.select(*run, pl.all())


def write_csv(result: Result, path: Path, frames: Frames | None = None) -> None:
    """The scorecard table; string cells as spreadsheet text (never a formula). `frames`:
    the result's, when the caller has built them (`write_outputs` does)."""
    frame = stackable_frame(result, frames_of(result) if frames is None else frames)
    strings = [c for c, dtype in frame.schema.items() if dtype == pl.String()]
    frame.with_columns(pl.col(strings).map_elements(spreadsheet_text, return_dtype=pl.String())
                       ).write_csv(path, null_value="")


def write_parquet(result: Result, path: Path, frames: Frames | None = None) -> None:
    """The scorecard table, each field's unit in its metadata; strings without bidi or
    control characters. `frames`: as for `write_csv`."""
    frame = stackable_frame(result, frames_of(result) if frames is None else frames)
    strings = [c for c, dtype in frame.schema.items() if dtype == pl.String()]
    table = frame.with_columns(pl.col(strings).map_elements(plain, return_dtype=pl.String())
                               ).to_arrow()
    fields = [f.with_metadata({"unit": u}) if (u := unit_of(f.name)) else f
              for f in table.schema]
    pq.write_table(pa.Table.from_arrays(table.columns, schema=pa.schema(fields)), path,
                   write_statistics=False)


def write_outputs(result: Result, folder: Path, *, pdf: bool = False,
                  diff: Diff | None = None, plain_result: bool = False
                  ) -> list[Path]:
    """Write the report files into `folder`; returns their paths in the order written. Every
    string of the result and the diff loses its bidi and control characters first, so no
    report can reorder or hide text; `plain_result` says the caller has made the result's
    plain already (`pipeline.run` does, from its JSON text: `reports.cells.plain_json`), so
    the whole result is not walked a second time. The result's frames are built once, here,
    for every file."""
    result = result if plain_result else Result.model_validate(plain_all(result.document()))
    diff = None if diff is None else Diff.model_validate(plain_all(diff.document()))
    frames = frames_of(result)
    folder.mkdir(parents=True, exist_ok=True)
    html = folder / f"{STEM}.html"
    write_html(result, html, diff, frames=frames)
    written = [html]
    xlsx = folder / f"{STEM}.xlsx"
    write_xlsx(result, xlsx, frames)
    written.append(xlsx)
    for suffix, writer in ((".csv", write_csv), (".parquet", write_parquet)):
        path = folder / f"{STEM}{suffix}"
        writer(result, path, frames)
        written.append(path)
    if pdf:
        target = folder / f"{STEM}.pdf"
        write_pdf(html, target)
        written.append(target)
    return written
