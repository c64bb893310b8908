import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.rng import torch_generator
from flt_lib.symmetry import gnn, graphs, groups



def _graph(seed=0, n=10):
    g = torch_generator(seed)
    A = graphs.random_graph(n, 0.4, generator=g)
    X = torch.randn(n, 4, generator=g, dtype=torch.float64)
    return A, X


def test_gcn_layer_against_a_loop():
    A, X = _graph()
    A_hat = graphs.normalized_adjacency(A)
    W = torch.randn(4, 3, generator=torch_generator(1), dtype=torch.float64)
    deg = A.sum(1) + 1
    loop = torch.stack([sum((A[i, j] + (i == j)) * (X[j] @ W) / (deg[i] * deg[j]).sqrt()
                            for j in range(10)) for i in range(10)])
    torch.testing.assert_close(gnn.gcn_layer(X, A_hat, W, relu=False), loop)


def test_gat_attention_is_a_masked_softmax():
    A, X = _graph(1)
    layer = gnn.GATLayer(4, 5, generator=torch_generator(2), dtype=torch.float64)
    alpha = layer.attention(X, A)
    torch.testing.assert_close(alpha.sum(1), torch.ones(10, dtype=torch.float64))
    mask = (A + torch.eye(10, dtype=torch.float64)) > 0
    assert (alpha[~mask] == 0).all() and (alpha[mask] > 0).all()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_layers_are_permutation_equivariant(seed):
    A, X = _graph(seed)
    p = groups.random_permutation(10, generator=torch_generator(seed + 1))
    Ap, Xp = graphs.permute_graph(A, X, p)
    gcn = gnn.GCN([4, 6, 2], generator=torch_generator(seed), dtype=torch.float64)
    gat = gnn.GAT(4, 6, 2, generator=torch_generator(seed), dtype=torch.float64)
    gin = gnn.GIN(4, 6, 2, generator=torch_generator(seed), dtype=torch.float64)
    f_gcn = lambda X, A: gcn(X, graphs.normalized_adjacency(A))
    for f in (f_gcn, gat, gin):
        assert (f(Xp, Ap) - f(X, A)[p]).abs().max() < 1e-10
    assert (gin.readout(Xp, Ap) - gin.readout(X, A)).abs().max() < 1e-10


def test_gin_cannot_separate_wl_equivalent_graphs():
    gin = gnn.GIN(1, 8, 3, generator=torch_generator(0), dtype=torch.float64)
    ones = torch.ones(6, 1, dtype=torch.float64)
    a = gin.readout(ones, graphs.complete_bipartite(3, 3))
    b = gin.readout(ones, graphs.prism_graph())
    assert (a - b).abs().max() < 1e-12
    c = gin.readout(torch.ones(4, 1, dtype=torch.float64), graphs.path_graph(4))
    d = gin.readout(torch.ones(4, 1, dtype=torch.float64), graphs.complete_bipartite(1, 3))
    assert (c - d).abs().max() > 1e-3


def test_oversquashing_bound_holds_and_is_attained():
    A_hat = graphs.normalized_adjacency(graphs.binary_tree(3))
    X = torch.randn(15, 3, generator=torch_generator(0), dtype=torch.float64)
    Ws = [torch.randn(3, 3, generator=torch_generator(k), dtype=torch.float64) for k in range(3)]

    def net(Z, act, weights):
        for W in weights:
            Z = act(gnn.gcn_layer(Z, A_hat, W, relu=False))
        return Z

    J = gnn.jacobian_norms(lambda Z: net(Z, torch.relu, Ws), X, 0)
    assert (J <= gnn.oversquashing_bound(A_hat, Ws, 0) * (1 + 1e-9) + 1e-15).all()
    Qs = [torch.linalg.qr(W)[0] for W in Ws]
    J_lin = gnn.jacobian_norms(lambda Z: net(Z, lambda z: z, Qs), X, 0)
    torch.testing.assert_close(J_lin, torch.linalg.matrix_power(A_hat, 3)[0])


def test_node_mlp_ignores_the_graph_and_features():
    A, X = _graph(3)
    mlp = gnn.NodeMLP([4, 5, 2], generator=torch_generator(0), dtype=torch.float64)
    assert torch.equal(mlp(X, graphs.normalized_adjacency(A)), mlp(X, torch.zeros(10, 10)))
    block = torch.tensor([0, 0, 1, 2])
    F = gnn.sbm_node_features(block, 3, signal=5.0, generator=torch_generator(0))
    assert F.shape == (4, 3) and (F.argmax(1) == block).float().mean() >= 0.5


def test_bad_inputs():
    A, X = _graph()
    with pytest.raises(ValueError, match="W must have d_in = 4 rows, got 3"):
        gnn.gcn_layer(X, A, torch.zeros(3, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="A_hat must have shape"):
        gnn.gcn_layer(X, torch.zeros(3, 3, dtype=torch.float64), torch.zeros(4, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="sizes must list at least an input and an output"):
        gnn.GCN([4], generator=torch_generator(0))
    with pytest.raises(ValueError, match="d_out must be >= 1"):
        gnn.GATLayer(3, 0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="layers must be >= 1"):
        gnn.GIN(2, 4, 0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="i must be <= 9"):
        gnn.jacobian_norms(lambda Z: Z, X, 10)
    with pytest.raises(TypeError, match="weights must be a non-empty list"):
        gnn.oversquashing_bound(A, [], 0)
    with pytest.raises(ValueError, match="d must be >= 3"):
        gnn.sbm_node_features(torch.tensor([0, 2]), 2, signal=1.0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="signal must be >= 0.0"):
        gnn.sbm_node_features(torch.tensor([0, 1]), 2, signal=-1.0, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        gnn.GAT(2, 2, 2, generator=None)
    with pytest.raises(ValueError, match="A must have shape"):
        gnn.GATLayer(4, 2, generator=torch_generator(0), dtype=torch.float64).attention(X, A[:5, :5])
