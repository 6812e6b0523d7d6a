"""Confidence intervals cover the true value at the stated rate (synthetic data of known mean).

Every coverage test repeats an experiment 2,000 times with a fixed seed; the binomial standard
error of a 95% coverage is then 0.005, and the tolerance is about three of them.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from stammtisch.sim.stats import (
    Interval,
    clustered_mean_interval,
    mean_interval,
    mean_interval_from_moments,
    paired_difference_interval,
    t_cdf,
    t_quantile,
    wilson_interval,
)

REPETITIONS = 2000
LOW, HIGH = 0.935, 0.965  # 95% ± 3 standard errors of 2,000 repetitions


def coverage(make_interval, truth: float, seed: int) -> float:
    rng = random.Random(seed)
    return sum(make_interval(rng).covers(truth) for _ in range(REPETITIONS)) / REPETITIONS


def test_t_quantiles_match_the_tables():
    # Student's t tables (two-sided 95%) and the normal limit
    for df, value in ((1, 12.7062), (2, 4.3027), (5, 2.5706), (9, 2.2622), (29, 2.0452), (120, 1.9799)):
        assert t_quantile(0.975, df) == pytest.approx(value, abs=1e-4)
    assert t_quantile(0.975, 1e9) == pytest.approx(1.959964, abs=1e-6)
    assert t_quantile(0.025, 7) == pytest.approx(-t_quantile(0.975, 7))
    assert t_cdf(0.0, 3) == pytest.approx(0.5)


@given(st.floats(0.001, 0.999), st.integers(1, 500))
@example(0.49999965378681854, 56)  # found by CI: t_cdf of a t near 0 was off by 1.05e-9
def test_t_quantile_inverts_the_cdf(p, df):
    assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-9)


@pytest.mark.parametrize("df", [1, 2, 56, 500])
def test_t_cdf_near_zero_rises_with_the_density_at_zero(df):
    """Near 0 the cdf is 0.5 + t·f(0): the accuracy the quantiles of p ≈ 0.5 rest on."""
    density0 = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    for t in (1e-9, 1e-7, -1e-7, 1e-5):
        assert t_cdf(t, df) - 0.5 == pytest.approx(t * density0, rel=1e-6)


def test_mean_interval_covers_at_95_percent_for_normal_data():
    def experiment(rng):
        return mean_interval([rng.gauss(3.0, 2.0) for _ in range(12)])

    assert LOW <= coverage(experiment, 3.0, seed=1) <= HIGH


def test_mean_interval_covers_for_deal_like_payoffs():
    # a discrete, skewed payoff per deal like a Tippen net: mostly 0 or small, sometimes a big bête
    values, weights = [-9, -3, 0, 1, 2, 3], [0.05, 0.15, 0.3, 0.25, 0.15, 0.1]
    truth = sum(v * w for v, w in zip(values, weights, strict=True))

    def experiment(rng):
        return mean_interval(rng.choices(values, weights, k=200))

    assert LOW <= coverage(experiment, truth, seed=2) <= HIGH


def test_moments_give_the_same_interval_as_the_values():
    rng = random.Random(3)
    data = [rng.randint(-5, 5) for _ in range(50)]
    a = mean_interval(data)
    b = mean_interval_from_moments(len(data), sum(data), sum(x * x for x in data))
    assert (a.estimate, a.n) == (b.estimate, b.n)
    assert a.low == pytest.approx(b.low) and a.high == pytest.approx(b.high)


def sessions(rng: random.Random, count: int, deals: int, mean: float, carry: float):
    """Sessions where each deal's value carries part of the last one's luck (like a pot)."""
    totals, sizes, flat = [], [], []
    for _ in range(count):
        luck, total = 0.0, 0.0
        for _ in range(deals):
            luck = carry * luck + rng.gauss(0.0, 1.0)
            value = mean + luck
            total += value
            flat.append(value)
        totals.append(total)
        sizes.append(deals)
    return totals, sizes, flat


def test_clustered_interval_covers_when_deals_within_a_session_are_correlated():
    def clustered(rng):
        totals, sizes, _ = sessions(rng, 15, 20, 0.5, carry=0.7)
        return clustered_mean_interval(totals, sizes)

    assert LOW <= coverage(clustered, 0.5, seed=4) <= HIGH


def test_per_deal_interval_is_too_narrow_for_correlated_deals():
    # why simulate uses the per-session interval: treating correlated deals as independent
    # claims 95% and delivers far less
    def per_deal(rng):
        _, _, flat = sessions(rng, 15, 20, 0.5, carry=0.7)
        return mean_interval(flat)

    assert coverage(per_deal, 0.5, seed=4) < 0.85


def test_clustered_interval_with_unequal_sessions_covers():
    def experiment(rng):
        totals, sizes = [], []
        for _ in range(12):
            n = rng.choice([5, 20, 40])
            totals.append(sum(rng.expovariate(1.0) for _ in range(n)))  # mean 1
            sizes.append(n)
        return clustered_mean_interval(totals, sizes)

    assert 0.925 <= coverage(experiment, 1.0, seed=5) <= HIGH


def test_paired_difference_covers_and_is_narrower_than_unpaired():
    # the same deals played by two bots: the luck of the cards is shared and cancels
    def deals(rng):
        luck = [rng.gauss(0.0, 5.0) for _ in range(60)]
        first = [x + 0.3 + rng.gauss(0.0, 1.0) for x in luck]
        second = [x + rng.gauss(0.0, 1.0) for x in luck]
        return first, second

    assert LOW <= coverage(lambda rng: paired_difference_interval(*deals(rng)), 0.3, seed=6) <= HIGH
    first, second = deals(random.Random(7))
    paired = paired_difference_interval(first, second)
    unpaired = mean_interval(first).half_width + mean_interval(second).half_width
    assert paired.half_width < unpaired / 3


@pytest.mark.parametrize("p, n", [(0.5, 40), (0.25, 200), (0.05, 100)])
def test_wilson_interval_covers_proportions(p, n):
    def experiment(rng):
        return wilson_interval(sum(rng.random() < p for _ in range(n)), n)

    # Wilson's coverage wobbles around 95% with n and p (discreteness); it never drops far
    assert 0.925 <= coverage(experiment, p, seed=8) <= 0.975


def test_wilson_stays_inside_0_and_1_and_handles_no_trials():
    assert wilson_interval(0, 10).low == 0.0 and wilson_interval(10, 10).high == 1.0
    assert 0 < wilson_interval(0, 10).high < 0.35
    empty = wilson_interval(0, 0)
    assert math.isnan(empty.estimate) and (empty.low, empty.high) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def test_one_value_has_an_unbounded_interval_written_as_null():
    single = mean_interval([4.0])
    assert single.estimate == 4.0 and single.low == -math.inf
    assert single.to_json()["ci"] == [None, None]
    assert clustered_mean_interval([10.0], [5]).to_json()["ci"] == [None, None]
    with pytest.raises(ValueError):
        mean_interval([])
    assert Interval(1.0, 0.5, 1.5, 3, "t").half_width == 0.5
