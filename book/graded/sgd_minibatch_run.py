"""Tests of the graded exercise `sgd_minibatch_run` (Section 3.4): minibatch SGD on
least squares."""

WRONG = {
    "the minibatch gradient is summed, not averaged": """
        n, d = X.shape
        batches = torch.randint(0, n, (len(lrs), batch_size), generator=generator)
        w = torch.zeros(d, dtype=X.dtype)
        for lr, idx in zip(lrs, batches):
            Xb, yb = X[idx], y[idx]
            w = w - lr * Xb.T @ (Xb @ w - yb)
        return w
    """,
    "one minibatch is drawn and reused at every step": """
        n, d = X.shape
        idx = torch.randint(0, n, (batch_size,), generator=generator)
        w = torch.zeros(d, dtype=X.dtype)
        for lr in lrs:
            Xb, yb = X[idx], y[idx]
            w = w - lr * Xb.T @ (Xb @ w - yb) / batch_size
        return w
    """,
    "the residual has the wrong sign (y - Xw)": """
        n, d = X.shape
        batches = torch.randint(0, n, (len(lrs), batch_size), generator=generator)
        w = torch.zeros(d, dtype=X.dtype)
        for lr, idx in zip(lrs, batches):
            Xb, yb = X[idx], y[idx]
            w = w - lr * Xb.T @ (yb - Xb @ w) / batch_size
        return w
    """,
}


def test_random_runs(sgd_minibatch_run):
    """Short runs on random data, constant and decaying steps."""
    import torch

    from flt_lib import grading
    from flt_lib.optim import sgd

    def reference(X, y, lrs, batch_size, generator):
        return sgd.sgd_least_squares(X, y, lrs=lrs, batch_size=batch_size,
                                     generator=generator).w

    gen = torch.Generator().manual_seed(0)
    X = torch.randn(30, 4, generator=gen, dtype=torch.float64)
    y = torch.randn(30, generator=gen, dtype=torch.float64)
    decay = 0.1 / (1 + torch.arange(15, dtype=torch.float64))
    cases = {
        "n = 30, d = 4, T = 10 constant steps 0.05, B = 4": (
            X, y, torch.full((10,), 0.05, dtype=torch.float64), 4,
            torch.Generator().manual_seed(5)),
        "n = 30, d = 4, T = 15 steps 0.1 / (1 + t), B = 2": (
            X, y, decay, 2, torch.Generator().manual_seed(6)),
    }
    grading.agree(sgd_minibatch_run, reference, cases)


def test_hidden_edge_cases(sgd_minibatch_run):
    """One step, B = 1, a batch larger than n, d = 1, and zero steps T = 0."""
    import torch

    from flt_lib import grading
    from flt_lib.optim import sgd

    def reference(X, y, lrs, batch_size, generator):
        return sgd.sgd_least_squares(X, y, lrs=lrs, batch_size=batch_size,
                                     generator=generator).w

    gen = torch.Generator().manual_seed(1)
    X = torch.randn(8, 3, generator=gen, dtype=torch.float64)
    y = torch.randn(8, generator=gen, dtype=torch.float64)
    x1 = torch.randn(12, 1, generator=gen, dtype=torch.float64)
    steps = torch.full((6,), 0.2, dtype=torch.float64)

    def g(k):
        return torch.Generator().manual_seed(k)

    cases = {
        "a single step, B = 1": (X, y, steps[:1], 1, g(2)),
        "B = 20 > n = 8 (with replacement)": (X, y, steps, 20, g(3)),
        "d = 1": (x1, 2 * x1[:, 0], steps, 3, g(4)),
        "T = 0 steps: w stays 0": (X, y, steps[:0], 2, g(5)),
    }
    grading.agree(sgd_minibatch_run, reference, cases)
