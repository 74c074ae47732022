"""Interval estimates and ratings for tournaments (standard library maths, no SciPy).

| function | what | textbook |
|---|---|---|
| `wilson_interval(k, n)` | a proportion k/n | Wilson score interval (Newcombe 1998, method 3) |
| `t_quantile(p, df)` | Student's t quantile, any real df > 0 | inverse of the regularized incomplete beta |
| `mean_interval(values)` | a mean | mean +- t(0.975, n-1) s / sqrt(n) |
| `clustered_mean_interval(values, clusters)` | a mean over correlated observations | the t interval over cluster means |
| `welch_interval(a, b)` | a difference of two independent means | Welch-Satterthwaite |
| `openskill_ratings(...)` | skill ratings from ranked games | OpenSkill Plackett-Luce |

Every interval is returned as an `Interval` (estimate, low, high, n); `low` and `high`
are None when n is too small to say anything (n < 1 for a proportion, n < 2 for a mean).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval over `n` independent units."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int

    def to_dict(self) -> dict:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n": self.n}


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def normal_quantile(p: float) -> float:
    """The standard normal quantile (z for p = 0.975 is 1.95996...)."""
    return NormalDist().inv_cdf(p)


def wilson_interval(successes: int, trials: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Wilson score interval for the proportion successes / trials."""
    _check_confidence(confidence)
    if trials < 0 or not 0 <= successes <= max(trials, 0):
        raise ValueError(f"wilson_interval needs 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return Interval(None, None, None, 0)
    z = normal_quantile(0.5 + confidence / 2)
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials))
    # At k = 0 (k = n) the bound is exactly 0 (1); the formula leaves rounding noise there.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(p, low, high, trials)


# -- Student's t ------------------------------------------------------------------------------


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz; Numerical Recipes 6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
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


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"regularized_beta needs 0 <= x <= 1, got {x!r}")
    if x in (0.0, 1.0):
        return x
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` (> 0, not necessarily whole) degrees of freedom."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    tail = 0.5 * regularized_beta(df / (df + t * t), df / 2.0, 0.5)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t with `df` degrees of freedom (t(0.975, 10) = 2.228...)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile needs 0 < p < 1, got {p!r}")
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    if df > 1e7:
        return normal_quantile(p)
    # Bisection on the monotone CDF: slow-ish (~100 CDF calls) but exact to float precision.
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low <= 1e-13 * max(1.0, high):
            break
    return 0.5 * (low + high)


# -- means ------------------------------------------------------------------------------------


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = math.fsum(values) / n
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var)


def mean_interval(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """The mean and its t interval: mean +- t(1 - alpha/2, n-1) * sd / sqrt(n)."""
    _check_confidence(confidence)
    values = [float(v) for v in values]
    n = len(values)
    if n == 0:
        return Interval(None, None, None, 0)
    mean, sd = _mean_sd(values)
    if n < 2:
        return Interval(mean, None, None, n)
    half = t_quantile(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def cluster_means(values: Sequence[float], clusters: Sequence[Hashable]) -> list[float]:
    """The mean of the values in each cluster, clusters in order of first appearance."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    sums: dict[Hashable, list[float]] = {}
    for v, c in zip(values, clusters, strict=True):
        sums.setdefault(c, []).append(float(v))
    return [math.fsum(vs) / len(vs) for vs in sums.values()]


def clustered_mean_interval(
    values: Sequence[float], clusters: Sequence[Hashable], confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """A t interval over cluster means: observations sharing a cluster (games of one deal) are one unit.

    The estimate is the mean of the cluster means (the plain mean when clusters are
    the same size, as the games of a duplicate deal are); n is the number of clusters.
    """
    return mean_interval(cluster_means(values, clusters), confidence)


def welch_interval(a: Sequence[float], b: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """mean(a) - mean(b) with Welch's interval (two independent samples, unequal variances)."""
    _check_confidence(confidence)
    na, nb = len(a), len(b)
    if na == 0 or nb == 0:
        return Interval(None, None, None, min(na, nb))
    mean_a, sd_a = _mean_sd([float(v) for v in a])
    mean_b, sd_b = _mean_sd([float(v) for v in b])
    diff = mean_a - mean_b
    if na < 2 or nb < 2:
        return Interval(diff, None, None, min(na, nb))
    va, vb = sd_a**2 / na, sd_b**2 / nb
    se = math.sqrt(va + vb)
    if se == 0.0:
        return Interval(diff, diff, diff, min(na, nb))
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half = t_quantile(0.5 + confidence / 2, df) * se
    return Interval(diff, diff - half, diff + half, min(na, nb))


# -- ratings ----------------------------------------------------------------------------------


def ranks_from_totals(totals: Sequence[float]) -> list[int]:
    """Competition ranks, 1 = best; equal totals share a rank (1, 2, 2, 4)."""
    return [1 + sum(other > t for other in totals) for t in totals]


def openskill_ratings(
    labels: Sequence[str],
    tables: Sequence[tuple[Sequence[int], Sequence[float]]],
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, dict[str, float | int]]:
    """OpenSkill (Plackett-Luce, default parameters) ratings from games in the given order.

    `tables`: one (player indices by seat, final totals by seat) per game. Returns per
    label: mu, sigma, ordinal (mu - 3 sigma, the conservative skill OpenSkill ranks
    by), the interval mu +- z sigma, and games rated. The order of games matters, so
    callers pass them in game order.
    """
    _check_confidence(confidence)
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=label) for label in labels]
    games = [0] * len(labels)
    for players, totals in tables:
        if len(players) != len(totals):
            raise ValueError(f"a rated game needs one total per seat, got {len(players)} seats, {len(totals)} totals")
        new = model.rate([[ratings[p]] for p in players], ranks=ranks_from_totals(totals))
        for p, team in zip(players, new, strict=True):
            ratings[p] = team[0]
            games[p] += 1
    z = normal_quantile(0.5 + confidence / 2)
    return {
        label: {
            "mu": r.mu,
            "sigma": r.sigma,
            "ordinal": r.mu - 3.0 * r.sigma,
            "low": r.mu - z * r.sigma,
            "high": r.mu + z * r.sigma,
            "games": games[i],
        }
        for i, (label, r) in enumerate(zip(labels, ratings, strict=True))
    }
