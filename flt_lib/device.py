"""Where tensors live and how many threads compute on them. Environment variables are
read here.

``FLT_DEVICE`` may be ``cpu`` (the default), ``cuda``, ``cuda:N`` or ``mps``. Library
functions never call :func:`get_device` themselves: they take the device from their
inputs. Notebooks call it once, in the setup cell, and move data there with
:func:`to_device`.

``FLT_THREADS`` sets torch's intra-op thread count (default 1). The book's tensors are
small: with two threads on a two-core machine, two notebooks executed side by side fight
over the cores, and a small LSTM step measured 0.19 s with two threads against 0.0034 s
with one. The setup cell calls :func:`set_threads` once; nothing happens on import.
"""

from __future__ import annotations

import os
from typing import overload

import torch

ENV_VAR = "FLT_DEVICE"
THREADS_ENV_VAR = "FLT_THREADS"
DEFAULT_THREADS = 1

__all__ = [
    "ENV_VAR",
    "THREADS_ENV_VAR",
    "DEFAULT_THREADS",
    "get_device",
    "set_threads",
    "to_device",
]


def get_device(name: str | None = None) -> torch.device:
    """Return the device to compute on.

    Args:
        name: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"``; if None, read
            ``FLT_DEVICE`` from the environment, defaulting to ``"cpu"``.

    Returns:
        A ``torch.device``.

    Raises:
        ValueError: if the name is not a device name, or names an accelerator that this
            machine does not have.
    """
    source = "name"
    if name is None:
        name, source = os.environ.get(ENV_VAR, "cpu"), ENV_VAR
    if not isinstance(name, str):
        raise TypeError(
            f"{source} must be a string such as 'cpu' or 'cuda', "
            f"got {type(name).__name__}"
        )
    text = name.strip().lower() or "cpu"
    try:
        dev = torch.device(text)
    except RuntimeError as err:
        raise ValueError(
            f"{source} must be 'cpu', 'cuda', 'cuda:N' or 'mps', got {name!r}"
        ) from err
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(
            f"{source} must be 'cpu', 'cuda', 'cuda:N' or 'mps', got {name!r}"
        )
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"{source}={name!r} asks for CUDA, but torch sees no CUDA device"
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(
                f"{source}={name!r} asks for CUDA device {dev.index}, "
                f"but only {torch.cuda.device_count()} are visible"
            )
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(
            f"{source}={name!r} asks for MPS, but torch sees no MPS device"
        )
    return dev


def set_threads(n: int | None = None) -> int:
    """Set torch's intra-op thread count, and return it.

    Args:
        n: the number of threads, ``n >= 1``; if None, read ``FLT_THREADS`` from the
            environment, defaulting to 1.

    Returns:
        The thread count now in force (``torch.get_num_threads()``).

    Raises:
        ValueError: if the count (argument or environment) is not a positive integer.
    """
    source = "n"
    if n is None:
        text = os.environ.get(THREADS_ENV_VAR, "").strip()
        source = THREADS_ENV_VAR
        if not text:
            n = DEFAULT_THREADS
        else:
            try:
                n = int(text)
            except ValueError:
                raise ValueError(
                    f"{THREADS_ENV_VAR} must be a positive integer such as 1 or 2, "
                    f"got {text!r}"
                ) from None
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{source} must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"{source} must be a positive integer, got {n}")
    torch.set_num_threads(n)
    return torch.get_num_threads()


@overload
def to_device(x: torch.Tensor, /, *, device: torch.device | str) -> torch.Tensor: ...
@overload
def to_device(
    x: torch.Tensor, y: torch.Tensor, /, *rest: torch.Tensor, device: torch.device | str
) -> tuple[torch.Tensor, ...]: ...


def to_device(*tensors: torch.Tensor, device: torch.device | str):
    """Move one or more tensors to ``device``.

    Data are drawn on the CPU from seeded generators (so they are the same on every
    device) and then moved; this is the one call that does the moving,
    ``X, y = to_device(X, y, device=device)``.

    Args:
        *tensors: one or more tensors (any shape and dtype).
        device: the target device, e.g. the ``device`` of the setup cell.

    Returns:
        The tensor, if one was given, else a tuple of tensors in the same order.
    """
    if not tensors:
        raise ValueError("to_device needs at least one tensor, got none")
    for i, t in enumerate(tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(
                f"tensors[{i}] must be a torch.Tensor, got {type(t).__name__}"
            )
    if not isinstance(device, (torch.device, str)):
        raise TypeError(
            f"device must be a torch.device or a string, got {type(device).__name__}"
        )
    moved = tuple(t.to(device) for t in tensors)
    return moved[0] if len(moved) == 1 else moved
