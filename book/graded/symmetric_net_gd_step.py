"""Tests of the graded exercise `symmetric_net_gd_step` (Section 7.4): one gradient step
of the symmetric ReLU network with relative thresholds."""

WRONG = {
    "only the positive ReLU counted as active (u > b, not |u| > b)": """
        b = beta * W.norm(dim=1)
        u = X @ W.T
        f = (torch.relu(u - b) - torch.relu(-u - b)).sum(dim=1)
        g = -torch.sigmoid(-y * f) * y / X.shape[0]
        active = (u > b).to(X.dtype)
        return W - lr * (active * g[:, None]).T @ X
    """,
    "sigmoid(y f) instead of sigmoid(-y f)": """
        b = beta * W.norm(dim=1)
        u = X @ W.T
        f = (torch.relu(u - b) - torch.relu(-u - b)).sum(dim=1)
        g = -torch.sigmoid(y * f) * y / X.shape[0]
        active = (u.abs() > b).to(X.dtype)
        return W - lr * (active * g[:, None]).T @ X
    """,
    "the threshold beta, not beta ||w_i||": """
        u = X @ W.T
        f = (torch.relu(u - beta) - torch.relu(-u - beta)).sum(dim=1)
        g = -torch.sigmoid(-y * f) * y / X.shape[0]
        active = (u.abs() > beta).to(X.dtype)
        return W - lr * (active * g[:, None]).T @ X
    """,
}


def test_sparse_coding_data(symmetric_net_gd_step):
    """Sparse-coding inputs and labels, a small random first layer, a few thresholds."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import sparse_coding

    def reference(W, X, y, beta, lr):
        return sparse_coding.symmetric_gd_step(W, X, y, beta=beta, lr=lr)

    gen = torch.Generator().manual_seed(0)
    M = sparse_coding.random_dictionary(12, generator=gen).double()
    w_star = torch.randint(0, 2, (12,), generator=gen).double() * 2 - 1
    X, y, _ = sparse_coding.sample_sparse_coding(
        40, M, w_star, k=3, sigma_xi=0.05, generator=gen
    )
    W = 0.3 * torch.randn(16, 12, generator=gen, dtype=torch.float64)
    cases = {
        f"n = 40, d = 12, m = 16, beta = {beta}, lr = {lr}": (W, X, y, beta, lr)
        for beta, lr in ((0.0, 0.5), (0.3, 0.5), (0.5, 2.0))
    }
    grading.agree(symmetric_net_gd_step, reference, cases, atol=1e-10, rtol=1e-8)


def test_hidden_edge_cases(symmetric_net_gd_step):
    """One neuron, one example, a zero weight row, and a threshold no input reaches."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import sparse_coding

    def reference(W, X, y, beta, lr):
        return sparse_coding.symmetric_gd_step(W, X, y, beta=beta, lr=lr)

    gen = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    def labels(n):
        return torch.randint(0, 2, (n,), generator=gen).double() * 2 - 1

    W_zero_row = randn(4, 6)
    W_zero_row[2] = 0.0
    cases = {
        "one neuron (m = 1)": (randn(1, 5), randn(10, 5), labels(10), 0.2, 1.0),
        "one example (n = 1)": (randn(3, 5), randn(1, 5), labels(1), 0.2, 1.0),
        "a neuron with w_i = 0": (W_zero_row, randn(8, 6), labels(8), 0.3, 0.5),
        "beta = 10: no neuron fires": (randn(3, 4), randn(6, 4), labels(6), 10.0, 1.0),
    }
    grading.agree(symmetric_net_gd_step, reference, cases, atol=1e-10, rtol=1e-8)
