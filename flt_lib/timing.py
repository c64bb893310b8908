"""Wall-clock timing for the book's cost experiments: one implementation, used
everywhere.

Notebooks that compare costs (a scan against a loop, FFT against direct convolution),
the library's timing helpers and ``make bench`` all call :func:`best_time`. Timings are
printed or plotted, never asserted in tests: they depend on the machine and its load.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from flt_lib._validate import check_int

__all__ = ["best_time"]


def best_time(
    fn: Callable[[], object],
    *,
    repeat: int = 5,
    number: int = 1,
    warmup: bool = True,
    device: torch.device | str | None = None,
) -> float:
    """Best wall-clock time of one call of ``fn``, in seconds.

    Runs ``repeat`` rounds of ``number`` calls each and returns the fastest round
    divided by ``number``: the minimum is the measurement least disturbed by other
    processes.

    Args:
        fn: the function to time, called without arguments.
        repeat: rounds, ``repeat >= 1``.
        number: calls per round, ``number >= 1``.
        warmup: if True, call ``fn`` once before timing (first calls pay for
            allocation).
        device: if a CUDA device, synchronise before and after each round, since CUDA
            kernels run asynchronously.

    Returns:
        Seconds per call.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    repeat = check_int(repeat, "repeat", min_value=1)
    number = check_int(number, "number", min_value=1)
    if not isinstance(warmup, bool):
        raise TypeError(f"warmup must be a bool, got {type(warmup).__name__}")
    cuda = device is not None and torch.device(device).type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    if warmup:
        fn()
    best = float("inf")
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / number)
    return best
