"""The same notebook executed twice prints the same numbers (on the CPU)."""

from __future__ import annotations

import os

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import toc_notebooks


def _printed(path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for o in cell.outputs:
            if o.output_type == "stream" and o.name == "stdout":
                out.append(o.text)
            elif o.output_type in ("execute_result", "display_data") and "text/plain" in o.data:
                if not any(k.startswith("image/") for k in o.data):
                    out.append(o.data["text/plain"])
    return out


@pytest.mark.slow
def test_first_notebook_is_deterministic(monkeypatch):
    monkeypatch.delenv("FLT_DEVICE", raising=False)
    path = toc_notebooks()[0]
    first, second = _printed(path), _printed(path)
    assert first, f"{path.name} printed nothing to compare"
    assert first == second, f"{path.name} printed different output on a second run"
