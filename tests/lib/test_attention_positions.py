import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.attention import positions as pos
from flt_lib.rng import torch_generator


def test_sinusoidal_formula():
    P = pos.sinusoidal_encoding(7, 6, dtype=torch.float64)
    for t in range(7):
        for k in range(3):
            w = 10000 ** (-2 * k / 6)
            assert P[t, 2 * k].item() == pytest.approx(math.sin(t * w), abs=1e-12)
            assert P[t, 2 * k + 1].item() == pytest.approx(math.cos(t * w), abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(-20, 20), st.sampled_from([2, 8, 16]))
def test_relative_rotation_shifts_every_position(k, d):
    P = pos.sinusoidal_encoding(64, d, dtype=torch.float64)
    R = pos.relative_rotation(k, d)
    torch.testing.assert_close(R @ R.T, torch.eye(d, dtype=torch.float64))
    ts = range(max(0, -k), min(64, 64 - k))
    for t in ts:
        torch.testing.assert_close(R @ P[t], P[t + k], atol=1e-9, rtol=0)


def test_dot_products_depend_on_offset_only():
    P = pos.sinusoidal_encoding(40, 16, dtype=torch.float64)
    G = P @ P.T
    for k in range(5):
        diag = G.diagonal(k)
        assert (diag - diag[0]).abs().max() < 1e-9
    assert G.diagonal().sub(8.0).abs().max() < 1e-12  # ||p_t||^2 = d/2


def test_rotary_relative_property():
    g = torch_generator(0)
    q, k = torch.randn(1, 16, 8, generator=g, dtype=torch.float64), torch.randn(1, 16, 8, generator=g, dtype=torch.float64)
    q = q[:, :1].expand(1, 16, 8)  # the same query and key content at every position
    k = k[:, :1].expand(1, 16, 8)
    S = pos.rotary(q, base=100.0) @ pos.rotary(k, base=100.0).transpose(-2, -1)  # (1, 16, 16)
    for off in range(-5, 6):
        diag = S[0].diagonal(off)
        assert (diag - diag[0]).abs().max() < 1e-9
    torch.testing.assert_close(pos.rotary(q)[..., :1, :], q[..., :1, :])  # position 0 is not rotated
    torch.testing.assert_close(pos.rotary(q, offset=3)[:, 0], pos.rotary(q)[:, 3])


def test_alibi_and_binary():
    b = pos.alibi_bias(5, 2)
    assert b.shape == (2, 5, 5) and torch.isinf(b[0, 0, 1]) and b[0, 3, 1].item() == pytest.approx(-2 * 2 ** -4)
    for off in range(0, 4):
        diag = b[1].diagonal(-off)
        assert torch.all(diag == diag[0])
    B = pos.binary_encoding(8, 3)
    assert B[5].tolist() == [1.0, 0.0, 1.0]


def test_own_position_data_and_bound():
    x, y = pos.own_position_data(4, 8, vocab=5, generator=torch_generator(1), bos=5)
    assert x.shape == y.shape == (4, 9) and torch.all(x[:, 0] == 5) and x[:, 1:].max() < 5
    assert y[0].tolist() == list(range(9))
    assert pos.position_mse_bound(8) == 5.25
    # any permutation-equivariant predictor: the best is the mean position, with MSE (n^2-1)/12
    t = torch.arange(1, 9, dtype=torch.float64)
    assert ((t - t.mean()) ** 2).mean().item() == pytest.approx(5.25)


def test_bad_inputs():
    with pytest.raises(ValueError, match="d must be even"):
        pos.sinusoidal_encoding(4, 5)
    with pytest.raises(ValueError, match="base must be > 1.0"):
        pos.frequencies(4, base=1.0)
    with pytest.raises(ValueError, match="bits must be large enough to count to T - 1 = 8"):
        pos.binary_encoding(9, 3)
    with pytest.raises(TypeError, match="k must be an int"):
        pos.relative_rotation(1.5, 4)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., T, d\)"):
        pos.rotary(torch.ones(4))
    with pytest.raises(ValueError, match="offset must be >= 0"):
        pos.rotary(torch.ones(2, 4), offset=-1)
    with pytest.raises(ValueError, match="n_heads must be >= 1"):
        pos.alibi_bias(3, 0)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        pos.own_position_data(2, 3, vocab=4, generator=1)
    with pytest.raises(ValueError, match="n must be >= 1"):
        pos.position_mse_bound(0)
