"""pipeline.run stores the run in a thread while the report files are made (`_meanwhile`):
whatever happens in the block, the store's write is finished when the block is left, and an
error of either is raised, the block's first."""

from __future__ import annotations

import threading

import pytest

from pipeline.run import _meanwhile


def test_the_task_is_done_when_the_block_is_left() -> None:
    started, done = threading.Event(), []

    def task() -> None:
        started.wait()  # runs while the block does: the block lets it start
        done.append("stored")

    with _meanwhile(task):
        started.set()
    assert done == ["stored"]


def test_a_failed_task_is_raised_after_the_block() -> None:
    block = []

    def task() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), _meanwhile(task):
        block.append("files written")
    assert block == ["files written"]


def test_the_block_s_error_comes_first_and_the_task_still_finishes() -> None:
    release, done = threading.Event(), []

    def task() -> None:
        release.wait()
        done.append("stored")
        raise OSError("also failed")

    with pytest.raises(ValueError, match="bad figure"), _meanwhile(task):
        release.set()
        raise ValueError("bad figure")
    assert done == ["stored"]
