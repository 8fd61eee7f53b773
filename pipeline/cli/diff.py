"""`scorecard diff VINTAGE_A VINTAGE_B [PROPOSAL]`: what changed between two vintages and why.

Registered by pipeline/cli.py (`app.command("diff")(diff)`); the engine is imported inside the
command so `scorecard --help` stays fast.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated

import typer

_VINTAGE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def diff(
    vintage_a: Annotated[str, typer.Argument(help="The earlier vintage, YYYY-MM.")],
    vintage_b: Annotated[str, typer.Argument(help="The later vintage, YYYY-MM.")],
    proposal: Annotated[Path | None, typer.Argument(
        help="Proposal TOML file. Omit it for the bundled example.", show_default=False)] = None,
    db: Annotated[Path | None, typer.Option(
        "--db", help="DuckDB file (default: $SCORECARD_DB or ./scorecard.duckdb).",
        show_default=False)] = None,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print only the diff as JSON on stdout.")] = False,
    html: Annotated[Path | None, typer.Option(
        "--html", help="Also write the diff as an HTML page to this file.",
        show_default=False)] = None,
    recompute: Annotated[bool, typer.Option(
        "--recompute", help="Compare with vintage A recomputed today, not with the scorecard "
                            "stored for A (market changes only).")] = False,
) -> None:
    """Per candidate, the change in CPM, electricity cost and carbon between two vintages,
    split between GPU price, FX, electricity price, grid intensity, evidence and
    method/assumptions; rank and frontier changes."""
    from datetime import UTC, datetime

    from pipeline.engine.diff import DiffError
    from pipeline.engine.diff import diff as make_diff
    from pipeline.run import UserError, code_version, dumps, input_errors, opened

    for v in (vintage_a, vintage_b):
        if not _VINTAGE.match(v):
            typer.echo(f"error: vintage {v!r} is not YYYY-MM", err=True)
            raise typer.Exit(1)
    # The proposal, the store and bad inputs are met as `scorecard run` meets them: the
    # bundled reference data is loaded, a bad proposal or evidence file exits 1, file named.
    try:
        with opened(proposal, vintage_b, db) as o, input_errors():
            document = make_diff(o.con, vintage_a, vintage_b, o.proposal, o.name,
                                 generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
                                 code_version=code_version(), use_stored=not recompute,
                                 market_b=o.market)
    except UserError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(err.code) from None
    except DiffError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    if json_out:
        sys.stdout.write(dumps(document))
        return
    from reports.diff_report import print_diff, write_diff_html

    print_diff(document)
    if html is not None:
        write_diff_html(document, html)
        typer.echo(f"wrote {html}")
