"""Static checks on the book: table of contents, notebook hygiene, the house structure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, toc_files, toc_notebooks
from book import notebook as nbt

NOTEBOOKS = nbt.notebooks(ROOT)
IDS = [str(p.relative_to(ROOT / "chapters")) for p in NOTEBOOKS]


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found under chapters/"


def test_every_notebook_is_in_the_toc():
    listed = set(toc_files())
    missing = [p for p in NOTEBOOKS if str(p.relative_to(ROOT).with_suffix("")) not in listed]
    assert not missing, f"notebooks not listed in _toc.yml: {missing}"


def test_every_toc_entry_exists():
    absent = [
        f for f in toc_files() if not any((ROOT / f"{f}{ext}").exists() for ext in (".md", ".ipynb"))
    ]
    assert not absent, f"_toc.yml lists files that do not exist: {absent}"


def test_toc_order_matches_file_names():
    # Within a chapter, sections are listed in the order of their NN_ prefixes.
    for chapter in {p.parent for p in NOTEBOOKS}:
        listed = [Path(f).name for f in toc_files() if f.startswith(str(chapter.relative_to(ROOT)) + "/")]
        listed = [n for n in listed if n != "index"]
        assert listed == sorted(listed), f"{chapter.name}: sections out of order in _toc.yml: {listed}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_committed_without_outputs(path):
    dirty = [i for i, c in enumerate(_cells(path)) if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"{path.name}: code cells {dirty} carry outputs; run `make strip`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_setup_cell_matches_template(path):
    cells = _cells(path)
    i = nbt.setup_cell_index({"cells": cells})
    assert i is not None, f"{path.name} has no code cell"
    assert _src(cells[i]) == nbt.expected_setup_source(ROOT), (
        f"{path.name}: the setup cell differs from the template; run `make stamp`"
    )
    assert cells[i]["metadata"].get("tags") == nbt.SETUP_TAGS
    assert all(c["cell_type"] == "markdown" for c in cells[:i]), "only markdown may precede the setup cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_house_structure(path):
    """Title, theorem-style blocks, a check, a figure, two exercises with solutions, citations."""
    cells = _cells(path)
    md = "\n".join(_src(c) for c in cells if c["cell_type"] == "markdown")
    code = "\n".join(_src(c) for c in cells if c["cell_type"] == "code")
    assert _src(cells[0]).startswith("# "), f"{path.name}: the first cell must be the '# N.M Title' heading"
    assert re.search(r"\{prf:(definition|theorem|lemma|proposition)\}", md), f"{path.name}: no prf block"
    assert re.search(r"^\s*assert ", code, re.M), f"{path.name}: no check cell (assert)"
    assert re.search(r"\b(plt|ax|axes|fig)\b", code), f"{path.name}: no figure"
    n_ex = md.count("{exercise}")
    assert n_ex >= 2, f"{path.name}: {n_ex} exercises, need at least 2"
    assert md.count("{solution-start}") == md.count("{solution-end}") == n_ex, (
        f"{path.name}: every exercise needs one solution-start/solution-end pair"
    )
    assert "{cite" in md, f"{path.name}: no citation"
    assert "## Summary" in md and "## References" in md, f"{path.name}: needs Summary and References"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_solution_code_is_tagged(path):
    """Code cells inside a solution carry the `solution` tag, so `make student` removes them."""
    inside = False
    for i, cell in enumerate(_cells(path)):
        text = _src(cell)
        if cell["cell_type"] == "markdown":
            if "{solution-start}" in text:
                inside = "{solution-end}" not in text
            elif "{solution-end}" in text:
                inside = False
        elif inside:
            tags = cell.get("metadata", {}).get("tags", [])
            assert nbt.SOLUTION_TAG in tags, f"{path.name}: code cell {i} is inside a solution but untagged"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_kernelspec_and_cell_ids(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernelspec must be python3"
    missing = [i for i, c in enumerate(nb["cells"]) if "id" not in c]
    assert not missing, f"{path.name}: cells {missing} have no id (nbformat 4.5); run `make stamp`"


def test_toc_notebooks_helper_agrees():
    assert set(toc_notebooks()) == set(NOTEBOOKS)
