"""Linear recurrences: diagonalisation, the parallel scan, the LRU and Mamba's gating
(Section 4.4).

A *diagonal linear recurrence* is z_t = a_t * z_{t-1} + u_t, elementwise over a state of
width N (prop-rnn-associative). Because the map z -> a z + u is affine, composing two
steps gives another affine map, and composition is associative: that is what lets a scan
compute all T states in far fewer than T sequential steps (Blelloch 1990; Martin & Cundy
2018).

- ``scan_loop``: the sequential loop, T dependent steps;
- ``scan_hillis_steele``: doubling, ceil(log2 T) steps of O(T N) work each;
- ``scan_chunked``: two levels, about 2 sqrt(T) steps and O(T N) work;
- ``diagonalise``, ``real_recurrence``: the change of basis z = P zeta over C;
- ``lru_lambda``, ``lru_ring_init``, ``lru_gamma``: Orvieto et al. (2023)'s
  parametrisation;
- ``zoh_discretise``, ``selective_scalar_ssm``, ``mingru``: Gu & Dao (2023)'s Theorem 1
  and Feng et al. (2024)'s minGRU.

Time is always the second-to-last dimension: ``u`` has shape (..., T, N), e.g.
(B, T, N).
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "scan_loop",
    "scan_hillis_steele",
    "scan_chunked",
    "diagonalise",
    "real_recurrence",
    "lru_lambda",
    "lru_ring_init",
    "lru_gamma",
    "zoh_discretise",
    "selective_scalar_ssm",
    "mingru",
]


def _scan_args(
    a: torch.Tensor, u: torch.Tensor, z0: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Validate (a, u, z0) of a diagonal recurrence; return a broadcast to u's shape."""
    check_tensor(u, "u", shape_doc="(..., T, N)")
    if u.ndim < 2:
        raise ValueError(
            f"u must have at least 2 dimensions (..., T, N), got shape {tuple(u.shape)}"
        )
    if not (u.is_floating_point() or u.is_complex()):
        raise TypeError(f"u must be a floating or complex tensor, got {u.dtype}")
    check_tensor(a, "a")
    try:
        shape = torch.broadcast_shapes(a.shape, u.shape)
    except RuntimeError:
        shape = None
    if shape != u.shape:
        raise ValueError(
            f"a must broadcast to u's shape {tuple(u.shape)} "
            f"(e.g. (N,) or (..., T, N)), got shape {tuple(a.shape)}"
        )
    if z0 is not None:
        check_tensor(z0, "z0")
        want = u.shape[:-2] + u.shape[-1:]
        try:
            ok = torch.broadcast_shapes(z0.shape, want) == want
        except RuntimeError:
            ok = False
        if not ok:
            raise ValueError(
                f"z0 must broadcast to {tuple(want)} (..., N), got shape "
                f"{tuple(z0.shape)}"
            )
    dtype = torch.promote_types(a.dtype, u.dtype)
    if z0 is not None:
        dtype = torch.promote_types(dtype, z0.dtype)
        z0 = z0.to(dtype)
    return a.to(dtype).expand(u.shape), u.to(dtype), z0


def scan_loop(
    a: torch.Tensor, u: torch.Tensor, z0: torch.Tensor | None = None
) -> torch.Tensor:
    """All states of z_t = a_t * z_{t-1} + u_t by the sequential loop
    (prop-rnn-associative).

    Args:
        a: decays, broadcastable to ``u``: (N,) for a time-invariant recurrence,
            (..., T, N) else.
        u: inputs, (..., T, N); real or complex.
        z0: the state before the first step, (..., N); zero if None.

    Returns:
        Z with Z[..., t, :] = z_{t+1}, shape (..., T, N).
    """
    a, u, z0 = _scan_args(a, u, z0)
    z = torch.zeros_like(u[..., 0, :]) if z0 is None else z0.expand_as(u[..., 0, :])
    out = []
    for a_t, u_t in zip(a.unbind(-2), u.unbind(-2)):   # T dependent steps
        z = torch.addcmul(u_t, a_t, z)                  # z = a_t * z + u_t
        out.append(z)
    return torch.stack(out, dim=-2)


def scan_hillis_steele(
    a: torch.Tensor, u: torch.Tensor, z0: torch.Tensor | None = None
) -> torch.Tensor:
    """The same states by Hillis and Steele's doubling scan: ceil(log2 T) steps.

    Element t holds the affine map z -> A_t z + U_t of the steps (t - d, t]. Combining
    it with element t - d doubles the span:
    (A, U)_t <- (A_t A_{t-d}, A_t U_{t-d} + U_t). After the span reaches T, U_t is z_t.
    Each round costs O(T N), so the work is O(T N log T).

    Args:
        a, u, z0: as in :func:`scan_loop`.

    Returns:
        Z, shape (..., T, N), equal to :func:`scan_loop` up to rounding.
    """
    a, u, z0 = _scan_args(a, u, z0)
    A, U = a, u
    if z0 is not None:                                  # fold z0 into the first input
        U = torch.cat(
            [(A[..., :1, :] * z0.unsqueeze(-2)) + U[..., :1, :], U[..., 1:, :]], dim=-2
        )
    T, d = u.shape[-2], 1
    while d < T:
        U = torch.cat(
            [
                U[..., :d, :],
                torch.addcmul(U[..., d:, :], A[..., d:, :], U[..., :-d, :]),
            ],
            dim=-2,
        )
        A = torch.cat([A[..., :d, :], A[..., d:, :] * A[..., :-d, :]], dim=-2)
        d *= 2
    return U


def scan_chunked(
    a: torch.Tensor,
    u: torch.Tensor,
    z0: torch.Tensor | None = None,
    *,
    chunk: int | None = None,
) -> torch.Tensor:
    """The same states by a two-level scan: chunks in parallel, then a short loop
    over chunks.

    Split the T steps into C chunks of length K. (1) Run the K steps of every chunk at
    once, from a zero state, and the running products of a inside each chunk
    (``cumprod``). (2) Loop over the C chunks to carry the state across chunk
    boundaries. (3) Add each chunk's carried-in state, propagated by the running
    products. Sequential steps: K + C, about 2 sqrt(T); work: O(T N), a small constant
    times the loop's.

    Args:
        a, u, z0: as in :func:`scan_loop`.
        chunk: the chunk length K >= 1; default ceil(sqrt(T)).

    Returns:
        Z, shape (..., T, N), equal to :func:`scan_loop` up to rounding.
    """
    a, u, z0 = _scan_args(a, u, z0)
    K = (
        math.isqrt(u.shape[-2] - 1) + 1
        if chunk is None
        else check_int(chunk, "chunk", min_value=1)
    )
    return _scan_chunked(a, u, z0, chunk=K)


def _scan_chunked(
    a: torch.Tensor, u: torch.Tensor, z0: torch.Tensor | None, *, chunk: int
) -> torch.Tensor:
    """The check-free core of :func:`scan_chunked` (arguments already checked)."""
    T, N, K = u.shape[-2], u.shape[-1], chunk
    C = -(-T // K)                                      # number of chunks
    pad = C * K - T
    # pad with a = 1, u = 0 (no effect)
    if pad:
        a = torch.cat([a, a.new_ones(a.shape[:-2] + (pad, N))], dim=-2)
        u = torch.cat([u, u.new_zeros(u.shape[:-2] + (pad, N))], dim=-2)
    lead = u.shape[:-2]
    a_c = a.reshape(lead + (C, K, N))                   # (..., C, K, N), a view
    u_c = u.reshape(lead + (C, K, N))
    # (1) local scans of all chunks at once: K steps on (..., C, N) slices
    z = torch.zeros_like(u_c[..., 0, :])
    local = []
    for a_k, u_k in zip(a_c.unbind(-2), u_c.unbind(-2)):
        z = torch.addcmul(u_k, a_k, z)
        local.append(z)
    local = torch.stack(local, dim=-2)                  # (..., C, K, N)
    # (..., C, K, N) products inside chunks
    prods = torch.cumprod(a_c, dim=-2)
    # (2) carries across chunks: C steps on (..., N) slices
    carry = torch.zeros_like(u[..., 0, :]) if z0 is None else z0.expand_as(u[..., 0, :])
    carries = []
    for p_c, l_c in zip(prods[..., -1, :].unbind(-2), local[..., -1, :].unbind(-2)):
        carries.append(carry)                           # state entering this chunk
        carry = torch.addcmul(l_c, p_c, carry)
    carried = torch.stack(carries, dim=-2)              # (..., C, N)
    # (3) fix-up, fully parallel
    Z = torch.addcmul(local, prods, carried.unsqueeze(-2))  # (..., C, K, N)
    return Z.reshape(lead + (C * K, N))[..., :T, :]


def diagonalise(A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Eigen-decomposition A = P diag(lambda) P^{-1} over the complex numbers
    (eq-rnn-diagonal).

    Args:
        A: a real or complex square matrix, (N, N), assumed diagonalisable.

    Returns:
        ``(lam, P, P_inv)``: eigenvalues (N,), eigenvectors as columns (N, N), and the
        inverse of P (N, N), all complex.

    Raises:
        ValueError: if A is not square, or P is numerically singular (A not
            diagonalisable).
    """
    check_tensor(A, "A", ndim=2, shape_doc="(N, N)")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square (N, N), got shape {tuple(A.shape)}")
    lam, P = torch.linalg.eig(A)
    cond = torch.linalg.cond(P).item()
    if not math.isfinite(cond) or cond > 1e10:
        raise ValueError(f"A is not (numerically) diagonalisable: cond(P) = {cond:.3g}")
    return lam, P, torch.linalg.inv(P)


def real_recurrence(
    A: torch.Tensor, B: torch.Tensor, x: torch.Tensor, z0: torch.Tensor | None = None
) -> torch.Tensor:
    """States of the dense linear recurrence z_t = A z_{t-1} + B x_t, by a loop
    (eq-rnn-linear).

    Args:
        A: state matrix, (N, N).
        B: input matrix, (N, n).
        x: inputs, (..., T, n).
        z0: initial state (..., N); zero if None.

    Returns:
        Z, shape (..., T, N), with Z[..., t, :] = z_{t+1}.
    """
    check_tensor(A, "A", ndim=2, shape_doc="(N, N)")
    N = A.shape[0]
    check_tensor(B, "B", ndim=2, shape_doc="(N, n)")
    if A.shape[1] != N or B.shape[0] != N:
        raise ValueError(
            f"A must be (N, N) and B (N, n), got {tuple(A.shape)} and {tuple(B.shape)}"
        )
    check_tensor(x, "x", shape_doc="(..., T, n)")
    if x.ndim < 2 or x.shape[-1] != B.shape[1]:
        raise ValueError(
            f"x must have shape (..., T, n) with n = {B.shape[1]}, got {tuple(x.shape)}"
        )
    Bx = x @ B.T                                            # (..., T, N)
    z = torch.zeros_like(Bx[..., 0, :]) if z0 is None else z0.expand_as(Bx[..., 0, :])
    out = []
    for bx_t in Bx.unbind(-2):
        z = z @ A.T + bx_t
        out.append(z)
    return torch.stack(out, dim=-2)


def lru_lambda(nu: torch.Tensor, phi: torch.Tensor) -> torch.Tensor:
    """Orvieto et al.'s eigenvalues lambda = exp(-exp(nu) + i phi) (eq-rnn-lru-param).

    |lambda| = exp(-exp(nu)) lies in (0, 1) for every real nu, so the recurrence is
    stable by construction. (The official code stores log(phi) instead of phi; |lambda|
    is unaffected.)

    Args:
        nu: real tensor of log-log decay rates, any shape.
        phi: real tensor of phases, broadcastable with ``nu``.

    Returns:
        Complex tensor of eigenvalues, the broadcast shape.
    """
    check_tensor(nu, "nu", floating=True)
    check_tensor(phi, "phi", floating=True)
    return _lru_lambda(nu, phi)


def _lru_lambda(nu, phi):
    return torch.exp(torch.complex(-torch.exp(nu), phi))


def lru_ring_init(
    N: int, *, r_min: float, r_max: float, max_phase: float = 2 * math.pi,
    generator: torch.Generator, dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw (nu, phi) so that lambda is uniform on the ring r_min <= |lambda| <= r_max.

    As in Orvieto et al. (2023, Lemma 3.2 and their Appendix A): |lambda|^2 is uniform
    on [r_min^2, r_max^2] and the phase uniform on [0, max_phase];
    nu = log(-log |lambda|).

    Args:
        N: number of eigenvalues, >= 1.
        r_min, r_max: ring radii, 0 <= r_min < r_max < 1.
        max_phase: largest phase, > 0.
        generator: a CPU torch.Generator.
        dtype: floating dtype of the result.

    Returns:
        ``(nu, phi)``, each of shape (N,).
    """
    N = check_int(N, "N", min_value=1)
    r_min = check_real(r_min, "r_min", min_value=0.0)
    r_max = check_real(r_max, "r_max", max_value=1.0)
    if not r_min < r_max < 1.0:
        raise ValueError(
            f"need 0 <= r_min < r_max < 1, got r_min={r_min}, r_max={r_max}"
        )
    max_phase = check_real(max_phase, "max_phase", min_value=0.0, strict_min=True)
    check_generator(generator)
    return _lru_ring_init(
        N,
        r_min=r_min,
        r_max=r_max,
        max_phase=max_phase,
        generator=generator,
        dtype=dtype,
    )


def _lru_ring_init(
    N: int, *, r_min: float, r_max: float, max_phase: float = 2 * math.pi,
    generator: torch.Generator, dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The check-free core of :func:`lru_ring_init` (arguments already checked)."""
    u1 = torch.rand(N, generator=generator, dtype=dtype)
    u2 = torch.rand(N, generator=generator, dtype=dtype)
    r2 = u1 * (r_max**2 - r_min**2) + r_min**2               # |lambda|^2, uniform
    nu = torch.log(-0.5 * torch.log(r2))
    return nu, max_phase * u2


def lru_gamma(lam: torch.Tensor) -> torch.Tensor:
    """The LRU's input normalisation gamma = sqrt(1 - |lambda|^2) (eq-rnn-lru-gamma).

    With z_t = lambda z_{t-1} + gamma x_t and white-noise x of unit variance,
    E|z_t|^2 -> 1.

    Args:
        lam: eigenvalues with |lambda| < 1, any shape (real or complex).

    Returns:
        Real tensor of the same shape.
    """
    check_tensor(lam, "lam")
    mod2 = lam.abs() ** 2
    if (mod2 >= 1).any():
        raise ValueError(
            f"lam must have |lambda| < 1, got max |lambda| = "
            f"{mod2.max().sqrt().item():.6g}"
        )
    return torch.sqrt(1 - mod2)


def zoh_discretise(
    A: torch.Tensor, B: torch.Tensor, delta: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Zero-order-hold discretisation of a diagonal SSM z' = A z + B x (eq-rnn-zoh).

    A_bar = exp(delta A) and B_bar = (delta A)^{-1} (exp(delta A) - 1) delta B
    = expm1(delta A) / A * B, elementwise (A diagonal, stored as a vector; A != 0).

    Args:
        A: diagonal of the state matrix, negative entries, any shape broadcastable with
            delta.
        B: input weights, broadcastable with A.
        delta: positive step sizes, e.g. (..., T, N).

    Returns:
        ``(A_bar, B_bar)``, broadcast to a common shape.
    """
    for name, t in (("A", A), ("B", B), ("delta", delta)):
        check_tensor(t, name, floating=True)
    if (A == 0).any():
        raise ValueError("A must have nonzero entries (the ZOH formula divides by A)")
    if (delta <= 0).any():
        raise ValueError(f"delta must be positive, got min {delta.min().item():.3g}")
    dA = delta * A
    return torch.exp(dA), torch.expm1(dA) / A * B


def selective_scalar_ssm(
    x: torch.Tensor, u: torch.Tensor, *, A: float = -1.0, B: float = 1.0
) -> torch.Tensor:
    """A selective SSM with scalar state per channel and delta_t = softplus(u_t)
    (eq-rnn-selective).

    z_t = A_bar_t z_{t-1} + B_bar_t x_t with (A_bar_t, B_bar_t) the ZOH discretisation
    at step delta_t = softplus(u_t): the step size, hence the decay, depends on the
    input.

    Args:
        x: inputs, (..., T, N).
        u: step-size logits, same shape as ``x``.
        A: the continuous-time decay, < 0.
        B: the input weight.

    Returns:
        Z, shape (..., T, N).
    """
    check_tensor(x, "x", floating=True, shape_doc="(..., T, N)")
    check_tensor(
        u, "u", shape=tuple(x.shape), floating=True, shape_doc="(..., T, N) like x"
    )
    A = check_real(A, "A", max_value=0.0)
    if A == 0:
        raise ValueError("A must be < 0, got 0.0")
    B = check_real(B, "B")
    return _selective_scalar_ssm(x, u, A, B)


def _selective_scalar_ssm(x, u, A, B):
    delta = torch.nn.functional.softplus(u)
    A_bar, B_bar = zoh_discretise(x.new_tensor(A), x.new_tensor(B), delta)
    return scan_chunked(A_bar, B_bar * x)


def mingru(
    h_tilde: torch.Tensor, g: torch.Tensor, z0: torch.Tensor | None = None
) -> torch.Tensor:
    """Feng et al.'s minGRU recurrence z_t = (1 - sigma(g_t)) z_{t-1} + sigma(g_t) h~_t
    (rem-rnn-lru-mingru).

    The gate sigma(g_t) depends on the input only, never on z_{t-1}, so the recurrence
    is linear in z and runs as a scan. (A common slip calls this recurrence, with sigma
    and 1 - sigma swapped, an "LRU"; Orvieto et al.'s LRU is time-invariant and has no
    gate.)

    Args:
        h_tilde: candidate states, (..., T, N).
        g: gate logits, same shape.
        z0: initial state (..., N); zero if None.

    Returns:
        Z, shape (..., T, N).
    """
    check_tensor(h_tilde, "h_tilde", floating=True, shape_doc="(..., T, N)")
    check_tensor(
        g,
        "g",
        shape=tuple(h_tilde.shape),
        floating=True,
        shape_doc="(..., T, N) like h_tilde",
    )
    s = torch.sigmoid(g)
    return scan_chunked(1 - s, s * h_tilde, z0)
