"""Tests for flt_lib.feedforward.approximation (Section 2.4)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.feedforward import approximation as ap
from flt_lib.stats import loglog_slope
from flt_lib.rng import torch_generator


@settings(max_examples=25, deadline=None)
@given(st.floats(min_value=-30, max_value=30))
def test_tanh_from_sigmoid_matches_torch(z):
    t = torch.tensor([z], dtype=torch.float64)
    assert torch.allclose(ap.tanh_from_sigmoid(t), torch.tanh(t), atol=1e-14)


def test_tanh_from_sigmoid_bad_input():
    with pytest.raises(TypeError, match="z must have a floating-point dtype"):
        ap.tanh_from_sigmoid(torch.arange(3))


def test_gaussian_cdf_oracle():
    z = torch.tensor([-1.0, 0.0, 1.96], dtype=torch.float64)
    want = torch.tensor([0.15865525393145707, 0.5, 0.9750021048517795], dtype=torch.float64)
    assert torch.allclose(ap.gaussian_cdf(z), want, atol=1e-12)
    with pytest.raises(TypeError, match="z must be a torch.Tensor"):
        ap.gaussian_cdf([0.0])


def test_ridge_features_loop_vs_vectorised():
    gen = torch_generator(0)
    X, W, b = torch.randn(5, 3, generator=gen), torch.randn(4, 3, generator=gen), torch.randn(4, generator=gen)
    F = ap.ridge_features(X, W, b)
    for i in range(5):
        for j in range(4):
            assert math.isclose(F[i, j].item(), torch.sigmoid(W[j] @ X[i] + b[j]).item(), rel_tol=1e-6)
    with pytest.raises(ValueError, match="W must have shape \\(m, d\\)"):
        ap.ridge_features(X, torch.randn(4, 2), b)
    with pytest.raises(TypeError, match="activation must be callable"):
        ap.ridge_features(X, W, b, activation=3)


def test_random_ridge_units_1d():
    W, b = ap.random_ridge_units_1d(100, steepness=5.0, generator=torch_generator(1), lo=-2.0, hi=3.0)
    assert W.shape == (100, 1) and b.shape == (100,)
    assert torch.allclose(W.abs(), torch.full((100, 1), 5.0, dtype=torch.float64))
    centres = -b / W[:, 0]
    assert centres.min() >= -2.0 and centres.max() <= 3.0
    with pytest.raises(ValueError, match="steepness must be > 0.0"):
        ap.random_ridge_units_1d(3, steepness=0.0, generator=torch_generator(0))


def test_least_squares_outer_recovers_exact_network():
    gen = torch_generator(2)
    X = torch.randn(200, 2, generator=gen, dtype=torch.float64)
    W, b = torch.randn(5, 2, generator=gen, dtype=torch.float64), torch.randn(5, generator=gen, dtype=torch.float64)
    v = torch.randn(5, generator=gen, dtype=torch.float64)
    y = ap.ridge_features(X, W, b) @ v + 0.3
    fit = ap.least_squares_outer(ap.ridge_features(X, W, b), y, ridge=0.0)
    assert torch.allclose(fit[:-1], v, atol=1e-8) and abs(fit[-1].item() - 0.3) < 1e-8
    assert torch.allclose(ap.fit_ridge_network(X, y, W, b, ridge=0.0), y, atol=1e-8)
    with pytest.raises(ValueError, match="ridge must be >= 0.0"):
        ap.least_squares_outer(ap.ridge_features(X, W, b), y, ridge=-1.0)


def test_best_polynomial_rmse_oracle_and_floor():
    x = torch.linspace(-1, 1, 501, dtype=torch.float64)
    assert ap.best_polynomial_rmse(x, x**3 - x, 3) < 1e-12
    y = x.abs()
    floor = ap.best_polynomial_rmse(x, y, 3)
    # a cubic-activation network of any width equals the best cubic: the theorem of the notebook
    for m in [4, 30]:
        gen = torch_generator(m)
        W, b = torch.randn(m, 1, generator=gen, dtype=torch.float64), torch.randn(m, generator=gen, dtype=torch.float64)
        g = ap.fit_ridge_network(x[:, None], y, W, b, activation=lambda t: t**3)
        assert abs((g - y).pow(2).mean().sqrt().item() - floor) < 1e-6 * floor
    with pytest.raises(ValueError, match="degree must be <= 500"):
        ap.best_polynomial_rmse(x, y, 501)


def test_probit_target_matches_monte_carlo():
    gen = torch_generator(3)
    d = 4
    U = torch.randn(2, d, generator=gen, dtype=torch.float64)
    beta = torch.tensor([0.5, -0.5], dtype=torch.float64)
    X = torch.randn(10, d, generator=gen, dtype=torch.float64)
    W, b = ap.sample_probit_mixture_units(100_000, U, beta, s=1.5, tau=0.7, generator=torch_generator(4))
    mc = ap.maurey_average(X, W, b)
    exact = ap.probit_mixture_target(X, U, beta, s=1.5, tau=0.7)
    assert (mc - exact).abs().max().item() < 7e-3
    with pytest.raises(ValueError, match="s must be >= 0.0"):
        ap.probit_mixture_target(X, U, beta, s=-1.0, tau=0.7)
    with pytest.raises(ValueError, match="m must be >= 1"):
        ap.sample_probit_mixture_units(0, U, beta, s=1.0, tau=1.0, generator=torch_generator(0))


def test_maurey_rate_barron():
    """Barron/Maurey: squared error of the m-term average decays like 1/m, below 1/(4m)."""
    d = 16
    gen = torch_generator(5)
    U = 3 * torch.nn.functional.normalize(torch.randn(3, d, generator=gen, dtype=torch.float64), dim=1)
    beta = torch.tensor([0.0, 1.0, -1.0], dtype=torch.float64)
    X = torch.randn(500, d, generator=gen, dtype=torch.float64)
    f = ap.probit_mixture_target(X, U, beta, s=1.0, tau=0.5)
    ms, errs = [8, 32, 128, 512], []
    for m in ms:
        e = 0.0
        for s in range(10):
            W, b = ap.sample_probit_mixture_units(m, U, beta, s=1.0, tau=0.5, generator=torch_generator(100 * s + m))
            e += (ap.maurey_average(X, W, b) - f).pow(2).mean().item() / 10
        errs.append(e)
        assert e <= 0.25 / m
    assert -1.25 <= loglog_slope(ms, errs)[0] <= -0.75


def test_gaussian_barron_constant():
    assert math.isclose(ap.gaussian_barron_constant(1), math.sqrt(2 / math.pi), rel_tol=1e-12)
    assert math.isclose(ap.gaussian_barron_constant(2), math.sqrt(math.pi / 2), rel_tol=1e-12)
    omega = torch.randn(400_000, 5, generator=torch_generator(6), dtype=torch.float64)
    assert abs(omega.norm(dim=1).mean().item() - ap.gaussian_barron_constant(5)) < 1e-2
    with pytest.raises(ValueError, match="d must be >= 1"):
        ap.gaussian_barron_constant(0)
