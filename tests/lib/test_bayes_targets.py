"""Tests for flt_lib.bayes.targets: gradients against autograd, minibatch estimates are unbiased."""

import math

import pytest
import torch

from flt_lib.bayes import targets
from flt_lib.rng import torch_generator


def _autograd(f, theta):
    t = theta.clone().requires_grad_(True)
    return torch.autograd.grad(f(t).sum(), t)[0]


def _logistic(n=15, d=3, seed=0):
    g = torch_generator(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.where(torch.rand(n, generator=g, dtype=torch.float64) < 0.5, 1.0, -1.0).double()
    return targets.LogisticPosterior(X, y, prior_var=2.0)


def test_gaussian_log_prob_and_gradient():
    cov = torch.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
    mean = torch.tensor([1.0, -2.0], dtype=torch.float64)
    tg = targets.Gaussian.from_cov(mean, cov)
    theta = torch.randn(7, 2, generator=torch_generator(1), dtype=torch.float64)
    z = theta - mean
    ref = -0.5 * (z * torch.linalg.solve(cov, z.T).T).sum(1)  # log N(theta; mean, cov) + const
    lp = tg.log_prob(theta)
    assert torch.allclose(lp - lp[0], ref - ref[0], atol=1e-12)
    assert torch.allclose(tg.grad_log_prob(theta), _autograd(tg.log_prob, theta), atol=1e-12)
    assert torch.allclose(tg.cov, cov, atol=1e-12)


@pytest.mark.parametrize("make", ["mixture", "logistic"])
def test_gradients_match_autograd_and_minibatches_are_unbiased(make):
    if make == "mixture":
        tg = targets.MixturePosterior(targets.welling_teh_data(12, generator=torch_generator(2)))
        d = 2
    else:
        tg = _logistic()
        d = 3
    theta = torch.randn(4, d, generator=torch_generator(3), dtype=torch.float64)
    full = tg.grad_log_prob(theta)
    assert torch.allclose(full, _autograd(tg.log_prob, theta), atol=1e-10)
    n = tg.x.shape[0] if make == "mixture" else tg.X.shape[0]
    # Average the B = 1 estimate over every index: exactly the full gradient (unbiasedness).
    est = torch.stack([tg.grad_log_prob(theta, torch.full((4, 1), i)) for i in range(n)]).mean(0)
    assert torch.allclose(est, full, atol=1e-10)
    # A batch holding every index once is the full gradient.
    batch = torch.arange(n).repeat(4, 1)
    assert torch.allclose(tg.grad_log_prob(theta, batch), full, atol=1e-10)


def test_mixture_modes_and_data():
    x = targets.welling_teh_data(2000, generator=torch_generator(4))
    assert x.shape == (2000,) and abs(x.mean().item() - 0.5) < 0.1 and abs(x.var().item() - 2.25) < 0.2
    tg = targets.MixturePosterior(targets.welling_teh_data(100, generator=torch_generator(0)))
    grid = targets.grid_posterior(tg.log_prob, (-3.0, -4.0), (4.0, 4.0), 200)
    assert grid.weights.sum().item() == pytest.approx(1.0)
    # Two modes of comparable mass, at theta_2 > 0 and theta_2 < 0.
    assert 0.3 < grid.prob(grid.points[:, 1] > 0) < 0.7


def test_grid_posterior_of_a_gaussian():
    tg = targets.Gaussian.from_cov(torch.tensor([0.5, -0.5], dtype=torch.float64),
                                   torch.tensor([[0.3, 0.1], [0.1, 0.2]], dtype=torch.float64))
    grid = targets.grid_posterior(tg.log_prob, (-3.0, -3.0), (3.0, 3.0), 301)
    assert torch.allclose(grid.mean, tg.mean, atol=1e-6)
    assert grid.prob(grid.points[:, 0] > 0.5) == pytest.approx(0.5, abs=0.01)


def test_bad_inputs():
    with pytest.raises(ValueError, match="precision must be symmetric"):
        targets.Gaussian(torch.zeros(2, dtype=torch.float64), torch.tensor([[1.0, 0.5], [0.0, 1.0]], dtype=torch.float64))
    with pytest.raises(ValueError, match="precision must be positive definite"):
        targets.Gaussian(torch.zeros(2, dtype=torch.float64), -torch.eye(2, dtype=torch.float64))
    tg = targets.MixturePosterior(torch.zeros(5, dtype=torch.float64))
    with pytest.raises(ValueError, match="theta must have shape"):
        tg.log_prob(torch.zeros(3, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"batch indices must lie in \[0, 5\)"):
        tg.grad_log_prob(torch.zeros(2, 2, dtype=torch.float64), torch.full((2, 1), 5))
    with pytest.raises(TypeError, match="batch must hold integer indices"):
        tg.grad_log_prob(torch.zeros(2, 2, dtype=torch.float64), torch.zeros(2, 1))
    with pytest.raises(ValueError, match="var_x must be > 0"):
        targets.MixturePosterior(torch.zeros(5, dtype=torch.float64), var_x=0.0)
    with pytest.raises(ValueError, match="y must contain only -1 and \\+1"):
        targets.LogisticPosterior(torch.zeros(2, 2, dtype=torch.float64), torch.zeros(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="n must be >= 1"):
        targets.welling_teh_data(0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="lo and hi must be 2-D corners"):
        targets.grid_posterior(tg.log_prob, (1.0, 1.0), (0.0, 2.0), 10)
