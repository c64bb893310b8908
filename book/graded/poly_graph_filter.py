"""Tests of the graded exercise `poly_graph_filter` (Section 6.6): the polynomial graph
filter sum_k alpha_k L^k x from products with L."""

WRONG = {
    "Horner's rule started from alpha_0 (the coefficients reversed)": """
        y = alphas[0] * x
        for a in alphas[1:]:
            y = L @ y + a * x
        return y
    """,
    "the powers start at L^1": """
        y = torch.zeros_like(x)
        power = x
        for a in alphas:
            power = L @ power
            y = y + a * power
        return y
    """,
}


def test_random_graphs(poly_graph_filter):
    """Random graphs, one signal and several channels, degrees 2 and 4."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import spectral

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, shape, K in ((7, (7,), 2), (10, (10, 3), 4)):
        A = (torch.rand(n, n, generator=gen) < 0.4).double().triu(1)
        cases[f"random graph on {n} nodes, x of shape {shape}, degree {K}"] = (
            spectral.laplacian(A + A.T),
            torch.randn(*shape, generator=gen, dtype=torch.float64),
            torch.randn(K + 1, generator=gen, dtype=torch.float64))
    grading.agree(poly_graph_filter, spectral.polynomial_filter, cases)


def test_hidden_edge_cases(poly_graph_filter):
    """Degree 0, degree 1, a single node, a normalised Laplacian, a constant signal."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import graphs, spectral

    gen = torch.Generator().manual_seed(1)
    L6 = spectral.laplacian(graphs.cycle_graph(6))
    cases = {
        "degree 0: alpha_0 x": (
            L6, torch.randn(6, generator=gen, dtype=torch.float64),
            torch.tensor([1.5], dtype=torch.float64)),
        "degree 1: alpha_0 x + alpha_1 L x": (
            L6, torch.randn(6, 2, generator=gen, dtype=torch.float64),
            torch.tensor([0.5, -2.0], dtype=torch.float64)),
        "a graph of one node": (
            torch.zeros(1, 1, dtype=torch.float64),
            torch.tensor([3.0], dtype=torch.float64),
            torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)),
        "the normalised Laplacian of a path, degree 3": (
            spectral.laplacian(graphs.path_graph(5), "normalized"),
            torch.randn(5, generator=gen, dtype=torch.float64),
            torch.randn(4, generator=gen, dtype=torch.float64)),
        "a constant signal on the cycle (L x = 0)": (
            L6, torch.ones(6, dtype=torch.float64),
            torch.tensor([2.0, 1.0, -1.0], dtype=torch.float64)),
    }
    grading.agree(poly_graph_filter, spectral.polynomial_filter, cases)
