import math

import pytest
import torch
import torch.nn.functional as F

from flt_lib.rng import torch_generator
from flt_lib.symmetry import group_conv, steerable


def test_so2_irrep_is_a_homomorphism():
    for m in range(4):
        a, b = 0.3, 1.1
        torch.testing.assert_close(
            steerable.so2_irrep(m, a) @ steerable.so2_irrep(m, b),
            steerable.so2_irrep(m, a + b),
        )


def test_schur_dimensions_on_so2():
    angles = [0.4, 1.3, 2.9]
    for m in range(4):
        for n in range(4):
            dim = group_conv.commutant_basis(
                [(steerable.so2_irrep(n, t), steerable.so2_irrep(m, t)) for t in angles]
            ).shape[0]
            assert dim == ((1 if m == 0 else 2) if m == n else 0)


@pytest.mark.parametrize("m_in, m_out", [(0, 0), (0, 2), (1, 1), (1, 3), (2, 1)])
def test_ring_basis_has_the_right_dimension_and_frequencies(m_in, m_out):
    B = steerable.ring_kernel_basis(m_in, m_out, 16)
    d = lambda m: 1 if m == 0 else 2
    assert B.shape == (d(m_in) * d(m_out), 16, d(m_out), d(m_in))
    power = (torch.fft.fft(B, dim=1).abs() ** 2).sum(dim=(0, 2, 3))
    allowed = {abs(m_out - m_in), m_out + m_in}
    outside = sum(power[k] for k in range(16) if min(k, 16 - k) not in allowed)
    assert outside < 1e-20 * power.sum()
    # the closed form kappa(phi) = rho_out(phi) kappa(0) rho_in(phi)^T lies in the span
    K0 = torch.randn(
        d(m_out), d(m_in), generator=torch_generator(0), dtype=torch.float64
    )
    K = torch.stack(
        [
            steerable.so2_irrep(m_out, 2 * math.pi * j / 16)
            @ K0
            @ steerable.so2_irrep(m_in, 2 * math.pi * j / 16).T
            for j in range(16)
        ]
    )
    Bf, Kf = B.reshape(B.shape[0], -1), K.reshape(-1)
    assert (Kf - Bf.T @ (Bf @ Kf)).abs().max() < 1e-12


@pytest.mark.parametrize("m", [1, 2, 3])
def test_steering_equals_the_rotated_filter(m):
    x = torch.randn(1, 1, 12, 12, generator=torch_generator(m), dtype=torch.float64)
    resp = F.conv2d(x, steerable.circular_harmonics(5, m)[:, None], padding=2)[0]
    for t in (0.3, 2.0, -1.2):
        direct = F.conv2d(
            x, steerable.rotated_harmonic(5, m, t)[None, None], padding=2
        )[0, 0]
        assert (steerable.steer(resp, m, t) - direct).abs().max() < 1e-12


def test_harmonics_rotate_exactly_by_90_degrees():
    H = steerable.circular_harmonics(7, 1)
    # rotating the grid by 90 degrees counter-clockwise maps (cos, sin) to rho_1(90) (cos, sin)
    rotated = torch.rot90(H, -1, dims=(1, 2))
    torch.testing.assert_close(
        rotated, torch.einsum("ij,jkl->ikl", steerable.so2_irrep(1, math.pi / 2), H)
    )


def test_bad_inputs():
    with pytest.raises(ValueError, match="m must be"):
        steerable.so2_irrep(-1, 0.0)
    with pytest.raises(ValueError, match="k must be odd"):
        steerable.circular_harmonics(4, 1)
    with pytest.raises(ValueError, match="sigma"):
        steerable.circular_harmonics(5, 1, sigma=0.0)
    with pytest.raises(ValueError, match="responses must stack"):
        steerable.steer(torch.zeros(3, 4), 1, 0.0)
    with pytest.raises(ValueError, match="n_angles"):
        steerable.ring_kernel_basis(0, 1, 2)
