"""BERT's sentence pairs and its token- and span-level heads, on the Markov-chain corpus
of 5.6.

Token ids follow :mod:`flt_lib.attention.bert`: symbols ``0..V-1``, ``[MASK] = V``,
``[CLS] = V+1``, and here ``[SEP] = V+2``. A pair of segments is written
``[CLS] A [SEP] B [SEP]`` with segment ids 0 on ``[CLS] A [SEP]`` and 1 on ``B [SEP]``
(Devlin et al. 2019, figure 2). Three heads read the encoder's output:

- next-sentence prediction (NSP) at ``[CLS]``: is B the continuation of A, or a segment
  from another sequence? For a Markov chain the exact posterior depends only on the last
  symbol of A and the first of B (:func:`nsp_posterior`);
- a tagging head at every token: was the token replaced (one corrupted span per
  sequence, :func:`corrupt_span`)?
- a span head: start and end logits at every token, decoded as the best span
  ``arg max_{i <= j} s_i + e_j`` (:func:`best_span`), as BERT does for SQuAD.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from flt_lib._validate import check_generator, check_int, check_tensor
from flt_lib.attention.bert import sample_chain, stationary
from flt_lib.attention.encoder import Encoder
from flt_lib.attention.multi_head import init_linear

__all__ = [
    "BertHeads",
    "HeadsOutput",
    "PairBatch",
    "SpanBatch",
    "best_span",
    "corrupt_span",
    "heads_loss",
    "nsp_pairs",
    "nsp_posterior",
]


@dataclass(frozen=True)
class PairBatch:
    """Sentence pairs for next-sentence prediction."""

    tokens: torch.Tensor    # (B, T) [CLS] A [SEP] B [SEP]
    segments: torch.Tensor  # (B, T) 0 on [CLS] A [SEP], 1 on B [SEP]
    # (B,) 1 if B continues A, 0 if B comes from another sequence
    is_next: torch.Tensor


def nsp_pairs(
    P: torch.Tensor,
    B: int,
    len_a: int,
    len_b: int,
    *,
    vocab: int,
    generator: torch.Generator,
) -> PairBatch:
    """Pairs of segments of the chain ``P``: half with B the continuation of A (IsNext),
    half with B from an independent sequence (NotNext), in random order.

    Args:
        P: transition matrix (V, V).
        B: number of pairs.
        len_a, len_b: segment lengths; ``T = len_a + len_b + 3``.
        vocab: ``V``; ``[CLS] = V + 1`` and ``[SEP] = V + 2``.
        generator: draws the sequences and the labels.

    Returns:
        A :class:`PairBatch`.
    """
    check_tensor(P, "P", ndim=2, floating=True, shape_doc="(V, V)")
    B = check_int(B, "B", min_value=1)
    len_a = check_int(len_a, "len_a", min_value=1)
    len_b = check_int(len_b, "len_b", min_value=1)
    vocab = check_int(vocab, "vocab", min_value=2)
    if P.shape != (vocab, vocab):
        raise ValueError(f"P must have shape ({vocab}, {vocab}), got {tuple(P.shape)}")
    check_generator(generator)
    seq = sample_chain(P, B, len_a + len_b, generator=generator)        # (B, a + b)
    other = sample_chain(P, B, len_b, generator=generator)              # (B, b)
    is_next = torch.randint(0, 2, (B,), generator=generator)
    seg_b = torch.where(is_next[:, None] == 1, seq[:, len_a:], other)
    cls, sep = torch.full((B, 1), vocab + 1), torch.full((B, 1), vocab + 2)
    tokens = torch.cat([cls, seq[:, :len_a], sep, seg_b, sep], dim=1)
    segments = torch.cat([torch.zeros(B, len_a + 2), torch.ones(B, len_b + 1)], dim=1)
    return PairBatch(tokens=tokens, segments=segments.long(), is_next=is_next)


def nsp_posterior(
    P: torch.Tensor, a_last: torch.Tensor, b_first: torch.Tensor
) -> torch.Tensor:
    """Exact probability that B continues A, for pairs drawn as in :func:`nsp_pairs`.

    Given A, the segment B has law ``P[a_last, b_1] prod P[b_i, b_{i+1}]`` if it is the
    continuation and ``pi[b_1] prod P[b_i, b_{i+1}]`` if it is not; only the first
    factor differs, so with prior 1/2

    ``p(IsNext | A, B) = P[a_last, b_1] / (P[a_last, b_1] + pi[b_1])``.

    Args:
        P: transition matrix (V, V).
        a_last: last symbol of A, shape (B,).
        b_first: first symbol of B, shape (B,).

    Returns:
        Probabilities, shape (B,), float64.
    """
    P = check_tensor(P, "P", ndim=2, floating=True, shape_doc="(V, V)").double()
    check_tensor(a_last, "a_last", ndim=1, shape_doc="(B,) symbol ids")
    check_tensor(b_first, "b_first", shape=a_last.shape,
                 shape_doc=f"{tuple(a_last.shape)}")
    num = P[a_last, b_first]
    return num / (num + stationary(P)[b_first])


@dataclass(frozen=True)
class SpanBatch:
    """Sequences with one corrupted span."""

    tokens: torch.Tensor  # (B, T + 1) [CLS], then the corrupted sequence
    tags: torch.Tensor    # (B, T + 1) 1 inside the span, 0 elsewhere ([CLS] included)
    start: torch.Tensor   # (B,) first position of the span (counting [CLS] as 0)
    end: torch.Tensor     # (B,) last position of the span


def corrupt_span(
    P: torch.Tensor,
    B: int,
    T: int,
    *,
    vocab: int,
    min_len: int = 2,
    max_len: int = 4,
    generator: torch.Generator,
) -> SpanBatch:
    """Chain sequences in which one span of uniform length in ``min_len..max_len``, at a
    uniform position, is replaced by uniformly random symbols.

    Args:
        P: transition matrix (V, V).
        B: number of sequences; T: their length.
        vocab: ``V``; ``[CLS] = V + 1`` is put in front.
        min_len, max_len: span lengths, ``1 <= min_len <= max_len <= T``.
        generator: draws everything.

    Returns:
        A :class:`SpanBatch`.
    """
    check_tensor(P, "P", ndim=2, floating=True, shape_doc="(V, V)")
    B = check_int(B, "B", min_value=1)
    T = check_int(T, "T", min_value=1)
    vocab = check_int(vocab, "vocab", min_value=2)
    min_len = check_int(min_len, "min_len", min_value=1, max_value=T)
    max_len = check_int(max_len, "max_len", min_value=min_len, max_value=T)
    check_generator(generator)
    x = sample_chain(P, B, T, generator=generator)                       # (B, T)
    n = torch.randint(min_len, max_len + 1, (B,), generator=generator)
    s = (torch.rand(B, generator=generator, dtype=torch.float64) * (T - n + 1)).long()
    pos = torch.arange(T)
    inside = (pos >= s[:, None]) & (pos < (s + n)[:, None])              # (B, T)
    noise = torch.randint(0, vocab, (B, T), generator=generator)
    x = torch.where(inside, noise, x)
    cls = torch.full((B, 1), vocab + 1)
    tags = torch.cat([torch.zeros(B, 1, dtype=torch.long), inside.long()], dim=1)
    tokens = torch.cat([cls, x], dim=1)
    return SpanBatch(tokens=tokens, tags=tags, start=s + 1, end=s + n)


@dataclass(frozen=True)
class HeadsOutput:
    """What :meth:`BertHeads.forward` returns."""

    nsp: torch.Tensor    # (B, 2) IsNext logits, read at [CLS]
    tags: torch.Tensor   # (B, T, n_tags) tag logits at every position
    start: torch.Tensor  # (B, T) span-start logits
    end: torch.Tensor    # (B, T) span-end logits


class BertHeads(nn.Module):
    """An encoder body with segment embeddings and three heads (Devlin et al. 2019).

    The body is a copy of ``body`` (its embeddings, positions, blocks and final norm);
    its token table gains ``extra_tokens`` rows (for [SEP]). The input to the first
    block is ``E[x_t] + p_t + S[segment_t]``, with a segment table ``S`` of two rows.

    Args:
        body: an :class:`~flt_lib.attention.encoder.Encoder` with a token vocabulary,
            pre-trained or not.
        n_tags: number of tags of the token-level head.
        extra_tokens: rows added to the token table.
        generator: draws the new weights.
    """

    def __init__(self, body: Encoder, *, n_tags: int, extra_tokens: int = 1,
                 generator: torch.Generator) -> None:
        super().__init__()
        if not isinstance(body, Encoder) or body.cfg.vocab == 0:
            raise TypeError(
                f"body must be an Encoder of tokens, got {type(body).__name__}"
            )
        n_tags = check_int(n_tags, "n_tags", min_value=2)
        extra_tokens = check_int(extra_tokens, "extra_tokens", min_value=0)
        check_generator(generator)
        self.body = copy.deepcopy(body)
        d = body.cfg.d_model
        old = self.body.embed.weight.detach()
        self.body.embed = nn.Embedding(old.shape[0] + extra_tokens, d).to(old.device)
        with torch.no_grad():
            self.body.embed.weight[: old.shape[0]] = old
            self.body.embed.weight[old.shape[0]:] = torch.randn(extra_tokens, d,
                                                                generator=generator)
        self.segment = nn.Parameter(0.02 * torch.randn(2, d, generator=generator))
        self.nsp_head = init_linear(nn.Linear(d, 2), generator=generator)
        self.tag_head = init_linear(nn.Linear(d, n_tags), generator=generator)
        self.span_head = init_linear(nn.Linear(d, 2), generator=generator)
        for head in (self.segment, self.nsp_head, self.tag_head, self.span_head):
            head.to(old.device)

    def forward(self, tokens: torch.Tensor,
                segments: torch.Tensor | None = None) -> HeadsOutput:
        """Token ids (B, T) and segment ids (B, T) in {0, 1} (all 0 if None)."""
        check_tensor(tokens, "tokens", ndim=2, shape_doc="(B, T) token ids")
        top = self.body.embed.num_embeddings
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= top):
            raise ValueError(
                f"tokens must lie in [0, {top - 1}], got "
                f"[{int(tokens.min())}, {int(tokens.max())}]"
            )
        if segments is None:
            segments = torch.zeros_like(tokens)
        check_tensor(segments, "segments", shape=tokens.shape,
                     shape_doc=f"{tuple(tokens.shape)} like tokens")
        return self.heads(tokens, segments)

    def heads(self, tokens: torch.Tensor, segments: torch.Tensor) -> HeadsOutput:
        """The forward pass: embeddings + segments, the blocks, the three heads."""
        x = self.body.embed_inputs(tokens) + self.segment[segments]       # (B, T, d)
        for block in self.body.blocks:
            x = block(x).x
        h = self.body.final_norm(x)                                        # (B, T, d)
        start, end = self.span_head(h).unbind(-1)                          # (B, T) each
        return HeadsOutput(nsp=self.nsp_head(h[:, 0]), tags=self.tag_head(h),
                           start=start, end=end)


def best_span(
    start: torch.Tensor, end: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The span ``(i, j)``, ``i <= j``, of largest ``start_i + end_j`` in each row
    (BERT's decoding for SQuAD).

    Args:
        start, end: logits, shape (B, T).

    Returns:
        ``(i, j)``, each (B,) int64.
    """
    check_tensor(start, "start", ndim=2, floating=True, shape_doc="(B, T)")
    check_tensor(end, "end", shape=start.shape, floating=True,
                 shape_doc=f"{tuple(start.shape)}")
    T = start.shape[1]
    score = start[:, :, None] + end[:, None, :]                            # (B, T, T)
    upper = torch.ones(T, T, dtype=torch.bool, device=start.device).triu()  # i <= j
    flat = score.masked_fill(~upper, float("-inf")).flatten(1).argmax(1)
    return flat // T, flat % T


def heads_loss(model: BertHeads, batch: tuple[PairBatch, SpanBatch]) -> torch.Tensor:
    """Sum of the three cross-entropies: NSP at [CLS], tags at every token (not [CLS]),
    and the span's start and end (averaged)."""
    pairs, spans = batch
    nsp = F.cross_entropy(model(pairs.tokens, pairs.segments).nsp, pairs.is_next)
    out = model(spans.tokens)
    tag = F.cross_entropy(out.tags[:, 1:].flatten(0, 1), spans.tags[:, 1:].flatten())
    span = (F.cross_entropy(out.start, spans.start)
            + F.cross_entropy(out.end, spans.end)) / 2
    return nsp + tag + span
