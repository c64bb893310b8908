"""Tests for flt_lib.training.regularisation."""

import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.feedforward import regression as rg
from flt_lib.training import regularisation as reg
from flt_lib.rng import torch_generator


def _data(n=30, d=6, seed=0):
    g = torch_generator(seed)
    w_star = torch.randn(d, generator=g, dtype=torch.float64)
    return rg.linear_gaussian_data(n, w_star, noise=0.3, generator=g)


def test_ridge_solution_is_stationary_and_matches_filter():
    X, y = _data()
    lam = 0.3
    w = reg.ridge_solution(X, y, weight_decay=lam).requires_grad_(True)
    obj = 0.5 * ((X @ w - y) ** 2).mean() + 0.5 * lam * (w @ w)
    (grad,) = torch.autograd.grad(obj, w)
    assert grad.abs().max().item() < 1e-12
    mu, Q = reg.hessian_eigh(X)
    shrink = (Q.T @ w.detach()) / (Q.T @ reg.ridge_solution(X, y, weight_decay=0.0))
    assert torch.allclose(shrink, reg.ridge_filter(mu, weight_decay=lam), atol=1e-10)


def test_gd_iterates_match_filter_and_weight_decay_limit():
    X, y = _data()
    mu, Q = reg.hessian_eigh(X)
    eta = 1 / mu.max().item()
    path = rg.least_squares_gd(X, y, lr=eta, steps=50).path
    w_ls = reg.ridge_solution(X, y, weight_decay=0.0)
    assert torch.allclose(Q.T @ path[50], reg.gd_filter(mu, lr=eta, steps=50) * (Q.T @ w_ls), atol=1e-10)
    w_wd = rg.least_squares_gd(X, y, lr=1 / (mu.max().item() + 0.5), steps=2000, weight_decay=0.5).w
    assert torch.allclose(w_wd, reg.ridge_solution(X, y, weight_decay=0.5), atol=1e-10)


def test_map_estimate_is_ridge_with_prior_weight_decay():
    # Oracle: the Bayesian linear-regression posterior mean (= MAP for a Gaussian posterior),
    # (X^T X + (s/tau)^2 I)^{-1} X^T y, and the maximiser of the log posterior found by autograd.
    X, y = _data(n=40, d=5)
    s, tau = 0.3, 0.5
    lam = reg.prior_weight_decay(noise_std=s, prior_std=tau, n=40)
    assert lam == pytest.approx(s**2 / (40 * tau**2))
    post_mean = torch.linalg.solve(X.T @ X + (s / tau) ** 2 * torch.eye(5, dtype=torch.float64), X.T @ y)
    assert torch.allclose(reg.ridge_solution(X, y, weight_decay=lam), post_mean, atol=1e-12)
    w = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    for _ in range(300):  # gradient ascent on the log posterior
        (g,) = torch.autograd.grad(reg.gaussian_log_posterior(X, y, w, noise_std=s, prior_std=tau), w)
        w = (w + 1e-3 * g).detach().requires_grad_()
    assert torch.allclose(w.detach(), post_mean, atol=1e-8)


@settings(max_examples=25, deadline=None)
@given(t=st.integers(1, 5000), a=st.floats(1e-6, 1.0))
def test_early_stopping_sandwich(t, a):
    # a = eta * mu in (0, 1]; lambda = 1 / (eta t): mu/(mu+lambda) = a t / (1 + a t)
    mu = torch.tensor([a], dtype=torch.float64)
    gd = reg.gd_filter(mu, lr=1.0, steps=t).item()
    ridge = reg.ridge_filter(mu, weight_decay=1.0 / t).item()
    assert ridge - 1e-12 <= gd <= 2 * ridge + 1e-12


def test_early_stopping_index():
    v = torch.tensor([5.0, 4.0, 3.0, 3.5, 3.2, 3.1, 2.0])
    assert reg.early_stopping_index(v, patience=3) == 2
    assert reg.early_stopping_index(v, patience=4) == 6


def test_all_masks_and_linear_dropout_exact():
    masks, probs = reg.all_masks(4, keep_prob=0.3)
    assert masks.shape == (16, 4) and abs(probs.sum().item() - 1) < 1e-14
    assert {tuple(r) for r in masks.int().tolist()} == set(itertools.product([0, 1], repeat=4))
    assert torch.allclose(probs @ masks, torch.full((4,), 0.3, dtype=torch.float64))  # E b = p


def test_dropout_mask_rate_and_mlp_shapes():
    m = reg.dropout_mask((20000,), keep_prob=0.8, generator=torch_generator(1))
    assert set(m.unique().tolist()) <= {0.0, 1.0} and abs(m.mean().item() - 0.8) < 0.02
    g = torch_generator(2)
    W1, W2, w3 = (torch.randn(5, 3, generator=g, dtype=torch.float64), torch.randn(4, 5, generator=g, dtype=torch.float64),
                  torch.randn(4, generator=g, dtype=torch.float64))
    x = torch.randn(7, 3, generator=g, dtype=torch.float64)
    out = reg.dropout_mlp(x, W1, W2, w3, torch.ones(2, 5, dtype=torch.float64))
    ref = torch.tanh(torch.relu(x @ W1.T) @ W2.T) @ w3
    assert out.shape == (2, 7) and torch.allclose(out[0], ref)


@settings(max_examples=25, deadline=None)
@given(s=st.integers(-40, 40), seed=st.integers(0, 1000))
def test_circular_shift_matches_roll(s, seed):
    X = torch.randn(3, 7, generator=torch_generator(seed), dtype=torch.float64)
    assert torch.equal(reg.circular_shift(X, torch.full((3,), s)), torch.roll(X, s, dims=1))


def test_invariance_gap_and_augmentation():
    w_const = torch.ones(8, dtype=torch.float64)
    X = torch.randn(10, 8, generator=torch_generator(3), dtype=torch.float64)
    assert reg.shift_invariance_gap(lambda Z: Z @ w_const, X) < 1e-12
    assert reg.shift_invariance_gap(lambda Z: Z[:, 0], X) > 0.1
    g = torch_generator(4)
    y = torch.where(torch.rand(100, generator=g) < 0.5, -1.0, 1.0).double()
    bump = torch.zeros(100, 8, dtype=torch.float64)
    bump[:, 0] = 1.0
    Xb = 0.3 * torch.randn(100, 8, generator=g, dtype=torch.float64) + y[:, None] * bump
    y01 = (y + 1) / 2
    w0 = rg.logistic_gd(Xb, y01, lr=1.0, steps=300, fit_bias=True).w
    w1 = rg.logistic_gd(Xb, y01, lr=1.0, steps=300, fit_bias=True,
                        augment=reg.random_circular_shifts, generator=torch_generator(5)).w
    assert (w1.std() / w1.abs().mean()).item() < 0.5 * (w0.std() / w0.abs().mean()).item()


def test_random_circular_shifts_draws_one_shift_per_row():
    X = torch.arange(12.0).reshape(3, 4)
    out = reg.random_circular_shifts(X, generator=torch_generator(0))
    shifts = torch.randint(0, 4, (3,), generator=torch_generator(0))
    assert torch.equal(out, reg.circular_shift(X, shifts))
    assert all(torch.equal(o, torch.roll(x, s)) for o, x, s in zip(out, X, shifts.tolist()))


def test_bad_inputs():
    X, y = _data()
    with pytest.raises(ValueError, match="weight_decay must be >= 0"):
        reg.ridge_solution(X, y, weight_decay=-1.0)
    with pytest.raises(ValueError, match="X must be a 2-D"):
        reg.hessian_eigh(torch.ones(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="weight_decay must be > 0"):
        reg.ridge_filter(torch.ones(2, dtype=torch.float64), weight_decay=0.0)
    with pytest.raises(ValueError, match="steps must be >= 0"):
        reg.gd_filter(torch.ones(2, dtype=torch.float64), lr=0.1, steps=-1)
    with pytest.raises(ValueError, match="prior_std must be > 0"):
        reg.prior_weight_decay(noise_std=1.0, prior_std=0.0, n=3)
    with pytest.raises(ValueError, match="w must have shape"):
        reg.gaussian_log_posterior(X, y, torch.zeros(2, dtype=torch.float64), noise_std=1.0, prior_std=1.0)
    with pytest.raises(ValueError, match="patience must be >= 1"):
        reg.early_stopping_index(torch.ones(3), patience=0)
    with pytest.raises(ValueError, match="keep_prob must be <= 1"):
        reg.dropout_mask((3,), keep_prob=1.5, generator=torch_generator(0))
    with pytest.raises(ValueError, match="k must be <= 20"):
        reg.all_masks(21, keep_prob=0.5)
    with pytest.raises(ValueError, match="masks must have shape"):
        reg.dropout_mlp(torch.ones(2, 3), torch.ones(5, 3), torch.ones(4, 5), torch.ones(4), torch.ones(1, 4))
    with pytest.raises(ValueError, match="shifts must have shape"):
        reg.circular_shift(torch.ones(2, 3), torch.zeros(3))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        reg.random_circular_shifts(torch.ones(2, 3), generator=0)
