"""The fleet is sized on the binding count (issue 26 item 5): `instances` is the larger of the
goodput count and the Little's-law count, the sizing row says which binds and shows the other,
and everything billed follows from it."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from proposals import candidate, proposal
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine.fleet.sizing import sizing
from pipeline.engine.metrics import evaluate, tokens_per_day_from_requests

runner = CliRunner()


def _long_requests(**extra: float) -> pl.DataFrame:
    """2 requests/s of 201 output tokens, each taking 30 s at a replica concurrency of 16:
    TTFT 10 s (a queue at the concurrency cap) + (201 - 1) x TPOT 0.1 s = 30 s; the replica's
    measured goodput 200 tokens/s; 10 EUR/h."""
    given = {
        "id": "long", "tokens_per_s": 200.0, "price_eur_per_hour": 10.0,
        "demand_requests_per_s": 2.0,
        "demand_tokens_per_day": tokens_per_day_from_requests(2.0, 201.0),
        "request_output_tokens": 201.0, "operating_concurrency": 16.0,
        "operating_ttft_s": 10.0, "operating_tpot_s": 0.1, **extra,
    }
    return evaluate(pl.DataFrame({k: [v] for k, v in given.items()}))


def test_littles_law_binds_on_long_requests_at_a_concurrency_cap() -> None:
    frame = _long_requests()
    row = frame.row(0, named=True)
    # goodput: 2 x 201 = 402 tokens/s / 200 tokens/s = 2.01 -> 3 replicas
    assert row["goodput_instances"] == 3
    # Little's law: a replica serves 16 / 30 s = 0.5333 requests/s; 2 / 0.5333 = 3.75 -> 4
    assert row["request_duration_s"] == pytest.approx(30.0)
    assert row["replica_requests_per_s"] == pytest.approx(16 / 30)
    assert row["littles_law_instances"] == 4
    # the fleet takes the larger: 4, billed 4 x 10 EUR/h x 730 h = 29,200 EUR/month; no
    # headroom declared, so none counted: 4 - 0 - max(ceil(2.01), ceil(3.75)) = 0
    assert row["instances"] == row["billed_instances"] == 4
    assert row["monthly_cost_eur"] == pytest.approx(29_200.0)
    assert row["headroom_instances"] == 0
    # CPM on the same fleet: 29,200 / (402 x 86,400 x 365 / 12 / 1e6 = 1,056.456 Mtok/month)
    # = 27.64 EUR/Mtok
    assert row["cpm_eur_per_mtok"] == pytest.approx(29_200 / (402 * 86_400 * 365 / 12 / 1e6))
    (s,) = sizing(frame.with_columns(pl.lit("provisioned").alias("capacity"))).to_dicts()
    assert (s["instances"], s["binding"], s["goodput_instances"],
            s["littles_law_instances"]) == (4, "Little's law", 3, 4)


def test_headroom_and_spares_count_over_the_binding_method() -> None:
    row = _long_requests(headroom=0.2, redundancy_instances=1.0).row(0, named=True)
    # goodput: ceil(402 / (200 x 0.8) = 2.5125) = 3, + 1 spare = 4
    assert row["goodput_instances"] == 4
    # Little's law: ceil(3.75 / 0.8 = 4.6875) = 5, + 1 spare = 6
    assert row["littles_law_instances"] == row["instances"] == 6
    # headroom over Little's law's bare 4: 6 - 1 - 4 = 1
    assert row["headroom_instances"] == 1


def test_goodput_binds_when_requests_are_short() -> None:
    # TTFT 0.1 s: 0.1 + 200 x 0.1 = 20.1 s; 2 x 20.1 / 16 = 2.5125 -> 3 = the goodput count 3:
    # a tie is "goodput"; without a request shape only the goodput count exists
    frame = _long_requests(operating_ttft_s=0.1)
    (s,) = sizing(frame.with_columns(pl.lit("provisioned").alias("capacity"))).to_dicts()
    assert (s["instances"], s["binding"], s["goodput_instances"],
            s["littles_law_instances"]) == (3, "goodput", 3, 3)
    bare = _long_requests(operating_concurrency=None).row(0, named=True)
    assert (bare["instances"], bare["littles_law_instances"]) == (3, None)


@pytest.mark.parametrize("efficiency, requests", [(1.0, 236.5), (0.5, 118.25)])
def test_estimate_and_a_proposal_size_the_same_inputs_the_same(
        tmp_path: Path, db: Path, efficiency: float, requests: float) -> None:
    # Llama-3.1-8B BF16 on H100, TP1 x 8 replicas of batch 16 (128 in flight), efficiency 1:
    # the roofline gives 22,209.66 tokens/s, TPOT 128 / 22,209.66 = 5.763 ms and a request of
    # 800 + 250 tokens lasts 1.44651 s. At 236.5 requests/s, peak x1.5, headroom 20 %:
    # goodput ceil(236.5 x 250 x 1.5 / (22,209.66 x 0.8)) = ceil(4.992) = 5; Little's law
    # ceil(236.5 x 1.5 / (128 / 1.44651 x 0.8)) = ceil(5.011) = 6: Little's law binds, in
    # `scorecard estimate` and in a proposal alike. At efficiency 0.5 the goodput halves and
    # TTFT and TPOT both double (the prefill reaches the same share of its roofline in both),
    # so half the requests give the same counts
    est = candidate("est", gpu='"H100-SXM-80GB"', gpu_count="8",
                    throughput='{ estimate = { model = "Llama-3.1-8B", batch = 16, context = '
                               f'2048, efficiency = {efficiency}, tensor_parallel = 1 }} }}')
    path = tmp_path / "p.toml"
    demand = (f"[demand]\nrequests_per_s = {requests}\nprompt_tokens = 800\n"
              "output_tokens = 250\npeak_factor = 1.5\nheadroom = 0.2\n")
    path.write_text(proposal("requests", demand, est))
    ran = runner.invoke(app, ["run", str(path), "--db", str(db), "--json"])
    assert ran.exit_code == 0, ran.output
    (c,) = json.loads(ran.stdout)["candidates"]
    estimated = runner.invoke(app, [
        "estimate", "--model", "Llama-3.1-8B", "--gpu", "H100-SXM-80GB", "--batch", "16",
        "--context", "2048", "--replicas", "8", "--prompt-tokens", "800",
        "--requests-per-s", str(requests), "--output-tokens", "250", "--peak-factor", "1.5",
        "--headroom", "0.2", "--efficiency", str(efficiency), "--json"])
    assert estimated.exit_code == 0, estimated.output
    e = json.loads(estimated.stdout)["sizing"]
    assert c["tokens_per_s"] == pytest.approx(22_209.66 * efficiency, abs=0.01)
    assert e["request_duration_s"] == pytest.approx(c["sizing"]["request_duration_s"])
    assert e["request_duration_s"] == pytest.approx(1.44651 / efficiency, abs=1e-5)
    keys = ("instances", "goodput_instances", "littles_law_instances", "binding")
    assert [c["sizing"][k] for k in keys] == [e[k] for k in keys] == [6, 5, 6, "Little's law"]


def test_an_elastic_fleet_is_billed_on_the_binding_count() -> None:
    # the long requests at the mean demand (no peak factor, no headroom): goodput keeps
    # 402 / 200 = 2.01 instances busy, Little's law 2 / (16 / 30 s) = 3.75: elastic capacity
    # pays for the larger, 3.75 instance-hours an hour: 3.75 x 10 EUR/h x 730 h = 27,375
    # EUR/month (billing the goodput count's 2.01 gave 14,673). Those 3.75 instances use
    # 402 / (200 x 3.75) = 0.536 of their goodput, so CPM = 10 / (200 x 0.536 x 3,600 / 1e6)
    # = 25.91 EUR/Mtok = 27,375 EUR / 1,056.456 Mtok a month
    row = _long_requests(capacity="elastic").row(0, named=True)
    assert row["busy_instances"] == pytest.approx(3.75)
    assert row["billed_instances"] == pytest.approx(3.75)
    assert row["monthly_cost_eur"] == pytest.approx(27_375.0)
    assert row["billed_utilisation"] == pytest.approx(0.536)
    assert row["cpm_eur_per_mtok"] == pytest.approx(27_375 / (402 * 86_400 * 365 / 12 / 1e6))
    # requests short enough that goodput binds: at TTFT 0.1 s and TPOT 0.05 s a request lasts
    # 0.1 + 200 x 0.05 = 10.1 s, Little's law keeps 2 x 10.1 / 16 = 1.2625 < 2.01 busy:
    # billed 2.01, all of their goodput used
    short = _long_requests(capacity="elastic", operating_ttft_s=0.1,
                           operating_tpot_s=0.05).row(0, named=True)
    assert short["billed_instances"] == pytest.approx(2.01)
    assert short["billed_utilisation"] == pytest.approx(1.0)
