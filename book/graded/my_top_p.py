"""Tests of the graded exercise `my_top_p` (Section 5.8): nucleus filtering."""

WRONG = {
    "the token that crosses p is dropped too": """
        probs, order = torch.softmax(logits, -1).sort(-1, descending=True)
        drop_sorted = probs.cumsum(-1) > p
        drop = drop_sorted.gather(-1, order.argsort(-1))
        return logits.masked_fill(drop, -math.inf)
    """,
    "the mask is left in sorted order": """
        probs, order = torch.softmax(logits, -1).sort(-1, descending=True)
        drop = probs.cumsum(-1) - probs >= p
        return logits.masked_fill(drop, -math.inf)
    """,
}


def test_random_rows(my_top_p):
    """Random rows of logits, for a small and a large p."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import sampling

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"6 x 9 random logits, p = {p}": (
            3 * torch.randn(6, 9, generator=gen, dtype=torch.float64), p)
        for p in (0.3, 0.8)
    }
    grading.agree(my_top_p, lambda u, p: sampling.filter_logits(u, 1.0, 0, p), cases)


def test_hidden_edge_cases(my_top_p):
    """One token, p = 1, a batch of sequences, and one dominant token."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import sampling

    gen = torch.Generator().manual_seed(1)
    cases = {
        "a vocabulary of one token": (torch.zeros(3, 1, dtype=torch.float64), 0.5),
        "p = 1 keeps every token": (
            torch.randn(4, 7, generator=gen, dtype=torch.float64), 1.0),
        "logits of shape (2, 3, 5)": (
            torch.randn(2, 3, 5, generator=gen, dtype=torch.float64), 0.7),
        "one token holds almost all the mass": (
            torch.tensor([[10.0, 0.0, 0.0, 0.0]], dtype=torch.float64), 0.9),
    }
    grading.agree(my_top_p, lambda u, p: sampling.filter_logits(u, 1.0, 0, p), cases)
