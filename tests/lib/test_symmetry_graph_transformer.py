import pytest
import torch
import torch.nn.functional as F

from flt_lib.rng import torch_generator
from flt_lib.symmetry import graph_transformer as gt
from flt_lib.symmetry import graphs


def _qkv(n=8, d=4, seed=0):
    g = torch_generator(seed)
    return [torch.randn(n, d, generator=g, dtype=torch.float64) for _ in range(3)]


def test_edge_attention_on_the_complete_graph_is_self_attention():
    Q, K, V = _qkv()
    ref = F.scaled_dot_product_attention(Q[None], K[None], V[None])[0]
    assert (gt.edge_attention(Q, K, V, torch.ones(8, 8)) - ref).abs().max() < 1e-12


def test_edge_attention_with_a_mask_and_permutation_equivariance():
    Q, K, V = _qkv(seed=1)
    A = graphs.random_graph(8, 0.4, generator=torch_generator(2)) + torch.eye(
        8, dtype=torch.float64
    )
    ref = F.scaled_dot_product_attention(
        Q[None], K[None], V[None], attn_mask=A[None] > 0
    )[0]
    out = gt.edge_attention(Q, K, V, A)
    assert (out - ref).abs().max() < 1e-12
    p = torch.randperm(8, generator=torch_generator(3))
    assert (
        gt.edge_attention(Q[p], K[p], V[p], A[p][:, p]) - out[p]
    ).abs().max() < 1e-12


def test_sign_invariant_pe_and_projectors():
    A = graphs.cycle_graph(8)
    lam, U = gt.laplacian_pe(A, 3)
    g = torch_generator(4)
    W1, b1, W2 = (
        torch.randn(*s, generator=g, dtype=torch.float64)
        for s in ((1, 5), (5,), (5, 2))
    )
    S = torch.tensor([-1.0, 1.0, -1.0], dtype=torch.float64)
    f = gt.sign_invariant_pe(U, W1, b1, W2)
    assert torch.equal(f, gt.sign_invariant_pe(U * S, W1, b1, W2))
    assert (f - gt.sign_invariant_pe(2 * U, W1, b1, W2)).abs().max() > 1e-3
    vals, P = gt.eigenspace_projectors(A)
    assert [round(float(torch.trace(p))) for p in P] == [1, 2, 2, 2, 1]
    torch.testing.assert_close(sum(P), torch.eye(8, dtype=torch.float64))


def test_propagation_remedies():
    A_hat = graphs.normalized_adjacency(
        graphs.random_graph(20, 0.3, generator=torch_generator(5))
    )
    H0 = torch.randn(20, 3, generator=torch_generator(6), dtype=torch.float64)
    rel = lambda H: graphs.dirichlet_energy(H, A_hat) / H.pow(2).sum().item()
    plain = gt.propagate(H0, A_hat, 60, kind="plain")
    res = gt.propagate(H0, A_hat, 60, kind="residual", alpha=0.2)
    pn = gt.propagate(H0, A_hat, 60, kind="pairnorm")
    assert rel(plain[-1]) < 1e-8 and rel(res[-1]) > 1e-2 and rel(pn[-1]) > 1e-2
    # the residual iteration converges to alpha (I - (1 - alpha) A_hat)^{-1} H0
    limit = 0.2 * torch.linalg.solve(
        torch.eye(20, dtype=torch.float64) - 0.8 * A_hat, H0
    )
    assert (res[-1] - limit).abs().max() < 1e-4
    assert pn[-1].mean(0).abs().max() < 1e-12


def test_rewiring_shortens_paths():
    T = graphs.binary_tree(3)
    assert graphs.hop_distances(gt.rewire_two_hop(T)).max() == 3
    V = gt.add_virtual_node(T)
    assert graphs.hop_distances(V).max() == 2 and V.shape == (16, 16)


def test_bad_inputs():
    Q, K, V = _qkv()
    with pytest.raises(ValueError, match="at least one edge"):
        gt.edge_attention(Q, K, V, torch.zeros(8, 8))
    with pytest.raises(ValueError, match="K must have shape"):
        gt.edge_attention(Q, K[:5], V, torch.ones(8, 8))
    with pytest.raises(ValueError, match="k must be"):
        gt.laplacian_pe(graphs.cycle_graph(4), 4)
    with pytest.raises(ValueError, match="b1 must have shape"):
        gt.sign_invariant_pe(
            torch.zeros(4, 2, dtype=torch.float64),
            torch.zeros(1, 3, dtype=torch.float64),
            torch.zeros(2, dtype=torch.float64),
            torch.zeros(3, 1, dtype=torch.float64),
        )
    with pytest.raises(ValueError, match="kind"):
        gt.propagate(
            torch.zeros(3, 1, dtype=torch.float64),
            torch.eye(3, dtype=torch.float64),
            2,
            kind="skip",
        )
    with pytest.raises(ValueError, match="alpha"):
        gt.propagate(
            torch.zeros(3, 1, dtype=torch.float64),
            torch.eye(3, dtype=torch.float64),
            2,
            kind="residual",
            alpha=1.5,
        )
