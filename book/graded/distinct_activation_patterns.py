"""Tests of the graded exercise `distinct_activation_patterns` (Section 2.5): the
activation patterns of a ReLU layer that occur among given inputs."""

WRONG = {
    "a unit counts as active at a zero pre-activation": """
        patterns = X @ W.T + b >= 0
        return torch.unique(patterns, dim=0)
    """,
    "W is applied without its transpose": """
        patterns = X @ W + b > 0
        return torch.unique(patterns, dim=0)
    """,
    "torch.unique without dim=0 (distinct entries, not rows)": """
        patterns = X @ W.T + b > 0
        return torch.unique(patterns)
    """,
}


def test_random_layers(distinct_activation_patterns):
    """Random layers on random points in the plane and in R^3."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import regions

    def reference(X, W, b):
        return torch.unique(regions.activation_pattern(X, W, b), dim=0)

    gen = torch.Generator().manual_seed(0)
    f64 = dict(dtype=torch.float64)
    cases = {}
    for n, d, m in [(500, 2, 5), (300, 3, 4), (200, 2, 2)]:
        cases[f"{n} Gaussian points in R^{d}, {m} units"] = (
            3 * torch.randn(n, d, generator=gen, **f64),
            torch.randn(m, d, generator=gen, **f64),
            torch.randn(m, generator=gen, **f64))
    grading.agree(distinct_activation_patterns, reference, cases)


def test_hidden_lattice_and_edge_cases(distinct_activation_patterns):
    """Lattice points on the lines, one unit, one input, inputs only on a line."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import regions

    def reference(X, W, b):
        return torch.unique(regions.activation_pattern(X, W, b), dim=0)

    f64 = dict(dtype=torch.float64)
    g = torch.arange(-3.0, 3.01, 1.0, **f64)
    lattice = torch.cartesian_prod(g, g)  # (49, 2), many points on the lines
    through_origin = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]],
                                  **f64)
    cases = {
        "a 7 x 7 lattice, 4 lines through the origin": (
            lattice, through_origin, torch.zeros(4, **f64)),
        "a 7 x 7 lattice, 2 parallel lines": (
            lattice, torch.tensor([[1.0, 0.0], [1.0, 0.0]], **f64),
            torch.tensor([0.0, -2.0], **f64)),
        "one unit on the line": (
            g[:, None], torch.ones(1, 1, **f64), torch.zeros(1, **f64)),
        "one input, at the origin where the 4 lines cross": (
            torch.zeros(1, 2, **f64), through_origin, torch.zeros(4, **f64)),
        "5 inputs, all on the line x_2 = 0": (
            torch.cat([g[:5, None], torch.zeros(5, 1, **f64)], dim=1),
            torch.tensor([[0.0, 1.0]], **f64), torch.zeros(1, **f64)),
    }
    grading.agree(distinct_activation_patterns, reference, cases)
