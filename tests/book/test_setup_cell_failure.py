"""The setup cell, on a machine without flt_lib, when the install fails (no network, a fork
without the tag, a book not yet published): it stops with a message that names the spec it
tried (URL and tag) and what to do, instead of leaving the student with pip's git error."""

from __future__ import annotations

import os

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from conftest import ROOT
from book import notebook as nbt

UNREACHABLE = "flt_lib @ git+http://127.0.0.1:9/nowhere/flt-book.git@v0.0.0"


def test_setup_cell_explains_a_failed_install(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        # Pretend flt_lib is not installed (as on Colab): find_spec("flt_lib") is then None.
        nbformat.v4.new_code_cell("import sys\nsys.modules['flt_lib'] = None"),
        nbformat.v4.new_code_cell(nbt.expected_setup_source(ROOT)),
        nbformat.v4.new_code_cell("print('not reached')"),
    ]
    env = {**os.environ, "FLT_LIB_SPEC": UNREACHABLE, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "GIT_TERMINAL_PROMPT": "0"}
    old = dict(os.environ)
    os.environ.update(env)  # the kernel inherits this process's environment
    try:
        client = NotebookClient(nb, timeout=90, kernel_name="python3", allow_errors=False,
                                resources={"metadata": {"path": str(tmp_path)}})
        with pytest.raises(CellExecutionError):  # like "Run all", execution stops here
            client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    setup = nb.cells[1]
    errors = [o for o in setup.outputs if o.output_type == "error"]
    assert errors, f"the setup cell did not stop: {setup.outputs}"
    assert errors[0].ename == "SystemExit"
    message = errors[0].evalue
    import flt_lib

    assert UNREACHABLE in message, f"the message does not name the spec tried: {message}"
    assert f"v{flt_lib.__version__}" in message, f"the message does not name the tag: {message}"
    assert "FLT_LIB_SPEC" in message and "_config.yml" in message, message
    # pip's own words are in the message (a kernel does not always show a subprocess's output).
    assert "127.0.0.1" in message.split(UNREACHABLE, 1)[1], f"pip's error is not shown: {message}"
    assert not nb.cells[2].outputs, "a cell after the failed setup cell ran"
