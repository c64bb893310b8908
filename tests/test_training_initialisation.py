"""Tests for flt_lib.training.initialisation."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.training import initialisation as ini
from flt_lib.rng import torch_generator


def test_init_std_closed_forms():
    assert ini.init_std("naive", 10, 30) == 1.0
    assert ini.init_std("lecun", 10, 30) == pytest.approx(math.sqrt(0.1))
    assert ini.init_std("xavier", 10, 30) == pytest.approx(math.sqrt(2 / 40))
    assert ini.init_std("he", 10, 30) == pytest.approx(math.sqrt(0.2))


def test_init_weight_empirical_variance():
    g = torch_generator(0)
    for scheme in ["lecun", "xavier", "he"]:
        W = ini.init_weight(scheme, 300, 200, g)
        assert W.shape == (300, 200)
        assert W.var().item() == pytest.approx(ini.init_std(scheme, 200, 300) ** 2, rel=0.02)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 12), cols=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_orthogonal_matrix_has_orthonormal_rows_or_columns(rows, cols, seed):
    Q = ini.orthogonal_matrix(rows, cols, torch_generator(seed))
    G = Q.T @ Q if rows >= cols else Q @ Q.T
    assert torch.allclose(G, torch.eye(min(rows, cols), dtype=torch.float64), atol=1e-12)


def test_forward_variances_linear_lecun_matches_brute_force():
    # One network, linear activation: compare with an explicit loop using the same stream.
    x = torch.randn(8, 16, generator=torch_generator(1), dtype=torch.float64)
    q = ini.forward_variances(x, 3, "lecun", "linear", torch_generator(2))
    g, h, ref = torch_generator(2), x, []
    for _ in range(3):
        W = ini.init_std("lecun", 16, 16) * torch.randn(1, 16, 16, generator=g)
        h = h @ W[0].double().T
        ref.append((h**2).mean())
    assert torch.allclose(q, torch.stack(ref))


def test_he_preserves_relu_variance_and_lecun_halves_it():
    x = torch.randn(16, 256, generator=torch_generator(3), dtype=torch.float64)
    he = ini.forward_variances(x, 20, "he", "relu", torch_generator(4), n_nets=16)
    assert (he.max() / he.min()).item() < 1.6
    lecun = ini.forward_variances(x, 20, "lecun", "relu", torch_generator(4), n_nets=4)
    assert 0.25 < (lecun[-1] / lecun[0]).item() / 2.0**-19 < 4


def test_orthogonal_product_is_isometry():
    sv = ini.product_singular_values(30, 16, "orthogonal", torch_generator(5))
    assert torch.allclose(sv, torch.ones(16, dtype=torch.float64), atol=1e-10)
    sv_g = ini.product_singular_values(30, 16, "lecun", torch_generator(5))
    assert (sv_g[0] / sv_g[-1]).item() > 1e3


def test_bad_inputs():
    g = torch_generator(0)
    with pytest.raises(ValueError, match="scheme must be one of"):
        ini.init_std("kaiming", 3, 3)
    with pytest.raises(ValueError, match="fan_in must be >= 1"):
        ini.init_std("he", 0, 3)
    with pytest.raises(ValueError, match="gain must be 1.0"):
        ini.init_weight("he", 3, 3, g, gain=2.0)
    with pytest.raises(TypeError, match="generator"):
        ini.orthogonal_matrix(3, 3, generator=1)
    with pytest.raises(ValueError, match="activation must be one of"):
        ini.forward_variances(torch.ones(2, 3), 2, "he", "gelu", g)
    with pytest.raises(ValueError, match="x must be a 2-D"):
        ini.forward_variances(torch.ones(3), 2, "he", "relu", g)
    with pytest.raises(ValueError, match="depth must be >= 1"):
        ini.product_singular_values(0, 3, "he", g)
