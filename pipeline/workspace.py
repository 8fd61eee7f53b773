"""What every command opens: the proposal (a file or the bundled example), the store with the
bundled reference data loaded, the market of a vintage; and how a command reports what the
user can fix (`UserError`, exit codes of DESIGN section 9: 1 invalid input, 2 no usable
market data), its version and its JSON."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import duckdb

from pipeline import store
from pipeline.engine.resolved import Market
from pipeline.evidence.power.energy import EnergyError
from pipeline.ingest.bundled import is_loaded, load_bundled
from pipeline.inputs import read_market
from schemas import proposal as proposal_file
from schemas.table import ValidationFailed
from sources.errors import ParseError

EXAMPLE = "example_proposal.toml"


#: The most candidates one proposal may hold: the size whose whole `scorecard run` was
#: measured (benchmarks/candidates.py, docs/performance.md). Above pareto.SHORTLIST_ABOVE
#: candidates, only the shortlist (pipeline/engine/ranking/pareto.py: the frontier and its
#: neighbourhood, at most SHORTLIST_MAX) goes on to the Monte Carlo and the reports' tables,
#: but every candidate is resolved, evaluated and ranked, and ranking compares the pairs.
MAX_CANDIDATES = 10_000


def too_many(name: str, count: int) -> str:
    return (f"{name}: candidates: {count:,} candidates; at most {MAX_CANDIDATES:,} are "
            "compared in one proposal (each is resolved, evaluated and ranked against the "
            "others; see docs/performance.md): split the proposal")


class UserError(Exception):
    """Something the user can fix; `code` is the exit code."""

    def __init__(self, code: int, message: str):
        self.code = code
        super().__init__(message)


def code_version() -> str:
    try:
        return metadata.version("inference-scorecard")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "unknown"


@dataclass(frozen=True)
class Opened:
    proposal: proposal_file.Proposal
    name: str  # the file, or "(bundled example ...)"
    text: str
    con: duckdb.DuckDBPyConnection
    market: Market
    db: Path  # the store file opened
    existed: bool  # whether that file was there before it was opened
    #: the store whose evidence cache the readers use (`pipeline.evidence.cache`): benchmark
    #: files `evidence add` already parsed are read back from it, and the files parsed are
    #: added to it, so a read-only store gives None (they are parsed afresh)
    cache: duckdb.DuckDBPyConnection | None


#: The largest proposal file read: 10,000 candidates take about 3 MB, and 100,000 (refused
#: for their count, with a message that says so) about 28 MB.
MAX_PROPOSAL_BYTES = 64 << 20


def proposal_text(path: Path | None) -> tuple[str, str]:
    """The proposal's text and name; a path that is not a regular file (a device, a pipe, a
    folder) or is larger than MAX_PROPOSAL_BYTES is refused before it is read, so
    `scorecard run /dev/zero` cannot grow without bound."""
    if path is None:
        return (resources.files("pipeline").joinpath(EXAMPLE).read_text(encoding="utf-8"),
                f"(bundled example {EXAMPLE})")
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise UserError(1, f"{path}: not a regular file (a proposal is a TOML file)")
        with path.open("rb") as f:
            data = f.read(MAX_PROPOSAL_BYTES + 1)
    except OSError as err:
        raise UserError(1, f"{path}: cannot read: {err.strerror}") from None
    if len(data) > MAX_PROPOSAL_BYTES:
        raise UserError(1, f"{path}: larger than {MAX_PROPOSAL_BYTES:,} bytes: not a proposal")
    try:  # a byte-order mark some editors save is not part of the TOML: dropped
        return data.decode("utf-8-sig"), str(path)
    except UnicodeDecodeError as err:
        raise UserError(1, f"{path}: not UTF-8 text (byte {err.start})") from None


def store_file(path: Path | None, proposal: proposal_file.Proposal,
               db: Path | None) -> Path:
    """The store a command opens: --db, else the proposal's `[store] path` (relative to the
    proposal's folder), else $SCORECARD_DB, else ./scorecard.duckdb (`store.db_path`)."""
    if db is None and path is not None and proposal.store is not None:
        db = path.parent / Path(proposal.store.path).expanduser()
    return store.db_path(db)


@contextmanager
def opened(path: Path | None, vintage: str | None, db: Path | None, *,
           read_only: bool = False) -> Iterator[Opened]:
    """The parsed proposal, the store (`store_file`: bundled reference data loaded) and its
    market.

    `read_only` (a command that only reads, e.g. `explain`): open an existing store that
    already holds the packaged bundled data read-only, so several readers share it; a new
    store, or one whose bundled data is missing or older, is opened read-write to load it."""
    text, name = proposal_text(path)
    if text.count("[[candidates]]") > MAX_CANDIDATES:  # refused before a slow parse
        raise UserError(1, too_many(name, text.count("[[candidates]]")))
    try:
        proposal = proposal_file.parse(text, name)
    except proposal_file.ProposalError as err:
        raise UserError(1, str(err)) from None
    except RecursionError:  # TOML nested a thousand deep: the parser's stack runs out
        raise UserError(1, f"{name}: nested too deeply to read (tables or arrays within "
                           "each other hundreds of levels deep)") from None
    if len(proposal.candidates) > MAX_CANDIDATES:
        raise UserError(1, too_many(name, len(proposal.candidates)))
    db_file = store_file(path, proposal, db)
    existed = db_file.exists()
    con = _connect(db_file, read_only)
    try:
        try:
            if not con_read_only(con) and not is_loaded(con):
                load_bundled(con)
        except (ParseError, ValidationFailed) as err:
            raise UserError(1, f"bundled reference data is invalid, nothing was loaded:\n"
                               f"{err}") from None
        vintage = vintage or store.latest_vintage(con)
        if vintage is None:
            raise UserError(2, "no market data in the store; run `scorecard ingest` first")
        yield Opened(proposal, name, text, con, read_market(con, vintage, proposal.workload),
                     db_file, existed, None if con_read_only(con) else con)
    finally:
        con.close()


def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    if read_only and path.exists():
        con = store.connect(path, read_only=True)
        if is_loaded(con):
            return con
        con.close()
    return store.connect(path)


def con_read_only(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `con` was opened read-only."""
    rows = con.execute("SELECT readonly FROM duckdb_databases() "
                       "WHERE database_name = current_database()").fetchall()
    return bool(rows and rows[0][0])


@contextmanager
def input_errors() -> Iterator[None]:
    """Bad proposals and bad evidence files are the user's to fix: exit 1, file named."""
    try:
        yield
    except (proposal_file.ProposalError, ParseError, ValidationFailed, EnergyError,
            FileNotFoundError) as err:
        raise UserError(1, str(err)) from None


#: Documents longer than this (in characters, written compact) are written compact: indenting
#: runs the standard library's pure-Python encoder, several times slower than its C one, and
#: adds a third to the size, for a document nobody reads by eye.
INDENT_MAX_CHARS = 1 << 20


def dumps(result: dict[str, Any]) -> str:
    """Deterministic, strict JSON: sorted keys, a trailing newline, indented by two spaces up to
    `INDENT_MAX_CHARS`, compact above; a NaN or an infinity is a bug of ours (a figure that
    cannot be computed is null with its reason), so it raises rather than writing what strict
    parsers reject."""
    compact = json.dumps(result, sort_keys=True, ensure_ascii=False, default=str,
                         allow_nan=False, separators=(",", ":"))
    if len(compact) > INDENT_MAX_CHARS:
        return compact + "\n"
    return json.dumps(result, sort_keys=True, indent=2, ensure_ascii=False, default=str,
                      allow_nan=False) + "\n"
