"""Outputs of varying length from the encoder-decoder of 5.5: an end token and a cap.

The task is reversal of strings of varying length ``L``: the source is
``x_1 .. x_L`` padded with ``<eos>`` to ``S`` tokens, the target is
``x_L .. x_1 <eos>``. The decoder must decide when to stop, by emitting ``<eos>``
(Sutskever et al. 2014): a sequence ends at its first ``<eos>``, and decoding stops when
every sequence of the batch has ended or after ``max_len`` tokens, a cap for the outputs
that never end. Target positions after ``<eos>`` carry the label ``IGNORE`` and do not
enter the loss, so the model is trained on the real tokens and the one ``<eos>`` only.

The decoder here reuses :func:`flt_lib.attention.seq2seq.decoder_step` (one token per
step, with the key-value cache); :func:`step_function` wraps a trained model into the
interface of :mod:`flt_lib.recurrent.decoding`, whose beam search ranks finished
hypotheses with a length penalty (Wu et al. 2016).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_tensor
from flt_lib.attention.seq2seq import EncoderDecoder, decoder_step

__all__ = [
    "EOS",
    "IGNORE",
    "EosBatch",
    "EosDecode",
    "greedy_until_eos",
    "match_rates",
    "step_function",
    "variable_reversal_data",
]

EOS = 0         # the end token; symbols are 1..vocab-1
IGNORE = -100   # label of target positions after <eos> (PyTorch's ignore_index)


@dataclass(frozen=True)
class EosBatch:
    """A batch of variable-length reversal pairs."""

    src: torch.Tensor      # (B, S) x_1..x_L, then <eos> up to S
    tgt_in: torch.Tensor   # (B, S + 1) [BOS], x_L..x_1, then <eos>: the decoder's input
    tgt_out: torch.Tensor  # (B, S + 1) x_L..x_1, <eos>, then IGNORE
    lengths: torch.Tensor  # (B,) L, the number of symbols


def variable_reversal_data(
    B: int,
    S: int,
    *,
    vocab: int,
    bos: int,
    generator: torch.Generator,
    min_len: int = 1,
) -> EosBatch:
    """Reversal pairs whose lengths ``L`` are uniform on ``min_len..S``.

    Args:
        B: number of pairs.
        S: source length (padded); targets have ``S + 1`` positions.
        vocab: ids ``0..vocab-1``; 0 is ``<eos>``, symbols are uniform on
            ``1..vocab-1``.
        bos: the decoder's begin token (``Seq2SeqConfig.bos``).
        generator: draws lengths and symbols.
        min_len: shortest string, ``1 <= min_len <= S``.

    Returns:
        An :class:`EosBatch`.
    """
    B = check_int(B, "B", min_value=1)
    S = check_int(S, "S", min_value=1)
    vocab = check_int(vocab, "vocab", min_value=2)
    bos = check_int(bos, "bos", min_value=0)
    min_len = check_int(min_len, "min_len", min_value=1, max_value=S)
    check_generator(generator)
    L = torch.randint(min_len, S + 1, (B,), generator=generator)           # (B,)
    x = torch.randint(1, vocab, (B, S), generator=generator)
    pos = torch.arange(S)
    src = torch.where(pos < L[:, None], x, EOS)                            # (B, S)
    rev = src.gather(1, (L[:, None] - 1 - pos).clamp_min(0))               # x_L..x_1
    body = torch.where(pos < L[:, None], rev, EOS)
    full = torch.cat([body, torch.full((B, 1), EOS)], dim=1)               # (B, S + 1)
    tgt_out = torch.where(torch.arange(S + 1) <= L[:, None], full, IGNORE)
    tgt_in = torch.cat([torch.full((B, 1), bos), full[:, :-1]], dim=1)
    return EosBatch(src=src, tgt_in=tgt_in, tgt_out=tgt_out, lengths=L)


@dataclass(frozen=True)
class EosDecode:
    """What :func:`greedy_until_eos` returns."""

    tokens: torch.Tensor    # (B, n) decoded ids, <eos> repeated after a sequence's end
    lengths: torch.Tensor   # (B,) tokens before the first <eos> (n if none)
    finished: torch.Tensor  # (B,) bool: emitted <eos> within the cap


def _greedy_core(model: EncoderDecoder, src: torch.Tensor, eos: int,
                 max_len: int) -> torch.Tensor:
    memory = model.encode(src)                                             # (B, S, d)
    memory_kv = [block.cross_attn.project_kv(memory) for block in model.decoder]
    past = [None] * len(model.decoder)
    last = torch.full((src.shape[0], 1), model.cfg.bos, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    out = []
    for t in range(max_len):                                  # the cap: max_len tokens
        y = model.embed_tgt(last) + model.pos[t]                           # (B, 1, d)
        for i, block in enumerate(model.decoder):
            y, past[i] = decoder_step(block, y, past[i], memory_kv[i])
        nxt = model.head(model.dec_norm(y))[:, -1].argmax(-1)              # (B,)
        nxt = torch.where(done, eos, nxt)                     # ended rows stay ended
        out.append(nxt)
        done |= nxt == eos
        if done.all():                                        # every row has ended
            break
        last = nxt[:, None]
    return torch.stack(out, dim=1)                                         # (B, n)


@torch.no_grad()
def greedy_until_eos(
    model: EncoderDecoder, src: torch.Tensor, *, eos: int = EOS, max_len: int
) -> EosDecode:
    """Greedy decoding (eq-attn-greedy) until every sequence has emitted ``eos``, or
    ``max_len`` tokens (eq-attn-eos).

    Args:
        model: an :class:`~flt_lib.attention.seq2seq.EncoderDecoder`.
        src: source ids, shape (B, S).
        eos: the end token, an output id of the model.
        max_len: the cap, ``1 <= max_len <= model.cfg.max_len``.

    Returns:
        An :class:`EosDecode`.
    """
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"model must be an EncoderDecoder, got {type(model).__name__}")
    eos = check_int(eos, "eos", min_value=0, max_value=model.cfg.vocab - 1)
    max_len = check_int(max_len, "max_len", min_value=1, max_value=model.cfg.max_len)
    check_tensor(src, "src", ndim=2, shape_doc="(B, S) token ids")
    tokens = _greedy_core(model, src, eos, max_len)
    is_eos = tokens == eos
    finished = is_eos.any(1)
    lengths = torch.where(finished, is_eos.int().argmax(1), tokens.shape[1])
    return EosDecode(tokens=tokens, lengths=lengths, finished=finished)


def match_rates(decoded: EosDecode, tgt_out: torch.Tensor) -> tuple[float, float]:
    """Exact-match rate (the whole output up to and including ``<eos>`` is right) and
    length accuracy (the number of tokens before ``<eos>`` is right).

    Args:
        decoded: from :func:`greedy_until_eos`.
        tgt_out: targets (B, S + 1) of an :class:`EosBatch` (``<eos>`` then IGNORE).

    Returns:
        ``(exact, length_accuracy)``, each in [0, 1].
    """
    if not isinstance(decoded, EosDecode):
        raise TypeError(f"decoded must be an EosDecode, got {type(decoded).__name__}")
    B = decoded.tokens.shape[0]
    check_tensor(tgt_out, "tgt_out", ndim=2, shape=(B, None), shape_doc=f"({B}, T)")
    true_len = (tgt_out == EOS).int().argmax(1)                             # (B,)
    exact = []
    for row, n, target, m in zip(decoded.tokens.tolist(), decoded.lengths.tolist(),
                                 tgt_out.tolist(), true_len.tolist()):
        exact.append(n == m and row[: n + 1] == target[: m + 1])
    length_ok = (decoded.lengths == true_len) & decoded.finished
    return sum(exact) / B, length_ok.float().mean().item()


def step_function(
    model: EncoderDecoder, src: torch.Tensor
) -> Callable[[torch.Tensor], torch.Tensor]:
    """The model as a step function of :mod:`flt_lib.recurrent.decoding` for one source.

    Args:
        model: an :class:`~flt_lib.attention.seq2seq.EncoderDecoder`.
        src: one source, shape (S,).

    Returns:
        ``step(prefixes)``: prefixes (K, t) starting with ``model.cfg.bos`` ->
        next-token log-probabilities (K, vocab).
    """
    if not isinstance(model, EncoderDecoder):
        raise TypeError(f"model must be an EncoderDecoder, got {type(model).__name__}")
    check_tensor(src, "src", ndim=1, shape_doc="(S,) token ids")
    with torch.no_grad():
        memory = model.encode(src[None])                                   # (1, S, d)

    def step(prefixes: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            mem = memory.expand(prefixes.shape[0], -1, -1)                 # (K, S, d)
            logits = model.decode(prefixes, mem).logits[:, -1]             # (K, vocab)
        return torch.log_softmax(logits, dim=-1)

    return step
