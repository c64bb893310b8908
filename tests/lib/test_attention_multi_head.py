import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from flt_lib.attention import multi_head as mh
from flt_lib.attention.positions import sinusoidal_encoding
from flt_lib.attention.scoring import causal_mask
from flt_lib.rng import torch_generator


def _torch_mha(E=16, h=4, kdim=None, seed=0):
    torch.manual_seed(seed)
    return nn.MultiheadAttention(E, h, batch_first=True, kdim=kdim, vdim=kdim)


def test_self_attention_equals_torch_with_copied_weights():
    t = _torch_mha()
    ours = mh.from_torch(t)
    x = torch.randn(3, 7, 16, generator=torch_generator(0))
    out, w = ours(x)
    ref, ref_w = t(x, x, x, average_attn_weights=False)
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=0)
    torch.testing.assert_close(w, ref_w, atol=1e-6, rtol=0)


def test_causal_and_cross_attention_equal_torch():
    t = _torch_mha()
    ours = mh.from_torch(t)
    g = torch_generator(1)
    x, y = torch.randn(2, 6, 16, generator=g), torch.randn(2, 9, 16, generator=g)
    m = causal_mask(6)
    torch.testing.assert_close(ours(x, mask=m)[0], t(x, x, x, attn_mask=~m)[0], atol=1e-6, rtol=0)
    torch.testing.assert_close(ours(x, y)[0], t(x, y, y)[0], atol=1e-6, rtol=0)
    t2 = _torch_mha(kdim=5)
    z = torch.randn(2, 4, 5, generator=g)
    torch.testing.assert_close(mh.from_torch(t2)(x, z)[0], t2(x, z, z)[0], atol=1e-6, rtol=0)


def test_heads_one_by_one_equal_the_reshape():
    ours = mh.MultiHeadAttention(12, 3, generator=torch_generator(2))
    x = torch.randn(2, 5, 12, generator=torch_generator(3), dtype=torch.float32)
    for mask in (None, causal_mask(5)):
        a, wa = ours(x, mask=mask)
        b, wb = mh.heads_one_by_one(ours, x, mask=mask)
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)
        torch.testing.assert_close(wa, wb, atol=1e-6, rtol=0)


def test_split_merge_roundtrip_and_kv_cache_path():
    x = torch.randn(2, 5, 12)
    assert mh.split_heads(x, 3).shape == (2, 3, 5, 4)
    torch.testing.assert_close(mh.merge_heads(mh.split_heads(x, 3)), x)
    ours = mh.MultiHeadAttention(12, 3, generator=torch_generator(4))
    y = torch.randn(2, 7, 12)
    torch.testing.assert_close(ours(x, kv=ours.project_kv(y))[0], ours(x, y)[0])


def test_init_is_seeded_and_device_free():
    a = mh.MultiHeadAttention(8, 2, generator=torch_generator(5))
    b = mh.MultiHeadAttention(8, 2, generator=torch_generator(5))
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)
    assert a.W_q.weight.abs().max() <= 1 / 8**0.5


@settings(max_examples=20, deadline=None)
@given(st.permutations(list(range(6))), st.integers(0, 1000))
def test_self_attention_is_permutation_equivariant(perm, seed):
    ours = mh.MultiHeadAttention(8, 2, generator=torch_generator(seed))
    x = torch.randn(2, 6, 8, generator=torch_generator(seed + 1), dtype=torch.float64)
    ours = ours.double()
    assert mh.equivariance_gap(lambda z: ours(z)[0], x, torch.tensor(perm)) < 1e-12


def test_positions_break_equivariance():
    ours = mh.MultiHeadAttention(8, 2, generator=torch_generator(6)).double()
    x = torch.randn(1, 6, 8, generator=torch_generator(7), dtype=torch.float64)
    P = sinusoidal_encoding(6, 8, dtype=torch.float64)
    perm = torch.tensor([5, 4, 3, 2, 1, 0])
    assert mh.equivariance_gap(lambda z: ours(z + P)[0], x, perm) > 1e-2


def test_bad_inputs():
    with pytest.raises(ValueError, match="n_heads must divide d_model"):
        mh.MultiHeadAttention(10, 3, generator=torch_generator(0))
    ours = mh.MultiHeadAttention(8, 2, generator=torch_generator(0))
    with pytest.raises(ValueError, match=r"x_q must have shape \(B, T_q, d_model\) with d_model = 8"):
        ours(torch.ones(2, 3, 5))
    with pytest.raises(ValueError, match="either x_kv or kv"):
        ours(torch.ones(1, 3, 8), torch.ones(1, 3, 8), kv=ours.project_kv(torch.ones(1, 3, 8)))
    with pytest.raises(ValueError, match="divisible by n_heads=3"):
        mh.split_heads(torch.ones(1, 2, 8), 3)
    with pytest.raises(ValueError, match=r"x must be a 4-D tensor \(B, h, T, d_k\)"):
        mh.merge_heads(torch.ones(2, 3, 4))
    with pytest.raises(TypeError, match="layer must be a torch.nn.Linear"):
        mh.init_linear(nn.Conv1d(2, 2, 1), generator=torch_generator(0))
    with pytest.raises(TypeError, match="torch_mha must be a torch.nn.MultiheadAttention"):
        mh.from_torch(ours)
    with pytest.raises(TypeError, match="mha must be a MultiHeadAttention"):
        mh.heads_one_by_one(nn.Linear(2, 2), torch.ones(1, 2, 2))
    with pytest.raises(ValueError, match="perm must be a permutation of 0..2"):
        mh.equivariance_gap(lambda z: z, torch.ones(1, 3, 2), torch.tensor([0, 0, 1]))
    with pytest.raises(ValueError, match="rope_base must be > 1.0"):
        mh.MultiHeadAttention(8, 2, rope_base=0.5, generator=torch_generator(0))
    rope = mh.MultiHeadAttention(8, 2, rope_base=100.0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="self-attention only"):
        rope(torch.ones(1, 3, 8), torch.ones(1, 3, 8))
