"""A deep ReLU network in the NTK parameterisation and its empirical NTK
(eq-flt-deep-net).

    h_1 = W_1 x,   h_l = m^{-1/2} W_l relu(h_{l-1})  (l = 2, ..., L-1),
    f(x) = m^{-1/2} w_L . relu(h_{L-1}),

with every weight i.i.d. N(0, 1), all layers trained, and no biases; W_1: (m, d), W_l:
(m, m), w_L: (m,). For L = 2 this is the two-layer network :func:`two_layer`. Its
infinite-width NTK is :func:`relu_ntk` (Jacot et al., 2018).
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_generator, check_int, check_tensor

__all__ = ["deep_empirical_ntk", "deep_relu_net", "init_deep"]


def init_deep(
    d: int, m: int, *, depth: int, generator: torch.Generator
) -> list[torch.Tensor]:
    """Standard Gaussian weights of the depth-L network, on the CPU.

    Args:
        d: input dimension. m: width of every hidden layer.
        depth: number of weight layers L >= 2. generator: CPU generator.

    Returns:
        ``[W_1 (m, d), W_2 (m, m), ..., W_{L-1} (m, m), w_L (m,)]``.
    """
    d = check_int(d, "d", min_value=1)
    m = check_int(m, "m", min_value=1)
    depth = check_int(depth, "depth", min_value=2)
    check_generator(generator)
    shapes = [(m, d)] + [(m, m)] * (depth - 2) + [(m,)]
    return [torch.randn(*s, generator=generator) for s in shapes]


def _check_weights(
    X: torch.Tensor, weights: list[torch.Tensor], name: str = "X"
) -> None:
    if not isinstance(weights, (list, tuple)) or len(weights) < 2:
        raise TypeError(
            "weights must be a list [W_1, ..., w_L] of at least 2 tensors "
            f"(see init_deep), got {type(weights).__name__}"
        )
    m = weights[-1].shape[0] if isinstance(weights[-1], torch.Tensor) else None
    check_tensor(weights[0], "weights[0]", ndim=2, floating=True, shape_doc="(m, d)")
    for i, W in enumerate(weights[1:-1], start=1):
        check_tensor(
            W, f"weights[{i}]", shape=(m, m), floating=True, shape_doc="(m, m)"
        )
    check_tensor(
        weights[-1],
        f"weights[{len(weights) - 1}]",
        ndim=1,
        floating=True,
        shape_doc="(m,)",
    )
    check_tensor(
        X, name, shape=(None, weights[0].shape[1]), floating=True, shape_doc="(n, d)"
    )


def _forward(X: torch.Tensor, weights: list[torch.Tensor]) -> tuple[list, list]:
    """Pre-activations h_l and activations a_l (a_0 = X) of every layer, unchecked."""
    m = weights[-1].shape[0]
    acts, pres = [X], []
    for l, W in enumerate(weights[:-1]):
        h = acts[-1] @ W.T / (1.0 if l == 0 else math.sqrt(m))  # (n, m)
        pres.append(h)
        acts.append(torch.relu(h))
    return pres, acts


def deep_relu_net(X: torch.Tensor, weights: list[torch.Tensor]) -> torch.Tensor:
    """Output f(x) of the depth-L ReLU network (eq-flt-deep-net).

    Args:
        X: inputs, shape (n, d).
        weights: ``[W_1, ..., w_L]`` as returned by :func:`init_deep`.

    Returns:
        Outputs, shape (n,).
    """
    _check_weights(X, weights)
    _, acts = _forward(X, weights)
    return acts[-1] @ weights[-1] / math.sqrt(weights[-1].shape[0])


def deep_empirical_ntk(
    X1: torch.Tensor, X2: torch.Tensor, weights: list[torch.Tensor]
) -> torch.Tensor:
    """Empirical NTK of :func:`deep_relu_net`, summed layer by layer without the
    Jacobian.

    A layer h = c W a (c its scale) contributes ``c^2 (B B'^T) * (A A'^T)`` to K, where
    B holds the derivatives df/dh and A the layer inputs of the two sets of points; the
    last layer contributes ``(A A'^T) / m``.

    Args:
        X1: inputs, shape (n1, d). X2: inputs, shape (n2, d).
        weights: ``[W_1, ..., w_L]`` as returned by :func:`init_deep`.

    Returns:
        The kernel matrix, shape (n1, n2).
    """
    _check_weights(X1, weights, "X1")
    _check_weights(X2, weights, "X2")
    return _deep_empirical_ntk(X1, X2, weights)


def _deep_empirical_ntk(
    X1: torch.Tensor, X2: torch.Tensor, weights: list[torch.Tensor]
) -> torch.Tensor:
    """The check-free core of :func:`deep_empirical_ntk` (arguments already checked)."""
    m = weights[-1].shape[0]
    per_set = []
    for X in (X1, X2):
        pres, acts = _forward(X, weights)
        # (n, m) df/dh_{L-1}
        b = (pres[-1] > 0).to(X) * weights[-1] / math.sqrt(m)
        grads = [b]
        # back to df/dh_1
        for l in range(len(weights) - 2, 0, -1):
            b = (b @ weights[l] / math.sqrt(m)) * (pres[l - 1] > 0).to(X)
            grads.append(b)
        # grads[l]: df/dh_{l+1}
        per_set.append((acts, grads[::-1]))
    (acts1, b1), (acts2, b2) = per_set
    # last layer w_L
    K = acts1[-1] @ acts2[-1].T / m
    # layers W_1 .. W_{L-1}
    for l in range(len(weights) - 1):
        scale = 1.0 if l == 0 else 1.0 / m
        K = K + scale * (b1[l] @ b2[l].T) * (acts1[l] @ acts2[l].T)
    return K
