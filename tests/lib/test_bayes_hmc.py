"""Tests for flt_lib.bayes.hmc: leapfrog is reversible, volume-preserving and second order; HMC samples."""

import math

import pytest
import torch

from flt_lib.bayes import hmc, mcmc, targets
from flt_lib.rng import torch_generator
from flt_lib.stats import loglog_slope


def _logistic():
    g = torch_generator(0)
    X = torch.randn(20, 2, generator=g, dtype=torch.float64)
    y = torch.where(X[:, 0] + 0.5 * torch.randn(20, generator=g, dtype=torch.float64) > 0, 1.0, -1.0).double()
    return targets.LogisticPosterior(X, y, prior_var=1.0)


def test_leapfrog_is_reversible():
    tg = _logistic()
    g = torch_generator(1)
    theta, p = torch.randn(5, 2, generator=g, dtype=torch.float64), torch.randn(5, 2, generator=g, dtype=torch.float64)
    t1, p1 = hmc.leapfrog(tg.grad_log_prob, theta, p, step=0.1, n_steps=25)
    t2, p2 = hmc.leapfrog(tg.grad_log_prob, t1, -p1, step=0.1, n_steps=25)
    assert (t2 - theta).abs().max() < 1e-12 and (p2 + p).abs().max() < 1e-12


def test_leapfrog_preserves_volume():
    tg = _logistic()

    def flow(z):
        t, p = hmc.leapfrog(tg.grad_log_prob, z[None, :2], z[None, 2:], step=0.2, n_steps=10)
        return torch.cat([t[0], p[0]])

    z = torch.tensor([0.3, -0.7, 1.1, 0.4], dtype=torch.float64)
    J = torch.autograd.functional.jacobian(flow, z)
    assert abs(torch.linalg.det(J).item() - 1) < 1e-8
    # The explicit Euler map does not preserve volume.
    def euler_flow(z):
        t, p = hmc.euler(tg.grad_log_prob, z[None, :2], z[None, 2:], step=0.2, n_steps=10)
        return torch.cat([t[0], p[0]])
    assert abs(torch.linalg.det(torch.autograd.functional.jacobian(euler_flow, z)).item() - 1) > 1e-2


def test_leapfrog_energy_error_is_second_order():
    tg = _logistic()
    theta = torch.tensor([[0.5, -0.5]], dtype=torch.float64)
    p = torch.tensor([[1.0, 0.7]], dtype=torch.float64)
    H0 = hmc.hamiltonian(tg.log_prob, theta, p)
    steps, errs = [], []
    for L in [8, 16, 32, 64, 128]:
        t1, p1 = hmc.leapfrog(tg.grad_log_prob, theta, p, step=1.0 / L, n_steps=L)
        steps.append(1.0 / L)
        errs.append((hmc.hamiltonian(tg.log_prob, t1, p1) - H0).abs().item())
    slope, _ = loglog_slope(steps, errs)
    assert abs(slope - 2) < 0.15


def test_euler_multiplies_oscillator_energy_by_one_plus_eps_squared():
    tg = targets.Gaussian(torch.zeros(1, dtype=torch.float64), torch.eye(1, dtype=torch.float64))
    theta, p = torch.tensor([[1.0]], dtype=torch.float64), torch.tensor([[0.5]], dtype=torch.float64)
    H0 = hmc.hamiltonian(tg.log_prob, theta, p)
    eps, k = 0.1, 50
    t1, p1 = hmc.euler(tg.grad_log_prob, theta, p, step=eps, n_steps=k)
    ratio = (hmc.hamiltonian(tg.log_prob, t1, p1) / H0).item()
    assert ratio == pytest.approx((1 + eps**2) ** k, rel=1e-12)
    t2, p2 = hmc.leapfrog(tg.grad_log_prob, theta, p, step=eps, n_steps=k)
    assert abs(hmc.hamiltonian(tg.log_prob, t2, p2) / H0 - 1).item() < eps**2


def test_leapfrog_positions_follow_verlet():
    tg = _logistic()
    theta, p = torch.tensor([[0.2, 0.1]], dtype=torch.float64), torch.tensor([[0.3, -0.2]], dtype=torch.float64)
    eps, path = 0.05, [theta]
    for _ in range(6):
        theta, p = hmc.leapfrog(tg.grad_log_prob, theta, p, step=eps, n_steps=1)
        path.append(theta)
    for k in range(1, 6):
        lhs = path[k + 1] - 2 * path[k] + path[k - 1]
        assert torch.allclose(lhs, eps**2 * tg.grad_log_prob(path[k]), atol=1e-14)


def test_hmc_samples_gaussian():
    tg = targets.Gaussian.from_cov(torch.tensor([1.0, 0.0], dtype=torch.float64),
                                   torch.tensor([[1.0, 0.9], [0.9, 1.0]], dtype=torch.float64))
    g = torch_generator(2)
    chain = hmc.hmc(tg.log_prob, tg.grad_log_prob, torch.zeros(10, 2, dtype=torch.float64), step=0.2,
                    n_leapfrog=8, n_steps=400, generator=g, step_jitter=0.3)
    s = chain.samples[50:]
    z = (s.mean((0, 1)) - tg.mean) / mcmc.mc_standard_error(s)
    assert z.abs().max() < 4.5
    var = s.reshape(-1, 2).var(0)
    assert torch.allclose(var, torch.ones(2, dtype=torch.float64), atol=0.1)
    assert chain.evals_per_step == 10 and chain.accept_rate.min() > 0.7


def test_bad_inputs():
    grad = lambda t: -t
    z = torch.zeros(2, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="p must have shape"):
        hmc.leapfrog(grad, z, torch.zeros(2, 2, dtype=torch.float64), step=0.1, n_steps=1)
    with pytest.raises(ValueError, match="step must be > 0"):
        hmc.leapfrog(grad, z, z, step=-0.1, n_steps=1)
    with pytest.raises(ValueError, match="step must have shape"):
        hmc.leapfrog(grad, z, z, step=torch.ones(3, dtype=torch.float64), n_steps=1)
    with pytest.raises(ValueError, match="n_steps must be >= 1"):
        hmc.euler(grad, z, z, step=0.1, n_steps=0)
    with pytest.raises(ValueError, match="theta must be a 2-D tensor"):
        hmc.hamiltonian(lambda t: t.sum(1), torch.zeros(3), torch.zeros(3))
    with pytest.raises(ValueError, match="step_jitter must be < 1"):
        hmc.hmc(lambda t: t.sum(1), grad, z, step=0.1, n_leapfrog=2, n_steps=2,
                generator=torch_generator(0), step_jitter=1.0)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        hmc.hmc(lambda t: t.sum(1), grad, z, step=0.1, n_leapfrog=2, n_steps=2, generator=None)


def test_mass_matrix_is_a_change_of_variables():
    """Leapfrog with M = diag(m) on theta equals unit-mass leapfrog on phi = sqrt(m) theta."""
    g = torch_generator(3)
    m = torch.tensor([4.0, 0.25, 9.0], dtype=torch.float64)
    prec = torch.tensor([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 3.0]], dtype=torch.float64)
    tg = targets.Gaussian(torch.zeros(3, dtype=torch.float64), prec)
    theta = torch.randn(4, 3, generator=g, dtype=torch.float64)
    p = torch.randn(4, 3, generator=g, dtype=torch.float64)
    t1, p1 = hmc.leapfrog(tg.grad_log_prob, theta, p, step=0.1, n_steps=7, inv_mass=1 / m)
    s = m.sqrt()
    grad_phi = lambda phi: tg.grad_log_prob(phi / s) / s
    f1, q1 = hmc.leapfrog(grad_phi, theta * s, p / s, step=0.1, n_steps=7)
    assert torch.allclose(t1, f1 / s, atol=1e-13) and torch.allclose(p1, q1 * s, atol=1e-13)
    H = hmc.hamiltonian(tg.log_prob, theta, p, inv_mass=1 / m)
    assert torch.allclose(H, -tg.log_prob(theta) + 0.5 * (p**2 / m).sum(1), atol=1e-14)


def test_hmc_with_mass_matrix_samples_ill_conditioned_gaussian():
    sd = torch.tensor([0.05, 1.0], dtype=torch.float64)
    tg = targets.Gaussian(torch.zeros(2, dtype=torch.float64), torch.diag(sd**-2))
    g = torch_generator(4)
    chain = hmc.hmc(tg.log_prob, tg.grad_log_prob, sd * torch.randn(20, 2, generator=g,
                    dtype=torch.float64), step=0.5, n_leapfrog=3, n_steps=300, generator=g,
                    step_jitter=0.2, inv_mass=sd**2)
    s = chain.samples
    z = (s.pow(2).mean((0, 1)) - sd**2) / mcmc.mc_standard_error(s.pow(2))
    assert z.abs().max() < 4.5 and chain.accept_rate.mean() > 0.9


def test_mass_matrix_bad_input():
    grad = lambda t: -t
    z = torch.zeros(2, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="inv_mass must have shape"):
        hmc.leapfrog(grad, z, z, step=0.1, n_steps=1, inv_mass=torch.ones(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="inv_mass must be > 0"):
        hmc.hamiltonian(lambda t: -t.sum(1), z, z, inv_mass=torch.zeros(3, dtype=torch.float64))
