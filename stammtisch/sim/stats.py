"""Statistics for simulation results: means with confidence intervals, paired differences, rates.

No numpy or scipy: the quantiles of Student's t come from the regularized incomplete beta
function, so the figures are exact enough for reports and identical on every machine.

Which variance is right depends on how the numbers were made:
- ``mean_interval`` treats the values as independent draws (per deal, when deals are independent).
- ``clustered_mean_interval`` treats *clusters* (table sessions, i.e. batch chunks) as the
  independent units. Inside a Tippen session the pot carries from deal to deal, so neighbouring
  deals are correlated; the sessions are not (each has its own seed). The estimator is the
  ratio of sums with its linearised variance, with ``clusters - 1`` degrees of freedom.
- ``wilson_interval`` for a proportion (tap rate, bête rate, declarer win rate): unlike the
  textbook ``p ± z·se`` it stays inside [0, 1] and covers near its level for small counts.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """An estimate with its two-sided confidence interval.

    ``n`` is the number of independent units behind it (values, or clusters), ``method`` says
    which variance was used: "t" (per value), "clustered-t" (per cluster), "wilson".
    """

    estimate: float
    low: float
    high: float
    n: int
    method: str
    confidence: float = CONFIDENCE

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_json(self, digits: int = 6) -> dict[str, object]:
        def number(x: float) -> float | None:  # JSON has no infinity: an unknown bound is null
            return round(x, digits) if math.isfinite(x) else None

        return {
            "estimate": number(self.estimate),
            "ci": [number(self.low), number(self.high)],
            "confidence": self.confidence,
            "n": self.n,
            "method": self.method,
        }


# --- Student's t ------------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _regularized_beta(a: float, b: float, x: float, y: float) -> float:
    """I_x(a, b), given both ``x`` and ``y`` = 1 - x: near x = 1, ``1.0 - x`` would keep only
    the few digits of y that survive the subtraction (t_cdf of a t near 0 would be off by ~1e-9)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, y) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    t2 = t * t
    tail = 0.5 * _regularized_beta(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))
    return 1.0 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=1024)  # intervals ask for the same few quantiles again and again
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (bisection on ``t_cdf``; df > 1e7 uses the normal)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    if df > 1e7:
        return NormalDist().inv_cdf(p)
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


def _two_sided(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must lie strictly between 0 and 1")
    return 1.0 - (1.0 - confidence) / 2.0


# --- means ------------------------------------------------------------------------------------


def mean_interval_from_moments(n: int, total: float, total_squares: float,
                               confidence: float = CONFIDENCE) -> Interval:
    """t interval of a mean from the count, the sum and the sum of squares of the values."""
    if n < 1:
        raise ValueError("a mean needs at least one value")
    mean = total / n
    if n == 1:
        return Interval(mean, -math.inf, math.inf, 1, "t", confidence)
    variance = max(0.0, (total_squares - n * mean * mean) / (n - 1))
    half = t_quantile(_two_sided(confidence), n - 1) * math.sqrt(variance / n)
    return Interval(mean, mean - half, mean + half, n, "t", confidence)


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """t interval of the mean of independent values."""
    n = len(values)
    if n < 1:
        raise ValueError("a mean needs at least one value")
    mean = math.fsum(values) / n
    # centred sum of squares: stable where the raw one would cancel
    squares = math.fsum((v - mean) ** 2 for v in values)
    return mean_interval_from_moments(n, mean * n, squares + n * mean * mean, confidence)


def clustered_mean_interval(cluster_totals: Sequence[float], cluster_sizes: Sequence[int],
                            confidence: float = CONFIDENCE) -> Interval:
    """Mean per unit (per deal) when the independent units are clusters (sessions).

    ``cluster_totals[i]`` is the sum of the values in cluster i, ``cluster_sizes[i]`` how many
    values it holds. Ratio estimator sum(totals)/sum(sizes); variance
    C/(C-1) · sum((total_i - mean·size_i)²) / (sum sizes)², t with C-1 degrees of freedom.
    """
    if len(cluster_totals) != len(cluster_sizes):
        raise ValueError("one size per cluster total")
    clusters = len(cluster_totals)
    size = sum(cluster_sizes)
    if clusters < 1 or size < 1:
        raise ValueError("a mean needs at least one value")
    mean = math.fsum(cluster_totals) / size
    if clusters == 1:
        return Interval(mean, -math.inf, math.inf, 1, "clustered-t", confidence)
    residuals = math.fsum((t - mean * m) ** 2 for t, m in zip(cluster_totals, cluster_sizes, strict=True))
    variance = clusters / (clusters - 1) * residuals / (size * size)
    half = t_quantile(_two_sided(confidence), clusters - 1) * math.sqrt(variance)
    return Interval(mean, mean - half, mean + half, clusters, "clustered-t", confidence)


def paired_difference_interval(first: Sequence[float], second: Sequence[float],
                               confidence: float = CONFIDENCE) -> Interval:
    """Mean of ``first[i] - second[i]``: for the same deals played by two bots (duplicate).

    Pairing removes the luck of the cards that both sides share, so the interval is much
    narrower than the difference of two independent intervals.
    """
    if len(first) != len(second):
        raise ValueError("paired values need the same number on each side")
    return mean_interval([a - b for a, b in zip(first, second, strict=True)], confidence)


# --- proportions ------------------------------------------------------------------------------


def wilson_interval(successes: int, trials: int, confidence: float = CONFIDENCE) -> Interval:
    """Wilson score interval of a proportion ``successes / trials``."""
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError("successes must lie between 0 and the number of trials")
    if trials == 0:
        return Interval(math.nan, 0.0, 1.0, 0, "wilson", confidence)
    z = NormalDist().inv_cdf(_two_sided(confidence))
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # at 0 or all successes the bound is exactly 0 or 1 (rounding would leave 1e-17)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(p, low, high, trials, "wilson", confidence)
