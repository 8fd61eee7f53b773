"""The jobs of `scorecard run`, `scorecard explain` and `scorecard diff`: open the proposal and
the store (`pipeline.workspace`), compute, store, render.

Exit codes (DESIGN section 9): 0 success, 1 invalid input (a message names the file, key or
line), 2 no usable market data.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline import store
from pipeline.engine.diff import DiffError, diff
from pipeline.engine.explain import explain as chain_of
from pipeline.engine.explain import render
from pipeline.engine.resolve import resolve
from pipeline.engine.scorecard import compute, to_contract
from pipeline.workspace import UserError, code_version, dumps, input_errors, opened
from reports.outputs import write_outputs
from reports.pdf import ChromiumFailed, ChromiumMissing
from reports.summary import print_summary
from schemas.fields import VINTAGE_PATTERN


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def execute(path: Path | None, *, vintage: str | None, out: Path | None, db: Path | None,
            json_out: bool, pdf: bool = False, now: datetime | None = None) -> int:
    try:
        with opened(path, vintage, db) as o:
            with input_errors():
                card = compute(o.proposal, o.name, o.market)
            generated_at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
            result = to_contract(card, generated_at, code_version())
            document = dumps(result)
            store.save_scorecard(o.con, result, o.text, document)
            last = None if json_out else store.previous_vintage(o.con, o.market.vintage,
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


def compare(vintage_a: str, vintage_b: str, path: Path | None, *, db: Path | None,
            recompute: bool = False, now: datetime | None = None) -> dict[str, Any]:
    """The diff document of `scorecard diff`. The proposal, the store and bad inputs are met
    as `scorecard run` meets them: the bundled reference data is loaded, a bad vintage,
    proposal or evidence file is a UserError with code 1, a diff that cannot be made code 2."""
    for v in (vintage_a, vintage_b):
        if not re.match(VINTAGE_PATTERN, v):
            raise UserError(1, f"vintage {v!r} is not YYYY-MM")
    try:
        with opened(path, vintage_b, db) as o, input_errors():
            return diff(o.con, vintage_a, vintage_b, o.proposal, o.name,
                        generated_at=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
                        code_version=code_version(), use_stored=not recompute,
                        market_b=o.market)
    except DiffError as err:
        raise UserError(2, str(err)) from None
