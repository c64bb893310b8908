"""Symmetries of hidden units: permutations, sign flips, their count, and straight
paths.

Section 2.2 of the book. Networks are lists of layers ``(W_l, b_l)`` (see ``network``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.feedforward.mlp.network import Params, check_params

__all__ = [
    "count_symmetries",
    "flip_signs",
    "interpolate",
    "permute_hidden",
    "random_symmetry",
]


def _check_hidden_layer(params: Params, layer: int) -> int:
    return check_int(layer, "layer", min_value=0, max_value=len(params) - 2)


def permute_hidden(params: Params, layer: int, perm: torch.Tensor) -> Params:
    """Reorder the units of hidden layer ``layer`` (0-based) and compensate in the next
    layer.

    Rows of ``W_layer`` and entries of ``b_layer`` are permuted by ``pi``; columns of
    ``W_{layer+1}`` are permuted by the same ``pi``, so the network computes the same
    function (book theorem ``thm-ff-permutation``).

    Args:
        params: list of ``(W_l, b_l)``.
        layer: index of a hidden layer, ``0 <= layer <= L - 2``.
        perm: a permutation of ``range(m_layer)``, integer tensor of shape (m,).

    Returns:
        New parameters (the input is not modified).
    """
    params = check_params(params)
    layer = _check_hidden_layer(params, layer)
    m = params[layer][0].shape[0]
    perm = check_tensor(perm, "perm", shape=(m,), shape_doc=f"(m,) with m={m}")
    if perm.is_floating_point() or not torch.equal(
        torch.sort(perm.cpu()).values, torch.arange(m)
    ):
        raise ValueError(
            f"perm must be a permutation of 0..{m - 1}, got {perm.tolist()}"
        )
    return _permute_hidden(params, layer, perm)


def _permute_hidden(params: Params, layer: int, perm: torch.Tensor) -> Params:
    """The check-free core of :func:`permute_hidden` (arguments already checked)."""
    perm = perm.to(params[layer][0].device)
    out = list(params)
    W, b = params[layer]
    W_next, b_next = params[layer + 1]
    out[layer] = (W[perm], b[perm])
    out[layer + 1] = (W_next[:, perm], b_next)
    return out


def flip_signs(params: Params, layer: int, signs: torch.Tensor) -> Params:
    """Multiply incoming and outgoing weights of hidden units by ``s_j`` in ``{-1,
    +1}``.

    For an odd activation, ``phi(-z) = -phi(z)``, so this leaves the function unchanged
    (book theorem ``thm-ff-sign-flip``); for ReLU or sigmoid it does not.

    Args:
        params: list of ``(W_l, b_l)``.
        layer: index of a hidden layer, ``0 <= layer <= L - 2``.
        signs: entries in {-1, +1}, shape (m,).

    Returns:
        New parameters.
    """
    params = check_params(params)
    layer = _check_hidden_layer(params, layer)
    m = params[layer][0].shape[0]
    signs = check_tensor(signs, "signs", shape=(m,), shape_doc=f"(m,) with m={m}")
    if not bool(((signs == 1) | (signs == -1)).all()):
        raise ValueError("signs must contain only -1 and +1")
    return _flip_signs(params, layer, signs)


def _flip_signs(params: Params, layer: int, signs: torch.Tensor) -> Params:
    """The check-free core of :func:`flip_signs` (arguments already checked)."""
    W, b = params[layer]
    s = signs.to(device=W.device, dtype=W.dtype)
    W_next, b_next = params[layer + 1]
    out = list(params)
    out[layer] = (W * s[:, None], b * s)
    out[layer + 1] = (W_next * s[None, :], b_next)
    return out


def random_symmetry(
    params: Params, *, generator: torch.Generator, with_signs: bool = False
) -> Params:
    """Apply a random permutation (and optionally random sign flips) to every hidden
    layer.

    Args:
        params: list of ``(W_l, b_l)``.
        generator: a CPU ``torch.Generator``.
        with_signs: also flip signs (use only with an odd activation to keep the
            function).

    Returns:
        Equivalent parameters.
    """
    params = check_params(params)
    generator = check_generator(generator)
    for layer in range(len(params) - 1):
        m = params[layer][0].shape[0]
        params = permute_hidden(params, layer, torch.randperm(m, generator=generator))
        if with_signs:
            signs = torch.randint(0, 2, (m,), generator=generator) * 2 - 1
            params = flip_signs(params, layer, signs)
    return params


def count_symmetries(widths: Sequence[int], *, odd: bool) -> int:
    """Number of parameter vectors related by hidden-unit permutations (and sign flips).

    Equals ``prod_l m_l!`` (times ``2^{m_l}`` per layer when the activation is odd); it
    counts distinct vectors when the units of each layer have distinct, non-zero weights
    (book eq. ``eq-ff-symmetry-count``; Chen, Lu and Hecht-Nielsen 1993).

    Args:
        widths: hidden widths ``[m_1, ..., m_{L-1}]``, each >= 1.
        odd: whether the activation is odd.

    Returns:
        The count as a Python int.
    """
    if not isinstance(widths, (list, tuple)):
        raise TypeError(f"widths must be a list of ints, got {type(widths).__name__}")
    widths = [check_int(m, "widths[i]", min_value=1) for m in widths]
    return _count_symmetries(widths, odd=odd)


def _count_symmetries(widths: Sequence[int], *, odd: bool) -> int:
    """The check-free core of :func:`count_symmetries` (arguments already checked)."""
    total = 1
    for m in widths:  # m! permutations, times 2^m sign flips for an odd phi
        total *= math.factorial(m) * (2**m if odd else 1)
    return total


def interpolate(params_a: Params, params_b: Params, alpha: float) -> Params:
    """The straight line ``(1 - alpha) * theta_a + alpha * theta_b`` in parameter space.

    Args:
        params_a: first parameters.
        params_b: second parameters, same shapes.
        alpha: position on the line (any real; 0 gives a, 1 gives b).

    Returns:
        New parameters.
    """
    params_a, params_b = check_params(params_a), check_params(params_b)
    alpha = check_real(alpha, "alpha")
    if [W.shape for W, _ in params_a] != [W.shape for W, _ in params_b]:
        raise ValueError("params_a and params_b must have the same layer shapes")
    return [
        ((1 - alpha) * Wa + alpha * Wb, (1 - alpha) * ba + alpha * bb)
        for (Wa, ba), (Wb, bb) in zip(params_a, params_b)
    ]
