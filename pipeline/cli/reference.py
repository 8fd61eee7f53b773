"""docs/cli.md, generated from the typer app: every command's `--help`, so the page cannot
drift from the options (tests/pipeline/test_cli_reference.py checks it). Regenerate with
`uv run python -m pipeline.cli.reference > docs/cli.md`."""

from __future__ import annotations

from typing import Any

import typer

WIDTH = 96
HEADER = """# Command reference

Generated from the command line itself (`uv run python -m pipeline.cli.reference >
docs/cli.md`; a test fails when this page and `--help` differ). Every command takes `-h` /
`--help`; `scorecard --version` prints the version and which nvidia-smi reader is in use;
`python -m pipeline` is the same program. Exit codes: 0 success, 1 invalid input (the message,
`error: ...` on stderr, names the file, key or line; also a store that cannot be used: in
use by another process, a file that is not a DuckDB database, a folder that cannot be made,
each one line naming the path), 2 no usable market data (or a source
failed in `ingest`, or one not ready in `ingest --check`; also a mistyped command line: an
unknown option or a value outside its choices, with a usage line), 3 an unexpected error (a
bug: one line, the traceback with `--debug`), 130 interrupted (Ctrl-C: "interrupted" on
stderr; a load cut short is rolled back, nothing recorded), 143 terminated (SIGTERM, undone
as a Ctrl-C is, "terminated" on stderr). A report folder is replaced whole: the old set of
files or the new one, never a mix. `scorecard run` into a pipe whose reader left early
(`scorecard run | head -1`) drops the rest of its printing, writes its files and exits 0.

Shell completion of commands, subcommands and options (bash, zsh, fish, PowerShell):
`scorecard --install-completion` adds it to your shell's start-up file; or load it for the
current bash session with `source <(scorecard --show-completion bash)` (tested in
tests/pipeline/test_completion.py).
"""


def _walk(command: Any, path: list[str], parent: Any, out: list[str]) -> None:
    """`command`'s help (typer's click command: its own context class and settings, `-h`
    included), then each subcommand's."""
    ctx = command.context_class(command, info_name=path[-1], parent=parent,
                                max_content_width=WIDTH, terminal_width=WIDTH,
                                **command.context_settings)
    level = "#" * min(len(path) + 1, 4)
    out += [f"{level} `{' '.join(path)}`", "", "```text", command.get_help(ctx), "```", ""]
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                _walk(sub, [*path, name], ctx, out)


def markdown(app: typer.Typer) -> str:
    """The reference page of `app`."""
    out = [HEADER]
    _walk(typer.main.get_command(app), ["scorecard"], None, out)
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    from pipeline.cli import app as scorecard

    print(markdown(scorecard), end="")
