"""Tests of the graded exercise `equivariant_average` (Section 6.1): the twisted group
average that makes any function equivariant."""

WRONG = {
    "the output is moved by g instead of g^{-1}": """
        total = 0
        for p in group:
            total = total + f(x[..., p])[..., p]
        return total / group.shape[0]
    """,
    "the output is not moved back (the invariant average)": """
        total = 0
        for p in group:
            total = total + f(x[..., p])
        return total / group.shape[0]
    """,
    "the sum is not divided by |G|": """
        total = 0
        for p in group:
            total = total + f(x[..., p])[..., torch.argsort(p)]
        return total
    """,
}


def test_shifts_and_permutations(equivariant_average):
    """Random tanh layers, symmetrised over Z_5, Z_8 and S_4."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import groups

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, name, group in ((5, "Z_5", groups.cyclic_group(5)),
                           (8, "Z_8", groups.cyclic_group(8)),
                           (4, "S_4", groups.symmetric_group(4))):
        W = torch.randn(n, n, generator=gen, dtype=torch.float64)

        def tanh_layer(z, W=W):
            return torch.tanh(z @ W.T)

        x = torch.randn(6, n, generator=gen, dtype=torch.float64)
        cases[f"tanh layer on 6 signals of length {n}, group {name}"] = (
            tanh_layer, x, group)
    grading.agree(equivariant_average, groups.symmetrize_equivariant, cases)


def test_hidden_edge_cases(equivariant_average):
    """The trivial group, n = 1, extra batch axes, 3-cycles, a quadratic f."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import groups

    gen = torch.Generator().manual_seed(1)
    W = torch.randn(6, 6, generator=gen, dtype=torch.float64)

    def tanh_layer(z):
        return torch.tanh(z @ W.T)

    def square_shifted(z):          # z_i -> z_{i+1}^2 + z_i
        return torch.roll(z, -1, dims=-1) ** 2 + z

    S3 = groups.symmetric_group(3)
    cases = {
        "the trivial group (identity only)": (
            tanh_layer, torch.randn(3, 6, generator=gen, dtype=torch.float64),
            torch.arange(6)[None, :]),
        "one signal of length 1": (
            lambda z: 2 * z + 1, torch.randn(1, generator=gen, dtype=torch.float64),
            groups.cyclic_group(1)),
        "x of shape (2, 3, 6), Z_6": (
            tanh_layer, torch.randn(2, 3, 6, generator=gen, dtype=torch.float64),
            groups.cyclic_group(6)),
        "the 3-cycles of S_3 only": (
            square_shifted, torch.randn(4, 3, generator=gen, dtype=torch.float64),
            S3[[0, 3, 4]]),
        "S_3, f(z)_i = z_{i+1}^2 + z_i": (
            square_shifted, torch.randn(4, 3, generator=gen, dtype=torch.float64), S3),
    }
    grading.agree(equivariant_average, groups.symmetrize_equivariant, cases)
