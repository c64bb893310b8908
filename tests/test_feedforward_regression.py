"""Tests for flt_lib.feedforward.regression (section 2.1)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.feedforward import regression as rg
from flt_lib.stats import loglog_slope
from flt_lib.rng import torch_generator


def _data(n=50, d=4, seed=0):
    g = torch_generator(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    w = torch.randn(d, generator=g, dtype=torch.float64)
    return X, X @ w + 0.1 * torch.randn(n, generator=g, dtype=torch.float64), w


def test_normal_equations_match_lstsq_and_gd():
    X, y, _ = _data()
    w = rg.least_squares_normal(X, y)
    assert torch.allclose(w, torch.linalg.lstsq(X, y).solution, atol=1e-10)
    w_gd, losses = rg.least_squares_gd(X, y, lr=0.5, steps=500)
    assert torch.allclose(w_gd, w, atol=1e-8)
    assert bool((losses[1:] <= losses[:-1] + 1e-12).all())
    # gradient of mse_loss vanishes at the normal-equation solution
    wg = w.clone().requires_grad_(True)
    rg.mse_loss(X, y, wg).backward()
    assert wg.grad.abs().max() < 1e-10


def test_logistic_grad_matches_autograd_gradcheck():
    g = torch_generator(1)
    X = torch.randn(20, 3, generator=g, dtype=torch.float64)
    y01 = (torch.rand(20, generator=g) < 0.5).double()
    w = torch.randn(3, generator=g, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: rg.logistic_loss(X, y01, v), (w,))
    rg.logistic_loss(X, y01, w).backward()
    assert torch.allclose(w.grad, rg.logistic_grad(X, y01, w.detach()), atol=1e-12)


def test_logistic_gd_decreases_loss():
    g = torch_generator(2)
    X = torch.randn(100, 2, generator=g, dtype=torch.float64)
    y01 = (X[:, 0] + 0.5 * X[:, 1] > 0).double()
    _, losses = rg.logistic_gd(X, y01, lr=1.0, steps=100)
    assert losses[0] == pytest.approx(math.log(2))
    assert losses[-1] < 0.3


@settings(max_examples=25, deadline=None)
@given(shift=st.floats(-1e4, 1e4), k=st.integers(1, 6), seed=st.integers(0, 1000))
def test_logsumexp_shift_invariance_and_oracle(shift, k, seed):
    z = torch.randn(3, k, generator=torch_generator(seed), dtype=torch.float64)
    assert torch.allclose(rg.logsumexp(z), torch.logsumexp(z, dim=-1), atol=1e-12)
    assert torch.allclose(rg.logsumexp(z + shift), rg.logsumexp(z) + shift, atol=1e-9 * max(1.0, abs(shift)))
    p = rg.softmax(z + shift)
    assert torch.allclose(p.sum(-1), torch.ones(3, dtype=torch.float64))


def test_naive_overflows_stable_does_not():
    z = torch.tensor([[1000.0, 999.0, 0.0]])
    labels = torch.tensor([0])
    assert not torch.isfinite(rg.logsumexp_naive(z)).all()
    assert not torch.isfinite(rg.cross_entropy_naive(z, labels))
    ce = rg.cross_entropy(z, labels)
    assert torch.isfinite(ce)
    assert ce.item() == pytest.approx(math.log(1 + math.exp(-1)), rel=1e-3)  # float32 near 1000
    assert torch.allclose(
        rg.cross_entropy(z, labels), torch.nn.functional.cross_entropy(z, labels), atol=1e-6
    )


def test_cross_entropy_matches_naive_at_small_logits():
    g = torch_generator(3)
    z = torch.randn(10, 4, generator=g, dtype=torch.float64)
    labels = torch.randint(0, 4, (10,), generator=g)
    assert torch.allclose(rg.cross_entropy(z, labels), rg.cross_entropy_naive(z, labels), atol=1e-12)


def test_generalisation_gap_shrinks_like_one_over_n():
    w_star = torch.ones(10, dtype=torch.float64)
    out = rg.generalisation_gaps([20, 40, 80, 160], w_star, noise=0.5, n_val=500, repeats=50, generator=torch_generator(4))
    slope, _ = loglog_slope(out["n"].numpy(), out["gap"].numpy())
    assert -1.5 < slope < -0.6
    exact = [rg.ols_expected_gap(int(n), 10, 0.5) for n in out["n"]]
    for got, want in zip(out["gap"].tolist(), exact):
        assert got == pytest.approx(want, rel=0.5)
    assert torch.allclose(out["val"], out["true"], rtol=0.15)


def test_linear_gaussian_risk_oracle():
    w_star = torch.tensor([1.0, -2.0], dtype=torch.float64)
    X, y = rg.linear_gaussian_data(20000, w_star, noise=0.3, generator=torch_generator(5))
    w = torch.tensor([0.5, -1.0], dtype=torch.float64)
    assert rg.mse_loss(X, y, w).item() == pytest.approx(rg.linear_gaussian_risk(w, w_star, noise=0.3), rel=0.05)


def test_bad_inputs():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="y must have one entry per row"):
        rg.mse_loss(X, y[:-1], torch.zeros(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="w must have shape"):
        rg.mse_loss(X, y, torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="n >= d"):
        rg.least_squares_normal(X[:2], y[:2])
    with pytest.raises(ValueError, match="lr must be > 0"):
        rg.least_squares_gd(X, y, lr=0.0, steps=3)
    with pytest.raises(ValueError, match="y01 must contain only 0s and 1s"):
        rg.logistic_loss(X, y, torch.zeros(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="y01 must have one entry"):
        rg.logistic_grad(X, y[:3], torch.zeros(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="y01 must have one entry"):
        rg.logistic_gd(X, y[:3], lr=1.0, steps=1)
    with pytest.raises(ValueError, match="z must have at least 1 dimension"):
        rg.logsumexp(torch.tensor(1.0))
    with pytest.raises(ValueError, match="z must have at least 1 dimension"):
        rg.logsumexp_naive(torch.tensor(1.0))
    with pytest.raises(TypeError, match="z must have a floating-point dtype"):
        rg.softmax(torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="labels must lie in"):
        rg.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 3]))
    with pytest.raises(TypeError, match="labels must have an integer dtype"):
        rg.cross_entropy_naive(torch.zeros(2, 3), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="noise must be >= 0"):
        rg.linear_gaussian_data(5, torch.ones(2), noise=-1.0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="w must have shape"):
        rg.linear_gaussian_risk(torch.ones(3), torch.ones(2), noise=0.1)
    with pytest.raises(ValueError, match="ns\\[i\\] must be >="):
        rg.generalisation_gaps([2], torch.ones(3), noise=0.1, n_val=5, repeats=1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="n must be >="):
        rg.ols_expected_gap(3, 3, 0.1)
