"""The teacher-neuron regression task of Sections 7.1-7.3: inputs on the sphere, one
ReLU label."""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_generator, check_int, check_tensor

__all__ = ["single_index_data"]


def single_index_data(
    n: int, d: int, *, generator: torch.Generator, w_star: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Inputs uniform on the unit sphere, labels from one ReLU teacher neuron.

    ``x ~ Unif(S^{d-1})``, ``y = relu(sqrt(d) <w*, x>) - 1/sqrt(2 pi)`` (centred, so
    that ``E[y] ~ 0``); ``sqrt(d) <w*, x>`` is approximately N(0, 1).

    Args:
        n: number of examples.
        d: input dimension, ``d >= 2``.
        generator: CPU generator for the inputs (and for ``w*`` when it is not given).
        w_star: the teacher direction, shape (d,), unit norm; default a random unit
            vector.

    Returns:
        ``(X, y, w_star)`` with shapes (n, d), (n,), (d,), on the CPU.
    """
    n = check_int(n, "n", min_value=1)
    d = check_int(d, "d", min_value=2)
    check_generator(generator)
    if w_star is None:
        w_star = torch.randn(d, generator=generator)
        w_star = w_star / w_star.norm()
    else:
        check_tensor(w_star, "w_star", shape=(d,), floating=True, shape_doc="(d,)")
        if abs(w_star.norm().item() - 1.0) > 1e-4:
            raise ValueError(
                f"w_star must have unit norm, got norm {w_star.norm().item():.4g}"
            )
        w_star = w_star.cpu()
    X = torch.randn(n, d, generator=generator)  # (n, d)
    X = X / X.norm(dim=1, keepdim=True)
    z = math.sqrt(d) * (X @ w_star.to(X))  # (n,)
    y = torch.relu(z) - 1.0 / math.sqrt(2.0 * math.pi)
    return X, y, w_star
