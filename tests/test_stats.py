import numpy as np
import pytest
from scipy import stats as sps

from mamab.stats import median_band, median_ci_ranks, percentile_band


def test_thirty_runs_use_ranks_10_and_21():
    assert median_ci_ranks(30) == (10, 21)


@pytest.mark.parametrize("n", [6, 9, 10, 17, 30, 31, 100])
def test_ranks_match_scipy_binomial(n):
    lo, hi = median_ci_ranks(n)
    coverage = 1 - 2 * sps.binom.cdf(lo - 1, n, 0.5)
    assert coverage >= 0.95
    assert 1 - 2 * sps.binom.cdf(lo, n, 0.5) < 0.95  # the next rank in would undercover
    assert hi == n + 1 - lo


def test_band_picks_order_statistics():
    x = np.arange(30.0)[::-1]
    med, lo, hi = median_band(x)
    assert (med, lo, hi) == (14.5, 9.0, 20.0)
    assert median_ci_ranks(3) == (1, 3)


def test_percentile_band_against_numpy():
    x = np.random.default_rng(0).normal(size=(200, 4))
    med, lo, hi = percentile_band(x)
    assert np.allclose(lo, np.percentile(x, 2.5, axis=0)) and np.allclose(
        hi, np.percentile(x, 97.5, axis=0)
    )
    assert np.all(lo <= med) and np.all(med <= hi)


def test_band_leaves_out_runs_without_survivors():
    x = np.array([1.0, np.nan, 3.0, 2.0, np.nan])
    assert median_band(x) == median_band(np.array([1.0, 2.0, 3.0]))
    assert all(np.isnan(v) for v in median_band(np.array([np.nan, np.nan])))
