"""Seeding and random generators.

The book's rule: the *global* random state is touched only by :func:`set_seed`, which every
notebook calls once in its setup cell. Everything random in ``flt_lib`` takes an explicit
``generator`` argument, created here, so that results do not depend on call order.

Random tensors are drawn on the CPU and then moved to the target device. CPU and CUDA
generators produce different streams, so drawing on the CPU is what makes a notebook print the
same data whatever ``FLT_DEVICE`` says.
"""

from __future__ import annotations

import random

import numpy as np
import torch

from flt_lib._validate import check_int

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

    Returns:
        A generator to pass as ``generator=`` to ``torch.randn`` and friends (on the CPU).
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

    Useful when one experiment has several random parts (data, initialisation, minibatches)
    that should not share a stream.

    Args:
        generator: the parent generator; it is advanced by ``n`` draws.
        n: how many children, ``n >= 1``.

    Returns:
        A list of ``n`` fresh CPU generators.
    """
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    n = check_int(n, "n", min_value=1)
    seeds = torch.randint(0, 2**62, (n,), generator=generator, device=generator.device)
    return [torch_generator(int(s)) for s in seeds]
