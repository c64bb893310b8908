"""Compare a student's function with the library's on named inputs.

The graded coding exercises ask a reader to write a method the section teaches, and
then compare it with the library's implementation. :func:`agree` does the comparison: it
calls both functions on each named case and, at the first disagreement, raises an
``AssertionError`` that says which input failed and how (the expected and received
shapes or values). The otter-grader tests of the book's assignments are built on it, so
a student sees the same message in ``grader.check`` as on the page.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

__all__ = ["agree"]

_SHOW_VALUES = (
    12  # inputs and outputs with at most this many entries are printed in full
)


def agree(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    cases: Mapping[str, tuple],
    *,
    atol: float = 1e-6,
    rtol: float = 1e-5,
) -> int:
    """Assert that ``fn(*args)`` equals ``reference(*args)`` for every case.

    Args:
        fn: the function under test (a student's).
        reference: the function it should agree with.
        cases: ``{description: args}``, where ``args`` is the tuple of positional
            arguments. Each call gets its own deep copy, so an in-place edit by ``fn``
            cannot change what ``reference`` sees.
        atol, rtol: tolerances of ``torch.allclose`` for floating-point outputs.
            Integer and boolean outputs must be equal.

    Returns:
        The number of cases, all of which agreed.

    Raises:
        AssertionError: at the first case where ``fn`` raises, returns another type or
            shape, or returns other values. The message names the case and its inputs.
    """
    if fn is None:
        raise TypeError("fn is None: run the cell that defines your function first")
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not callable(reference):
        raise TypeError(f"reference must be callable, got {type(reference).__name__}")
    if not isinstance(cases, Mapping) or not cases:
        raise ValueError(
            f"cases must be a non-empty mapping {{description: args}}, got {cases!r}"
        )
    for key, args in cases.items():
        if not isinstance(key, str) or not isinstance(args, tuple):
            raise TypeError(
                "cases must map a str description to a tuple of arguments, got "
                f"{type(key).__name__} -> {type(args).__name__}"
            )
    for tol_name, tol in (("atol", atol), ("rtol", rtol)):
        if not isinstance(tol, (int, float)) or not tol >= 0:
            raise ValueError(f"{tol_name} must be a number >= 0, got {tol!r}")
    return _agree(fn, reference, cases, atol, rtol)


def _agree(fn, reference, cases, atol, rtol) -> int:
    name = getattr(fn, "__name__", "your function")
    for description, args in cases.items():
        expected = reference(*copy.deepcopy(args))
        where = f"on the case '{description}', {name}({_describe_args(fn, args)})"
        try:
            received = fn(*copy.deepcopy(args))
        except NotImplementedError:
            raise AssertionError(
                f"{name} is not written yet: it raised NotImplementedError {where}"
            ) from None
        except Exception as err:  # the student's bug, reported with its input
            raise AssertionError(
                f"{name} raised {type(err).__name__}: {err}\n  {where}"
            ) from err
        problem = _difference(expected, received, atol, rtol)
        if problem is not None:
            raise AssertionError(f"{name} is wrong {where}:\n  {problem}")
    return len(cases)


def _difference(expected, received, atol, rtol, path: str = "") -> str | None:
    """None if ``received`` matches ``expected``, else a sentence saying how not."""
    at = f" (in output{path})" if path else ""
    if isinstance(expected, (tuple, list)):
        if not isinstance(received, (tuple, list)) or len(received) != len(expected):
            return f"expected {_kind(expected)}, received {_kind(received)}{at}"
        for i, (e, r) in enumerate(zip(expected, received)):
            problem = _difference(e, r, atol, rtol, f"{path}[{i}]")
            if problem is not None:
                return problem
        return None
    if isinstance(expected, (torch.Tensor, np.ndarray, int, float, bool, np.number)):
        if not isinstance(
            received, (torch.Tensor, np.ndarray, int, float, bool, np.number)
        ):
            return f"expected {_kind(expected)}, received {_kind(received)}{at}"
        e, r = _as_tensor(expected), _as_tensor(received)
        if tuple(e.shape) != tuple(r.shape):
            return (
                f"expected shape {tuple(e.shape)}, received shape {tuple(r.shape)}{at}"
            )
        if e.dtype.is_floating_point or r.dtype.is_floating_point:
            e, r = e.double(), r.double()
            close = torch.isclose(r, e, atol=atol, rtol=rtol, equal_nan=True)
        else:
            close = r == e
        if bool(close.all()):
            return None
        bad = (~close).nonzero()[0].tolist()
        index = f" at index {tuple(bad)}" if bad else ""
        detail = (
            f"first difference{index}: expected {e[tuple(bad)].item():.6g}, "
            f"received {r[tuple(bad)].item():.6g}"
        )
        if e.numel() <= _SHOW_VALUES:
            detail = f"expected {_values(e)}, received {_values(r)}; {detail}"
        return detail + at
    if expected != received:
        return f"expected {expected!r}, received {received!r}{at}"
    return None


def _as_tensor(x) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    return torch.as_tensor(np.asarray(x))


def _kind(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"a tensor of shape {tuple(x.shape)}"
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape}"
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of {len(x)} items"
    return f"{type(x).__name__} {x!r}" if x is not None else "None"


def _values(t: torch.Tensor) -> str:
    flat = [
        f"{v:.4g}" if isinstance(v, float) else str(v) for v in t.flatten().tolist()
    ]
    return (
        "["
        + ", ".join(flat)
        + "]"
        + (f" (shape {tuple(t.shape)})" if t.ndim > 1 else "")
    )


def _describe_args(fn, args: tuple) -> str:
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    parts = []
    for i, a in enumerate(args):
        label = names[i] if i < len(names) else f"argument {i + 1}"
        parts.append(f"{label}={_short(a)}")
    return ", ".join(parts)


def _short(a) -> str:
    if isinstance(a, (torch.Tensor, np.ndarray)):
        t = _as_tensor(a)
        if t.numel() <= _SHOW_VALUES:
            return _values(t) if t.ndim else f"{t.item():.4g}"
        return f"<{_kind(a)[2:] if isinstance(a, np.ndarray) else _kind(a)[2:]}>"
    if isinstance(a, float):
        return f"{a:.4g}" if math.isfinite(a) else repr(a)
    if callable(a):
        return getattr(a, "__name__", f"<a {type(a).__name__}>")
    text = repr(a)
    return text if len(text) <= 40 else text[:37] + "..."
