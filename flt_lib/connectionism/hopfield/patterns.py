"""Hopfield states and patterns: the sign convention, hand-drawn letters, random ones.

States and patterns have entries in {-1, +1}, and ``sign`` sends 0 to +1. Part of
:mod:`flt_lib.connectionism.hopfield`.
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_choice, check_generator, check_int, check_tensor

__all__ = ["letter_patterns", "random_patterns", "sign"]


# 10x10 letters drawn by hand for the retrieval demo ('#' = +1, '.' = -1).
_LETTERS: dict[str, tuple[str, ...]] = {
    "H": (
        "##......##",
        "##......##",
        "##......##",
        "##......##",
        "##########",
        "##########",
        "##......##",
        "##......##",
        "##......##",
        "##......##",
    ),
    "T": (
        "##########",
        "##########",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
    ),
    "L": (
        "##........",
        "##........",
        "##........",
        "##........",
        "##........",
        "##........",
        "##........",
        "##........",
        "##########",
        "##########",
    ),
    "X": (
        "##......##",
        ".##....##.",
        "..##..##..",
        "...####...",
        "....##....",
        "...####...",
        "..##..##..",
        ".##....##.",
        "##......##",
        "#........#",
    ),
    "O": (
        ".########.",
        "##########",
        "##......##",
        "##......##",
        "##......##",
        "##......##",
        "##......##",
        "##......##",
        "##########",
        ".########.",
    ),
}


def sign(z: torch.Tensor) -> torch.Tensor:
    """Elementwise sign with values in {-1, +1}; the tie at 0 goes to +1 (notation
    table).

    Args:
        z: any real tensor, shape (...).

    Returns: A tensor of the same shape and dtype with entries +1 where ``z >= 0`` and
        -1 elsewhere.
    """
    check_tensor(z, "z")
    return torch.where(z >= 0, torch.ones_like(z), -torch.ones_like(z))


def letter_patterns(names: str = "HTLXO") -> tuple[list[str], torch.Tensor]:
    """Hand-drawn 10x10 binary letters, flattened to +-1 patterns.

    Args:
        names: which letters, a string over the characters in ``"HTLXO"``.

    Returns: ``(names, patterns)`` with ``patterns`` of shape (len(names), 100),
        float32, on the CPU.
    """
    if not isinstance(names, str) or not names:
        raise TypeError(f"names must be a non-empty string of letters, got {names!r}")
    for c in names:
        check_choice(c, "names (each letter)", sorted(_LETTERS))
    rows = [[1.0 if ch == "#" else -1.0 for ch in "".join(_LETTERS[c])] for c in names]
    return list(names), torch.tensor(rows)  # (k, 100)


def random_patterns(
    s: int, n: int, *, generator: torch.Generator, batch: int | None = None
) -> torch.Tensor:
    """Patterns with i.i.d. uniform +-1 entries, drawn on the CPU.

    Args:
        s: number of patterns.
        n: number of neurons.
        generator: a CPU ``torch.Generator``.
        batch: if given, draw ``batch`` independent sets.

    Returns:
        float32 tensor of shape (s, n), or (batch, s, n) if ``batch`` is given.
    """
    s = check_int(s, "s", min_value=1)
    n = check_int(n, "n", min_value=1)
    check_generator(generator)
    shape = (s, n) if batch is None else (check_int(batch, "batch", min_value=1), s, n)
    bits = torch.randint(0, 2, shape, generator=generator)
    return (2 * bits - 1).float()
