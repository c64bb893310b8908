"""The PDF (`make pdf`, opt-in like the browser test): the whole book through LaTeX.

Checks _build/latex/book.pdf: more than 100 pages, every chapter's title in its text (pdftotext),
chapters and statements numbered as on the website ("1 Connectionism", "Theorem 1.3"), and the
figures in it. Needs poppler-utils (pdfinfo, pdftotext, pdfimages).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from conftest import ROOT
from book import notebook as nbt

PDF = ROOT / "_build" / "latex" / "book.pdf"

pytestmark = pytest.mark.skipif(
    not os.environ.get("FLT_PDF_TEST"), reason="PDF test: run `make pdf` (needs LaTeX; see README)"
)


def _chapters() -> list[tuple[str, str]]:
    """(docname, title) of every chapter in a numbered part of _toc.yml, in order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    out = []
    for part in toc.get("parts", []):
        if not part.get("numbered"):
            continue
        for chapter in part.get("chapters", []):
            text = (ROOT / f"{chapter['file']}.md").read_text(encoding="utf-8")
            title = nbt.retitle_text(text).split("\n", 1)[0].lstrip("# ").strip()
            out.append((chapter["file"], title))
    return out


@pytest.fixture(scope="module")
def text() -> str:
    if not PDF.exists():
        pytest.fail(f"no {PDF.relative_to(ROOT)}: run `make pdf`")
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext not found: apt-get install -y poppler-utils")
    out = subprocess.run(["pdftotext", str(PDF), "-"], capture_output=True, text=True, check=True)
    return re.sub(r"\s+", " ", out.stdout)


def test_pdf_has_more_than_100_pages():
    info = subprocess.run(["pdfinfo", str(PDF)], capture_output=True, text=True, check=True)
    pages = int(re.search(r"^Pages:\s+(\d+)", info.stdout, re.M).group(1))
    assert pages > 100, f"the PDF has only {pages} pages"


def test_every_chapter_title_is_in_the_pdf(text):
    chapters = _chapters()
    assert chapters, "no numbered part in _toc.yml"
    missing = [title for _, title in chapters if title not in text]
    assert not missing, f"chapter titles missing from the PDF: {missing}"


def test_chapters_and_statements_are_numbered(text):
    first = _chapters()[0][1]
    # "(1\. )?": a title that still carries its hand-written number ("# 1. Connectionism")
    # reads "1 1. Connectionism"; test_book_presentation flags that separately.
    assert re.search(rf"\b1 (1\. )?{re.escape(first)}\b", text), f"no '1 {first}' in the PDF"
    assert re.search(r"\b(Theorem|Definition|Proposition|Lemma) 1\.\d+\b", text), (
        "no statement numbered by chapter ('Theorem 1.3') in the PDF"
    )


def test_pdf_has_the_figures():
    from test_book_presentation import figure_cells

    expected = sum(
        len(figure_cells(json.loads(p.read_text(encoding="utf-8"))["cells"]))
        for p in nbt.notebooks(ROOT)
    )
    out = subprocess.run(["pdfimages", "-list", str(PDF)], capture_output=True, text=True,
                         check=True).stdout.splitlines()[2:]
    images = [line for line in out if line.split()[2] == "image"]
    assert len(images) >= expected, f"{len(images)} images in the PDF, {expected} figure cells"
