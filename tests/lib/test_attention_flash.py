import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from flt_lib.attention import flash
from flt_lib.attention import scoring as sc
from flt_lib.attention.cost import saved_tensor_bytes
from flt_lib.rng import torch_generator


def _qkv(B=2, h=3, T_q=13, T_k=13, d_k=8, d_v=5, seed=0, dtype=torch.float64, grad=False):
    g = torch_generator(seed)
    shapes = [(B, h, T_q, d_k), (B, h, T_k, d_k), (B, h, T_k, d_v)]
    return [torch.randn(*s, generator=g, dtype=dtype, requires_grad=grad) for s in shapes]


@settings(max_examples=30, deadline=None)
@given(T=st.integers(1, 40), block=st.integers(1, 70), scale=st.floats(0.1, 10.0))
def test_online_softmax_equals_softmax(T, block, scale):
    x = scale * torch.randn(3, T, generator=torch_generator(T), dtype=torch.float64)
    torch.testing.assert_close(flash.online_softmax(x, block=block), torch.softmax(x, -1),
                               atol=1e-14, rtol=0)
    m, l = flash.online_softmax_stats(x, block)
    torch.testing.assert_close(m + l.log(), torch.logsumexp(x, -1), atol=1e-13, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T_q,T_k,block", [(13, 13, 4), (13, 13, 13), (5, 17, 3), (9, 9, 64)])
def test_tiled_and_fast_equal_the_reference_kernel(causal, T_q, T_k, block):
    q, k, v = _qkv(T_q=T_q, T_k=T_k, grad=True)
    mask = sc.causal_mask(T_q, T_k) if causal else None
    ref, _ = sc.attention(q, k, v, mask=mask)
    go = torch.randn_like(ref)
    ref_grads = torch.autograd.grad(ref, (q, k, v), go)
    for fn in (flash.tiled_attention, flash.fast_attention):
        out = fn(q, k, v, causal=causal, block=block)
        assert (out - ref).abs().max() < 1e-12
        grads = torch.autograd.grad(out, (q, k, v), go)
        for a, b in zip(grads, ref_grads):
            assert (a - b).abs().max() < 1e-12


def test_tiled_attention_gradcheck_and_float32_sdpa():
    q, k, v = _qkv(B=1, h=1, T_q=6, T_k=6, d_k=3, d_v=2, grad=True)
    assert torch.autograd.gradcheck(
        lambda a, b, c: flash.tiled_attention(a, b, c, causal=True, block=4), (q, k, v))
    q, k, v = _qkv(dtype=torch.float32)
    for causal in (False, True):
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.testing.assert_close(flash.tiled_attention(q, k, v, causal=causal), ref,
                                   atol=1e-5, rtol=0)
        torch.testing.assert_close(flash.fast_attention(q, k, v, causal=causal), ref,
                                   atol=1e-5, rtol=0)


def test_saved_memory_is_linear_for_tiled_and_quadratic_for_reference():
    for T in (32, 64):
        q, k, v = _qkv(B=1, h=2, T_q=T, T_k=T, d_k=4, d_v=4, grad=True)
        tiled = saved_tensor_bytes(lambda: flash.tiled_attention(q, k, v, block=8))
        ref = saved_tensor_bytes(lambda: sc.attention(q, k, v)[0])
        # q, k, v, out (4 numbers each of d = 4) and lse (1) per token and head
        assert tiled == 2 * T * (4 * 4 + 1) * 8
        # q * scale, k, v and the (T, T) weights
        assert ref == 2 * T * 3 * 4 * 8 + 2 * T * T * 8


def test_bad_input_names_the_argument():
    q, k, v = _qkv()
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        flash.tiled_attention([1.0], k, v)
    with pytest.raises(ValueError, match=r"k must have shape \(\.\.\., T_k, d_k\)"):
        flash.tiled_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="v must have shape"):
        flash.fast_attention(q, k, v[..., :4, :])
    with pytest.raises(TypeError, match="share one dtype"):
        flash.fast_attention(q, k.float(), v)
    with pytest.raises(TypeError, match="causal must be a bool"):
        flash.tiled_attention(q, k, v, causal=1)
    with pytest.raises(ValueError, match="T_k >= T_q"):
        flash.tiled_attention(q, k[..., :4, :], v[..., :4, :], causal=True)
    with pytest.raises(ValueError, match="block must be >= 1"):
        flash.fast_attention(q, k, v, block=0)
    with pytest.raises(ValueError, match="scale must be > 0"):
        flash.tiled_attention(q, k, v, scale=-1.0)
    with pytest.raises(ValueError, match="at least one token"):
        flash.fast_attention(q[..., :0, :], k, v)
    with pytest.raises(ValueError, match="x must be finite"):
        flash.online_softmax(torch.tensor([0.0, -math.inf]), block=1)
    with pytest.raises(TypeError, match="x must have a floating-point dtype"):
        flash.online_softmax(torch.tensor([1, 2]), block=1)
