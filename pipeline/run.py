"""`scorecard run`: load the proposal and reference data, compute, store, render.

Exit codes (DESIGN section 9): 0 success, 1 invalid input (a message names the file, key or
line), 2 no usable market data.
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from pipeline import proposal as proposal_file
from pipeline import store
from pipeline.market import latest_vintage
from pipeline.reference import load_bundled
from pipeline.resolve import Market
from pipeline.scorecard import compute, to_contract
from schemas.table import ValidationFailed
from sources.errors import ParseError

EXAMPLE = "example_proposal.toml"


def code_version() -> str:
    try:
        return metadata.version("inference-scorecard")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "unknown"


def _proposal_text(path: Path | None) -> tuple[str, str]:
    if path is None:
        return (resources.files("pipeline").joinpath(EXAMPLE).read_text(encoding="utf-8"),
                f"(bundled example {EXAMPLE})")
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as err:
        raise proposal_file.ProposalError(path, "(file)", f"cannot read: {err.strerror}"
                                          ) from None


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def execute(path: Path | None, *, vintage: str | None, out: Path | None, db: Path | None,
            json_out: bool, now: datetime | None = None) -> int:
    try:
        text, name = _proposal_text(path)
        proposal = proposal_file.parse(text, name)
    except proposal_file.ProposalError as err:
        _error(str(err))
        return 1

    con = store.connect(store.db_path(db))
    try:
        try:
            load_bundled(con)
        except (ParseError, ValidationFailed) as err:
            _error(f"bundled reference data is invalid, nothing was loaded:\n{err}")
            return 1
        vintage = vintage or latest_vintage(con)
        if vintage is None:
            _error("no market data in the store; run `scorecard ingest` first")
            return 2
        try:
            card = compute(proposal, name, Market.read(con, vintage))
        except proposal_file.ProposalError as err:
            _error(str(err))
            return 1
        generated_at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
        result = to_contract(card, generated_at, code_version())
        document = dumps(result)
        _store_scorecard(con, result, text, document)
    finally:
        con.close()

    if json_out:
        sys.stdout.write(document)
        return 0
    from reports.html import write_html
    from reports.summary import print_summary

    folder = out or Path("scorecard-out") / vintage
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scorecard.json").write_text(document, encoding="utf-8")
    write_html(result, folder / "scorecard.html")
    print_summary(result)
    print(f"\nwrote {folder / 'scorecard.html'} and {folder / 'scorecard.json'}")
    return 0


def dumps(result: dict[str, Any]) -> str:
    """Deterministic JSON: sorted keys, fixed indentation, a trailing newline."""
    return json.dumps(result, sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n"


def _store_scorecard(con: Any, result: dict[str, Any], proposal_text: str,
                     document: str) -> None:
    digest = hashlib.sha256(proposal_text.encode()).hexdigest()
    con.execute(
        "INSERT OR REPLACE INTO out__scorecard VALUES (?, ?, ?, ?, ?)",
        [result["vintage"], result["proposal"], digest,
         datetime.fromisoformat(result["generated_at"]), document],
    )
