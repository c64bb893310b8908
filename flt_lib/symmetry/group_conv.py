"""Group convolutions on p4 and the commutant of a representation (Section 6.8).

A p4 feature map stores one N x N image per rotation r in {0, 1, 2, 3}: shape
``(B, C, 4, N, N)``, as produced by the lifting layer of Section 6.3
(:func:`flt_lib.symmetry.cnn.p4_lift`). A rotation acts on it by rotating every map and
shifting the rotation axis, :func:`flt_lib.symmetry.cnn.p4_rotate`.

- the p4 -> p4 group convolution (Cohen & Welling 2016), eq. ``eq-sym-p4-gconv``:
  ``y[o, r] = sum_{c, s} f[c, s] * rot90(psi[o, c, (s - r) mod 4], r)``
- :func:`commutant_basis`: all matrices M with ``A_out M = M A_in`` for given pairs,
  by a null-space solve (the general form of the solves of Sections 6.2 and 6.4)
- :func:`group_closure` and :func:`burnside_dimension`: the dimension of that space,
  ``(1/|G|) sum_g tr rho_out(g) tr rho_in(g)``, for a finite group
- canonicalisation into a standard orientation, chiral motif images, and a small p4
  network, for the comparison with data augmentation
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)

__all__ = [
    "P4CNN",
    "action_matrix",
    "burnside_dimension",
    "canonicalize_p4",
    "chiral_motif_images",
    "commutant_basis",
    "group_closure",
    "p4_group_conv",
    "p4_lift",
]


def _pad(x: torch.Tensor, p: int, mode: str) -> torch.Tensor:
    return F.pad(x, (p,) * 4, mode="circular" if mode == "circular" else "constant")


def _p4_lift(x: torch.Tensor, w: torch.Tensor, mode: str) -> torch.Tensor:
    """Lifting layer with a choice of padding. No argument checks: call
    :func:`p4_lift`."""
    xp = _pad(x, w.shape[-1] // 2, mode)
    w4 = torch.stack([torch.rot90(w, r, dims=(2, 3)) for r in range(4)], dim=1)
    y = F.conv2d(xp, w4.flatten(0, 1))  # (B, 4 C_out, N, N)
    return y.reshape(x.shape[0], w.shape[0], 4, *y.shape[2:])


def p4_lift(
    x: torch.Tensor, w: torch.Tensor, *, padding_mode: str = "circular"
) -> torch.Tensor:
    """The p4 lifting convolution ``y[:, o, r] = x * rot90(w[o], r)`` (eq.
    ``eq-sym-p4-lift``), with circular padding (an image on a torus) or zero padding.

    With ``padding_mode="zeros"`` it equals :func:`flt_lib.symmetry.cnn.p4_lift`.

    Args:
        x: square images, (B, C_in, N, N).
        w: odd square kernels, (C_out, C_in, k, k).
        padding_mode: ``"circular"`` or ``"zeros"``.

    Returns:
        (B, C_out, 4, N, N).
    """
    x = check_tensor(x, "x", ndim=4, floating=True, shape_doc="(B, C_in, N, N)")
    w = check_tensor(w, "w", ndim=4, floating=True, shape_doc="(C_out, C_in, k, k)")
    check_choice(padding_mode, "padding_mode", ["circular", "zeros"])
    _check_square(x, "x")
    _check_kernel(w, x.shape[1], "w")
    return _p4_lift(x, w, padding_mode)


def _p4_group_conv(f: torch.Tensor, psi: torch.Tensor, mode: str) -> torch.Tensor:
    """The p4 -> p4 group convolution, eq. ``eq-sym-p4-gconv``. No argument checks: call
    :func:`p4_group_conv`."""
    B, C, _, N, _ = f.shape
    O, k = psi.shape[0], psi.shape[-1]
    # filter for output rotation r: rotate space by r and shift the rotation axis by r
    w = torch.stack(
        [torch.rot90(torch.roll(psi, r, dims=2), r, dims=(3, 4)) for r in range(4)],
        dim=1,
    )  # (O, 4, C, 4, k, k)
    fp = _pad(f.reshape(B, C * 4, N, N), k // 2, mode)  # (B, 4C, N+2p, N+2p)
    y = F.conv2d(fp, w.reshape(O * 4, C * 4, k, k))  # (B, 4O, N, N)
    return y.reshape(B, O, 4, N, N)


def p4_group_conv(
    f: torch.Tensor, psi: torch.Tensor, *, padding_mode: str = "circular"
) -> torch.Tensor:
    """The p4 group convolution of Cohen & Welling (2016), eq. ``eq-sym-p4-gconv``.

    ``y[b, o, r] = sum_{c, s} f[b, c, s] * rot90(psi[o, c, (s - r) mod 4], r)``, where
    ``*`` is a 2-D cross-correlation with padding k // 2. Rotating the input
    (:func:`flt_lib.symmetry.cnn.p4_rotate`) rotates the output the same way.

    Args:
        f: p4 feature maps, (B, C_in, 4, N, N).
        psi: filters on p4, (C_out, C_in, 4, k, k), k odd.
        padding_mode: ``"circular"`` (exact for translations too) or ``"zeros"``.

    Returns:
        (B, C_out, 4, N, N).
    """
    f = check_tensor(f, "f", ndim=5, floating=True, shape_doc="(B, C_in, 4, N, N)")
    psi = check_tensor(
        psi, "psi", ndim=5, floating=True, shape_doc="(C_out, C_in, 4, k, k)"
    )
    check_choice(padding_mode, "padding_mode", ["circular", "zeros"])
    if f.shape[2] != 4 or psi.shape[2] != 4:
        raise ValueError(
            "f and psi must have a rotation axis of length 4 (dim 2), got "
            f"{f.shape[2]} and {psi.shape[2]}"
        )
    if f.shape[3] != f.shape[4]:
        raise ValueError(f"f must hold square maps, got {tuple(f.shape[3:])}")
    _check_kernel(psi.flatten(1, 2), f.shape[1] * 4, "psi")
    return _p4_group_conv(f, psi, padding_mode)


def _check_square(x: torch.Tensor, name: str) -> None:
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} must hold square images, got {tuple(x.shape[-2:])}")


def _check_kernel(w: torch.Tensor, c_in: int, name: str) -> None:
    k = w.shape[-1]
    if w.shape[-2] != k or k % 2 == 0:
        raise ValueError(
            f"{name} must hold odd square kernels, got {tuple(w.shape[-2:])}"
        )
    if w.shape[1] != c_in:
        raise ValueError(
            f"{name} must have {c_in} input channels to match the input, got "
            f"{w.shape[1]}"
        )


def action_matrix(
    op: Callable[[torch.Tensor], torch.Tensor], shape: Sequence[int]
) -> torch.Tensor:
    """The matrix of a linear map on tensors of a given shape, column j = op(e_j).

    Args:
        op: a linear map from tensors of ``shape`` to tensors (any shape).
        shape: the input shape, e.g. ``(4, N, N)`` for one p4 feature map.

    Returns:
        float64 (n_out, n_in) with n_in = prod(shape).
    """
    if not callable(op):
        raise TypeError(f"op must be callable, got {type(op).__name__}")
    shape = tuple(check_int(s, "shape", min_value=1) for s in shape)
    n = 1
    for s in shape:
        n *= s
    if n > 4096:
        raise ValueError(f"shape must have at most 4096 entries, got {shape} ({n})")
    basis = torch.eye(n, dtype=torch.float64).reshape(n, *shape)
    return torch.stack([op(e).reshape(-1) for e in basis], dim=1)


def commutant_basis(
    pairs: Sequence[tuple[torch.Tensor, torch.Tensor]], *, tol: float = 1e-9
) -> torch.Tensor:
    """An orthonormal basis of all M (n_out, n_in) with ``A_out M = M A_in`` for every
    pair.

    Given the representation matrices of a set of generators of a group on the input and
    the output space, the solutions are exactly the equivariant linear maps. Solved as a
    null space, the eigenvectors of ``sum_g K_g^T K_g`` with eigenvalue below ``tol``,
    where ``K_g vec(M) = vec(A_out M - M A_in)`` (row-major ``vec``).

    Args:
        pairs: ``(A_out, A_in)`` with A_out (n_out, n_out), A_in (n_in, n_in);
            n_out * n_in <= 4096.
        tol: eigenvalues below ``tol`` count as zero.

    Returns:
        float64 (dim, n_out, n_in).
    """
    if not isinstance(pairs, (list, tuple)) or not pairs:
        raise TypeError("pairs must be a non-empty list of (A_out, A_in) tensors")
    tol = check_real(tol, "tol", min_value=0.0, strict_min=True)
    n_out = n_in = None
    checked = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(
                f"pairs[{k}] must be a pair (A_out, A_in), got {pair!r:.60}"
            )
        A_out = check_tensor(
            pair[0], f"pairs[{k}][0]", ndim=2, shape_doc="(n_out, n_out)"
        )
        A_in = check_tensor(pair[1], f"pairs[{k}][1]", ndim=2, shape_doc="(n_in, n_in)")
        if n_out is None:
            n_out, n_in = A_out.shape[0], A_in.shape[0]
            if n_out * n_in > 4096:
                raise ValueError(
                    f"n_out * n_in must be <= 4096 unknowns, got {n_out} * {n_in}"
                )
        for name, A, n in (
            (f"pairs[{k}][0]", A_out, n_out),
            (f"pairs[{k}][1]", A_in, n_in),
        ):
            if tuple(A.shape) != (n, n):
                raise ValueError(
                    f"{name} must have shape ({n}, {n}), got {tuple(A.shape)}"
                )
        checked.append((A_out.double(), A_in.double()))
    return _commutant_basis(checked, tol=tol)


def _commutant_basis(
    pairs: Sequence[tuple[torch.Tensor, torch.Tensor]], *, tol: float
) -> torch.Tensor:
    """The check-free core of :func:`commutant_basis` (float64 square pairs)."""
    n_out, n_in = pairs[0][0].shape[0], pairs[0][1].shape[0]
    gram = None
    for A_out, A_in in pairs:
        K = torch.kron(A_out, torch.eye(n_in, dtype=torch.float64)) - torch.kron(
            torch.eye(n_out, dtype=torch.float64), A_in.T.contiguous()
        )  # vec(A_out M - M A_in) = K vec(M)
        gram = K.T @ K if gram is None else gram + K.T @ K
    evals, V = torch.linalg.eigh(gram)  # ascending
    return V[:, evals < tol].T.reshape(-1, n_out, n_in)


def group_closure(
    generators: Sequence[torch.Tensor], *, max_size: int = 4096
) -> list[torch.Tensor]:
    """All elements of the finite matrix group generated by ``generators``.

    Breadth-first products until no new matrix appears (matrices compared after rounding
    to 9 decimals).

    Args:
        generators: invertible (n, n) matrices of finite order.
        max_size: stop with an error if the group grows beyond this.

    Returns:
        A list of float64 (n, n) matrices, the identity first.
    """
    if not isinstance(generators, (list, tuple)) or not generators:
        raise TypeError("generators must be a non-empty list of (n, n) tensors")
    gens = [
        check_tensor(g, f"generators[{k}]", ndim=2).double()
        for k, g in enumerate(generators)
    ]
    n = gens[0].shape[0]
    for k, g in enumerate(gens):
        if tuple(g.shape) != (n, n):
            raise ValueError(
                f"generators[{k}] must have shape ({n}, {n}), got {tuple(g.shape)}"
            )
    max_size = check_int(max_size, "max_size", min_value=1)
    key = lambda M: tuple(torch.round(M * 1e9).to(torch.int64).reshape(-1).tolist())
    eye = torch.eye(n, dtype=torch.float64)
    elements, seen, frontier = [eye], {key(eye)}, [eye]
    while frontier:
        new = []
        for M in frontier:
            for g in gens:
                P = g @ M
                if key(P) not in seen:
                    seen.add(key(P))
                    elements.append(P)
                    new.append(P)
                    if len(elements) > max_size:
                        raise ValueError(
                            f"the group has more than max_size = {max_size} elements"
                        )
        frontier = new
    return elements


def burnside_dimension(
    rho_in: Sequence[torch.Tensor], rho_out: Sequence[torch.Tensor]
) -> float:
    """``(1/|G|) sum_g tr rho_out(g) tr rho_in(g)``: the dimension of the equivariant
    maps between two real orthogonal representations of a finite group.

    Args:
        rho_in, rho_out: the matrices of every group element, in the same order.

    Returns:
        The dimension (an integer-valued float up to rounding).
    """
    if len(rho_in) != len(rho_out) or not rho_in:
        raise ValueError(
            f"rho_in and rho_out must list the same group elements, got {len(rho_in)} "
            f"and {len(rho_out)}"
        )
    total = sum(
        float(torch.trace(a)) * float(torch.trace(b)) for a, b in zip(rho_in, rho_out)
    )
    return total / len(rho_in)


# ----------------------------------------------------------------------------------
# Canonicalisation, augmentation and a small p4 network (the sample-efficiency task)


_L_MOTIF = torch.tensor([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])


def chiral_motif_images(
    n: int, size: int, *, noise: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Images with an "L" (label 0) or its mirror image "J" (label 1), each rotated by a
    uniformly random multiple of 90 degrees and placed at a random cyclic position.

    The label is invariant under p4 (rotations by 90 degrees and cyclic shifts) but not
    under reflections: no rotation turns an L into a J.

    Args:
        n: number of images, >= 1.
        size: side N of the square images, >= 3.
        noise: standard deviation of the Gaussian background, >= 0.
        generator: a CPU torch.Generator.

    Returns:
        ``(X, y)``: X float32 (n, 1, N, N), y int64 (n,).
    """
    n = check_int(n, "n", min_value=1)
    size = check_int(size, "size", min_value=3)
    noise = check_real(noise, "noise", min_value=0.0)
    check_generator(generator)
    y = torch.randint(0, 2, (n,), generator=generator)
    rot = torch.randint(0, 4, (n,), generator=generator)
    shifts = torch.randint(0, size, (n, 2), generator=generator)
    X = noise * torch.randn(n, 1, size, size, generator=generator)
    motifs = [_L_MOTIF, _L_MOTIF.flip(1)]  # L and its mirror image J
    for i in range(n):
        canvas = torch.zeros(size, size)
        canvas[:3, :3] = torch.rot90(motifs[int(y[i])], int(rot[i]))
        X[i, 0] += torch.roll(
            canvas, (int(shifts[i, 0]), int(shifts[i, 1])), dims=(0, 1)
        )
    return X, y


def canonicalize_p4(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Rotate every image into a standard orientation chosen by a fixed lifting filter.

    ``r*(x) = argmax_r max_t p4_lift(x, w)[r, t]``, and the image is rotated back by
    ``r*``. Rotating x by 90 degrees raises r* by one (mod 4), so the output is the same
    image for x and for every rotation of x (up to ties in the argmax).

    Args:
        x: square images, (B, 1, N, N).
        w: one odd square kernel, (1, 1, k, k).

    Returns:
        (B, 1, N, N).
    """
    x = check_tensor(x, "x", ndim=4, floating=True, shape_doc="(B, 1, N, N)")
    w = check_tensor(
        w, "w", shape=(1, 1, None, None), floating=True, shape_doc="(1, 1, k, k)"
    )
    _check_square(x, "x")
    _check_kernel(w, x.shape[1], "w")
    return _canonicalize_p4(x, w)


def _canonicalize_p4(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`canonicalize_p4` (arguments already checked)."""
    score = _p4_lift(x, w.to(x.dtype), "circular").amax(dim=(3, 4))[:, 0]  # (B, 4)
    r_star = score.argmax(dim=1)  # (B,)
    return torch.stack(
        [torch.rot90(xi, -int(r), dims=(1, 2)) for xi, r in zip(x, r_star)]
    )


class P4CNN(nn.Module):
    """Lifting layer, ReLU, one p4 group convolution, ReLU, max-pooling over rotations
    and space, and a linear read-out: invariant to p4 by construction (circular
    padding)."""

    def __init__(
        self, channels: int, n_classes: int, *, generator: torch.Generator, k: int = 3
    ) -> None:
        super().__init__()
        channels = check_int(channels, "channels", min_value=1)
        n_classes = check_int(n_classes, "n_classes", min_value=1)
        k = check_int(k, "k", min_value=1)
        if k % 2 == 0:
            raise ValueError(f"k must be odd, got {k}")
        check_generator(generator)
        u = (
            lambda *shape, fan: (torch.rand(shape, generator=generator) * 2 - 1)
            / fan**0.5
        )
        self.w_lift = nn.Parameter(u(channels, 1, k, k, fan=k * k))
        self.psi = nn.Parameter(
            u(channels, channels, 4, k, k, fan=channels * 4 * k * k)
        )
        self.b1 = nn.Parameter(torch.zeros(channels))
        self.b2 = nn.Parameter(torch.zeros(channels))
        self.head = nn.Linear(channels, n_classes)
        with torch.no_grad():
            self.head.weight.copy_(u(n_classes, channels, fan=channels))
            self.head.bias.copy_(u(n_classes, fan=channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, 1, N, N) -> logits (B, n_classes)."""
        h = torch.relu(
            _p4_lift(x, self.w_lift, "circular") + self.b1[:, None, None, None]
        )
        h = torch.relu(
            _p4_group_conv(h, self.psi, "circular") + self.b2[:, None, None, None]
        )
        return self.head(h.amax(dim=(2, 3, 4)))  # pool over rotations and space
