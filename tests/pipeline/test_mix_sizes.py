"""The base sizes a mix tries: every one up to mix.MAX_SIZES, past it the sizes where an hour's
demand fills whole instances and an even grid, with the same choice as trying them all."""

from __future__ import annotations

import numpy as np

from pipeline.engine.fleet import mix, plan

#: 18 hours at weight 1 and a 3x evening peak: the hours run at 2/3 and 2 x the day's mean
EVENING = [1.0] * 16 + [3.0] * 6 + [1.0] * 2
#: an own node of 1,000 tokens/s usable (1,250 goodput, 20 % headroom) at 11 EUR/h, and an
#: API at 6 EUR per million tokens, as tests/pipeline/test_mix.py's
OWN = {"cost_model": "declared", "capacity": "provisioned", "tokens_per_s": 1250.0,
       "price_eur_per_hour": 11.0, "busy_power_w": 5000.0, "pue": 1.2,
       "grid_gco2e_per_kwh": 50.0, "peak_factor": 2.0, "headroom": 0.2}
API = {"cost_model": "per_token", "capacity": "elastic", "tokens_per_s": 1000.0,
       "price_eur_per_mtok": 6.0, "headroom": 0.2}


def test_a_small_fleet_tries_every_size() -> None:
    # 3,000 tokens/s a day's mean: the peak 6,000 needs 6 nodes: sizes 0 .. 6, all of them
    own = {**OWN, "demand_tokens_per_day": 3000.0 * 86400}
    largest = mix.max_base_instances(own)
    assert mix.sizes_to_search(own, largest, EVENING).tolist() == [0, 1, 2, 3, 4, 5, 6]


def test_a_large_fleet_tries_the_fills_and_a_grid_and_chooses_as_trying_all() -> None:
    # 3,000,000 tokens/s a day's mean: 2,000,000 off-peak (2,000 nodes of 1,000 exactly) and
    # 6,000,000 at the peak (6,000 nodes, the pure own fleet). The sizes tried: 0, the fills
    # 2,000 and 6,000 (floor = ceil: whole) and 1,024 even steps of 6,000 / 1,023 = 5.865
    own = {**OWN, "demand_tokens_per_day": 3e6 * 86400}
    largest = mix.max_base_instances(own)
    assert largest == 6000
    sizes = mix.sizes_to_search(own, largest, EVENING)
    assert {0.0, 2000.0, 6000.0} <= set(sizes.tolist())
    assert len(sizes) <= mix.MAX_SIZES + 2 * len(EVENING)
    # As in test_mix's evening case scaled by 1,000: the nodes that serve all day pay (11 x
    # 24 = 264 EUR / 86.4 Mtok = 3.06 EUR/Mtok < 6), the evening-only ones do not (12.22):
    # the best base is the off-peak fill, 2,000 nodes, found among the sizes tried, and
    # trying all 6,001 sizes chooses the same
    tried = mix.evaluate(own, API, sizes, EVENING, ["cpm_eur_per_mtok"])
    every = mix.evaluate(own, API, np.arange(largest + 1), EVENING, ["cpm_eur_per_mtok"])
    at = mix.best_size(tried, 4, 3, None)
    assert at is not None and sizes[at] == 2000 == mix.best_size(every, 4, 3, None)
    # at least 90 % of the tokens own (level 4): the day's demand is 18 h x 2,000,000 + 6 h x
    # 6,000,000 = 72e6 (tokens/s) x h; from 2,000 nodes the base serves the 18 off-peak hours
    # whole (36e6) and 6 h x 1,000 n in the evening: (36e6 + 6,000 n) / 72e6 >= 0.9 ->
    # n >= 4,800, the exhaustive search's base; the sizes tried under that policy hold it
    policy = mix.Policy(4, 0.9)
    with_policy = mix.sizes_to_search(own, largest, EVENING, policy.share)
    assert 4800.0 in with_policy.tolist() and 4800.0 not in sizes.tolist()
    tried = mix.evaluate(own, API, with_policy, EVENING, ["cpm_eur_per_mtok"])
    at = mix.best_size(tried, 4, 3, policy)
    assert at is not None and with_policy[at] == 4800 == mix.best_size(every, 4, 3, policy)


def test_under_a_plan_the_fills_of_every_month_are_tried_and_choose_as_trying_all() -> None:
    # demand_by_month: month 1 at 4,500,000 tokens/s (off-peak 3,000 nodes, peak 9,000: the
    # pure own fleet, the largest size), months 2-36 at 3,200,000 (off-peak 2,133.33 nodes,
    # 2 / 3 of the mean). A node costs 264 EUR a day and serves up to 3.6 Mtok an hour, 21.6
    # EUR of API (as above). Node 2,134 serves a third of its capacity off-peak and all
    # evening in months 2-36: (18 h x 1/3 + 6 h) x 3.6 Mtok = 43.2 Mtok, 259.2 EUR a day,
    # 4.8 EUR lost a day for 35 months (168), but busy all day in month 1 (518.4 - 264 =
    # 254.4 EUR gained a day, 30.4 days): it pays over the horizon. Node 2,135 serves the
    # evening only in months 2-36 (129.6 EUR, 134.4 lost a day): it does not. The horizon's
    # base is 2,134, the ceiling of months 2-36's off-peak fill. The first month's fills are
    # 3,000 and 9,000 and the even grid of 9,000 / 1,023 = 8.8 steps passes 2,129 and 2,138:
    # searched from the first month alone, the base was 2,138.
    path = plan.Path(months=36, rate_per_year=0.06, rate_source="test",
                     by_month=(4.5e6 * 86400,) + (3.2e6 * 86400,) * 35)
    own = {**OWN, "demand_tokens_per_day": 4.5e6 * 86400}
    largest = mix.max_base_over(own, path)
    assert largest == 9000
    sizes = mix.sizes_to_search(own, largest, EVENING, path=path)
    assert {2133.0, 2134.0, 3000.0, 9000.0} <= set(sizes.tolist())
    tried = mix.over_horizon(own, API, sizes, EVENING, ["cpm_eur_per_mtok"], path)
    every = mix.over_horizon(own, API, np.arange(largest + 1), EVENING, ["cpm_eur_per_mtok"],
                             path)
    at = mix.best_size(tried, 4, 3, None)
    assert at is not None and sizes[at] == 2134 == mix.best_size(every, 4, 3, None)


def test_under_a_plan_the_policy_s_least_size_counts_the_lead_time() -> None:
    # 3,000,000 tokens/s a day's mean throughout 36 months, the base serving from its lead
    # time of 3 months: months 1-3 not at all (clip(m - 3, 0, 1) = 0), months 4-36 whole, so
    # at most 33 / 36 of the horizon's tokens. The day's demand is 72,000 node-hours (as
    # above); from 2,000 nodes a base of n serves 36,000 + 6 n of them. At least 80 % of
    # the horizon at level 4: (33 / 36) x (36,000 + 6 n) / 72,000 >= 0.8 -> n >= 4,472.7:
    # 4,473 (at 90 %: n >= 5,781.8, 5,782). The nodes past 2,000 serve the evening only and
    # do not pay, so the least size allowed is chosen; trying all 6,001 chooses the same. The
    # least size of the day alone (lead time aside) was 3,600 (80 %), which the horizon's
    # share refuses: the search then chose the grid's next allowed step, 4,475.
    path = plan.Path(months=36, rate_per_year=0.06, rate_source="test")
    own = {**OWN, "demand_tokens_per_day": 3e6 * 86400, "lead_time_months": 3.0}
    largest = mix.max_base_over(own, path)
    every = mix.over_horizon(own, API, np.arange(largest + 1), EVENING,
                             ["cpm_eur_per_mtok"], path)
    for share, expected in ((0.8, 4473), (0.9, 5782)):
        policy = mix.Policy(4, share)
        sizes = mix.sizes_to_search(own, largest, EVENING, share, path)
        tried = mix.over_horizon(own, API, sizes, EVENING, ["cpm_eur_per_mtok"], path)
        at = mix.best_size(tried, 4, 3, policy)
        assert at is not None and sizes[at] == expected == mix.best_size(every, 4, 3, policy)
