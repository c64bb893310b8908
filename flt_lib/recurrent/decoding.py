"""Decoding a language model until its end token (Section 4.8).

Every decoder here takes a *step function* ``step(prefixes) -> log_probs``: given K
prefixes (K, t) that start with the begin token, it returns the next-token
log-probabilities (K, V). A trained network, an n-gram table and the true source all
fit this interface. A hypothesis is finished when it emits ``eos``; ``max_len`` bounds
the length of the ones that never do.

- :func:`sample`: ancestral sampling with temperature tau, p_tau(v) ∝ p(v)^(1/tau);
- :func:`greedy`: the arg-max token at every step;
- :func:`beam_search`: keep the ``beam`` best prefixes (Lowerre 1976; for neural
  sequence models Graves 2012, Sutskever et al. 2014), with the length penalty of
  Wu et al. (2016) as an option;
- :func:`exhaustive`: every sequence up to ``max_len``, the oracle.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real

__all__ = [
    "Hypothesis",
    "tempered",
    "sample",
    "greedy",
    "beam_search",
    "exhaustive",
]

Step = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Hypothesis:
    """A decoded sequence."""

    tokens: tuple[int, ...]  # the generated tokens (begin token left out, eos kept)
    log_prob: float          # sum of the model's log-probabilities of the tokens
    finished: bool           # whether it ended with eos (otherwise it hit max_len)


def _check(step: object, bos: int, eos: int, max_len: int) -> int:
    if not callable(step):
        raise TypeError(f"step must be callable, got {type(step).__name__}")
    check_int(bos, "bos", min_value=0)
    check_int(eos, "eos", min_value=0)
    return check_int(max_len, "max_len", min_value=1)


def tempered(log_probs: torch.Tensor, temperature: float) -> torch.Tensor:
    """log p_tau = log softmax(log p / tau) (eq-rnn-temperature); tau -> 0 is the
    arg max, tau = 1 the model, tau -> inf uniform over the support."""
    temperature = check_real(temperature, "temperature", min_value=0.0, strict_min=True)
    return _tempered(log_probs, temperature)


def _tempered(log_probs: torch.Tensor, temperature: float) -> torch.Tensor:
    return torch.log_softmax(log_probs / temperature, dim=-1)


def sample(
    step: Step,
    n: int,
    *,
    bos: int,
    eos: int,
    max_len: int,
    temperature: float = 1.0,
    generator: torch.Generator,
) -> list[Hypothesis]:
    """Draw ``n`` sequences token by token from p_tau, each until eos or max_len."""
    max_len = _check(step, bos, eos, max_len)
    n = check_int(n, "n", min_value=1)
    check_generator(generator)
    return _sample(
        step,
        n,
        bos=bos,
        eos=eos,
        max_len=max_len,
        temperature=temperature,
        generator=generator,
    )


def _sample(
    step: Step,
    n: int,
    *,
    bos: int,
    eos: int,
    max_len: int,
    temperature: float = 1.0,
    generator: torch.Generator,
) -> list[Hypothesis]:
    """The check-free core of :func:`sample` (arguments already checked)."""
    x = torch.full((n, 1), bos, dtype=torch.int64)
    logp = torch.zeros(n, dtype=torch.float64)
    done = torch.zeros(n, dtype=torch.bool)
    for _ in range(max_len):
        lp = step(x)                                                  # (n, V)
        v = torch.multinomial(tempered(lp, temperature).exp(), 1,
                              generator=generator).squeeze(1)
        v = torch.where(done, eos, v)                                 # pad finished
        logp += torch.where(done, 0.0, lp.gather(1, v[:, None]).squeeze(1).double())
        x = torch.cat([x, v[:, None]], dim=1)
        done |= v == eos
        if done.all():
            break
    out = []
    for row, lp_, d in zip(x[:, 1:].tolist(), logp.tolist(), done.tolist()):
        toks = row[: row.index(eos) + 1] if d else row
        out.append(Hypothesis(tuple(toks), lp_, d))
    return out


def greedy(step: Step, *, bos: int, eos: int, max_len: int) -> Hypothesis:
    """The arg-max token at every step, until eos (greedy decoding)."""
    return beam_search(step, beam=1, bos=bos, eos=eos, max_len=max_len)[0]


def _beam_core(step: Step, beam: int, bos: int, eos: int, max_len: int,
               alpha: float) -> list[Hypothesis]:
    score = lambda h: h.log_prob / ((5 + len(h.tokens)) / 6) ** alpha  # Wu et al.
    alive, done = [Hypothesis((), 0.0, False)], []
    for _ in range(max_len):
        x = torch.tensor([(bos, *h.tokens) for h in alive], dtype=torch.int64)
        so_far = torch.tensor([h.log_prob for h in alive], dtype=torch.float64)
        total = so_far[:, None] + step(x).double()                   # (K, V) scores
        n_ok = int(torch.isfinite(total).sum())
        top = total.flatten().topk(min(beam, n_ok))                  # best `beam` of KV
        V, new = total.shape[1], []
        for s, i in zip(top.values.tolist(), top.indices.tolist()):
            h = Hypothesis((*alive[i // V].tokens, i % V), s, i % V == eos)
            (done if h.finished else new).append(h)                  # eos: set aside
        alive = new
        if not alive or (alpha == 0 and done and  # nothing alive can catch up
                         max(h.log_prob for h in done) >= alive[0].log_prob):
            break
    return sorted(done, key=score, reverse=True) + alive             # unfinished last


def beam_search(
    step: Step,
    *,
    beam: int,
    bos: int,
    eos: int,
    max_len: int,
    length_penalty: float = 0.0,
) -> list[Hypothesis]:
    """Beam search until eos (eq-rnn-beam).

    At each step every alive prefix is extended by every token, and the ``beam`` best
    extensions by total log-probability are kept; an extension that emits eos is set
    aside as finished. Without a length penalty the search stops as soon as the best
    finished score is at least the best alive one (log-probabilities only fall). With
    ``length_penalty = alpha > 0`` finished hypotheses are ranked by
    log p / ((5 + |y|) / 6)^alpha (Wu et al. 2016), which favours longer ones.

    Args:
        step: (K, t) int64 prefixes -> (K, V) log-probabilities.
        beam: number of prefixes kept, >= 1 (1 is greedy decoding).
        bos, eos: the begin and end tokens.
        max_len: most tokens generated.
        length_penalty: alpha >= 0.

    Returns:
        Finished hypotheses, best first, then any unfinished ones left at max_len.
    """
    max_len = _check(step, bos, eos, max_len)
    beam = check_int(beam, "beam", min_value=1)
    alpha = check_real(length_penalty, "length_penalty", min_value=0.0)
    return _beam_core(step, beam, bos, eos, max_len, alpha)


def exhaustive(
    step: Step, *, vocab: int, bos: int, eos: int, max_len: int
) -> list[Hypothesis]:
    """Every sequence that ends with eos within ``max_len`` tokens, with its
    log-probability, most probable first: the oracle for small ``vocab ** max_len``."""
    max_len = _check(step, bos, eos, max_len)
    vocab = check_int(vocab, "vocab", min_value=1)
    if vocab ** (max_len - 1) > 200_000:
        raise ValueError(
            f"vocab ** (max_len - 1) = {vocab ** (max_len - 1)} is too many sequences"
        )
    out = []
    for n in range(1, max_len + 1):
        for body in itertools.product([v for v in range(vocab) if v != eos],
                                      repeat=n - 1):
            toks = (*body, eos)
            x = torch.tensor([(bos, *toks[:-1])], dtype=torch.int64)
            lp = sum(float(step(x[:, : t + 1])[0, v]) for t, v in enumerate(toks))
            if lp > -math.inf:
                out.append(Hypothesis(toks, lp, True))
    return sorted(out, key=lambda h: h.log_prob, reverse=True)
