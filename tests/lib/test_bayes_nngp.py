"""Tests for flt_lib.bayes.nngp: arc-cosine kernels by Monte Carlo, the recursion against wide networks."""

import math

import pytest
import torch

from flt_lib.bayes import nngp
from flt_lib.flt import ntk
from flt_lib.rng import torch_generator


def test_arccos_kernels_are_gaussian_expectations():
    g = torch_generator(0)
    u = torch.tensor([-0.7, 0.0, 0.4, 0.95], dtype=torch.float64)
    z1 = torch.randn(400_000, generator=g, dtype=torch.float64)
    z2 = torch.randn(400_000, generator=g, dtype=torch.float64)
    for k, uk in enumerate(u):
        a, b = z1, uk * z1 + torch.sqrt(1 - uk**2) * z2
        mc1 = 2 * (torch.relu(a) * torch.relu(b)).mean()
        mc0 = 2 * ((a > 0) & (b > 0)).double().mean()
        assert abs(mc1 - nngp.arccos1(uk[None])[0]) < 0.01
        assert abs(mc0 - nngp.arccos0(uk[None])[0]) < 0.01
    assert nngp.arccos1(torch.tensor([1.0, -1.0], dtype=torch.float64)).tolist() == pytest.approx([1.0, 0.0])


def test_arccos_kernels_make_chapter_7_kappa():
    u = torch.linspace(-1, 1, 41, dtype=torch.float64)
    assert torch.allclose(nngp.arccos1(u) + u * nngp.arccos0(u), ntk.kappa(u), atol=1e-12)


def test_two_layer_nngp_plus_first_layer_part_is_the_ntk():
    X = torch.randn(6, 4, generator=torch_generator(1), dtype=torch.float64)
    n = X.norm(dim=1)
    u = X @ X.T / (n[:, None] * n[None, :])
    first_layer = 0.5 * (X @ X.T) * nngp.arccos0(u)
    assert torch.allclose(nngp.two_layer_nngp(X, X) + first_layer, ntk.arccos_ntk(X, X), atol=1e-12)
    # ... and it is the relu_nngp of inputs sqrt(d) x with unit weight variance.
    assert torch.allclose(nngp.two_layer_nngp(X, X), nngp.relu_nngp(2.0 * X, 2.0 * X, depth=1, weight_var=1.0),
                          atol=1e-12)


def test_two_layer_nngp_matches_wide_chapter_7_network():
    X = torch.randn(5, 3, generator=torch_generator(2), dtype=torch.float64)
    W, _ = ntk.init_two_layer(3, 100_000, generator=torch_generator(3))
    phi = torch.relu(X @ W.double().T)
    K_emp = phi @ phi.T / W.shape[0]
    K = nngp.two_layer_nngp(X, X)
    assert ((K_emp - K).norm() / K.norm()).item() < 0.02


def test_relu_nngp_depth_one_closed_form_and_wide_network():
    X = torch.randn(5, 3, generator=torch_generator(4), dtype=torch.float64)
    K1 = nngp.relu_nngp(X, X, depth=1, weight_var=2.0, bias_var=0.1)
    K0 = 0.1 + 2.0 * X @ X.T / 3
    norm = torch.sqrt(K0.diagonal()[:, None] * K0.diagonal()[None, :])
    assert torch.allclose(K1, 0.1 + norm * nngp.arccos1(K0 / norm), atol=1e-12)
    K2 = nngp.relu_nngp(X, X, depth=2, weight_var=2.0, bias_var=0.1)
    emp = nngp.empirical_nngp(X, width=3000, depth=2, generator=torch_generator(5), weight_var=2.0, bias_var=0.1)
    assert ((emp - K2).norm() / K2.norm()).item() < 0.08
    assert torch.allclose(nngp.relu_nngp(X, X[:2], depth=2, bias_var=0.1), nngp.relu_nngp(X, X, depth=2, bias_var=0.1)[:, :2])


def test_bad_inputs():
    X = torch.randn(3, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="depth must be >= 1"):
        nngp.relu_nngp(X, X, depth=0)
    with pytest.raises(ValueError, match="no zero rows"):
        nngp.relu_nngp(torch.zeros(2, 2, dtype=torch.float64), X, depth=1)
    with pytest.raises(ValueError, match="weight_var must be > 0"):
        nngp.random_relu_features(X, width=4, depth=1, generator=torch_generator(0), weight_var=0.0)
    with pytest.raises(ValueError, match="width must be >= 1"):
        nngp.empirical_nngp(X, width=0, depth=1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="no zero rows"):
        nngp.two_layer_nngp(torch.zeros(1, 2, dtype=torch.float64), X)
    with pytest.raises(TypeError, match="u must be a torch.Tensor"):
        nngp.arccos1(0.5)
    with pytest.raises(ValueError, match="X2 must have shape"):
        nngp.two_layer_nngp(X, torch.ones(2, 5, dtype=torch.float64))
