"""Tests for flt_lib.flt.diagonal: closed-form interpolants and the implicit bias of Woodworth et al."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.flt import diagonal as dg
from flt_lib.rng import torch_generator


def _data(n=10, d=25, k=2, seed=0):
    X, y, b = dg.sparse_regression_data(n, d, k, torch_generator(seed))
    return X.double(), y.double(), b.double()


def test_data_is_sparse_and_consistent():
    X, y, b = _data()
    assert (b != 0).sum().item() == 2 and b.norm().item() == pytest.approx(1.0)
    assert torch.allclose(X @ b, y)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_min_l2_is_interpolating_and_minimal(seed):
    X, y, _ = _data(seed=seed)
    b2 = dg.min_l2_interpolant(X, y)
    assert torch.allclose(X @ b2, y, atol=1e-9)
    # any other interpolant b2 + null-space vector is longer
    z = torch.randn(25, generator=torch_generator(seed + 1)).double()
    z = z - dg.min_l2_interpolant(X, X @ z)
    assert (b2 + z).norm() >= b2.norm()
    assert torch.allclose(b2, torch.linalg.pinv(X) @ y, atol=1e-8)


def test_min_l1_recovers_sparse_and_is_minimal():
    X, y, b = _data(n=15, d=30, k=2)
    b1 = dg.min_l1_interpolant(X, y)
    assert torch.allclose(X @ b1, y, atol=1e-7)
    assert torch.allclose(b1, b, atol=1e-6)  # exact recovery (basis pursuit) at this sparsity
    assert b1.abs().sum() <= dg.min_l2_interpolant(X, y).abs().sum() + 1e-9


def test_diagonal_beta_and_gradients_match_autograd():
    X, y, _ = _data()
    u = torch.rand(25, generator=torch_generator(4)).double().requires_grad_(True)
    v = torch.rand(25, generator=torch_generator(5)).double().requires_grad_(True)
    loss = 0.5 * (X @ dg.diagonal_beta(u, v) - y).pow(2).mean()
    gu, gv = torch.autograd.grad(loss, (u, v))
    r = X @ (u * u - v * v) - y
    g = X.T @ r / X.shape[0]
    assert torch.allclose(gu, 2 * u * g) and torch.allclose(gv, -2 * v * g)


def test_q_potential_limits():
    b = torch.tensor([0.5, -0.2, 0.0], dtype=torch.float64)
    big = 30.0
    assert dg.q_potential(b, big).item() == pytest.approx(b.pow(2).sum().item() / (4 * big**2), rel=1e-3)
    small = 1e-4
    ratio = dg.q_potential(b, small).item() / (b.abs().sum().item() * torch.log(torch.tensor(1 / small**2)).item())
    assert 0.8 < ratio < 1.1


def test_implicit_bias_small_and_large_alpha():
    X, y, _ = _data(n=12, d=30, k=2, seed=3)
    b1, b2 = dg.min_l1_interpolant(X, y), dg.min_l2_interpolant(X, y)
    small = dg.train_diagonal(X, y, 1e-3, lr=0.05, steps=4000)["beta"]
    large = dg.train_diagonal(X, y, 10.0, lr=2e-4, steps=1500)["beta"]
    assert ((small - b1).norm() / b1.norm()).item() < 0.1
    assert ((large - b2).norm() / b2.norm()).item() < 0.01


def test_bad_inputs():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="k must be <= 5"):
        dg.sparse_regression_data(3, 5, 6, torch_generator(0))
    with pytest.raises(ValueError, match="n <= d"):
        dg.min_l2_interpolant(X.T.contiguous(), torch.zeros(25, dtype=torch.float64))
    with pytest.raises(ValueError, match="y must have shape"):
        dg.min_l1_interpolant(X, y[:3])
    with pytest.raises(ValueError, match="alpha must be > 0"):
        dg.train_diagonal(X, y, -1.0, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="alpha must be > 0"):
        dg.q_potential(y, 0.0)
    with pytest.raises(ValueError, match="v must have shape"):
        dg.diagonal_beta(torch.ones(3), torch.ones(4))
