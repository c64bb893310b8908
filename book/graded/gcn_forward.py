"""Tests of the graded exercise `gcn_forward` (Section 6.5): one GCN layer with the
renormalised adjacency D^{-1/2} (A + I) D^{-1/2} and a ReLU."""

WRONG = {
    "no self-loops: D^{-1/2} A D^{-1/2}": """
        inv_sqrt = A.sum(dim=1).rsqrt()
        A_hat = inv_sqrt[:, None] * A * inv_sqrt[None, :]
        return torch.relu(A_hat @ H @ W)
    """,
    "row normalisation D^{-1} (A + I)": """
        A_tilde = A + torch.eye(A.shape[0], dtype=A.dtype)
        A_hat = A_tilde / A_tilde.sum(dim=1, keepdim=True)
        return torch.relu(A_hat @ H @ W)
    """,
    "the degrees of A, not of A + I": """
        A_tilde = A + torch.eye(A.shape[0], dtype=A.dtype)
        inv_sqrt = A.sum(dim=1).clamp_min(1).rsqrt()
        A_hat = inv_sqrt[:, None] * A_tilde * inv_sqrt[None, :]
        return torch.relu(A_hat @ H @ W)
    """,
}


def test_random_graphs(gcn_forward):
    """Random graphs of two sizes and densities."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import gnn, graphs

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, p in ((6, 0.5), (15, 0.2)):
        A = (torch.rand(n, n, generator=gen) < p).double().triu(1)
        cases[f"random graph on {n} nodes, 2 -> 3 features"] = (
            A + A.T, torch.randn(n, 2, generator=gen, dtype=torch.float64),
            torch.randn(2, 3, generator=gen, dtype=torch.float64))
    grading.agree(gcn_forward,
                  lambda A, H, W: gnn.gcn_layer(H, graphs.normalized_adjacency(A), W),
                  cases)


def test_hidden_edge_cases(gcn_forward):
    """A path plus an isolated node, one node, no edges, K_5, a star with d_out = 1."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import gnn, graphs

    gen = torch.Generator().manual_seed(1)

    def feats(n, d_in, d_out):
        return (torch.randn(n, d_in, generator=gen, dtype=torch.float64),
                torch.randn(d_in, d_out, generator=gen, dtype=torch.float64))

    with_isolated = torch.block_diag(graphs.path_graph(4),
                                     torch.zeros(1, 1, dtype=torch.float64))
    cases = {
        "a path on 4 nodes plus an isolated node": (with_isolated, *feats(5, 3, 2)),
        "a single node": (torch.zeros(1, 1, dtype=torch.float64), *feats(1, 2, 2)),
        "4 nodes and no edges": (
            torch.zeros(4, 4, dtype=torch.float64), *feats(4, 2, 3)),
        "the complete graph on 5 nodes": (
            torch.ones(5, 5, dtype=torch.float64) - torch.eye(5, dtype=torch.float64),
            *feats(5, 3, 3)),
        "a star on 6 nodes, one output feature": (
            graphs.complete_bipartite(1, 5), *feats(6, 4, 1)),
    }
    grading.agree(gcn_forward,
                  lambda A, H, W: gnn.gcn_layer(H, graphs.normalized_adjacency(A), W),
                  cases)
