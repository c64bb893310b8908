"""Tests of the graded exercise `attention_with_knowledge` (Section 6.7): attention
whose query and key maps are knowledge vectors, tokens as columns."""

WRONG = {
    "the softmax runs along rows (dim=-1), not down the columns": """
        keys, queries = X.T @ Z_k, X.T @ Z_q
        return X @ torch.softmax(keys @ queries.T, dim=-1)
    """,
    "queries and keys swapped (the score matrix transposed)": """
        keys, queries = X.T @ Z_k, X.T @ Z_q
        return X @ torch.softmax(queries @ keys.T, dim=0)
    """,
}


def test_random_tokens(attention_with_knowledge):
    """Random tokens and knowledge of a few sizes."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import orthogonal

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"d = {d}, {n} tokens, r = {r}": tuple(
            torch.randn(d, c, generator=gen, dtype=torch.float64) for c in (n, r, r))
        for d, n, r in ((3, 5, 2), (5, 7, 4))
    }
    grading.agree(attention_with_knowledge, orthogonal.knowledge_attention, cases)


def test_hidden_edge_cases(attention_with_knowledge):
    """One token, d = 1, r = 1, zero knowledge (uniform weights), Z_q = Z_k."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import orthogonal

    gen = torch.Generator().manual_seed(1)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    Z = rand(4, 2)
    cases = {
        "a single token": (rand(4, 1), rand(4, 2), rand(4, 2)),
        "d = 1": (rand(1, 6), rand(1, 1), rand(1, 1)),
        "one knowledge vector each (r = 1)": (rand(3, 5), rand(3, 1), rand(3, 1)),
        "zero key knowledge: uniform weights": (
            rand(3, 4), rand(3, 2), torch.zeros(3, 2, dtype=torch.float64)),
        "Z_q = Z_k (symmetric scores)": (rand(4, 6), Z, Z.clone()),
    }
    grading.agree(attention_with_knowledge, orthogonal.knowledge_attention, cases)
