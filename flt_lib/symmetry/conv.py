"""Discrete convolution, circulant matrices and the DFT (Section 6.2).

Signals are the last axis of a tensor (leading axes are a batch). Conventions:

- circular convolution of ``x`` and ``h`` of length n:
  ``(h * x)[u] = sum_t h[t] x[(u - t) mod n]``                    (eq-sym-discrete-conv)
- linear (full) convolution of ``x`` (length n) with ``h`` (length m): length n + m - 1,
  ``(h * x)[u] = sum_t h[t] x[u - t]`` with ``x = 0`` outside ``0..n-1``
  (eq-sym-discrete-conv)
- cross-correlation, what deep-learning libraries call "convolution":
  ``(h star x)[u] = sum_t h[t] x[u + t]``, the ``n - m + 1`` fully overlapping positions
  (eq-sym-discrete-conv)
- circulant matrix ``C(h)[i, j] = h[(i - j) mod n]``, so ``C(h) x`` is ``h * x``
  (eq-sym-circulant)
- unnormalised DFT ``F[j, k] = exp(-2 pi i j k / n)``                       (eq-sym-dft)
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_int, check_tensor

__all__ = [
    "circulant",
    "circulant_deviation",
    "circular_conv",
    "cross_correlation",
    "dft_matrix",
    "fft_circular_conv",
    "fft_linear_conv",
    "linear_conv",
    "shift_commutant_basis",
    "shift_matrix",
    "toeplitz",
]


def _signal(x: object, name: str) -> torch.Tensor:
    x = check_tensor(x, name, floating=True)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(
            f"{name} must have a non-empty last axis (the signal), got shape "
            f"{tuple(x.shape)}"
        )
    return x


def shift_matrix(n: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The cyclic shift S with ``(S x)[i] = x[(i - 1) mod n]``, i.e.
    ``S x = roll(x, 1)``; (n, n)."""
    n = check_int(n, "n", min_value=1)
    return torch.roll(torch.eye(n, dtype=dtype), 1, dims=0)


def circulant(h: torch.Tensor) -> torch.Tensor:
    """The circulant matrix ``C[i, j] = h[(i - j) mod n]`` of a length-n kernel; (n, n).

    ``circulant(h) @ x`` is the circular convolution ``h * x`` (book eq.
    ``eq-sym-circulant``).
    """
    h = check_tensor(h, "h", ndim=1, floating=True, shape_doc="(n,)")
    n = h.shape[0]
    i = torch.arange(n, device=h.device)
    return h[(i[:, None] - i[None, :]) % n]  # (n, n)


def circulant_deviation(M: torch.Tensor) -> float:
    """How far ``M`` is from a circulant: ``max_ij |M[i, j] - M[(i - j) mod n, 0]|``."""
    M = check_tensor(M, "M", ndim=2, floating=True, shape_doc="(n, n)")
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be square, got shape {tuple(M.shape)}")
    return (M - circulant(M[:, 0])).abs().max().item()


def circular_conv(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Circular convolution from the definition: ``y[u] = sum_t h[t] x[(u - t) mod n]``.

    One shifted copy of ``x`` per kernel tap (book eq. ``eq-sym-discrete-conv``).

    Args:
        x: signals, (..., n).
        h: kernel, (m,) with m <= n (taps beyond m are zero).

    Returns:
        (..., n).
    """
    x = _signal(x, "x")
    h = check_tensor(h, "h", ndim=1, floating=True, shape_doc="(m,)")
    if h.shape[0] > x.shape[-1]:
        raise ValueError(
            f"h must not be longer than x (n = {x.shape[-1]}), got length "
            f"{h.shape[0]}"
        )
    return _circular_conv(x, h)


def _circular_conv(x, h):
    y = torch.zeros_like(x)
    for t in range(h.shape[0]):
        y = y + h[t] * torch.roll(x, t, dims=-1)  # x[(u - t) mod n]
    return y


def linear_conv(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Full linear convolution from the definition, length n + m - 1 (eq.
    ``eq-sym-discrete-conv``).

    Args:
        x: signals, (..., n).
        h: kernel, (m,).

    Returns:
        (..., n + m - 1); entry u is ``sum_t h[t] x[u - t]`` with x zero outside its
        support.
    """
    x = _signal(x, "x")
    h = _signal(h, "h")
    if h.ndim != 1:
        raise ValueError(f"h must be a 1-D tensor (m,), got shape {tuple(h.shape)}")
    n, m = x.shape[-1], h.shape[0]
    y = x.new_zeros(*x.shape[:-1], n + m - 1)
    for t in range(m):
        y[..., t : t + n] += h[t] * x  # x[u - t] lands at position u = t .. t + n - 1
    return y


def cross_correlation(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Valid cross-correlation ``y[u] = sum_t h[t] x[u + t]``, u = 0..n-m
    (eq-sym-discrete-conv).

    This is what ``torch.nn.functional.conv1d`` computes; it equals a convolution with
    the flipped kernel ``h[::-1]``.

    Args:
        x: signals, (..., n).
        h: kernel, (m,) with m <= n.

    Returns:
        (..., n - m + 1).
    """
    x = _signal(x, "x")
    h = check_tensor(h, "h", ndim=1, floating=True, shape_doc="(m,)")
    n, m = x.shape[-1], h.shape[0]
    if m > n:
        raise ValueError(f"h must not be longer than x (n = {n}), got length {m}")
    y = x.new_zeros(*x.shape[:-1], n - m + 1)
    for t in range(m):
        y = y + h[t] * x[..., t : t + n - m + 1]
    return y


def toeplitz(h: torch.Tensor, n: int) -> torch.Tensor:
    """The (n + m - 1, n) Toeplitz matrix T with ``T @ x = linear_conv(x, h)``:
    ``T[u, j] = h[u - j]``."""
    h = check_tensor(h, "h", ndim=1, floating=True, shape_doc="(m,)")
    n = check_int(n, "n", min_value=1)
    m = h.shape[0]
    u = torch.arange(n + m - 1, device=h.device)[:, None]
    j = torch.arange(n, device=h.device)[None, :]
    k = u - j
    inside = (k >= 0) & (k < m)
    return torch.where(inside, h[k.clamp(0, m - 1)], h.new_zeros(()))  # (n + m - 1, n)


def dft_matrix(n: int, dtype: torch.dtype = torch.complex128) -> torch.Tensor:
    """The unnormalised DFT matrix ``F[j, k] = exp(-2 pi i j k / n)``;
    ``F x = torch.fft.fft(x)``."""
    n = check_int(n, "n", min_value=1)
    j = torch.arange(n, dtype=torch.float64)
    angle = -2 * torch.pi * torch.outer(j, j) / n
    return torch.polar(torch.ones_like(angle), angle).to(dtype)  # (n, n)


def fft_circular_conv(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Circular convolution by the convolution theorem: ``ifft(fft(x) * fft(h))`` (real
    inputs).

    Args:
        x: signals, (..., n).
        h: kernel, (m,) with m <= n (zero-padded to n).

    Returns:
        (..., n).
    """
    x = _signal(x, "x")
    h = check_tensor(h, "h", ndim=1, floating=True, shape_doc="(m,)")
    n = x.shape[-1]
    if h.shape[0] > n:
        raise ValueError(
            f"h must not be longer than x (n = {n}), got length {h.shape[0]}"
        )
    return torch.fft.irfft(torch.fft.rfft(x, n=n) * torch.fft.rfft(h, n=n), n=n)


def fft_linear_conv(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Full linear convolution by FFT: zero-pad both, multiply spectra, keep n + m - 1
    entries.

    The padded length is the next power of two >= n + m - 1: any length >= n + m - 1
    makes the circular convolution of the padded signals equal the linear one, and
    powers of two are the FFT's fastest sizes. Costs O((n + m) log(n + m)) instead of
    the O(n m) of :func:`linear_conv`.

    Args:
        x: signals, (..., n).
        h: kernel, (m,).

    Returns:
        (..., n + m - 1).
    """
    x = _signal(x, "x")
    h = check_tensor(h, "h", ndim=1, floating=True, shape_doc="(m,)")
    return _fft_linear_conv(x, h)


def _fft_linear_conv(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`fft_linear_conv` (arguments already checked)."""
    L = x.shape[-1] + h.shape[0] - 1
    N = 1 << (L - 1).bit_length()  # next power of two >= L
    return torch.fft.irfft(
        torch.fft.rfft(x, n=N) * torch.fft.rfft(h, n=N), n=N
    )[..., :L]


def shift_commutant_basis(n: int, *, step: int = 1, tol: float = 1e-9) -> torch.Tensor:
    """An orthonormal basis of all n x n matrices M with ``T M = M T``, where
    ``T = S^step``.

    Solves the linear equations ``T M - M T = 0`` for the n^2 entries of M numerically:
    the null space of ``T kron I - I kron T^T`` (row-major vec), computed by an SVD. For
    step 1 the book's theorem ``thm-sym-circulant`` says the answer is the n-dimensional
    space of circulant matrices.

    Args:
        n: signal length, 1 <= n <= 24 (the SVD has n^2 unknowns).
        step: commute with the shift by ``step`` places, 1 <= step <= n.
        tol: singular values below ``tol`` count as zero.

    Returns:
        float64 tensor (k, n, n): k basis matrices (k = n for step 1).
    """
    n = check_int(n, "n", min_value=1, max_value=24)
    step = check_int(step, "step", min_value=1, max_value=n)
    return _shift_commutant_basis(n, step, tol)


def _shift_commutant_basis(n, step, tol):
    T = torch.linalg.matrix_power(shift_matrix(n), step)
    eye = torch.eye(n, dtype=torch.float64)
    # Row-major flattening: vec(A M B) = (A kron B^T) vec(M), so vec(T M - M T) is this
    # times vec(M).
    K = torch.kron(T, eye) - torch.kron(eye, T.T.contiguous())  # (n^2, n^2)
    _, sing, Vh = torch.linalg.svd(K)
    return Vh[sing < tol].reshape(-1, n, n)  # (k, n, n)
