"""Tests of the graded exercise `perceptron_loop` (Section 1.2): the perceptron
algorithm as the textbook double loop over the data."""

WRONG = {
    "a mistake only when y <w, x> < 0, so w = 0 is never updated": """
        w, k = torch.zeros(X.shape[1], dtype=X.dtype), 0
        while True:
            clean_pass = True
            for i in range(X.shape[0]):
                if y[i] * (X[i] @ w) < 0:
                    if k == max_updates:
                        return w, k
                    w = w + y[i] * X[i]
                    k += 1
                    clean_pass = False
            if clean_pass:
                return w, k
    """,
    "every update uses the first mistake, not the next one in the pass": """
        w, k = torch.zeros(X.shape[1], dtype=X.dtype), 0
        while True:
            mistakes = [i for i in range(X.shape[0]) if y[i] * (X[i] @ w) <= 0]
            if not mistakes or k == max_updates:
                return w, k
            w = w + y[mistakes[0]] * X[mistakes[0]]
            k += 1
    """,
    "the label is left out of the update": """
        w, k = torch.zeros(X.shape[1], dtype=X.dtype), 0
        while True:
            clean_pass = True
            for i in range(X.shape[0]):
                if y[i] * (X[i] @ w) <= 0:
                    if k == max_updates:
                        return w, k
                    w = w + X[i]
                    k += 1
                    clean_pass = False
            if clean_pass:
                return w, k
    """,
}


def test_separable_data(perceptron_loop):
    """Separable data of two kinds and margins, with a generous cap."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import perceptron

    def reference(X, y, max_updates):
        run = perceptron.perceptron(X, y, max_updates=max_updates)
        return run.w, run.n_updates

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, d, gamma, kind in [(30, 5, 0.2, "ball"), (40, 8, 0.1, "shell"),
                              (20, 3, 0.05, "shell")]:
        X, y, _ = perceptron.separable_data(n, d, gamma=gamma, generator=gen, kind=kind)
        cases[f"{kind} data, n = {n}, d = {d}, margin {gamma}"] = (
            X.double(), y.double(), 10_000)
    grading.agree(perceptron_loop, reference, cases)


def test_hidden_caps_and_edge_cases(perceptron_loop):
    """XOR up to the cap, a cap of zero, a cap hit in mid-pass, and one example."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import perceptron

    def reference(X, y, max_updates):
        run = perceptron.perceptron(X, y, max_updates=max_updates)
        return run.w, run.n_updates

    gen = torch.Generator().manual_seed(1)
    corners = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]],
                           dtype=torch.float64)
    xor = (perceptron.add_bias(corners),
           torch.tensor([-1.0, 1.0, 1.0, -1.0], dtype=torch.float64))
    X, y, _ = perceptron.separable_data(40, 10, gamma=0.05, generator=gen, kind="shell")
    cases = {
        "lifted XOR (never separable), cap 37": (*xor, 37),
        "shell data with a cap of 0 updates": (X.double(), y.double(), 0),
        "shell data with a cap of 7 updates": (X.double(), y.double(), 7),
        "one example": (torch.tensor([[1.0, -2.0]], dtype=torch.float64),
                        torch.tensor([-1.0], dtype=torch.float64), 100),
    }
    grading.agree(perceptron_loop, reference, cases)
