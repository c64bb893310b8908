"""The encoder-decoder transformer on a synthetic translation task (5.5).

The source sequence is encoded once by self-attention blocks; the decoder reads the
target sequence shifted right (``[BOS] y_1 .. y_{T-1}``) through causally masked
self-attention and attends to the encoder's output through cross-attention
(Vaswani et al. 2017, figure 1). It is trained with teacher forcing and decoded
greedily, with or without a key-value cache.

The task is reversal: the translation of ``x_1 .. x_S`` is ``x_S .. x_1``, so output
position ``i`` must read source position ``S - 1 - i`` (0-based): the alignment is the
anti-diagonal.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from flt_lib._validate import check_choice, check_generator, check_int, check_tensor
from flt_lib.attention.block import NORMS, TokenLayerNorm, TransformerBlock
from flt_lib.attention.positions import sinusoidal_encoding
from flt_lib.attention.scoring import causal_mask
from flt_lib.attention.multi_head import init_linear
from flt_lib.recurrent.seq2seq import reversal_batch

__all__ = [
    "DecodeResult",
    "EncoderDecoder",
    "Seq2SeqConfig",
    "Seq2SeqOutput",
    "decoder_step",
    "greedy_decode",
    "reversal_data",
    "teacher_forcing_loss",
]

KVPair = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Architecture of an :class:`EncoderDecoder`."""

    vocab: int       # symbols 0..vocab-1 in both languages; id `vocab` is [BOS]
    d_model: int     # token width
    n_heads: int     # heads in every attention layer
    n_layers: int    # blocks in the encoder and (as many) in the decoder
    d_ff: int        # FFN hidden width
    max_len: int     # longest source or target sequence
    norm: str = "pre"  # "pre" or "post" LayerNorm

    def __post_init__(self) -> None:
        check_int(self.vocab, "vocab", min_value=2)
        check_int(self.d_model, "d_model", min_value=2)
        check_int(self.n_heads, "n_heads", min_value=1)
        check_int(self.n_layers, "n_layers", min_value=1)
        check_int(self.d_ff, "d_ff", min_value=1)
        check_int(self.max_len, "max_len", min_value=1)
        check_choice(self.norm, "norm", NORMS[:2])
        if self.d_model % self.n_heads:
            raise ValueError(
                f"n_heads must divide d_model, got {self.n_heads} and {self.d_model}"
            )

    @property
    def bos(self) -> int:
        """The id of the beginning-of-sequence token."""
        return self.vocab


@dataclass(frozen=True)
class Seq2SeqOutput:
    """What :meth:`EncoderDecoder.forward` returns."""

    # (B, T, vocab) next-token scores at every target position
    logits: torch.Tensor
    # per decoder layer, (B, h, T, S) cross-attention weights
    cross_weights: list[torch.Tensor]
    # per decoder layer, (B, h, T, T) masked self-attention
    self_weights: list[torch.Tensor]


class EncoderDecoder(nn.Module):
    """Encoder-decoder transformer with sinusoidal positions and Pre- or Post-LN
    blocks."""

    def __init__(self, cfg: Seq2SeqConfig, *, generator: torch.Generator) -> None:
        super().__init__()
        if not isinstance(cfg, Seq2SeqConfig):
            raise TypeError(f"cfg must be a Seq2SeqConfig, got {type(cfg).__name__}")
        check_generator(generator)
        self.cfg = cfg
        d = cfg.d_model
        self.embed_src = nn.Embedding(cfg.vocab, d)
        self.embed_tgt = nn.Embedding(cfg.vocab + 1, d)
        with torch.no_grad():
            for emb in (self.embed_src, self.embed_tgt):
                emb.weight.copy_(torch.randn(emb.weight.shape, generator=generator))
        self.register_buffer("pos", sinusoidal_encoding(cfg.max_len, d))
        block = dict(norm=cfg.norm, generator=generator)
        self.encoder = nn.ModuleList(
            TransformerBlock(d, cfg.n_heads, cfg.d_ff, **block)
            for _ in range(cfg.n_layers)
        )
        self.decoder = nn.ModuleList(
            TransformerBlock(d, cfg.n_heads, cfg.d_ff, cross=True, **block)
            for _ in range(cfg.n_layers)
        )
        self.enc_norm, self.dec_norm = TokenLayerNorm(d), TokenLayerNorm(d)
        self.head = init_linear(nn.Linear(d, cfg.vocab), generator=generator)

    def _check_tokens(self, x: torch.Tensor, name: str, top: int) -> None:
        check_tensor(x, name, ndim=2, shape_doc="(B, T) token ids")
        if x.is_floating_point() or x.shape[1] > self.cfg.max_len:
            raise ValueError(
                f"{name} must hold integer ids and at most "
                f"max_len = {self.cfg.max_len} "
                f"tokens, got dtype {x.dtype} and length {x.shape[1]}"
            )
        if x.numel() and (x.min() < 0 or x.max() >= top):
            raise ValueError(
                f"{name} ids must lie in [0, {top - 1}], "
                f"got [{int(x.min())}, {int(x.max())}]"
            )

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        """Encode source ids (B, S) into the memory (B, S, d_model)."""
        self._check_tokens(src, "src", self.cfg.vocab)
        x = self.embed_src(src) + self.pos[: src.shape[1]]  # (B, S, d)
        for block in self.encoder:
            x = block(x).x
        return self.enc_norm(x)

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor) -> Seq2SeqOutput:
        """Decoder pass over the shifted targets (B, T) given the memory
        (B, S, d_model)."""
        self._check_tokens(tgt_in, "tgt_in", self.cfg.vocab + 1)
        return self._decode(tgt_in, memory)

    def _decode(self, tgt_in: torch.Tensor, memory: torch.Tensor) -> Seq2SeqOutput:
        """The check-free core of :meth:`decode` (arguments already checked)."""
        y = self.embed_tgt(tgt_in) + self.pos[: tgt_in.shape[1]]  # (B, T, d)
        mask = causal_mask(tgt_in.shape[1], device=y.device)
        cross, selfw = [], []
        for block in self.decoder:
            out = block(y, mask=mask, memory=memory)
            y = out.x
            cross.append(out.cross_weights)
            selfw.append(out.self_weights)
        logits = self.head(self.dec_norm(y))  # (B, T, vocab)
        return Seq2SeqOutput(logits=logits, cross_weights=cross, self_weights=selfw)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> Seq2SeqOutput:
        """Teacher-forced pass: source ids (B, S), shifted target ids (B, T)."""
        return self.decode(tgt_in, self.encode(src))


def reversal_data(
    B: int, length: int, *, vocab: int, bos: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The reversal task of Section 4.5
    (:func:`flt_lib.recurrent.seq2seq.reversal_batch`), shifted.

    Returns:
        ``(src, tgt_in, tgt_out)``, each (B, length): ``tgt_out = src`` reversed and
        ``tgt_in = [bos, tgt_out[:-1]]``, the decoder's input under teacher forcing.
    """
    src, tgt_out = reversal_batch(B, length, vocab, generator=generator)
    bos = check_int(bos, "bos", min_value=0)
    tgt_in = torch.cat([torch.full((B, 1), bos), tgt_out[:, :-1]], dim=1)
    return src, tgt_in, tgt_out


def teacher_forcing_loss(
    model: EncoderDecoder, batch: tuple[torch.Tensor, ...]
) -> torch.Tensor:
    """Cross-entropy of each next target token given the true previous ones
    (eq-attn-teacher)."""
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in).logits  # (B, T, vocab)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())


def decoder_step(
    block: TransformerBlock, y_new: torch.Tensor, past: KVPair | None, memory_kv: KVPair
) -> tuple[torch.Tensor, KVPair]:
    """One decoder block applied to the newest token only, reusing cached keys and
    values.

    Args:
        block: a decoder block (``cross=True``).
        y_new: the newest token's input to the block, shape (B, 1, d_model).
        past: self-attention keys and values of the earlier tokens, each (B, h, t, d_k),
            or None at the first step.
        memory_kv: cross-attention keys and values of the encoder output, each
            (B, h, S, d_k).

    Returns:
        ``(y, present)``: the block's output for the new token (B, 1, d_model) and the
        cache extended by the new token's keys and values, each (B, h, t+1, d_k).
    """
    cache = {}

    def self_attn(h: torch.Tensor) -> torch.Tensor:
        k, v = block.self_attn.project_kv(h)  # (B, h, 1, d_k) each
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        cache["kv"] = (k, v)
        return block.self_attn(h, kv=(k, v))[0]  # the new token sees every cached token

    y = block.sublayer(0, y_new, self_attn)
    y = block.sublayer(1, y, lambda h: block.cross_attn(h, kv=memory_kv)[0])
    y = block.sublayer(2, y, block.ffn)
    return y, cache["kv"]


@dataclass(frozen=True)
class DecodeResult:
    """What :func:`greedy_decode` returns."""

    tokens: torch.Tensor  # (B, steps) the decoded ids
    logits: torch.Tensor  # (B, steps, vocab) the scores at each step


def greedy_decode(
    model: EncoderDecoder, src: torch.Tensor, steps: int, *, use_cache: bool
) -> DecodeResult:
    """Decode greedily, one token at a time, feeding each arg-max back in
    (eq-attn-greedy).

    Without the cache, step ``t`` reruns the decoder on all ``t`` tokens so far (cost
    ``O(t^2)`` per step); with it, only the newest token is processed and the keys and
    values of the earlier ones are read from the cache (cost ``O(t)`` per step). The two
    must agree.

    Args:
        model: a trained :class:`EncoderDecoder`.
        src: source ids, shape (B, S).
        steps: number of tokens to produce, ``1 <= steps <= max_len``.
        use_cache: use the key-value cache.

    Returns:
        A :class:`DecodeResult`.
    """
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"model must be an EncoderDecoder, got {type(model).__name__}")
    steps = check_int(steps, "steps", min_value=1, max_value=model.cfg.max_len)
    return _greedy_decode(model, src, steps, use_cache=use_cache)


def _greedy_decode(
    model: EncoderDecoder, src: torch.Tensor, steps: int, *, use_cache: bool
) -> DecodeResult:
    """The check-free core of :func:`greedy_decode` (arguments already checked)."""
    memory = model.encode(src)  # (B, S, d)
    B = src.shape[0]
    tokens = torch.full((B, 1), model.cfg.bos, device=src.device)
    all_logits = []
    if use_cache:
        memory_kv = [block.cross_attn.project_kv(memory) for block in model.decoder]
        past: list[KVPair | None] = [None] * len(model.decoder)
    for t in range(steps):
        if use_cache:
            y = model.embed_tgt(tokens[:, -1:]) + model.pos[t]  # (B, 1, d)
            for i, block in enumerate(model.decoder):
                y, past[i] = decoder_step(block, y, past[i], memory_kv[i])
            logits = model.head(model.dec_norm(y))[:, -1]  # (B, vocab)
        else:
            logits = model.decode(tokens, memory).logits[:, -1]  # (B, vocab)
        all_logits.append(logits)
        tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
    return DecodeResult(tokens=tokens[:, 1:], logits=torch.stack(all_logits, dim=1))
