import pytest
import torch
from torch import nn

from flt_lib.attention import block as blk
from flt_lib.attention.scoring import causal_mask
from flt_lib.rng import torch_generator
from flt_lib.training.normalisation import batch_norm, layer_norm


def test_token_layer_norm_is_the_books_layer_norm_and_invariant():
    ln = blk.TokenLayerNorm(8)
    x = torch.randn(3, 5, 8, generator=torch_generator(0), dtype=torch.float64)
    ln = ln.double()
    torch.testing.assert_close(ln(x), layer_norm(x.reshape(-1, 8)).view(3, 5, 8))
    exact = blk.TokenLayerNorm(8, eps=0.0).double()  # with eps = 0 the invariance is exact
    torch.testing.assert_close(exact(3.0 * x + 2.0), exact(x), atol=1e-12, rtol=0)
    assert (ln(3.0 * x + 2.0) - ln(x)).abs().max() < 1e-4  # eps = 1e-5 perturbs it slightly
    torch.testing.assert_close(ln(x[:1]), ln(x)[:1])  # one example does not see the others
    z = x.reshape(-1, 8)
    assert (batch_norm(z[:4]) - batch_norm(z)[:4]).abs().max() > 1e-2  # BatchNorm does


def test_block_matches_torch_encoder_layer_post_and_pre():
    for norm_first in (False, True):
        torch.manual_seed(0)
        ref = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=norm_first)
        ours = blk.TransformerBlock(16, 4, 32, norm="pre" if norm_first else "post", generator=torch_generator(0))
        with torch.no_grad():
            w_q, w_k, w_v = ref.self_attn.in_proj_weight.chunk(3)
            b_q, b_k, b_v = ref.self_attn.in_proj_bias.chunk(3)
            a = ours.self_attn
            for lin, w, b in ((a.W_q, w_q, b_q), (a.W_k, w_k, b_k), (a.W_v, w_v, b_v),
                              (a.W_o, ref.self_attn.out_proj.weight, ref.self_attn.out_proj.bias),
                              (ours.ffn.W_1, ref.linear1.weight, ref.linear1.bias),
                              (ours.ffn.W_2, ref.linear2.weight, ref.linear2.bias)):
                lin.weight.copy_(w)
                lin.bias.copy_(b)
        ref.eval()
        x = torch.randn(2, 6, 16, generator=torch_generator(1))
        m = causal_mask(6)
        with torch.no_grad():
            torch.testing.assert_close(ours(x, mask=m).x, ref(x, src_mask=~m), atol=1e-5, rtol=0)


def test_block_variants_and_cross_attention():
    g = torch_generator(2)
    x, mem = torch.randn(2, 5, 8, generator=g), torch.randn(2, 7, 8, generator=g)
    dec = blk.TransformerBlock(8, 2, 16, cross=True, generator=g)
    out = dec(x, mask=causal_mask(5), memory=mem)
    assert out.x.shape == (2, 5, 8) and out.cross_weights.shape == (2, 2, 5, 7)
    pure = blk.TransformerBlock(8, 2, 0, norm="none", skip=False, generator=g)
    assert pure.ffn is None and len(pure.norms) == 0
    torch.testing.assert_close(pure(x).x, pure.self_attn(x)[0])


def test_pure_attention_collapses_to_rank_one_and_skips_prevent_it():
    X = torch.randn(16, 32, generator=torch_generator(3), dtype=torch.float64)
    W = blk.random_attention_weights(6, 32, generator=torch_generator(4))
    res = blk.relative_residual(blk.pure_attention_stack(X, W, skip=False))
    assert res[0] > 0.9 and res[3] < 1e-3 and res[6] < 1e-12
    res_skip = blk.relative_residual(blk.pure_attention_stack(X, W, skip=True))
    assert res_skip[6] > 0.3
    # one layer by hand
    Q, K, V = X @ W[0, 0], X @ W[0, 1], X @ W[0, 2]
    ref = torch.softmax(Q @ K.T / 32**0.5, -1) @ V
    torch.testing.assert_close(blk.pure_attention_stack(X, W[:1], skip=False)[1], ref)
    ones = torch.ones(4, 3) * torch.tensor([1.0, 2.0, 3.0])
    assert blk.relative_residual(ones).item() == 0.0


def test_xavier_init():
    b = blk.xavier_init_(blk.TransformerBlock(8, 2, 32, generator=torch_generator(5)), generator=torch_generator(6))
    w = b.ffn.W_1.weight
    a = (6 / (8 + 32)) ** 0.5
    assert w.abs().max() <= a and w.abs().max() > 0.9 * a and torch.all(b.ffn.W_1.bias == 0)


def test_bad_inputs():
    g = torch_generator(0)
    with pytest.raises(ValueError, match="norm must be one of"):
        blk.TransformerBlock(8, 2, 16, norm="mid", generator=g)
    b = blk.TransformerBlock(8, 2, 16, generator=g)
    with pytest.raises(ValueError, match="memory must be given exactly when"):
        b(torch.ones(1, 3, 8), memory=torch.ones(1, 2, 8))
    with pytest.raises(ValueError, match=r"x must be a 3-D tensor \(B, T, d_model\)"):
        b(torch.ones(3, 8))
    with pytest.raises(ValueError, match="x must have last dimension d = 8"):
        blk.TokenLayerNorm(8)(torch.ones(2, 4))
    with pytest.raises(ValueError, match="d_ff must be >= 1"):
        blk.FeedForward(8, 0, generator=g)
    with pytest.raises(ValueError, match=r"X must be a 2-D tensor \(n, d\)"):
        blk.pure_attention_stack(torch.ones(2, 3, 4), torch.ones(1, 3, 4, 4), skip=True)
    with pytest.raises(ValueError, match=r"weights must have shape \(n_layers, 3, d, d\) with d = 4"):
        blk.pure_attention_stack(torch.ones(3, 4), torch.ones(1, 3, 5, 5), skip=True)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        blk.xavier_init_(3, generator=g)
    with pytest.raises(ValueError, match="n_layers must be >= 1"):
        blk.random_attention_weights(0, 4, generator=g)
    with pytest.raises(ValueError, match=r"X must have shape \(\.\.\., n, d\)"):
        blk.relative_residual(torch.ones(3))


@pytest.mark.parametrize("norm_first", [False, True])
def test_block_from_torch_encoder_and_decoder_with_random_layer_norms(norm_first):
    """Encoder and decoder layers, LayerNorm gains and shifts randomised: our block with
    copied weights gives torch's output."""
    g = torch_generator(11)
    enc = nn.TransformerEncoderLayer(16, 4, 24, dropout=0.0, batch_first=True,
                                     norm_first=norm_first).double().eval()
    dec = nn.TransformerDecoderLayer(16, 4, 24, dropout=0.0, batch_first=True,
                                     norm_first=norm_first).double().eval()
    with torch.no_grad():
        for layer in (enc, dec):
            for m in layer.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.copy_(1 + torch.randn(16, generator=g, dtype=torch.float64))
                    m.bias.copy_(torch.randn(16, generator=g, dtype=torch.float64))
    x = torch.randn(2, 7, 16, generator=g, dtype=torch.float64)
    mem = torch.randn(2, 5, 16, generator=g, dtype=torch.float64)
    mask = causal_mask(7)
    with torch.no_grad():
        e_gap = (blk.block_from_torch(enc)(x, mask=mask).x - enc(x, src_mask=~mask)).abs().max()
        ours = blk.block_from_torch(dec)(x, mask=mask, memory=mem).x
        d_gap = (ours - dec(x, mem, tgt_mask=~mask)).abs().max()
        plain = blk.block_from_torch(dec)
        for n in plain.norms:  # default gains: the randomised ones must matter
            n.gamma.fill_(1.0), n.beta.zero_()
        changed = (plain(x, mask=mask, memory=mem).x - ours).abs().max()
    assert e_gap < 1e-12 and d_gap < 1e-12 and changed > 0.1, (e_gap, d_gap, changed)


def test_block_from_torch_bad_input():
    with pytest.raises(TypeError, match="layer must be a torch.nn.TransformerEncoderLayer"):
        blk.block_from_torch(nn.Linear(2, 2))
