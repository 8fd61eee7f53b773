"""A mix (own base + burst) against figures worked by hand (issue 31, item 3)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.engine import mix

#: 18 hours at weight 1 and a 3x evening peak (16:00-22:00, 6 hours at weight 3): the
#: weights' mean is (18 + 18) / 24 = 1.5, so the hours run at 2/3 and 2 x the day's mean
EVENING = [1.0] * 16 + [3.0] * 6 + [1.0] * 2
#: a day's mean of 3,000 tokens/s: 2,000 tokens/s off-peak, 6,000 at the evening peak
DEMAND = 3000 * 86400  # 259.2e6 tokens/day

#: an own node: 1,250 tokens/s of goodput, 20 % headroom -> 1,000 tokens/s of capacity,
#: 11 EUR/h whatever it serves (a declared price with power and hosting in it)
OWN = {"cost_model": "declared", "capacity": "provisioned", "tokens_per_s": 1250.0,
       "price_eur_per_hour": 11.0, "busy_power_w": 5000.0, "pue": 1.2,
       "grid_gco2e_per_kwh": 50.0, "demand_tokens_per_day": float(DEMAND), "peak_factor": 2.0,
       "headroom": 0.2}
#: an API at 6 EUR per million tokens (billed per token used)
API = {"cost_model": "per_token", "capacity": "elastic", "tokens_per_s": 1000.0,
       "price_eur_per_mtok": 6.0, "headroom": 0.2}

WANTED = ["cpm_eur_per_mtok", "carbon_gco2e_per_mtok"]


def _sizes(own: dict, profile: list[float]) -> mix.Figures:
    return mix.evaluate(own, API, np.arange(mix.max_base_instances(own) + 1), profile, WANTED)


def test_evening_peak_base_covers_the_hours_own_capacity_is_cheaper() -> None:
    figures = _sizes(OWN, EVENING)
    # the pure own fleet: ceil(6,000 / 1,000) = 6 nodes (the peak factor 2 x 3,000)
    assert mix.max_base_instances(OWN) == 6
    assert figures.base_instances[:, 0].tolist() == [0, 1, 2, 3, 4, 5, 6]
    # a node costs 11 x 24 = 264 EUR a day. Nodes 1-2 serve 1,000 tokens/s all day
    # (86.4 Mtok): 264 / 86.4 = 3.06 EUR/Mtok, below the API's 6. Nodes 3-6 serve only the
    # 6 evening hours (1,000 x 6 x 3,600 = 21.6 Mtok): 264 / 21.6 = 12.22 EUR/Mtok, above
    # 6: the best base is 2 nodes.
    best = mix.best_size(figures, 4, 3, None)
    assert best == 2
    # month (730 h = 30.4167 days): base 11 x 2 x 730 = 16,060 EUR, serving 2,000 tokens/s
    # all day = 172.8e6 tokens/day = 5,256 Mtok; burst: 4,000 tokens/s over 6 h = 86.4e6
    # tokens/day = 2,628 Mtok x 6 = 15,768 EUR. Total 31,828 EUR over 7,884 Mtok
    assert figures.base_cost_eur[best, 0] == pytest.approx(16_060.0)
    assert figures.burst_cost_eur[best, 0] == pytest.approx(15_768.0)
    assert figures.base_share[best, 0] == pytest.approx(2 / 3)
    # blended CPM = 31,828 / 7,884 = 4.0370 EUR/Mtok
    assert figures.blended["cpm_eur_per_mtok"][best, 0] == pytest.approx(4.0370, abs=1e-4)
    # beats the pure own fleet (6 nodes: 48,180 EUR / 7,884 = 6.111) and the pure API (6.0)
    pure_own, pure_api = figures.monthly_cost_eur[6, 0], figures.monthly_cost_eur[0, 0]
    assert pure_own == pytest.approx(48_180.0)
    assert pure_api == pytest.approx(47_304.0)
    assert figures.blended["cpm_eur_per_mtok"][6, 0] == pytest.approx(6.1111, abs=1e-4)
    assert figures.blended["cpm_eur_per_mtok"][0, 0] == pytest.approx(6.0)


def test_flat_profile_the_best_mix_is_the_pure_own_fleet() -> None:
    # 3,000 tokens/s every hour: 3 nodes (peak factor 1) each serve 1,000 tokens/s all day at
    # 3.06 EUR/Mtok < 6: every node pays, the burst serves nothing and the mix is the pure
    # own fleet (3 x 11 x 730 = 24,090 EUR / 7,884 Mtok = 3.0556 EUR/Mtok); a smaller base
    # loses: 2 nodes = 16,060 + 2,628 Mtok x 6 = 31,828 EUR
    own = {**OWN, "peak_factor": 1.0}
    figures = _sizes(own, [1.0] * 24)
    best = mix.best_size(figures, 4, 3, None)
    assert best == 3 == mix.max_base_instances(own)
    assert figures.burst_tokens_per_day[best, 0] == 0.0
    assert figures.burst_cost_eur[best, 0] == 0.0
    assert figures.blended["cpm_eur_per_mtok"][best, 0] == pytest.approx(3.0556, abs=1e-4)
    assert figures.monthly_cost_eur[2, 0] == pytest.approx(31_828.0)


def test_policy_share_at_level_raises_the_base() -> None:
    # at least 80 % of the tokens at level >= 4 (the own base's level; the API is level 3):
    # 2 nodes serve 2/3 < 0.8; 3 nodes serve 2,000 off-peak + 3,000 in the evening: 2,000 x
    # 18 + 3,000 x 6 = 54,000 of 72,000 token-hours/s = 0.75 < 0.8; 4 nodes: (36,000 +
    # 24,000) / 72,000 = 0.8333 >= 0.8: the cheapest allowed base is 4 nodes
    figures = _sizes(OWN, EVENING)
    share = mix.share_at_level(figures, 4, 3, 4)[:, 0]
    assert share[3] == pytest.approx(0.75)
    assert share[4] == pytest.approx(60 / 72)
    assert mix.best_size(figures, 4, 3, mix.Policy(level=4, share=0.8)) == 4
    # a level both parts meet allows every size: the cheapest stands
    assert mix.best_size(figures, 4, 3, mix.Policy(level=3, share=1.0)) == 2
    # parts at levels 2 and 1 serve no token at level >= 3: no base size is allowed
    assert mix.best_size(figures, 2, 1, mix.Policy(level=3, share=0.5)) is None


def test_draws_go_through_together() -> None:
    # the same base size over draws of the API's price: 4 and 8 EUR/Mtok -> burst 2,628 x 4
    # = 10,512 and x 8 = 21,024 EUR, beside the base's 16,060
    api = {**API, "price_eur_per_mtok": np.array([[4.0, 8.0]])}
    figures = mix.evaluate(OWN, api, [2], EVENING, WANTED)
    assert figures.monthly_cost_eur.shape == (1, 2)
    assert figures.monthly_cost_eur[0].tolist() == pytest.approx([26_572.0, 37_084.0])
