"""`scorecard run` and `scorecard explain`: load the proposal and reference data, compute,
store, render.

Exit codes (DESIGN section 9): 0 success, 1 invalid input (a message names the file, key or
line), 2 no usable market data.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import duckdb

from pipeline.engine import proposal as proposal_file
from pipeline import store
from pipeline.engine.market import latest_vintage
from pipeline.ingest.bundled import load_bundled
from pipeline.engine.resolve import Market
from schemas.table import ValidationFailed
from sources.errors import ParseError

EXAMPLE = "example_proposal.toml"


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


def proposal_text(path: Path | None) -> tuple[str, str]:
    if path is None:
        return (resources.files("pipeline").joinpath(EXAMPLE).read_text(encoding="utf-8"),
                f"(bundled example {EXAMPLE})")
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as err:
        raise UserError(1, f"{path}: cannot read: {err.strerror}") from None


@contextmanager
def opened(path: Path | None, vintage: str | None, db: Path | None) -> Iterator[Opened]:
    """The parsed proposal, the store (bundled reference data loaded) and its market."""
    text, name = proposal_text(path)
    try:
        proposal = proposal_file.parse(text, name)
    except proposal_file.ProposalError as err:
        raise UserError(1, str(err)) from None
    con = store.connect(store.db_path(db))
    try:
        try:
            load_bundled(con)
        except (ParseError, ValidationFailed) as err:
            raise UserError(1, f"bundled reference data is invalid, nothing was loaded:\n"
                               f"{err}") from None
        vintage = vintage or latest_vintage(con)
        if vintage is None:
            raise UserError(2, "no market data in the store; run `scorecard ingest` first")
        yield Opened(proposal, name, text, con,
                     Market.read(con, vintage, proposal.workload))
    finally:
        con.close()


@contextmanager
def input_errors() -> Iterator[None]:
    """Bad proposals and bad evidence files are the user's to fix: exit 1, file named."""
    from pipeline.evidence.energy import EnergyError

    try:
        yield
    except (proposal_file.ProposalError, ParseError, ValidationFailed, EnergyError,
            FileNotFoundError) as err:
        raise UserError(1, str(err)) from None


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def execute(path: Path | None, *, vintage: str | None, out: Path | None, db: Path | None,
            json_out: bool, pdf: bool = False, now: datetime | None = None) -> int:
    from pipeline.engine.diff import diff, previous_vintage
    from pipeline.engine.scorecard import compute, to_contract

    try:
        with opened(path, vintage, db) as o:
            with input_errors():
                card = compute(o.proposal, o.name, o.market)
            generated_at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
            result = to_contract(card, generated_at, code_version())
            document = dumps(result)
            _store_scorecard(o.con, result, o.text, document)
            last = None if json_out else previous_vintage(o.con, o.market.vintage,
                                                          result["proposal"])
            change = None if last is None else diff(
                o.con, last, o.market.vintage, o.proposal, o.name, generated_at=generated_at,
                code_version=code_version(), market_b=o.market)
    except UserError as err:
        _error(str(err))
        return err.code

    if json_out:
        sys.stdout.write(document)
        return 0
    from reports.outputs import write_outputs
    from reports.pdf import ChromiumFailed, ChromiumMissing
    from reports.summary import print_summary

    folder = out or Path("scorecard-out") / result["vintage"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scorecard.json").write_text(document, encoding="utf-8")
    print_summary(result)
    try:
        written = write_outputs(result, folder, pdf=pdf, diff=change)
    except (ChromiumMissing, ChromiumFailed) as err:
        _error(f"{err}\n(the other files were written to {folder})")
        return 1
    print(f"\nwrote {folder / 'scorecard.json'}, " + ", ".join(p.name for p in written))
    return 0


def explain(candidate: str, metric: str, path: Path | None, *, vintage: str | None,
            db: Path | None, json_out: bool) -> int:
    from pipeline.engine.explain import explain as chain_of
    from pipeline.engine.explain import render
    from pipeline.engine.resolve import resolve

    try:
        with opened(path, vintage, db) as o:
            with input_errors():
                resolved = resolve(o.proposal, o.name, o.market)
            try:
                chain = chain_of(resolved, candidate, metric)
            except KeyError as err:
                raise UserError(1, str(err.args[0])) from None
    except UserError as err:
        _error(str(err))
        return err.code
    sys.stdout.write(dumps(chain) if json_out else render(chain) + "\n")
    return 0


def dumps(result: dict[str, Any]) -> str:
    """Deterministic JSON: sorted keys, fixed indentation, a trailing newline."""
    return json.dumps(result, sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n"


def _store_scorecard(con: duckdb.DuckDBPyConnection, result: dict[str, Any],
                     proposal_text: str, document: str) -> None:
    digest = hashlib.sha256(proposal_text.encode()).hexdigest()
    con.execute(
        "INSERT OR REPLACE INTO out__scorecard VALUES (?, ?, ?, ?, ?)",
        [result["vintage"], result["proposal"], digest,
         datetime.fromisoformat(result["generated_at"]), document],
    )
