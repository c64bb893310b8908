"""The perceptron: margins, version space, the perceptron algorithm and Novikoff's
bound.

Conventions (Section 1.2 of the book). Labels are ``y in {-1, +1}``. The classifier is
homogeneous, ``x -> sign(<w, x>)``; an affine classifier ``sign(<w, x> + b)`` is the
homogeneous one on lifted inputs ``(x, 1)`` (see :func:`add_bias`). A point is a
*mistake* of ``w`` when ``y <w, x> <= 0``, so the zero vector gets every point wrong.

References: Rosenblatt (1958) for the model and the learning rule; Novikoff (1962) for
the bound ``k <= R^2 / gamma^2`` on the number of updates.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)

__all__ = [
    "PerceptronResult",
    "add_bias",
    "feasible_directions",
    "margin",
    "novikoff_bound",
    "perceptron",
    "predict",
    "radius",
    "separable_data",
    "signed_margins",
]


@dataclass(frozen=True)
class PerceptronResult:
    """What :func:`perceptron` returns."""

    w: torch.Tensor  # final weight vector, shape (d,), on the device of X
    n_updates: int  # number of updates k made (each update corrects one mistake)
    converged: bool  # True iff the final w makes no mistake on the data
    n_mistakes: int  # number of points with y <w, x> <= 0 under the final w
    # number of mistakes before each update, length n_updates
    mistakes_per_update: tuple[int, ...]


def _check_xy(X: torch.Tensor, y: torch.Tensor) -> None:
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(y, "y", shape=(X.shape[0],), shape_doc="(n,) with n = X.shape[0]")
    if X.shape[0] == 0:
        raise ValueError("X must contain at least one point, got shape (0, d)")
    if not bool(((y == 1) | (y == -1)).all()):
        raise ValueError(
            f"y must have entries in {{-1, +1}}, got values {torch.unique(y).tolist()}"
        )


def add_bias(X: torch.Tensor) -> torch.Tensor:
    """Lift inputs to ``(x, 1)`` so that an affine separator becomes a homogeneous one.

    Args:
        X: inputs, shape ``(n, d)``.

    Returns:
        Tensor of shape ``(n, d + 1)`` whose last column is all ones; then
        ``<(w, b), (x, 1)> = <w, x> + b``.
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    return torch.cat([X, X.new_ones(X.shape[0], 1)], dim=1)  # (n, d+1)


def predict(X: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Perceptron output ``sign(<w, x>)`` with the tie ``sign(0) = +1`` (notation
    table).

    Args:
        X: inputs, shape ``(n, d)``.
        w: weights, shape ``(d,)``.

    Returns:
        Tensor of shape ``(n,)`` with entries in ``{-1., +1.}``.
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(w, "w", shape=(X.shape[1],), shape_doc="(d,) with d = X.shape[1]")
    z = X @ w.to(X)  # (n,)
    return torch.where(z >= 0, 1.0, -1.0).to(X.dtype)


def signed_margins(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Signed distances ``y_i <w, x_i> / ||w||`` of the points to the hyperplane ``<w,
    x> = 0``.

    Positive means correctly classified, with that much room (eq.
    ``eq-perceptron-signed-margin``).

    Args:
        X: inputs, shape ``(n, d)``.
        y: labels in ``{-1, +1}``, shape ``(n,)``.
        w: a non-zero weight vector, shape ``(d,)``.

    Returns:
        Tensor of shape ``(n,)``.
    """
    _check_xy(X, y)
    check_tensor(w, "w", shape=(X.shape[1],), shape_doc="(d,) with d = X.shape[1]")
    norm = w.norm()
    if norm.item() == 0.0:
        raise ValueError(
            "w must be non-zero to define a hyperplane and a margin, got the zero "
            "vector"
        )
    return _signed_margins(X, y, w)


def _signed_margins(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`signed_margins` (arguments already checked)."""
    norm = w.norm()
    return y.to(X) * (X @ w.to(X)) / norm  # (n,)


def margin(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> float:
    """Margin of ``w`` on the data: the smallest signed distance, ``min_i y_i <w, x_i> /
    ||w||``.

    Args:
        X: inputs, shape ``(n, d)``.
        y: labels in ``{-1, +1}``, shape ``(n,)``.
        w: a non-zero weight vector, shape ``(d,)``.

    Returns:
        The margin gamma (a float; positive iff ``w`` separates the data).
    """
    return signed_margins(X, y, w).min().item()


def radius(X: torch.Tensor) -> float:
    """Radius ``R = max_i ||x_i||`` of the data.

    Args:
        X: inputs, shape ``(n, d)``.

    Returns:
        ``R`` as a float.
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    if X.shape[0] == 0:
        raise ValueError("X must contain at least one point, got shape (0, d)")
    return X.norm(dim=1).max().item()


def novikoff_bound(X: torch.Tensor, y: torch.Tensor, w_star: torch.Tensor) -> float:
    """Novikoff's bound ``R^2 / gamma^2`` on the number of perceptron updates.

    Here ``gamma`` is the margin of the separating vector ``w_star`` (any separator
    gives a valid bound; a larger margin gives a smaller one). Eq. ``eq-novikoff``
    (Novikoff, 1962).

    Args:
        X: inputs, shape ``(n, d)``.
        y: labels in ``{-1, +1}``, shape ``(n,)``.
        w_star: a vector that separates the data, shape ``(d,)``.

    Returns:
        ``R^2 / gamma^2`` as a float.

    Raises:
        ValueError: if the margin of ``w_star`` is not positive (it does not separate
            the data).
    """
    gamma = margin(X, y, w_star)
    if gamma <= 0:
        raise ValueError(
            "w_star must separate the data with a positive margin, got margin "
            f"{gamma:.3g}"
        )
    return radius(X) ** 2 / gamma**2


def _perceptron_loop(
    X: torch.Tensor, y: torch.Tensor, w: torch.Tensor, max_updates: int
) -> tuple[torch.Tensor, int]:
    """The textbook double loop of the perceptron algorithm; :func:`perceptron` makes
    the same updates in the same order. Returns ``(w, k)``, the final weights and the
    number of updates. No argument checks: call :func:`perceptron`."""
    k = 0
    while True:
        clean_pass = True
        for i in range(X.shape[0]):  # one pass over the data, in order
            if y[i] * (X[i] @ w) <= 0:  # a mistake: y_i <w, x_i> <= 0
                if k == max_updates:
                    return w, k
                w = w + y[i] * X[i]  # the update  w <- w + y_i x_i
                k += 1
                clean_pass = False
        if clean_pass:  # a whole pass without a mistake: w separates the data
            return w, k


def perceptron(
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    max_updates: int = 10_000,
    w0: torch.Tensor | None = None,
) -> PerceptronResult:
    """Rosenblatt's perceptron algorithm, with mistakes detected over the whole batch at
    once (the fast path of the textbook loop :func:`_perceptron_loop`).

    Each step computes ``y_i <w, x_i>`` for all points with one matrix-vector product,
    takes the first mistake at or after the position of the previous one (cyclically, so
    the order of updates is that of the classic loop over the data in passes), and
    updates ``w <- w + y_i x_i``. It stops when there is no mistake or after
    ``max_updates`` updates.

    Args:
        X: inputs, shape ``(n, d)`` (lift with :func:`add_bias` for an affine
            separator).
        y: labels in ``{-1, +1}``, shape ``(n,)``.
        max_updates: the cap on the number of updates, ``>= 0``.
        w0: initial weights, shape ``(d,)``; default zero (the setting of Novikoff's
            theorem).

    Returns:
        A :class:`PerceptronResult`. If the data are separable with margin ``gamma`` and
        ``w0 = 0``, then ``n_updates <= R^2 / gamma^2`` (eq. ``eq-novikoff``).
    """
    _check_xy(X, y)
    max_updates = check_int(max_updates, "max_updates", min_value=0)
    n, d = X.shape
    if w0 is None:
        w = X.new_zeros(d)  # (d,)
    else:
        check_tensor(w0, "w0", shape=(d,), shape_doc="(d,) with d = X.shape[1]")
        w = w0.to(X).clone()
    yX = y.to(X)[:, None] * X  # (n, d): row i is y_i x_i
    position = torch.arange(n, device=X.device)  # (n,)
    start, history = 0, []
    while True:
        wrong = (yX @ w) <= 0  # (n,) the mistakes of the current w
        n_wrong = int(wrong.sum().item())
        if n_wrong == 0 or len(history) == max_updates:
            break
        # first mistake at or after `start`, wrapping around: the classic pass
        order = (position - start) % n  # (n,) distance from `start` in cyclic order
        i = int(torch.where(wrong, order, n).argmin().item())
        w = w + yX[i]  # the perceptron update  w <- w + y_i x_i
        history.append(n_wrong)
        start = (i + 1) % n
    return PerceptronResult(
        w=w,
        n_updates=len(history),
        converged=n_wrong == 0,
        n_mistakes=n_wrong,
        mistakes_per_update=tuple(history),
    )


def separable_data(
    n: int, d: int, *, gamma: float, generator: torch.Generator, kind: str = "ball"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Points labelled by a random unit vector ``w_star`` with margin at least
    ``gamma``, ``R <= 1``.

    ``kind="ball"``: points uniform in the unit ball; those within ``gamma`` of the
    hyperplane ``<w_star, x> = 0`` are rejected and the rest labelled ``sign(<w_star,
    x>)``. ``kind="shell"``: random labels ``y_i``, and ``x_i = y_i gamma w_star +
    sqrt(1 - gamma^2) u_i`` with ``u_i`` a random unit vector orthogonal to ``w_star``;
    every point has norm 1 and lies at distance exactly ``gamma`` from the hyperplane
    (the hard case for the perceptron). Either way the margin of ``w_star`` is ``>=
    gamma`` and ``R <= 1``, so the Novikoff bound is at most ``1 / gamma^2``. Drawn on
    the generator's device (the CPU); move the result yourself.

    Args:
        n: number of points, ``n >= 1``.
        d: dimension, ``d >= 2``.
        gamma: the margin, ``0 < gamma < 0.5``.
        generator: a ``torch.Generator`` (see :func:`flt_lib.rng.torch_generator`).
        kind: ``"ball"`` or ``"shell"``.

    Returns: ``(X, y, w_star)`` with shapes ``(n, d)``, ``(n,)``, ``(d,)``; ``||w_star||
        = 1``.
    """
    n = check_int(n, "n", min_value=1)
    d = check_int(d, "d", min_value=2)
    gamma = check_real(gamma, "gamma", min_value=0.0, max_value=0.5, strict_min=True)
    if gamma == 0.5:
        raise ValueError(f"gamma must be < 0.5 so that points remain, got {gamma}")
    check_generator(generator)
    check_choice(kind, "kind", ["ball", "shell"])
    w_star = torch.randn(d, generator=generator)
    w_star = w_star / w_star.norm()  # (d,)
    if kind == "shell":
        u = torch.randn(n, d, generator=generator)  # (n, d)
        u = u - (u @ w_star)[:, None] * w_star  # project out w_star
        u = u / u.norm(dim=1, keepdim=True)
        y = torch.where(torch.rand(n, generator=generator) < 0.5, -1.0, 1.0)  # (n,)
        X = y[:, None] * gamma * w_star + (1.0 - gamma**2) ** 0.5 * u  # (n, d)
        return X, y, w_star
    kept: list[torch.Tensor] = []
    total = 0
    while total < n:
        m = 2 * n + 16
        g = torch.randn(m, d, generator=generator)  # (m, d)
        # radii of uniform points in the ball
        r = torch.rand(m, 1, generator=generator) ** (1.0 / d)
        x = g / g.norm(dim=1, keepdim=True) * r  # (m, d)
        x = x[(x @ w_star).abs() >= gamma]
        kept.append(x)
        total += x.shape[0]
    X = torch.cat(kept)[:n]  # (n, d)
    y = torch.where(X @ w_star >= 0, 1.0, -1.0)  # (n,)
    return X, y, w_star


def feasible_directions(
    X: torch.Tensor, y: torch.Tensor, angles: torch.Tensor
) -> torch.Tensor:
    """Version space of homogeneous 2-D perceptrons, on a grid of directions.

    The direction ``w = (cos a, sin a)`` is feasible when it classifies every point
    correctly, ``y_i <w, x_i> > 0`` for all ``i``. Each point allows a half-circle of
    directions; the version space is their intersection, an arc that can only shrink as
    points are added.

    Args:
        X: inputs, shape ``(n, 2)``.
        y: labels in ``{-1, +1}``, shape ``(n,)``.
        angles: directions in radians, shape ``(k,)``.

    Returns:
        Boolean tensor of shape ``(k,)``.
    """
    _check_xy(X, y)
    if X.shape[1] != 2:
        raise ValueError(
            "X must have shape (n, 2) for directions on the unit circle, got "
            f"{tuple(X.shape)}"
        )
    check_tensor(angles, "angles", ndim=1, floating=True, shape_doc="(k,)")
    return _feasible_directions(X, y, angles)


def _feasible_directions(
    X: torch.Tensor, y: torch.Tensor, angles: torch.Tensor
) -> torch.Tensor:
    """The check-free core of :func:`feasible_directions`."""
    W = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1).to(X)  # (k, 2)
    return ((W @ (y.to(X)[:, None] * X).T) > 0).all(dim=1)  # (k,)
