"""Tests of the graded exercise `transformer_block_forward` (Section 5.4): one encoder
block, attention then FFN, each with its residual and LayerNorm, Pre-LN or Post-LN."""

WRONG = {
    "the Pre-LN residual adds LN(x) instead of x": """
        if norm == "pre":
            h = ln1(x)
            x = h + attn(h)[0]
            h = ln2(x)
            return h + ffn(h)
        x = ln1(x + attn(x)[0])
        return ln2(x + ffn(x))
    """,
    "one LayerNorm (ln1) for both sublayers": """
        if norm == "pre":
            x = x + attn(ln1(x))[0]
            return x + ffn(ln1(x))
        x = ln1(x + attn(x)[0])
        return ln1(x + ffn(x))
    """,
    "Post-LN normalises the sublayer's output only, x + LN(f(x))": """
        if norm == "pre":
            x = x + attn(ln1(x))[0]
            return x + ffn(ln2(x))
        x = x + ln1(attn(x)[0])
        return x + ln2(ffn(x))
    """,
}


def test_pre_and_post_ln(transformer_block_forward):
    """Random sublayers (LayerNorms with random gains and shifts), both arrangements."""
    import torch
    from torch import nn

    from flt_lib import grading
    from flt_lib.attention import block
    from flt_lib.attention.multi_head import MultiHeadAttention

    def book_block(x, attn, ffn, ln1, ln2, norm):
        blk = block.TransformerBlock(
            attn.d_model, attn.n_heads, ffn.W_1.out_features, norm=norm,
            generator=torch.Generator().manual_seed(0))
        blk.self_attn, blk.ffn, blk.norms = attn, ffn, nn.ModuleList([ln1, ln2])
        with torch.no_grad():
            return blk.double()(x).x

    gen = torch.Generator().manual_seed(0)

    def sublayers(d, h, d_ff):
        norms = [block.TokenLayerNorm(d).double() for _ in range(2)]
        with torch.no_grad():
            for ln in norms:
                ln.gamma.copy_(1 + 0.5 * torch.randn(d, generator=gen))
                ln.beta.copy_(0.5 * torch.randn(d, generator=gen))
        return (MultiHeadAttention(d, h, generator=gen).double(),
                block.FeedForward(d, d_ff, generator=gen).double(), *norms)

    x = torch.randn(2, 6, 8, generator=gen, dtype=torch.float64)
    layers = sublayers(8, 2, 16)
    cases = {f"{norm}-LN, B = 2, T = 6, d = 8, 2 heads": (x, *layers, norm)
             for norm in ("pre", "post")}
    grading.agree(transformer_block_forward, book_block, cases)


def test_hidden_edge_cases(transformer_block_forward):
    """One token, one head, default LayerNorms, and a wide FFN."""
    import torch
    from torch import nn

    from flt_lib import grading
    from flt_lib.attention import block
    from flt_lib.attention.multi_head import MultiHeadAttention

    def book_block(x, attn, ffn, ln1, ln2, norm):
        blk = block.TransformerBlock(
            attn.d_model, attn.n_heads, ffn.W_1.out_features, norm=norm,
            generator=torch.Generator().manual_seed(0))
        blk.self_attn, blk.ffn, blk.norms = attn, ffn, nn.ModuleList([ln1, ln2])
        with torch.no_grad():
            return blk.double()(x).x

    gen = torch.Generator().manual_seed(1)

    def sublayers(d, h, d_ff, random_norms=True):
        norms = [block.TokenLayerNorm(d).double() for _ in range(2)]
        with torch.no_grad():
            for ln in norms if random_norms else ():
                ln.gamma.copy_(1 + 0.5 * torch.randn(d, generator=gen))
                ln.beta.copy_(0.5 * torch.randn(d, generator=gen))
        return (MultiHeadAttention(d, h, generator=gen).double(),
                block.FeedForward(d, d_ff, generator=gen).double(), *norms)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    cases = {}
    for norm in ("pre", "post"):
        cases[f"{norm}-LN, one token (T = 1)"] = (
            rand(3, 1, 4), *sublayers(4, 2, 8), norm)
        cases[f"{norm}-LN, one head, B = 1"] = (
            rand(1, 5, 6), *sublayers(6, 1, 6), norm)
        cases[f"{norm}-LN, LayerNorms with gain 1 and shift 0"] = (
            rand(2, 4, 8), *sublayers(8, 4, 16, random_norms=False), norm)
        cases[f"{norm}-LN, d_ff = 4d, large inputs"] = (
            10 * rand(2, 3, 4), *sublayers(4, 2, 16), norm)
    grading.agree(transformer_block_forward, book_block, cases)
