"""The `scorecard` command line (DESIGN section 9).

Imports of polars, duckdb, great-tables and the engine happen inside the commands, so
`scorecard --help` answers without loading them. The CLI's modules do not postpone their
annotations (no `from __future__ import annotations`): typer reads every command's annotations
on each call, and strings would be evaluated again each time (docs/performance.md).
"""

import gc
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer


class _Scorecard(typer.Typer):
    """The app, with the last word on errors that escape a command: the store in use by
    another process exits 1 on one line; a Ctrl-C exits 130 saying "interrupted" (typer's
    code for a KeyboardInterrupt, also when DuckDB reports it as its error), a SIGTERM 143
    saying "terminated" (it is raised as a KeyboardInterrupt, so whatever a Ctrl-C undoes,
    it undoes: a load rolled back, a half-written report folder removed); an unexpected
    exception exits 3 with a one-line summary, the traceback only under `scorecard --debug`
    (or SCORECARD_DEBUG=1)."""

    debug = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # typer's own start (it imports pydantic to read the options) without the collector
        # either: `_options` turns it back on before any command (`frozen_imports` then
        # turns it off for its own imports)
        gc.disable()
        signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            return super().__call__(*args, **kwargs)
        except SystemExit as done:
            if done.code == INTERRUPTED:  # typer's exit for a KeyboardInterrupt, silent
                raise SystemExit(_cut_short()) from None
            raise
        except KeyboardInterrupt:  # a SIGTERM or Ctrl-C as the command was returning: said
            # and coded as any other (unhandled, Python would exit by SIGINT, -2)
            raise SystemExit(_cut_short()) from None
        except Exception as error:  # the last word: never a bare traceback
            raise SystemExit(last_word(error, self.debug)) from None
        finally:  # from here on a SIGTERM takes its default action: the work is done
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


#: The exit code of a command cut short by Ctrl-C (128 + SIGINT, typer's for a
#: KeyboardInterrupt).
INTERRUPTED = 130
#: The exit code of a command cut short by SIGTERM (128 + SIGTERM).
TERMINATED = 143
_SIGTERMS: list[int] = []  # the SIGTERMs this process received


def _on_sigterm(signum: int, frame: Any) -> None:
    _SIGTERMS.append(signum)
    raise KeyboardInterrupt


def _cut_short() -> int:
    """Say why the command stopped early (a SIGTERM, else a Ctrl-C) and return its code."""
    print("terminated" if _SIGTERMS else "interrupted", file=sys.stderr)
    return TERMINATED if _SIGTERMS else INTERRUPTED


#: What the operating system says when the disk or the folder refuses a write.
ENVIRONMENT_FAILURES = ("No space left on device", "Disk quota exceeded",
                        "Read-only file system", "Permission denied")


def last_word(error: Exception, debug: bool = False) -> int:
    """Say what `error` was on one line of stderr and return the exit code: 1 for a store
    that cannot be used (in use by another scorecard process, not a DuckDB file, a full disk
    or a folder that refuses writes),
    `INTERRUPTED` for a Ctrl-C that DuckDB reported as its error (`TERMINATED` for a
    SIGTERM), 3 for anything unexpected (a bug)."""
    import os
    import traceback

    import duckdb

    from pipeline.store import StoreError
    from pipeline.store.loads import interrupted
    from sources.text import one_line

    if interrupted(error):
        return _cut_short()
    if isinstance(error, StoreError):
        print(f"error: {one_line(str(error))}", file=sys.stderr)
        return 1
    if isinstance(error, duckdb.IOException) and "lock" in str(error).lower():
        print("error: store in use by another scorecard process: " + one_line(str(error)),
              file=sys.stderr)
        return 1
    if isinstance(error, duckdb.Error | OSError) and any(
            cause in str(error) for cause in ENVIRONMENT_FAILURES):
        # the machine's, not a bug: DuckDB's or the OS's text names the file and the cause
        print(f"error: cannot read or write: {one_line(str(error))}", file=sys.stderr)
        return 1
    if debug or os.environ.get("SCORECARD_DEBUG"):
        traceback.print_exception(error)
    print(f"scorecard: unexpected error (a bug; please report it): {type(error).__name__}: "
          f"{one_line(str(error))}; run `scorecard --debug ...` for the traceback",
          file=sys.stderr)
    return 3


app = _Scorecard(
    name="scorecard",
    help="Which LLM-inference deployment should we buy? Cost, energy, carbon and sovereignty "
         "per million tokens for each candidate, as a Pareto scorecard with its sources.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@contextmanager
def frozen_imports(module: str) -> Iterator[None]:
    """Import a command's stack (`module` and what it imports) without the cyclic garbage
    collector, then freeze it; nothing when `module` is already imported (a test process).

    polars, duckdb, numpy, pydantic and the engine leave some 120,000 tracked objects that
    live until the process exits: the collector's passes over them while they are imported
    find nothing to free, yet take a share of a warm `scorecard run` (docs/performance.md).
    After the imports `gc.freeze()` moves them out of its sight (and out of the last
    collection at exit), and collection resumes for the command's own work."""
    if module in sys.modules:
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def version_line() -> str:
    """`scorecard --version`: the package version and which nvidia-smi reader is in use."""
    from importlib import metadata, util

    try:
        number = metadata.version("inference-scorecard")
    except metadata.PackageNotFoundError:
        number = "unknown (source tree)"
    fast = util.find_spec("sources.power._nvidia_smi_scan") is not None
    reader = "C fast path" if fast else "polars (the C extension is not built)"
    return f"scorecard {number} (nvidia-smi reader: {reader})"


def _version(value: bool) -> None:
    if value:
        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _options(debug: Annotated[bool, typer.Option(
        "--debug", help="On an unexpected error, also print its traceback.")] = False,
        version: Annotated[bool, typer.Option(
            "--version", is_eager=True, callback=_version,
            help="Print the version and which nvidia-smi reader is in use, then exit.")
        ] = False) -> None:
    app.debug = debug
    gc.enable()  # off while typer started; a command's `frozen_imports` turns it off again


ProposalArg = Annotated[
    Path | None,
    typer.Argument(help="Proposal TOML file. Omit it to run the bundled example.",
                   show_default=False),
]
VintageOpt = Annotated[
    str | None,
    typer.Option("--vintage", help="Market-data month YYYY-MM (default: the latest loaded).",
                 show_default=False),
]
DbOpt = Annotated[
    Path | None,
    typer.Option("--db", help="DuckDB file (default: the proposal's [store] path, else "
                 "$SCORECARD_DB, else ./scorecard.duckdb).", show_default=False),
]


@app.command()
def run(
    proposal: ProposalArg = None,
    vintage: VintageOpt = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Output folder (default: ./scorecard-out/<proposal-slug>/<vintage>/), "
                      "replaced whole once every file is written: new or holding only a "
                      "report's files, else refused. A run written elsewhere is stored but "
                      "not published.",
        show_default=False)] = None,
    db: DbOpt = None,
    offline: Annotated[bool, typer.Option(
        "--offline", help="Accepted for scripts: `run` never fetches; it reads the store and "
                          "the bundled reference data. Use `scorecard ingest` for fresh "
                          "prices.")] = False,
    json_out: Annotated[bool, typer.Option(
        "--json", help="Print only the JSON result on stdout; write no files. The run is "
                       "stored but not published.")] = False,
    pdf: Annotated[bool, typer.Option(
        "--pdf", help="Also print scorecard.pdf with headless Chromium (apt-get install "
                      "chromium).")] = False,
    publish: Annotated[bool, typer.Option(
        "--publish", help="Make this run the published scorecard of its vintage and "
                          "proposal name (what next month's run and `diff` compare with), "
                          "even with --json, --out elsewhere or another proposal file.")
    ] = False,
) -> None:
    """Compute the scorecard of a proposal: HTML report, JSON, XLSX, CSV and Parquet."""
    with frozen_imports("pipeline.run"):
        from pipeline.run import execute

    raise typer.Exit(execute(proposal, vintage=vintage, out=out, db=db, json_out=json_out,
                             pdf=pdf, publish=publish))


#: the figure `explain` gives when no metric is named
DEFAULT_METRIC = "cpm_eur_per_mtok"


@app.command()
def explain(
    candidate: Annotated[str, typer.Argument(
        help="Candidate id from the proposal, a mix's too.")],
    metric: Annotated[str, typer.Argument(
        help="A policy objective (cpm, energy, carbon, electricity), sovereignty (the level, "
             "its reason and who serves the tokens), or any metric column, e.g. "
             "cost_eur_per_hour.")
    ] = DEFAULT_METRIC,
    proposal: ProposalArg = None,
    proposal_opt: Annotated[Path | None, typer.Option(
        "--proposal", help="The proposal, as before it was positional (kept for scripts).",
        hidden=True)] = None,
    vintage: VintageOpt = None,
    db: DbOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the chain as JSON.")] = False,
) -> None:
    """Show the scorecard's figure and how it is made: its inputs (value, unit, grade, source)
    and formula steps (under a plan, the first month's); a mix's split and each part's figure.
    The proposal is positional, as in `run` and `diff`: explain CANDIDATE METRIC PROPOSAL; a
    .toml file in the metric's place, with no proposal after it, is the proposal (the metric
    then cpm_eur_per_mtok)."""
    with frozen_imports("pipeline.run"):
        from pipeline.run import explain as run_explain

    # no metric's name ends in .toml: the metric was left out and this is the proposal
    if proposal is None and proposal_opt is None and metric.endswith(".toml"):
        proposal, metric = Path(metric), DEFAULT_METRIC
    if proposal is not None and proposal_opt is not None and proposal != proposal_opt:
        typer.echo("error: give the proposal once (positional, or the older --proposal)",
                   err=True)
        raise typer.Exit(1)
    raise typer.Exit(run_explain(candidate, metric, proposal or proposal_opt, vintage=vintage,
                                 db=db, json_out=json_out))


#: the JSON Schema `init` writes beside proposal.toml, named by its `#:schema` line
SCHEMA_FILE = "proposal.schema.json"
#: where `init` writes the example results: `results/`, or, when that folder already holds
#: files of its own, `example-results/` (never the example's sweep among the user's files)
EXAMPLE_FOLDERS = ("results", "example-results")


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Folder to write proposal.toml into.")] = Path(),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented proposal to start from, with its schema and example results.

    The proposal (proposal.toml) is the bundled example named for its folder, so that its runs
    publish apart from the example's; its JSON Schema (proposal.schema.json) serves editors
    that read a `#:schema` line (taplo, Even Better TOML); the example results folder
    (results/: a small vLLM concurrency sweep, synthetic) is there to try `scorecard evidence
    inspect` on before your own benchmark files. A results/ that holds other files is left
    alone and the example goes to example-results/, said so."""
    import json
    from importlib import resources

    from pipeline.engine.contract import schema

    def refuse(message: str) -> NoReturn:
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(1)

    target = directory / "proposal.toml"
    if directory.exists() and not directory.is_dir():
        refuse(f"{directory} is a file, not a folder: give a folder to write proposal.toml "
               "into")
    if target.exists() and not force:
        refuse(f"{target} exists; use --force to overwrite it.")
    # The example sweep is a closed loop as vLLM's benchmark runs it: max_concurrency
    # requests in flight, each slot taking the next request as one ends. Each request's
    # latency is its TTFT plus its inter-token gaps (ITLs), and each file's duration is the
    # sum of its latencies over the concurrency, every slot busy to the end (the 4-slot run's
    # 8 requests pair a 0.29 s with a 0.69 s one per slot: 0.98 s); its request and output
    # throughputs are completed and output tokens over that duration, so throughput x mean
    # latency = the concurrency, Little's law, as `evidence inspect` checks it.
    shipped = [f for f in resources.files("pipeline").joinpath("example_results").iterdir()
               if f.name.endswith(".json")]
    names = {f.name for f in shipped}
    results = next((directory / d for d in EXAMPLE_FOLDERS if not (directory / d).exists()
                    or ((directory / d).is_dir()
                        and {p.name for p in (directory / d).iterdir()} <= names)), None)
    if results is None:
        refuse(f"{directory / EXAMPLE_FOLDERS[0]} and {directory / EXAMPLE_FOLDERS[1]} are "
               "taken (files of their own, or not folders): the example results would mix "
               "with them; init another folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        example = resources.files("pipeline").joinpath("example_proposal.toml").read_text(
            "utf-8")
        target.write_text(f"#:schema ./{SCHEMA_FILE}\n{own_name(example, directory)}",
                          encoding="utf-8")
        (directory / SCHEMA_FILE).write_text(
            json.dumps(schema("proposal"), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        results.mkdir(exist_ok=True)
        for f in shipped:
            (results / f.name).write_bytes(f.read_bytes())
    except OSError as err:
        refuse(f"cannot write {err.filename or directory}: {err.strerror}")
    if results.name != EXAMPLE_FOLDERS[0]:
        typer.echo(f"{directory / EXAMPLE_FOLDERS[0]} is taken (files of its own, or not a "
                   f"folder): the example results went to {results}/ instead", err=True)
    typer.echo(f"wrote {target}, {directory / SCHEMA_FILE} and {results}/ (example benchmark "
               f"results: `scorecard evidence inspect {results} --ttft-ms 1500 --tpot-ms 60`): "
               f"edit the proposal, then `scorecard run {target}`")


#: the bundled example's name line, which `init` gives the copy's own name
EXAMPLE_NAME = 'name = "Sovereign 70B inference platform (example)"'


def own_name(example: str, directory: Path) -> str:
    """The example proposal named for the folder `init` writes it into, so that its runs
    publish into a report folder of their own, not the bundled example's (one name, one
    slug: scorecard-out/<slug>/<vintage>/)."""
    import json

    if example.count(EXAMPLE_NAME) != 1:
        raise RuntimeError(f"the example proposal's line {EXAMPLE_NAME!r} is not there once")
    name = f"{directory.resolve().name or 'proposal'} (from the example)"
    return example.replace(EXAMPLE_NAME, f"name = {json.dumps(name, ensure_ascii=False)}")


class SchemaKind(StrEnum):
    proposal = "proposal"
    result = "result"
    diff = "diff"


@app.command("schema")
def schema_cmd(
    kind: Annotated[SchemaKind, typer.Argument(
        help="proposal: the proposal file (TOML); result: the `run --json` document; diff: "
             "the `diff --json` document.")],
) -> None:
    """Print the JSON Schema of the proposal file, of the result document or of the diff
    document (also under docs/: proposal.schema.json, result.schema.json,
    diff.schema.json)."""
    import json

    from pipeline.engine.contract import schema

    typer.echo(json.dumps(schema(kind.value), indent=2, sort_keys=True))


# Command modules import only typer at load time (their work is imported inside), so
# registering them here keeps `scorecard --help` fast.
from pipeline.cli.diff import diff  # noqa: E402
from pipeline.cli.estimate import estimate  # noqa: E402
from pipeline.cli.evidence import evidence_app  # noqa: E402
from pipeline.cli.export import export  # noqa: E402
from pipeline.cli.ingest import ingest, sources_cmd  # noqa: E402

app.command("ingest")(ingest)
app.command("sources")(sources_cmd)
app.add_typer(evidence_app, name="evidence")
app.command("diff")(diff)
app.command("estimate")(estimate)
app.command("export")(export)
