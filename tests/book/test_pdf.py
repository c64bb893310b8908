"""The PDF (`make pdf`, opt-in like the browser test): the whole book through LaTeX.

Checks _build/latex/book.pdf for what a reader would notice: more than 100 pages; every
chapter's and appendix's title in its text (pdftotext); chapters and statements numbered as on
the website ("1 Connectionism", "Theorem 1.3"); the figures in it; no code line wrapped (Sphinx
marks a wrapped line with "˓→"); no box more than 10 pt overfull in the LaTeX log (a table or
line running into the margin); no proof drawn as a box with an empty title; and every figure,
listing and statement number that the website shows also in the PDF, with its caption. Needs
poppler-utils (pdfinfo, pdftotext, pdfimages).
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
TEX, LOG = PDF.with_suffix(".tex"), PDF.with_suffix(".log")
SITE = ROOT / "_build" / "html"
WRAP_MARK = "\u02d3\u2192"  # "˓→", Sphinx's mark at the start of a wrapped code line
MAX_OVERFULL_PT = 10.0

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


def test_no_code_line_wraps():
    out = subprocess.run(["pdftotext", "-layout", str(PDF), "-"], capture_output=True,
                         text=True, check=True).stdout
    pages = out.split("\f")
    wrapped = [(i + 1, line.strip()) for i, page in enumerate(pages)
               for line in page.splitlines() if WRAP_MARK in line]
    assert not wrapped, (
        f"{len(wrapped)} wrapped code lines on {len({p for p, _ in wrapped})} pages, e.g. "
        + "; ".join(f"p. {p}: {line[:70]}" for p, line in wrapped[:5])
    )


def test_no_box_overfull_by_more_than_10pt():
    if not LOG.exists():
        pytest.fail(f"no {LOG.relative_to(ROOT)}: run `make pdf`")
    log = LOG.read_text(encoding="utf-8", errors="replace")
    # _config.yml's preamble makes code inside boxes breakable by patching Sphinx's
    # sphinxVerbatim; a newer Sphinx may no longer match it
    assert "patch failed" not in log, "code in boxes is unbreakable: see _config.yml"
    over = [(float(m.group(2)), m.group(0)) for m in
            re.finditer(r"Overfull \\([hv])box \((\d+(?:\.\d+)?)pt too \w+\)[^\n]*", log)]
    bad = sorted((pt, line) for pt, line in over if pt > MAX_OVERFULL_PT)
    assert not bad, f"{len(bad)} boxes overfull by more than {MAX_OVERFULL_PT} pt: " + "; ".join(
        line for _, line in bad[-5:])


def test_every_character_has_a_rendering():
    """book.ext.latex declares every character pdflatex does not know; one it has no
    rendering for prints "?" (a combining circumflex did, in "R-hat")."""
    tex = TEX.read_text(encoding="utf-8")
    unknown = re.findall(r"\\DeclareUnicodeCharacter\{([0-9A-F]+)\}\{\?\}", tex)
    assert not unknown, "characters printed as '?': " + ", ".join(
        f"U+{u} {chr(int(u, 16))!r}" for u in unknown)
    assert not re.search("[\u0300-\u036f]", tex), "a combining accent is left in the .tex"


def _proofs_in_notebooks() -> int:
    return sum(
        "".join(c["source"]).count("{prf:proof}")
        for p in nbt.notebooks(ROOT)
        for c in json.loads(p.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "markdown"
    )


def test_proofs_read_proof_in_the_body_style():
    """No proof is an admonition box (whose title bar LaTeX draws empty); each starts with
    an italic "Proof." in the running text."""
    tex = TEX.read_text(encoding="utf-8")
    boxed = re.findall(r"\\begin\{sphinxadmonition\}\{note\}\s*(?:\{\s*\})?\s*"
                       r"\\sphinxAtStartPar\s*Proof\.", tex)
    assert not boxed, f"{len(boxed)} proofs still in a box with an empty title"
    plain = tex.count("\\sphinxstyleemphasis{Proof.}")
    expected = _proofs_in_notebooks()
    assert plain == expected, f"{plain} proofs start with an italic 'Proof.', {expected} in the book"


def test_every_appendix_title_is_in_the_pdf(text):
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    titles = []
    for part in toc.get("parts", []):
        if "appendi" in (part.get("caption") or "").lower():
            for chapter in part.get("chapters", []):
                md = (ROOT / f"{chapter['file']}.md").read_text(encoding="utf-8")
                titles.append(nbt.retitle_text(md).split("\n", 1)[0].lstrip("# ").strip())
    assert titles, "no appendix in _toc.yml"
    missing = [t for t in titles if t not in text]
    assert not missing, f"appendix titles missing from the PDF: {missing}"
    # lettered as on the website: "A Bayesian ...", not "8 Bayesian ..."
    unlettered = [t for k, t in enumerate(titles)
                  if not re.search(rf"\b{chr(ord('A') + k)} {re.escape(t)}", text)]
    assert not unlettered, f"appendices not lettered A, B, ... in the PDF: {unlettered}"


_NUMBERED = re.compile(
    r"\b(Figure|Listing|Table|Theorem|Definition|Lemma|Proposition|Corollary|Algorithm|"
    r"Exercise|Example|Remark|Assumption) ((?:\d+|[A-Z])\.\d+)\b"
)


def _site_captions() -> dict[str, set[str]]:
    """The numbered captions and statement titles each page of the website shows:
    {page: {"Figure 1.2", "Theorem 1.3", ...}} (from span.caption-number and the
    statements' title bars)."""
    out = {}
    for page in sorted((SITE / "chapters").rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        spans = re.findall(r'<span class="caption-number">([^<]+)</span>', html)
        spans += re.findall(r'<p class="admonition-title"[^>]*>\s*<span[^>]*>([^<(]+)', html)
        found = {m.group(0) for s in spans for m in _NUMBERED.finditer(s)}
        if found:
            out[page.relative_to(SITE).as_posix()] = found
    return out


def test_figures_listings_and_statements_keep_their_numbers_and_captions(text):
    """Every figure, listing, table and statement number of the website is a caption or
    statement title in the PDF ("Figure 5.9: ...", "Listing 5.2: ...", "Theorem 7.3
    (...)"): checked on every page of the website that has one, which the website must
    have (run `make book` before `make pdf`)."""
    if not SITE.is_dir():
        pytest.skip("no built website to compare with: run `make book`")
    captions = _site_captions()
    assert len(captions) > 20, f"only {len(captions)} pages of the website have captions"
    in_pdf = {m.group(0) for m in _NUMBERED.finditer(text)}
    missing = {page: sorted(c - in_pdf) for page, c in captions.items() if c - in_pdf}
    assert not missing, f"numbers on the website but not in the PDF: {missing}"
    for kind in ("Figure", "Theorem"):
        shown = [c for cs in captions.values() for c in cs if c.startswith(kind)]
        assert shown, f"no {kind} on the website"
    # A caption keeps its text: "Figure N.M: ..." with words after the colon.
    figures = re.findall(r"Figure (?:\d+|[A-Z])\.\d+: \w+", text)
    website_figures = {c for cs in captions.values() for c in cs if c.startswith("Figure")}
    assert len(set(figures)) >= len(website_figures), (
        f"{len(set(figures))} figure captions with text in the PDF, "
        f"{len(website_figures)} figures on the website"
    )
