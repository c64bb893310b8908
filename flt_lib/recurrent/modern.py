"""Modern recurrent models: retention, RWKV, SSM convolutions and linear attention
(Section 4.6).

Each model has two (or three) computations of one function: a recurrent one, with a
state of fixed size, for generation; and a parallel one, over the whole sequence, for
training.

- Retention (Sun et al. 2023): o_n = sum_{m <= n} gamma^(n-m) (q_n . k_m) v_m; parallel,
  recurrent (S_n = gamma S_{n-1} + k_n^T v_n, o_n = q_n S_n) and chunkwise forms.
- RWKV-4's WKV operator (Peng et al. 2023): a per-channel softmax over the past with
  logits k_i - (t - 1 - i) w, and a bonus u for the current token; the recurrence
  follows the official CUDA kernel, which keeps running sums rescaled by their largest
  exponent.
- A linear time-invariant SSM z_t = A z_{t-1} + B x_t, y_t = C z_t is the causal
  convolution of x with the kernel K_k = C A^k B (Gu, Goel & Re 2022).
- Causal linear attention with feature map phi(x) = elu(x) + 1 is the RNN
  S_t = S_{t-1} + phi(k_t) v_t^T (Katharopoulos et al. 2020).

Shapes: q, k (B, T, d_k) or (B, H, T, d_k); v (..., T, d_v).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_choice, check_int, check_real, check_tensor
from flt_lib.recurrent.linear import real_recurrence
from flt_lib.timing import best_time

__all__ = [
    "rotary",
    "retention_parallel",
    "retention_recurrent",
    "retention_chunkwise",
    "wkv_recurrent",
    "wkv_parallel",
    "ssm_kernel",
    "ssm_recurrent",
    "causal_conv",
    "elu_feature_map",
    "linear_attention_parallel",
    "linear_attention_recurrent",
    "GenerationTiming",
    "time_generation",
]


def _check_qkv(q: object, k: object, v: object) -> None:
    check_tensor(q, "q", floating=True, shape_doc="(..., T, d_k)")
    if q.ndim < 2:
        raise ValueError(f"q must have shape (..., T, d_k), got {tuple(q.shape)}")
    check_tensor(
        k,
        "k",
        shape=tuple(q.shape),
        floating=True,
        shape_doc=f"like q, {tuple(q.shape)}",
    )
    check_tensor(v, "v", floating=True, shape_doc="(..., T, d_v)")
    if v.shape[:-1] != q.shape[:-1]:
        raise ValueError(
            f"v must have shape (..., T, d_v) = {tuple(q.shape[:-1])} + (d_v,), "
            f"got {tuple(v.shape)}"
        )


def _gamma(gamma: float | torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """gamma as a tensor broadcastable against (..., T, T): a float, or one value per
    head (H,)."""
    if isinstance(gamma, torch.Tensor):
        check_tensor(gamma, "gamma", ndim=1, floating=True, shape_doc="(H,)")
        if q.ndim < 4 or gamma.shape[0] != q.shape[-3]:
            raise ValueError(
                f"gamma of shape (H,) needs q of shape (B, H, T, d_k), got "
                f"{tuple(q.shape)}"
            )
        g = gamma.to(q.dtype)
    else:
        g = q.new_tensor(check_real(gamma, "gamma", min_value=0.0, max_value=1.0))
    if ((g <= 0) | (g > 1)).any():
        raise ValueError(f"gamma must lie in (0, 1], got {g.tolist()}")
    return g.reshape(g.shape + (1, 1))                   # (H, 1, 1) or (1, 1)


def rotary(x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Rotate each pair of features (2j, 2j+1) of position n by the angle n theta_j
    (xPos/RoPE).

    Then <rotary(q)_n, rotary(k)_m> depends on n - m only, as in RetNet's Theta
    (Sun et al. 2023).

    Args:
        x: (..., T, d) with d even.
        theta: (d / 2,) angles per pair.

    Returns:
        The rotated tensor, same shape.
    """
    check_tensor(x, "x", floating=True, shape_doc="(..., T, d)")
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError(
            f"x must have shape (..., T, d) with d even, got {tuple(x.shape)}"
        )
    check_tensor(
        theta, "theta", shape=(x.shape[-1] // 2,), floating=True, shape_doc="(d/2,)"
    )
    n = torch.arange(x.shape[-2], dtype=x.dtype, device=x.device)
    ang = n[:, None] * theta.to(x.dtype)                # (T, d/2)
    cos, sin = torch.cos(ang), torch.sin(ang)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def retention_parallel(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gamma: float | torch.Tensor
) -> torch.Tensor:
    """Retention, parallel form: (Q K^T * D) V with D_nm = gamma^(n-m)
    for n >= m, else 0 (eq-rnn-retention).

    Args:
        q, k: (..., T, d_k); v: (..., T, d_v).
        gamma: decay in (0, 1], a float or one per head (H,) for q of shape
            (B, H, T, d_k).

    Returns:
        (..., T, d_v).
    """
    _check_qkv(q, k, v)
    g = _gamma(gamma, q)
    T = q.shape[-2]
    idx = torch.arange(T, device=q.device)
    lag = (idx[:, None] - idx[None, :]).to(q.dtype)     # (T, T) n - m
    D = torch.where(
        lag >= 0, g ** lag.clamp(min=0), torch.zeros((), dtype=q.dtype, device=q.device)
    )
    return ((q @ k.transpose(-1, -2)) * D) @ v


def retention_recurrent(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gamma: float | torch.Tensor
) -> torch.Tensor:
    """Retention, recurrent form: S_n = gamma S_{n-1} + k_n^T v_n, o_n = q_n S_n
    (eq-rnn-retention-rec).

    The state S has shape (..., d_k, d_v) whatever the length: generation costs the same
    per token.
    """
    _check_qkv(q, k, v)
    g = _gamma(gamma, q)
    S = q.new_zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]))   # (..., d_k, d_v)
    out = []
    for q_n, k_n, v_n in zip(q.unbind(-2), k.unbind(-2), v.unbind(-2)):
        S = g * S + k_n.unsqueeze(-1) * v_n.unsqueeze(-2)        # rank-one write
        out.append((q_n.unsqueeze(-2) @ S).squeeze(-2))          # read
    return torch.stack(out, dim=-2)


def retention_chunkwise(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gamma: float | torch.Tensor, *,
    chunk: int,
) -> torch.Tensor:
    """Retention, chunkwise form: parallel inside chunks of length c,
    recurrent across them.

    For chunk i: o = (Q_i K_i^T * D) V_i + xi * (Q_i R_{i-1}), xi_j = gamma^(j+1), and
    R_i = K_i^T (zeta * V_i) + gamma^c R_{i-1}, zeta_j = gamma^(c-1-j)
    (Sun et al. 2023, eq. 7).
    """
    _check_qkv(q, k, v)
    c = check_int(chunk, "chunk", min_value=1)
    return _retention_chunkwise(q, k, v, gamma, c)


def _retention_chunkwise(q, k, v, gamma, c):
    g = _gamma(gamma, q)
    T = q.shape[-2]
    pad = (-T) % c
    if pad:                                              # zero keys/values add nothing
        z = lambda t: torch.cat(  # noqa: E731
            [t, t.new_zeros(t.shape[:-2] + (pad, t.shape[-1]))], dim=-2
        )
        q, k, v = z(q), z(k), z(v)
    j = torch.arange(c, dtype=q.dtype, device=q.device)
    # (H, c, 1) or (c, 1): decay into the chunk
    xi = (g ** (j + 1)).transpose(-1, -2)
    zeta = (g ** (c - 1 - j)).transpose(-1, -2)          # decay to the chunk's end
    R = q.new_zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]))
    out = []
    for s in range(0, q.shape[-2], c):
        qi, ki, vi = q[..., s:s + c, :], k[..., s:s + c, :], v[..., s:s + c, :]
        out.append(retention_parallel(qi, ki, vi, gamma) + xi * (qi @ R))
        R = ki.transpose(-1, -2) @ (zeta * vi) + g ** c * R
    return torch.cat(out, dim=-2)[..., :T, :]


def _check_wkv(w: object, u: object, k: object, v: object) -> None:
    check_tensor(k, "k", ndim=3, floating=True, shape_doc="(B, T, C)")
    check_tensor(
        v, "v", shape=tuple(k.shape), floating=True, shape_doc="(B, T, C) like k"
    )
    C = k.shape[-1]
    check_tensor(w, "w", shape=(C,), floating=True, shape_doc=f"(C,) = ({C},)")
    check_tensor(u, "u", shape=(C,), floating=True, shape_doc=f"(C,) = ({C},)")
    if (w < 0).any():
        raise ValueError(
            f"w must be >= 0 (the decay per step is exp(-w)), got min "
            f"{w.min().item():.3g}"
        )


def wkv_recurrent(
    w: torch.Tensor, u: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """RWKV-4's WKV by its recurrence, rescaled as in the official CUDA kernel
    (eq-rnn-wkv).

    State per channel: p = sum e^(k_i - o) v_i and q = sum e^(k_i - o) over the past,
    each decayed by e^(-w) per step, with o the running largest exponent (so nothing
    overflows).

    Args:
        w: decay rates >= 0, (C,) (the official code's -exp(time_decay) is -w).
        u: bonus of the current token, (C,) (time_first).
        k, v: keys and values, (B, T, C).

    Returns:
        wkv, (B, T, C).
    """
    _check_wkv(w, u, k, v)
    return _wkv_recurrent(w, u, k, v)


def _wkv_recurrent(w, u, k, v):
    p = torch.zeros_like(k[:, 0])
    q = torch.zeros_like(k[:, 0])
    o = torch.full_like(k[:, 0], -1e38)
    out = []
    for k_t, v_t in zip(k.unbind(1), v.unbind(1)):
        # output: past plus bonus-weighted current
        no = torch.maximum(o, u + k_t)
        A, B = torch.exp(o - no), torch.exp(u + k_t - no)
        out.append((A * p + B * v_t) / (A * q + B))
        # state update: decay the past, add current
        no = torch.maximum(o - w, k_t)
        A, B = torch.exp(o - w - no), torch.exp(k_t - no)
        p, q, o = A * p + B * v_t, A * q + B, no
    return torch.stack(out, dim=1)


def wkv_parallel(
    w: torch.Tensor, u: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """RWKV-4's WKV in its parallel, attention-like form (eq-rnn-wkv).

    wkv_t = sum_i softmax_i(l_{t,i}) v_i per channel, with logits
    l_{t,i} = k_i - (t - 1 - i) w for i < t, l_{t,t} = u + k_t, and
    l_{t,i} = -inf for i > t. Memory O(B T^2 C).
    """
    _check_wkv(w, u, k, v)
    T = k.shape[1]
    idx = torch.arange(T, device=k.device)
    lag = (idx[:, None] - 1 - idx[None, :]).to(k.dtype)             # (T, T): t - 1 - i
    logits = k.unsqueeze(1) - lag[None, :, :, None] * w              # (B, T, T, C)
    eye = torch.eye(T, dtype=torch.bool, device=k.device)[None, :, :, None]
    logits = torch.where(eye, (u + k).unsqueeze(2).expand_as(logits), logits)
    future = (lag < -1)[None, :, :, None]                            # i > t
    logits = logits.masked_fill(future, float("-inf"))
    return (torch.softmax(logits, dim=2) * v.unsqueeze(1)).sum(dim=2)


def ssm_kernel(
    A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, T: int
) -> torch.Tensor:
    """The SSM convolution kernel K_k = C A^k B for k = 0, ..., T-1 (eq-rnn-ssm-kernel).

    Args:
        A: (N, N); B: (N,) input vector; C: (N,) output vector; T: kernel length >= 1.

    Returns:
        K, (T,).
    """
    check_tensor(A, "A", ndim=2, floating=True, shape_doc="(N, N)")
    N = A.shape[0]
    check_tensor(B, "B", shape=(N,), floating=True, shape_doc=f"(N,) = ({N},)")
    check_tensor(C, "C", shape=(N,), floating=True, shape_doc=f"(N,) = ({N},)")
    T = check_int(T, "T", min_value=1)
    K, AkB = [], B
    for _ in range(T):
        K.append(C @ AkB)
        AkB = A @ AkB
    return torch.stack(K)


def ssm_recurrent(
    A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, x: torch.Tensor
) -> torch.Tensor:
    """Outputs y_t = C z_t of z_t = A z_{t-1} + B x_t, z_0 = 0, by the recurrence.

    Args:
        A: (N, N); B, C: (N,); x: scalar input sequences, (batch, T).

    Returns:
        y, (batch, T).
    """
    check_tensor(x, "x", ndim=2, floating=True, shape_doc="(batch, T)")
    check_tensor(C, "C", ndim=1, floating=True, shape_doc="(N,)")
    Z = real_recurrence(A, B.unsqueeze(-1), x.unsqueeze(-1))      # (batch, T, N)
    return Z @ C


def causal_conv(
    x: torch.Tensor, K: torch.Tensor, *, method: str = "fft"
) -> torch.Tensor:
    """Causal convolution y_t = sum_{k=0}^{t} K_k x_{t-k} along the last axis
    (eq-rnn-causal-conv).

    Args:
        x: (..., T).
        K: kernel, (T_K,) with T_K <= T (missing taps are zero).
        method: "fft" (O(T log T), zero-padded to 2T so nothing wraps around) or
            "direct" (O(T T_K)).

    Returns:
        y, same shape as x.
    """
    check_tensor(x, "x", floating=True, shape_doc="(..., T)")
    check_tensor(K, "K", ndim=1, floating=True, shape_doc="(T_K,)")
    check_choice(method, "method", ["fft", "direct"])
    T = x.shape[-1]
    if K.shape[0] > T:
        raise ValueError(f"K must have at most T = {T} taps, got {K.shape[0]}")
    return _causal_conv(x, K, method)


def _causal_conv(x, K, method):
    T = x.shape[-1]
    if method == "fft":
        n = 2 * T
        y = torch.fft.irfft(torch.fft.rfft(x, n=n) * torch.fft.rfft(K, n=n), n=n)
        return y[..., :T]
    y = torch.zeros_like(x)
    for j in range(K.shape[0]):
        y[..., j:] += K[j] * x[..., : T - j]
    return y


def elu_feature_map(x: torch.Tensor) -> torch.Tensor:
    """phi(x) = elu(x) + 1 > 0, Katharopoulos et al.'s feature map."""
    check_tensor(x, "x", floating=True)
    return torch.nn.functional.elu(x) + 1


def linear_attention_parallel(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """Causal linear attention, parallel form (eq-rnn-linear-attention).

    out_t = sum_{s <= t} (phi(q_t).phi(k_s)) v_s / sum_{s <= t} phi(q_t).phi(k_s),
    O(T^2).
    """
    _check_qkv(q, k, v)
    T = q.shape[-2]
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    scores = (
        elu_feature_map(q) @ elu_feature_map(k).transpose(-1, -2)
    ).masked_fill(~mask, 0.0)
    return (scores @ v) / scores.sum(dim=-1, keepdim=True)


def linear_attention_recurrent(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """Causal linear attention as an RNN: S_t = S_{t-1} + phi(k_t) v_t^T,
    s_t = s_{t-1} + phi(k_t).

    out_t = phi(q_t)^T S_t / phi(q_t)^T s_t: a state of size d_k (d_v + 1), O(T) in
    total.
    """
    _check_qkv(q, k, v)
    return _linear_attention_recurrent(q, k, v)


def _linear_attention_recurrent(q, k, v):
    fq, fk = elu_feature_map(q), elu_feature_map(k)
    S = q.new_zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]))
    s = q.new_zeros(q.shape[:-2] + (q.shape[-1],))
    out = []
    for q_t, k_t, v_t in zip(fq.unbind(-2), fk.unbind(-2), v.unbind(-2)):
        S = S + k_t.unsqueeze(-1) * v_t.unsqueeze(-2)
        s = s + k_t
        out.append(
            (q_t.unsqueeze(-2) @ S).squeeze(-2) / (q_t * s).sum(-1, keepdim=True)
        )
    return torch.stack(out, dim=-2)


@dataclass(frozen=True)
class GenerationTiming:
    """Seconds per generated token of retention, by the recurrent and by the parallel
    form."""

    lengths: list[int]         # context lengths t at which one more token was generated
    recurrent: list[float]     # best time of one step S <- gamma S + k^T v, o = q S
    # best time of o_t = sum_{m <= t} gamma^(t-m) (q_t.k_m) v_m over a cache
    parallel: list[float]


def time_generation(
    lengths: list[int], *, d: int = 64, gamma: float = 0.97, repeat: int = 20,
    generator: torch.Generator,
) -> GenerationTiming:
    """Time one generation step of retention at each context length, in both forms.

    The parallel form reads the cached keys and values of all t previous tokens (the
    best case for an attention-like model, like a transformer's key-value cache): O(t d)
    per token. The recurrent form updates a d x d state: O(d^2) per token, whatever t
    is. Each time is the minimum over ``repeat`` calls, which is robust to a busy
    machine.

    Args:
        lengths: context lengths, each >= 1.
        d: key and value width.
        gamma: decay.
        repeat: calls per measurement.
        generator: draws the cached keys and values.

    Returns:
        A :class:`GenerationTiming`.
    """
    d, repeat = check_int(d, "d", min_value=1), check_int(repeat, "repeat", min_value=1)
    lengths = [check_int(t, "lengths[i]", min_value=1) for t in lengths]
    gamma = check_real(gamma, "gamma", min_value=0.0, max_value=1.0)
    T = max(lengths)
    K = torch.randn(T, d, generator=generator) / d**0.5
    V = torch.randn(T, d, generator=generator)
    q = torch.randn(d, generator=generator) / d**0.5
    S = torch.zeros(d, d)
    decay = gamma ** torch.arange(T - 1, -1, -1, dtype=torch.float32)   # gamma^(t-m)

    rec, par = [], []
    for t in lengths:
        rec.append(
            best_time(
                lambda: q @ (gamma * S + torch.outer(K[t - 1], V[t - 1])),
                repeat=repeat,
            )
        )
        Kt, Vt, dt = K[:t], V[:t], decay[T - t:]
        par.append(best_time(lambda: ((Kt @ q) * dt) @ Vt, repeat=repeat))
    return GenerationTiming(lengths=lengths, recurrent=rec, parallel=par)
