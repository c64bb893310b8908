"""``make bench``: a benchmark table of import cost, notebook run times and kernels.

Timing is measured here and never asserted in ``make test`` (it would flake on a shared
machine). Each row has a budget; the table marks a row over its budget with ✗.

Usage, from the repository root::

    python -m book.bench             # the whole table (executes every notebook)
    python -m book.bench --kernels   # only the import and kernel rows (seconds)

The kernel rows come from the chapters that add kernels: :func:`scan_rows` (Chapter 4,
the parallel scan against the sequential loop) and :func:`attention_rows` (Chapter 5,
the book's attention against ``torch.nn.functional.scaled_dot_product_attention``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from pathlib import Path

from book import ROOT
from flt_lib.timing import best_time


@dataclass(frozen=True)
class Row:
    """One line of the benchmark table."""

    name: str  # what was measured
    value: float  # the measurement, in `unit`
    unit: str  # "s", "ms" or "x" (a ratio)
    budget: float | None  # the largest acceptable value (or smallest, if `at_least`)
    at_least: bool = False  # True when the budget is a lower bound (a speed-up goal)
    note: str = ""  # one short remark (sizes, what the reference is)

    @property
    def ok(self) -> bool:
        if self.budget is None:
            return True
        return self.value >= self.budget if self.at_least else self.value <= self.budget


def scan_rows() -> list[Row]:
    """Chapter 4: the parallel scan of a diagonal linear recurrence against the
    sequential loop.

    At T = 4096 for state widths 1, 64 and 1024; goal: a speed-up of at least 10x at
    widths <= 64. Each row is (loop time) / (scan time), both the best of 5 calls on one
    torch thread. The two-level chunked scan takes about 2 sqrt(T) = 128 sequential
    steps instead of 4096, so it wins while each step's cost is Python and dispatch
    overhead; at width 1024 every step does real work and the scan's extra passes over
    memory make it no faster (usually slower) than the loop. Hillis and Steele's scan
    takes 12 steps but does O(T N log T) work: it wins by less than the chunked scan at
    width 64 (about 3x in Section 4.4) and loses at width 1024.
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
            for name, scan in (
                ("chunked", scan_chunked),
                ("Hillis-Steele", scan_hillis_steele),
            ):
                t_scan = best_time(lambda: scan(a, u))
                goal = name == "chunked" and width <= 64
                rows.append(
                    Row(
                        name=f"scan speed-up, {name}, N={width}",
                        value=t_loop / t_scan,
                        unit="x",
                        budget=10.0 if goal else None,
                        at_least=True,
                        note=f"T=4096: loop {t_loop * 1e3:.1f} ms, "
                        f"scan {t_scan * 1e3:.2f} ms",
                    )
                )
        return rows
    finally:
        torch.set_num_threads(before)


def attention_rows() -> list[Row]:
    """Chapter 5: the book's attention against torch's scaled_dot_product_attention.

    Two paths of ours, each as a ratio ours / SDPA:

    - ``flash.fast_attention`` (5.9), the path to use when no figure needs the weights:
      blocks of queries, causal blocks skip the keys they cannot see. Goal <= 1.5x at
      B = 2, h = 8, T = 1024, d = 64, causal and not. SDPA gets ``is_causal=True`` for
      the causal rows, its fastest causal path.
    - ``scoring.attention`` (5.1), which materialises and returns the (T_q, T_k) weights
      for the figures; SDPA gets the same boolean mask. No goal: it is kept as it is.

    All get float32 CPU inputs and torch's current thread count. They are timed
    alternately in blocks of at least 5 calls, in CPU time of this process
    (``time.process_time``, which a busy shared machine inflates less than wall-clock
    time), best of many rounds. Blocks rather than single calls, so that one slow call
    (the first after another kernel ran can find the buffers returned to the system)
    does not decide the row.
    """
    import torch
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from flt_lib.attention.flash import fast_attention
    from flt_lib.attention.scoring import attention, causal_mask

    def cpu_time(fn: Callable[[], object], number: int) -> float:
        start = time.process_time()
        for _ in range(number):
            fn()
        return (time.process_time() - start) / number

    def best(fns: dict[str, Callable[[], object]], number: int) -> dict[str, float]:
        for fn in fns.values():
            fn()  # warm-up
        out = {name: float("inf") for name in fns}
        for _ in range(9):
            for name, fn in fns.items():
                out[name] = min(out[name], cpu_time(fn, number))
        return out

    rows = []
    for B, h, T, d, causal in [
        (8, 4, 64, 32, False),
        (8, 4, 256, 32, False),
        (8, 4, 256, 32, True),
        (2, 8, 1024, 64, False),
        (2, 8, 1024, 64, True),
    ]:
        gen = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(B, h, T, d, generator=gen) for _ in range(3))
        mask = causal_mask(T) if causal else None
        number = max(5, 2**23 // (B * h * T * T))  # the allocator's steady state
        t = best(
            {
                "fast": lambda: fast_attention(q, k, v, causal=causal),
                "sdpa": lambda: sdpa(q, k, v, is_causal=causal),
                "weights": lambda: attention(q, k, v, mask=mask),
                "sdpa_mask": lambda: sdpa(q, k, v, attn_mask=mask),
            },
            number,
        )
        size = f"B={B} h={h} T={T} d={d}" + (" causal" if causal else "")
        rows.append(
            Row(
                name=f"fast_attention / SDPA, {size}",
                value=t["fast"] / t["sdpa"],
                unit="x",
                budget=1.5 if T >= 1024 else None,  # small T: per-call overhead
                note=f"ours {t['fast'] * 1e3:.3g} ms, SDPA {t['sdpa'] * 1e3:.3g} ms",
            )
        )
        rows.append(
            Row(
                name=f"attention with weights / SDPA, {size}",
                value=t["weights"] / t["sdpa_mask"],
                unit="x",
                budget=None,
                note=f"ours {t['weights'] * 1e3:.3g} ms, "
                f"SDPA {t['sdpa_mask'] * 1e3:.3g} ms (same mask)",
            )
        )
    return rows


def kernel_rows() -> list[Row]:
    """Every kernel row the chapters contribute."""
    return [*scan_rows(), *attention_rows()]


def median(values: list[float]) -> float:
    """The median of ``values`` (NaN for none)."""
    return statistics.median(values) if values else float("nan")


def import_row(repeat: int = 7) -> Row:
    """``import flt_lib`` beyond ``import torch``: median over fresh interpreters
    (budget 0.3 s)."""
    code = (
        "import time, torch; t = time.perf_counter(); import flt_lib; "
        "print(time.perf_counter() - t)"
    )
    times = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        times.append(float(out.stdout.strip()))
    return Row(
        "import flt_lib beyond import torch",
        median(times),
        "s",
        0.3,
        note=f"median of {repeat} fresh interpreters",
    )


def notebook_rows(*, jobs: int = 1, threads: str | None = None) -> list[Row]:
    """Every notebook executed afresh, ``jobs`` at a time: its run time against 60 s,
    and the median."""
    from book import build

    times = build.execute(
        force=True, jobs=jobs, threads=threads, by="bench", quiet=True
    )
    rows = [
        Row(f"notebook {name.removeprefix('chapters/')}", t, "s", 60.0)
        for name, t in times.items()
    ]
    rows.sort(key=lambda r: r.name)
    rows.append(
        Row(
            f"median notebook ({len(times)} notebooks)",
            median(list(times.values())),
            "s",
            15.0,
        )
    )
    rows.append(
        Row(
            "sum of notebook times",
            sum(times.values()),
            "s",
            None,
            note=f"{jobs} at a time" if jobs > 1 else "one at a time",
        )
    )
    return rows


def _machine(threads: str | None = None) -> str:
    import platform

    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    threads = threads or os.environ.get("FLT_THREADS") or "1"
    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
        f"torch {torch.__version__}, FLT_THREADS={threads}"
    )


def format_table(rows: list[Row]) -> str:
    """The rows as a Markdown table, with ✓ or ✗ against each budget."""
    lines = ["| what | measured | budget | | note |", "|---|---:|---:|:-:|---|"]
    for r in rows:
        value = f"{r.value:.3g} {r.unit}" if r.unit != "x" else f"{r.value:.2f}x"
        if r.budget is None:
            budget, mark = "", ""
        else:
            sign = ">=" if r.at_least else "<="
            budget = (
                f"{sign} {r.budget:g} {r.unit}"
                if r.unit != "x"
                else f"{sign} {r.budget:g}x"
            )
            mark = "✓" if r.ok else "✗"
        lines.append(f"| {r.name} | {value} | {budget} | {mark} | {r.note} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """``make bench``: print the table and write it to ``_build/bench.md``."""
    parser = argparse.ArgumentParser(
        prog="python -m book.bench", description="make bench"
    )
    parser.add_argument(
        "--kernels", action="store_true", help="only the import and kernel rows"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="notebooks executed at a time (default 1)"
    )
    parser.add_argument("--threads", default=None, help="FLT_THREADS for the notebooks")
    args = parser.parse_args(argv)
    from flt_lib.device import set_threads

    set_threads()
    t0 = time.perf_counter()
    rows = [import_row(), *kernel_rows()]
    if not args.kernels:
        rows += notebook_rows(jobs=args.jobs, threads=args.threads)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    text = (
        f"Benchmark of {stamp} on {_machine(args.threads)}, "
        f"{args.jobs} notebook(s) at a time; {time.perf_counter() - t0:.0f} s in all."
        f"\n\n{format_table(rows)}\n"
    )
    print(text)
    out = ROOT / "_build" / "bench.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
