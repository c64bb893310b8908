"""Seeding and random generators.

The book's rule: the *global* random state is touched only by :func:`set_seed`, which
every notebook calls once in its setup cell. Everything random in ``flt_lib`` takes an
explicit ``generator`` argument, created here, so that results do not depend on call
order.

Random tensors are drawn on the CPU and then moved to the target device. CPU and CUDA
generators produce different streams, so drawing on the CPU is what makes a notebook
print the same data whatever ``FLT_DEVICE`` says.
"""

from __future__ import annotations

import random

import numpy as np
import torch

from flt_lib._validate import check_generator, check_int

__all__ = [
    "numpy_generator",
    "random_orthogonal",
    "set_seed",
    "spawn",
    "torch_generator",
]

_MAX_SEED = 2**63 - 1


def set_seed(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global random number generators.

    Args:
        seed: a non-negative integer below 2**63.
    """
    seed = check_int(seed, "seed", min_value=0, max_value=_MAX_SEED)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device


def torch_generator(seed: int) -> torch.Generator:
    """Return a new CPU ``torch.Generator`` seeded with ``seed``.

    Args:
        seed: a non-negative integer below 2**63.

    Returns: A generator to pass as ``generator=`` to ``torch.randn`` and friends (on
        the CPU).
    """
    seed = check_int(seed, "seed", min_value=0, max_value=_MAX_SEED)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed)
    return gen


def numpy_generator(seed: int) -> np.random.Generator:
    """Return a new ``numpy.random.Generator`` (PCG64) seeded with ``seed``.

    Args:
        seed: a non-negative integer below 2**63.
    """
    seed = check_int(seed, "seed", min_value=0, max_value=_MAX_SEED)
    return np.random.default_rng(seed)


def spawn(generator: torch.Generator, n: int) -> list[torch.Generator]:
    """Derive ``n`` independent child generators from ``generator``.

    Useful when one experiment has several random parts (data, initialisation,
    minibatches) that should not share a stream.

    Args:
        generator: the parent generator; it is advanced by ``n`` draws.
        n: how many children, ``n >= 1``.

    Returns:
        A list of ``n`` fresh CPU generators.
    """
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__}"
        )
    n = check_int(n, "n", min_value=1)
    seeds = torch.randint(0, 2**62, (n,), generator=generator, device=generator.device)
    return [torch_generator(int(s)) for s in seeds]


def random_orthogonal(
    rows: int,
    cols: int,
    *,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """A Haar-random matrix with orthonormal columns (rows >= cols) or orthonormal rows.

    The QR decomposition of a Gaussian matrix, with the signs of ``R``'s diagonal moved
    into ``Q``, which makes the distribution uniform (Haar) (Mezzadri 2007). Drawn on
    the CPU.

    Args:
        rows: number of rows, ``>= 1``.
        cols: number of columns, ``>= 1``.
        generator: a CPU ``torch.Generator``.
        dtype: floating dtype of the result.

    Returns: ``Q`` of shape (rows, cols) with ``Q^T Q = I`` if rows >= cols, else ``Q
        Q^T = I``.
    """
    rows = check_int(rows, "rows", min_value=1)
    cols = check_int(cols, "cols", min_value=1)
    check_generator(generator)
    big, small = max(rows, cols), min(rows, cols)
    A = torch.randn(big, small, generator=generator, dtype=dtype)  # (big, small)
    Q, R = torch.linalg.qr(A)  # Q: (big, small)
    Q = Q * torch.sign(torch.diagonal(R))  # fix the signs: Haar-distributed
    return Q if rows >= cols else Q.T
