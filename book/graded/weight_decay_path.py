"""Tests of the graded exercise `weight_decay_path` (Section 3.5): gradient descent with
weight decay on least squares."""

WRONG = {
    "the decay is not multiplied by the step size": """
        n, d = X.shape
        path = [torch.zeros(d, dtype=X.dtype)]
        for _ in range(steps):
            w = path[-1]
            path.append((1 - weight_decay) * w - lr * X.T @ (X @ w - y) / n)
        return torch.stack(path)
    """,
    "the decay is applied after the gradient step": """
        n, d = X.shape
        path = [torch.zeros(d, dtype=X.dtype)]
        for _ in range(steps):
            w = path[-1]
            path.append((1 - lr * weight_decay) * (w - lr * X.T @ (X @ w - y) / n))
        return torch.stack(path)
    """,
    "the gradient is not divided by n": """
        n, d = X.shape
        path = [torch.zeros(d, dtype=X.dtype)]
        for _ in range(steps):
            w = path[-1]
            path.append((1 - lr * weight_decay) * w - lr * X.T @ (X @ w - y))
        return torch.stack(path)
    """,
}


def test_random_data(weight_decay_path):
    """Random least-squares problems with and without weight decay."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import regression

    def reference(X, y, lr, weight_decay, steps):
        return regression.least_squares_gd(X, y, lr=lr, steps=steps,
                                           weight_decay=weight_decay).path

    gen = torch.Generator().manual_seed(0)
    X = torch.randn(20, 5, generator=gen, dtype=torch.float64)
    y = torch.randn(20, generator=gen, dtype=torch.float64)
    cases = {
        f"n = 20, d = 5, lr = {lr}, lambda = {lam}, 30 steps": (X, y, lr, lam, 30)
        for lr, lam in ((0.1, 0.0), (0.1, 0.5), (0.3, 2.0))
    }
    grading.agree(weight_decay_path, reference, cases)


def test_hidden_edge_cases(weight_decay_path):
    """Zero steps, one step, d = 1, more features than examples."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import regression

    def reference(X, y, lr, weight_decay, steps):
        return regression.least_squares_gd(X, y, lr=lr, steps=steps,
                                           weight_decay=weight_decay).path

    gen = torch.Generator().manual_seed(1)
    X = torch.randn(6, 3, generator=gen, dtype=torch.float64)
    y = torch.randn(6, generator=gen, dtype=torch.float64)
    wide = torch.randn(4, 10, generator=gen, dtype=torch.float64)
    cases = {
        "steps = 0: the path is w_0 = 0 alone": (X, y, 0.1, 0.5, 0),
        "a single step": (X, y, 0.2, 0.3, 1),
        "d = 1": (X[:, :1], y, 0.2, 0.1, 5),
        "n = 4 < d = 10, strong decay": (wide, y[:4], 0.05, 3.0, 20),
    }
    grading.agree(weight_decay_path, reference, cases)
