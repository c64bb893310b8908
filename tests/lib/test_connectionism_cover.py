"""Tests for flt_lib.connectionism.cover (Section 1.3)."""

import math
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.connectionism import cover as cv
from flt_lib.rng import torch_generator


@pytest.mark.parametrize("s, n", [(1, 1), (4, 1), (3, 2), (5, 2), (6, 3), (7, 4)])
def test_brute_force_count_equals_formula(s, n):
    X = torch.randn(s, n, generator=torch_generator(10 * s + n), dtype=torch.float64)
    assert cv.in_general_position(X)
    assert cv.count_separable_labelings(X) == cv.cover_count(s, n)


def test_affine_count_via_lifting():
    # 5 points in general (affine) position in the plane: C(5, 3) affine dichotomies.
    X = torch.randn(5, 2, generator=torch_generator(0), dtype=torch.float64)
    Z = torch.cat([X, torch.ones(5, 1, dtype=torch.float64)], dim=1)
    assert cv.count_separable_labelings(Z) == cv.cover_count(5, 3) == 22


@settings(max_examples=25, deadline=None)
@given(s=st.integers(1, 60), n=st.integers(1, 30))
def test_count_recursion_and_closed_forms(s, n):
    # Pascal-type recursion C(s+1, n) = C(s, n) + C(s, n-1), all labelings when s <= n,
    # and exactly half at s = 2n.
    if n >= 2:
        assert cv.cover_count(s + 1, n) == cv.cover_count(s, n) + cv.cover_count(s, n - 1)
    if s <= n:
        assert cv.cover_count(s, n) == 2**s
    assert cv.cover_fraction(2 * n, n) == Fraction(1, 2)


def test_xor_is_not_separable_but_and_is():
    X = torch.tensor([[0.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    assert not cv.is_linearly_separable(X, torch.tensor([-1.0, 1.0, 1.0, -1.0]))
    assert cv.is_linearly_separable(X, torch.tensor([-1.0, -1.0, -1.0, 1.0]))


def test_general_position_detects_dependence():
    X = torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    assert not cv.in_general_position(X)
    assert cv.in_general_position(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))


def test_monte_carlo_matches_formula():
    frac = cv.monte_carlo_fraction(8, 4, n_trials=200, generator=torch_generator(0))
    p = float(cv.cover_fraction(8, 4))
    assert abs(frac - p) <= 4 * math.sqrt(p * (1 - p) / 200) + 1 / 200
    assert cv.monte_carlo_fraction(3, 3, n_trials=20, generator=torch_generator(1)) == 1.0
    affine = cv.monte_carlo_fraction(6, 2, n_trials=200, generator=torch_generator(2), affine=True)
    q = float(cv.cover_fraction(6, 3))
    assert abs(affine - q) <= 4 * math.sqrt(q * (1 - q) / 200) + 1 / 200


def test_bad_inputs():
    with pytest.raises(ValueError, match="s must be >= 1"):
        cv.cover_count(0, 2)
    with pytest.raises(ValueError, match="n must be >= 1"):
        cv.cover_fraction(3, 0)
    with pytest.raises(ValueError, match="y must have entries in"):
        cv.is_linearly_separable(torch.randn(3, 2), torch.tensor([1.0, 0.0, -1.0]))
    with pytest.raises(ValueError, match="y must have shape"):
        cv.is_linearly_separable(torch.randn(3, 2), torch.ones(4))
    with pytest.raises(ValueError, match="between 1 and 16 rows"):
        cv.count_separable_labelings(torch.randn(17, 2))
    with pytest.raises(ValueError, match="X must be a 2-D tensor"):
        cv.in_general_position(torch.ones(3))
    with pytest.raises(ValueError, match="n_trials must be >= 1"):
        cv.monte_carlo_fraction(3, 2, n_trials=0, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        cv.monte_carlo_fraction(3, 2, n_trials=5, generator=None)


def test_separability_falls_back_when_highs_is_undecided(monkeypatch):
    # HiGHS's default method can end with status 4 ("unknown") on a degenerate draw; the
    # test must then be decided by another method, not crash.
    import scipy.optimize

    real = scipy.optimize.linprog
    calls = []

    def flaky(*args, method, options, **kwargs):
        calls.append((method, bool(options)))
        if method == "highs":  # both attempts with the default method fail
            return scipy.optimize.OptimizeResult(status=4, message="unknown")
        return real(*args, method=method, options=options, **kwargs)

    monkeypatch.setattr(scipy.optimize, "linprog", flaky)
    X = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    assert cv.is_linearly_separable(X, torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64))
    assert not cv.is_linearly_separable(X, torch.tensor([1.0, 1.0, -1.0], dtype=torch.float64))
    assert calls == [("highs", True), ("highs", False), ("highs-ipm", False)] * 2
