import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.rng import torch_generator
from flt_lib.symmetry import groups, orthogonal



def _X(d=6, n=4, seed=0):
    return 0.6 * torch.randn(d, n, generator=torch_generator(seed), dtype=torch.float64)


def test_random_orthogonal_is_orthogonal():
    Q = orthogonal.random_orthogonal(7, generator=torch_generator(0))
    torch.testing.assert_close(Q.T @ Q, torch.eye(7, dtype=torch.float64))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 8), n=st.integers(1, 6))
def test_gram_attention_is_orthogonally_equivariant(seed, d, n):
    X = _X(d, n, seed)
    Q = orthogonal.random_orthogonal(d, generator=torch_generator(seed + 1))
    assert orthogonal.orthogonal_equivariance_error(orthogonal.gram_attention, X, Q) < 1e-12
    Zq, Zk = _X(d, 2, seed + 2), _X(d, 2, seed + 3)
    joint = orthogonal.knowledge_attention(Q @ X, Q @ Zq, Q @ Zk)
    assert (joint - Q @ orthogonal.knowledge_attention(X, Zq, Zk)).abs().max() < 1e-12


def test_fixed_w_attention_is_not_equivariant_and_coefficients_depend_on_gram():
    X = _X(8, 5)
    W = torch.randn(8, 8, generator=torch_generator(1), dtype=torch.float64)
    Q = orthogonal.random_orthogonal(8, generator=torch_generator(2))
    f = lambda Z: orthogonal.bilinear_attention(Z, W)
    assert orthogonal.orthogonal_equivariance_error(f, X, Q) > 0.05
    C = lambda g, Z: orthogonal.gram_coefficients(g(Z), Z)
    torch.testing.assert_close(C(orthogonal.gram_attention, Q @ X), torch.softmax(X.T @ X, dim=0))
    assert orthogonal.column_space_residual(orthogonal.gram_attention(X), X) < 1e-12
    assert orthogonal.column_space_residual(torch.randn(8, 5, dtype=torch.float64), X) > 1e-3


def test_knowledge_attention_is_bilinear_attention_and_permutation_equivariant():
    X, Zq, Zk = _X(6, 5), _X(6, 3, 1), _X(6, 3, 2)
    torch.testing.assert_close(orthogonal.knowledge_attention(X, Zq, Zk),
                               orthogonal.bilinear_attention(X, Zk @ Zq.T))
    p = groups.random_permutation(5, generator=torch_generator(3))
    f = lambda Y: orthogonal.knowledge_attention(Y, Zq, Zk)
    assert groups.equivariance_error(f, X, p, dim=1) < 1e-12


def test_procrustes_recovers_rotation_from_equal_gram():
    X = _X(5, 3)
    lam, V = torch.linalg.eigh(X.T @ X)
    Y = torch.cat([lam.clamp_min(0).sqrt()[:, None] * V.T, X.new_zeros(2, 3)])
    torch.testing.assert_close(orthogonal.procrustes(X, Y) @ X, Y)


@pytest.mark.parametrize("n", [1, 3, 40])
def test_streaming_attention_equals_softmax(n):
    X = _X(4, n, n)
    W = torch.randn(4, 4, generator=torch_generator(1), dtype=torch.float64)
    i = n // 2
    torch.testing.assert_close(orthogonal.streaming_attention(X, i, W),
                               orthogonal.bilinear_attention(X, W)[:, i])


def test_bad_inputs():
    X = _X()
    with pytest.raises(ValueError, match="X must be a 2-D tensor"):
        orthogonal.gram_attention(torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"W must have shape \(d, d\) = \(6, 6\)"):
        orthogonal.bilinear_attention(X, torch.zeros(5, 5, dtype=torch.float64))
    with pytest.raises(ValueError, match="Z_q must have d = 6 rows"):
        orthogonal.knowledge_attention(X, torch.zeros(5, 2, dtype=torch.float64), torch.zeros(5, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="Z_k must have shape"):
        orthogonal.knowledge_attention(X, torch.zeros(6, 2, dtype=torch.float64), torch.zeros(6, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="Q must have shape"):
        orthogonal.orthogonal_equivariance_error(orthogonal.gram_attention, X, torch.eye(5, dtype=torch.float64))
    with pytest.raises(ValueError, match="F must have d = 6 rows"):
        orthogonal.column_space_residual(torch.zeros(5, 4, dtype=torch.float64), X)
    with pytest.raises(ValueError, match="F must have d = 6 rows"):
        orthogonal.gram_coefficients(torch.zeros(5, 4, dtype=torch.float64), X)
    with pytest.raises(ValueError, match="Y must have the shape of X"):
        orthogonal.procrustes(X, torch.zeros(6, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="i must be <= 3"):
        orthogonal.streaming_attention(X, 4, torch.eye(6, dtype=torch.float64))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        orthogonal.random_orthogonal(3, generator=None)
