"""Tests of the graded exercise `two_layer_ntk_gram` (Section 7.2): the empirical NTK of
the two-layer ReLU network."""

WRONG = {
    "1/sqrt(m), the features' scale, instead of its square 1/m": """
        p1, p2 = X1 @ W.T, X2 @ W.T
        k_a = torch.relu(p1) @ torch.relu(p2).T
        k_w = (X1 @ X2.T) * (((p1 > 0).to(X1) * a**2) @ (p2 > 0).to(X1).T)
        return (k_a + k_w) / math.sqrt(W.shape[0])
    """,
    "only the second layer's part (the gradient in W forgotten)": """
        p1, p2 = X1 @ W.T, X2 @ W.T
        return torch.relu(p1) @ torch.relu(p2).T / W.shape[0]
    """,
    "a_r instead of a_r^2 in the first layer's part": """
        p1, p2 = X1 @ W.T, X2 @ W.T
        k_a = torch.relu(p1) @ torch.relu(p2).T
        k_w = (X1 @ X2.T) * (((p1 > 0).to(X1) * a) @ (p2 > 0).to(X1).T)
        return (k_a + k_w) / W.shape[0]
    """,
}


def test_random_networks(two_layer_ntk_gram):
    """Random inputs and N(0, 1) weights, a few widths and dimensions."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import ntk

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n1, n2, d, m in ((5, 5, 3, 10), (4, 7, 6, 50), (8, 3, 2, 200)):
        X1 = torch.randn(n1, d, generator=gen, dtype=torch.float64)
        X2 = torch.randn(n2, d, generator=gen, dtype=torch.float64)
        W = torch.randn(m, d, generator=gen, dtype=torch.float64)
        a = torch.randn(m, generator=gen, dtype=torch.float64)
        cases[f"n1 = {n1}, n2 = {n2}, d = {d}, m = {m}"] = (X1, X2, W, a)
    grading.agree(two_layer_ntk_gram, ntk.empirical_ntk, cases)


def test_hidden_edge_cases(two_layer_ntk_gram):
    """Width one, one input, X2 = X1 (a symmetric Gram matrix), a zero second layer."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import ntk

    gen = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    X = randn(6, 4)
    cases = {
        "width m = 1": (randn(3, 4), randn(2, 4), randn(1, 4), randn(1)),
        "one input on each side, d = 1": (
            randn(1, 1), randn(1, 1), randn(5, 1), randn(5)),
        "X2 = X1, m = 30": (X, X, randn(30, 4), randn(30)),
        "a = 0 (only the second layer's part is left)": (
            randn(3, 4), randn(4, 4), randn(20, 4), 0 * randn(20)),
    }
    grading.agree(two_layer_ntk_gram, ntk.empirical_ntk, cases)
