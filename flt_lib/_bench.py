"""Book tooling (not part of the library API): ``make bench``, a benchmark table.

Timing is measured here and never asserted in ``make test`` (it would flake on a shared
machine). Each row has a budget; the table marks a row over its budget with ✗.

Usage, from the repository root::

    python -m flt_lib._bench             # the whole table (executes every notebook)
    python -m flt_lib._bench --kernels   # only the import and kernel rows (seconds)

The kernel rows come from the chapters that add kernels: :func:`scan_rows` (Chapter 4, the
parallel scan against the sequential loop) and :func:`attention_rows` (Chapter 5, the book's
attention against ``torch.nn.functional.scaled_dot_product_attention``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One line of the benchmark table."""

    name: str             # what was measured
    value: float          # the measurement, in `unit`
    unit: str             # "s", "ms" or "x" (a ratio)
    budget: float | None  # the largest acceptable value (or smallest, if `at_least`)
    at_least: bool = False  # True when the budget is a lower bound (a speed-up goal)
    note: str = ""        # one short remark (sizes, what the reference is)

    @property
    def ok(self) -> bool:
        if self.budget is None:
            return True
        return self.value >= self.budget if self.at_least else self.value <= self.budget


def best_time(fn: Callable[[], object], *, repeat: int = 5, number: int = 1) -> float:
    """Best wall-clock time of ``number`` calls of ``fn``, over ``repeat`` rounds, in seconds."""
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def scan_rows() -> list[Row]:
    """Chapter 4: the parallel scan of a diagonal linear recurrence against the sequential loop.

    At T = 4096 for state widths 1, 64 and 1024; goal: a speed-up of at least 10x at widths <= 64.
    """
    return []


def attention_rows() -> list[Row]:
    """Chapter 5: the book's attention against torch's scaled_dot_product_attention (goal <= 1.5x)."""
    return []


def kernel_rows() -> list[Row]:
    """Every kernel row the chapters contribute."""
    return [*scan_rows(), *attention_rows()]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
