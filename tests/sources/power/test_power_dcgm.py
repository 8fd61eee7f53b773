"""DCGM exporter scrapes: power in W, energy counter in mJ -> J, scrape times from comments."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sources.errors import ParseError
from sources.power import dcgm

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "power"
LABELS = 'gpu="0",UUID="GPU-x",Hostname="h"'


def test_scrape_pair() -> None:
    data = (FIXTURES / "dcgm_scrapes_2gpu.prom").read_bytes()
    assert dcgm.detect(data, "d.prom")
    frame = dcgm.parse(data, path="d.prom")
    # 2 scrapes x 2 GPUs; temperature lines ignored
    assert frame.height == 4
    assert frame["sample_utc"].to_list() == [datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)] * 2 + [
        datetime(2026, 11, 20, 10, 0, 10, tzinfo=UTC)] * 2
    # 5,000,000,000 mJ = 5,000,000 J
    assert frame["energy_counter_j"].to_list() == [5_000_000.0, 7_000_000.0, 5_003_000.0,
                                                   7_004_000.0]
    assert frame["power_w"].to_list() == [300.0, 400.0, 300.0, 400.0]
    assert frame["device_id"][0] == "GPU-aaaaaaaa-0000-0000-0000-000000000000"
    assert frame["gpu_index"].to_list() == [0, 1, 0, 1]


def test_prometheus_sample_timestamps_in_ms() -> None:
    data = f"DCGM_FI_DEV_POWER_USAGE{{{LABELS}}} 250.5 1795935600000\n".encode()
    frame = dcgm.parse(data, path="t.prom")
    # 1795935600 s = 2026-11-29T07:00:00Z
    assert frame["sample_utc"][0] == datetime(2026, 11, 29, 7, 0, 0, tzinfo=UTC)
    assert frame["power_w"][0] == 250.5


def test_epoch_marker_and_blank_sentinel() -> None:
    data = (f"# scrape_utc: 1795935600.5\nDCGM_FI_DEV_POWER_USAGE{{{LABELS}}} 250\n"
            f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{LABELS}}} 9223372036854775794\n").encode()
    frame = dcgm.parse(data, path="s.prom")
    assert frame["sample_utc"][0] == datetime(2026, 11, 29, 7, 0, 0, 500000, tzinfo=UTC)
    assert frame["energy_counter_j"][0] is None
    assert frame["note"][0] == "DCGM blank value (no reading)"


def test_scrape_without_time_is_refused() -> None:
    data = f"DCGM_FI_DEV_POWER_USAGE{{{LABELS}}} 250\n".encode()
    with pytest.raises(ParseError, match=r"n\.prom: line 1: scrape has no time"):
        dcgm.parse(data, path="n.prom")


def test_naive_marker_needs_tz() -> None:
    data = f"# scrape_utc: 2026-11-29 08:00:00\nDCGM_FI_DEV_POWER_USAGE{{{LABELS}}} 1\n".encode()
    with pytest.raises(ParseError, match="timezone"):
        dcgm.parse(data, path="z.prom")
    frame = dcgm.parse(data, path="z.prom", tz="Europe/Paris")
    # 08:00 in Paris in November = 07:00 UTC
    assert frame["sample_utc"][0] == datetime(2026, 11, 29, 7, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize("label", ["scrape_utc", "scrape_time", "scraped_at"])
def test_each_scrape_time_spelling(label: str) -> None:
    # the vLLM /metrics spelling too: one scrape log may hold both exporters' scrapes
    data = (f"# {label}: 2026-11-29T07:00:00Z\nDCGM_FI_DEV_POWER_USAGE{{{LABELS}}} 250\n"
            f"# {label}: 2026-11-29T07:00:10Z\nDCGM_FI_DEV_POWER_USAGE{{{LABELS}}} 260\n"
            ).encode()
    frame = dcgm.parse(data, path="s.prom")
    # two scrapes, 10 s apart
    assert frame["sample_utc"].to_list() == [datetime(2026, 11, 29, 7, 0, 0, tzinfo=UTC),
                                             datetime(2026, 11, 29, 7, 0, 10, tzinfo=UTC)]
    assert frame["power_w"].to_list() == [250.0, 260.0]


def test_unreadable_labelled_scrape_time_is_refused() -> None:
    # it used to be skipped, so the scrape silently took the previous scrape's time
    data = (f"# scrape_utc: 2026-11-29T07:00:00Z\nDCGM_FI_DEV_POWER_USAGE{{{LABELS}}} 250\n"
            f"# scrape_utc: yesterday\nDCGM_FI_DEV_POWER_USAGE{{{LABELS}}} 260\n").encode()
    with pytest.raises(ParseError, match=r"u\.prom: line 3: scrape time 'yesterday'"):
        dcgm.parse(data, path="u.prom")
