"""Capacity of the Hopfield network: cross-talk, bit-flip probability, critical load,
perfect recall.

Section 1.5 of the book. Patterns are the rows of ``patterns`` with shape (s, n) and
entries +-1; the network stores them with Hebb's rule with zero diagonal
(eq-hopfield-hebb), and the tie of ``sign`` at 0 goes to +1. The dynamics themselves
live in the other modules of this package.

References: Hopfield (1982); Amit, Gutfreund & Sompolinsky (1985);
McEliece, Posner, Rodemich & Venkatesh (1987).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flt_lib._validate import check_int, check_real, check_tensor
from flt_lib.connectionism.hopfield.network import hebbian_weights

__all__ = [
    "RSCapacity",
    "critical_load",
    "crosstalk",
    "flip_probability",
    "max_stable_load",
    "mceliece_capacity",
    "perfect_recall_prediction",
    "replica_symmetric_capacity",
    "replica_symmetric_overlap",
    "stability_table",
]


def _check_patterns(patterns: object) -> torch.Tensor:
    return check_tensor(patterns, "patterns", ndim=2, floating=True, shape_doc="(s, n)")


def crosstalk(patterns: torch.Tensor) -> torch.Tensor:
    """Cross-talk ``C_{t,i} = h_i(xi^t) - (n-1)/n xi^t_i`` at every stored pattern
    (eq-hopfield-crosstalk).

    Args:
        patterns: stored patterns, shape (s, n), entries +-1.

    Returns:
        Cross-talk, shape (s, n); over random patterns it has mean 0 and variance
        (s-1)(n-1)/n^2.
    """
    _check_patterns(patterns)
    return _crosstalk(patterns)


def _crosstalk(patterns: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`crosstalk` (arguments already checked)."""
    n = patterns.shape[1]
    # (s, n) fields at the patterns (W symmetric)
    H = patterns @ hebbian_weights(patterns)
    return H - (n - 1) / n * patterns


def flip_probability(n: int, s: int) -> float:
    """Gaussian prediction of the one-step bit-flip probability
    ``Phi(-sqrt((n-1)/(s-1)))`` (eq-hopfield-pflip).

    Args:
        n: number of neurons, ``n >= 2``.
        s: number of stored random patterns, ``s >= 2``.

    Returns:
        Probability that a given bit of a stored pattern is flipped by one update.
    """
    n = check_int(n, "n", min_value=2)
    s = check_int(s, "s", min_value=2)
    z = math.sqrt((n - 1) / (s - 1))
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def critical_load(
    loads: list[float], mean_overlaps: list[float], *, level: float = 0.9
) -> float:
    """The load where the mean overlap first falls below ``level``, by linear
    interpolation.

    Args:
        loads: increasing loads, shape (L,).
        mean_overlaps: mean final overlap at each load, shape (L,).
        level: the threshold on the overlap, in (0, 1).

    Returns:
        The interpolated crossing load.
    """
    level = check_real(level, "level", min_value=0.0, max_value=1.0, strict_min=True)
    a, m = [float(v) for v in loads], [float(v) for v in mean_overlaps]
    if len(a) != len(m) or len(a) < 2:
        raise ValueError(
            f"loads and mean_overlaps must have the same length >= 2, got {len(a)} and "
            f"{len(m)}"
        )
    if m[0] < level:
        raise ValueError(
            f"mean_overlaps: already below level {level} at the first load {a[0]}"
        )
    for j in range(1, len(a)):
        if m[j] < level:
            return a[j - 1] + (m[j - 1] - level) / (m[j - 1] - m[j]) * (a[j] - a[j - 1])
    raise ValueError(
        f"mean_overlaps: never falls below level {level}; extend the loads"
    )


def stability_table(
    patterns: torch.Tensor, *, n_targets: int | None = None
) -> torch.Tensor:
    """Which stored patterns are exact fixed points, as patterns are added one at a
    time.

    Exact arithmetic on the integers ``n * xi^t_i * h_i(xi^t)``: with the first ``s``
    patterns stored (Hebb, zero diagonal), pattern ``t < s`` is a fixed point iff
    ``sign(h_i(xi^t)) = xi^t_i`` for every neuron i (tie at 0 towards +1).

    Args:
        patterns: shape (s_max, n), entries +-1 (s_max * n < 2**24 so float32 stays
            exact).
        n_targets: examine patterns ``t < n_targets`` only (default: all s_max).

    Returns: Boolean tensor ``stable`` of shape (s_max, n_targets): ``stable[s-1, t]``
        is True iff pattern ``t`` is a fixed point of the network storing patterns
        ``0..s-1`` (False for ``t >= s``).
    """
    _check_patterns(patterns)
    S, n = patterns.shape
    if S * n >= 2**24:
        raise ValueError(
            f"patterns: s_max * n must be < 2**24 for exact float32 sums, got {S * n}"
        )
    T = (
        S
        if n_targets is None
        else check_int(n_targets, "n_targets", min_value=1, max_value=S)
    )
    return _stability_table(patterns, n_targets=T)


def _stability_table(patterns: torch.Tensor, *, n_targets: int) -> torch.Tensor:
    """The check-free core of :func:`stability_table` (arguments already checked)."""
    S, n = patterns.shape
    T = n_targets
    Z = patterns.float()  # (S, n), exact small integers
    M = Z @ Z.T  # (S, S) overlaps <xi^r, xi^t>
    stable = torch.zeros(S, T, dtype=torch.bool, device=patterns.device)
    for t in range(T):
        # contribution of pattern r to n xi^t_i h_i(xi^t):
        # xi^t_i xi^r_i (M_rt - xi^r_i xi^t_i)
        contrib = Z[t] * Z * (M[:, t : t + 1] - Z * Z[t])  # (S, n)
        aligned = contrib.cumsum(0)  # (S, n): row s-1 = the network storing s patterns
        ok = (aligned > 0) | ((aligned == 0) & (Z[t] > 0))
        stable[t:, t] = ok[t:].all(-1)
    return stable


def max_stable_load(stable: torch.Tensor) -> tuple[int, int]:
    """Largest s with all stored patterns fixed, and largest s with pattern 0 fixed.

    Both are "first failure minus one" as patterns are added in order.

    Args:
        stable: output of :func:`stability_table`, shape (s_max, T).

    Returns: ``(s_all, s_first)``; ``s_all`` only looks at targets t < T, and each value
        equals s_max if no failure occurs within the table.
    """
    check_tensor(stable, "stable", ndim=2, shape_doc="(s_max, T)")
    if stable.dtype != torch.bool:
        raise TypeError(f"stable must be a boolean tensor, got dtype {stable.dtype}")
    S, T = stable.shape
    rows = torch.arange(S, device=stable.device)[:, None]  # s - 1
    cols = torch.arange(T, device=stable.device)[None, :]  # t
    all_ok = (stable | (cols > rows)).all(-1)  # (S,): every stored target is fixed
    bad_all = (~all_ok).nonzero()
    bad_first = (~stable[:, 0]).nonzero()
    s_all = int(bad_all[0, 0]) if len(bad_all) else S
    s_first = int(bad_first[0, 0]) if len(bad_first) else S
    return s_all, s_first


def mceliece_capacity(n: int, *, all_patterns: bool = True) -> float:
    """Asymptotic perfect-recall capacity ``n / (4 ln n)`` (all patterns) or ``n / (2 ln
    n)`` (one pattern).

    McEliece, Posner, Rodemich & Venkatesh (1987), eq-hopfield-mceliece.

    Args:
        n: number of neurons, ``n >= 2``.
        all_patterns: True for "every stored pattern is a fixed point", False for "a
            given one is".
    """
    n = check_int(n, "n", min_value=2)
    return n / ((4.0 if all_patterns else 2.0) * math.log(n))


def perfect_recall_prediction(n: int, *, all_patterns: bool = True) -> float:
    """Finite-n prediction of the median largest s with exact recall (Gaussian +
    Poisson).

    With ``p(s) = flip_probability(n, s)`` the expected number of unstable bits is ``s n
    p(s)`` (all patterns) or ``n p(s)`` (one given pattern); treating unstable bits as
    rare independent events, "no unstable bit" has probability exp(-expected), which is
    1/2 when the expected count is ln 2. Solved for real s by bisection
    (eq-hopfield-finite-n).

    Args:
        n: number of neurons, ``n >= 4``.
        all_patterns: True for "every stored pattern is a fixed point", False for
            "pattern 0 is".

    Returns:
        The real s at which the expected number of unstable bits equals ln 2.
    """
    n = check_int(n, "n", min_value=4)

    def excess(s: float) -> float:
        p = 0.5 * math.erfc(math.sqrt((n - 1) / (s - 1)) / math.sqrt(2.0))
        return (s * n * p if all_patterns else n * p) - math.log(2.0)

    lo, hi = 1.0 + 1e-9, float(n)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


# ----------------------------------------------------------------------------- replica


@dataclass(frozen=True)
class RSCapacity:
    """The retrieval state of the replica-symmetric theory at the critical load."""

    alpha_c: float  # critical load: the largest alpha = s/n with a retrieval solution
    overlap: float  # overlap m = erf(y) of the retrieval state at alpha_c
    error_fraction: float  # fraction of wrong bits (1 - m) / 2 at alpha_c
    y: float  # the reduced variable y = m / sqrt(2 alpha r) at alpha_c


def _rs_root2alpha(y: float) -> float:
    """sqrt(2 alpha) as a function of y on the retrieval branch (eq-hopfield-rs)."""
    return math.erf(y) / y - 2.0 / math.sqrt(math.pi) * math.exp(-y * y)


def replica_symmetric_capacity() -> RSCapacity:
    """Critical load and retrieval overlap of the zero-temperature replica-symmetric
    theory.

    Amit, Gutfreund and Sompolinsky (1985): at zero temperature the retrieval state has
    overlap ``m = erf(y)``, where ``y > 0`` solves ``erf(y) = y (sqrt(2 alpha) + (2 /
    sqrt(pi)) exp(-y^2))`` (eq. ``eq-hopfield-rs``). Solved for ``alpha``, the right
    side gives ``sqrt(2 alpha) = erf(y) / y - (2 / sqrt(pi)) exp(-y^2)``; a solution
    exists iff ``alpha`` is at most the maximum of this function over ``y``, which is
    ``alpha_c``. The maximum is found by golden-section search to machine precision.

    Returns:
        An :class:`RSCapacity` (``alpha_c`` about 0.138, overlap about 0.967).
    """
    lo, hi = 0.5, 3.0  # the maximiser lies in between (the function is unimodal there)
    inv_phi = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - inv_phi * (hi - lo), lo + inv_phi * (hi - lo)
    while hi - lo > 1e-12:
        if _rs_root2alpha(a) < _rs_root2alpha(b):
            lo, a, b = a, b, a + inv_phi * (hi - a)
        else:
            hi, b, a = b, a, b - inv_phi * (b - lo)
    y = 0.5 * (lo + hi)
    m = math.erf(y)
    return RSCapacity(
        alpha_c=_rs_root2alpha(y) ** 2 / 2.0,
        overlap=m,
        error_fraction=(1.0 - m) / 2.0,
        y=y,
    )


def replica_symmetric_overlap(alpha: float) -> float:
    """Overlap ``m`` of the replica-symmetric retrieval state at load ``alpha <=
    alpha_c``.

    Solves ``sqrt(2 alpha) = erf(y) / y - (2 / sqrt(pi)) exp(-y^2)`` for the retrieval
    root ``y >= y_c`` by bisection and returns ``m = erf(y)`` (eq. ``eq-hopfield-rs``).

    Args:
        alpha: the load ``s / n``, ``0 <= alpha <= alpha_c``.

    Returns:
        The overlap, a float in ``(0.96, 1]``.

    Raises:
        ValueError: if ``alpha`` exceeds ``alpha_c`` (there is no retrieval state).
    """
    alpha = check_real(alpha, "alpha", min_value=0.0)
    cap = replica_symmetric_capacity()
    if alpha > cap.alpha_c:
        raise ValueError(
            f"alpha must be <= alpha_c = {cap.alpha_c:.4f} for a retrieval state, got "
            f"{alpha}"
        )
    if alpha == 0.0:
        return 1.0
    target = math.sqrt(2.0 * alpha)
    lo, hi = cap.y, 50.0  # the function decreases from its maximum at y_c towards 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _rs_root2alpha(mid) > target else (lo, mid)
    return math.erf(0.5 * (lo + hi))
