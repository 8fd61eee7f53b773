"""Every shell command written in README.md and docs/*.md runs as written, in a fresh folder,
against the project's own example data (issue 33).

What counts as a command: the fenced blocks whose language is `sh`, `bash` or `console`. A
`sh`/`bash` block runs as one script (its variables carry from line to line); a `console`
block's commands are its `$ ` lines (with their `\\` continuations), its other lines being
output. `uv run X` runs X from the environment these tests run in (the one `uv run` gives in a
clone), so `uv` itself is never called.

The marker for a command that cannot run here: a shell comment on it that says `(network)`
(it fetches from the internet), `(API key)` (it needs a key) or `(fleet data)` (it runs on a
fleet team's own Parquet samples and engine). Such a command is left out of
its block and reported as a skipped test with that reason; `uv run pytest` is skipped too (it
is the suite this test belongs to). Everything else must exit 0.

All blocks run in one temporary folder with one store (SCORECARD_DB), in file order (README
first); the folder starts with what `scorecard init .` writes, the proposal.toml that
docs/monthly.md's commands name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"sh", "bash", "console"}
MARKERS = {"(network)": "needs the network", "(API key)": "needs an API key",
           "(fleet data)": "runs on a fleet's own Parquet samples and engine (Spark, Trino)"}
BIN = Path(sys.executable).parent  # the environment's scripts: scorecard


@dataclass(frozen=True)
class Block:
    where: str  # page:line of the opening fence
    script: str  # what runs (skipped commands left out)
    skipped: tuple[tuple[str, str], ...]  # (command, reason)


def commands(language: str, lines: list[str]) -> list[str]:
    """The block's commands, continuation lines joined with their newline kept."""
    out: list[str] = []
    going = False
    for line in lines:
        if language == "console" and not going:
            if not line.startswith("$ "):
                continue  # output
            line = line[2:]
        if going:
            out[-1] += "\n" + line
        else:
            out.append(line)
        going = line.endswith("\\")
    return out


def skip_reason(command: str) -> str | None:
    if re.match(r"\s*uv run pytest\b", command):
        return "runs the test suite this test belongs to"
    comment = command.rsplit("#", 1)[1] if "#" in command else ""
    return next((why for mark, why in MARKERS.items() if mark in comment), None)


def blocks() -> list[Block]:
    found: list[Block] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8").splitlines()
        at = 0
        while at < len(text):
            fence = re.match(r"```(\w*)", text[at])
            if not fence:
                at += 1
                continue
            end = next(i for i in range(at + 1, len(text)) if text[i].startswith("```"))
            language = fence.group(1)
            if language in LANGUAGES:
                kept, skipped = [], []
                for command in commands(language, text[at + 1:end]):
                    reason = skip_reason(command)
                    if reason is None:
                        kept.append(command)
                    else:
                        skipped.append((command, reason))
                found.append(Block(f"{page.relative_to(ROOT)}:{at + 1}", "\n".join(kept),
                                   tuple(skipped)))
            at = end + 1
    return found


BLOCKS = blocks()
PRELUDE = """set -euo pipefail
uv() {
  if [ "$1" = run ]; then shift; "$@"; else echo "uv $*: not run by this test" >&2; return 1; fi
}
"""


def fresh(folder: Path) -> dict[str, str]:
    """`folder` as a user starts: what `scorecard init .` writes, a store of its own; the
    environment the commands run in."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "SCORECARD_DB": str(folder / "scorecard.duckdb")}
    subprocess.run([BIN / "scorecard", "init", "."], cwd=folder, env=env, check=True,
                   capture_output=True)
    return env


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("fresh")
    return folder, fresh(folder)


def test_the_readme_and_the_docs_hold_the_commands_this_test_runs() -> None:
    """The extraction finds the README's two commands and its tour (a check that this test
    still reads what the pages write)."""
    where = [b.where for b in BLOCKS]
    assert sum(w.startswith("README.md:") for w in where) == 2, where
    tour = next(b for b in BLOCKS if "scorecard init my-proposal" in b.script)
    assert "scorecard evidence inspect my-proposal/results" in tour.script
    assert [c for c, _ in tour.skipped] == [
        "uv run scorecard ingest --vintage 2026-11          # this month's prices, grid, FX "
        "(network)"]
    assert any(w.startswith("docs/") for w in where)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_documented_commands_exit_0(block: Block, workspace: tuple[Path, dict[str, str]]
                                    ) -> None:
    folder, env = workspace
    if re.search(r"\bjq\b", block.script) and shutil.which("jq") is None:
        pytest.skip("jq is not installed (apt-get install jq)")
    done = subprocess.run(["bash", "-c", PRELUDE + block.script], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (
        f"{block.where}: exit {done.returncode}\n{block.script}\n--- stderr\n"
        f"{done.stderr[-4000:]}")


def test_the_monthly_commands_run_again_for_the_same_month(tmp_path: Path) -> None:
    """docs/monthly.md's commands as monthly.sh holds them (`set -euo pipefail`), run twice
    for the same month, as its "a rerun after a failure is safe" and step 3 ("Retry") say:
    the second `run --out reports/$THIS` found the diff files the first left in its folder
    and refused to replace it, which stopped the cron job. Every file a committee reads
    names the proposal by its file, never this machine's folders."""
    [block] = [b for b in BLOCKS if b.where.startswith("docs/monthly.md")
               and "scorecard diff" in b.script]
    env = fresh(tmp_path)
    # last month's cron published its scorecard: the diff's A, found in the store
    first = datetime.now(UTC).date().replace(day=1)
    last = (first - timedelta(days=1)).strftime("%Y-%m")
    subprocess.run([BIN / "scorecard", "run", "proposal.toml", "--vintage", last, "--out",
                    f"reports/{last}", "--publish"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    for attempt in (1, 2):
        done = subprocess.run(["bash", "-c", PRELUDE + block.script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (attempt, done.stderr[-4000:])
    folder = tmp_path / "reports" / first.strftime("%Y-%m")  # reports/$THIS
    written = {p.name for p in folder.iterdir()}
    assert {"scorecard.html", "scorecard.json", "diff.html", "diff.txt",
            "diff.json"} <= written
    text = (folder / "diff.txt").read_text(encoding="utf-8")
    assert "wrote" not in text  # the status line went to stderr, not into the document
    assert "from proposal.toml, generated" in text  # A: the run the first attempt published
    for path in (*folder.iterdir(), *(tmp_path / "reports" / last).iterdir()):
        if path.suffix in {".html", ".txt", ".json", ".csv"}:
            assert str(tmp_path) not in path.read_text(encoding="utf-8"), path.name


SKIPPED = [(b.where, c, why) for b in BLOCKS for c, why in b.skipped]


@pytest.mark.parametrize(("where", "command", "reason"), SKIPPED,
                         ids=[f"{w}:{c.split('#')[0].strip()}" for w, c, _ in SKIPPED])
def test_documented_commands_not_run_here(where: str, command: str, reason: str) -> None:
    pytest.skip(f"{where}: `{command.split('#')[0].strip()}` {reason}")
