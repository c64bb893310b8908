"""flt_lib: the small shared library behind the executable textbook on deep-learning
theory.

The package is deliberately light to import: only :mod:`flt_lib.rng` and
:mod:`flt_lib.device` (which need nothing beyond torch) are loaded eagerly. Topic
modules (``connectionism``, ``feedforward``, ``optim``, ``flt``, ...) and
:mod:`flt_lib.plotting` (which pulls in matplotlib) are imported on first attribute
access, so ``import flt_lib`` costs little beyond ``import torch``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from flt_lib import device, rng

__version__ = "0.1.0"

# Submodules that are loaded on first use (PEP 562), keeping ``import flt_lib`` cheap.
_LAZY_SUBMODULES = frozenset(
    {
        "glue",
        "grading",
        "plotting",
        "source",
        "stats",
        "timing",
        "connectionism",
        "feedforward",
        "autodiff",
        "optim",
        "training",
        "recurrent",
        "attention",
        "symmetry",
        "flt",
        "bayes",
    }
)

__all__ = ["__version__", "device", "rng", *sorted(_LAZY_SUBMODULES)]


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"flt_lib.{name}")
    raise AttributeError(f"module 'flt_lib' has no attribute {name!r}")
