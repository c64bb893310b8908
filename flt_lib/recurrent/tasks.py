"""Sequence tasks, span tags, MLP mixing strategies and Jacobian support (Section 4.1).

- Named-entity spans and their tags in the IOB2 scheme (B-X begins an entity, I-X continues
  it, O is outside; Tjong Kim Sang & Veenstra 1999) and the IOBES scheme (adds E-X for the last
  token and S-X for a one-token entity; Ratinov & Roth 2009).
- Three ways an MLP can read a (T, p) sequence (:func:`mlp_mix`): flatten everything, act on
  each token, or act on each feature across tokens (the last two are the two halves of an
  MLP-Mixer block, Tolstikhin et al. 2021).
- :func:`jacobian_support`: which inputs x_s each output y_t depends on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from flt_lib._validate import check_choice, check_int, check_tensor

__all__ = [
    "iob2_tags",
    "iobes_tags",
    "spans_from_tags",
    "MIXING_STRATEGIES",
    "mixing_weight_shape",
    "mlp_mix",
    "jacobian_support",
]

Span = tuple[int, int, str]  # (start, end) with end exclusive, and the entity type


def _check_spans(n: int, spans: Sequence[Span]) -> list[Span]:
    n = check_int(n, "n", min_value=0)
    out, last = [], 0
    for i, sp in enumerate(sorted(spans)):
        if not (isinstance(sp, tuple) and len(sp) == 3 and isinstance(sp[2], str) and sp[2]):
            raise TypeError(f"spans[{i}] must be a (start, end, type) tuple, got {sp!r}")
        s, e, _ = sp
        if not (isinstance(s, int) and isinstance(e, int) and last <= s < e <= n):
            raise ValueError(f"spans must be disjoint with 0 <= start < end <= n = {n}, got {sp!r}")
        out.append(sp)
        last = e
    return out


def iob2_tags(n: int, spans: Sequence[Span]) -> list[str]:
    """IOB2 tags of a sentence of n tokens with the given entity spans.

    Args:
        n: number of tokens.
        spans: disjoint (start, end, type) triples, end exclusive.

    Returns:
        n tags: "B-type" on the first token of a span, "I-type" on the others, "O" outside.
    """
    tags = ["O"] * check_int(n, "n", min_value=0)
    for s, e, kind in _check_spans(n, spans):
        tags[s] = f"B-{kind}"
        for t in range(s + 1, e):
            tags[t] = f"I-{kind}"
    return tags


def iobes_tags(n: int, spans: Sequence[Span]) -> list[str]:
    """IOBES tags: like IOB2, but "E-type" ends a span and "S-type" marks a one-token span."""
    tags = ["O"] * check_int(n, "n", min_value=0)
    for s, e, kind in _check_spans(n, spans):
        if e - s == 1:
            tags[s] = f"S-{kind}"
            continue
        tags[s], tags[e - 1] = f"B-{kind}", f"E-{kind}"
        for t in range(s + 1, e - 1):
            tags[t] = f"I-{kind}"
    return tags


def spans_from_tags(tags: Sequence[str]) -> list[Span]:
    """Read the entity spans back from IOB2 or IOBES tags (inverse of the two functions above).

    Raises:
        ValueError: if the tags are not a valid IOB2/IOBES sequence (e.g. I-X after O).
    """
    spans: list[Span] = []
    open_span: tuple[int, str] | None = None
    for t, tag in enumerate(list(tags) + ["O"]):
        if not isinstance(tag, str) or not (tag == "O" or (len(tag) > 2 and tag[1] == "-" and tag[0] in "BIES")):
            raise ValueError(f"tags[{t}] must be 'O' or one of B-/I-/E-/S-<type>, got {tag!r}")
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
        strategy: "features" (flatten the T x p input: W is (m, T p)), "tokens" (the same W,
            (m, p), on every token) or "transpose" (the same W, (m, T), on every feature).
        T: sequence length; p: features per token; m: output width.
    """
    check_choice(strategy, "strategy", MIXING_STRATEGIES)
    T, p, m = (check_int(v, name, min_value=1) for v, name in ((T, "T"), (p, "p"), (m, "m")))
    return {"features": (m, T * p), "tokens": (m, p), "transpose": (m, T)}[strategy]


def mlp_mix(X: torch.Tensor, W: torch.Tensor, strategy: str) -> torch.Tensor:
    """One linear layer applied to a batch of sequences under a mixing strategy (eq-rnn-mixing).

    Args:
        X: sequences, (B, T, p).
        W: weights of the shape given by :func:`mixing_weight_shape`.
        strategy: "features", "tokens" or "transpose".

    Returns:
        (B, m) for "features" (one vector per sequence), (B, T, m) for "tokens", and (B, p, m)
        for "transpose".
    """
    check_tensor(X, "X", ndim=3, floating=True, shape_doc="(B, T, p)")
    _, T, p = X.shape
    check_tensor(W, "W", ndim=2, floating=True, shape_doc="(m, fan_in)")
    want = mixing_weight_shape(strategy, T, p, W.shape[0])
    check_tensor(W, "W", shape=want, floating=True, shape_doc=f"{want} for strategy {strategy!r} and T = {T}")
    if strategy == "features":
        return X.reshape(X.shape[0], T * p) @ W.T       # every feature of every token
    if strategy == "tokens":
        return X @ W.T                                  # each token on its own
    return X.transpose(1, 2) @ W.T                      # each feature across tokens


def jacobian_support(
    f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, *, tol: float = 0.0
) -> torch.Tensor:
    """Which input positions each output position depends on: |dy_t/dx_s| > tol for some entry.

    Args:
        f: maps one sequence (T, n) to outputs (T', q).
        x: the point at which to differentiate, (T, n), floating.
        tol: entries with absolute value <= tol count as zero (default: exact zeros only).

    Returns:
        A bool matrix (T', T) with entry (t, s) True if y_t depends on x_s at x.
    """
    check_tensor(x, "x", ndim=2, floating=True, shape_doc="(T, n)")
    J = torch.autograd.functional.jacobian(f, x)         # (T', q, T, n)
    if J.ndim != 4:
        raise ValueError(f"f must map (T, n) to (T', q), got a Jacobian of shape {tuple(J.shape)}")
    return (J.abs() > tol).any(dim=3).any(dim=1)
