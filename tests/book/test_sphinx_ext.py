"""book.ext, the book's Sphinx extension: appendix letters, author-year labels that the
citations repeat, the statement index, and the LaTeX fix-ups. A tiny book is built for real."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from book.ext import bibliography, latex, numbering
from conftest import ROOT

JB = Path(sys.executable).parent / "jupyter-book"

CONFIG = """\
title: Tiny
author: Test
only_build_toc_files: true
execute:
  execute_notebooks: "off"
bibtex_bibfiles: [refs.bib]
sphinx:
  extra_extensions: [sphinx_proof]
  local_extensions: {book.ext: "%s"}
  config:
    bibtex_reference_style: flt_author_year
    bibtex_default_style: flt_authoryear
    numfig: true
    math_numfig: true
    numfig_secnum_depth: 1
    prf_realtyp_to_countertyp: {definition: theorem}
"""
TOC = """\
format: jb-book
root: intro
parts:
  - caption: Chapters
    numbered: true
    chapters:
      - file: ch/index
        sections:
          - file: ch/one
  - caption: Appendix
    numbered: true
    chapters:
      - file: app/index
        sections:
          - file: app/one
  - caption: Back matter
    chapters:
      - file: statements
      - file: refs
"""
BIB = """\
@article{rum1, author = {Rumelhart, David and Hinton, Geoffrey and Williams, Ronald},
  title = {First}, journal = {J}, year = {1986}}
@article{rum2, author = {Rumelhart, David and Hinton, Geoffrey and Williams, Ronald},
  title = {Second}, journal = {J}, year = {1986}}
@article{hop, author = {Hopfield, John}, title = {Nets}, journal = {PNAS}, year = {1982}}
"""
STATEMENTS = """\
:::{{prf:definition}} A $\\gamma$-margin
:label: {p}-def

Text.
:::

:::{{prf:theorem}} Main, after {{cite:t}}`hop`
:label: {p}-thm

Text.
:::

$$ x = y $$ (eq-{p})

See {{prf:ref}}`{p}-thm` and {{eq}}`eq-{p}`.
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    files = {
        "_config.yml": CONFIG % ROOT, "_toc.yml": TOC, "refs.bib": BIB,
        "intro.md": "# Tiny\n\nCited {cite:p}`rum1`, {cite:t}`rum2` and {cite:p}`hop`.\n",
        "ch/index.md": "# Main chapter\n", "ch/one.md": "# Section\n\n" + STATEMENTS.format(p="c"),
        "app/index.md": "# Extra\n", "app/one.md": "# Appendix section\n\n" + STATEMENTS.format(p="a"),
        "statements.md": "# Statements\n\n```{flt-statement-index}\n```\n",
        "refs.md": "# References\n\n```{bibliography}\n```\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    proc = subprocess.run([str(JB), "build", "-W", "-n", "--keep-going", str(root)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root / "_build" / "html"


def _text(path: Path) -> str:
    return re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_chapters_are_numbered_and_the_appendix_lettered(site):
    chapter, appendix = _text(site / "ch" / "one.html"), _text(site / "app" / "one.html")
    assert "Definition 1.1" in chapter and "Theorem 1.2" in chapter and "(1.1)" in chapter
    assert "Definition A.1" in appendix and "Theorem A.2" in appendix and "(A.1)" in appendix
    assert "A.1. Appendix section" in _text(site / "intro.html")  # the sidebar


@pytest.mark.slow
def test_citations_repeat_the_bibliography_labels(site):
    intro, refs = _text(site / "intro.html"), _text(site / "refs.html")
    assert "Rumelhart et al., 1986a" in refs and "Rumelhart et al., 1986b" in refs
    assert "Hopfield, 1982" in refs
    assert "[Rumelhart et al., 1986a]" in intro and "Rumelhart et al. [1986b]" in intro
    assert "[Hopfield, 1982]" in intro


@pytest.mark.slow
def test_statement_index_lists_numbered_statements_with_math(site):
    html = (site / "statements.html").read_text(encoding="utf-8")
    text = _text(site / "statements.html")
    for item in ("Definition 1.1", "Theorem 1.2", "Definition A.1", "Theorem A.2", "Main"):
        assert item in text, f"{item} missing from the statement index"
    assert "\\(\\gamma\\)" in html  # the title's math stays math (MathJax typesets it)
    assert "mathjax" in html.lower()


@pytest.mark.slow
def test_citations_in_statement_titles_link_from_the_index(site):
    """A statement's title that cites a paper links the bibliography from the index's
    page too (copied as it was, the link was relative to the statement's page)."""
    html = (site / "statements.html").read_text(encoding="utf-8")
    refs = (site / "refs.html").read_text(encoding="utf-8")
    links = re.findall(r'href="([^"]*refs\.html#[^"]+)"', html)
    assert links, "no citation link in the statement index"
    for link in links:
        assert link.startswith("refs.html#"), f"{link}: not relative to statements.html"
        assert f'id="{link.split("#")[1]}"' in refs, f"{link}: no such anchor"


def test_latex_column_widths():
    from book.ext.latex_layout import LINE_CHARS, MAX_CHARS, MIN_CHARS, column_widths

    assert column_widths([["a b", "c"], ["d"]]) == [MIN_CHARS, MIN_CHARS]
    # the longest word (+2) is the least a column gets: "Week" over a column of digits
    assert column_widths([["Week", "x " * 100], ["1", "y"]]) == [6, MAX_CHARS]
    # long columns share what the words leave of the line
    widths = column_widths([["w " * 100, "v " * 100, "Chapter"]])
    assert sum(widths) <= LINE_CHARS + 1 and widths[2] >= len("Chapter") + 2
    assert widths[0] == widths[1]
    assert column_widths([]) == []
    # words that fill the line alone: shares in proportion to them, however long the
    # other entries are ("transition" beside five columns of long sentences)
    row = ["transition"] + ["a-much-longer-word " + "text " * 30] * 5
    widths = column_widths([row])
    assert widths == [12] + [20] * 5  # the longest words plus two



def test_tex_for_char():
    assert latex.tex_for_char("≤") == r"\ensuremath{\le}"
    assert latex.tex_for_char("γ") == r"\ensuremath{\gamma}"
    assert latex.tex_for_char("Ω") == r"\ensuremath{\Omega}"
    assert latex.tex_for_char("ς") == r"\ensuremath{\sigma}"
    assert latex.tex_for_char("₃") == r"\ensuremath{_{3}}"
    assert latex.tex_for_char("Α") is None  # capital alpha: no macro, LaTeX shows "?"
    assert latex.tex_for_char("☃") is None


def test_compose_accents():
    # R-hat has no precomposed character: an accent macro for text and for math
    assert latex.compose_accents("an improved {R\u0302} for") == (
        r"an improved {{\ifmmode\hat{R}\else\^{R}\fi}} for"
    )
    # e + combining acute is one character, which pdflatex knows
    assert latex.compose_accents("caf" + "e\u0301") == "caf\u00e9"
    assert latex.compose_accents("plain text") == "plain text"
    assert "\u0302" not in latex.compose_accents("x\u0302 and Z\u0302")


def test_number_parts_like_the_website():
    tex = "\\part{Front matter}\n\\part{Chapters}\n\\part{Appendix}\n\\part{Back matter}"
    out = numbering.number_parts_like_the_website(tex, {
        "Front matter": "unnumbered", "Chapters": "numbered", "Appendix": "appendix",
        "Back matter": "unnumbered"})
    assert out.splitlines() == [
        r"\setcounter{secnumdepth}{-2}", r"\part{Front matter}",
        r"\setcounter{secnumdepth}{2}", r"\part{Chapters}",
        r"\appendix\setcounter{secnumdepth}{2}"
        r"\renewcommand{\thefigure}{\thechapter.\arabic{figure}}"
        r"\renewcommand{\thetable}{\thechapter.\arabic{table}}"
        r"\renewcommand{\theliteralblock}{\thechapter.\arabic{literalblock}}"
        r"\renewcommand{\theequation}{\thechapter.\arabic{equation}}",
        r"\part{Appendix}",
        r"\setcounter{secnumdepth}{-2}", r"\part{Back matter}",
    ]


def test_author_year_label():
    from pybtex.database import Entry, Person

    def entry(*authors, year="2020"):
        e = Entry("article", fields={"year": year, "title": "T"})
        e.persons["author"] = [Person(a) for a in authors]
        return e

    assert bibliography.author_year_label(entry("Hopfield, John", year="1982")) == "Hopfield, 1982"
    assert bibliography.author_year_label(entry("Krotov, D", "Hopfield, J")) == "Krotov and Hopfield, 2020"
    assert bibliography.author_year_label(entry("Jacot, A", "Gabriel, F", "Hongler, C")) == "Jacot et al., 2020"
    assert bibliography.author_year_label(entry("van der Maaten, L")) == "van der Maaten, 2020"


def test_pdf_links_to_exercises_use_sphinx_exercise_labels():
    from book.upstream.sphinx_exercise_links import exercise_links

    tex = (r"{\hyperref[\detokenize{chapters/a/b:ex-one}]{\sphinxcrossref{X}}} "
           r"{\hyperref[\detokenize{chapters/a/b:thm-two}]{Y}} \phantomsection \label{exercise:ex-one}")
    out = exercise_links(tex)
    assert r"\hyperref[exercise:ex-one]" in out, "a link to an exercise must use its label"
    assert r"\hyperref[\detokenize{chapters/a/b:thm-two}]" in out, "other links stay as they are"
