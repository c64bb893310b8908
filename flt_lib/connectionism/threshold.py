"""McCulloch-Pitts threshold units, logic gates, and the exhaustive search that rules
out XOR.

A threshold unit with weights ``w`` and threshold ``theta`` maps a binary input ``x`` to
``1[<w, x> >= theta]`` (McCulloch & Pitts, 1943). Section 1.1 of the book builds AND, OR
and NOT from single units, shows by an exhaustive grid search (and by a four-line
algebraic proof) that no single unit computes XOR, and computes XOR with two layers.
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_choice, check_int, check_real, check_tensor

__all__ = [
    "GATES",
    "boolean_inputs",
    "gate",
    "realisable_truth_tables",
    "threshold_layer",
    "threshold_network",
    "threshold_unit",
    "truth_table_index",
    "xor_network",
]

# Name -> (weights, threshold) of a single unit computing the gate (Section 1.1).
GATES: dict[str, tuple[tuple[float, ...], float]] = {
    "and": ((1.0, 1.0), 2.0),  # fires only if both inputs fire: 1 + 1 >= 2
    "or": ((1.0, 1.0), 1.0),  # fires if at least one input fires
    "nand": ((-1.0, -1.0), -1.0),  # NOT AND: fires unless both inputs fire
    "nor": ((-1.0, -1.0), 0.0),  # NOT OR: fires only if no input fires
    "not": ((-1.0,), 0.0),  # one inhibitory input: fires iff the input is silent
}


def boolean_inputs(d: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """All ``2**d`` binary input vectors, in lexicographic order (row ``k`` is ``k`` in
    binary).

    Args:
        d: number of inputs, ``1 <= d <= 16``.
        dtype: dtype of the result.

    Returns: Tensor of shape ``(2**d, d)`` with entries in ``{0, 1}``; for ``d = 2`` the
        rows are ``00, 01, 10, 11``.
    """
    d = check_int(d, "d", min_value=1, max_value=16)
    k = torch.arange(2**d)  # (2^d,)
    bits = (k[:, None] >> torch.arange(d - 1, -1, -1)[None, :]) & 1  # (2^d, d)
    return bits.to(dtype)


def threshold_unit(x: torch.Tensor, w: torch.Tensor, threshold: float) -> torch.Tensor:
    """Output of one McCulloch-Pitts unit, ``1[<w, x> >= threshold]``, for a batch of
    inputs.

    Args:
        x: inputs, shape ``(n, d)`` (usually in ``{0, 1}``).
        w: weights, shape ``(d,)``; positive entries are excitatory, negative
            inhibitory.
        threshold: the firing threshold ``theta``.

    Returns:
        Tensor of shape ``(n,)`` with entries in ``{0., 1.}`` (dtype of ``x``).
        Implements eq. ``eq-mp-unit`` (McCulloch & Pitts, 1943).
    """
    check_tensor(x, "x", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(w, "w", shape=(x.shape[1],), shape_doc="(d,) with d = x.shape[1]")
    threshold = check_real(threshold, "threshold")
    return _threshold_unit(x, w, threshold)


def _threshold_unit(x: torch.Tensor, w: torch.Tensor, threshold: float) -> torch.Tensor:
    """The check-free core of :func:`threshold_unit` (arguments already checked)."""
    return (x @ w.to(x) >= threshold).to(x.dtype)  # (n,)


def threshold_layer(
    x: torch.Tensor, W: torch.Tensor, thresholds: torch.Tensor
) -> torch.Tensor:
    """A layer of ``m`` threshold units acting in parallel on a batch of inputs.

    Args:
        x: inputs, shape ``(n, d)``.
        W: weights, shape ``(m, d)``; row ``j`` feeds unit ``j``.
        thresholds: thresholds, shape ``(m,)``.

    Returns: Tensor of shape ``(n, m)`` with entry ``(i, j) = 1[<W_j, x_i> >=
        thresholds_j]``.
    """
    check_tensor(x, "x", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(
        W, "W", shape=(None, x.shape[1]), shape_doc="(m, d) with d = x.shape[1]"
    )
    check_tensor(
        thresholds,
        "thresholds",
        shape=(W.shape[0],),
        shape_doc="(m,) with m = W.shape[0]",
    )
    return _threshold_layer(x, W, thresholds)


def _threshold_layer(
    x: torch.Tensor, W: torch.Tensor, thresholds: torch.Tensor
) -> torch.Tensor:
    """The check-free core of :func:`threshold_layer` (arguments already checked)."""
    net = x @ W.to(x).T  # (n, m)
    return (net >= thresholds.to(x)[None, :]).to(x.dtype)  # (n, m)


def threshold_network(
    x: torch.Tensor, layers: list[tuple[torch.Tensor, torch.Tensor]]
) -> torch.Tensor:
    """A feedforward network of threshold layers: apply :func:`threshold_layer` in turn.

    Args:
        x: inputs, shape ``(n, d)``.
        layers: list of ``(W, thresholds)`` pairs with shapes ``(m_l, m_{l-1})`` and
            ``(m_l,)``.

    Returns:
        Output of the last layer, shape ``(n, m_L)``.
    """
    if not isinstance(layers, list) or not layers:
        raise ValueError(
            f"layers must be a non-empty list of (W, thresholds) pairs, got {layers!r}"
        )
    return _threshold_network(x, layers)


def _threshold_network(
    x: torch.Tensor, layers: list[tuple[torch.Tensor, torch.Tensor]]
) -> torch.Tensor:
    """The check-free core of :func:`threshold_network` (arguments already checked)."""
    h = x
    for W, thresholds in layers:
        h = threshold_layer(h, W, thresholds)  # (n, m_l)
    return h


def gate(name: str) -> tuple[torch.Tensor, float]:
    """Weights and threshold of a single unit computing a named logic gate.

    Args:
        name: one of ``"and"``, ``"or"``, ``"nand"``, ``"nor"`` (two inputs) or
            ``"not"`` (one).

    Returns:
        ``(w, threshold)`` with ``w`` of shape ``(2,)`` or ``(1,)``.
    """
    check_choice(name, "name", list(GATES))
    w, theta = GATES[name]
    return torch.tensor(w), theta


def xor_network() -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Two threshold layers computing XOR: ``x1 XOR x2 = AND(OR(x1, x2), NAND(x1,
    x2))``.

    Returns: ``[(W1, t1), (W2, t2)]`` with shapes ``(2, 2), (2,)`` (hidden OR and NAND
        units) and ``(1, 2), (1,)`` (output AND unit), ready for
        :func:`threshold_network`.
    """
    (w_or, t_or), (w_nand, t_nand), (w_and, t_and) = (
        gate("or"),
        gate("nand"),
        gate("and"),
    )
    W1 = torch.stack([w_or, w_nand])  # (2, 2)
    t1 = torch.tensor([t_or, t_nand])  # (2,)
    return [(W1, t1), (w_and[None, :], torch.tensor([t_and]))]


def truth_table_index(outputs: torch.Tensor) -> torch.Tensor:
    """Encode truth tables (rows of 0/1 outputs) as integers, first entry most
    significant.

    Args:
        outputs: shape ``(k, 2**d)`` with entries in ``{0, 1}``, ordered as
            :func:`boolean_inputs`.

    Returns: Integer tensor of shape ``(k,)``; e.g. for ``d = 2`` AND is ``0b0001 = 1``
        and XOR is ``0b0110 = 6``.
    """
    check_tensor(outputs, "outputs", ndim=2, shape_doc="(k, 2**d)")
    p = outputs.shape[1]
    powers = 2 ** torch.arange(p - 1, -1, -1, device=outputs.device)  # (2^d,)
    return (outputs.long() * powers).sum(dim=1)  # (k,)


def realisable_truth_tables(d: int, grid: torch.Tensor) -> torch.Tensor:
    """Exhaustive search: which Boolean functions of ``d`` inputs does some grid unit
    compute?

    Every combination of weights ``w in grid^d`` and threshold ``theta in grid`` is
    tried (``len(grid)**(d+1)`` units) on all ``2**d`` inputs at once.

    Args:
        d: number of inputs, ``1 <= d <= 4``.
        grid: candidate values for each weight and for the threshold, shape ``(g,)``.

    Returns:
        Sorted integer tensor of the distinct truth tables found (encoded as in
        :func:`truth_table_index`), shape ``(k,)`` with ``k <= 2**(2**d)``.
    """
    d = check_int(d, "d", min_value=1, max_value=4)
    check_tensor(grid, "grid", ndim=1, floating=True, shape_doc="(g,)")
    if grid.numel() == 0 or grid.numel() ** (d + 1) > 10**7:
        raise ValueError(
            f"grid must have between 1 and {int(10 ** (7 / (d + 1)))} values for "
            f"d={d}, got {grid.numel()}"
        )
    return _realisable_truth_tables(d, grid)


def _realisable_truth_tables(d: int, grid: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`realisable_truth_tables`."""
    params = torch.cartesian_prod(*([grid] * (d + 1))).reshape(-1, d + 1)  # (G, d+1)
    W, thetas = params[:, :d], params[:, d]  # (G, d), (G,)
    x = boolean_inputs(d, dtype=grid.dtype).to(grid.device)  # (2^d, d)
    outputs = (W @ x.T >= thetas[:, None]).long()  # (G, 2^d)
    return torch.unique(truth_table_index(outputs))  # (k,)
