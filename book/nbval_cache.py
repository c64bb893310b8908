"""A pytest plugin that stores nbval's executed notebooks in the book's execution cache.

nbval executes every notebook cell by cell, as a test. This plugin collects the outputs
of each cell as nbval receives them and, when every cell of a notebook has passed,
stores the executed notebook in the book's jupyter-cache (:func:`book.build.store`). The
strict build that follows in ``make test`` reads the outputs from there, so each
notebook is executed once.

Enable it with ``pytest -p book.nbval_cache`` (the Makefile does). Without nbval items
it does nothing.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest

_RUNS: dict[str, dict] = {}  # notebook node id -> {"t0", "outputs", "ok"}


def pytest_configure(config):
    """Start a notebook's kernel again if it dies while starting.

    The patch and the upstream issue it works around:
    :mod:`book.upstream.nbval_kernel_start`.
    """
    from book.upstream import nbval_kernel_start

    nbval_kernel_start.install()


def _is_cell(item) -> bool:
    return type(item).__name__ == "IPyNbCell"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    """Start a notebook's clock at its first cell (nbval starts the kernel there)."""
    if _is_cell(item) and item.parent.nodeid not in _RUNS:
        # The first cell's setup starts the notebook's kernel: time from here.
        _RUNS[item.parent.nodeid] = {
            "t0": time.perf_counter(),
            "outputs": {},
            "ok": True,
        }
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Record each cell's outputs as nbval received them, and whether it passed."""
    outcome = yield
    if not _is_cell(item):
        return
    state = _RUNS.get(item.parent.nodeid)
    if state is None:
        return
    report = outcome.get_result()
    if report.failed or report.skipped:
        state["ok"] = False
    if call.when == "call":
        state["outputs"][item.cell_num] = list(
            getattr(item, "test_outputs", None) or []
        )


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After a notebook's last cell: log its run, and cache it if every cell passed."""
    if not _is_cell(item) or (nextitem is not None and nextitem.parent is item.parent):
        return
    state = _RUNS.pop(item.parent.nodeid, None)
    if state is None:
        return
    from book import build

    seconds = time.perf_counter() - state["t0"]
    path = Path(str(item.parent.fspath))
    build.log_execution(path, seconds, by="nbval")
    nb = copy.deepcopy(item.parent.nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not state["ok"] or sorted(state["outputs"]) != list(range(len(code))):
        # A cell failed or did not run: cache nothing, the build will show the error.
        return
    for i, cell in enumerate(code):
        cell.outputs = state["outputs"][i]
        cell.execution_count = i + 1
        for out in cell.outputs:
            if out.get("output_type") == "execute_result":
                out["execution_count"] = i + 1
    build.store(build.open_cache(), nb, path, seconds)
