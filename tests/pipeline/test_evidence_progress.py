"""`evidence add` of a big file shows a bar of its bytes with a percentage on a terminal, and
nothing when stderr is no terminal (issue 33). The terminal is forced with
SCORECARD_PROGRESS=1, which draws the display as rich draws it on one."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli.evidence import BAR_BYTES, evidence_app
from pipeline.evidence.files import PIECE_BYTES, read_bytes


def nvidia_smi_log(path: Path, readings: int) -> Path:
    """An nvidia-smi `--format=csv,nounits` log of 2 GPUs at 300 and 400 W every 0.1 s."""
    start = datetime(2026, 11, 20, 11, 0, 0, tzinfo=UTC)  # written as local time, --tz UTC
    lines = ["timestamp, index, power.draw [W]"]
    for i in range(readings):
        stamp = (start + timedelta(seconds=i / 10)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        lines += [f"{stamp}, 0, 300.00", f"{stamp}, 1, 400.00"]
    path.write_text("\n".join(lines) + "\n")
    return path


def visible(stream: str) -> str:
    """The text a terminal shows of what rich wrote: escape sequences and the bar's glyphs
    left out."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream).replace("━", "")


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 80,000 readings x 2 lines of 35 bytes = 5.6 MB, over BAR_BYTES (4 MiB = 4.19 MB)
    log = nvidia_smi_log(tmp_path_factory.mktemp("log") / "smi.csv", 80_000)
    assert log.stat().st_size > BAR_BYTES
    return log


def test_a_big_file_shows_a_percentage_of_its_bytes_on_a_terminal(
        big_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORECARD_PROGRESS", "1")
    result = CliRunner().invoke(evidence_app, ["add", str(big_log), "--tz", "UTC", "--db",
                                               str(tmp_path / "s.duckdb")])
    assert result.exit_code == 0, result.output
    shown = visible(result.stderr)
    mb = f"{big_log.stat().st_size / 1e6:,.1f}"
    # the bar's last state: every byte read, the file's size in MB beside the percentage
    assert re.search(rf"100%\s+{re.escape(mb)}/{re.escape(mb)} MB", shown), shown
    assert "loaded, 160000 rows" in result.stdout


def test_nothing_is_drawn_when_stderr_is_no_terminal(
        big_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCORECARD_PROGRESS", raising=False)
    result = CliRunner().invoke(evidence_app, ["add", str(big_log), "--tz", "UTC", "--db",
                                               str(tmp_path / "s.duckdb")])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_a_small_file_gets_no_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 100 readings: 7 kB, under BAR_BYTES: the spinner and what is done, no percentage
    monkeypatch.setenv("SCORECARD_PROGRESS", "1")
    log = nvidia_smi_log(tmp_path / "small.csv", 100)
    result = CliRunner().invoke(evidence_app, ["add", str(log), "--tz", "UTC", "--db",
                                               str(tmp_path / "s.duckdb")])
    assert result.exit_code == 0, result.output
    shown = visible(result.stderr)
    assert "%" not in shown and "0:00:0" in shown, shown  # the spinner line, its time


def test_read_bytes_tells_the_bytes_read_piece_by_piece(tmp_path: Path) -> None:
    # 20 MiB in pieces of 8 MiB: 0, 8, 16, then 20 MiB of 20 read
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * (20 << 20))
    heard: list[tuple[int, int]] = []
    data = read_bytes(path, lambda done, total: heard.append((done, total)))
    assert data == path.read_bytes()
    assert PIECE_BYTES == 8 << 20
    assert heard == [(0, 20 << 20), (8 << 20, 20 << 20), (16 << 20, 20 << 20),
                     (20 << 20, 20 << 20)]
