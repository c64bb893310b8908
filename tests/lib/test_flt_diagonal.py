"""Tests for flt_lib.flt.diagonal: closed-form interpolants and the implicit bias of Woodworth et al."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.flt import diagonal as dg
from flt_lib.rng import torch_generator



def _data(n=10, d=25, k=2, seed=0):
    X, y, b = dg.sparse_regression_data(n, d, k, generator=torch_generator(seed))
    return X.double(), y.double(), b.double()


def test_data_is_sparse_and_consistent():
    X, y, b = _data()
    assert (b != 0).sum().item() == 2 and b.norm().item() == pytest.approx(1.0)
    assert torch.allclose(X @ b, y)


@settings(max_examples=15, deadline=None)
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


def test_one_library_step_of_train_diagonal_matches_autograd():
    """train_diagonal's own update, one step from u = v = alpha 1, against autograd."""
    X, y, _ = _data()
    alpha, lr = 0.7, 0.05
    h = dg.train_diagonal(X, y, alpha=alpha, lr=lr, steps=1)
    u = torch.full((25,), alpha, dtype=torch.float64, requires_grad=True)
    v = torch.full((25,), alpha, dtype=torch.float64, requires_grad=True)
    loss = 0.5 * (X @ dg.diagonal_beta(u, v) - y).pow(2).mean()
    gu, gv = torch.autograd.grad(loss, (u, v))
    torch.testing.assert_close(h.u, (u - lr * gu).detach())
    torch.testing.assert_close(h.v, (v - lr * gv).detach())
    torch.testing.assert_close(h.beta, h.u**2 - h.v**2)
    assert h.train_loss[0] == pytest.approx(loss.item())
    assert isinstance(h, dg.DiagonalHistory) and h.steps == [0, 1]


def test_q_potential_limits():
    b = torch.tensor([0.5, -0.2, 0.0], dtype=torch.float64)
    big = 30.0
    q_big = dg.q_potential(b, alpha=big).item()
    assert q_big == pytest.approx(b.pow(2).sum().item() / (4 * big**2), rel=1e-3)
    small = 1e-4
    l1_log = b.abs().sum().item() * torch.log(torch.tensor(1 / small**2)).item()
    ratio = dg.q_potential(b, alpha=small).item() / l1_log
    assert 0.8 < ratio < 1.1


def test_implicit_bias_small_and_large_alpha():
    X, y, _ = _data(n=12, d=30, k=2, seed=3)
    b1, b2 = dg.min_l1_interpolant(X, y), dg.min_l2_interpolant(X, y)
    small = dg.train_diagonal(X, y, alpha=1e-3, lr=0.05, steps=2500).beta
    large = dg.train_diagonal(X, y, alpha=10.0, lr=2e-4, steps=1000).beta
    assert ((small - b1).norm() / b1.norm()).item() < 0.1
    assert ((large - b2).norm() / b2.norm()).item() < 0.01


def test_bad_inputs():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="k must be <= 5"):
        dg.sparse_regression_data(3, 5, 6, generator=torch_generator(0))
    with pytest.raises(ValueError, match="n <= d"):
        dg.min_l2_interpolant(X.T.contiguous(), torch.zeros(25, dtype=torch.float64))
    with pytest.raises(ValueError, match="y must have shape"):
        dg.min_l1_interpolant(X, y[:3])
    with pytest.raises(ValueError, match="alpha must be > 0"):
        dg.train_diagonal(X, y, alpha=-1.0, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="alpha must be > 0"):
        dg.q_potential(y, alpha=0.0)
    with pytest.raises(ValueError, match="v must have shape"):
        dg.diagonal_beta(torch.ones(3), torch.ones(4))
