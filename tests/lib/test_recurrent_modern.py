import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.recurrent import modern as M
from flt_lib.rng import torch_generator



def _qkv(seed, shape, dv, dtype=torch.float64):
    g = torch_generator(seed)
    q, k = torch.randn(shape, generator=g, dtype=dtype), torch.randn(shape, generator=g, dtype=dtype)
    v = torch.randn(shape[:-1] + (dv,), generator=g, dtype=dtype)
    return q, k, v


@settings(max_examples=15, deadline=None)
@given(T=st.integers(1, 30), chunk=st.integers(1, 8), seed=st.integers(0, 1000))
def test_retention_forms_agree(T, chunk, seed):
    q, k, v = _qkv(seed, (2, 3, T, 4), 5)
    gamma = 1 - 2.0 ** (-5 - torch.arange(3, dtype=torch.float64))
    par = M.retention_parallel(q, k, v, gamma)
    torch.testing.assert_close(M.retention_recurrent(q, k, v, gamma), par, rtol=0, atol=1e-10)
    torch.testing.assert_close(M.retention_chunkwise(q, k, v, gamma, chunk=chunk), par, rtol=0, atol=1e-10)
    # a scalar gamma equals the per-head tensor with equal entries
    torch.testing.assert_close(M.retention_parallel(q, k, v, 0.9), M.retention_parallel(q, k, v, torch.full((3,), 0.9, dtype=torch.float64)))


def test_retention_definition_and_rotary():
    q, k, v = _qkv(1, (1, 6, 4), 2)
    out = M.retention_parallel(q, k, v, 0.8)
    n = 4
    ref = sum(0.8 ** (n - m) * (q[0, n] @ k[0, m]) * v[0, m] for m in range(n + 1))
    torch.testing.assert_close(out[0, n], ref)
    theta = torch.tensor([0.3, 1.1], dtype=torch.float64)
    qr, kr = M.rotary(q, theta), M.rotary(k, theta)
    # relative position: shifting both sequences by one leaves q_n . k_m unchanged
    qs, ks = M.rotary(torch.cat([q[:, :1], q], 1), theta)[:, 1:], M.rotary(torch.cat([k[:, :1], k], 1), theta)[:, 1:]
    torch.testing.assert_close(qr @ kr.transpose(1, 2), qs @ ks.transpose(1, 2))
    torch.testing.assert_close(qr.norm(dim=-1), q.norm(dim=-1))


def test_wkv_forms_agree_and_definition():
    g = torch_generator(2)
    k = 5 * torch.randn(2, 25, 3, generator=g, dtype=torch.float64)
    v = torch.randn(2, 25, 3, generator=g, dtype=torch.float64)
    w, u = torch.rand(3, generator=g, dtype=torch.float64), torch.randn(3, generator=g, dtype=torch.float64)
    rec, par = M.wkv_recurrent(w, u, k, v), M.wkv_parallel(w, u, k, v)
    torch.testing.assert_close(rec, par, rtol=0, atol=1e-12)
    t, c = 7, 1
    num = sum(torch.exp(-(t - 1 - i) * w[c] + k[0, i, c]) * v[0, i, c] for i in range(t)) + torch.exp(u[c] + k[0, t, c]) * v[0, t, c]
    den = sum(torch.exp(-(t - 1 - i) * w[c] + k[0, i, c]) for i in range(t)) + torch.exp(u[c] + k[0, t, c])
    assert rec[0, t, c].item() == pytest.approx((num / den).item(), rel=1e-12)
    big = M.wkv_recurrent(w, u, 100 * k, v)                 # the rescaling keeps exp finite
    assert torch.isfinite(big).all()


def test_ssm_is_a_convolution():
    g = torch_generator(3)
    A = torch.randn(4, 4, generator=g, dtype=torch.float64)
    A = 0.9 * A / torch.linalg.eigvals(A).abs().max()
    B, C = torch.randn(4, generator=g, dtype=torch.float64), torch.randn(4, generator=g, dtype=torch.float64)
    x = torch.randn(2, 50, generator=g, dtype=torch.float64)
    K = M.ssm_kernel(A, B, C, 50)
    assert K[3].item() == pytest.approx((C @ torch.linalg.matrix_power(A, 3) @ B).item(), rel=1e-12)
    y = M.ssm_recurrent(A, B, C, x)
    torch.testing.assert_close(M.causal_conv(x, K), y, rtol=0, atol=1e-10)
    torch.testing.assert_close(M.causal_conv(x, K, method="direct"), y, rtol=0, atol=1e-10)


def test_linear_attention_is_an_rnn():
    q, k, v = _qkv(4, (2, 20, 3), 4)
    torch.testing.assert_close(M.linear_attention_recurrent(q, k, v), M.linear_attention_parallel(q, k, v), rtol=0, atol=1e-10)
    assert (M.elu_feature_map(torch.linspace(-30, 30, 50, dtype=torch.float64)) > 0).all()


def test_time_generation_shapes():
    t = M.time_generation([4, 16], d=8, repeat=2, generator=torch_generator(5))
    assert t.lengths == [4, 16] and len(t.recurrent) == len(t.parallel) == 2
    assert all(x > 0 for x in t.recurrent + t.parallel)


def test_bad_inputs():
    q, k, v = _qkv(0, (2, 5, 3), 4)
    with pytest.raises(ValueError, match="gamma must be <= 1.0"):
        M.retention_parallel(q, k, v, 1.5)
    with pytest.raises(ValueError, match=r"gamma of shape \(H,\) needs q of shape \(B, H, T, d_k\)"):
        M.retention_recurrent(q, k, v, torch.ones(2))
    with pytest.raises(ValueError, match="k must have shape"):
        M.retention_chunkwise(q, k[:, :4], v, 0.9, chunk=2)
    with pytest.raises(ValueError, match="chunk must be >= 1"):
        M.retention_chunkwise(q, k, v, 0.9, chunk=0)
    with pytest.raises(ValueError, match="w must be >= 0"):
        M.wkv_parallel(-torch.ones(3), torch.ones(3), torch.ones(1, 2, 3), torch.ones(1, 2, 3))
    with pytest.raises(ValueError, match=r"u must have shape \(C,\) = \(3,\)"):
        M.wkv_recurrent(torch.ones(3), torch.ones(2), torch.ones(1, 2, 3), torch.ones(1, 2, 3))
    with pytest.raises(ValueError, match="K must have at most T = 3 taps"):
        M.causal_conv(torch.ones(2, 3), torch.ones(5))
    with pytest.raises(ValueError, match="method must be one of"):
        M.causal_conv(torch.ones(2, 3), torch.ones(2), method="slow")
    with pytest.raises(ValueError, match=r"B must have shape \(N,\) = \(2,\)"):
        M.ssm_kernel(torch.eye(2), torch.ones(3), torch.ones(2), 4)
    with pytest.raises(ValueError, match="x must have shape"):
        M.rotary(torch.ones(2, 3), torch.ones(1))
    with pytest.raises(ValueError, match="v must have shape"):
        M.linear_attention_parallel(q, k, torch.ones(2, 4, 4))
