"""The jobs of `scorecard run`, `scorecard explain` and `scorecard diff`: open the proposal and
the store (`pipeline.workspace`), resolve the inputs (`pipeline.inputs`), compute (the engine;
a diff through `pipeline.compare`), store, render.

Exit codes (DESIGN section 9): 0 success, 1 invalid input (a message names the file, key or
line), 2 no usable market data.

Every run is stored under its vintage and proposal identity (name + sha256 of the parsed
proposal); which one is the published baseline (what next month's run and `diff` compare with)
is decided here, `publishes`.
"""

from __future__ import annotations

import hashlib
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pipeline import store
from pipeline.compare import DiffError, diff, partial_month
from pipeline.engine.fleet import plan
from pipeline.engine.questions.explain import explain as chain_of
from pipeline.engine.questions.explain import render
from pipeline.engine.scorecard import compute, contract_data, figures
from pipeline.folders import FolderBusy, NotAFolder, replaced
from pipeline.inputs import model_warnings, resolve
from pipeline.stdout import to_stdout
from pipeline.store import caches
from pipeline.workspace import (
    Opened,
    UserError,
    code_version,
    dumps,
    input_errors,
    opened,
)
from reports.cells import plain, plain_all, plain_json
from reports.figures.charts import rendering_cache
from reports.files.outputs import REPORT_FILES, STEM, write_outputs
from reports.html.pdf import ChromiumFailed, ChromiumMissing
from reports.html.scorecard_table import table_cache
from reports.summary import fit, print_summary
from schemas.fields import vintage_refused
from schemas.result import Diff, Result
from sources import bundled

#: the folder under which each proposal's outputs go, one folder per proposal and vintage
OUT_ROOT = Path("scorecard-out")


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def _note(message: str) -> None:
    print(message, file=sys.stderr)


def slug(name: str) -> str:
    """A proposal name as a folder name: accents dropped (NFKD: "Évaluation" -> "evaluation"),
    lower case, runs of other characters as one '-'; a name with letters or digits that have
    no ASCII form (推論, Ωmega) ends with 8 hex digits of its sha256, so two such names do
    not share a folder."""
    split = unicodedata.normalize("NFKD", name)  # a letter and its accents apart
    base = re.sub(r"[^a-z0-9]+", "-", split.encode("ascii", "ignore").decode().lower()
                  ).strip("-")
    untranslated = any(c.isalnum() for c in split if not c.isascii())
    if not untranslated:
        return base or "proposal"
    tag = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{base}-{tag}" if base else tag


def default_out(proposal_name: str, vintage: str) -> Path:
    """`scorecard-out/<proposal-slug>/<vintage>/`."""
    return OUT_ROOT / slug(proposal_name) / vintage


def check_vintage(vintage: str | None, now: datetime | None = None) -> None:
    """A vintage given is a month YYYY-MM up to this one (a month to come holds no market
    data: the vintage is the data as seen in that month), checked before anything runs."""
    if vintage is None:
        return
    why = vintage_refused(vintage, _this_month(now))
    if why is not None:
        raise UserError(1, f"--vintage {vintage!r} {why} (or leave --vintage out for the "
                        "latest loaded)")


def _this_month(now: datetime | None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y-%m")


def validated(data: dict[str, Any]) -> tuple[Result, str]:
    """The result of the engine's plain data, validated once, and its JSON text. Data that
    validates strictly (no value converted: pydantic's strict mode) is the document as it
    stands, written as built rather than dumped from the model again; data that needs a
    conversion is written from the model, as it reads."""
    try:
        return Result.model_validate(data, strict=True), dumps(data)
    except ValidationError:
        result = Result.model_validate(data)
        return result, dumps(result.document())


def _source(path: Path | None, name: str) -> str:
    return str(path.resolve()) if path is not None else name


def publishes(published: store.StoredRun | None, sha: str, source: str, *, asked: bool,
              json_out: bool, default_folder: bool) -> tuple[bool, str | None]:
    """Whether a run replaces the published scorecard, and why not when it does not.

    `--publish` always does. Otherwise only a default run does (files written to the
    default folder): of a proposal with nothing published yet, or of the same proposal file
    (or the same proposal) as the published run. `--json` and `--out` elsewhere never do."""
    if asked:
        return True, None
    if json_out or not default_folder:
        return False, ("stored as a run, not published (a --json or --out run never "
                       "replaces the published scorecard; --publish does)")
    if published is None or published.proposal_sha256 == sha or published.source == source:
        return True, None
    return False, (f"not published: {published.describe()} is another proposal file's; "
                   "--publish replaces it")


def _announce_store(o: Opened) -> None:
    """A new or empty store says so: its figures are the bundled reference data's only."""
    if store.bundled_only(o.con, bundled.SOURCE):
        state = "new store" if not o.existed else "store with no ingested data"
        _note(f"{state} at {o.db}: bundled reference data only, vintage "
              f"{bundled.VINTAGE} (`scorecard ingest` fetches fresh market data)")


@contextmanager
def _meanwhile(task: Callable[[], None]) -> Iterator[None]:
    """`task` runs in a thread while the block runs; its error, if any, is raised once both
    are done (the block's own error first). For the store's write of the run: DuckDB inserts
    the document and waits for the disk without holding the GIL (most of that write's time
    for a big result), so the report files are made meanwhile."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="store") as pool:
        future = pool.submit(task)
        try:
            yield
        finally:
            error = future.exception()  # waits for the task
        if error is not None:
            raise error


def _keep(o: Opened, result: Result, sha: str, source: str, document: str,
          publish_it: bool) -> Callable[[], None]:
    """Storing the run (and publishing it), on a connection of its own (a DuckDB cursor:
    one per thread)."""
    def task() -> None:
        con = o.con.cursor()
        try:
            store.save_run(con, result, sha, source, document, publish=publish_it)
        finally:
            con.close()
    return task


@contextmanager
def _opened_and_announced(path: Path | None, vintage: str | None, db: Path | None, *,
                          read_only: bool = False, now: datetime | None = None
                          ) -> Iterator[Opened]:
    """The vintage checked first, the store found (--db, [store] path, $SCORECARD_DB), opened
    (read-only when asked and the store already holds the bundled data), and announced when
    it holds the bundled data only."""
    check_vintage(vintage, now)
    with opened(path, vintage, db, read_only=read_only) as o:
        _announce_store(o)
        yield o


def execute(path: Path | None, *, vintage: str | None, out: Path | None, db: Path | None,
            json_out: bool, pdf: bool = False, now: datetime | None = None,
            publish: bool = False) -> int:
    try:
        with _opened_and_announced(path, vintage, db, now=now) as o:
            with input_errors():
                resolved = resolve(o.proposal, o.name, o.market, o.cache)
                card = compute(o.proposal, resolved, o.market)
            for said in model_warnings(o.proposal, o.market):  # also in the candidate's notes
                _note(f"warning: {said}")
            generated_at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
            # foreign text (labels, notes, sources) without bidi or control characters, as
            # every other output writes it: stdout, scorecard.json and the stored run alike;
            # the JSON text tells whether there is any (scanning that text costs a fraction of
            # a walk of the result)
            data = contract_data(card, generated_at, code_version())
            partial = partial_month(o.con, o.market.vintage)
            data["partial_month"] = None if partial is None else partial.model_dump()
            result, document = validated(data)
            if not plain_json(document):
                result = Result.model_validate(plain_all(result.document()))
                document = dumps(result.document())
            # the result's sha256 is the proposal's (hashing a big proposal takes a while)
            sha, source = result.proposal_sha256 or o.proposal.sha256(), _source(path, o.name)
            folder = out or default_out(result.proposal, result.vintage)
            default_folder = folder.resolve() == default_out(
                result.proposal, result.vintage).resolve()
            before = store.published(o.con, result.vintage, result.proposal)
            publish_it, why_not = publishes(before, sha, source, asked=publish,
                                            json_out=json_out, default_folder=default_folder)
            with ExitStack() as whole:
                # the folder checked and locked before the run is stored: a folder that
                # cannot take the report leaves the store as it was
                staging = None if json_out else whole.enter_context(
                    replaced(folder, REPORT_FILES))
                with _meanwhile(_keep(o, result, sha, source, document, publish_it)):
                    last = None if json_out else store.previous_vintage(
                        o.con, o.market.vintage, result.proposal)
                    change = None if last is None else diff(
                        o.con, last, o.market.vintage, o.proposal, o.name,
                        generated_at=generated_at, code_version=code_version(),
                        market_b=o.market, cache=o.cache)
                    if staging is None:
                        to_stdout(lambda: sys.stdout.write(document))
                        return 0
                    (staging / f"{STEM}.json").write_text(document, encoding="utf-8")
                    to_stdout(lambda: print_summary(result))
                    try:
                        # charts and the scorecard table already rendered from the same
                        # inputs come from the store
                        with rendering_cache(caches.ChartCache(o.con)), \
                                table_cache(caches.TableCache(o.con)):
                            written = write_outputs(result, staging, pdf=pdf, diff=change,
                                                    plain_result=True)
                    except (ChromiumMissing, ChromiumFailed) as err:
                        _error(f"{err}\n(the other files were written to {folder})")
                        return 1
    except UserError as err:
        _error(str(err))
        return err.code
    except (FolderBusy, NotAFolder) as err:
        _error(str(err))
        return 1

    kept = (f"published as the scorecard of {result.vintage} for {result.proposal!r} "
            f"(proposal sha256 {sha[:12]})" if publish_it else why_not)
    said = f"wrote {folder}/: {STEM}.json, " + ", ".join(p.name for p in written)
    to_stdout(lambda: print("", *fit(said), *fit(str(kept)), sep="\n"))
    return 0


def explain(candidate: str, metric: str, path: Path | None, *, vintage: str | None,
            db: Path | None, json_out: bool) -> int:
    try:
        with _opened_and_announced(path, vintage, db, read_only=True) as o:
            with input_errors():
                resolved = resolve(o.proposal, o.name, o.market, o.cache)
                shown = figures(o.proposal, resolved, o.market)
            try:
                chain = chain_of(shown, resolved, candidate, metric, plan.Path.of(o.proposal),
                                 o.proposal.written_ids())
            except KeyError as err:
                raise UserError(1, str(err.args[0])) from None
    except UserError as err:
        _error(str(err))
        return err.code
    to_stdout(lambda: sys.stdout.write(dumps(plain_all(chain)) if json_out
                                       else plain(render(chain)) + "\n"))
    return 0


def compare(vintage_a: str, vintage_b: str, path: Path | None, *, db: Path | None,
            recompute: bool = False, now: datetime | None = None) -> Diff:
    """The diff document of `scorecard diff`. The proposal, the store and bad inputs are met
    as `scorecard run` meets them: the bundled reference data is loaded, a bad vintage (a
    month to come, as `run` checks it, or A after B), proposal or evidence file is a
    UserError with code 1, a diff that cannot be made code 2."""
    for which, v in (("A", vintage_a), ("B", vintage_b)):
        if (why := vintage_refused(v, _this_month(now))) is not None:
            raise UserError(1, f"vintage {which} {v!r} {why}")
    if vintage_a > vintage_b:
        raise UserError(1, f"vintage A {vintage_a} is after vintage B {vintage_b}: give the "
                        f"earlier month first (scorecard diff {vintage_b} {vintage_a})")
    try:
        with opened(path, vintage_b, db) as o, input_errors():
            return diff(o.con, vintage_a, vintage_b, o.proposal, o.name,
                        generated_at=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
                        code_version=code_version(), use_stored=not recompute,
                        market_b=o.market, cache=o.cache)
    except DiffError as err:
        raise UserError(2, str(err)) from None
