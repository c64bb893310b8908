"""Sequence to sequence: an encoder-decoder GRU with and without additive attention
(Section 4.5).

The encoder reads the source x_1..x_L with a bidirectional GRU into annotations
h_1..h_L. The decoder is a GRU cell which, at every step, reads the previous target
token and a context c_t:

- bottleneck (as in Cho et al. 2014): c_t = c, one fixed summary of the source (the
  encoder's two final states), fed to every step and to the output layer, and also
  initialising the decoder state (Sutskever et al. 2014 condition through the initial
  state only);
- attention (Bahdanau et al. 2015): c_t = sum_j alpha_{tj} h_j with
  alpha_t = softmax_j(v^T tanh(W_a s_{t-1} + U_a h_j)),                (eq-rnn-additive)
  and the decoder starts from s_0 = 0, so it reads the source only through attention.

Training uses teacher forcing: the decoder reads the *true* previous token y_{t-1}, not
its own prediction (Williams & Zipser 1989). The task is reversal of a random token
sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.optim.adaptive import AdamConfig
from flt_lib.optim.train_step import adam_train_step

__all__ = [
    "additive_attention",
    "reversal_batch",
    "Seq2Seq",
    "Seq2SeqHistory",
    "train_seq2seq",
    "accuracy_by_length",
]


def additive_attention(
    s: torch.Tensor, H: torch.Tensor, W_a: torch.Tensor, U_a: torch.Tensor,
    v: torch.Tensor, *, UH: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Bahdanau's additive attention of one decoder state over all annotations
    (eq-rnn-additive).

    Args:
        s: decoder states, (B, d_s).
        H: annotations, (B, L, d_h).
        W_a: (d_a, d_s); U_a: (d_a, d_h); v: (d_a,).
        UH: optionally H @ U_a^T, (B, L, d_a), computed once per source sequence.

    Returns:
        ``(context, alpha)``: the context vectors (B, d_h) and the weights (B, L), rows
        summing to 1.
    """
    check_tensor(s, "s", ndim=2, floating=True, shape_doc="(B, d_s)")
    check_tensor(H, "H", ndim=3, floating=True, shape_doc="(B, L, d_h)")
    return _additive_attention(s, H, W_a, U_a, v, UH)


def _additive_attention(s, H, W_a, U_a, v, UH):
    if UH is None:
        UH = H @ U_a.T                                           # (B, L, d_a)
    scores = torch.tanh((s @ W_a.T).unsqueeze(1) + UH) @ v       # (B, L)
    alpha = torch.softmax(scores, dim=-1)
    return (alpha.unsqueeze(-1) * H).sum(dim=1), alpha


def reversal_batch(
    batch_size: int, length: int, vocab: int, *, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random token sequences and their reversals.

    Args:
        batch_size: B >= 1; length: L >= 1; vocab: number of symbols V >= 2 (tokens
            0..V-1).
        generator: a CPU torch.Generator.

    Returns:
        ``(src, tgt)``, both (B, L) int64, with tgt[:, t] = src[:, L - 1 - t].
    """
    B = check_int(batch_size, "batch_size", min_value=1)
    L = check_int(length, "length", min_value=1)
    V = check_int(vocab, "vocab", min_value=2)
    check_generator(generator)
    src = torch.randint(0, V, (B, L), generator=generator)
    return src, src.flip(1)


class Seq2Seq(nn.Module):
    """Encoder-decoder GRU; ``attention=True`` adds Bahdanau's additive attention."""

    def __init__(self, vocab: int, *, emb: int = 16, hidden: int = 32, attention: bool,
                 generator: torch.Generator) -> None:
        """Args:
            vocab: number of symbols V (one more, V, is the decoder's start token).
            emb: embedding width; hidden: width of each encoder direction (annotations
                are 2x).
            attention: use additive attention (True) or the fixed context (False).
            generator: seeds the initialisation (uniform +-1/sqrt(fan), as torch does).
        """
        super().__init__()
        self.vocab = check_int(vocab, "vocab", min_value=2)
        emb, hidden = (
            check_int(emb, "emb", min_value=1), check_int(hidden, "hidden", min_value=1)
        )
        check_generator(generator)
        self.attention = bool(attention)
        # annotation and decoder width
        d = 2 * hidden
        self.src_emb = nn.Embedding(vocab, emb)
        self.tgt_emb = nn.Embedding(vocab + 1, emb)           # + start token
        self.encoder = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.decoder = nn.GRUCell(emb + d, d)
        # only the attention model has these
        if self.attention:
            self.W_a = nn.Parameter(torch.empty(d, d))
            self.U_a = nn.Parameter(torch.empty(d, d))
            self.v = nn.Parameter(torch.empty(d))
        self.out = nn.Linear(2 * d, vocab)
        with torch.no_grad():
            for name, p in self.named_parameters():
                fan = p.shape[-1] if p.ndim > 1 else p.shape[0]
                if "emb" in name:
                    p.copy_(torch.randn(p.shape, generator=generator))
                else:
                    p.copy_(
                        (2 * torch.rand(p.shape, generator=generator) - 1) / fan**0.5
                    )

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Annotations (B, L, 2h) and the summary c = [final forward; final backward]
        (B, 2h)."""
        H, last = self.encoder(self.src_emb(src))             # last: (2, B, h)
        return H, torch.cat([last[0], last[1]], dim=-1)

    def _step(self, y_prev, s, H, summary, UH):
        if self.attention:
            c, alpha = additive_attention(s, H, self.W_a, self.U_a, self.v, UH=UH)
        else:
            c, alpha = summary, None
        s = self.decoder(torch.cat([self.tgt_emb(y_prev), c], dim=-1), s)
        return self.out(torch.cat([s, c], dim=-1)), s, alpha

    def forward(
        self, src: torch.Tensor, tgt: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Decode as many tokens as the source has.

        Args:
            src: source tokens, (B, L).
            tgt: the true targets (B, L) for teacher forcing; None decodes greedily,
                feeding back the model's own arg-max predictions.

        Returns:
            ``(logits, alpha)``: (B, L, V), and the attention weights (B, L_out, L) or
            None.
        """
        check_tensor(src, "src", ndim=2, shape_doc="(B, L)")
        if src.dtype != torch.int64:
            raise TypeError(f"src must hold int64 token ids, got {src.dtype}")
        return self._forward(src, tgt)

    def _forward(
        self, src: torch.Tensor, tgt: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The check-free core of :meth:`forward` (arguments already checked)."""
        H, summary = self.encode(src)
        s = torch.zeros_like(summary) if self.attention else summary
        UH = H @ self.U_a.T if self.attention else None          # keys, once per source
        y_prev = torch.full(
            (src.shape[0],), self.vocab, dtype=torch.int64, device=src.device
        )
        logits, alphas = [], []
        for t in range(src.shape[1]):
            lo, s, alpha = self._step(y_prev, s, H, summary, UH)
            logits.append(lo)
            alphas.append(alpha)
            y_prev = tgt[:, t] if tgt is not None else lo.argmax(dim=-1)
        alpha = torch.stack(alphas, dim=1) if self.attention else None
        return torch.stack(logits, dim=1), alpha


@dataclass(frozen=True)
class Seq2SeqHistory:
    """What :func:`train_seq2seq` records."""

    loss: list[float]     # teacher-forced cross-entropy of every step
    lengths: list[int]    # the source length of every step's batch


def train_seq2seq(
    model: Seq2Seq, *, min_len: int, max_len: int, steps: int, batch_size: int,
    lr: float, generator: torch.Generator,
) -> Seq2SeqHistory:
    """Teacher-forced training on reversal; each batch has one length uniform in
    [min_len, max_len].

    Args:
        model: the network (trained in place, on its parameters' device).
        min_len, max_len: range of source lengths; steps: Adam steps; batch_size: B.
        lr: Adam's step size.
        generator: draws every batch's length and tokens.

    Returns:
        A :class:`Seq2SeqHistory`.
    """
    if not isinstance(model, Seq2Seq):
        raise TypeError(f"model must be a Seq2Seq, got {type(model).__name__}")
    min_len = check_int(min_len, "min_len", min_value=1)
    max_len = check_int(max_len, "max_len", min_value=min_len)
    steps = check_int(steps, "steps", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    return _train_seq2seq(
        model,
        min_len=min_len,
        max_len=max_len,
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        generator=generator,
    )


def _train_seq2seq(
    model: Seq2Seq, *, min_len: int, max_len: int, steps: int, batch_size: int,
    lr: float, generator: torch.Generator,
) -> Seq2SeqHistory:
    """The check-free core of :func:`train_seq2seq` (arguments already checked)."""
    device = next(model.parameters()).device
    config, state, params = AdamConfig(lr=lr), None, list(model.parameters())
    losses, lengths = [], []
    for _ in range(steps):
        L = int(torch.randint(min_len, max_len + 1, (1,), generator=generator))
        src, tgt = (
            t.to(device)
            for t in reversal_batch(batch_size, L, model.vocab, generator=generator)
        )
        logits, _ = model(src, tgt)
        loss = nn.functional.cross_entropy(
            logits.reshape(-1, model.vocab), tgt.reshape(-1)
        )
        state = adam_train_step(params, loss, state, config)
        losses.append(loss.item())
        lengths.append(L)
    return Seq2SeqHistory(loss=losses, lengths=lengths)


@torch.no_grad()
def accuracy_by_length(
    model: Seq2Seq, lengths: list[int], *, n: int, generator: torch.Generator
) -> list[float]:
    """Token accuracy of greedy decoding on ``n`` fresh sequences of each length."""
    if not isinstance(model, Seq2Seq):
        raise TypeError(f"model must be a Seq2Seq, got {type(model).__name__}")
    n = check_int(n, "n", min_value=1)
    device = next(model.parameters()).device
    accs = []
    for L in lengths:
        src, tgt = (
            t.to(device) for t in reversal_batch(n, L, model.vocab, generator=generator)
        )
        logits, _ = model(src)
        accs.append((logits.argmax(-1) == tgt).float().mean().item())
    return accs
