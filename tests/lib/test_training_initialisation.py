"""Tests for flt_lib.training.initialisation."""

import math

import pytest
import torch
import torch._dynamo  # noqa: F401  torch.testing and gradcheck import it lazily (1-3 s): pay it at collection

from flt_lib.training import initialisation as ini
from flt_lib.rng import torch_generator

D = torch.float64


def test_init_std_and_uniform_bound_closed_forms():
    assert ini.init_std("naive", 10, 30) == 1.0
    assert ini.init_std("lecun", 10, 30) == pytest.approx(math.sqrt(0.1))
    assert ini.init_std("xavier", 10, 30) == pytest.approx(math.sqrt(2 / 40))
    assert ini.init_std("he", 10, 30) == pytest.approx(math.sqrt(0.2))
    assert ini.uniform_bound("xavier", 10, 30) == pytest.approx(math.sqrt(6 / 40))
    assert ini.uniform_bound("he", 10, 30) == pytest.approx(math.sqrt(6 / 10))


def test_uniform_bounds_match_torch_nn_init():
    # Oracle: torch's own initialisers; their largest |W| approaches our bound from below.
    g = torch.Generator().manual_seed(0)
    W = torch.empty(300, 200, dtype=D)
    torch.nn.init.xavier_uniform_(W, generator=g)
    a = ini.uniform_bound("xavier", 200, 300)
    assert W.abs().max() <= a and W.abs().max() > 0.999 * a
    torch.nn.init.kaiming_uniform_(W, nonlinearity="relu", generator=g)
    a = ini.uniform_bound("he", 200, 300)
    assert W.abs().max() <= a and W.abs().max() > 0.999 * a


@pytest.mark.parametrize("distribution", ["normal", "uniform"])
def test_init_weight_empirical_variance(distribution):
    g = torch_generator(0)
    for scheme in ["lecun", "xavier", "he"]:
        W = ini.init_weight(scheme, 300, 200, generator=g, distribution=distribution)
        assert W.shape == (300, 200)
        # 60000 entries: the sample variance has relative standard error below 0.6 %
        assert W.var().item() == pytest.approx(ini.init_std(scheme, 200, 300) ** 2, rel=0.02)
        if distribution == "uniform":
            assert W.abs().max() <= ini.uniform_bound(scheme, 200, 300)


def test_propagate_variances_matches_brute_force_loop():
    # One network, rectangular layers, tanh: an explicit loop with the same random stream.
    x = torch.randn(8, 5, generator=torch_generator(1), dtype=D)
    widths = [7, 3, 4]
    prof = ini.propagate_variances(x, widths, scheme="xavier", activation="tanh",
                                   generator=torch_generator(2))
    g, h, zs, fwd = torch_generator(2), x, [], []
    Ws = [ini.init_weight("xavier", m_out, m_in, generator=g)
          for m_in, m_out in zip([5, *widths], widths)]
    for W in Ws:
        zs.append(h @ W.T)
        fwd.append((zs[-1] ** 2).mean())
        h = torch.tanh(zs[-1])
    delta_L = torch.randn(1, 8, 4, generator=g, dtype=D)[0]  # the output error, same stream
    torch.testing.assert_close(prof.forward, torch.stack(fwd))
    # oracle for the backward pass: autograd of <delta_L, z_L> with respect to z_1 and z_2
    z1 = (x @ Ws[0].T).requires_grad_()
    z2 = torch.tanh(z1) @ Ws[1].T
    z3 = torch.tanh(z2) @ Ws[2].T
    g1, g2 = torch.autograd.grad((z3 * delta_L).sum(), (z1, z2))
    ref = torch.stack([(g1**2).mean(), (g2**2).mean(), (delta_L**2).mean()])
    torch.testing.assert_close(prof.backward, ref)


def test_rectangular_linear_layers_forward_and_backward_ratios():
    # Variance argument (eq-init-forward, eq-init-backward), linear net, widths up and down:
    # forward ratio q_l / q_{l-1} = sigma^2 n_in, backward ratio r_{l-1} / r_l = sigma^2 n_out.
    x = torch.randn(16, 32, generator=torch_generator(3), dtype=D)
    widths = [96, 32, 96, 32]
    fans = [32, *widths]
    prof = ini.propagate_variances(x, widths, scheme="xavier", activation="linear",
                                   generator=torch_generator(4), n_nets=48)
    q0 = (x**2).mean().item()
    q = [q0, *prof.forward.tolist()]
    for l in range(1, len(widths) + 1):
        n_in, n_out = fans[l - 1], fans[l]
        s2 = 2 / (n_in + n_out)
        assert q[l] / q[l - 1] == pytest.approx(s2 * n_in, rel=0.12)
        if l < len(widths):
            r_ratio = prof.backward[l - 1].item() / prof.backward[l].item()  # r_l / r_{l+1}
            n_out_next = fans[l + 1]
            assert r_ratio == pytest.approx(2 / (fans[l] + n_out_next) * n_out_next, rel=0.12)


def test_he_preserves_relu_variance_and_lecun_halves_it():
    x = torch.randn(16, 128, generator=torch_generator(3), dtype=D)
    he = ini.propagate_variances(x, [128] * 20, scheme="he", activation="relu",
                                 generator=torch_generator(4), n_nets=8).forward
    assert (he.max() / he.min()).item() < 1.6
    lecun = ini.propagate_variances(x, [128] * 20, scheme="lecun", activation="relu",
                                    generator=torch_generator(4), n_nets=2).forward
    assert 0.25 < (lecun[-1] / lecun[0]).item() / 2.0**-19 < 4


def test_orthogonal_product_is_isometry():
    sv = ini.product_singular_values(30, 16, scheme="orthogonal", generator=torch_generator(5))
    assert torch.allclose(sv, torch.ones(16, dtype=D), atol=1e-10)
    sv_g = ini.product_singular_values(30, 16, scheme="lecun", generator=torch_generator(5))
    assert (sv_g[0] / sv_g[-1]).item() > 1e3


def test_bad_inputs():
    g = torch_generator(0)
    with pytest.raises(ValueError, match="scheme must be one of"):
        ini.init_std("kaiming", 3, 3)
    with pytest.raises(ValueError, match="fan_in must be >= 1"):
        ini.init_std("he", 0, 3)
    with pytest.raises(ValueError, match="scheme must be one of"):
        ini.uniform_bound("orthogonal", 3, 3)
    with pytest.raises(ValueError, match="gain must be 1.0"):
        ini.init_weight("he", 3, 3, generator=g, gain=2.0)
    with pytest.raises(ValueError, match="distribution must be one of"):
        ini.init_weight("he", 3, 3, generator=g, distribution="laplace")
    with pytest.raises(TypeError, match="generator"):
        ini.init_weight("orthogonal", 3, 3, generator=1)
    with pytest.raises(ValueError, match="activation must be one of"):
        ini.propagate_variances(torch.ones(2, 3), [3], scheme="he", activation="gelu", generator=g)
    with pytest.raises(ValueError, match="x must be a 2-D"):
        ini.propagate_variances(torch.ones(3), [3], scheme="he", activation="relu", generator=g)
    with pytest.raises(TypeError, match="widths must be a non-empty list"):
        ini.propagate_variances(torch.ones(2, 3), [], scheme="he", activation="relu", generator=g)
    with pytest.raises(ValueError, match="depth must be >= 1"):
        ini.product_singular_values(0, 3, scheme="he", generator=g)
