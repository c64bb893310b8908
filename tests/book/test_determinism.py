"""The same notebook executed twice prints the same numbers (on the CPU).

In `make test` the first execution is nbval's (its outputs are in the execution cache); this
test executes a few notebooks once more and compares what they printed. Run alone, it executes
each notebook twice.
"""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT, toc_notebooks
from book import build as _build

# The first notebook, and notebooks whose numbers come out of seeded training loops.
CHOSEN = [
    "chapters/03_gradient_learning/04_sgd.ipynb",
    "chapters/07_feature_learning/06_token_selection.ipynb",
]


def _chosen():
    first = toc_notebooks()[0]
    paths = [first] + [ROOT / p for p in CHOSEN if (ROOT / p).exists() and ROOT / p != first]
    return paths


def _printed(nb) -> list[str]:
    """What each code cell printed, as one string per cell (executors split streams differently)."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        text = []
        for o in cell.outputs:
            if o.output_type == "stream" and o.name == "stdout":
                text.append(o.text)
            elif o.output_type in ("execute_result", "display_data") and "text/plain" in o.data:
                if not any(k.startswith("image/") for k in o.data):
                    text.append(o.data["text/plain"] + "\n")
        out.append("".join(text))
    return out


def _execute(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


@pytest.mark.book
@pytest.mark.parametrize("path", _chosen(), ids=lambda p: p.name)
def test_notebook_prints_the_same_numbers_twice(path, monkeypatch):
    monkeypatch.delenv("FLT_DEVICE", raising=False)
    cache = _build.open_cache()
    record = _build.cached_record(cache, nbformat.read(path, as_version=4))
    first = _printed(cache.get_cache_bundle(record.pk).nb) if record else _printed(_execute(path))
    second = _printed(_execute(path))
    assert any(first), f"{path.name} printed nothing to compare"
    diff = [(a, b) for a, b in zip(first, second) if a != b]
    assert first == second, f"{path.name} printed different output on a second run: {diff[:3]}"
