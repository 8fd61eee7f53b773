"""`scorecard init` on a fresh folder and on the ordinary mistakes: its example results pass the
tool's own checks, a results/ of the user's own is never mixed with the example's sweep, and a
path that cannot take the files is an error naming it (exit 1, not a bug's exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pipeline.cli import app

runner = CliRunner()
EXAMPLE = ["vllm-infqps-concurrency1-m-20260816-160001.json",
           "vllm-infqps-concurrency2-m-20260816-160101.json",
           "vllm-infqps-concurrency4-m-20260816-160201.json"]


def test_the_example_results_obey_littles_law_as_inspect_checks_it(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0
    # by hand, each request's latency is its TTFT plus its 9 or 19 gaps of 10 ms:
    # concurrency 1: 4 x (0.1 + 0.09) = 0.76 s one after another, 5.26 requests/s, and
    #   5.26 x 0.19 s = 1.0 in flight;
    # concurrency 2: latencies 0.29, 0.39, 0.29, 0.39 s, each slot 0.29 + 0.39 = 0.68 s,
    #   5.88 requests/s x 0.34 s = 2.0;
    # concurrency 4: 8 requests, 0.29 and 0.69 s alternately, each slot 0.98 s, 8.16
    #   requests/s x 0.49 s = 4.0 (they were 1 s each: 0.76, 1.36 and 1.96, -24/-32/-51 %)
    for name, concurrency in zip(EXAMPLE, (1, 2, 4), strict=True):
        run = json.loads((tmp_path / "results" / name).read_text())
        latencies = [t + sum(gaps) for t, gaps in zip(run["ttfts"], run["itls"], strict=True)]
        in_flight = run["request_throughput"] * sum(latencies) / len(latencies)
        assert abs(in_flight - concurrency) < 1e-9, name
        assert run["request_throughput"] == run["completed"] / run["duration"]
        assert run["output_throughput"] == sum(run["output_lens"]) / run["duration"]
    inspect = runner.invoke(app, ["evidence", "inspect", str(tmp_path / "results"),
                                  "--ttft-ms", "1500", "--tpot-ms", "60"])
    assert inspect.exit_code == 0, inspect.output
    assert "Little's law" not in inspect.output and "graded estimated" not in inspect.output
    # every level meets the SLO: the knee is the highest, 160 tokens / 0.98 s = 163.3
    assert "knee 4 at 163.3 tokens/s goodput" in inspect.stdout


def test_a_results_folder_of_the_users_own_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "mine.json").write_text("{}")
    done = runner.invoke(app, ["init", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["mine.json"]
    assert sorted(p.name for p in (tmp_path / "example-results").iterdir()) == EXAMPLE
    assert (f"{tmp_path / 'results'} is taken (files of its own, or not a folder): the "
            f"example results went to {tmp_path / 'example-results'}/ instead") in done.stderr
    assert f"evidence inspect {tmp_path / 'example-results'} " in done.stdout
    # again with --force: the example's own folder is rewritten, nothing else
    assert runner.invoke(app, ["init", "--force", str(tmp_path)]).exit_code == 0
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["mine.json"]
    # both folders the user's: refused before anything is written
    (tmp_path / "example-results" / "theirs.json").write_text("{}")
    (tmp_path / "proposal.toml").unlink()
    refused = runner.invoke(app, ["init", str(tmp_path)])
    assert refused.exit_code == 1
    assert refused.stderr.startswith(f"error: {tmp_path / 'results'} and ")
    assert not (tmp_path / "proposal.toml").exists()


def test_a_fresh_init_writes_results_and_a_rerun_keeps_writing_there(tmp_path: Path) -> None:
    assert runner.invoke(app, ["init", str(tmp_path)]).exit_code == 0
    again = runner.invoke(app, ["init", "--force", str(tmp_path)])
    assert again.exit_code == 0 and again.stderr == ""
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == EXAMPLE
    assert not (tmp_path / "example-results").exists()


def test_a_file_named_results_is_left_alone_too(tmp_path: Path) -> None:
    (tmp_path / "results").write_text("notes")
    done = runner.invoke(app, ["init", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "results").read_text() == "notes"
    assert sorted(p.name for p in (tmp_path / "example-results").iterdir()) == EXAMPLE


def test_a_path_that_cannot_be_a_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    a_file = tmp_path / "afile"
    a_file.write_text("")
    done = runner.invoke(app, ["init", str(a_file)])
    assert done.exit_code == 1  # FileExistsError, exit 3 as a bug
    assert done.stderr == (f"error: {a_file} is a file, not a folder: give a folder to write "
                           "proposal.toml into\n")
    # /proc takes no new folder: the operating system's reason, the path named
    done = runner.invoke(app, ["init", "/proc/x"])
    assert done.exit_code == 1
    assert done.stderr == "error: cannot write /proc/x: No such file or directory\n"


def test_init_names_the_copy_for_its_folder(tmp_path: Path) -> None:
    """The copy `init` writes is named for its folder, not as the bundled example: its runs
    publish into a report folder of their own and the example's published scorecard stays
    the example's (they shared `scorecard-out/sovereign-70b-inference-platform-example/`)."""
    folder = tmp_path / "Proposition été"
    assert runner.invoke(app, ["init", str(folder)]).exit_code == 0
    text = (folder / "proposal.toml").read_text(encoding="utf-8")
    assert 'name = "Proposition été (from the example)"' in text
    assert "Sovereign 70B inference platform (example)" not in text
    done = runner.invoke(app, ["run", str(folder / "proposal.toml"), "--db",
                               str(tmp_path / "s.duckdb"), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["proposal"] == "Proposition été (from the example)"
