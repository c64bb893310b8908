"""Sequence tasks, span tags, MLP mixing strategies and Jacobian support (Section 4.1).

- Two toy data sets, one per kind of sequence problem that has no tags: classification
  (:func:`pattern_classification`: does the sequence contain a given pattern?) and
  transduction (:func:`run_length_transduction`: the run-length code of the sequence,
  whose length differs from the input's).
- Named-entity spans and their tags in the IOB2 scheme (B-X begins an entity, I-X
  continues it, O is outside; Tjong Kim Sang & Veenstra 1999) and the IOBES scheme (adds
  E-X for the last token and S-X for a one-token entity; Ratinov & Roth 2009).
- Three ways an MLP can read a (T, p) sequence (:func:`mlp_mix`): flatten everything,
  act on each token, or act on each feature across tokens (the last two are the two
  halves of an MLP-Mixer block, Tolstikhin et al. 2021).
- :func:`jacobian_support`: which inputs x_s each output y_t depends on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from flt_lib._validate import check_choice, check_generator, check_int, check_tensor

__all__ = [
    "pattern_classification",
    "run_length_transduction",
    "iob2_tags",
    "iobes_tags",
    "spans_from_tags",
    "MIXING_STRATEGIES",
    "mixing_weight_shape",
    "mlp_mix",
    "jacobian_support",
]

Span = tuple[int, int, str]  # (start, end) with end exclusive, and the entity type


def _random_sequences(
    n: int, min_length: int, max_length: int, vocab: int, generator: torch.Generator
) -> list[torch.Tensor]:
    """n int64 sequences of tokens 0..vocab-1, each of a length uniform in
    [min, max]."""
    n = check_int(n, "n", min_value=1)
    min_length = check_int(min_length, "min_length", min_value=1)
    max_length = check_int(max_length, "max_length", min_value=min_length)
    vocab = check_int(vocab, "vocab", min_value=2)
    check_generator(generator)
    lengths = torch.randint(min_length, max_length + 1, (n,), generator=generator)
    return [torch.randint(0, vocab, (int(T),), generator=generator) for T in lengths]


def pattern_classification(
    n: int, *, min_length: int, max_length: int, vocab: int,
    pattern: Sequence[int] = (0, 1), generator: torch.Generator,
) -> list[tuple[torch.Tensor, int]]:
    """Sequence classification: label 1 if the sequence contains ``pattern``
    contiguously.

    The label depends on the order of the tokens (``ab`` counts, ``ba`` does not), so a
    model that only counts tokens cannot compute it (def-rnn-sequence-tasks).

    Args:
        n: number of examples, >= 1.
        min_length, max_length: each length T is uniform in [min_length, max_length].
        vocab: number of symbols V >= 2 (tokens 0..V-1, uniform and independent).
        pattern: the tokens to look for, each in 0..V-1.
        generator: a CPU torch.Generator.

    Returns:
        n pairs ``(x, y)``: tokens x of shape (T,) int64, and the label y in {0, 1}.
    """
    if (
        isinstance(pattern, (str, bytes))
        or not isinstance(pattern, Sequence)
        or not pattern
    ):
        raise TypeError(
            f"pattern must be a non-empty sequence of ints, got {pattern!r}"
        )
    vocab = check_int(vocab, "vocab", min_value=2)
    pat = [check_int(p, f"pattern[{i}]", min_value=0, max_value=vocab - 1)
           for i, p in enumerate(pattern)]
    seqs = _random_sequences(n, min_length, max_length, vocab, generator)
    p = torch.tensor(pat)                                       # (k,)
    out = []
    for x in seqs:
        if len(x) < len(p):
            out.append((x, 0))
            continue
        windows = x.unfold(0, len(p), 1)                        # (T - k + 1, k)
        out.append((x, int((windows == p).all(dim=1).any())))
    return out


def run_length_transduction(
    n: int, *, min_length: int, max_length: int, vocab: int, generator: torch.Generator
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Sequence transduction: map a sequence to its run-length code.

    Each maximal run of one symbol becomes two output tokens, the symbol and the run's
    length, so ``a a b c c c`` becomes ``a 2 b 1 c 3``: the output has its own length
    (twice the number of runs) and its own vocabulary (symbols and counts).

    Args:
        n: number of examples, >= 1.
        min_length, max_length: each input length T is uniform in
            [min_length, max_length].
        vocab: number of symbols V >= 2 (tokens 0..V-1, uniform and independent).
        generator: a CPU torch.Generator.

    Returns:
        n pairs ``(x, y)``: x of shape (T,) int64, and y of shape (2R,) int64 with R
        the number of runs: y[0::2] the symbols of the runs and y[1::2] their lengths
        (>= 1).
    """
    out = []
    for x in _random_sequences(n, min_length, max_length, vocab, generator):
        symbols, counts = torch.unique_consecutive(x, return_counts=True)   # (R,), (R,)
        out.append((x, torch.stack([symbols, counts], dim=1).reshape(-1)))
    return out


def _check_spans(n: int, spans: Sequence[Span]) -> list[Span]:
    n = check_int(n, "n", min_value=0)
    out, last = [], 0
    for i, sp in enumerate(sorted(spans)):
        if not (
            isinstance(sp, tuple) and len(sp) == 3 and isinstance(sp[2], str) and sp[2]
        ):
            raise TypeError(
                f"spans[{i}] must be a (start, end, type) tuple, got {sp!r}"
            )
        s, e, _ = sp
        if not (isinstance(s, int) and isinstance(e, int) and last <= s < e <= n):
            raise ValueError(
                f"spans must be disjoint with 0 <= start < end <= n = {n}, "
                f"got {sp!r}"
            )
        out.append(sp)
        last = e
    return out


def iob2_tags(n: int, spans: Sequence[Span]) -> list[str]:
    """IOB2 tags of a sentence of n tokens with the given entity spans.

    Args:
        n: number of tokens.
        spans: disjoint (start, end, type) triples, end exclusive.

    Returns:
        n tags: "B-type" on the first token of a span, "I-type" on the others, "O"
        outside.
    """
    tags = ["O"] * check_int(n, "n", min_value=0)
    for s, e, kind in _check_spans(n, spans):
        tags[s] = f"B-{kind}"
        for t in range(s + 1, e):
            tags[t] = f"I-{kind}"
    return tags


def iobes_tags(n: int, spans: Sequence[Span]) -> list[str]:
    """IOBES tags: like IOB2, but "E-type" ends a span and "S-type" marks a one-token
    span."""
    n = check_int(n, "n", min_value=0)
    return _iobes_tags(n, list(_check_spans(n, spans)))


def _iobes_tags(n: int, spans: Sequence[Span]) -> list[str]:
    """The check-free core of :func:`iobes_tags` (arguments already checked)."""
    tags = ["O"] * n
    for s, e, kind in spans:
        if e - s == 1:
            tags[s] = f"S-{kind}"
            continue
        tags[s], tags[e - 1] = f"B-{kind}", f"E-{kind}"
        for t in range(s + 1, e - 1):
            tags[t] = f"I-{kind}"
    return tags


def spans_from_tags(tags: Sequence[str]) -> list[Span]:
    """Read the entity spans back from IOB2 or IOBES tags
    (inverse of the two functions above).

    Raises:
        ValueError: if the tags are not a valid IOB2/IOBES sequence (e.g. I-X after O).
    """
    spans: list[Span] = []
    open_span: tuple[int, str] | None = None
    for t, tag in enumerate(list(tags) + ["O"]):
        if not isinstance(tag, str) or not (
            tag == "O" or (len(tag) > 2 and tag[1] == "-" and tag[0] in "BIES")
        ):
            raise ValueError(
                f"tags[{t}] must be 'O' or one of B-/I-/E-/S-<type>, got {tag!r}"
            )
        prefix, kind = (tag[0], tag[2:]) if tag != "O" else ("O", "")
        if prefix in "IE":
            if open_span is None or open_span[1] != kind:
                raise ValueError(f"tags[{t}] = {tag!r} continues no open {kind!r} span")
            if prefix == "E":
                spans.append((open_span[0], t + 1, kind))
                open_span = None
            continue
        if open_span is not None:                       # B, S or O closes an IOB2 span
            spans.append((open_span[0], t, open_span[1]))
            open_span = None
        if prefix == "B":
            open_span = (t, kind)
        elif prefix == "S":
            spans.append((t, t + 1, kind))
    return spans


MIXING_STRATEGIES = ("features", "tokens", "transpose")


def mixing_weight_shape(strategy: str, T: int, p: int, m: int) -> tuple[int, int]:
    """Shape of the weight matrix of one linear layer under a mixing strategy.

    Args:
        strategy: "features" (flatten the T x p input: W is (m, T p)), "tokens" (the
            same W, (m, p), on every token) or "transpose" (the same W, (m, T), on every
            feature).
        T: sequence length; p: features per token; m: output width.
    """
    check_choice(strategy, "strategy", MIXING_STRATEGIES)
    T, p, m = (
        check_int(v, name, min_value=1) for v, name in ((T, "T"), (p, "p"), (m, "m"))
    )
    return {"features": (m, T * p), "tokens": (m, p), "transpose": (m, T)}[strategy]


def mlp_mix(X: torch.Tensor, W: torch.Tensor, strategy: str) -> torch.Tensor:
    """One linear layer applied to a batch of sequences under a mixing strategy
    (eq-rnn-mixing).

    Args:
        X: sequences, (B, T, p).
        W: weights of the shape given by :func:`mixing_weight_shape`.
        strategy: "features", "tokens" or "transpose".

    Returns:
        (B, m) for "features" (one vector per sequence), (B, T, m) for "tokens", and
        (B, p, m) for "transpose".
    """
    check_tensor(X, "X", ndim=3, floating=True, shape_doc="(B, T, p)")
    _, T, p = X.shape
    check_tensor(W, "W", ndim=2, floating=True, shape_doc="(m, fan_in)")
    want = mixing_weight_shape(strategy, T, p, W.shape[0])
    check_tensor(
        W,
        "W",
        shape=want,
        floating=True,
        shape_doc=f"{want} for strategy {strategy!r} and T = {T}",
    )
    return _mlp_mix(X, W, strategy)


def _mlp_mix(X: torch.Tensor, W: torch.Tensor, strategy: str) -> torch.Tensor:
    """The check-free core of :func:`mlp_mix` (arguments already checked)."""
    _, T, p = X.shape
    if strategy == "features":
        return X.reshape(X.shape[0], T * p) @ W.T       # every feature of every token
    if strategy == "tokens":
        return X @ W.T                                  # each token on its own
    return X.transpose(1, 2) @ W.T                      # each feature across tokens


def jacobian_support(
    f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, *, tol: float = 0.0
) -> torch.Tensor:
    """Which input positions each output position depends on: |dy_t/dx_s| > tol for
    some entry.

    Args:
        f: maps one sequence (T, n) to outputs (T', q).
        x: the point at which to differentiate, (T, n), floating.
        tol: entries with absolute value <= tol count as zero (default: exact zeros
            only).

    Returns:
        A bool matrix (T', T) with entry (t, s) True if y_t depends on x_s at x.
    """
    check_tensor(x, "x", ndim=2, floating=True, shape_doc="(T, n)")
    J = torch.autograd.functional.jacobian(f, x)         # (T', q, T, n)
    if J.ndim != 4:
        raise ValueError(
            f"f must map (T, n) to (T', q), got a Jacobian of shape "
            f"{tuple(J.shape)}"
        )
    return (J.abs() > tol).any(dim=3).any(dim=1)
