"""The packaged reference files (read by `sources.bundled`), some of them changed: what a
test loads to see how a bad or new row of a bundled table is taken
(`pipeline.ingest.bundled.load_bundled(con, files)`)."""

from __future__ import annotations

from sources import bundled


def changed(**changes: tuple[bytes, bytes]) -> dict[str, bundled.RawFile]:
    """The packaged files, `name=(old, new)` replaced once in the file `name`.csv (`old`
    must be there)."""
    files = {n: bundled.read(n) for n in bundled.FILES}
    for name, (old, new) in changes.items():
        raw = files[f"{name}.csv"]
        assert old in raw.content
        files[raw.name] = bundled.RawFile(raw.name, raw.content.replace(old, new, 1))
    return files
