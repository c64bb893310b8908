"""Recurrent language models on a source whose entropy is known exactly (Section 4.8).

The corpus comes from a small probabilistic grammar written as a *unifilar*
probabilistic automaton: from each state, each token has a probability and leads to one
next state, so the state is a function of the tokens read so far. Sentences end with the
token ``<eos>`` (id 0), which also starts every input (as GPT-2's ``<|endoftext|>``).
Because the state is known, the entropy of a sentence and the entropy rate per token
are exact sums (:func:`entropy_rate`), and no model can do better on average
(prop-rnn-entropy-bound). Against that bound we measure n-gram models
(:func:`ngram_fit`, Shannon 1948; add-k smoothing) and an LSTM language model
(:class:`RNNLanguageModel`, Mikolov et al. 2010 with an LSTM, Sundermeyer et al. 2012).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "EOS",
    "Automaton",
    "agreement_grammar",
    "sample_sentences",
    "sentence_log_prob",
    "next_log_probs",
    "is_grammatical",
    "most_probable_sentence",
    "entropy_rate",
    "EntropyRate",
    "NGram",
    "ngram_fit",
    "ngram_nll",
    "RNNLanguageModel",
    "lm_batch",
    "lm_nll",
    "LMHistory",
    "train_lm",
]

EOS = 0  # the end-of-sentence token; also the first input of every sentence


@dataclass(frozen=True)
class Automaton:
    """A unifilar probabilistic automaton over tokens 0..V-1 (token 0 is ``<eos>``).

    State ``end`` is absorbing and emits nothing; every other state emits exactly one
    token. Emitting ``<eos>`` must lead to ``end``.
    """

    # (S, V): emission[s, v] = p(next token = v | state s); row ``end`` is all zeros
    emission: torch.Tensor
    # (S, V) int64: the state reached from s after emitting v (ignored where p = 0)
    next_state: torch.Tensor
    start: int  # the state before the first token
    end: int    # the absorbing state reached by emitting <eos>
    words: tuple[str, ...]  # the V token names, for printing

    def __post_init__(self) -> None:
        check_tensor(
            self.emission, "emission", ndim=2, floating=True, shape_doc="(S, V)"
        )
        S, V = self.emission.shape
        check_tensor(
            self.next_state, "next_state", shape=(S, V), shape_doc=f"({S}, {V})"
        )
        check_int(self.start, "start", min_value=0, max_value=S - 1)
        check_int(self.end, "end", min_value=0, max_value=S - 1)
        if len(self.words) != V:
            raise ValueError(f"words must name the {V} tokens, got {len(self.words)}")
        rows = self.emission.sum(1)
        live = torch.arange(S) != self.end
        if (self.emission < 0).any() or not torch.allclose(
            rows[live], torch.ones_like(rows[live])
        ) or rows[self.end] != 0:
            raise ValueError(
                "emission rows must be probabilities summing to 1 (0 for the end state)"
            )
        eos_to = self.next_state[:, EOS][self.emission[:, EOS] > 0]
        if (eos_to != self.end).any():
            raise ValueError("emitting <eos> (token 0) must lead to the end state")


def agreement_grammar(adverb: float = 0.6) -> Automaton:
    """A toy English with subject-verb agreement across any number of adverbs.

    ``(the | a) NOUN ADV* VERB [the NOUN] <eos>``: after *a* the noun is singular; the
    verb agrees in number with the subject noun however many adverbs (*often*,
    *really*) stand between them, which no n-gram model of fixed order can track.

    Args:
        adverb: probability of one more adverb before the verb, in [0, 1).

    Returns:
        An :class:`Automaton` with 13 tokens and 9 states.
    """
    adverb = check_real(adverb, "adverb", min_value=0.0, max_value=0.99)
    words = ("<eos>", "the", "a", "dog", "cat", "dogs", "cats", "often", "really",
             "sees", "runs", "see", "run")
    w = {s: i for i, s in enumerate(words)}
    START, N, NSG, VSG, VPL, OBJ, ON, FIN, END = range(9)
    E = torch.zeros(9, len(words), dtype=torch.float64)
    nxt = torch.full((9, len(words)), END, dtype=torch.int64)
    def arc(s: int, word: str, p: float, to: int) -> None:
        E[s, w[word]], nxt[s, w[word]] = p, to
    arc(START, "the", 0.7, N), arc(START, "a", 0.3, NSG)
    for word, p in (("dog", 0.35), ("cats", 0.25), ("cat", 0.2), ("dogs", 0.2)):
        arc(N, word, p, VSG if word in ("dog", "cat") else VPL)
        arc(ON, word, p, FIN)
    arc(NSG, "dog", 0.6, VSG), arc(NSG, "cat", 0.4, VSG)
    for s, (trans, intrans) in ((VSG, ("sees", "runs")), (VPL, ("see", "run"))):
        arc(s, "often", 0.6 * adverb, s), arc(s, "really", 0.4 * adverb, s)
        arc(s, trans, 0.4 * (1 - adverb), OBJ), arc(s, intrans, 0.6 * (1 - adverb), FIN)
    arc(OBJ, "the", 1.0, ON)
    arc(FIN, "<eos>", 1.0, END)
    return Automaton(emission=E, next_state=nxt, start=START, end=END, words=words)


def _check_automaton(a: object) -> Automaton:
    if not isinstance(a, Automaton):
        raise TypeError(f"automaton must be an Automaton, got {type(a).__name__}")
    return a


def sample_sentences(
    automaton: Automaton, n: int, *, generator: torch.Generator, max_len: int = 200
) -> list[torch.Tensor]:
    """Draw ``n`` sentences; each is an int64 tensor (length,) ending with ``<eos>``."""
    a = _check_automaton(automaton)
    n = check_int(n, "n", min_value=1)
    check_generator(generator)
    state = torch.full((n,), a.start, dtype=torch.int64)
    cols = []
    for _ in range(max_len):                      # all n sentences advance together
        live = state != a.end
        if not live.any():
            break
        v = torch.zeros(n, dtype=torch.int64)
        draw = torch.multinomial(a.emission[state[live]], 1, generator=generator)
        v[live] = draw[:, 0]
        cols.append(torch.where(live, v, -1))
        state = torch.where(live, a.next_state[state, v], state)
    X = torch.stack(cols, dim=1)                  # (n, longest), -1 after the end
    return [row[row >= 0] for row in X]


def _run(a: Automaton, tokens: list[int]) -> tuple[int, float]:
    """The state after ``tokens`` and their log-probability (-inf if impossible)."""
    s, logp = a.start, 0.0
    for v in tokens:
        p = float(a.emission[s, v])
        if p == 0.0:
            return a.end, -math.inf
        s, logp = int(a.next_state[s, v]), logp + math.log(p)
    return s, logp


def sentence_log_prob(automaton: Automaton, sentence: torch.Tensor) -> float:
    """The exact log-probability of one sentence (length,) under the source."""
    a = _check_automaton(automaton)
    check_tensor(sentence, "sentence", ndim=1, shape_doc="(length,)")
    return _run(a, sentence.tolist())[1]


def is_grammatical(automaton: Automaton, sentence: torch.Tensor) -> bool:
    """Whether the source can produce ``sentence`` (length,), ending with ``<eos>``."""
    a = _check_automaton(automaton)
    check_tensor(sentence, "sentence", ndim=1, shape_doc="(length,)")
    s, logp = _run(a, sentence.tolist())
    return s == a.end and logp > -math.inf


def next_log_probs(automaton: Automaton, prefixes: torch.Tensor) -> torch.Tensor:
    """The source's own next-token log-probabilities, usable as a decoder's step.

    Args:
        prefixes: (K, t) int64, each starting with the ``<eos>`` that opens a sentence.

    Returns:
        (K, V) log-probabilities (all -inf after an impossible or finished prefix).
    """
    a = _check_automaton(automaton)
    check_tensor(prefixes, "prefixes", ndim=2, shape_doc="(K, t)")
    rows = [a.emission[_run(a, p[1:].tolist())[0]] for p in prefixes]
    return torch.stack(rows).log()


def most_probable_sentence(automaton: Automaton) -> tuple[torch.Tensor, float]:
    """The exact mode arg max_y p(y) and its log-probability, by Dijkstra's shortest
    path from the start state to the end state with arc costs -log p (the automaton is
    unifilar, so paths and sentences correspond one to one)."""
    a = _check_automaton(automaton)
    best = {a.start: (0.0, [])}
    frontier = [(0.0, a.start)]
    settled: set[int] = set()
    while frontier:
        frontier.sort()
        cost, s = frontier.pop(0)
        if s in settled:
            continue
        settled.add(s)
        if s == a.end:
            return torch.tensor(best[s][1], dtype=torch.int64), -cost
        for v in torch.nonzero(a.emission[s] > 0)[:, 0].tolist():
            to, c = int(a.next_state[s, v]), cost - math.log(float(a.emission[s, v]))
            if to not in settled and c < best.get(to, (math.inf,))[0]:
                best[to] = (c, best[s][1] + [v])
                frontier.append((c, to))
    raise ValueError("the end state cannot be reached")


@dataclass(frozen=True)
class EntropyRate:
    """The exact entropy of the source (nats)."""

    per_sentence: float     # H(sentence) = E[-log p(sentence)]
    mean_length: float      # E[number of tokens], <eos> included
    per_token: float        # the rate: per_sentence / mean_length
    visits: torch.Tensor    # (S,) expected visits to each state per sentence


def entropy_rate(automaton: Automaton) -> EntropyRate:
    """Exact entropy per sentence and per token (eq-rnn-entropy-rate).

    With Q[s, s'] the probability of moving from live state s to live state s', the
    expected visits are n = e_start^T (I - Q)^{-1}; each visit emits one token with
    entropy H(emission[s]), so H(sentence) = sum_s n_s H_s and E[length] = sum_s n_s.
    """
    return _entropy_rate(_check_automaton(automaton))


def _entropy_rate(a: Automaton) -> EntropyRate:
    S, V = a.emission.shape
    Q = torch.zeros(S, S, dtype=torch.float64)
    Q.index_put_((torch.arange(S)[:, None].expand(S, V), a.next_state),
                 a.emission.double(), accumulate=True)
    live = [s for s in range(S) if s != a.end]
    Ql = Q[live][:, live]
    e = torch.zeros(len(live), dtype=torch.float64)
    e[live.index(a.start)] = 1.0
    visits_l = torch.linalg.solve((torch.eye(len(live), dtype=torch.float64) - Ql).T, e)
    E = a.emission.double()[live]
    H_s = -(E * torch.where(E > 0, E.log(), torch.zeros_like(E))).sum(1)
    visits = torch.zeros(S, dtype=torch.float64)
    visits[live] = visits_l
    h, length = float(visits_l @ H_s), float(visits_l.sum())
    return EntropyRate(per_sentence=h, mean_length=length, per_token=h / length,
                       visits=visits)


@dataclass(frozen=True)
class NGram:
    """An n-gram model with add-k smoothing."""

    order: int               # n: each token is predicted from the n - 1 before it
    log_probs: torch.Tensor  # (V,) * (n - 1) + (V,): log p(next | context)


def _contexts(sentence: torch.Tensor, order: int) -> torch.Tensor:
    """(length, order) rows (context..., next), the context padded with <eos>."""
    padded = torch.cat([torch.zeros(order - 1, dtype=torch.int64), sentence])
    return padded.unfold(0, order, 1)


def ngram_fit(
    sentences: list[torch.Tensor], order: int, *, vocab: int, k: float = 0.1
) -> NGram:
    """Fit an n-gram model by counting, with add-k smoothing:
    p(v | c) = (count(c, v) + k) / (count(c) + k V).

    Args:
        sentences: int64 tensors (length,), each ending with ``<eos>``.
        order: n >= 1 (1: unigram, 2: bigram, ...).
        vocab: V.
        k: the pseudo-count added to every (context, token) pair, > 0.
    """
    order = check_int(order, "order", min_value=1, max_value=5)
    vocab = check_int(vocab, "vocab", min_value=2)
    k = check_real(k, "k", min_value=0.0, strict_min=True)
    if not isinstance(sentences, list) or not sentences:
        raise TypeError("sentences must be a non-empty list of int64 tensors")
    counts = torch.zeros((vocab,) * order, dtype=torch.float64)
    rows = torch.cat([_contexts(s, order) for s in sentences])
    counts.index_put_(tuple(rows.T), torch.ones(len(rows), dtype=torch.float64),
                      accumulate=True)
    probs = (counts + k) / (counts.sum(-1, keepdim=True) + k * vocab)
    return NGram(order=order, log_probs=probs.log())


def ngram_nll(model: NGram, sentences: list[torch.Tensor]) -> float:
    """Mean negative log-likelihood per token (nats) of an n-gram model."""
    if not isinstance(model, NGram):
        raise TypeError(f"model must be an NGram, got {type(model).__name__}")
    rows = torch.cat([_contexts(s, model.order) for s in sentences])
    return float(-model.log_probs[tuple(rows.T)].mean())


class RNNLanguageModel(nn.Module):
    """Embedding, an LSTM (or GRU), and a linear read-out of next-token logits."""

    def __init__(
        self,
        vocab: int,
        *,
        d: int,
        m: int,
        cell: str = "lstm",
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        vocab = check_int(vocab, "vocab", min_value=2)
        d, m = check_int(d, "d", min_value=1), check_int(m, "m", min_value=1)
        if cell not in ("lstm", "gru"):
            raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")
        check_generator(generator)
        self.embed = nn.Embedding(vocab, d)
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(d, m, batch_first=True)
        self.out = nn.Linear(m, vocab)
        with torch.no_grad():
            self.embed.weight.normal_(generator=generator)
            for p in [*self.rnn.parameters(), *self.out.parameters()]:
                p.uniform_(-1 / math.sqrt(m), 1 / math.sqrt(m), generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, V) of the next token after each prefix x[:, :t+1], x (B, T)."""
        h, _ = self.rnn(self.embed(x))        # (B, T, m)
        return self.out(h)                    # (B, T, V)


def lm_batch(sentences: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs ``[<eos>, s_1, ..., s_{L-1}]`` and targets ``[s_1, ..., s_L]`` (padded
    with <eos> and -100), each (B, T)."""
    T = max(len(s) for s in sentences)
    x = torch.zeros(len(sentences), T, dtype=torch.int64)
    y = torch.full((len(sentences), T), -100, dtype=torch.int64)
    for i, s in enumerate(sentences):
        x[i, 1:len(s)] = s[:-1]
        y[i, :len(s)] = s
    return x, y


def lm_nll(model: nn.Module, sentences: list[torch.Tensor]) -> float:
    """Mean next-token negative log-likelihood per token (nats), <eos> included
    (eq-rnn-lm-nll)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    x, y = lm_batch(sentences)
    with torch.no_grad():
        logits = model(x)
    return float(F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100))


@dataclass(frozen=True)
class LMHistory:
    """What :func:`train_lm` records."""

    steps: list[int]        # recorded step numbers
    test_nll: list[float]   # mean NLL per token on the test sentences at those steps


def train_lm(
    model: nn.Module,
    train: list[torch.Tensor],
    test: list[torch.Tensor],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    generator: torch.Generator,
    record_every: int = 50,
) -> LMHistory:
    """Minimise the next-token cross-entropy with Adam on minibatches of ``train``."""
    steps = check_int(steps, "steps", min_value=1)
    batch_size = check_int(batch_size, "batch_size", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    check_generator(generator)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    hist_steps, hist_nll = [0], [lm_nll(model, test)]
    for step in range(1, steps + 1):
        idx = torch.randint(len(train), (batch_size,), generator=generator)
        x, y = lm_batch([train[i] for i in idx])
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % record_every == 0 or step == steps:
            hist_steps.append(step)
            hist_nll.append(lm_nll(model, test))
    return LMHistory(steps=hist_steps, test_nll=hist_nll)
