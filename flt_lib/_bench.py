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
    """Chapter 5: the book's attention against torch's scaled_dot_product_attention (goal <= 1.5x).

    ``flt_lib.attention.scoring.attention`` materialises the (T_q, T_k) weights (it returns
    them); SDPA may use a fused kernel that never does. Both get the same inputs (float32, CPU,
    the same boolean mask for the causal row) and run with torch's current thread count. They
    are timed alternately, in CPU time of this process (``time.process_time``, which a busy
    shared machine inflates less than wall-clock time), best of many rounds; the value is the
    ratio ours / SDPA.
    """
    import torch
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from flt_lib.attention.scoring import attention, causal_mask

    def cpu_time(fn: Callable[[], object], number: int) -> float:
        start = time.process_time()
        for _ in range(number):
            fn()
        return (time.process_time() - start) / number

    rows = []
    for B, h, T, d, causal in [(8, 4, 64, 32, False), (8, 4, 256, 32, False),
                               (8, 4, 256, 32, True), (2, 8, 1024, 64, False)]:
        gen = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(B, h, T, d, generator=gen) for _ in range(3))
        mask = causal_mask(T) if causal else None
        number = max(1, 2**21 // (B * h * T * T))  # about the same work per round at every size
        ours_fn = lambda: attention(q, k, v, mask=mask)  # noqa: E731
        ref_fn = lambda: sdpa(q, k, v, attn_mask=mask)  # noqa: E731
        ours_fn(), ref_fn()  # warm-up
        ours = ref = float("inf")
        for _ in range(9):
            ours = min(ours, cpu_time(ours_fn, number))
            ref = min(ref, cpu_time(ref_fn, number))
        rows.append(Row(
            name=f"attention / SDPA, B={B} h={h} T={T} d={d}{' causal' if causal else ''}",
            value=ours / ref, unit="x", budget=1.5,
            note=f"ours {ours * 1e3:.3g} ms, SDPA {ref * 1e3:.3g} ms (CPU time)",
        ))
    return rows


def kernel_rows() -> list[Row]:
    """Every kernel row the chapters contribute."""
    return [*scan_rows(), *attention_rows()]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
