"""Shell completion (typer's): `scorecard --show-completion bash` prints the script the README
tells users to source, and bash, with that script sourced, completes commands, subcommands
and options by asking the installed `scorecard` itself."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCORECARD = Path(sys.executable).parent / "scorecard"  # the installed console script
pytestmark = [
    pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed"),
    pytest.mark.skipif(not SCORECARD.exists(), reason="the scorecard script is not installed"),
]


def completions(*words: str) -> list[str]:
    """What bash offers after `words` (the last one being typed), with the completion script
    sourced as docs/cli.md says."""
    line = " ".join(words)
    script = (f'source <("{SCORECARD}" --show-completion bash); '
              f"COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
              f'_scorecard_completion "{SCORECARD}"; printf "%s\\n" "${{COMPREPLY[@]}}"')
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.split()


def test_bash_completes_commands_subcommands_and_options() -> None:
    assert completions("scorecard", "ev") == ["evidence"]
    assert completions("scorecard", "e") == ["explain", "estimate", "export", "evidence"]
    assert "add" in completions("scorecard", "evidence", "a")
    assert {"--out", "--offline"} <= set(completions("scorecard", "run", "--o"))
