"""Prose says only what the page computes, in the readers' vocabulary.

1. Every decimal number in a notebook's markdown is glued from the page, a setting that the
   notebook's code writes, a cited paper's figure, or on the notebook's short allowlist
   (``book/check_numbers.py`` says how each is recognised).
2. No page, chapter file or library source shown by ``show_source`` uses production
   vocabulary: readers have never heard of the documents the book was planned from, and
   "seed" already means a random seed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from book.check_numbers import check_notebook
from conftest import ROOT, toc_notebooks

NOTEBOOKS = toc_notebooks()

BANNED = re.compile(
    r"\bseeds?\s+00[0-4]\b|source notes|source course|source documents?\b|calibration runs?"
    r"|chapter's plan|\bthe plan\b|\bthe issue\b|what the seeds|the seeds (?:say|write)"
    r"|seed file|\bthe seed's",
    re.IGNORECASE,
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_numbers_in_prose_come_from_the_page(path: Path) -> None:
    found = check_notebook(path)
    assert not found, (
        f"{len(found)} hand-typed number(s) in markdown: glue them from the page "
        "(flt_lib.glue), cite the paper they come from, or allowlist them with a reason "
        "in metadata.flt.allowed_numbers:\n" + "\n".join(str(v) for v in found)
    )


def _texts() -> list[tuple[str, str]]:
    """(where, text) for every notebook cell, chapter page and library source file."""
    out = []
    for path in sorted((ROOT / "chapters").rglob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            out.append((f"{path.relative_to(ROOT)} cell {i}", "".join(cell["source"])))
    for pattern in ("chapters/**/*.md", "flt_lib/**/*.py", "_config.yml", "_toc.yml"):
        for path in sorted(ROOT.glob(pattern)):
            out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


def test_no_production_vocabulary() -> None:
    hits = [
        f"{where}: {m.group(0)!r}"
        for where, text in _texts()
        for m in BANNED.finditer(text)
    ]
    assert not hits, "production vocabulary on reader-facing pages:\n" + "\n".join(hits)


def test_the_checker_finds_a_typed_number(tmp_path: Path) -> None:
    """The number check can fail: a typed, uncited, unglued number is reported."""
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": ["lr = 5e-3\n"], "outputs": []},
            {"cell_type": "markdown", "metadata": {}, "source": [
                "The loss fell to 0.4504 in Section 4.2 at lr 5e-3. ",
                "Smith et al. report 0.867 {cite:p}`smith`. ",
                "We measured {glue:text}`gap:.3f` and 0.25.",
            ]},
        ],
        "metadata": {"flt": {"allowed_numbers": [{"number": "0.25", "reason": "test"}]}},
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert [v.number for v in check_notebook(path)] == ["0.4504"]
