import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from flt_lib.attention import scoring as sc
from flt_lib.connectionism import dense_memory
from flt_lib.rng import torch_generator


def _qkv(B=2, h=3, T_q=5, T_k=7, d_k=8, d_v=4, seed=0, dtype=torch.float32):
    g = torch_generator(seed)
    q = torch.randn(B, h, T_q, d_k, generator=g, dtype=dtype)
    k = torch.randn(B, h, T_k, d_k, generator=g, dtype=dtype)
    v = torch.randn(B, h, T_k, d_v, generator=g, dtype=dtype)
    return q, k, v


def test_attention_equals_torch_sdpa():
    q, k, v = _qkv()
    out, w = sc.attention(q, k, v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v), atol=1e-6, rtol=0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5))


def test_causal_mask_equals_torch_is_causal():
    q, k, v = _qkv(T_q=6, T_k=6)
    out, w = sc.attention(q, k, v, mask=sc.causal_mask(6))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=0)
    assert torch.all(w.triu(diagonal=1) == 0)


def test_causal_mask_with_cache_offset_and_bool_mask_and_bias():
    m = sc.causal_mask(2, 5)
    assert m.tolist() == [[True, True, True, True, False], [True] * 5]
    q, k, v = _qkv(T_q=2, T_k=5)
    bias = torch.randn(2, 5, generator=torch_generator(1))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.masked_fill(~m, -math.inf))
    torch.testing.assert_close(sc.attention(q, k, v, mask=m, bias=bias)[0], ref, atol=1e-6, rtol=0)


def test_scale_and_plain_dot_product():
    q, k, v = _qkv(dtype=torch.float64)
    s = sc.dot_product_scores(q, k, scale=1.0)
    torch.testing.assert_close(s, q @ k.transpose(-2, -1))
    torch.testing.assert_close(sc.dot_product_scores(q, k), s / math.sqrt(8))
    out = sc.attention(q, k, v, scale=0.3)[0]
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, scale=0.3))


def test_attention_is_a_loop_over_queries():
    q, k, v = _qkv(B=1, h=1, dtype=torch.float64)
    out, _ = sc.attention(q, k, v)
    for i in range(q.shape[2]):  # xi_i = sum_t softmax_t(q_i . k_t / sqrt d) v_t
        w = torch.softmax(torch.stack([q[0, 0, i] @ k[0, 0, t] for t in range(7)]) / math.sqrt(8), 0)
        torch.testing.assert_close(out[0, 0, i], sum(w[t] * v[0, 0, t] for t in range(7)))


def test_gradcheck():
    q, k, v = (x.requires_grad_() for x in _qkv(B=1, h=1, T_q=3, T_k=4, d_k=3, d_v=2, dtype=torch.float64))
    assert torch.autograd.gradcheck(lambda a, b, c: sc.attention(a, b, c, mask=sc.causal_mask(3, 4))[0], (q, k, v))


def test_modern_hopfield_update_is_attention():
    g = torch_generator(2)
    patterns = torch.randn(6, 10, generator=g, dtype=torch.float64)
    x = torch.randn(4, 10, generator=g, dtype=torch.float64)
    ours, _ = sc.attention(x, patterns, patterns, scale=0.7)
    torch.testing.assert_close(ours, dense_memory.modern_update(patterns, x, beta=0.7))


def test_softmax_jacobian_matches_autograd():
    z = torch.randn(5, dtype=torch.float64, generator=torch_generator(4))
    J = torch.autograd.functional.jacobian(lambda u: torch.softmax(u, 0), z)
    torch.testing.assert_close(sc.softmax_jacobian(torch.softmax(z, 0)), J)
    assert sc.softmax_jacobian(torch.tensor([0.0, 1.0, 0.0])).abs().max() == 0


def test_score_statistics_variance_is_d():
    for d in (4, 64):
        s = sc.score_statistics(d, T=8, n_queries=4000, scaled=True, generator=torch_generator(d))
        assert abs(s.score_var / d - 1) < 0.06
    big = sc.score_statistics(512, T=8, n_queries=500, scaled=False, generator=torch_generator(0))
    small = sc.score_statistics(512, T=8, n_queries=500, scaled=True, generator=torch_generator(0))
    assert big.max_weight > 0.95 > small.max_weight and big.jacobian_norm < small.jacobian_norm / 5
    # the closed-form Jacobian norm equals the norm of the materialised Jacobian
    g = torch_generator(9)
    s = sc.score_statistics(16, T=5, n_queries=3, scaled=True, generator=g)
    g = torch_generator(9)
    q, k = torch.randn(3, 1, 16, generator=g, dtype=torch.float64), torch.randn(3, 5, 16, generator=g, dtype=torch.float64)
    p = torch.softmax((q @ k.transpose(1, 2)).squeeze(1) / 4, -1)
    assert s.jacobian_norm == pytest.approx(sc.softmax_jacobian(p).flatten(1).norm(dim=1).mean().item())


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 10_000))
def test_weights_are_convex_combinations(T_q, T_k, seed):
    q, k, v = _qkv(B=1, h=1, T_q=T_q, T_k=T_k, seed=seed)
    out, w = sc.attention(q, k, v)
    assert torch.all(w >= 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(1, 1, T_q))
    lo, hi = v.min(dim=-2).values, v.max(dim=-2).values  # outputs stay in the values' hull
    assert torch.all(out >= lo.unsqueeze(-2) - 1e-6) and torch.all(out <= hi.unsqueeze(-2) + 1e-6)


def test_bad_inputs():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match=r"k must have shape \(\.\.\., T_k, d_k\)"):
        sc.attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="v must have shape"):
        sc.attention(q, k, v[..., :2, :])
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        sc.attention(q, k, v, mask=torch.ones(5, 7))
    with pytest.raises(ValueError, match="mask must have shape"):
        sc.attention(q, k, v, mask=torch.ones(5, 6, dtype=torch.bool))
    with pytest.raises(ValueError, match="a row is all False"):
        sc.attention(q, k, v, mask=torch.zeros(5, 7, dtype=torch.bool))
    with pytest.raises(ValueError, match="scale must be > 0"):
        sc.attention(q, k, v, scale=0.0)
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        sc.dot_product_scores([1.0], k)
    with pytest.raises(ValueError, match="T_k must be >= 3"):
        sc.causal_mask(3, 2)
    with pytest.raises(TypeError, match="p must have a floating-point dtype"):
        sc.softmax_jacobian(torch.tensor([1, 0]))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        sc.score_statistics(4, T=3, n_queries=3, scaled=True, generator=None)
    with pytest.raises(ValueError, match="scores"):
        sc.attention_from_scores(torch.ones(3, 4), torch.ones(5, 2))
