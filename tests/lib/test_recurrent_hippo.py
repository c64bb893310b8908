import pytest
import torch

from flt_lib.recurrent import hippo


def test_legs_spectrum_and_normal_plus_low_rank():
    A, B = hippo.legs_matrices(6)
    assert torch.allclose(torch.linalg.eigvals(A).real.sort().values,
                          -torch.arange(6, 0, -1, dtype=torch.float64))
    P = hippo.legs_low_rank(6)
    M = A + P[:, None] * P[None, :]
    assert torch.allclose(M + M.T, -torch.eye(6, dtype=torch.float64), atol=1e-12)
    assert B[2].item() == pytest.approx(5**0.5)


def test_legendre_against_numpy_and_orthonormality():
    import numpy as np
    x = torch.linspace(-1, 1, 7, dtype=torch.float64)
    P = hippo.legendre(5, x)
    for n in range(5):
        c = np.zeros(n + 1)
        c[n] = 1
        assert np.allclose(P[n].numpy(), np.polynomial.legendre.legval(x.numpy(), c))
    # g_n are orthonormal on [0, 1]: projecting g_2 gives e_2
    g2 = lambda s: 5**0.5 * hippo.legendre(3, 2 * s - 1)[2]
    assert torch.allclose(hippo.legs_project(g2, 1.0, 4),
                          torch.tensor([0, 0, 1.0, 0], dtype=torch.float64), atol=1e-12)


def test_legs_ode_tracks_projection_and_reconstructs_polynomials():
    f = lambda s: 1 - 3 * s + 2 * s**2
    L = 400
    t = torch.arange(L + 1, dtype=torch.float64) / L
    C = hippo.legs_run(f(t), 1 / L, 5)
    assert torch.allclose(C[-1], hippo.legs_project(f, 1.0, 5), atol=1e-4)
    assert torch.allclose(C[L // 2 - 1], hippo.legs_project(f, 0.5, 5), atol=1e-4)
    u = torch.linspace(0, 1, 11, dtype=torch.float64)
    assert torch.allclose(hippo.legs_reconstruct(hippo.legs_project(f, 1.0, 3), u), f(u),
                          atol=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match="N"):
        hippo.legs_matrices(0)
    with pytest.raises(ValueError, match="dt"):
        hippo.legs_run(torch.zeros(5, dtype=torch.float64), 0.0, 3)
    with pytest.raises(TypeError, match="f"):
        hippo.legs_project(3.0, 1.0, 3)
    with pytest.raises(ValueError, match="u"):
        hippo.legs_reconstruct(torch.zeros(3, dtype=torch.float64), torch.zeros(2, 2, dtype=torch.float64))
