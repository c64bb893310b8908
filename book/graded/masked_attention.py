"""Tests of the graded exercise `masked_attention` (Section 5.1): scaled dot-product
attention with a boolean mask, returning the outputs and the weights."""

WRONG = {
    "the scores are not divided by sqrt(d_k)": """
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(~mask, -math.inf)
        A = torch.softmax(scores, dim=-1)
        return A @ v, A
    """,
    "masked scores are set to 0 instead of -inf": """
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~mask, 0.0)
        A = torch.softmax(scores, dim=-1)
        return A @ v, A
    """,
    "the mask zeroes the weights after the softmax (rows no longer sum to one)": """
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        A = torch.softmax(scores, dim=-1) * mask
        return A @ v, A
    """,
}


def test_random_inputs(masked_attention):
    """Random queries, keys and values with a causal and a random mask."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import scoring

    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    random_mask = torch.rand(4, 7, generator=gen) < 0.5
    random_mask[:, 3] = True
    cases = {
        "T = 5, d_k = 8, causal mask": (
            rand(5, 8), rand(5, 8), rand(5, 3), scoring.causal_mask(5)),
        "4 queries, 7 keys, d_k = 16, random mask": (
            rand(4, 16), rand(7, 16), rand(7, 2), random_mask),
        "batch of 3, T = 6, d_k = 4, causal mask": (
            rand(3, 6, 4), rand(3, 6, 4), rand(3, 6, 5), scoring.causal_mask(6)),
    }
    grading.agree(masked_attention,
                  lambda q, k, v, mask: scoring.attention(q, k, v, mask=mask), cases)


def test_hidden_edge_cases(masked_attention):
    """One token, one allowed key per query, d_k = 1, T_q < T_k, batch and head
    dimensions with a per-sequence mask, and large scores."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import scoring

    gen = torch.Generator().manual_seed(1)

    def rand(*shape, scale=1.0):
        return scale * torch.randn(*shape, generator=gen, dtype=torch.float64)

    one_key = torch.zeros(4, 6, dtype=torch.bool)
    one_key[torch.arange(4), torch.tensor([5, 0, 2, 2])] = True
    per_sequence = torch.rand(2, 1, 3, 5, generator=gen) < 0.4
    per_sequence[..., 1] = True
    cases = {
        "T = 1 (one query, one key)": (
            rand(1, 4), rand(1, 4), rand(1, 3), torch.ones(1, 1, dtype=torch.bool)),
        "every query may read exactly one key": (
            rand(4, 8), rand(6, 8), rand(6, 2), one_key),
        "d_k = 1": (rand(5, 1), rand(5, 1), rand(5, 2), scoring.causal_mask(5)),
        "3 queries, 7 keys, causal_mask(3, 7)": (
            rand(3, 4), rand(7, 4), rand(7, 4), scoring.causal_mask(3, 7)),
        "batch 2 x 4 heads, mask of shape (2, 1, 3, 5)": (
            rand(2, 4, 3, 6), rand(2, 4, 5, 6), rand(2, 4, 5, 2), per_sequence),
        "large scores, d_k = 64": (
            rand(4, 64, scale=4.0), rand(6, 64, scale=4.0), rand(6, 2),
            torch.ones(4, 6, dtype=torch.bool)),
    }
    grading.agree(masked_attention,
                  lambda q, k, v, mask: scoring.attention(q, k, v, mask=mask), cases)
