"""Tests of the graded exercise `least_squares_gd_steps` (Section 2.1): gradient descent
on the halved mean squared error."""

WRONG = {
    "the gradient lacks the factor 1/n": """
        w = torch.zeros(X.shape[1], dtype=X.dtype)
        for _ in range(steps):
            w = w - lr * X.T @ (X @ w - y)
        return w
    """,
    "the residual y - X w with the same minus sign (gradient ascent)": """
        w = torch.zeros(X.shape[1], dtype=X.dtype)
        for _ in range(steps):
            w = w - lr * X.T @ (y - X @ w) / X.shape[0]
        return w
    """,
}


def test_random_problems(least_squares_gd_steps):
    """Noisy linear targets, a few sizes, step sizes and numbers of steps."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import regression

    def reference(X, y, lr, steps):
        return regression.least_squares_gd(X, y, lr=lr, steps=steps).w

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, d, lr, steps in [(40, 5, 0.1, 20), (100, 3, 0.5, 50), (30, 8, 0.05, 7)]:
        X = torch.randn(n, d, generator=gen, dtype=torch.float64)
        y = X @ torch.randn(d, generator=gen, dtype=torch.float64) + 0.3 * torch.randn(
            n, generator=gen, dtype=torch.float64)
        cases[f"n = {n}, d = {d}, lr = {lr}, {steps} steps"] = (X, y, lr, steps)
    grading.agree(least_squares_gd_steps, reference, cases)


def test_hidden_edge_cases(least_squares_gd_steps):
    """No step, one step, one feature, and more features than examples."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import regression

    def reference(X, y, lr, steps):
        return regression.least_squares_gd(X, y, lr=lr, steps=steps).w

    gen = torch.Generator().manual_seed(1)
    f64 = dict(dtype=torch.float64)
    X = torch.randn(20, 4, generator=gen, **f64)
    y = torch.randn(20, generator=gen, **f64)
    cases = {
        "0 steps (w stays 0)": (X, y, 0.1, 0),
        "1 step": (X, y, 0.3, 1),
        "d = 1": (torch.randn(15, 1, generator=gen, **f64),
                  torch.randn(15, generator=gen, **f64), 0.4, 10),
        "n = 3 examples, d = 6 features": (
            torch.randn(3, 6, generator=gen, **f64),
            torch.randn(3, generator=gen, **f64), 0.1, 25),
    }
    grading.agree(least_squares_gd_steps, reference, cases)
