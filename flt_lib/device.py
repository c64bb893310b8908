"""Where tensors live. ``FLT_DEVICE`` is read here and nowhere else.

``FLT_DEVICE`` may be ``cpu`` (the default), ``cuda``, ``cuda:N`` or ``mps``. Library functions
never call :func:`get_device` themselves: they take the device from their inputs. Notebooks call
it once, in the setup cell, and move data there.
"""

from __future__ import annotations

import os

import torch

ENV_VAR = "FLT_DEVICE"


def get_device(name: str | None = None) -> torch.device:
    """Return the device to compute on.

    Args:
        name: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"``; if None, read ``FLT_DEVICE``
            from the environment, defaulting to ``"cpu"``.

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
        raise TypeError(f"{source} must be a string such as 'cpu' or 'cuda', got {type(name).__name__}")
    text = name.strip().lower() or "cpu"
    try:
        dev = torch.device(text)
    except RuntimeError as err:
        raise ValueError(
            f"{source} must be 'cpu', 'cuda', 'cuda:N' or 'mps', got {name!r}"
        ) from err
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"{source} must be 'cpu', 'cuda', 'cuda:N' or 'mps', got {name!r}")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{source}={name!r} asks for CUDA, but torch sees no CUDA device")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(
                f"{source}={name!r} asks for CUDA device {dev.index}, "
                f"but only {torch.cuda.device_count()} are visible"
            )
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"{source}={name!r} asks for MPS, but torch sees no MPS device")
    return dev
