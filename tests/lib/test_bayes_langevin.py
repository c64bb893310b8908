"""Tests for flt_lib.bayes.langevin: stationary variances against closed forms, heavy ball, SGLD."""

import math

import pytest
import torch

from flt_lib.bayes import langevin, mcmc, targets
from flt_lib.optim import gd
from flt_lib.rng import torch_generator

STD = targets.Gaussian(torch.zeros(1, dtype=torch.float64), torch.eye(1, dtype=torch.float64))


def _variance_z(s, var):
    """z-score of the sample variance of draws s (T, C, 1) against var, with the ESS of s^2."""
    sq = s**2
    return (sq.mean() - var).item() / mcmc.mc_standard_error(sq[:, :, 0]).item()


def test_ula_variance_is_one_over_one_minus_eps_over_four():
    g = torch_generator(0)
    eps = 0.4
    chain = langevin.ula(STD.grad_log_prob, torch.randn(2000, 1, generator=g, dtype=torch.float64),
                         step=eps, n_steps=300, generator=g)
    s = chain.samples[50:]
    exact = langevin.ula_gaussian_variance(eps)
    assert exact == pytest.approx(1 / 0.9)
    assert abs(_variance_z(s, exact)) < 4.5
    assert abs(_variance_z(s, 1.0)) > 10  # the bias is resolved: ULA does not sample N(0, 1)


def test_mala_removes_the_bias():
    g = torch_generator(1)
    chain = langevin.mala(STD.log_prob, STD.grad_log_prob, torch.randn(2000, 1, generator=g, dtype=torch.float64),
                          step=0.4, n_steps=300, generator=g)
    assert abs(_variance_z(chain.samples[50:], 1.0)) < 4.5
    assert 0.8 < chain.accept_rate.mean() < 1.0


def test_underdamped_variance_closed_form():
    g = torch_generator(2)
    eps, gamma = 0.5, 1.0
    chain = langevin.underdamped_langevin(STD.grad_log_prob, torch.randn(2000, 1, generator=g, dtype=torch.float64),
                                          step=eps, friction=gamma, n_steps=400, generator=g,
                                          p0=torch.randn(2000, 1, generator=g, dtype=torch.float64))
    exact = langevin.underdamped_gaussian_variance(eps, gamma)
    assert exact == pytest.approx(3.0 / 2.75)
    assert abs(_variance_z(chain.samples[100:], exact)) < 4.5
    # gamma eps = 1 is ULA with step 2 eps^2.
    assert langevin.underdamped_gaussian_variance(0.3, 1 / 0.3) == pytest.approx(langevin.ula_gaussian_variance(0.18))


def test_noise_free_underdamped_is_heavy_ball():
    tg = targets.Gaussian.from_cov(torch.tensor([1.0, -1.0], dtype=torch.float64),
                                   torch.tensor([[1.0, 0.3], [0.3, 0.5]], dtype=torch.float64))
    eps, gamma, T = 0.3, 0.8, 40
    theta0 = torch.tensor([[2.0, 2.0]], dtype=torch.float64)
    chain = langevin.underdamped_langevin(tg.grad_log_prob, theta0, step=eps, friction=gamma, n_steps=T,
                                          generator=torch_generator(0), temperature=0.0)
    hb = gd.heavy_ball(
        lambda x: -tg.grad_log_prob(x[None])[0], theta0[0], lr=eps**2, momentum=1 - gamma * eps,
        steps=T,
    )
    assert torch.allclose(chain.samples[:, 0], hb[1:], atol=1e-12)


def test_sgld_with_exact_gradients_is_ula():
    g = torch_generator(3)
    eps = 0.2
    chain = langevin.sgld(lambda t, b: STD.grad_log_prob(t), torch.randn(2000, 1, generator=g, dtype=torch.float64),
                          n_data=10, batch_size=2, step_sizes=torch.full((300,), eps, dtype=torch.float64),
                          generator=g)
    assert abs(_variance_z(chain.samples[50:], langevin.ula_gaussian_variance(eps))) < 4.5


def test_polynomial_decay_endpoints():
    eps = langevin.polynomial_decay(0.01, 0.0001, 1000, power=0.55)
    assert eps[0].item() == pytest.approx(0.01) and eps[-1].item() == pytest.approx(0.0001)
    assert (eps[1:] < eps[:-1]).all()


def test_bad_inputs():
    z = torch.zeros(2, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="step must be < 4 var"):
        langevin.ula_gaussian_variance(4.0)
    with pytest.raises(ValueError, match="step must be > 0"):
        langevin.ula(STD.grad_log_prob, z, step=0.0, n_steps=2, generator=torch_generator(0))
    with pytest.raises(ValueError, match="friction \\* step must be <= 1"):
        langevin.underdamped_langevin(STD.grad_log_prob, z, step=0.5, friction=3.0, n_steps=2,
                                      generator=torch_generator(0))
    with pytest.raises(ValueError, match="p0 must have shape"):
        langevin.underdamped_langevin(STD.grad_log_prob, z, step=0.5, friction=1.0, n_steps=2,
                                      generator=torch_generator(0), p0=torch.zeros(3, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="friction must be > 0"):
        langevin.underdamped_gaussian_variance(0.1, -1.0)
    with pytest.raises(ValueError, match="friction must be > 0"):
        langevin.underdamped_gaussian_variance(0.1, 0.0)  # no stationary law at gamma = 0
    with pytest.raises(ValueError, match=r"friction \* step must be in \(0, 1\]"):
        langevin.underdamped_gaussian_variance(0.5, 3.0)
    with pytest.raises(ValueError, match="batch_size must be <= 5"):
        langevin.sgld(lambda t, b: t, z, n_data=5, batch_size=6, step_sizes=torch.ones(3, dtype=torch.float64),
                      generator=torch_generator(0))
    with pytest.raises(ValueError, match="step_sizes must be > 0"):
        langevin.sgld(lambda t, b: t, z, n_data=5, batch_size=1, step_sizes=torch.zeros(3, dtype=torch.float64),
                      generator=torch_generator(0))
    with pytest.raises(ValueError, match="end must be < start"):
        langevin.polynomial_decay(0.1, 0.2, 10)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        langevin.mala(STD.log_prob, STD.grad_log_prob, z, step=0.1, n_steps=2, generator=1)
