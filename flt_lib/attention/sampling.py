"""Sampling the next token of a language model (5.8): temperature, top-k and nucleus
(top-p) sampling.

:func:`filtered_probs` turns one row of logits into the distribution that is sampled;
:func:`sample_next` draws from it. Nucleus sampling keeps the smallest set of most
probable tokens whose total probability reaches ``top_p`` (Holtzman, Buys, Du, Forbes &
Choi 2020); top-k keeps the ``k`` most probable (Fan, Lewis & Dauphin 2018).
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = ["filter_logits", "filtered_probs", "sample_next"]


def filter_logits(
    logits: torch.Tensor, temperature: float, top_k: int, top_p: float
) -> torch.Tensor:
    """Logits divided by the temperature, with the tokens outside the top ``k`` and
    outside the nucleus of mass ``top_p`` set to ``-inf`` (eq-attn-nucleus).

    Args:
        logits: shape (..., V).
        temperature: > 0.
        top_k: keep this many tokens; 0 keeps all.
        top_p: nucleus mass in (0, 1]; 1 keeps all.

    Returns:
        Filtered logits, shape (..., V).
    """
    logits = logits / temperature
    if top_k:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]           # k-th largest
        logits = logits.masked_fill(logits < kth, -math.inf)
    if top_p < 1:
        p, order = torch.softmax(logits, dim=-1).sort(dim=-1, descending=True)
        before = p.cumsum(dim=-1) - p                 # mass of the more probable tokens
        drop = (before >= top_p).scatter(-1, order, before >= top_p)
        logits = logits.masked_fill(drop, -math.inf)
    return logits


def _check(logits, temperature, top_k, top_p):
    logits = check_tensor(logits, "logits", floating=True)
    if logits.ndim < 1 or logits.shape[-1] < 1:
        raise ValueError(f"logits must have shape (..., V), got {tuple(logits.shape)}")
    temperature = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    top_k = check_int(top_k, "top_k", min_value=0, max_value=logits.shape[-1])
    top_p = check_real(top_p, "top_p", min_value=0.0, max_value=1.0, strict_min=True)
    return logits, temperature, top_k, top_p


def filtered_probs(
    logits: torch.Tensor,
    *,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
) -> torch.Tensor:
    """The distribution that :func:`sample_next` draws from.

    Args:
        logits: shape (..., V).
        temperature: divides the logits, > 0 (below 1 sharpens, above 1 flattens).
        top_k: keep the ``top_k`` most probable tokens; 0 keeps all.
        top_p: keep the nucleus of mass ``top_p``, in (0, 1]; 1 keeps all.

    Returns:
        Probabilities, shape (..., V).
    """
    args = _check(logits, temperature, top_k, top_p)
    return torch.softmax(filter_logits(*args), dim=-1)


def sample_next(
    logits: torch.Tensor,
    *,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    generator: torch.Generator,
) -> torch.Tensor:
    """Draw one token per row from :func:`filtered_probs`.

    Args:
        logits: shape (B, V).
        temperature, top_k, top_p: as in :func:`filtered_probs`.
        generator: a generator on the logits' device.

    Returns:
        Token ids, shape (B,).
    """
    logits = check_tensor(logits, "logits", ndim=2, floating=True, shape_doc="(B, V)")
    check_generator(generator)
    probs = filtered_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
