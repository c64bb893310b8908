"""flt_lib.stats: the log-log slope fit behind the book's scaling-law checks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib import stats


@settings(max_examples=25, deadline=None)
@given(
    slope=st.floats(min_value=-3, max_value=3),
    log_c=st.floats(min_value=-5, max_value=5),
)
def test_loglog_slope_recovers_exact_power_laws(slope, log_c):
    x = np.geomspace(1, 1000, 7)
    y = np.exp(log_c) * x**slope
    fitted, intercept = stats.loglog_slope(x, y)
    assert fitted == pytest.approx(slope, abs=1e-8)
    assert intercept == pytest.approx(log_c, abs=1e-7)


def test_loglog_slope_matches_closed_form_least_squares():
    # Oracle: the normal equations for a line through (log x, log y).
    rng = np.random.default_rng(0)
    x = np.geomspace(1, 50, 9)
    y = x**-0.5 * np.exp(0.1 * rng.standard_normal(9))
    A = np.stack([np.log(x), np.ones_like(x)], axis=1)
    ref = np.linalg.solve(A.T @ A, A.T @ np.log(y))
    assert stats.loglog_slope(x, y) == pytest.approx(tuple(ref))


def test_loglog_slope_bad_input():
    with pytest.raises(ValueError, match="x and y must be 1-D arrays of the same length"):
        stats.loglog_slope([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="x must have at least 2 points"):
        stats.loglog_slope([1], [1])
    with pytest.raises(ValueError, match="strictly positive"):
        stats.loglog_slope([1, 0], [1, 2])
