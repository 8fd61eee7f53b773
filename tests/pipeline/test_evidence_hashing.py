"""Files hashed ahead (`pipeline.evidence.power.hashing`): the digest of a file given is its sha256
while the file is as it was hashed, and nothing otherwise; `evidence add` uses it instead of
hashing the log again."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pipeline.evidence.add import add_evidence
from pipeline.evidence.power.hashing import AHEAD_BYTES, HashedAhead
from pipeline.store import connect

HEADER = "timestamp, index, power.draw [W]\n"


def test_a_file_hashed_ahead_has_its_sha256_until_it_changes(tmp_path: Path) -> None:
    big, small = tmp_path / "big.bin", tmp_path / "small.bin"
    big.write_bytes(os.urandom(AHEAD_BYTES + 5))  # two pieces: 16 MiB, then 5 bytes
    small.write_bytes(b"x" * 10)
    hashed = HashedAhead([big, small, tmp_path, tmp_path / "gone.csv"])
    assert hashed.sha256(big, big.stat()) == hashlib.sha256(big.read_bytes()).hexdigest()
    # under AHEAD_BYTES, a folder, a file that is not there: not hashed ahead
    assert hashed.sha256(small, small.stat()) is None
    assert hashed.sha256(tmp_path, tmp_path.stat()) is None
    # the same bytes touched since: the digest no longer vouched for
    stat = big.stat()
    os.utime(big, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert hashed.sha256(big, big.stat()) is None


def test_a_file_rewritten_and_its_time_set_back_is_not_taken_for_the_one_hashed(
        tmp_path: Path) -> None:
    # other bytes of the same size, the modification time restored (as `cp -p` or `touch -r`
    # would): only the change time shows it, and the digest hashed ahead is not handed out
    big = tmp_path / "big.bin"
    big.write_bytes(b"a" * AHEAD_BYTES)
    hashed = HashedAhead([big])
    before = big.stat()
    assert hashed.sha256(big, before) == hashlib.sha256(b"a" * AHEAD_BYTES).hexdigest()
    big.write_bytes(b"b" * AHEAD_BYTES)
    os.utime(big, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = big.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert hashed.sha256(big, after) is None


def test_evidence_add_takes_the_digest_hashed_ahead(tmp_path: Path) -> None:
    # 3 seconds x 2 GPUs = 6 rows; the log is hashed ahead, so the add reports no hashing of
    # its own, and keeps the bytes under that sha256
    log = tmp_path / "smi.csv"
    log.write_text(HEADER + "".join(f"2026/11/20 11:00:0{s}.000, {gpu}, 300.00 W\n"
                                    for s in range(3) for gpu in (0, 1)))
    hashed = HashedAhead([log], min_bytes=1)
    stages: list[str] = []
    con = connect(tmp_path / "s.duckdb")
    [(_, result)], _ = add_evidence(con, [log], tz="UTC", hashed=hashed,
                                    progress=lambda what, stage: stages.append(stage))
    assert (result.status, result.row_count) == ("loaded", 6)
    assert not any(stage.startswith("hashing") for stage in stages)
    digest = hashlib.sha256(log.read_bytes()).hexdigest()
    assert con.execute("SELECT snapshot_sha256 FROM load_snapshots JOIN loads USING (load_id) "
                       "WHERE loads.load_id = ?", [result.load_id]).fetchall() == [(digest,)]
