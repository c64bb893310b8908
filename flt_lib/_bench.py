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
    Each row is (loop time) / (scan time), both the best of 5 calls on one torch thread. The
    two-level chunked scan takes about 2 sqrt(T) = 128 sequential steps instead of 4096, so it
    wins while each step's cost is Python and dispatch overhead; at width 1024 every step does
    real work and the scan's extra passes over memory make it slower than the loop. Hillis and
    Steele's scan takes 12 steps but does O(T N log T) work, so it loses already at width 64.
    """
    import torch

    from flt_lib.recurrent.linear import scan_chunked, scan_hillis_steele, scan_loop

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        gen = torch.Generator().manual_seed(0)
        rows = []
        for width in (1, 64, 1024):
            a = 0.5 + 0.5 * torch.rand(4096, width, generator=gen)
            u = torch.randn(4096, width, generator=gen)
            t_loop = best_time(lambda: scan_loop(a, u))
            for name, scan in (("chunked", scan_chunked), ("Hillis-Steele", scan_hillis_steele)):
                t_scan = best_time(lambda: scan(a, u))
                goal = name == "chunked" and width <= 64
                rows.append(Row(
                    name=f"scan speed-up, {name}, N={width}", value=t_loop / t_scan, unit="x",
                    budget=10.0 if goal else None, at_least=True,
                    note=f"T=4096: loop {t_loop * 1e3:.1f} ms, scan {t_scan * 1e3:.2f} ms",
                ))
        return rows
    finally:
        torch.set_num_threads(before)


def attention_rows() -> list[Row]:
    """Chapter 5: the book's attention against torch's scaled_dot_product_attention (goal <= 1.5x)."""
    return []


def kernel_rows() -> list[Row]:
    """Every kernel row the chapters contribute."""
    return [*scan_rows(), *attention_rows()]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
