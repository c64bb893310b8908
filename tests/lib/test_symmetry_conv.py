import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.rng import torch_generator
from flt_lib.symmetry import conv



def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch_generator(seed), dtype=torch.float64)


def test_direct_convolutions_match_numpy_and_torch():
    x, h = _rand(20), _rand(4, seed=1)
    np.testing.assert_allclose(conv.linear_conv(x, h).numpy(), np.convolve(x.numpy(), h.numpy()))
    xc = F.conv1d(x[None, None], h[None, None])[0, 0]
    torch.testing.assert_close(conv.cross_correlation(x, h), xc)
    torch.testing.assert_close(conv.cross_correlation(x, h), conv.linear_conv(x, h.flip(0))[3:20])
    # circular convolution: brute-force double loop
    n = 7
    xs, hs = _rand(n, seed=2), _rand(3, seed=3)
    brute = torch.stack([sum(hs[t] * xs[(u - t) % n] for t in range(3)) for u in range(n)])
    torch.testing.assert_close(conv.circular_conv(xs, hs), brute)


def test_matrices_compute_the_convolutions():
    x, h = _rand(9), _rand(4, seed=1)
    h_pad = torch.cat([h, h.new_zeros(5)])
    torch.testing.assert_close(conv.circulant(h_pad) @ x, conv.circular_conv(x, h))
    torch.testing.assert_close(conv.toeplitz(h, 9) @ x, conv.linear_conv(x, h))
    N = 12
    C = conv.circulant(torch.cat([h, h.new_zeros(N - 4)]))
    assert torch.equal(conv.toeplitz(h, 9), C[:, :9])
    torch.testing.assert_close(conv.shift_matrix(5) @ _rand(5), torch.roll(_rand(5), 1))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 24), s=st.integers(0, 30))
def test_circular_convolution_is_commutative_and_shift_equivariant(seed, n, s):
    x, h = _rand(n, seed=seed), _rand(n, seed=seed + 1)
    y = conv.circular_conv(x, h)
    torch.testing.assert_close(y, conv.circular_conv(h, x))
    torch.testing.assert_close(conv.circular_conv(torch.roll(x, s), h), torch.roll(y, s))


def test_fft_routes_equal_direct():
    x = _rand(3, 50)
    for m in (1, 5, 50, 80):
        h = _rand(m, seed=m)
        torch.testing.assert_close(conv.fft_linear_conv(x, h), conv.linear_conv(x, h))
    torch.testing.assert_close(conv.fft_circular_conv(x, _rand(7, seed=9)),
                               conv.circular_conv(x, _rand(7, seed=9)))


def test_commutant_is_the_circulants_and_dft_diagonalises_them():
    for n in (4, 7, 9):
        B = conv.shift_commutant_basis(n)
        assert B.shape[0] == n
        assert max(conv.circulant_deviation(b) for b in B) < 1e-12
    assert conv.shift_commutant_basis(8, step=2).shape[0] == 16
    n = 16
    Fm = conv.dft_matrix(n)
    torch.testing.assert_close(Fm @ _rand(n).to(Fm.dtype), torch.fft.fft(_rand(n)))
    h = _rand(n, seed=4)
    D = Fm @ conv.circulant(h).to(Fm.dtype) @ torch.linalg.inv(Fm)
    assert (D - torch.diag(torch.diagonal(D))).abs().max() < 1e-10
    torch.testing.assert_close(torch.diagonal(D), torch.fft.fft(h))


def test_bad_inputs():
    with pytest.raises(ValueError, match="h must not be longer than x"):
        conv.circular_conv(_rand(3), _rand(5))
    with pytest.raises(ValueError, match="h must not be longer than x"):
        conv.cross_correlation(_rand(3), _rand(5))
    with pytest.raises(ValueError, match="h must not be longer than x"):
        conv.fft_circular_conv(_rand(3), _rand(5))
    with pytest.raises(ValueError, match="h must be a 1-D tensor"):
        conv.circulant(_rand(2, 2))
    with pytest.raises(ValueError, match="h must be a 1-D tensor"):
        conv.linear_conv(_rand(4), _rand(2, 2))
    with pytest.raises(TypeError, match="x must have a floating-point dtype"):
        conv.fft_linear_conv(torch.arange(4), _rand(2))
    with pytest.raises(ValueError, match="x must have a non-empty last axis"):
        conv.linear_conv(torch.zeros(0, dtype=torch.float64), _rand(2))
    with pytest.raises(ValueError, match="M must be square"):
        conv.circulant_deviation(_rand(2, 3))
    with pytest.raises(ValueError, match="n must be <= 24, got 30"):
        conv.shift_commutant_basis(30)
    with pytest.raises(ValueError, match="step must be <= 4, got 5"):
        conv.shift_commutant_basis(4, step=5)
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        conv.toeplitz(_rand(2), 0)
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        conv.dft_matrix(0)
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        conv.shift_matrix(0)
