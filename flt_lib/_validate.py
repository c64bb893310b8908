"""Argument checks shared by every public ``flt_lib`` function.

Each helper raises ``TypeError`` (wrong kind of object) or ``ValueError`` (right kind,
wrong shape or range) with a message that names the argument, what was received, and
what was expected, e.g. ``"X must be a 2-D tensor of shape (n, d), got shape (3,)"``.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch

__all__ = [
    "check_choice",
    "check_generator",
    "check_int",
    "check_real",
    "check_tensor",
    "check_vector_or_batch",
    "check_xy",
]


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_tensor(
    value: object,
    name: str,
    *,
    ndim: int | None = None,
    shape: Sequence[int | None] | None = None,
    floating: bool = False,
    shape_doc: str | None = None,
) -> torch.Tensor:
    """Check that ``value`` is a tensor with the given number of dimensions / shape.

    Args:
        value: the object to check.
        name: the argument name used in the error message.
        ndim: required number of dimensions, or None for any.
        shape: required shape; ``None`` entries match any size.
        floating: if True, require a floating-point dtype.
        shape_doc: how the expected shape is written in the docs, e.g. ``"(n, d)"``.

    Returns:
        ``value``, unchanged.
    """
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    doc = f" {shape_doc}" if shape_doc else ""
    if ndim is not None and value.ndim != ndim:
        raise ValueError(
            f"{name} must be a {ndim}-D tensor{doc}, got shape {tuple(value.shape)}"
        )
    if shape is not None:
        if value.ndim != len(shape) or any(
            want is not None and got != want for got, want in zip(value.shape, shape)
        ):
            want_text = (
                "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            )
            raise ValueError(
                f"{name} must have shape {shape_doc or want_text}, got "
                f"{tuple(value.shape)}"
            )
    if floating and not value.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {value.dtype}")
    return value


def check_int(
    value: object,
    name: str,
    *,
    min_value: int | None = None,
    max_value: int | None = None,
) -> int:
    """Check that ``value`` is an integer (not a bool) within ``[min_value,
    max_value]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {_describe(value)}")
    value = int(value)
    if min_value is not None and value < min_value:
        raise ValueError(f"{name} must be >= {min_value}, got {value}")
    if max_value is not None and value > max_value:
        raise ValueError(f"{name} must be <= {max_value}, got {value}")
    return value


def check_real(
    value: object,
    name: str,
    *,
    min_value: float | None = None,
    max_value: float | None = None,
    strict_min: bool = False,
) -> float:
    """Check that ``value`` is a finite real number in range; return it as a float.

    ``strict_min=True`` makes the lower bound exclusive (``value > min_value``).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_describe(value)}")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {value}")
    if min_value is not None:
        if strict_min and not value > min_value:
            raise ValueError(f"{name} must be > {min_value}, got {value}")
        if not strict_min and value < min_value:
            raise ValueError(f"{name} must be >= {min_value}, got {value}")
    if max_value is not None and value > max_value:
        raise ValueError(f"{name} must be <= {max_value}, got {value}")
    return value


def check_choice(value: object, name: str, choices: Sequence[object]) -> object:
    """Check that ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(
            f"{name} must be one of {list(choices)}, got {_describe(value)}"
        )
    return value


def check_generator(value: object, name: str = "generator") -> torch.Generator:
    """Check that ``value`` is a ``torch.Generator``."""
    if not isinstance(value, torch.Generator):
        raise TypeError(
            f"{name} must be a torch.Generator (see flt_lib.rng.torch_generator), "
            f"got {type(value).__name__}"
        )
    return value


def check_xy(
    X: object, y: object, y_name: str = "y"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Check a data set: ``X`` a floating (n, d) tensor and ``y`` a floating (n,)
    tensor.

    Args:
        X: inputs, one example per row.
        y: targets or labels, one per row of ``X``.
        y_name: the name of ``y`` in the caller's signature, used in the error message.

    Returns:
        ``(X, y)`` unchanged.
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    y = check_tensor(y, y_name, ndim=1, floating=True, shape_doc="(n,)")
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"{y_name} must have one entry per row of X (length n = {X.shape[0]}), got "
            f"length {y.shape[0]}"
        )
    return X, y


def check_vector_or_batch(value: object, name: str, n: int) -> torch.Tensor:
    """Check that ``value`` is a floating tensor of shape (n,) (one state) or (B, n) (a
    batch).

    Args:
        value: the object to check.
        name: the argument name used in the error message.
        n: the required length of the last dimension.

    Returns:
        ``value``, unchanged.
    """
    check_tensor(value, name, floating=True)
    if value.ndim not in (1, 2) or value.shape[-1] != n:
        raise ValueError(
            f"{name} must have shape (n,) or (B, n) with n={n}, got "
            f"{tuple(value.shape)}"
        )
    return value
