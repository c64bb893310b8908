"""Tests of the graded exercise `diagonal_net_gd` (Section 7.3): gradient descent on a
diagonal linear network from u = v = alpha 1."""

WRONG = {
    "the factor 2 of d(u^2)/du forgotten": """
        u = torch.full((X.shape[1],), alpha, dtype=X.dtype)
        v = u.clone()
        for _ in range(steps):
            g = X.T @ (X @ (u * u - v * v) - y) / X.shape[0]
            u, v = u - lr * u * g, v + lr * v * g
        return u * u - v * v
    """,
    "v moved like u (the sign of -v^2 lost)": """
        u = torch.full((X.shape[1],), alpha, dtype=X.dtype)
        v = u.clone()
        for _ in range(steps):
            g = X.T @ (X @ (u * u - v * v) - y) / X.shape[0]
            u, v = u - 2 * lr * u * g, v - 2 * lr * v * g
        return u * u - v * v
    """,
    "v updated with the gradient at the new u": """
        u = torch.full((X.shape[1],), alpha, dtype=X.dtype)
        v = u.clone()
        for _ in range(steps):
            g = X.T @ (X @ (u * u - v * v) - y) / X.shape[0]
            u = u - 2 * lr * u * g
            g = X.T @ (X @ (u * u - v * v) - y) / X.shape[0]
            v = v + 2 * lr * v * g
        return u * u - v * v
    """,
}


def test_sparse_regression(diagonal_net_gd):
    """Underdetermined sparse regression, small and large initialisation scales."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import diagonal

    def reference(X, y, alpha, lr, steps):
        return diagonal.train_diagonal(X, y, alpha=alpha, lr=lr, steps=steps).beta

    gen = torch.Generator().manual_seed(0)
    X, y, _ = diagonal.sparse_regression_data(10, 25, 3, generator=gen)
    X, y = X.double(), y.double()
    cases = {
        f"n = 10, d = 25, alpha = {al}, lr = {lr}, {T} steps": (X, y, al, lr, T)
        for al, lr, T in ((0.01, 0.05, 200), (0.3, 0.05, 50), (3.0, 0.002, 30))
    }
    grading.agree(diagonal_net_gd, reference, cases, atol=1e-8, rtol=1e-6)


def test_hidden_edge_cases(diagonal_net_gd):
    """One step, one example, d = 1, and more examples than dimensions."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import diagonal

    def reference(X, y, alpha, lr, steps):
        return diagonal.train_diagonal(X, y, alpha=alpha, lr=lr, steps=steps).beta

    gen = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    cases = {
        "one step": (randn(5, 8), randn(5), 0.5, 0.1, 1),
        "one example (n = 1)": (randn(1, 6), randn(1), 0.2, 0.1, 20),
        "one coordinate (d = 1)": (randn(4, 1), randn(4), 1.0, 0.05, 10),
        "n = 30 > d = 5": (randn(30, 5), randn(30), 0.1, 0.05, 40),
    }
    grading.agree(diagonal_net_gd, reference, cases, atol=1e-8, rtol=1e-6)
