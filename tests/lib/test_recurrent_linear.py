import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.recurrent import linear as L
from flt_lib.rng import torch_generator



def _inputs(seed, shape, dtype=torch.float64, complex_=False):
    g = torch_generator(seed)
    a = 1.8 * torch.rand(shape, generator=g, dtype=dtype) - 0.9
    u = torch.randn(shape, generator=g, dtype=dtype)
    if complex_:
        a = a * torch.exp(1j * torch.rand(shape, generator=g, dtype=dtype))
        u = u + 1j * torch.randn(shape, generator=g, dtype=dtype)
    return a, u


def test_loop_matches_definition():
    a, u = _inputs(0, (7, 3))
    z, rows = torch.zeros(3, dtype=torch.float64), []
    for t in range(7):
        z = a[t] * z + u[t]
        rows.append(z)
    torch.testing.assert_close(L.scan_loop(a, u), torch.stack(rows), rtol=0, atol=1e-15)


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 70), N=st.integers(1, 4), seed=st.integers(0, 10_000),
       chunk=st.one_of(st.none(), st.integers(1, 9)), complex_=st.booleans(), with_z0=st.booleans())
def test_scans_equal_the_loop(T, N, seed, chunk, complex_, with_z0):
    a, u = _inputs(seed, (2, T, N), complex_=complex_)
    z0 = u[:, 0] * 0.5 if with_z0 else None
    ref = L.scan_loop(a, u, z0)
    torch.testing.assert_close(L.scan_hillis_steele(a, u, z0), ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(L.scan_chunked(a, u, z0, chunk=chunk), ref, rtol=0, atol=1e-12)


def test_scan_float32_and_broadcast_decay():
    g = torch_generator(1)
    lam = 0.99 * torch.rand(16, generator=g)            # (N,) time-invariant decay
    u = torch.randn(3, 500, 16, generator=g)
    ref = L.scan_loop(lam, u)
    assert (L.scan_chunked(lam, u) - ref).abs().max() < 1e-5
    assert (L.scan_hillis_steele(lam, u) - ref).abs().max() < 1e-5


def test_scan_gradients():
    a, u = _inputs(2, (9, 2))
    a.requires_grad_(True)
    u.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, u: L.scan_chunked(a, u, chunk=3), (a, u))


def test_scan_bad_inputs():
    with pytest.raises(ValueError, match="u must have at least 2 dimensions"):
        L.scan_loop(torch.ones(3), torch.ones(3))
    with pytest.raises(ValueError, match=r"a must broadcast to u's shape \(5, 3\)"):
        L.scan_hillis_steele(torch.ones(4), torch.ones(5, 3))
    with pytest.raises(ValueError, match="chunk must be >= 1"):
        L.scan_chunked(torch.ones(3), torch.ones(5, 3), chunk=0)
    with pytest.raises(ValueError, match=r"z0 must broadcast to \(3,\)"):
        L.scan_loop(torch.ones(3), torch.ones(5, 3), torch.ones(2))
    with pytest.raises(TypeError, match="u must be a floating or complex tensor"):
        L.scan_loop(torch.ones(3), torch.ones(5, 3, dtype=torch.int64))


def test_diagonal_form_equals_real_recurrence():
    g = torch_generator(3)
    A = torch.randn(5, 5, generator=g, dtype=torch.float64)
    A = 0.95 * A / torch.linalg.eigvals(A).abs().max()
    B = torch.randn(5, 2, generator=g, dtype=torch.float64)
    x = torch.randn(2, 60, 2, generator=g, dtype=torch.float64)
    lam, P, P_inv = L.diagonalise(A)
    torch.testing.assert_close(P @ torch.diag(lam) @ P_inv, A.to(lam.dtype), rtol=0, atol=1e-12)
    zeta = L.scan_loop(lam, x.to(lam.dtype) @ (P_inv @ B.to(lam.dtype)).T)
    Z = zeta @ P.T
    assert (Z.real - L.real_recurrence(A, B, x)).abs().max() < 1e-10
    assert Z.imag.abs().max() < 1e-10


def test_diagonalise_bad_inputs():
    with pytest.raises(ValueError, match=r"A must be square \(N, N\), got shape \(2, 3\)"):
        L.diagonalise(torch.ones(2, 3))
    with pytest.raises(ValueError, match="not \\(numerically\\) diagonalisable"):
        L.diagonalise(torch.tensor([[1.0, 1.0], [0.0, 1.0]], dtype=torch.float64))
    with pytest.raises(ValueError, match="x must have shape"):
        L.real_recurrence(torch.eye(2), torch.ones(2, 3), torch.ones(4, 2))


@settings(max_examples=30, deadline=None)
@given(nu=st.floats(-30, 30), phi=st.floats(-100, 100))
def test_lru_lambda_is_stable(nu, phi):
    lam = L.lru_lambda(torch.tensor([nu], dtype=torch.float64), torch.tensor([phi], dtype=torch.float64))
    assert lam.abs().item() <= 1.0
    assert lam.abs().item() == pytest.approx(math.exp(-math.exp(nu)), rel=1e-12, abs=1e-300)


def test_ring_init_and_gamma():
    nu, phi = L.lru_ring_init(4000, r_min=0.4, r_max=0.9, max_phase=math.pi, generator=torch_generator(4))
    mod = L.lru_lambda(nu, phi).abs()
    assert mod.min() >= 0.4 - 1e-12 and mod.max() <= 0.9 + 1e-12
    # |lambda|^2 is uniform on [r_min^2, r_max^2]: its mean is the midpoint
    assert (mod**2).mean().item() == pytest.approx((0.16 + 0.81) / 2, abs=0.01)
    assert phi.min() >= 0 and phi.max() <= math.pi
    lam = torch.tensor([0.9, 0.99], dtype=torch.float64)
    torch.testing.assert_close(L.lru_gamma(lam), torch.sqrt(1 - lam**2))
    with pytest.raises(ValueError, match="need 0 <= r_min < r_max < 1"):
        L.lru_ring_init(3, r_min=0.9, r_max=0.5, generator=torch_generator(0))
    with pytest.raises(ValueError, match="lam must have \\|lambda\\| < 1"):
        L.lru_gamma(torch.tensor([1.0]))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        L.lru_ring_init(3, r_min=0.1, r_max=0.5, generator=0)


def test_lru_normalisation_gives_unit_power():
    g = torch_generator(5)
    lam = torch.full((512,), 0.99, dtype=torch.complex128) * torch.exp(1j * torch.rand(512, generator=g, dtype=torch.float64))
    x = torch.randn(1500, 512, generator=g, dtype=torch.float64)
    z = L.scan_chunked(lam, L.lru_gamma(lam) * x)
    power = (z[-500:].abs() ** 2).mean().item()
    assert power == pytest.approx(1.0, rel=0.05)


def test_mamba_gating_theorem():
    g = torch_generator(6)
    x = torch.randn(2, 40, 3, generator=g, dtype=torch.float64)
    u = 3 * torch.randn(2, 40, 3, generator=g, dtype=torch.float64)
    torch.testing.assert_close(L.selective_scalar_ssm(x, u), L.mingru(x, u), rtol=0, atol=1e-12)
    # the ZOH formula itself, against the matrix-exponential definition for N = 1
    A_bar, B_bar = L.zoh_discretise(torch.tensor(-2.0, dtype=torch.float64), torch.tensor(3.0, dtype=torch.float64),
                                    torch.tensor(0.3, dtype=torch.float64))
    assert A_bar.item() == pytest.approx(math.exp(-0.6), rel=1e-14)
    assert B_bar.item() == pytest.approx((math.exp(-0.6) - 1) / -2.0 * 3.0, rel=1e-14)


def test_selective_bad_inputs():
    x = torch.ones(2, 5, 3)
    with pytest.raises(ValueError, match="u must have shape"):
        L.selective_scalar_ssm(x, torch.ones(2, 5, 4))
    with pytest.raises(ValueError, match="A must be < 0"):
        L.selective_scalar_ssm(x, x, A=0.0)
    with pytest.raises(ValueError, match="delta must be positive"):
        L.zoh_discretise(torch.tensor(-1.0), torch.tensor(1.0), torch.tensor(0.0))
    with pytest.raises(ValueError, match="A must have nonzero entries"):
        L.zoh_discretise(torch.tensor(0.0), torch.tensor(1.0), torch.tensor(1.0))
    with pytest.raises(ValueError, match="g must have shape"):
        L.mingru(x, torch.ones(2, 5))
    with pytest.raises(TypeError, match="nu must have a floating-point dtype"):
        L.lru_lambda(torch.ones(2, dtype=torch.int64), torch.ones(2))
