"""Start a notebook's kernel again when it dies while starting (nbval's kernels).

Seen once in a fresh-clone ``make test`` (one notebook of 52): ``RuntimeError: Kernel
died before replying to kernel_info``. nbval discards the kernel's stderr, so the cause
is not known; the usual one is two kernels, started at the same moment by two processes,
being handed the same free TCP port: jupyter/jupyter_client#487 (open), see also
ipython/ipykernel#412. Starting again is safe because no cell has run. The executor of
``make book`` (:mod:`book.build`) starts its kernels over IPC, which takes no port, and
keeps the retry as well. Remove this module when that issue is closed.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ATTEMPTS", "install", "is_kernel_start_failure", "retry_kernel_start"]

ATTEMPTS = 3


def is_kernel_start_failure(err: BaseException) -> bool:
    """Whether ``err`` says that a kernel died while starting, before it ran any
    code."""
    return isinstance(err, RuntimeError) and "before replying to kernel_info" in str(
        err
    )


def retry_kernel_start(
    start: Callable[..., Any], *, attempts: int = ATTEMPTS, pause: float = 1.0
) -> Callable[..., Any]:
    """Wrap ``start`` so that a kernel that dies while starting is started again.

    Args:
        start: the function that starts a kernel (and may raise the failure above).
        attempts: how many starts in all before the error is raised.
        pause: seconds between two starts.

    Returns:
        ``start`` wrapped; any other error is raised at once.
    """

    @functools.wraps(start)
    def started(*args: Any, **kwargs: Any) -> Any:
        for attempt in range(1, attempts + 1):
            try:
                return start(*args, **kwargs)
            except RuntimeError as err:
                if attempt == attempts or not is_kernel_start_failure(err):
                    raise
                print(
                    f"[book] kernel died while starting ({err}); "
                    f"attempt {attempt + 1} of {attempts}",
                    file=sys.stderr,
                    flush=True,
                )
                time.sleep(pause)
        raise AssertionError("unreachable")

    return started


def install() -> None:
    """Wrap ``nbval.kernel.start_new_kernel`` once (without nbval, do nothing)."""
    try:
        from nbval import kernel
    except ImportError:
        return
    if not getattr(kernel.start_new_kernel, "__wrapped__", None):
        kernel.start_new_kernel = retry_kernel_start(kernel.start_new_kernel)
