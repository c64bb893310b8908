"""Tests for flt_lib.optim.gd: quadratics, GD, heavy ball, Nesterov and the theorems of 3.2-3.3."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch._dynamo  # noqa: F401  torch.optim imports it lazily (about 1.5 s): pay it at collection
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.optim import gd
from flt_lib.stats import loglog_slope
from flt_lib.rng import torch_generator

D = torch.float64


def _quad(d=6, lo=1.0, hi=10.0, seed=0, with_b=True):
    g = torch_generator(seed)
    q = gd.random_spectrum_quadratic(torch.linspace(lo, hi, d, dtype=D), generator=g)
    b = torch.randn(d, generator=g, dtype=D) if with_b else torch.zeros(d, dtype=D)
    return gd.Quadratic(q.A, b), torch.randn(d, generator=g, dtype=D)


def test_value_and_grad_match_autograd():
    q, x = _quad()
    x = x.clone().requires_grad_()
    gd.quadratic_value(q, x).backward()
    torch.testing.assert_close(gd.quadratic_grad(q, x.detach()), x.grad)
    batch = torch.stack([x.detach(), 2 * x.detach()])
    torch.testing.assert_close(gd.quadratic_value(q, batch)[1], gd.quadratic_value(q, 2 * x.detach()))


def test_least_squares_closed_form_and_minimum():
    g = torch_generator(1)
    X, y, w = torch.randn(12, 4, generator=g, dtype=D), torch.randn(12, generator=g, dtype=D), torch.randn(4, generator=g, dtype=D)
    q = gd.least_squares(X, y)
    assert gd.quadratic_value(q, w).item() == pytest.approx(((X @ w - y) ** 2).sum().item() / 24, rel=1e-12)
    w_star = torch.linalg.lstsq(X, y.unsqueeze(1)).solution.squeeze(1)
    assert gd.minimum_value(q) == pytest.approx(((X @ w_star - y) ** 2).sum().item() / 24, rel=1e-10)


def test_spectrum_and_low_rank_design():
    g = torch_generator(2)
    s = torch.tensor([3.0, 2.0, 1.0], dtype=D)
    X = gd.low_rank_design(8, 5, s, generator=g)
    torch.testing.assert_close(torch.linalg.svdvals(X)[:3], s)
    L, lam_min, mu = gd.spectrum_constants(X.T @ X / 8)
    assert L == pytest.approx(9 / 8) and abs(lam_min) < 1e-12 and mu == pytest.approx(1 / 8)
    q = gd.random_spectrum_quadratic(torch.tensor([0.5, 2.0, 7.0], dtype=D), generator=g)
    torch.testing.assert_close(torch.linalg.eigvalsh(q.A), torch.tensor([0.5, 2.0, 7.0], dtype=D))


@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, 1.95), st.integers(0, 1000))
def test_gd_matches_closed_form_and_sufficient_decrease(c, seed):
    q, x0 = _quad(seed=seed)
    L = gd.spectrum_constants(q.A)[0]
    eta = c / L
    traj = gd.gradient_descent(lambda x: gd.quadratic_grad(q, x), x0, lr=eta, steps=25)
    x_star = torch.linalg.solve(q.A, q.b)
    M = torch.eye(6, dtype=D) - eta * q.A
    torch.testing.assert_close(traj[25] - x_star, torch.linalg.matrix_power(M, 25) @ (x0 - x_star))
    hv = gd.quadratic_value(q, traj)
    g2 = (gd.quadratic_grad(q, traj[:-1]) ** 2).sum(-1)
    assert torch.all(hv[1:] <= hv[:-1] - eta * (1 - L * eta / 2) * g2 + 1e-9 * (1 + hv[:-1].abs()))


def test_step_size_threshold():
    q, x0 = _quad()
    L = gd.spectrum_constants(q.A)[0]
    h_star = gd.minimum_value(q)
    gap = lambda c: gd.quadratic_value(q, gd.gradient_descent(lambda x: gd.quadratic_grad(q, x), x0, lr=c / L, steps=200)) - h_star
    assert gap(1.9)[-1] < 1e-8 * gap(1.9)[0]
    assert gap(2.1)[-1] > 1e6 * gap(2.1)[0]


def test_critical_point_bound_holds():
    q, x0 = _quad(d=10, lo=0.01, hi=5.0)
    L = gd.spectrum_constants(q.A)[0]
    traj = gd.gradient_descent(lambda x: gd.quadratic_grad(q, x), x0, lr=1 / L, steps=3000)
    gn = gd.quadratic_grad(q, traj).norm(dim=-1)
    gap0 = gd.quadratic_value(q, x0).item() - gd.minimum_value(q)
    for eps in [1.0, 1e-1, 1e-2]:
        t = gd.steps_to_tolerance(gn, tol=eps)
        assert 0 <= t <= gd.critical_point_bound(L, gap0, eps)
    assert gd.critical_point_bound(2.0, 3.0, 0.5) == 48.0


def test_pl_rate_on_rank_deficient_least_squares():
    g = torch_generator(4)
    X = gd.low_rank_design(30, 12, torch.sqrt(30 * torch.linspace(1.0, 8.0, 4, dtype=D)), generator=g)
    y = torch.randn(30, generator=g, dtype=D)
    q = gd.least_squares(X, y)
    L, lam_min, mu = gd.spectrum_constants(q.A)
    assert abs(lam_min) < 1e-10 and mu == pytest.approx(1.0)
    traj = gd.gradient_descent(lambda w: gd.quadratic_grad(q, w), torch.randn(12, generator=g, dtype=D), lr=1 / L, steps=80)
    gap = gd.quadratic_value(q, traj) - gd.minimum_value(q)
    bound = (1 - mu / L) ** torch.arange(81, dtype=D) * gap[0]
    assert torch.all(gap <= bound * (1 + 1e-9) + 1e-12)
    assert torch.any(gap > (1 - 3 * mu / L) ** torch.arange(81, dtype=D) * gap[0])


def test_heavy_ball_matches_torch_sgd_momentum():
    q, x0 = _quad()
    traj = gd.heavy_ball(lambda x: gd.quadratic_grad(q, x), x0, lr=0.05, momentum=0.8, steps=30)
    x = x0.clone().requires_grad_()
    opt = torch.optim.SGD([x], lr=0.05, momentum=0.8)
    for t in range(30):
        x.grad = gd.quadratic_grad(q, x.detach())
        opt.step()
        torch.testing.assert_close(x.detach(), traj[t + 1])


def test_nesterov_matches_naive_loop():
    q, x0 = _quad()
    traj = gd.nesterov(lambda x: gd.quadratic_grad(q, x), x0, lr=0.08, momentum=0.6, steps=20)
    A, b = q.A.numpy(), q.b.numpy()
    xp = x = x0.numpy()
    for t in range(20):
        yv = x + 0.6 * (x - xp)
        xp, x = x, yv - 0.08 * (A @ yv - b)
        np.testing.assert_allclose(traj[t + 1].numpy(), x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kappa", [4.0, 50.0, 900.0])
def test_tuned_parameters_spectral_radius(kappa):
    # heavy ball's 2x2 iteration matrix on eigenvalue lam has spectral radius sqrt(beta) at both ends
    for method, rate in [("heavy_ball", (math.sqrt(kappa) - 1) / (math.sqrt(kappa) + 1)), ("nesterov", 1 - 1 / math.sqrt(kappa))]:
        lr, beta = gd.tuned_parameters(kappa, 1.0, method=method)
        worst = 0.0
        for lam in np.linspace(1.0, kappa, 200):
            if method == "heavy_ball":
                M = np.array([[1 + beta - lr * lam, -beta], [1.0, 0.0]])
            else:
                M = np.array([[(1 + beta) * (1 - lr * lam), -beta * (1 - lr * lam)], [1.0, 0.0]])
            worst = max(worst, max(abs(np.linalg.eigvals(M))))
        assert worst <= rate + 1e-6
    assert gd.tuned_parameters(kappa, 1.0, method="gd") == (2 / (kappa + 1), 0.0)


def test_iteration_counts_scale_with_kappa_and_sqrt_kappa():
    g = torch_generator(5)
    kappas = [10.0, 100.0, 1000.0]
    counts = {"gd": [], "heavy_ball": [], "nesterov": []}
    for kappa in kappas:
        q = gd.random_spectrum_quadratic(torch.logspace(0, math.log10(kappa), 8, dtype=D), generator=g)
        x0 = torch.randn(8, generator=g, dtype=D)
        for method in counts:
            lr, beta = gd.tuned_parameters(kappa, 1.0, method=method)
            run = gd.nesterov if method == "nesterov" else gd.heavy_ball
            steps = int(10 * kappa) if method == "gd" else int(40 * math.sqrt(kappa)) + 50
            err = run(lambda x: gd.quadratic_grad(q, x), x0, lr=lr, momentum=beta, steps=steps).norm(dim=-1) / x0.norm()
            counts[method].append(gd.steps_to_tolerance(err, tol=1e-6))
    assert 0.85 <= loglog_slope(kappas, counts["gd"])[0] <= 1.15
    assert 0.4 <= loglog_slope(kappas, counts["heavy_ball"])[0] <= 0.6
    assert 0.4 <= loglog_slope(kappas, counts["nesterov"])[0] <= 0.6


def test_quadratic_validates_on_construction():
    # no invalid instance can exist: the checks run in __post_init__, not in a factory
    with pytest.raises(ValueError, match="A must be symmetric, got max"):
        gd.Quadratic(A=torch.tensor([[1.0, 2.0], [0.0, 1.0]], dtype=D), b=torch.zeros(2, dtype=D))
    with pytest.raises(TypeError, match="c must be a real number"):
        gd.Quadratic(A=torch.eye(2, dtype=D), b=torch.zeros(2, dtype=D), c="0")
    q = gd.Quadratic(torch.eye(2, dtype=D), torch.ones(2, dtype=D), 3)
    assert q.c == 3.0 and isinstance(q.c, float)


def test_rosenbrock_value_and_gradient():
    x = torch.tensor([[-1.2, 1.0], [0.3, 0.7], [1.0, 1.0]], dtype=D, requires_grad=True)
    h = gd.rosenbrock(x)
    assert h[-1].item() == 0.0
    (grad,) = torch.autograd.grad(h.sum(), x)
    torch.testing.assert_close(gd.rosenbrock_grad(x.detach()), grad)
    torch.testing.assert_close(gd.rosenbrock_grad(x.detach()[0]), grad[0])
    assert torch.autograd.gradcheck(lambda v: gd.rosenbrock(v, c=100.0), (x,))
    with pytest.raises(ValueError, match=r"x must have shape \(2,\) or \(\.\.\., 2\), got \(3,\)"):
        gd.rosenbrock_grad(torch.zeros(3, dtype=D))
    with pytest.raises(ValueError, match="c must be > 0"):
        gd.rosenbrock(torch.zeros(2, dtype=D), c=0.0)


def test_steps_to_tolerance():
    assert gd.steps_to_tolerance(torch.tensor([3.0, 2.0, 0.5, 0.1]), tol=0.6) == 2
    assert gd.steps_to_tolerance(torch.tensor([3.0, 2.0]), tol=0.1) == -1


def test_bad_inputs():
    A = torch.eye(3, dtype=D)
    with pytest.raises(ValueError, match="A must be square"):
        gd.Quadratic(torch.zeros(3, 2, dtype=D), torch.zeros(3, dtype=D))
    with pytest.raises(ValueError, match="A must be symmetric"):
        gd.Quadratic(torch.tensor([[1.0, 2.0], [0.0, 1.0]], dtype=D), torch.zeros(2, dtype=D))
    with pytest.raises(ValueError, match="b must have shape"):
        gd.Quadratic(A, torch.zeros(4, dtype=D))
    with pytest.raises(ValueError, match="y must have shape"):
        gd.least_squares(torch.zeros(5, 2, dtype=D), torch.zeros(4, dtype=D))
    with pytest.raises(ValueError, match="positive eigenvalue"):
        gd.spectrum_constants(torch.zeros(2, 2, dtype=D))
    with pytest.raises(ValueError, match="lr must be > 0"):
        gd.gradient_descent(lambda x: x, torch.zeros(3, dtype=D), lr=0.0, steps=5)
    with pytest.raises(ValueError, match="momentum must be < 1"):
        gd.heavy_ball(lambda x: x, torch.zeros(3, dtype=D), lr=0.1, momentum=1.0, steps=5)
    with pytest.raises(ValueError, match="x0 must be a 1-D tensor"):
        gd.nesterov(lambda x: x, torch.zeros(3, 2, dtype=D), lr=0.1, momentum=0.5, steps=5)
    with pytest.raises(ValueError, match="steps must be >= 0"):
        gd.gradient_descent(lambda x: x, torch.zeros(3, dtype=D), lr=0.1, steps=-1)
    with pytest.raises(ValueError, match="mu must be <= 1.0"):
        gd.tuned_parameters(1.0, 2.0, method="gd")
    with pytest.raises(ValueError, match="method must be one of"):
        gd.tuned_parameters(2.0, 1.0, method="adam")
    with pytest.raises(ValueError, match="eigenvalues must be >= 0"):
        gd.random_spectrum_quadratic(torch.tensor([-1.0, 1.0], dtype=D), generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        gd.low_rank_design(4, 3, torch.ones(2, dtype=D), generator=0)
    with pytest.raises(ValueError, match="n must be >= 2"):
        gd.low_rank_design(1, 3, torch.ones(2, dtype=D), generator=torch_generator(0))
    with pytest.raises(ValueError, match="eps must be > 0"):
        gd.critical_point_bound(1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="tol must be > 0"):
        gd.steps_to_tolerance(torch.ones(3), tol=0.0)
