import dataclasses

import pytest
import torch

from flt_lib.attention.encoder import Encoder, EncoderConfig
from flt_lib.attention.multi_head import equivariance_gap
from flt_lib.rng import torch_generator


def _cfg(**kw):
    base = dict(vocab=10, d_model=16, n_heads=2, n_layers=2, d_ff=32, max_len=12, d_out=5)
    return EncoderConfig(**{**base, **kw})


def test_shapes_cls_and_vector_inputs():
    m = Encoder(_cfg(cls=True), generator=torch_generator(0))
    out = m(torch.randint(0, 10, (3, 7)))
    assert out.logits.shape == (3, 8, 5) and len(out.weights) == 2 and out.weights[0].shape == (3, 2, 8, 8)
    v = Encoder(_cfg(vocab=0, d_in=6, positions="learned"), generator=torch_generator(0))
    assert v(torch.randn(2, 4, 6)).logits.shape == (2, 4, 5)


def test_no_positions_is_equivariant_and_positions_are_not():
    x = torch.randn(2, 6, 6, generator=torch_generator(1))
    perm = torch.tensor([3, 1, 5, 0, 2, 4])
    gaps = {}
    for p in ("none", "sinusoidal", "learned", "rope"):
        m = Encoder(_cfg(vocab=0, d_in=6, positions=p), generator=torch_generator(2))
        gaps[p] = equivariance_gap(lambda z: m(z).logits, x, perm)
    assert gaps["none"] < 1e-5 and min(gaps["sinusoidal"], gaps["learned"], gaps["rope"]) > 1e-3


def test_causal_model_does_not_look_ahead():
    m = Encoder(_cfg(causal=True), generator=torch_generator(3))
    x = torch.randint(0, 10, (1, 8), generator=torch_generator(4))
    y = x.clone()
    y[0, 5:] = (y[0, 5:] + 1) % 10
    torch.testing.assert_close(m(x).logits[:, :5], m(y).logits[:, :5])


def test_alibi_encoder_uses_press_bias_and_is_causal():
    """An ALiBi model equals the same blocks run with the bias passed by hand, and the
    bias changes the output (so it is really applied)."""
    m = Encoder(_cfg(positions="alibi", causal=True), generator=torch_generator(6))
    x = torch.randint(0, 10, (2, 9), generator=torch_generator(7))
    h = m.embed_inputs(x)
    from flt_lib.attention.positions import alibi_bias
    from flt_lib.attention.scoring import causal_mask
    with_bias, without = h, h
    for block in m.blocks:
        with_bias = block(with_bias, mask=causal_mask(9), bias=alibi_bias(9, 2)).x
        without = block(without, mask=causal_mask(9)).x
    torch.testing.assert_close(m(x).hidden, with_bias)
    assert (m(x).hidden - without).abs().max() > 1e-2
    y = x.clone()
    y[:, 6:] = (y[:, 6:] + 1) % 10
    torch.testing.assert_close(m(x).logits[:, :6], m(y).logits[:, :6])


def test_seeded_init():
    a, b = (Encoder(_cfg(positions="learned"), generator=torch_generator(5)) for _ in range(2))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_bad_inputs():
    with pytest.raises(ValueError, match="exactly one of vocab and d_in must be > 0"):
        _cfg(d_in=3)
    with pytest.raises(ValueError, match="positions must be one of"):
        _cfg(positions="relative")
    with pytest.raises(ValueError, match="positions='alibi' needs causal=True"):
        _cfg(positions="alibi")
    with pytest.raises(ValueError, match="rope needs an even head width"):
        _cfg(d_model=6, n_heads=2, positions="rope")
    with pytest.raises(dataclasses.FrozenInstanceError):
        _cfg().d_model = 4
    m = Encoder(_cfg(), generator=torch_generator(0))
    with pytest.raises(ValueError, match="inputs has length 13 > max_len = 12"):
        m(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(TypeError, match="inputs must be integer token ids"):
        m(torch.zeros(1, 3))
    with pytest.raises(TypeError, match="cfg must be an EncoderConfig"):
        Encoder({}, generator=torch_generator(0))


def test_ffn_gradient_norms_match_autograd_and_show_post_ln_growth():
    from flt_lib.attention.block import xavier_init_
    from flt_lib.attention.encoder import ffn_gradient_norms

    m = Encoder(_cfg(n_layers=3), generator=torch_generator(6))
    x = torch.randint(0, 10, (4, 6), generator=torch_generator(7))
    y = torch.randint(0, 5, (4, 6), generator=torch_generator(8))
    norms = ffn_gradient_norms(m, x, y)
    torch.nn.functional.cross_entropy(m(x).logits.flatten(0, 1), y.flatten()).backward()
    assert norms == pytest.approx([b.ffn.W_2.weight.grad.norm().item() for b in m.blocks])
    ratios = {}
    for norm in ("post", "pre"):
        cfg = _cfg(vocab=16, d_model=32, n_heads=2, n_layers=12, d_ff=64, d_out=16, norm=norm,
                   final_norm=norm == "pre")
        model = xavier_init_(Encoder(cfg, generator=torch_generator(9)), generator=torch_generator(10))
        g = torch_generator(11)
        n = ffn_gradient_norms(model, torch.randint(0, 16, (32, 12), generator=g), torch.randint(0, 16, (32, 12), generator=g))
        ratios[norm] = n[-1] / n[0]
    assert ratios["post"] > 1.0 > ratios["pre"]
    with pytest.raises(ValueError, match="feed-forward networks"):
        ffn_gradient_norms(Encoder(_cfg(d_ff=0), generator=torch_generator(0)), x, y)
    with pytest.raises(ValueError, match=r"targets must have shape \(B, T'\)"):
        ffn_gradient_norms(m, x, y[:, :3])
