"""A decoder-only transformer language model (5.8): causal Pre-LN blocks, tied input and
output embeddings, grouped-query attention and a key-value cache.

The model follows GPT-2 (Radford et al. 2019) at toy scale: token and learned position
embeddings, ``n_layers`` blocks ``x + attn(LN(x))``, ``x + FFN(LN(x))``, a final
LayerNorm, and logits ``h E^T`` with the token embedding ``E`` reused as the output
layer (weight tying, Press & Wolf 2017). Attention has ``n_heads`` query heads and
``n_kv_heads`` key-value heads, shared by groups of ``n_heads / n_kv_heads`` query
heads: ``n_kv_heads = n_heads`` is multi-head attention, ``1`` is multi-query attention
(Shazeer 2019), anything between is grouped-query attention (Ainslie et al. 2023).
During generation a :class:`KVCache` keeps every layer's keys and values, so each new
token costs one query against the cache instead of a pass over the whole prefix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from flt_lib._validate import check_generator, check_int, check_tensor
from flt_lib.attention.flash import fast_attention
from flt_lib.attention.multi_head import init_linear
from flt_lib.attention.sampling import sample_next

__all__ = [
    "GPT",
    "GPTConfig",
    "KVCache",
    "entropy_rate",
    "generate",
    "kv_bytes_per_token",
    "next_token_loss",
]


@dataclass(frozen=True)
class GPTConfig:
    """Architecture of a :class:`GPT`."""

    vocab: int        # number of token ids
    d_model: int      # token width
    n_heads: int      # query heads per layer (divides d_model)
    n_kv_heads: int   # key-value heads per layer (divides n_heads)
    n_layers: int     # number of blocks
    d_ff: int         # hidden width of each FFN
    max_len: int      # longest sequence (rows of the position table)

    def __post_init__(self) -> None:
        for name in ("vocab", "d_model", "n_heads", "n_kv_heads", "n_layers", "d_ff",
                     "max_len"):
            check_int(getattr(self, name), name, min_value=1)
        if self.d_model % self.n_heads:
            raise ValueError(
                f"n_heads must divide d_model, got {self.n_heads} and {self.d_model}"
            )
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"n_kv_heads must divide n_heads, got {self.n_kv_heads} and "
                f"{self.n_heads}"
            )


class KVCache:
    """Keys and values of every layer for the tokens seen so far, (B, g, T, d_head)."""

    def __init__(self, n_layers: int) -> None:
        n_layers = check_int(n_layers, "n_layers", min_value=1)
        self.k: list[torch.Tensor | None] = [None] * n_layers
        self.v: list[torch.Tensor | None] = [None] * n_layers

    def __len__(self) -> int:
        """Number of cached tokens."""
        return 0 if self.k[0] is None else self.k[0].shape[2]

    def append(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Add new keys and values (B, g, T_new, d_head); return all of them."""
        if self.k[layer] is not None:
            k = torch.cat([self.k[layer], k], dim=2)
            v = torch.cat([self.v[layer], v], dim=2)
        self.k[layer], self.v[layer] = k, v
        return k, v

    def nbytes(self) -> int:
        """Bytes held by the cached tensors."""
        return sum(t.numel() * t.element_size() for t in self.k + self.v
                   if t is not None)


def kv_bytes_per_token(cfg: GPTConfig, *, bytes_per_number: int = 4) -> int:
    """Cache memory per token: ``2 n_layers n_kv_heads d_head`` numbers
    (eq-attn-kv-memory).

    Args:
        cfg: the architecture.
        bytes_per_number: 4 for float32, 2 for float16/bfloat16.

    Returns:
        Bytes per cached token (per sequence).
    """
    if not isinstance(cfg, GPTConfig):
        raise TypeError(f"cfg must be a GPTConfig, got {type(cfg).__name__}")
    bytes_per_number = check_int(bytes_per_number, "bytes_per_number", min_value=1)
    d_head = cfg.d_model // cfg.n_heads
    return 2 * cfg.n_layers * cfg.n_kv_heads * d_head * bytes_per_number


class CausalSelfAttention(nn.Module):
    """Causal grouped-query self-attention (Ainslie et al. 2023)."""

    def __init__(self, cfg: GPTConfig, *, generator: torch.Generator) -> None:
        super().__init__()
        self.h, self.g = cfg.n_heads, cfg.n_kv_heads
        self.d_head = cfg.d_model // cfg.n_heads
        d, kv = cfg.d_model, 2 * cfg.n_kv_heads * self.d_head
        self.q = init_linear(nn.Linear(d, d, bias=False), generator=generator)
        self.kv = init_linear(nn.Linear(d, kv, bias=False), generator=generator)
        self.out = init_linear(nn.Linear(d, d, bias=False), generator=generator)

    def forward(
        self, x: torch.Tensor, cache: KVCache | None = None, layer: int = 0
    ) -> torch.Tensor:
        """(B, T, d_model) -> (B, T, d_model); with a cache, x holds the new tokens."""
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.h, self.d_head).transpose(1, 2)    # (B, h, T, dh)
        kv = self.kv(x).view(B, T, 2, self.g, self.d_head)
        k, v = kv.permute(2, 0, 3, 1, 4)                                 # (B, g, T, dh)
        if cache is not None:
            k, v = cache.append(layer, k, v)                    # (B, g, T_past + T, dh)
        k = k.repeat_interleave(self.h // self.g, dim=1)        # each group's heads
        v = v.repeat_interleave(self.h // self.g, dim=1)        # (B, h, T_k, dh)
        y = fast_attention(q, k, v, causal=True)                # (B, h, T, dh)
        return self.out(y.transpose(1, 2).reshape(B, T, -1))


class Block(nn.Module):
    """Pre-LN decoder block: ``x + attn(LN(x))``, then ``x + FFN(LN(x))``."""

    def __init__(self, cfg: GPTConfig, *, generator: torch.Generator) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg, generator=generator)
        self.ffn = nn.Sequential(
            init_linear(nn.Linear(cfg.d_model, cfg.d_ff), generator=generator),
            nn.GELU(),
            init_linear(nn.Linear(cfg.d_ff, cfg.d_model), generator=generator),
        )

    def forward(self, x, cache=None, layer=0):  # noqa: D102
        x = x + self.attn(self.ln1(x), cache, layer)
        return x + self.ffn(self.ln2(x))


class GPT(nn.Module):
    """A decoder-only language model with tied embeddings (Radford et al. 2019).

    Args:
        cfg: the architecture.
        generator: draws every initial weight.
    """

    def __init__(self, cfg: GPTConfig, *, generator: torch.Generator) -> None:
        super().__init__()
        if not isinstance(cfg, GPTConfig):
            raise TypeError(f"cfg must be a GPTConfig, got {type(cfg).__name__}")
        check_generator(generator)
        self.cfg = cfg
        d = cfg.d_model
        self.embed = nn.Parameter(torch.randn(cfg.vocab, d, generator=generator) * 0.02)
        self.pos = nn.Parameter(torch.randn(cfg.max_len, d, generator=generator) * 0.02)
        self.blocks = nn.ModuleList(Block(cfg, generator=generator)
                                    for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(
        self, tokens: torch.Tensor, cache: KVCache | None = None
    ) -> torch.Tensor:
        """Next-token logits (B, T, vocab) for token ids (B, T); with a cache,
        ``tokens`` are the new tokens after the cached ones."""
        tokens = check_tensor(tokens, "tokens", ndim=2, shape_doc="(B, T) token ids")
        start = 0 if cache is None else len(cache)
        if start + tokens.shape[1] > self.cfg.max_len:
            raise ValueError(
                f"tokens reach position {start + tokens.shape[1]} > max_len = "
                f"{self.cfg.max_len}"
            )
        return self.logits(tokens, start, cache)

    def logits(self, tokens: torch.Tensor, start: int, cache: KVCache | None):
        """The forward pass itself (eq-attn-gpt): embeddings, blocks, tied read-out."""
        x = self.embed[tokens] + self.pos[start : start + tokens.shape[1]]  # (B, T, d)
        for layer, block in enumerate(self.blocks):
            x = block(x, cache, layer)
        return self.ln_f(x) @ self.embed.T                  # (B, T, V): tied weights


def next_token_loss(model: GPT, tokens: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats) of predicting ``tokens[:, t]`` from ``tokens[:, :t]``,
    for ``t = 1..T-1`` (eq-attn-nll).

    Args:
        model: a :class:`GPT`.
        tokens: token ids, shape (B, T) with T >= 2.

    Returns:
        A scalar tensor.
    """
    tokens = check_tensor(tokens, "tokens", ndim=2, shape_doc="(B, T) token ids")
    if tokens.shape[1] < 2:
        raise ValueError(f"tokens must have T >= 2, got shape {tuple(tokens.shape)}")
    logits = model(tokens[:, :-1])                                  # (B, T-1, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           tokens[:, 1:].reshape(-1))


@torch.no_grad()
def generate(
    model: GPT,
    prompt: torch.Tensor,
    n_new: int,
    *,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    use_cache: bool = True,
    generator: torch.Generator,
) -> torch.Tensor:
    """Extend ``prompt`` (B, T_0) by ``n_new`` sampled tokens (:func:`sample_next`).

    With ``use_cache`` each step feeds only the newest token and reads the rest from a
    :class:`KVCache`; without, each step reruns the whole sequence. Both give the same
    tokens.

    Returns:
        Token ids, shape (B, T_0 + n_new).
    """
    prompt = check_tensor(prompt, "prompt", ndim=2, shape_doc="(B, T_0) token ids")
    n_new = check_int(n_new, "n_new", min_value=0)
    cache = KVCache(model.cfg.n_layers) if use_cache else None
    seq, new = prompt, prompt
    for _ in range(n_new):
        logits = model(new if use_cache else seq, cache)[:, -1]        # (B, V)
        nxt = sample_next(logits, temperature=temperature, top_k=top_k, top_p=top_p,
                          generator=generator)
        seq = torch.cat([seq, nxt[:, None]], dim=1)
        new = nxt[:, None]
    return seq


def entropy_rate(P: torch.Tensor) -> float:
    """Entropy rate ``H = -sum_i pi_i sum_j P_ij log P_ij`` (nats per token) of a
    stationary Markov chain, the lowest next-token loss any model can reach
    (eq-attn-entropy-rate).

    Args:
        P: transition matrix, shape (V, V), irreducible.

    Returns:
        ``H`` in nats.
    """
    from flt_lib.attention.bert import stationary

    P = check_tensor(P, "P", ndim=2, floating=True, shape_doc="(V, V)")
    pi = stationary(P)
    terms = torch.where(P > 0, -P * torch.log(P.clamp_min(1e-300)), 0.0)
    return float((pi * terms.sum(dim=1)).sum())
