"""A small transformer encoder, the model that 5.3, 5.4, 5.6 and 5.7 train.

Tokens (integer ids) or vectors (ViT patches) are embedded into ``d_model``, optionally
preceded by a learned ``[CLS]`` vector, given positions, passed through ``n_layers``
:class:`~flt_lib.attention.block.TransformerBlock`\\ s and read out by a linear head at
every position. With ``causal=True`` it is a decoder-only model (a language model); with
``d_ff=0`` and ``norm="none"`` it is the attention-only transformer of Elhage et al.
(2021).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)
from flt_lib.attention.block import NORMS, TokenLayerNorm, TransformerBlock
from flt_lib.attention.multi_head import init_linear
from flt_lib.attention.positions import alibi_bias, sinusoidal_encoding
from flt_lib.attention.scoring import causal_mask

__all__ = [
    "POSITIONS",
    "Encoder",
    "EncoderConfig",
    "EncoderOutput",
    "ffn_gradient_norms",
]

POSITIONS = ("none", "sinusoidal", "learned", "rope", "alibi")


@dataclass(frozen=True)
class EncoderConfig:
    """Architecture of an :class:`Encoder`."""

    # number of token ids; 0 means the inputs are vectors of width d_in
    vocab: int
    d_model: int             # token width
    n_heads: int             # attention heads per layer (divides d_model)
    n_layers: int            # number of transformer blocks
    d_ff: int                # hidden width of each FFN; 0 gives an attention-only model
    # longest input sequence (rows of the learned position table)
    max_len: int
    # outputs per position (vocabulary, classes, or 1 for regression)
    d_out: int
    # "none", "sinusoidal", "learned", "rope" or "alibi" (ALiBi needs causal=True)
    positions: str = "sinusoidal"
    # True: each token attends to itself and earlier tokens only
    causal: bool = False
    norm: str = "pre"        # "pre", "post" or "none" (where the LayerNorms go)
    # input width when vocab == 0 (e.g. C p^2 for image patches)
    d_in: int = 0
    # prepend a learned [CLS] vector (output position 0 reads it)
    cls: bool = False
    final_norm: bool = True  # a LayerNorm before the head (Pre-LN models need it)
    # frequency base of rotary positions (used if positions == "rope")
    rope_base: float = 10000.0

    def __post_init__(self) -> None:
        check_int(self.vocab, "vocab", min_value=0)
        check_int(self.d_model, "d_model", min_value=2)
        check_int(self.n_heads, "n_heads", min_value=1)
        if self.d_model % self.n_heads:
            raise ValueError(
                f"n_heads must divide d_model, got {self.n_heads} and {self.d_model}"
            )
        check_int(self.n_layers, "n_layers", min_value=0)
        check_int(self.d_ff, "d_ff", min_value=0)
        check_int(self.max_len, "max_len", min_value=1)
        check_int(self.d_out, "d_out", min_value=1)
        check_choice(self.positions, "positions", POSITIONS)
        check_choice(self.norm, "norm", NORMS)
        check_int(self.d_in, "d_in", min_value=0)
        if (self.vocab == 0) == (self.d_in == 0):
            raise ValueError(
                f"exactly one of vocab and d_in must be > 0, got vocab={self.vocab}, "
                f"d_in={self.d_in}"
            )
        check_real(self.rope_base, "rope_base", min_value=1.0, strict_min=True)
        if self.positions == "alibi" and not self.causal:
            raise ValueError(
                "positions='alibi' needs causal=True (ALiBi's bias masks future keys), "
                "got causal=False"
            )
        if self.positions == "rope" and self.d_model // self.n_heads % 2:
            raise ValueError(
                f"rope needs an even head width d_model/n_heads, got "
                f"{self.d_model // self.n_heads}"
            )


@dataclass(frozen=True)
class EncoderOutput:
    """What :meth:`Encoder.forward` returns."""

    # (B, T', d_out) head outputs; T' = T + 1 with a [CLS] token
    logits: torch.Tensor
    # (B, T', d_model) the last block's output (before the final norm)
    hidden: torch.Tensor
    weights: list[torch.Tensor]  # per layer, (B, h, T', T') self-attention weights


class Encoder(nn.Module):
    """A transformer encoder (or decoder-only model) with a linear head at every
    position.

    Args:
        cfg: the architecture.
        generator: draws every initial weight (embeddings ~ N(0, 1), linear layers as
            PyTorch).
    """

    def __init__(self, cfg: EncoderConfig, *, generator: torch.Generator) -> None:
        super().__init__()
        if not isinstance(cfg, EncoderConfig):
            raise TypeError(f"cfg must be an EncoderConfig, got {type(cfg).__name__}")
        check_generator(generator)
        self.cfg = cfg
        d = cfg.d_model
        if cfg.vocab:
            self.embed = nn.Embedding(cfg.vocab, d)
            with torch.no_grad():
                self.embed.weight.copy_(torch.randn(cfg.vocab, d, generator=generator))
        else:
            self.embed = init_linear(nn.Linear(cfg.d_in, d), generator=generator)
        n_pos = cfg.max_len + cfg.cls
        if cfg.positions == "learned":
            self.pos = nn.Parameter(
                torch.randn(n_pos, d, generator=generator) / math.sqrt(d)
            )
        else:
            sinusoidal = cfg.positions == "sinusoidal"
            self.register_buffer(
                "pos", sinusoidal_encoding(n_pos, d) if sinusoidal else None
            )
        self.cls_vec = (
            nn.Parameter(torch.randn(1, 1, d, generator=generator)) if cfg.cls else None
        )
        self.blocks = nn.ModuleList(
            TransformerBlock(
                d,
                cfg.n_heads,
                cfg.d_ff,
                norm=cfg.norm,
                generator=generator,
                rope_base=cfg.rope_base if cfg.positions == "rope" else None,
            )
            for _ in range(cfg.n_layers)
        )
        self.final_norm = TokenLayerNorm(d) if cfg.final_norm else None
        self.head = init_linear(nn.Linear(d, cfg.d_out), generator=generator)

    def embed_inputs(self, inputs: torch.Tensor) -> torch.Tensor:
        """Token embeddings plus [CLS] and positions, shape (B, T', d_model)."""
        if self.cfg.vocab:
            check_tensor(inputs, "inputs", ndim=2, shape_doc="(B, T) token ids")
            if inputs.is_floating_point():
                raise TypeError(
                    f"inputs must be integer token ids, got dtype {inputs.dtype}"
                )
        else:
            check_tensor(
                inputs,
                "inputs",
                ndim=3,
                shape=(None, None, self.cfg.d_in),
                floating=True,
                shape_doc=f"(B, T, d_in) with d_in = {self.cfg.d_in}",
            )
        if inputs.shape[1] > self.cfg.max_len:
            raise ValueError(
                f"inputs has length {inputs.shape[1]} > max_len = {self.cfg.max_len}"
            )
        x = self.embed(inputs)  # (B, T, d)
        if self.cls_vec is not None:
            # (B, T+1, d)
            x = torch.cat([self.cls_vec.expand(x.shape[0], 1, -1), x], dim=1)
        if self.pos is not None:
            x = x + self.pos[: x.shape[1]]
        return x

    def forward(self, inputs: torch.Tensor) -> EncoderOutput:
        """Run the model.

        Args:
            inputs: token ids (B, T) if ``cfg.vocab > 0``, else vectors (B, T, d_in).

        Returns:
            An :class:`EncoderOutput`.
        """
        x = self.embed_inputs(inputs)
        mask = causal_mask(x.shape[1], device=x.device) if self.cfg.causal else None
        bias = None
        if self.cfg.positions == "alibi":  # (h, T', T') linear distance penalties
            bias = alibi_bias(x.shape[1], self.cfg.n_heads, dtype=x.dtype).to(x.device)
        weights = []
        for block in self.blocks:
            out = block(x, mask=mask, bias=bias)
            x = out.x
            weights.append(out.self_weights)
        h = self.final_norm(x) if self.final_norm is not None else x
        return EncoderOutput(logits=self.head(h), hidden=x, weights=weights)


def ffn_gradient_norms(
    model: Encoder, inputs: torch.Tensor, targets: torch.Tensor
) -> list[float]:
    """Frobenius norms of ``dL/dW_2`` of every block's FFN, for the mean cross-entropy
    loss.

    The quantity Xiong et al. (2020) track across layers at initialisation (their
    ``W^{2,l}``). The model's gradients are computed afresh (earlier ones are discarded)
    and then cleared.

    Args:
        model: an :class:`Encoder` whose blocks have FFNs (``d_ff > 0``).
        inputs: token ids (B, T) or vectors (B, T, d_in).
        targets: class ids at every position, (B, T') with ``T'`` the output length.

    Returns:
        One norm per block, from the first (input side) to the last (output side).
    """
    if not isinstance(model, Encoder):
        raise TypeError(f"model must be an Encoder, got {type(model).__name__}")
    if model.cfg.d_ff == 0 or model.cfg.n_layers == 0:
        raise ValueError(
            "model must have blocks with feed-forward networks (d_ff > 0, n_layers > 0)"
        )
    model.zero_grad(set_to_none=True)
    logits = model(inputs).logits  # (B, T', d_out)
    check_tensor(targets, "targets", shape=logits.shape[:2],
                 shape_doc=f"(B, T') = {tuple(logits.shape[:2])}")
    torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), targets.flatten()
    ).backward()
    norms = [block.ffn.W_2.weight.grad.norm().item() for block in model.blocks]
    model.zero_grad(set_to_none=True)
    return norms
