"""`scorecard diff VINTAGE_A VINTAGE_B [PROPOSAL]`: what changed between two vintages and why.

Registered by pipeline/cli/__init__.py (`app.command("diff")(diff)`); the job
(`pipeline.run.compare`) is imported inside the command so `scorecard --help` stays fast.
"""

import sys
from pathlib import Path
from typing import Annotated

import typer


def diff(
    vintage_a: Annotated[str, typer.Argument(help="The earlier vintage, YYYY-MM.")],
    vintage_b: Annotated[str, typer.Argument(help="The later vintage, YYYY-MM.")],
    proposal: Annotated[Path | None, typer.Argument(
        help="Proposal TOML file. Omit it for the bundled example.", show_default=False)] = None,
    db: Annotated[Path | None, typer.Option(
        "--db", help="DuckDB file (default: the proposal's [store] path, else $SCORECARD_DB, "
        "else ./scorecard.duckdb).",
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
    """The recommendation in each vintage (the same, or A's -> B's) and, per candidate, the
    change in CPM, electricity cost and carbon between them, split between GPU price, FX,
    electricity price, grid intensity, evidence and method/assumptions; rank and frontier
    changes."""
    from pipeline.run import compare
    from pipeline.workspace import UserError, dumps

    refused = None if html is None else _unwritable(html)
    if refused is not None:
        typer.echo(f"error: --html {html}: {refused}", err=True)
        raise typer.Exit(1)
    try:
        document = compare(vintage_a, vintage_b, proposal, db=db, recompute=recompute)
    except UserError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(err.code) from None
    from pipeline.stdout import to_stdout

    if json_out:
        to_stdout(lambda: sys.stdout.write(dumps(document.document())))
        return
    from reports.diff_text import print_diff
    from reports.html.diff_report import write_diff_html

    to_stdout(lambda: print_diff(document))  # a reader that leaves early: --html still written
    if html is not None:
        try:
            write_diff_html(document, html)
        except OSError as err:  # the folder refuses the write (permissions, a full disk)
            typer.echo(f"error: --html {html}: cannot write it: {err.strerror or err}",
                       err=True)
            raise typer.Exit(1) from None
        # on stderr: stdout is the diff itself (`scorecard diff ... > diff.txt`)
        typer.echo(f"wrote {html}", err=True)


def _unwritable(html: Path) -> str | None:
    """Why the --html file cannot be written, said before the diff is computed."""
    if html.is_dir():
        return f"is a folder; give the file to write, e.g. {html / 'diff.html'}"
    if not html.parent.is_dir():
        return f"its folder {html.parent} does not exist"
    return None
