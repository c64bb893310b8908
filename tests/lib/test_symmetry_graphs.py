import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.rng import torch_generator
from flt_lib.symmetry import graphs, groups



def test_constructions():
    assert graphs.cycle_graph(5).sum() == 10 and graphs.path_graph(4).sum() == 6
    assert graphs.complete_bipartite(2, 3).sum() == 12 and graphs.prism_graph().sum() == 18
    assert graphs.binary_tree(2).shape == (7, 7) and graphs.grid_graph(3, 4).sum() == 2 * 17
    A, block = graphs.stochastic_block_model([3, 4], 1.0, 0.0, generator=torch_generator(0))
    assert torch.equal(A, torch.block_diag(torch.ones(3, 3) - torch.eye(3),
                                           torch.ones(4, 4) - torch.eye(4)).double())
    assert block.tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert graphs.n_components(A) == 2 and graphs.n_components(graphs.cycle_graph(6)) == 1


def test_distances_and_triangles_against_brute_force():
    A = graphs.random_graph(9, 0.35, generator=torch_generator(1))
    D = graphs.hop_distances(A)
    # brute force: smallest k with (A + I)^k entry > 0
    M = torch.eye(9, dtype=torch.float64)
    brute = torch.full((9, 9), float("inf"), dtype=torch.float64)
    for k in range(9):
        brute[(M > 0) & torch.isinf(brute)] = k
        M = M @ (A + torch.eye(9, dtype=torch.float64))
    assert torch.equal(D, brute)
    tri = sum(int(A[i, j] * A[j, k] * A[i, k]) for i in range(9) for j in range(i + 1, 9)
              for k in range(j + 1, 9))
    assert graphs.triangle_count(A) == tri


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_gcn_coupling_spectrum(seed):
    A = graphs.random_graph(10, 0.4, generator=torch_generator(seed))
    A_hat = graphs.normalized_adjacency(A)
    ev = torch.linalg.eigvalsh(A_hat)
    assert ev.max() <= 1 + 1e-12 and ev.min() > -1
    assert (ev > 1 - 1e-9).sum() == graphs.n_components(A)
    lam = graphs.smoothing_factor(A_hat)
    X = torch.randn(10, 3, generator=torch_generator(seed + 1), dtype=torch.float64)
    if graphs.n_components(A) == 1:
        assert graphs.dirichlet_energy(A_hat @ X, A_hat) <= lam**2 * graphs.dirichlet_energy(X, A_hat) + 1e-12


def test_dirichlet_energy_matches_edge_sum_and_k55():
    A = graphs.random_graph(7, 0.5, generator=torch_generator(2))
    A_hat = graphs.normalized_adjacency(A)
    X = torch.randn(7, 2, generator=torch_generator(3), dtype=torch.float64)
    At = A + torch.eye(7, dtype=torch.float64)
    d = At.sum(1)
    Y = X / d.sqrt()[:, None]
    edge_sum = 0.5 * sum(At[i, j] * ((Y[i] - Y[j]) ** 2).sum() for i in range(7) for j in range(7))
    assert abs(graphs.dirichlet_energy(X, A_hat) - edge_sum.item()) < 1e-12
    K = graphs.normalized_adjacency(graphs.complete_bipartite(5, 5))
    assert abs(graphs.smoothing_factor(K) ** 2 - 4 / 9) < 1e-12
    assert abs(torch.linalg.eigvalsh(graphs.kipf_first_order(graphs.complete_bipartite(5, 5)))[-1] - 2) < 1e-12


def test_weisfeiler_lehman():
    two_triangles = graphs.disjoint_union(graphs.cycle_graph(3), graphs.cycle_graph(3))
    assert graphs.wl_equivalent(graphs.cycle_graph(6), two_triangles)
    assert graphs.wl_equivalent(graphs.complete_bipartite(3, 3), graphs.prism_graph())
    assert not graphs.wl_equivalent(graphs.path_graph(4), graphs.complete_bipartite(1, 3))
    colors = graphs.wl_colors(graphs.path_graph(5))
    assert colors[-1][0] == colors[-1][4] and colors[-1][1] == colors[-1][3] != colors[-1][2]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_relabelling_preserves_graph_invariants(seed):
    g = torch_generator(seed)
    A = graphs.random_graph(8, 0.4, generator=g)
    X = torch.randn(8, 2, generator=g, dtype=torch.float64)
    p = groups.random_permutation(8, generator=g)
    Ap, Xp = graphs.permute_graph(A, X, p)
    assert torch.equal(Xp, X[p]) and graphs.triangle_count(Ap) == graphs.triangle_count(A)
    assert graphs.wl_equivalent(A, Ap)
    torch.testing.assert_close(graphs.normalized_adjacency(Ap), graphs.normalized_adjacency(A)[p][:, p])


def test_bad_inputs():
    with pytest.raises(ValueError, match="A must be symmetric"):
        graphs.normalized_adjacency(torch.triu(torch.ones(3, 3, dtype=torch.float64), 1))
    with pytest.raises(ValueError, match="A must have a zero diagonal"):
        graphs.normalized_adjacency(torch.ones(3, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="A must be a non-empty square matrix"):
        graphs.triangle_count(torch.zeros(2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="n must be >= 3"):
        graphs.cycle_graph(2)
    with pytest.raises(ValueError, match=r"edge \(0, 0\) must join two different nodes"):
        graphs.from_edges(3, [(0, 0)])
    with pytest.raises(TypeError, match="every edge must be a pair of ints"):
        graphs.from_edges(3, [(0, 1, 2)])
    with pytest.raises(TypeError, match="sizes must be a non-empty list"):
        graphs.stochastic_block_model([], 0.5, 0.1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="p_in must be <= 1.0"):
        graphs.stochastic_block_model([3], 1.5, 0.1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="A_hat must have shape"):
        graphs.dirichlet_energy(torch.zeros(3, 2, dtype=torch.float64), torch.zeros(2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="depth must be <= 12"):
        graphs.binary_tree(13)
    with pytest.raises(ValueError, match="rounds must be >= 0"):
        graphs.wl_colors(graphs.cycle_graph(3), rounds=-1)
    with pytest.raises(ValueError, match="perm must have shape"):
        graphs.permute_graph(graphs.cycle_graph(3), torch.zeros(3, 1), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="rows must be >= 1"):
        graphs.grid_graph(0, 2)
    with pytest.raises(ValueError, match="A2 must be symmetric"):
        graphs.disjoint_union(graphs.cycle_graph(3), torch.triu(torch.ones(2, 2, dtype=torch.float64), 1))
    with pytest.raises(ValueError, match="A_hat must be a 2-D tensor"):
        graphs.smoothing_factor(torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="b must be >= 1"):
        graphs.complete_bipartite(2, 0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        graphs.path_graph(0)
    with pytest.raises(ValueError, match="A1 must be a 2-D tensor"):
        graphs.wl_equivalent(torch.zeros(3, dtype=torch.float64), graphs.cycle_graph(3))
    with pytest.raises(ValueError, match="A must be a 2-D tensor"):
        graphs.kipf_first_order(torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="A must be a 2-D tensor"):
        graphs.hop_distances(torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="A must be a 2-D tensor"):
        graphs.n_components(torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="n must be >= 1"):
        graphs.random_graph(0, 0.5, generator=torch_generator(0))


def test_dirichlet_energy_keeps_its_digits_after_80_steps():
    """The edge-sum form against the spectral formula sum_k (1 - mu_k) mu_k^(2t) |c_k|^2,
    which has no cancellation; ||X||^2 - <X, A_hat X> loses its digits by t = 80."""
    A_hat = graphs.normalized_adjacency(graphs.random_graph(30, 0.15, generator=torch_generator(7)))
    H = torch.randn(30, 4, generator=torch_generator(1), dtype=torch.float64)
    mu, V = torch.linalg.eigh(A_hat)
    c2 = ((V.T @ H) ** 2).sum(1)
    for _ in range(80):
        H = A_hat @ H
    exact = ((1 - mu) * mu ** 160 * c2)[:-1].sum().item()
    assert abs(graphs.dirichlet_energy(H, A_hat) - exact) < 1e-6 * exact
    cancelling = ((H * H).sum() - (H * (A_hat @ H)).sum()).item()
    assert abs(cancelling - exact) > 1e-3 * exact  # the old formula would fail this test


def test_dirichlet_energy_rejects_other_couplings():
    A = graphs.cycle_graph(5)
    with pytest.raises(ValueError, match="A_hat"):
        graphs.dirichlet_energy(torch.ones(5, 1, dtype=torch.float64), A)  # zero diagonal
    P = graphs.normalized_adjacency(A) * 0.9
    with pytest.raises(ValueError, match="eigenvalue 1"):
        graphs.dirichlet_energy(torch.ones(5, 1, dtype=torch.float64), P)
