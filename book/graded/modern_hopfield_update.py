"""Tests of the graded exercise `modern_hopfield_update` (Section 1.6): one update of
the modern Hopfield network."""

WRONG = {
    "the softmax runs over the first axis (wrong for a batch of states)": """
        weights = torch.softmax(beta * (x @ patterns.T), dim=0)
        return weights @ patterns
    """,
    "the inverse temperature is left out": """
        weights = torch.softmax(x @ patterns.T, dim=-1)
        return weights @ patterns
    """,
    "the overlaps are divided by beta": """
        weights = torch.softmax(x @ patterns.T / beta, dim=-1)
        return weights @ patterns
    """,
}


def test_single_states(modern_hopfield_update):
    """Random patterns, states of shape (n,) for three inverse temperatures, a batch."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import dense_memory

    def reference(patterns, x, beta):
        return dense_memory.modern_update(patterns, x, beta=beta)

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for s, n, beta in [(5, 8, 0.5), (20, 16, 1.0), (3, 4, 4.0)]:
        patterns = torch.randn(s, n, generator=gen, dtype=torch.float64)
        x = torch.randn(n, generator=gen, dtype=torch.float64)
        cases[f"{s} patterns in R^{n}, beta = {beta}"] = (patterns, x, beta)
    cases["a batch of 3 states, shape (3, 8)"] = (
        torch.randn(5, 8, generator=gen, dtype=torch.float64),
        torch.randn(3, 8, generator=gen, dtype=torch.float64), 0.7)
    grading.agree(modern_hopfield_update, reference, cases)


def test_hidden_batches_and_limits(modern_hopfield_update):
    """A batch of states, one stored pattern, a large beta, and n = 1."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import dense_memory

    def reference(patterns, x, beta):
        return dense_memory.modern_update(patterns, x, beta=beta)

    gen = torch.Generator().manual_seed(1)
    f64 = dict(dtype=torch.float64)
    P = torch.randint(0, 2, (6, 10), generator=gen).double() * 2 - 1
    cases = {
        "a batch of 4 states, shape (4, 10), beta = 0.3": (
            P, torch.randn(4, 10, generator=gen, **f64), 0.3),
        "one stored pattern": (P[:1], torch.randn(10, generator=gen, **f64), 2.0),
        "beta = 50 on a noisy stored pattern": (P, P[2] + 0.3, 50.0),
        "n = 1, a batch of 3 states": (
            torch.tensor([[1.0], [-2.0]], **f64),
            torch.tensor([[0.5], [-1.0], [2.0]], **f64), 1.5),
    }
    grading.agree(modern_hopfield_update, reference, cases)
