"""The reader of the bundled reference CSVs (sources/reference/): a file's bytes as shipped
with the package, and its rows typed column by column. Shared by sources.bundled (the tables
loaded into the store) and sources.regulation (the gate tables' own checks)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from importlib import resources

import polars as pl

from sources.errors import ParseError

SOURCE = "bundled"


@dataclass(frozen=True)
class RawFile:
    name: str
    content: bytes

    @property
    def url(self) -> str:
        return f"package://sources/reference/{self.name}"


def read(name: str) -> RawFile:
    return RawFile(name, resources.files("sources").joinpath("reference", name).read_bytes())


def read_typed_csv(data: bytes, path: str, dtypes: dict[str, pl.DataType]) -> pl.DataFrame:
    """Read a CSV as text, then cast each declared column; a value that does not cast is a
    ParseError naming the file, the line (1 = header) and the column."""
    try:
        text = pl.read_csv(io.BytesIO(data), infer_schema=False)
    except pl.exceptions.PolarsError as err:
        raise ParseError(SOURCE, path, "(file)", f"not a readable CSV: {err}") from None
    missing = [c for c in dtypes if c not in text.columns]
    if missing:
        raise ParseError(SOURCE, path, "header", f"missing column(s) {missing}; "
                         f"found {text.columns}")
    unknown = [c for c in text.columns if c not in dtypes]
    if unknown:
        raise ParseError(SOURCE, path, "header", f"unknown column(s) {unknown}")
    casts = {name: _cast(pl.col(name).str.strip_chars(), dtype).alias(name)
             for name, dtype in dtypes.items()}
    typed = text.select(casts.values())
    for name in dtypes:
        bad = text.with_row_index("line", offset=2).filter(
            pl.col(name).str.strip_chars().ne("") & typed[name].is_null())
        if bad.height:
            line, value = bad.row(0, named=True)["line"], bad.row(0, named=True)[name]
            raise ParseError(SOURCE, path, f"line {line}, column {name!r}",
                             f"{value!r} is not a {dtypes[name]}")
    return typed


def _cast(text: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    text = pl.when(text.ne("")).then(text)
    if dtype == pl.Boolean():
        return text.str.to_lowercase().replace_strict(
            {"true": True, "false": False}, default=None, return_dtype=pl.Boolean())
    if dtype == pl.Date():
        return text.str.to_date("%Y-%m-%d", strict=False)
    return text.cast(dtype, strict=False)
