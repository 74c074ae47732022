"""Intervals and ratings of quiddler_agents.evaluation.stats against textbook values and hand computations."""

from __future__ import annotations

import math

import pytest

from quiddler_agents.evaluation.stats import (
    cluster_means,
    clustered_mean_interval,
    mean_interval,
    openskill_ratings,
    ranks_from_totals,
    regularized_beta,
    t_cdf,
    t_quantile,
    welch_interval,
    wilson_interval,
)

# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3
# (Wilson score interval without continuity correction), to 4 decimals.
NEWCOMBE = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE)
def test_wilson_matches_newcombe_table(k, n, low, high):
    iv = wilson_interval(k, n)
    assert iv.estimate == pytest.approx(k / n)
    assert iv.low == pytest.approx(low, abs=6e-5)
    assert iv.high == pytest.approx(high, abs=6e-5)
    assert iv.n == n


def test_wilson_formula_by_hand_and_edges():
    # 8 of 10 at 95%: p = 0.8, z = 1.959964; centre and half-width written out.
    z = 1.959963984540054
    p, n = 0.8, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    iv = wilson_interval(8, 10)
    assert (iv.low, iv.high) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert (round(iv.low, 4), round(iv.high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(10, 10).high == 1.0 and wilson_interval(0, 10).low == 0.0
    assert wilson_interval(0, 0).low is None
    # A wider confidence gives a wider interval.
    assert wilson_interval(8, 10, 0.99).low < iv.low


@pytest.mark.parametrize(("k", "n"), [(-1, 10), (11, 10), (1, -1)])
def test_wilson_rejects_bad_counts(k, n):
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(k, n)


# Student's t, two-sided 95% critical values from any printed table.
T_TABLE = [(1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228), (20, 2.086), (30, 2.042), (120, 1.980)]


@pytest.mark.parametrize(("df", "value"), T_TABLE)
def test_t_quantile_matches_table(df, value):
    assert t_quantile(0.975, df) == pytest.approx(value, abs=5e-4)


def test_t_quantile_exact_forms_and_symmetry():
    # df = 1 is the Cauchy distribution: quantile tan(pi (p - 1/2)); df = 2: (2p - 1) sqrt(2 / (4p(1-p))).
    for p in (0.6, 0.9, 0.975, 0.995):
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-10)
        assert t_quantile(p, 2) == pytest.approx((2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p))), rel=1e-10)
        assert t_quantile(1 - p, 7.5) == pytest.approx(-t_quantile(p, 7.5), rel=1e-12)
    assert t_cdf(t_quantile(0.975, 4.3), 4.3) == pytest.approx(0.975, abs=1e-12)
    assert t_quantile(0.975, 1e9) == pytest.approx(1.959964, abs=1e-6)
    # I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b.
    assert regularized_beta(0.3, 2.5, 1.0) == pytest.approx(0.3**2.5, rel=1e-12)
    assert regularized_beta(0.3, 1.0, 3.5) == pytest.approx(1 - 0.7**3.5, rel=1e-12)
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_quantile(0.9, 0)


def test_mean_interval_textbook():
    # 1..10: mean 5.5, sd sqrt(55/6), t(0.975, 9) = 2.262157 -> 5.5 +- 2.165852.
    iv = mean_interval(range(1, 11))
    assert iv.estimate == 5.5 and iv.n == 10
    half = 2.2621571627982 * math.sqrt(55 / 6) / math.sqrt(10)
    assert (iv.low, iv.high) == pytest.approx((5.5 - half, 5.5 + half), abs=1e-9)
    assert mean_interval([3.0]).low is None and mean_interval([]).estimate is None
    assert mean_interval([2, 2, 2]).low == 2.0


def test_clustered_interval_uses_cluster_means():
    values = [10, 12, 20, 22, 30, 32]
    deals = [0, 0, 1, 1, 2, 2]
    assert cluster_means(values, deals) == [11.0, 21.0, 31.0]
    iv = clustered_mean_interval(values, deals)
    direct = mean_interval([11.0, 21.0, 31.0])
    assert (iv.estimate, iv.low, iv.high, iv.n) == (direct.estimate, direct.low, direct.high, 3)
    # Treating the six correlated games as independent understates the uncertainty here.
    assert mean_interval(values).high - mean_interval(values).low < iv.high - iv.low
    with pytest.raises(ValueError, match="cluster labels"):
        clustered_mean_interval([1, 2], [0])


def test_welch_interval_by_hand():
    a, b = [1, 2, 3, 4, 5], [2, 4, 6, 8, 10, 12]
    va, vb = 2.5 / 5, 14.0 / 6
    df = (va + vb) ** 2 / (va**2 / 4 + vb**2 / 5)
    half = t_quantile(0.975, df) * math.sqrt(va + vb)
    iv = welch_interval(a, b)
    assert iv.estimate == pytest.approx(-4.0)
    assert (iv.low, iv.high) == pytest.approx((-4.0 - half, -4.0 + half), abs=1e-9)
    assert 6.9 < df < 7.0 and 2.36 < t_quantile(0.975, df) < 2.37
    assert welch_interval([1], [2, 3]).low is None


def test_ranks_share_ties():
    assert ranks_from_totals([50, 70, 70, 10]) == [3, 1, 1, 4]


def test_openskill_ratings_order_and_determinism():
    labels = ["strong", "middle", "weak"]
    # The strong player always first, the weak one always last, seats varying.
    tables = []
    for g in range(30):
        seats = [(0, 1, 2), (1, 2, 0), (2, 0, 1)][g % 3]
        score = {0: 300, 1: 250, 2: 200}
        tables.append((seats, [score[p] for p in seats]))
    ratings = openskill_ratings(labels, tables)
    assert ratings == openskill_ratings(labels, tables)
    assert ratings["strong"]["mu"] > ratings["middle"]["mu"] > ratings["weak"]["mu"]
    assert all(r["games"] == 30 for r in ratings.values())
    for r in ratings.values():
        assert r["sigma"] < 25 / 3  # evidence shrinks the uncertainty
        assert r["low"] < r["mu"] < r["high"]
        assert r["ordinal"] == pytest.approx(r["mu"] - 3 * r["sigma"])
    with pytest.raises(ValueError, match="one total per seat"):
        openskill_ratings(labels, [((0, 1), [1])])
