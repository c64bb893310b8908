"""Tests for flt_lib.training.distillation."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.feedforward import regression as rg
from flt_lib.training import distillation as dis
from flt_lib.rng import torch_generator


def test_smooth_labels_closed_form():
    q = dis.smooth_labels(torch.tensor([0, 2]), dis.uniform_smoothing(4, 0.2))
    expected = torch.tensor([[0.85, 0.05, 0.05, 0.05], [0.05, 0.05, 0.85, 0.05]], dtype=torch.float64)
    assert torch.allclose(q, expected)
    Pi = torch.tensor([[0.7, 0.3, 0.0], [0.1, 0.8, 0.1], [0.0, 0.0, 1.0]], dtype=torch.float64)
    assert torch.equal(dis.smooth_labels(torch.tensor([1, 0]), Pi), Pi[[1, 0]])


def test_smoothed_loss_is_expected_loss_under_label_noise():
    # H(Pi[y], p) = E_{y' ~ Pi[y]} H(e_y', p): Monte Carlo over noisy labels (an independent
    # oracle) against the library's smoothed targets.
    g = torch_generator(9)
    Pi = torch.tensor([[0.7, 0.3, 0.0], [0.1, 0.8, 0.1], [0.2, 0.0, 0.8]], dtype=torch.float64)
    z = torch.randn(1, 3, generator=g, dtype=torch.float64)
    exact = dis.soft_cross_entropy(z, dis.smooth_labels(torch.tensor([2]), Pi)).item()
    noisy = torch.multinomial(Pi[2], 200_000, replacement=True, generator=g)
    mc = -torch.log_softmax(z, 1)[0, noisy].mean().item()
    assert mc == pytest.approx(exact, rel=0.01)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), T=st.floats(0.2, 20.0))
def test_distillation_gradient_matches_autograd(seed, T):
    g = torch_generator(seed)
    z = torch.randn(4, 6, generator=g, dtype=torch.float64, requires_grad=True)
    v = 3 * torch.randn(4, 6, generator=g, dtype=torch.float64)
    q = dis.tempered_softmax(v, temperature=T)
    (grad,) = torch.autograd.grad(dis.soft_cross_entropy(z, q, temperature=T).sum(), z)
    assert torch.allclose(grad, dis.distillation_gradient(z.detach(), v, temperature=T), atol=1e-12)


def test_soft_cross_entropy_minimised_at_target():
    # H(q, p) >= H(q) with equality at p = q (Gibbs); smoothing optimum has finite logit gap
    K, eps = 5, 0.1
    q = dis.smooth_labels(torch.tensor([1]), dis.uniform_smoothing(K, eps))
    z_opt = q.log()
    gap = (z_opt[0, 1] - z_opt[0, 0]).item()
    assert gap == pytest.approx(math.log(1 + K * (1 - eps) / eps))
    base = dis.soft_cross_entropy(z_opt, q).item()
    for s in range(5):
        z = z_opt + 0.1 * torch.randn(1, K, generator=torch_generator(s), dtype=torch.float64)
        assert dis.soft_cross_entropy(z, q).item() >= base - 1e-12


def test_softmax_regression_fits_smoothed_targets():
    g = torch_generator(6)
    X = torch.randn(60, 2, generator=g, dtype=torch.float64)
    y = (X[:, 0] > 0).long()
    fit0 = rg.softmax_regression_gd(X, dis.smooth_labels(y, dis.uniform_smoothing(2, 0.0)), lr=0.5, steps=300)
    fit1 = rg.softmax_regression_gd(X, dis.smooth_labels(y, dis.uniform_smoothing(2, 0.2)), lr=0.5, steps=300)
    p0 = torch.softmax(X @ fit0.W.T + fit0.b, 1).max(1).values.mean()
    p1 = torch.softmax(X @ fit1.W.T + fit1.b, 1).max(1).values.mean()
    assert p1 < p0 and p1 <= 0.9 + 0.02
    assert ((X @ fit1.W.T + fit1.b).argmax(1) == y).double().mean() > 0.9


def test_bad_inputs():
    with pytest.raises(ValueError, match="temperature must be > 0"):
        dis.tempered_softmax(torch.ones(2, 3), temperature=0.0)
    with pytest.raises(ValueError, match=r"y must hold class indices in \[0, 3\)"):
        dis.smooth_labels(torch.tensor([0, 3]), dis.uniform_smoothing(3, 0.1))
    with pytest.raises(ValueError, match="eps must be <= 1"):
        dis.uniform_smoothing(3, 1.5)
    with pytest.raises(ValueError, match="rows summing to 1"):
        dis.smooth_labels(torch.tensor([0]), torch.ones(2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="confusion must be square"):
        dis.smooth_labels(torch.tensor([0]), torch.ones(2, 3, dtype=torch.float64) / 3)
    with pytest.raises(ValueError, match="targets must have shape"):
        dis.soft_cross_entropy(torch.ones(2, 3), torch.ones(2, 4))
    with pytest.raises(ValueError, match="teacher_logits must have shape"):
        dis.distillation_gradient(torch.ones(2, 3), torch.ones(3, 3), temperature=1.0)
