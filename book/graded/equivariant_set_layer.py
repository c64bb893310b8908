"""Tests of the graded exercise `equivariant_set_layer` (Section 6.4): the
permutation-equivariant linear layer Y = X Lambda + 1 1^T X Gamma + 1 b^T."""

WRONG = {
    "a mean over the elements instead of the sum": """
        pooled = X.mean(dim=1, keepdim=True)
        return X @ Lam + pooled @ Gam + b
    """,
    "the sum runs over the features instead of the elements": """
        pooled = X.sum(dim=-1, keepdim=True)
        return X @ Lam + pooled @ Gam + b
    """,
}


def test_random_sets(equivariant_set_layer):
    """Random sets and parameters, two sizes."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import sets

    def reference(X, Lam, Gam, b):
        layer = sets.EquivariantLinear(*Lam.shape, generator=torch.Generator(),
                                       dtype=torch.float64)
        with torch.no_grad():
            for param, value in ((layer.Lambda, Lam), (layer.Gamma, Gam),
                                 (layer.bias, b)):
                param.copy_(value)
            return layer(X)

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"3 sets of {N} elements, d_in = {d_in}, d_out = {d_out}": (
            torch.randn(3, N, d_in, generator=gen, dtype=torch.float64),
            torch.randn(d_in, d_out, generator=gen, dtype=torch.float64),
            torch.randn(d_in, d_out, generator=gen, dtype=torch.float64),
            torch.randn(d_out, generator=gen, dtype=torch.float64))
        for N, d_in, d_out in ((4, 2, 3), (7, 5, 5))
    }
    grading.agree(equivariant_set_layer, reference, cases)


def test_hidden_edge_cases(equivariant_set_layer):
    """One element per set, one channel (lambda x + gamma sum(x) + b), one set."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import sets

    def reference(X, Lam, Gam, b):
        layer = sets.EquivariantLinear(*Lam.shape, generator=torch.Generator(),
                                       dtype=torch.float64)
        with torch.no_grad():
            for param, value in ((layer.Lambda, Lam), (layer.Gamma, Gam),
                                 (layer.bias, b)):
                param.copy_(value)
            return layer(X)

    gen = torch.Generator().manual_seed(1)

    def case(B, N, d_in, d_out):
        return (torch.randn(B, N, d_in, generator=gen, dtype=torch.float64),
                torch.randn(d_in, d_out, generator=gen, dtype=torch.float64),
                torch.randn(d_in, d_out, generator=gen, dtype=torch.float64),
                torch.randn(d_out, generator=gen, dtype=torch.float64))

    cases = {
        "sets of one element": case(4, 1, 3, 2),
        "one channel in and out": case(2, 6, 1, 1),
        "a single set of 9 elements, d_in = 4, d_out = 1": case(1, 9, 4, 1),
        "d_in = 1, d_out = 3": case(2, 5, 1, 3),
    }
    grading.agree(equivariant_set_layer, reference, cases)
