"""Chain models for sequence labelling: the HMM and the linear-chain CRF (Section
4.1).

Both score a labelling y_1..y_n of an input x_1..x_n by a sum along the chain,

    s(y) = start[y_1] + sum_t unary[t, y_t] + sum_{t >= 2} pairwise[y_{t-1}, y_t],
                                                                          (eq-rnn-chain)

so two dynamic programmes over the L labels serve both, in O(n L^2) instead of O(L^n):

- :func:`chain_log_partition`: log sum_y exp s(y), by the forward recursion
  (sum-product);
- :func:`chain_viterbi`: arg max_y s(y), by the Viterbi recursion (max-product)
  (Viterbi 1967).

For an HMM (Rabiner 1989), start = log pi, pairwise = log A and
unary[t, l] = log E[l, x_t], so s(y) = log p(x, y): the forward recursion gives log p(x)
and Viterbi the most probable tags. A linear-chain CRF (Lafferty, McCallum & Pereira
2001) uses arbitrary real scores and normalises p(y | x) = exp(s(y)) / Z(x).
:func:`brute_force_scores` enumerates all L^n labellings, the oracle.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_tensor

__all__ = [
    "HMM",
    "chain_score",
    "chain_log_partition",
    "chain_viterbi",
    "brute_force_scores",
    "hmm_unary",
    "hmm_sample",
]


@dataclass(frozen=True)
class HMM:
    """A hidden Markov model over L labels and V observable symbols."""

    pi: torch.Tensor  # (L,) probability of each label at the first position
    # (L, L) transition probabilities, A[i, j] = p(y_t = j | y_{t-1} = i)
    A: torch.Tensor
    # (L, V) emission probabilities, E[l, v] = p(x_t = v | y_t = l)
    E: torch.Tensor

    def __post_init__(self) -> None:
        check_tensor(self.pi, "pi", ndim=1, floating=True, shape_doc="(L,)")
        L = self.pi.shape[0]
        check_tensor(
            self.A, "A", shape=(L, L), floating=True, shape_doc=f"(L, L) = ({L}, {L})"
        )
        check_tensor(self.E, "E", ndim=2, floating=True, shape_doc="(L, V)")
        if self.E.shape[0] != L:
            raise ValueError(
                f"E must have shape (L, V) with L = {L}, got {tuple(self.E.shape)}"
            )
        for name, P in (("pi", self.pi), ("A", self.A), ("E", self.E)):
            if (P < 0).any() or not torch.allclose(
                P.sum(-1), torch.ones((), dtype=P.dtype), atol=1e-9
            ):
                raise ValueError(
                    f"{name} must hold probabilities summing to 1 along its last axis"
                )

    @property
    def L(self) -> int:
        """Number of labels."""
        return self.pi.shape[0]


def _check_chain(unary: object, pairwise: object, start: object | None) -> torch.Tensor:
    """Validate the chain's scores; return ``start`` (zeros if None)."""
    check_tensor(unary, "unary", ndim=2, floating=True, shape_doc="(n, L)")
    n, L = unary.shape
    if n < 1:
        raise ValueError("unary must have at least one position, got n = 0")
    check_tensor(
        pairwise,
        "pairwise",
        shape=(L, L),
        floating=True,
        shape_doc=f"(L, L) = ({L}, {L})",
    )
    if start is None:
        return unary.new_zeros(L)
    return check_tensor(
        start, "start", shape=(L,), floating=True, shape_doc=f"(L,) = ({L},)"
    )


def chain_score(
    y: torch.Tensor,
    unary: torch.Tensor,
    pairwise: torch.Tensor,
    start: torch.Tensor | None = None,
) -> torch.Tensor:
    """The score s(y) of labellings (eq-rnn-chain).

    Args:
        y: labels, (n,) or a batch (K, n), int64 in 0..L-1.
        unary: (n, L); pairwise: (L, L); start: (L,) or None.

    Returns:
        Scores, () or (K,).
    """
    start = _check_chain(unary, pairwise, start)
    check_tensor(y, "y", shape_doc="(n,) or (K, n)")
    if y.shape[-1] != unary.shape[0] or y.ndim not in (1, 2) or y.dtype != torch.int64:
        raise ValueError(
            f"y must be int64 of shape (n,) or (K, n) with n = {unary.shape[0]}, got "
            f"{y.dtype} {tuple(y.shape)}"
        )
    t = torch.arange(unary.shape[0], device=unary.device)
    return (
        start[y[..., 0]]
        + unary[t, y].sum(-1)
        + pairwise[y[..., :-1], y[..., 1:]].sum(-1)
    )


def chain_log_partition(
    unary: torch.Tensor, pairwise: torch.Tensor, start: torch.Tensor | None = None
) -> torch.Tensor:
    """log sum over all L^n labellings of exp s(y), by the forward recursion
    (eq-rnn-forward).

    alpha_1 = start + unary_1;
    alpha_t[j] = unary_t[j] + logsumexp_i (alpha_{t-1}[i] + pairwise[i, j]).

    Args:
        unary: (n, L); pairwise: (L, L); start: (L,) or None (zeros).

    Returns:
        A scalar tensor.
    """
    start = _check_chain(unary, pairwise, start)
    return _chain_log_partition(unary, pairwise, start)


def _chain_log_partition(unary, pairwise, start):
    alpha = start + unary[0]                                            # (L,)
    for u_t in unary[1:]:
        alpha = u_t + torch.logsumexp(alpha[:, None] + pairwise, dim=0)
    return torch.logsumexp(alpha, dim=0)


def chain_viterbi(
    unary: torch.Tensor, pairwise: torch.Tensor, start: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The best labelling arg max_y s(y) and its score, by the Viterbi recursion
    (prop-rnn-forward-viterbi).

    delta_t[j] = unary_t[j] + max_i (delta_{t-1}[i] + pairwise[i, j]); back-pointers
    record the arg max, and the best path is read backwards from arg max_j delta_n[j].

    Returns:
        ``(y, score)``: the labels (n,) int64 and s(y).
    """
    start = _check_chain(unary, pairwise, start)
    return _chain_viterbi(unary, pairwise, start)


def _chain_viterbi(unary, pairwise, start):
    delta = start + unary[0]
    back = []
    for u_t in unary[1:]:
        # (L, L): from i to j
        cand = delta[:, None] + pairwise
        delta, arg = cand.max(dim=0)
        delta = delta + u_t
        back.append(arg)
    best, last = delta.max(dim=0)
    path = [int(last)]
    for arg in reversed(back):
        path.append(int(arg[path[-1]]))
    return torch.tensor(path[::-1], dtype=torch.int64, device=unary.device), best


def brute_force_scores(
    unary: torch.Tensor, pairwise: torch.Tensor, start: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Every labelling and its score, by enumeration (L^n rows; keep L^n below ~10^6).

    Returns:
        ``(Y, scores)``: all labellings (L^n, n) in lexicographic order, and s(y) for
        each (L^n,).
    """
    start = _check_chain(unary, pairwise, start)
    n, L = unary.shape
    if L**n > 2_000_000:
        raise ValueError(
            f"brute force needs L^n = {L}^{n} = {L**n} labellings; keep it below 2e6"
        )
    Y = torch.tensor(
        list(itertools.product(range(L), repeat=n)),
        dtype=torch.int64,
        device=unary.device,
    )
    return Y, chain_score(Y, unary, pairwise, start)


def hmm_unary(hmm: HMM, x: torch.Tensor) -> torch.Tensor:
    """The HMM's unary scores log E[l, x_t], shape (n, L), for observations
    x (n,) int64."""
    if not isinstance(hmm, HMM):
        raise TypeError(f"hmm must be an HMM, got {type(hmm).__name__}")
    check_tensor(x, "x", ndim=1, shape_doc="(n,)")
    V = hmm.E.shape[1]
    if x.dtype != torch.int64 or (x < 0).any() or (x >= V).any():
        raise ValueError(
            f"x must hold int64 symbols in 0..{V - 1}, got {x.dtype} with values "
            f"{x.tolist()}"
        )
    return torch.log(hmm.E[:, x]).T


def hmm_sample(
    hmm: HMM, n: int, *, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw one sequence of length n from the HMM: ``(x, y)``, symbols and labels,
    each (n,) int64."""
    if not isinstance(hmm, HMM):
        raise TypeError(f"hmm must be an HMM, got {type(hmm).__name__}")
    n = check_int(n, "n", min_value=1)
    check_generator(generator)
    y = [int(torch.multinomial(hmm.pi, 1, generator=generator))]
    for _ in range(n - 1):
        y.append(int(torch.multinomial(hmm.A[y[-1]], 1, generator=generator)))
    x = [
        int(torch.multinomial(hmm.E[l], 1, generator=generator))
        for l in y  # noqa: E741
    ]
    return torch.tensor(x), torch.tensor(y)
