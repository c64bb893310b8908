"""Tests of the graded exercise `multi_head_forward` (Section 5.2): multi-head
attention from given matrices: one wide projection, a reshape into heads and back."""

WRONG = {
    "the heads are split by a reshape to (B, h, T, d_k), without the transpose": """
        B, T_q, d = X.shape
        d_k = d // n_heads
        split = lambda Y: Y.reshape(B, n_heads, -1, d_k)
        out, A = scoring.attention(split(X @ W_q), split(Z @ W_k), split(Z @ W_v))
        concat = out.transpose(1, 2).reshape(B, T_q, d)
        return concat @ W_o, A
    """,
    "the heads are concatenated without moving the head axis back": """
        B, T_q, d = X.shape
        d_k = d // n_heads
        split = lambda Y: Y.reshape(B, -1, n_heads, d_k).transpose(1, 2)
        out, A = scoring.attention(split(X @ W_q), split(Z @ W_k), split(Z @ W_v))
        concat = out.reshape(B, T_q, d)
        return concat @ W_o, A
    """,
    "the scores are divided by sqrt(d) instead of sqrt(d_k)": """
        B, T_q, d = X.shape
        d_k = d // n_heads
        split = lambda Y: Y.reshape(B, -1, n_heads, d_k).transpose(1, 2)
        out, A = scoring.attention(split(X @ W_q), split(Z @ W_k), split(Z @ W_v),
                                   scale=1 / math.sqrt(d))
        concat = out.transpose(1, 2).reshape(B, T_q, d)
        return concat @ W_o, A
    """,
}


def test_self_and_cross_attention(multi_head_forward):
    """Self-attention and cross-attention with random matrices, 2 and 4 heads."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import multi_head

    def book_layer(X, Z, W_q, W_k, W_v, W_o, n_heads):
        layer = multi_head.MultiHeadAttention(
            X.shape[-1], n_heads, d_kv=Z.shape[-1], bias=False,
            generator=torch.Generator().manual_seed(0)).double()
        with torch.no_grad():
            for linear, W in zip((layer.W_q, layer.W_k, layer.W_v, layer.W_o),
                                 (W_q, W_k, W_v, W_o)):
                linear.weight.copy_(W.T)
            return layer(X, Z)

    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    def mat(m, n):
        return rand(m, n) / m**0.5

    X = rand(2, 5, 8)
    cases = {
        "self-attention, B = 2, T = 5, d = 8, 2 heads": (
            X, X, mat(8, 8), mat(8, 8), mat(8, 8), mat(8, 8), 2),
        "cross-attention, 3 queries of width 12, 7 keys of width 6, 4 heads": (
            rand(2, 3, 12), rand(2, 7, 6), mat(12, 12), mat(6, 12), mat(6, 12),
            mat(12, 12), 4),
    }
    grading.agree(multi_head_forward, book_layer, cases)


def test_hidden_edge_cases(multi_head_forward):
    """One head, heads of width 1, one query and one key, one sequence."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import multi_head

    def book_layer(X, Z, W_q, W_k, W_v, W_o, n_heads):
        layer = multi_head.MultiHeadAttention(
            X.shape[-1], n_heads, d_kv=Z.shape[-1], bias=False,
            generator=torch.Generator().manual_seed(0)).double()
        with torch.no_grad():
            for linear, W in zip((layer.W_q, layer.W_k, layer.W_v, layer.W_o),
                                 (W_q, W_k, W_v, W_o)):
                linear.weight.copy_(W.T)
            return layer(X, Z)

    gen = torch.Generator().manual_seed(1)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    def mats(d, d_z):
        return (rand(d, d) / d**0.5, rand(d_z, d) / d_z**0.5, rand(d_z, d) / d_z**0.5,
                rand(d, d) / d**0.5)

    X4, X6 = rand(2, 4, 6), rand(1, 5, 8)
    cases = {
        "one head (h = 1), d = 6": (X4, X4, *mats(6, 6), 1),
        "heads of width 1 (h = d = 6)": (X4, X4, *mats(6, 6), 6),
        "one query and one key (T_q = T_k = 1), 2 heads": (
            rand(3, 1, 4), rand(3, 1, 5), *mats(4, 5), 2),
        "one sequence (B = 1), T = 5, d = 8, 4 heads": (X6, X6, *mats(8, 8), 4),
        "6 queries, 2 keys, 3 heads": (rand(2, 6, 9), rand(2, 2, 3), *mats(9, 3), 3),
    }
    grading.agree(multi_head_forward, book_layer, cases)
