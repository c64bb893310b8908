"""Tests of the graded exercise `my_lsa_layer` (Section 5.10): one linear self-attention
layer with a residual, the context tokens as keys and values, every token as a query."""

WRONG = {
    "the query token is counted among the keys and values": """
        N = Z.shape[1] - 1
        A = Z @ W_kq @ Z.transpose(1, 2)
        return Z + A.transpose(1, 2) @ Z @ W_pv.T / N
    """,
    "the factor 1/N is missing": """
        N = Z.shape[1] - 1
        C = Z[:, :N]
        A = C @ W_kq @ Z.transpose(1, 2)
        return Z + A.transpose(1, 2) @ C @ W_pv.T
    """,
    "W_pv multiplies the row vectors without a transpose": """
        N = Z.shape[1] - 1
        C = Z[:, :N]
        A = C @ W_kq @ Z.transpose(1, 2)
        return Z + A.transpose(1, 2) @ C @ W_pv / N
    """,
}


def test_random_prompts(my_lsa_layer):
    """Random prompts and random weight matrices."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import icl

    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    cases = {
        "4 prompts, N = 6, D = 3": (rand(4, 7, 3), rand(3, 3), rand(3, 3)),
        "2 prompts, N = 20, D = 6": (rand(2, 21, 6), rand(6, 6), rand(6, 6)),
    }
    grading.agree(my_lsa_layer, icl.lsa_layer, cases)


def test_hidden_edge_cases(my_lsa_layer):
    """One example in the context, one prompt, D = 2, and the weights of one gradient
    step on real prompts."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import icl

    gen = torch.Generator().manual_seed(1)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    prompts = icl.sample_prompts(5, 10, 3, noise=0.5, generator=gen)
    cases = {
        "one context example (N = 1)": (rand(3, 2, 4), rand(4, 4), rand(4, 4)),
        "one prompt (B = 1), N = 5": (rand(1, 6, 3), rand(3, 3), rand(3, 3)),
        "D = 2": (rand(5, 9, 2), rand(2, 2), rand(2, 2)),
        "gd_construction(3, 0.4) on 5 prompts, N = 10": (
            prompts.tokens, *icl.gd_construction(3, 0.4)),
    }
    grading.agree(my_lsa_layer, icl.lsa_layer, cases)
