"""Tests of the graded exercise `ridge_outer_fit` (Section 2.4): the least-squares fit
of the outer layer of a sigmoid network with fixed inner weights."""

WRONG = {
    "no output bias": """
        F = torch.sigmoid(X @ W.T + b)
        I = torch.eye(F.shape[1], dtype=X.dtype)
        v = torch.linalg.solve(F.T @ F + ridge * X.shape[0] * I, F.T @ y)
        return F @ v
    """,
    "the ridge is not multiplied by n": """
        F = torch.sigmoid(X @ W.T + b)
        A = torch.cat([F, torch.ones(X.shape[0], 1, dtype=X.dtype)], dim=1)
        I = torch.eye(A.shape[1], dtype=X.dtype)
        v = torch.linalg.solve(A.T @ A + ridge * I, A.T @ y)
        return A @ v
    """,
}


def test_random_units(ridge_outer_fit):
    """Random units in one and three dimensions, smooth and rough targets."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import approximation

    def reference(X, y, W, b, ridge):
        return approximation.fit_ridge_network(X, y, W, b, ridge=ridge)

    gen = torch.Generator().manual_seed(0)
    f64 = dict(dtype=torch.float64)
    x = torch.linspace(-1, 1, 101, **f64)[:, None]
    W, b = approximation.random_ridge_units_1d(12, steepness=8.0, generator=gen)
    X3 = torch.randn(60, 3, generator=gen, **f64)
    W3 = torch.randn(10, 3, generator=gen, **f64)
    b3 = torch.randn(10, generator=gen, **f64)
    cases = {
        "sin(3 pi x) on 101 points, 12 units, ridge 1e-3": (
            x, torch.sin(3 * torch.pi * x[:, 0]), W, b, 1e-3),
        "|x| on 101 points, 12 units, ridge 0.1": (x, x[:, 0].abs(), W, b, 0.1),
        "60 points in R^3, 10 units, ridge 1e-2": (
            X3, X3[:, 0] * X3[:, 1], W3, b3, 1e-2),
    }
    grading.agree(ridge_outer_fit, reference, cases)


def test_hidden_edge_cases(ridge_outer_fit):
    """One unit, more units than points, a large ridge, a constant target."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import approximation

    def reference(X, y, W, b, ridge):
        return approximation.fit_ridge_network(X, y, W, b, ridge=ridge)

    gen = torch.Generator().manual_seed(1)
    f64 = dict(dtype=torch.float64)
    X = torch.randn(8, 2, generator=gen, **f64)
    y = torch.randn(8, generator=gen, **f64)
    cases = {
        "one unit": (X, y, torch.randn(1, 2, generator=gen, **f64),
                     torch.zeros(1, **f64), 1e-2),
        "20 units on 8 points": (X, y, torch.randn(20, 2, generator=gen, **f64),
                                 torch.randn(20, generator=gen, **f64), 1e-2),
        "ridge 10 (the fit shrinks towards 0)": (
            X, y, torch.randn(5, 2, generator=gen, **f64),
            torch.randn(5, generator=gen, **f64), 10.0),
        "a constant target 3": (X, 3 * torch.ones(8, **f64),
                                torch.randn(4, 2, generator=gen, **f64),
                                torch.randn(4, generator=gen, **f64), 1e-3),
    }
    grading.agree(ridge_outer_fit, reference, cases)
