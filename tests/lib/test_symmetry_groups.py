import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.rng import torch_generator
from flt_lib.symmetry import conv, groups



def test_cyclic_group_is_roll_and_closed():
    Z = groups.cyclic_group(6)
    x = torch.arange(6.0)
    for s in range(6):
        assert torch.equal(groups.act(x, Z[s]), torch.roll(x, s))
    rows = {tuple(p.tolist()) for p in Z}
    assert all(tuple(h[g].tolist()) in rows for g in Z for h in Z)


def test_symmetric_group_enumerates_all_permutations():
    S = groups.symmetric_group(4)
    assert S.shape == (24, 4)
    assert {tuple(p.tolist()) for p in S} == set(itertools.permutations(range(4)))
    assert torch.equal(S[0], torch.arange(4))


def test_permutation_matrix_and_inverse():
    p = torch.tensor([2, 0, 3, 1])
    x = torch.randn(4, dtype=torch.float64, generator=torch_generator(0))
    P = groups.permutation_matrix(p)
    torch.testing.assert_close(P @ x, x[p])
    assert torch.equal(groups.act(groups.act(x, p), groups.inverse(p)), x)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 6))
def test_symmetrised_function_is_equivariant_under_every_shift(seed, n):
    g = torch_generator(seed)
    W = torch.randn(n, n, generator=g, dtype=torch.float64)
    f = lambda x: torch.tanh(x @ W.T)
    x = torch.randn(3, n, generator=g, dtype=torch.float64)
    Z = groups.cyclic_group(n)
    fbar = lambda z: groups.symmetrize_equivariant(f, z, Z)
    assert max(groups.equivariance_error(fbar, x, p) for p in Z) < 1e-12
    inv = lambda z: groups.symmetrize_invariant(f, z, Z)
    assert max(groups.invariance_error(inv, x, p) for p in Z) < 1e-12


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_symmetrised_set_function_under_random_permutations(seed):
    g = torch_generator(seed)
    V = torch.randn(8, 8, generator=g, dtype=torch.float64)
    f = lambda X: torch.tanh(X.flatten(-2) @ V).reshape(X.shape)      # (B, 4, 2)
    X = torch.randn(2, 4, 2, generator=g, dtype=torch.float64)
    fbar = lambda Z: groups.symmetrize_equivariant(f, Z, groups.symmetric_group(4), dim=-2)
    p = groups.random_permutation(4, generator=g)
    assert groups.equivariance_error(fbar, X, p, dim=-2) < 1e-12


def test_symmetrisation_fixes_equivariant_maps_and_gives_circulants():
    Z = groups.cyclic_group(5)
    h = torch.tensor([1.0, -2.0, 0.5, 0.0, 0.0], dtype=torch.float64)
    f = lambda x: x @ conv.circulant(h).T
    x = torch.randn(4, 5, generator=torch_generator(1), dtype=torch.float64)
    torch.testing.assert_close(groups.symmetrize_equivariant(f, x, Z), f(x))
    M = torch.randn(5, 5, generator=torch_generator(2), dtype=torch.float64)
    Mbar = groups.symmetrize_equivariant(lambda z: z @ M.T, torch.eye(5, dtype=torch.float64), Z).T
    assert conv.circulant_deviation(Mbar) < 1e-12 < 0.1 < conv.circulant_deviation(M)


def test_quadratic_features_and_least_squares():
    X = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64)
    assert groups.quadratic_features(X).tolist() == [[1.0, 2.0, 3.0, 4.0, 6.0, 9.0]]
    # invariant features of a cyclic group have rank floor(n/2) + 1
    Xr = torch.randn(200, 8, generator=torch_generator(3), dtype=torch.float64)
    inv = groups.symmetrize_invariant(groups.quadratic_features, Xr, groups.cyclic_group(8), dim=1)
    assert torch.linalg.matrix_rank(inv) == 5
    w = torch.randn(inv.shape[1], generator=torch_generator(4), dtype=torch.float64)
    w_hat = groups.min_norm_least_squares(inv, inv @ w)
    torch.testing.assert_close(inv @ w_hat, inv @ w)


def test_bad_inputs():
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        groups.cyclic_group(0)
    with pytest.raises(ValueError, match="n must be <= 8, got 9"):
        groups.symmetric_group(9)
    with pytest.raises(ValueError, match="perm must be a permutation of 0..n-1"):
        groups.inverse(torch.tensor([0, 0, 1]))
    with pytest.raises(TypeError, match="perm must be an integer tensor"):
        groups.permutation_matrix(torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="perm has length 3 but x has 4 entries along dim -1"):
        groups.act(torch.zeros(4), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="dim must be a valid axis of x"):
        groups.act(torch.zeros(4), torch.tensor([0, 1, 2, 3]), dim=2)
    with pytest.raises(TypeError, match="f must be callable"):
        groups.symmetrize_invariant(3, torch.zeros(2), groups.cyclic_group(2))
    with pytest.raises(TypeError, match="f must be callable"):
        groups.symmetrize_equivariant(3, torch.zeros(2), groups.cyclic_group(2))
    with pytest.raises(ValueError, match="group must be a non-empty integer tensor"):
        groups.symmetrize_invariant(lambda x: x, torch.zeros(2), torch.zeros(1, 2))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        groups.random_permutation(3, generator=0)
    with pytest.raises(ValueError, match="X must be a 2-D tensor"):
        groups.quadratic_features(torch.zeros(3))
    with pytest.raises(ValueError, match="y must have shape"):
        groups.min_norm_least_squares(torch.zeros(3, 2), torch.zeros(4))
    with pytest.raises(ValueError, match="rtol must be > 0.0"):
        groups.min_norm_least_squares(torch.zeros(3, 2), torch.zeros(3), rtol=0.0)
