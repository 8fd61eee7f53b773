"""Evidence files on disk: the one folder walk, the head every detector looks at, and which
family (benchmark result or power log) each file is, for benchmark results and power logs alike.

- `walk`: the files under a path (itself when a file), recursively in name
  order; hidden files and folders, vLLM `*.pytorch.json` side files, the `summary.json`
  beside `vllm bench sweep` `run=N.json` files and `configuration.toml` sidecars
  (`pipeline.evidence.configuration`) are left out.
- `head`: a file's first 64 kB, all any detector, benchmark or power, looks at.
- `read_bytes`: a file whole, read in 8 MB pieces telling `advance(done, total)` the bytes
  read so far (`evidence add`'s progress bar).
- `split_files`: splits files and folders into benchmark files and power logs, with notes,
  each file recognised by its head through `sources.bench.registry` then
  `sources.power.registry`; see its docstring for files neither recognises (an empty or
  blank file is said to be so).

Errors: a missing path raises FileNotFoundError; a named file neither family reads raises
`sources.errors.ParseError` listing both families of formats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pipeline.evidence.configuration import SIDECAR
from sources.bench import lm_eval
from sources.bench.jsondoc import HEAD_BYTES, json_values
from sources.bench.registry import FORMATS as BENCH_FORMATS
from sources.bench.registry import detect_format as bench_format
from sources.errors import ParseError
from sources.power.registry import FORMATS as POWER_FORMATS
from sources.power.registry import detect_format as power_format


def walk(path: Path) -> list[Path]:
    """The evidence files under `path` (itself when a regular file), in name order: hidden files and
    folders (`.ipynb_checkpoints/`) are left out, as are vLLM `*.pytorch.json` side files and
    the `summary.json` of a folder holding `vllm bench sweep` `run=N.json` files (the same runs
    twice). The one folder walk of benchmark results and power logs."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.is_file():
        return [path]
    if not path.is_dir():  # read as a file, /dev/zero never ends; walked, it held nothing
        raise ParseError("evidence", str(path), "(path)", "not a regular file or a folder (a "
                         "device, pipe or socket is never read as evidence)")
    found = sorted(p for p in path.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    sweep_dirs = {p.parent for p in found if p.name.startswith("run=") and p.suffix == ".json"}
    return [p for p in found if not p.name.endswith(".pytorch.json") and p.name != SIDECAR
            and not (p.name == "summary.json" and p.parent in sweep_dirs)]


def head(path: Path) -> bytes:
    """A file's first 64 kB: all that any detector, benchmark or power, looks at."""
    with path.open("rb") as file:
        return file.read(HEAD_BYTES)


#: the piece `read_bytes` reads at a time
PIECE_BYTES = 8 << 20


def read_bytes(path: Path, advance: Callable[[int, int], None] | None = None) -> bytes:
    """The file's bytes; `advance(done, total)` hears the bytes read after each 8 MB piece."""
    if advance is None:
        return path.read_bytes()
    total = path.stat().st_size
    pieces: list[bytes] = []
    done = 0
    advance(0, total)
    with path.open("rb") as file:
        while piece := file.read(PIECE_BYTES):
            pieces.append(piece)
            done += len(piece)
            advance(done, max(total, done))
    return b"".join(pieces)


def split_files(paths: Sequence[Path], *, fmt: str | None = None,
                power_fmt: str | None = None) -> tuple[list[Path], list[Path], list[str]]:
    """The files under `paths` as (benchmark results, power logs, notes on files skipped).
    Detection looks at each file's head; a file neither reader recognises is a benchmark
    result when `fmt` is given, else a power log when `power_fmt` is, else skipped in a
    folder and an error when named (ParseError, listing both families of formats)."""
    bench: list[Path] = []
    power: list[Path] = []
    notes: list[str] = []
    for root in map(Path, paths):
        for path in walk(root):
            top = head(path)
            if bench_format(top) is not None:
                bench.append(path)
            elif _is_power_log(top, path):
                power.append(path)
            elif fmt is not None or power_fmt is not None:
                (bench if fmt is not None else power).append(path)
            elif lm_eval.detect(top):
                said = (f"{path}: lm-evaluation-harness results, quality evidence: give them "
                        "to a candidate as quality = { evidence = \"...\" } (docs/evidence.md)")
                if not root.is_dir():
                    raise ParseError("evidence", str(path), "format", said.split(": ", 1)[1])
                notes.append(f"{said}; skipped")
            elif (blank := _blank(top, path)) is not None:
                if not root.is_dir():
                    raise ParseError("evidence", str(path), "(file)", f"the file {blank}: no "
                                     "benchmark result or power log to read")
                notes.append(f"{path}: skipped (the file {blank})")
            elif root.is_dir():
                notes.append(f"{path}: skipped (neither a benchmark result nor a power log "
                             "this project reads)")
            else:
                if path.suffix.lower() in (".json", ".jsonl"):
                    # a file that means to be JSON but does not parse: say where it breaks
                    json_values(path.read_bytes(), "evidence", str(path))
                raise ParseError("evidence", str(path), "format", (
                    "neither a benchmark result (formats: "
                    f"{', '.join(sorted(BENCH_FORMATS))}) nor a power log (formats: "
                    f"{', '.join(POWER_FORMATS)}); force one with --format or --power-format"))
    return bench, power, notes


def _blank(top: bytes, path: Path) -> str | None:
    """'is empty' or 'holds only whitespace' when the file holds no text (said as such, not
    as a format no reader recognises), else None."""
    if top.strip() or path.stat().st_size > len(top):
        return None
    return "holds only whitespace" if top else "is empty"


def _is_power_log(top: bytes, path: Path) -> bool:
    try:
        return bool(power_format(top, str(path)))
    except ParseError:
        return False
