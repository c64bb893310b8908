import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.rng import torch_generator
from flt_lib.symmetry import conv, graphs, spectral



@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_laplacian_psd_and_nullity(seed):
    A = graphs.random_graph(12, 0.2, generator=torch_generator(seed))
    for kind in ("combinatorial", "normalized"):
        ev = torch.linalg.eigvalsh(spectral.laplacian(A, kind))
        assert ev.min() > -1e-10
        assert int((ev.abs() < 1e-9).sum()) == graphs.n_components(A)
        assert kind == "combinatorial" or ev.max() <= 2 + 1e-10


def test_quadratic_form_is_edge_sum_and_sparse_agrees():
    A = graphs.random_graph(8, 0.5, generator=torch_generator(0))
    x = torch.randn(8, generator=torch_generator(1), dtype=torch.float64)
    L = spectral.laplacian(A)
    edges = torch.nonzero(torch.triu(A))
    torch.testing.assert_close(x @ L @ x, ((x[edges[:, 0]] - x[edges[:, 1]]) ** 2).sum())
    torch.testing.assert_close(spectral.laplacian(A.to_sparse()).to_dense(), L)


def test_cycle_fourier_basis_is_dft_and_graph_conv_is_circular():
    n = 10
    L = spectral.laplacian(graphs.cycle_graph(n))
    U = conv.dft_matrix(n).conj().T / n**0.5
    lam = 2 - 2 * torch.cos(2 * torch.pi * torch.arange(n, dtype=torch.float64) / n)
    torch.testing.assert_close(L.to(U.dtype) @ U, U * lam)
    x, y = torch.randn(2, n, generator=torch_generator(2), dtype=torch.float64)
    torch.testing.assert_close(spectral.graph_conv(x, y, U) * n**0.5, conv.circular_conv(x, y))


def test_polynomial_filter_equals_spectral_and_is_local():
    A = graphs.grid_graph(5, 6)
    L = spectral.laplacian(A)
    alphas = torch.tensor([0.3, -1.0, 0.2], dtype=torch.float64)
    x = torch.randn(30, 2, generator=torch_generator(3), dtype=torch.float64)
    g = lambda lam: alphas[0] + alphas[1] * lam + alphas[2] * lam**2
    torch.testing.assert_close(spectral.polynomial_filter(L, x, alphas), spectral.spectral_filter(L, x, g))
    torch.testing.assert_close(spectral.polynomial_filter(spectral.laplacian(A.to_sparse()), x, alphas),
                               spectral.polynomial_filter(L, x, alphas))
    P = spectral.polynomial_filter_matrix(L, alphas)
    D = graphs.hop_distances(A)
    assert (P[D > 2] == 0).all() and (P[D == 2] != 0).all()
    lam, U = spectral.graph_fourier_basis(L)
    torch.testing.assert_close(U @ torch.diag(lam) @ U.T, L)


def test_bad_inputs():
    with pytest.raises(ValueError, match="kind must be one of"):
        spectral.laplacian(graphs.cycle_graph(3), "random-walk")
    with pytest.raises(ValueError, match="kind must be 'combinatorial' for a sparse A"):
        spectral.laplacian(graphs.cycle_graph(3).to_sparse(), "normalized")
    with pytest.raises(ValueError, match="A must be symmetric"):
        spectral.laplacian(torch.triu(torch.ones(3, 3, dtype=torch.float64), 1))
    with pytest.raises(ValueError, match="L must be square"):
        spectral.graph_fourier_basis(torch.zeros(2, 3, dtype=torch.float64))
    L = spectral.laplacian(graphs.cycle_graph(4))
    with pytest.raises(ValueError, match=r"x must have shape \(n,\) or \(n, c\) with n = 4"):
        spectral.spectral_filter(L, torch.zeros(3, dtype=torch.float64), torch.exp)
    with pytest.raises(ValueError, match="alphas must have at least one coefficient"):
        spectral.polynomial_filter(L, torch.zeros(4, dtype=torch.float64), torch.zeros(0, dtype=torch.float64))
    with pytest.raises(ValueError, match="L must be an \\(n, n\\) tensor with n = 3"):
        spectral.polynomial_filter(L, torch.zeros(3, dtype=torch.float64), torch.ones(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="L must be a 2-D tensor"):
        spectral.polynomial_filter_matrix(torch.zeros(3, dtype=torch.float64), torch.ones(1, dtype=torch.float64))
    with pytest.raises(ValueError, match="x must have shape"):
        spectral.graph_conv(torch.zeros(3, dtype=torch.float64), torch.zeros(4, dtype=torch.float64), torch.eye(4))
