"""Tests for flt_lib.bayes.adaptation: dual averaging against a transcription of Hoffman &
Gelman (2014, Algorithm 5), the window schedule, warm-up on a Gaussian, bad input."""

import math

import pytest
import torch

from flt_lib.bayes import adaptation, targets
from flt_lib.rng import torch_generator


def test_dual_averaging_matches_algorithm():
    g = torch_generator(0)
    accepts = torch.rand(40, generator=g, dtype=torch.float64).tolist()
    s = adaptation.dual_averaging_init(0.2)
    mu, hbar, lbar = math.log(2.0), 0.0, 0.0
    for m, a in enumerate(accepts, start=1):
        s = adaptation.dual_averaging_update(s, a, target=0.8, gamma=0.05, t0=10, kappa=0.75)
        hbar = (1 - 1 / (m + 10)) * hbar + (0.8 - a) / (m + 10)
        le = mu - math.sqrt(m) / 0.05 * hbar
        lbar = m ** -0.75 * le + (1 - m ** -0.75) * lbar
        assert abs(s.log_step - le) < 1e-12 and abs(s.log_step_bar - lbar) < 1e-12
    # H_t is the damped average of delta - alpha
    assert abs(s.h_bar - sum(0.8 - a for a in accepts) / (40 + 10)) < 1e-12


def test_dual_averaging_moves_the_right_way():
    s = adaptation.dual_averaging_init(0.1)
    up = adaptation.dual_averaging_update(s, 1.0)
    down = adaptation.dual_averaging_update(s, 0.0)
    assert up.log_step > down.log_step


def test_mass_windows():
    ends = adaptation.mass_windows(1000)
    assert ends == [175, 225, 325, 900]
    assert adaptation.mass_windows(200)[-1] == 180


def test_warmup_on_gaussian_finds_variances_and_acceptance():
    sd = torch.tensor([0.1, 0.3, 1.0, 3.0], dtype=torch.float64)
    tg = targets.Gaussian(torch.zeros(4, dtype=torch.float64), torch.diag(sd**-2))
    g = torch_generator(1)
    wu = adaptation.warmup(tg.log_prob, tg.grad_log_prob, torch.randn(16, 4, generator=g, dtype=torch.float64),
                           n_leapfrog=8, n_warmup=300, generator=g)
    ratio = wu.inv_mass / sd**2
    assert (ratio > 0.5).all() and (ratio < 2).all(), ratio
    assert abs(wu.accept[-30:].mean().item() - 0.65) < 0.15
    assert wu.steps.shape == (300,) and wu.theta.shape == (16, 4)


def test_bad_input():
    with pytest.raises(ValueError, match="step0 must be > 0"):
        adaptation.dual_averaging_init(0.0)
    s = adaptation.dual_averaging_init(0.1)
    with pytest.raises(ValueError, match="accept must be <= 1"):
        adaptation.dual_averaging_update(s, 1.5)
    with pytest.raises(ValueError, match="target must be < 1"):
        adaptation.dual_averaging_update(s, 0.5, target=1.0)
    with pytest.raises(ValueError, match="kappa must be > 0.5"):
        adaptation.dual_averaging_update(s, 0.5, kappa=0.5)
    with pytest.raises(TypeError, match="state must be a DualAveraging"):
        adaptation.dual_averaging_update(0.1, 0.5)
    with pytest.raises(ValueError, match="n_warmup must be >= 20"):
        adaptation.mass_windows(10)
    tg = targets.Gaussian(torch.zeros(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"theta0 must be a 2-D tensor \(C, d\)"):
        adaptation.warmup(tg.log_prob, tg.grad_log_prob, torch.zeros(2, dtype=torch.float64),
                          n_leapfrog=4, n_warmup=50, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        adaptation.warmup(tg.log_prob, tg.grad_log_prob, torch.zeros(3, 2, dtype=torch.float64),
                          n_leapfrog=4, n_warmup=50, generator=0)
