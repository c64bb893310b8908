"""A bidirectional LSTM tagger with a linear-chain CRF on top (Section 4.8).

The BiLSTM reads the whole sentence and gives unary scores u_t(l) for every label; a
learned pairwise matrix and start vector complete the chain score (eq-rnn-chain), and
training maximises log p(y | x) = s(y; x) - log Z(x) (eq-rnn-crf) (Huang, Xu & Yu 2015;
Lample et al. 2016). The batched forward recursion :func:`batched_log_partition` is the
recursion of :func:`flt_lib.recurrent.hmm_crf.chain_log_partition` run on a batch;
decoding uses :func:`flt_lib.recurrent.hmm_crf.chain_viterbi`.

The data are drawn from the part-of-speech HMM of Section 4.1 (:func:`pos_hmm`). An
HMM's posterior p(y | x) is itself a linear-chain CRF with u_t(l) = log E[l, x_t],
P = log A and start = log pi, so the exact Viterbi decoding of the true model is the
reference a trained tagger can at best match.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.recurrent import hmm_crf

__all__ = [
    "pos_hmm",
    "sample_hmm",
    "batched_log_partition",
    "crf_nll",
    "BiLSTMCRF",
    "TaggerHistory",
    "train_tagger",
    "viterbi_tags",
]


def pos_hmm() -> hmm_crf.HMM:
    """The toy part-of-speech HMM of Section 4.1: tags DET, NOUN, VERB; words *the, a,
    dog, cat, saw, runs*."""
    f64 = dict(dtype=torch.float64)
    return hmm_crf.HMM(
        pi=torch.tensor([0.7, 0.2, 0.1], **f64),
        A=torch.tensor([[0.05, 0.9, 0.05], [0.2, 0.2, 0.6], [0.7, 0.2, 0.1]], **f64),
        E=torch.tensor([[0.6, 0.4, 0, 0, 0, 0], [0, 0, 0.35, 0.35, 0.15, 0.15],
                        [0, 0, 0, 0, 0.5, 0.5]], **f64))


def sample_hmm(
    hmm: hmm_crf.HMM, N: int, n: int, *, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``N`` sequences of length ``n`` from an HMM, drawn together: words and labels,
    each (N, n) int64."""
    if not isinstance(hmm, hmm_crf.HMM):
        raise TypeError(f"hmm must be an HMM, got {type(hmm).__name__}")
    N, n = check_int(N, "N", min_value=1), check_int(n, "n", min_value=1)
    check_generator(generator)
    y = [torch.multinomial(hmm.pi, N, replacement=True, generator=generator)]
    for _ in range(n - 1):
        y.append(torch.multinomial(hmm.A[y[-1]], 1, generator=generator)[:, 0])
    Y = torch.stack(y, dim=1)                                          # (N, n)
    X = torch.multinomial(hmm.E[Y.flatten()], 1, generator=generator).view(N, n)
    return X, Y


def batched_log_partition(
    unary: torch.Tensor, pairwise: torch.Tensor, start: torch.Tensor
) -> torch.Tensor:
    """log Z for a batch of chains (eq-rnn-forward).

    Args:
        unary: (B, n, L); pairwise: (L, L); start: (L,).

    Returns:
        (B,) log-partition functions.
    """
    check_tensor(unary, "unary", ndim=3, floating=True, shape_doc="(B, n, L)")
    L = unary.shape[2]
    check_tensor(pairwise, "pairwise", shape=(L, L), floating=True, shape_doc="(L, L)")
    check_tensor(start, "start", shape=(L,), floating=True, shape_doc="(L,)")
    alpha = start + unary[:, 0]                                        # (B, L)
    for t in range(1, unary.shape[1]):
        alpha = unary[:, t] + torch.logsumexp(alpha[:, :, None] + pairwise, dim=1)
    return torch.logsumexp(alpha, dim=1)


def crf_nll(
    unary: torch.Tensor, y: torch.Tensor, pairwise: torch.Tensor, start: torch.Tensor
) -> torch.Tensor:
    """Mean over the batch of -log p(y | x) = log Z - s(y) (eq-rnn-crf).

    Args:
        unary: (B, n, L); y: (B, n) int64 labels; pairwise: (L, L); start: (L,).
    """
    check_tensor(y, "y", shape=unary.shape[:2], shape_doc="(B, n)")
    return _crf_nll(unary, y, pairwise, start)


def _crf_nll(
    unary: torch.Tensor, y: torch.Tensor, pairwise: torch.Tensor, start: torch.Tensor
) -> torch.Tensor:
    t = torch.arange(y.shape[1])
    score = (start[y[:, 0]] + unary[:, t, y].diagonal(dim1=0, dim2=1).sum(0)
             + pairwise[y[:, :-1], y[:, 1:]].sum(1))                  # s(y), (B,)
    return (batched_log_partition(unary, pairwise, start) - score).mean()


class BiLSTMCRF(nn.Module):
    """Embedding, a bidirectional LSTM, a linear map to unary scores, and CRF
    pairwise and start scores."""

    def __init__(self, vocab: int, labels: int, *, d: int, m: int,
                 generator: torch.Generator) -> None:
        super().__init__()
        vocab = check_int(vocab, "vocab", min_value=1)
        labels = check_int(labels, "labels", min_value=1)
        d, m = check_int(d, "d", min_value=1), check_int(m, "m", min_value=1)
        check_generator(generator)
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.LSTM(d, m, batch_first=True, bidirectional=True)
        self.unary = nn.Linear(2 * m, labels)
        self.pairwise = nn.Parameter(torch.zeros(labels, labels))
        self.start = nn.Parameter(torch.zeros(labels))
        with torch.no_grad():
            self.embed.weight.normal_(generator=generator)
            for p in [*self.rnn.parameters(), *self.unary.parameters()]:
                p.uniform_(-1 / math.sqrt(m), 1 / math.sqrt(m), generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Unary scores (B, n, L) for words x (B, n)."""
        h, _ = self.rnn(self.embed(x))        # (B, n, 2m): left and right context
        return self.unary(h)


@dataclass(frozen=True)
class TaggerHistory:
    """What :func:`train_tagger` records."""

    steps: list[int]        # recorded step numbers
    loss: list[float]       # training -log p(y | x) per sentence at those steps


def train_tagger(
    model: BiLSTMCRF,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    generator: torch.Generator,
    record_every: int = 50,
) -> TaggerHistory:
    """Maximise the CRF log-likelihood with Adam on minibatches of (x, y), each
    (N, n)."""
    if not isinstance(model, BiLSTMCRF):
        raise TypeError(f"model must be a BiLSTMCRF, got {type(model).__name__}")
    check_tensor(x, "x", ndim=2, shape_doc="(N, n)")
    check_tensor(y, "y", shape=tuple(x.shape), shape_doc="(N, n)")
    steps = check_int(steps, "steps", min_value=1)
    batch_size = check_int(batch_size, "batch_size", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    check_generator(generator)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    hist_steps, hist_loss, run = [], [], []
    for step in range(1, steps + 1):
        i = torch.randint(x.shape[0], (batch_size,), generator=generator)
        loss = crf_nll(model(x[i]), y[i], model.pairwise, model.start)
        opt.zero_grad()
        loss.backward()
        opt.step()
        run.append(loss.item())
        if step % record_every == 0 or step == steps:
            hist_steps.append(step)
            hist_loss.append(sum(run) / len(run))
            run = []
    return TaggerHistory(steps=hist_steps, loss=hist_loss)


def viterbi_tags(
    unary: torch.Tensor, pairwise: torch.Tensor, start: torch.Tensor
) -> torch.Tensor:
    """The Viterbi labelling of each chain in a batch: unary (B, n, L) -> (B, n)
    int64."""
    check_tensor(unary, "unary", ndim=3, floating=True, shape_doc="(B, n, L)")
    return torch.stack([hmm_crf.chain_viterbi(u, pairwise, start)[0] for u in unary])
