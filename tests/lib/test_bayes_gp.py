"""Tests for flt_lib.bayes.gp: GP regression against closed forms, kernel ridge and Bayesian linear regression."""

import math

import pytest
import torch

from flt_lib.bayes import gp, linear
from flt_lib.flt import ntk
from flt_lib.rng import torch_generator


def _data(n=12, d=2, seed=0):
    g = torch_generator(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    return X, torch.sin(X[:, 0]) + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)


def test_rbf_kernel_matches_loop():
    X, _ = _data(5)
    K = gp.rbf_kernel(X, X[:3], lengthscale=0.7, variance=2.0)
    loop = torch.tensor([[2.0 * math.exp(-((a - b) ** 2).sum().item() / (2 * 0.49)) for b in X[:3]] for a in X],
                        dtype=torch.float64)
    assert torch.allclose(K, loop, atol=1e-14)


def test_posterior_mean_is_kernel_ridge_and_cov_is_schur_complement():
    X, y = _data()
    Xs = torch.linspace(-3, 3, 7, dtype=torch.float64)[:, None].repeat(1, 2)
    K, Ks, Kss = (gp.rbf_kernel(a, b, lengthscale=0.8) for a, b in [(X, X), (Xs, X), (Xs, Xs)])
    post = gp.gp_posterior(K, y, Ks, Kss, noise_var=0.05)
    assert torch.allclose(post.mean, ntk.kernel_regression(K, y, Ks, ridge=0.05), atol=1e-10)
    A = torch.linalg.inv(K + 0.05 * torch.eye(12, dtype=torch.float64))
    assert torch.allclose(post.cov, Kss - Ks @ A @ Ks.T, atol=1e-10)
    assert (post.var >= 0).all()


def test_log_marginal_likelihood_is_gaussian_log_density():
    X, y = _data()
    K = gp.rbf_kernel(X, X, lengthscale=1.3, variance=0.7)
    A = K + 0.1 * torch.eye(12, dtype=torch.float64)
    ref = -0.5 * y @ torch.linalg.solve(A, y) - 0.5 * torch.linalg.slogdet(A).logabsdet - 6 * math.log(2 * math.pi)
    assert gp.log_marginal_likelihood(K, y, noise_var=0.1) == pytest.approx(ref.item(), abs=1e-10)


def test_linear_kernel_gp_is_bayesian_linear_regression():
    X, y = _data(d=3)
    Xs = torch.randn(4, 3, generator=torch_generator(9), dtype=torch.float64)
    sigma2, noise = 1.5, 0.2
    K, Ks, Kss = (gp.linear_kernel(a, b, variance=sigma2) for a, b in [(X, X), (Xs, X), (Xs, Xs)])
    post = gp.gp_posterior(K, y, Ks, Kss, noise_var=noise)
    w = linear.blr_posterior(X, y, prior_var=sigma2 / 3, noise_var=noise)
    mean, var = linear.blr_predictive(w, Xs)
    assert torch.allclose(post.mean, mean, atol=1e-10) and torch.allclose(post.var, var, atol=1e-10)


def test_sample_gp_covariance():
    x = torch.linspace(0, 1, 4, dtype=torch.float64)[:, None]
    K = gp.rbf_kernel(x, x, lengthscale=0.5)
    F = gp.sample_gp(K, 20000, generator=torch_generator(4))
    se = torch.sqrt((K.diagonal()[:, None] * K.diagonal()[None, :] + K**2) / 20000)
    assert ((torch.cov(F.T) - K).abs() / se).max() < 4.5


def test_bad_inputs():
    X, y = _data()
    K = gp.rbf_kernel(X, X, lengthscale=1.0)
    with pytest.raises(ValueError, match="lengthscale must be > 0"):
        gp.rbf_kernel(X, X, lengthscale=0.0)
    with pytest.raises(ValueError, match="X2 must have shape"):
        gp.linear_kernel(X, torch.ones(3, 5, dtype=torch.float64))
    with pytest.raises(ValueError, match="y must have shape"):
        gp.gp_posterior(K, y[:3], K, K, noise_var=0.1)
    with pytest.raises(ValueError, match="K_test must have shape"):
        gp.gp_posterior(K, y, K[:2], K, noise_var=0.1)
    with pytest.raises(ValueError, match="not positive definite"):
        gp.log_marginal_likelihood(-K, y, noise_var=0.0)
    with pytest.raises(ValueError, match="noise_var must be >= 0"):
        gp.log_marginal_likelihood(K, y, noise_var=-1.0)
    with pytest.raises(ValueError, match="K must have shape"):
        gp.sample_gp(K[:3], 2, generator=torch_generator(0))
