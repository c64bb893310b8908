"""Tests of the graded exercise `token_space_gd_step` (Section 7.6): one GD step of the
attention model in token coordinates."""

WRONG = {
    "C updated with the new a instead of the old": """
        a_new = a - lr * (c - lr * C.T @ (K @ c))
        return a_new, C + torch.outer(c, a_new)
    """,
    "C instead of its transpose in the update of a": """
        a_new = a - lr * (c - lr * C @ (K @ c))
        return a_new, C + torch.outer(c, a)
    """,
    "the correction from the moved W left out (W taken as W_0)": """
        return a - lr * c, C + torch.outer(c, a)
    """,
}


def test_random_states(token_space_gd_step):
    """Random coordinates, accumulated updates and token Gram matrices, a few sizes."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import token_selection

    def reference(a, C, c, K, lr):
        return token_selection.token_space_step(a, C, c, K, lr=lr)

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for N, d in ((4, 6), (12, 8), (30, 50)):
        Z = torch.randn(N, d, generator=gen, dtype=torch.float64)
        a, c = (torch.randn(N, generator=gen, dtype=torch.float64) for _ in "ac")
        C = torch.randn(N, N, generator=gen, dtype=torch.float64)
        cases[f"N = {N} tokens in d = {d}, lr = 0.5"] = (a, C, c, Z @ Z.T, 0.5)
    grading.agree(token_space_gd_step, reference, cases, atol=1e-10, rtol=1e-8)


def test_hidden_edge_cases(token_space_gd_step):
    """The first step (a = 0, C = 0), one token, a zero gradient, a large step."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import token_selection

    def reference(a, C, c, K, lr):
        return token_selection.token_space_step(a, C, c, K, lr=lr)

    gen = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    Z = randn(5, 7)
    K = Z @ Z.T
    cases = {
        "the first step, a = 0 and C = 0": (
            0 * randn(5), 0 * randn(5, 5), randn(5), K, 0.2),
        "one token (N = 1)": (randn(1), randn(1, 1), randn(1), randn(1, 1) ** 2, 1.0),
        "c = 0: nothing moves": (randn(5), randn(5, 5), 0 * randn(5), K, 0.5),
        "lr = 3": (randn(5), randn(5, 5), randn(5), K, 3.0),
    }
    grading.agree(token_space_gd_step, reference, cases, atol=1e-10, rtol=1e-8)
