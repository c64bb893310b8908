"""Tests for flt_lib.feedforward.regression (section 2.1)."""

import math

import pytest
import torch
import torch._dynamo  # noqa: F401  torch.testing and gradcheck import it lazily (1-3 s): pay it at collection
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.feedforward import regression as rg
from flt_lib.stats import loglog_slope
from flt_lib.rng import torch_generator


def _data(n=50, d=4, seed=0):
    g = torch_generator(seed)
    w = torch.randn(d, generator=g, dtype=torch.float64)
    X, y = rg.linear_gaussian_data(n, w, noise=0.1, generator=g)
    return X, y, w


def test_normal_equations_match_lstsq_and_gd():
    X, y, _ = _data()
    w = rg.least_squares_normal(X, y)
    assert torch.allclose(w, torch.linalg.lstsq(X, y).solution, atol=1e-10)
    run = rg.least_squares_gd(X, y, lr=0.5, steps=500)
    assert torch.allclose(run.w, w, atol=1e-8) and torch.equal(run.path[-1], run.w)
    assert bool((run.losses[1:] <= run.losses[:-1] + 1e-12).all())
    assert torch.allclose(run.losses, torch.stack([rg.mse_loss(X, y, v) for v in run.path]))
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
    losses = rg.logistic_gd(X, y01, lr=1.0, steps=100).losses
    assert losses[0] == pytest.approx(math.log(2))
    assert losses[-1] < 0.3


def test_logistic_gd_one_step_is_autograd_step_with_bias_and_decay():
    # One library step against autograd on the regularised objective, bias included.
    g = torch_generator(21)
    X = torch.randn(30, 3, generator=g, dtype=torch.float64)
    y01 = (torch.rand(30, generator=g) < 0.5).double()
    w, b = torch.zeros(3, dtype=torch.float64, requires_grad=True), torch.zeros((), dtype=torch.float64, requires_grad=True)
    z = X @ w + b
    obj = (torch.nn.functional.softplus(z) - y01 * z).mean() + 0.5 * 0.1 * (w @ w)
    gw, gb = torch.autograd.grad(obj, (w, b))
    fit = rg.logistic_gd(X, y01, lr=0.3, steps=1, weight_decay=0.1, fit_bias=True)
    assert torch.allclose(fit.w, -0.3 * gw, atol=1e-14) and torch.allclose(fit.b, -0.3 * gb, atol=1e-14)
    # two steps: the second gradient is taken at the first iterate
    w1, b1 = fit.w.clone().requires_grad_(), fit.b.clone().requires_grad_()
    z = X @ w1 + b1
    obj = (torch.nn.functional.softplus(z) - y01 * z).mean() + 0.5 * 0.1 * (w1 @ w1)
    gw, gb = torch.autograd.grad(obj, (w1, b1))
    fit2 = rg.logistic_gd(X, y01, lr=0.3, steps=2, weight_decay=0.1, fit_bias=True)
    assert torch.allclose(fit2.w, fit.w - 0.3 * gw, atol=1e-14)
    # an augmentation that does nothing changes nothing
    same = rg.logistic_gd(X, y01, lr=0.3, steps=2, weight_decay=0.1, fit_bias=True,
                          augment=lambda Z, *, generator: Z, generator=torch_generator(0))
    assert torch.equal(same.w, fit2.w)


def test_least_squares_gd_weight_decay_and_projection():
    X, y, _ = _data()
    n, d = X.shape
    lam = 0.3
    ridge = torch.linalg.solve(X.T @ X / n + lam * torch.eye(d, dtype=torch.float64), X.T @ y / n)
    run = rg.least_squares_gd(X, y, lr=0.5, steps=400, weight_decay=lam)
    assert torch.allclose(run.w, ridge, atol=1e-10)
    # projection onto the ball of radius ||ridge||: the constrained minimiser is the ridge solution
    proj = rg.least_squares_gd(X, y, lr=0.5, steps=2000, radius=ridge.norm().item())
    assert torch.allclose(proj.w, ridge, atol=1e-8)
    assert (proj.path.norm(dim=1) <= ridge.norm() * (1 + 1e-12)).all()


def test_softmax_regression_gd_one_step_matches_autograd():
    g = torch_generator(22)
    X = torch.randn(20, 3, generator=g, dtype=torch.float64)
    q = torch.softmax(torch.randn(20, 4, generator=g, dtype=torch.float64), 1)
    for T in (1.0, 3.0):
        W = torch.zeros(4, 3, dtype=torch.float64, requires_grad=True)
        b = torch.zeros(4, dtype=torch.float64, requires_grad=True)
        loss = T**2 * -(q * torch.log_softmax((X @ W.T + b) / T, 1)).sum(1).mean()
        gW, gb = torch.autograd.grad(loss, (W, b))
        fit = rg.softmax_regression_gd(X, q, lr=0.2, steps=1, temperature=T)
        assert torch.allclose(fit.W, -0.2 * gW, atol=1e-14) and torch.allclose(fit.b, -0.2 * gb, atol=1e-14)
        assert fit.losses[0].item() == pytest.approx(math.log(4) * 1.0, rel=1e-12)


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
    out = rg.generalisation_gaps([20, 40, 80, 160], w_star, noise=0.5, n_val=500, repeats=30, generator=torch_generator(4))
    slope, _ = loglog_slope(out.n.numpy(), out.gap.numpy())
    assert -1.5 < slope < -0.6
    exact = [rg.ols_expected_gap(int(n), 10, noise=0.5) for n in out.n]
    for got, se, want in zip(out.gap.tolist(), out.gap_se.tolist(), exact):
        assert abs(got - want) <= 4 * se, (got, want, se)
    assert torch.allclose(out.val, out.true, rtol=0.15)


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
    with pytest.raises(ValueError, match="radius must be > 0"):
        rg.least_squares_gd(X, y, lr=0.1, steps=3, radius=0.0)
    with pytest.raises(ValueError, match=r"w0 must have shape \(d,\) with d=4"):
        rg.least_squares_gd(X, y, lr=0.1, steps=3, w0=torch.zeros(3, dtype=torch.float64))
    with pytest.raises(TypeError, match="augment must be callable"):
        rg.logistic_gd(X, (y > 0).double(), lr=0.1, steps=1, augment=3, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        rg.logistic_gd(X, (y > 0).double(), lr=0.1, steps=1, augment=lambda Z, g: Z)
    with pytest.raises(ValueError, match="targets must have shape"):
        rg.softmax_regression_gd(X, torch.ones(3, 2), lr=0.1, steps=1)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        rg.softmax_regression_gd(X, torch.ones(50, 2) / 2, lr=0.1, steps=1, temperature=0.0)
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
        rg.generalisation_gaps([2], torch.ones(3), noise=0.1, n_val=5, repeats=2, generator=torch_generator(0))
    with pytest.raises(ValueError, match="repeats must be >= 2"):
        rg.generalisation_gaps([5], torch.ones(3), noise=0.1, n_val=5, repeats=1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="n must be >="):
        rg.ols_expected_gap(3, 3, noise=0.1)
    with pytest.raises(ValueError, match=r"scales must have shape \(d,\)"):
        rg.linear_gaussian_data(5, torch.ones(2), noise=0.1, generator=torch_generator(0), scales=torch.ones(3))
