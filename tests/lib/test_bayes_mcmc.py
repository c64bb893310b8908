"""Tests for flt_lib.bayes.mcmc: MH kernels (detailed balance), random-walk Metropolis, ESS."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.bayes import mcmc
from flt_lib.bayes.targets import Gaussian
from flt_lib.rng import torch_generator


def _random_chain(K, seed, sparse=False):
    g = torch_generator(seed)
    q = torch.rand(K, generator=g, dtype=torch.float64) + 0.05
    q = q / q.sum()
    Q = torch.rand(K, K, generator=g, dtype=torch.float64)
    if sparse:  # a ring: only neighbours are proposed
        idx = torch.arange(K)
        mask = torch.zeros(K, K, dtype=torch.bool)
        mask[idx, (idx + 1) % K] = mask[idx, (idx - 1) % K] = True
        Q = Q * mask
    return q, Q / Q.sum(1, keepdim=True)


@settings(max_examples=25, deadline=None)
@given(K=st.integers(2, 9), seed=st.integers(0, 10_000), sparse=st.booleans())
def test_mh_kernel_detailed_balance_and_stationarity(K, seed, sparse):
    if sparse and K < 3:
        sparse = False
    q, Q = _random_chain(K, seed, sparse)
    P = mcmc.mh_transition_matrix(q, Q)
    assert torch.allclose(P.sum(1), torch.ones(K, dtype=torch.float64), atol=1e-14)
    assert (P >= 0).all()
    flow = q[:, None] * P
    assert (flow - flow.T).abs().max() < 1e-12
    assert (mcmc.stationary_distribution(P) - q).abs().max() < 1e-10


def test_mh_kernel_matches_loop():
    q, Q = _random_chain(5, 3)
    P = mcmc.mh_transition_matrix(q, Q)
    loop = torch.zeros(5, 5, dtype=torch.float64)
    for i in range(5):
        for j in range(5):
            if i != j:
                loop[i, j] = Q[i, j] * min(1.0, (q[j] * Q[j, i] / (q[i] * Q[i, j])).item())
        loop[i, i] = 1 - loop[i].sum()
    assert torch.allclose(P, loop, atol=1e-15)


def test_metropolis_without_hastings_correction_is_wrong():
    # With an asymmetric proposal, dropping the Q terms breaks stationarity: the check can fail.
    q, Q = _random_chain(6, 7)
    acc = torch.clamp(q[None, :] / q[:, None], max=1.0)
    P = Q * acc
    P.fill_diagonal_(0.0)
    P += torch.diag(1 - P.sum(1))
    assert (mcmc.stationary_distribution(P) - q).abs().max() > 1e-3


def test_rwm_gaussian_moments_within_ess_error():
    target = Gaussian.from_cov(torch.tensor([1.0, -1.0], dtype=torch.float64),
                               torch.tensor([[1.0, 0.6], [0.6, 1.0]], dtype=torch.float64))
    g = torch_generator(0)
    theta0 = torch.randn(20, 2, generator=g, dtype=torch.float64)
    chain = mcmc.random_walk_metropolis(target.log_prob, theta0, step=1.2, n_steps=1500, generator=g)
    s = chain.samples[300:]
    assert s.shape == (1200, 20, 2) and chain.n_evals == 1500
    z = (s.mean((0, 1)) - target.mean) / mcmc.mc_standard_error(s)
    assert z.abs().max() < 4.5
    assert 0.2 < chain.accept_rate.mean() < 0.7


def test_rwm_acceptance_near_limit():
    g = torch_generator(1)
    d = 50
    chain = mcmc.random_walk_metropolis(lambda t: -0.5 * (t**2).sum(1),
                                        torch.randn(100, d, generator=g, dtype=torch.float64),
                                        step=2.38 / math.sqrt(d), n_steps=300, generator=g, thin=300)
    assert chain.samples.shape == (1, 100, d)
    assert abs(chain.accept_rate.mean().item() - 0.2415) < 0.01  # finite-d value at d = 50
    assert mcmc.rwm_limit_acceptance(2.38).item() == pytest.approx(0.2340, abs=1e-4)


def _ar1(rho, T, C, seed):
    g = torch_generator(seed)
    e = torch.randn(T, C, generator=g, dtype=torch.float64)
    x = torch.empty_like(e)
    x[0] = e[0] / math.sqrt(1 - rho**2)
    for t in range(1, T):
        x[t] = rho * x[t - 1] + e[t]
    return x


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9, -0.5])
def test_ess_of_ar1_matches_closed_form(rho):
    x = _ar1(rho, 5000, 4, seed=int(10 * rho) + 20)
    tau = (1 + rho) / (1 - rho)
    assert mcmc.effective_sample_size(x).item() == pytest.approx(x.numel() / tau, rel=0.12)
    acf = mcmc.autocorrelation(x, max_lag=3)
    assert torch.allclose(acf, torch.tensor([rho**k for k in range(4)], dtype=torch.float64), atol=0.05)


def test_ess_shapes_and_standard_error():
    x = torch.randn(400, 3, 2, generator=torch_generator(5), dtype=torch.float64)
    ess = mcmc.effective_sample_size(x)
    assert ess.shape == (2,) and ((ess > 800) & (ess < 1600)).all()
    se = mcmc.mc_standard_error(x[:, :, 0])
    assert se.ndim == 0 and se.item() == pytest.approx(1 / math.sqrt(1200), rel=0.2)
    # Chains stuck at different levels: the between-chain spread lowers the ESS.
    stuck = x[:, :, 0] * 0.01 + torch.tensor([0.0, 5.0, -5.0], dtype=torch.float64)
    assert mcmc.effective_sample_size(stuck).item() < 10


def test_bad_inputs():
    q, Q = _random_chain(3, 0)
    with pytest.raises(ValueError, match="q must be positive and sum to 1"):
        mcmc.mh_transition_matrix(q * 2, Q)
    with pytest.raises(ValueError, match="proposal must have shape"):
        mcmc.mh_transition_matrix(q, Q[:2])
    bad = Q.clone()
    bad[0, 1], bad[0, 2] = 0.0, Q[0, 1] + Q[0, 2]
    with pytest.raises(ValueError, match="exactly when"):
        mcmc.mh_transition_matrix(q, bad)
    with pytest.raises(ValueError, match="P must be square"):
        mcmc.stationary_distribution(torch.ones(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="theta0 must be a 2-D tensor"):
        mcmc.random_walk_metropolis(lambda t: t.sum(1), torch.zeros(3), step=1.0, n_steps=2,
                                    generator=torch_generator(0))
    with pytest.raises(ValueError, match="thin must be <= n_steps"):
        mcmc.random_walk_metropolis(lambda t: t.sum(1), torch.zeros(1, 3), step=1.0, n_steps=2,
                                    generator=torch_generator(0), thin=3)
    with pytest.raises(ValueError, match="step must be > 0"):
        mcmc.random_walk_metropolis(lambda t: t.sum(1), torch.zeros(1, 3), step=0.0, n_steps=2,
                                    generator=torch_generator(0))
    with pytest.raises(ValueError, match="at least 4 draws"):
        mcmc.effective_sample_size(torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"x must have shape \(T,\)"):
        mcmc.autocorrelation(torch.zeros(5, 2, 2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="max_lag must be <= 4"):
        mcmc.autocorrelation(torch.zeros(5, dtype=torch.float64), max_lag=5)
    with pytest.raises(ValueError, match="log_ratio must be a 1-D tensor"):
        mcmc.metropolis_accept(torch.zeros(2, 2), generator=torch_generator(0))
    with pytest.raises(ValueError, match="ell must be >= 0"):
        mcmc.rwm_limit_acceptance(-1.0)
    with pytest.raises(ValueError, match="accept_rate must have shape"):
        mcmc.Chain(torch.zeros(2, 3, 1), torch.zeros(2), 1, 2)
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        mcmc.mc_standard_error([1.0, 2.0])


def test_ess_is_capped_at_ct_log10_ct():
    """An alternating (antithetic) chain has tau -> 0; the ESS stops at C T log10(C T)."""
    T, C = 1000, 10
    x = torch.tensor([(-1.0) ** t for t in range(T)], dtype=torch.float64)[:, None].repeat(1, C)
    x = x + 1e-3 * torch.randn(T, C, generator=torch_generator(0), dtype=torch.float64)
    ess = mcmc.effective_sample_size(x).item()
    assert ess == pytest.approx(C * T * math.log10(C * T), rel=1e-12)
