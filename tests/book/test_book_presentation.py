"""Static checks on how the notebooks present themselves on the website and in the PDF.

- every line of notebook code is at most 88 characters (it fits the content column at 1280 px
  without sideways scrolling; printed lines are checked on the built site by
  tests/book/test_site_browser.py);
- every figure-producing code cell carries a numbered caption, a name and an alt text in its
  cell metadata (``mystnb.figure.caption``, ``mystnb.figure.name``, ``mystnb.image.alt``), and
  draws one figure;
- page titles carry no hand-written number ("# 3.1 Backpropagation"): the table of contents
  numbers chapters and sections, so the number would show twice;
- inline math never continues on a line that Markdown reads as a list item ("+ x$", "- y$"):
  the paragraph would break there and the reader would see raw TeX;
- every line of `flt_lib` library code is at most 88 characters, since ``show_source`` puts it
  on the page; the book's tooling, ``book/``, follows the same rule;
- every module of ``flt_lib`` and ``book`` has a docstring, and so does every public function
  and class of ``book`` (the library's own are checked where they are shown).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT
from book import notebook as nbt

NOTEBOOKS = nbt.notebooks(ROOT)
IDS = [str(p.relative_to(ROOT / "chapters")) for p in NOTEBOOKS]
MAX_CHARS = 88
# A cell draws a figure if it creates one or plots on axes. Checked against the executed book:
# it finds exactly the cells with image outputs (67 of 67, none extra, on 2026-11-23).
FIGURE_CALL = re.compile(
    r"\bplt\.(show|subplots|figure|subplot)\(|\bfig(?:ure)?\s*="
    r"|\.(imshow|plot|scatter|hist|bar|loglog|semilogy|semilogx|contourf?|pcolormesh|matshow"
    r"|fill_between|errorbar|step)\(|\bplot_\w+\("
)
# A file path as alt text: one word with a slash, or an image file name. (Alt text in words may
# well contain a slash, as in "the bound 1/(4m)".)
PATH_LIKE = re.compile(r"^\S*[/\\]\S*$|\.(png|jpe?g|svg|pdf)$", re.I)


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def figure_cells(cells: list[dict]) -> list[dict]:
    """The code cells that draw a figure (``show_source`` listings excluded)."""
    return [
        c for c in cells
        if c["cell_type"] == "code" and FIGURE_CALL.search(_src(c)) and "show_source(" not in _src(c)
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_code_lines_fit_the_column(path):
    long = [
        f"cell {c.get('id')} line {k}: {len(line)} chars: {line[:50]}..."
        for c in _cells(path) if c["cell_type"] == "code"
        for k, line in enumerate(_src(c).splitlines(), 1) if len(line) > MAX_CHARS
    ]
    assert not long, f"{path.name}: {len(long)} code lines over {MAX_CHARS} characters:\n  " + "\n  ".join(long)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_figures_have_caption_name_and_alt(path):
    problems = []
    for cell in figure_cells(_cells(path)):
        meta = cell.get("metadata", {}).get("mystnb", {})
        fig, img = meta.get("figure", {}), meta.get("image", {})
        where = f"cell {cell.get('id')}"
        if not str(fig.get("caption", "")).strip():
            problems.append(f"{where}: no mystnb.figure.caption")
        if not re.fullmatch(r"fig-[a-z0-9]+(-[a-z0-9]+)+", str(fig.get("name", ""))):
            problems.append(f"{where}: mystnb.figure.name {fig.get('name')!r} is not 'fig-<prefix>-<name>'")
        alt = str(img.get("alt", "")).strip()
        if len(alt) < 20 or PATH_LIKE.search(alt):
            problems.append(f"{where}: mystnb.image.alt {alt!r} does not describe the figure")
        if _src(cell).count("plt.show()") > 1:
            problems.append(f"{where}: {_src(cell).count('plt.show()')} plt.show() calls, one figure per cell")
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


def test_figure_names_are_unique():
    seen: dict[str, str] = {}
    dup = []
    for path in NOTEBOOKS:
        for cell in figure_cells(_cells(path)):
            name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name")
            if name and name in seen:
                dup.append(f"{name}: {seen[name]} and {path.name}")
            elif name:
                seen[name] = path.name
    assert not dup, "figure names used twice: " + "; ".join(dup)


@pytest.mark.parametrize("path", nbt.title_files(ROOT), ids=lambda p: str(p.relative_to(ROOT)))
def test_titles_carry_no_hand_written_number(path):
    if path.suffix == ".md":
        text = path.read_text(encoding="utf-8")
    else:
        text = _src(next(c for c in _cells(path) if c["cell_type"] == "markdown"))
    title = nbt.hand_numbered_title(text)
    assert title is None, (
        f"{path.relative_to(ROOT)}: title {title!r} carries its own number, and the table of "
        "contents numbers it again; run `python -m book.notebook retitle`"
    )


def test_figure_detection_on_examples():
    cells = [
        {"cell_type": "code", "source": "fig, ax = plt.subplots()\nax.plot(x)"},
        {"cell_type": "code", "source": "ax = plot_loglog(n, err)"},
        {"cell_type": "code", "source": "show_source(gd.step)"},
        {"cell_type": "code", "source": "print(plotted)"},
        {"cell_type": "markdown", "source": "plt.show()"},
    ]
    assert figure_cells(cells) == cells[:2]


def test_references_parse_and_carry_no_raw_tex():
    """references.bib parses, and no field holds TeX math, which the list would show raw."""
    from pybtex.database import parse_file

    data = parse_file(str(ROOT / "references.bib"))
    raw = [f"{key}.{name}: {value!r}" for key, entry in data.entries.items()
           for name, value in entry.fields.items() if "$" in value or "\\(" in value]
    assert not raw, "TeX math in references.bib (write it in Unicode): " + "; ".join(raw)


LIST_START = re.compile(r"\s*([+*-]|\d+[.)])\s")
UNESCAPED_DOLLAR = re.compile(r"(?<!\\)\$")


def broken_inline_math(markdown: str) -> list[str]:
    """Lines that start a list item while an inline ``$...$`` is open (display math removed)."""
    text = re.sub(r"\$\$.*?\$\$", "", markdown, flags=re.S)
    bad, open_ = [], False
    for line in text.split("\n"):
        if open_ and LIST_START.match(line):
            bad.append(line)
        if not line.strip():
            open_ = False
        open_ ^= len(UNESCAPED_DOLLAR.findall(line)) % 2 == 1
    return bad


def test_broken_inline_math_is_found():
    assert broken_inline_math("a $x\n+ y$ b") == ["+ y$ b"]
    assert broken_inline_math("a $x +{}\ny$ b\n\n- item $z$") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_inline_math_is_not_cut_by_a_list_item(path):
    bad = [f"cell {c.get('id')}: {line[:60]}" for c in _cells(path) if c["cell_type"] == "markdown"
           for line in broken_inline_math(_src(c))]
    assert not bad, f"{path.name}: inline math continues on a line that starts a list item:\n  " + (
        "\n  ".join(bad))


LIBRARY = sorted([*(ROOT / "flt_lib").rglob("*.py"), *(ROOT / "book").rglob("*.py")])


@pytest.mark.parametrize("path", LIBRARY, ids=[str(p.relative_to(ROOT)) for p in LIBRARY])
def test_library_lines_fit_the_column(path):
    long = [f"line {k}: {len(line)} chars" for k, line in
            enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > MAX_CHARS]
    assert not long, f"{path.relative_to(ROOT)}: lines over {MAX_CHARS} characters " + (
        "(show_source puts them on the page): " + ", ".join(long[:10]))


@pytest.mark.parametrize("path", LIBRARY, ids=[str(p.relative_to(ROOT)) for p in LIBRARY])
def test_modules_and_book_functions_have_docstrings(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    missing = [] if ast.get_docstring(tree) else ["the module"]
    if path.relative_to(ROOT).parts[0] == "book":
        missing += [
            f"{node.name} (line {node.lineno})" for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))
            and not node.name.startswith("_") and not ast.get_docstring(node)
        ]
    assert not missing, f"{path.relative_to(ROOT)}: no docstring for " + ", ".join(missing)
