"""Book tooling (not part of the library API): a small Sphinx extension for the website and PDF.

Loaded by ``_config.yml`` (``sphinx.extra_extensions: [flt_lib._sphinx]``). It does four things
that no configuration value of Jupyter Book does (the website's CSS, JavaScript and favicon
live in ``_static/`` at the book's root, which Jupyter Book includes by itself):

1. **Appendix letters.** Chapters in a part of ``_toc.yml`` whose caption starts with
   "Appendix" (or "Appendices") are numbered A, B, ... instead of continuing the chapter
   numbers, and so are their sections, theorems, equations and figures ("Theorem A.2",
   "(A.3)"). Sphinx numbers with integers; this renames the chapter's number after Sphinx
   has assigned them.
2. **Author-year bibliography labels.** The pybtex style ``flt_authoryear`` formats entries
   like ``plain`` but labels them "Author, Year" ("Krotov and Hopfield, 2016", "Jacot et
   al., 2018"), the form the text's ``{cite:p}``/``{cite:t}`` use, so that the list and
   the citations agree. Works by the same authors in the same year get 1986a, 1986b, ...,
   and the reference style ``flt_author_year`` cites them with that letter too.
3. **The execution-times table** (``{nb-exec-table}``) lists sections by number and title
   in reading order, with run time and status only, so that it fits the page.
4. **An index of numbered statements** (``{flt-statement-index}``): every definition,
   theorem, lemma, ... in reading order with its number, title and section, for the page
   that the navigation links as the book's proof index.
5. **One copy of each script** on a page (works around a sphinx-thebe duplicate that raises a
   JavaScript error on every page).
6. **Unicode for pdflatex.** After the LaTeX builder writes the book's ``.tex``, every
   character pdflatex does not know (Greek letters, arrows, ≤, ✓ in text and code outputs)
   gets a ``DeclareUnicodeCharacter`` in the preamble, so `make pdf` does not break when a
   chapter prints a new symbol.

Nothing here runs on ``import flt_lib``; this module needs Sphinx, docutils, myst-nb and
pybtex, which the book's environment has (Colab does not need them).
"""

from __future__ import annotations

import re
import statistics
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

__all__ = ["setup", "appendix_docnames", "author_year_label"]

APPENDIX_CAPTION = re.compile(r"^\s*appendi(x|ces)\b", re.I)


# ---- 1. Appendix letters ----------------------------------------------------------------------
def appendix_docnames(env: Any) -> list[str]:
    """Chapters listed in a toctree of the root document captioned "Appendix"/"Appendices"."""
    from sphinx import addnodes

    root = env.config.root_doc
    if root not in env.all_docs:
        return []
    out = []
    for toctree in env.get_doctree(root).findall(addnodes.toctree):
        if APPENDIX_CAPTION.match(toctree.get("caption") or ""):
            out += [ref for _title, ref in toctree["entries"] if ref in env.all_docs]
    return out


def _letter(k: int) -> str:
    return chr(ord("A") + k)


def _rename(number: Any, old: int, new: str) -> Any:
    if number and number[0] == old:
        return type(number)([new, *number[1:]])
    return number


def letter_appendices(app: Any, env: Any) -> list[str]:
    """After Sphinx numbered sections and figures, give appendix chapters letters."""
    changed = set()
    for k, chapter in enumerate(appendix_docnames(env)):
        number = env.toc_secnumbers.get(chapter, {}).get("")
        if not number:
            continue  # the appendix part is not numbered
        old, new = number[0], _letter(k)
        members = [
            doc for doc, secnums in env.toc_secnumbers.items()
            if (secnums.get("") or (None,))[0] == old
        ]
        for doc in members:
            env.toc_secnumbers[doc] = {
                anchor: _rename(num, old, new) for anchor, num in env.toc_secnumbers[doc].items()
            }
            for figtype, ids in env.toc_fignumbers.get(doc, {}).items():
                env.toc_fignumbers[doc][figtype] = {
                    fid: _rename(num, old, new) for fid, num in ids.items()
                }
            for node in env.tocs[doc].findall(nodes.Element):
                if node.get("secnumber"):
                    node["secnumber"] = _rename(node["secnumber"], old, new)
            title = env.titles.get(doc)
            if title is not None and title.get("secnumber"):
                title["secnumber"] = _rename(title["secnumber"], old, new)
            changed.add(doc)
    return sorted(changed)


# ---- 2. Author-year labels ----------------------------------------------------------------------
def _register_bibliography_style() -> None:
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.plain import Style as PlainStyle
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        """Labels "Author, Year", "A and B, Year", "A et al., Year"; a, b, ... on clashes."""

        def format_labels(self, sorted_entries):
            labels = [author_year_label(entry) for entry in sorted_entries]
            counts = {label: labels.count(label) for label in labels}
            seen: dict[str, int] = {}
            for label in labels:
                if counts[label] > 1:
                    seen[label] = seen.get(label, 0) + 1
                    yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
                else:
                    yield label

    class AuthorYearStyle(PlainStyle):
        default_label_style = "flt_authoryear"

    register_plugin("pybtex.style.labels", "flt_authoryear", AuthorYearLabels, force=True)
    register_plugin("pybtex.style.formatting", "flt_authoryear", AuthorYearStyle, force=True)
    _register_reference_style()


def _register_reference_style() -> None:
    """``flt_author_year``: sphinxcontrib-bibtex's author_year, with the label's year."""
    from pybtex.richtext import Text
    from pybtex.style.template import join, node
    from sphinxcontrib.bibtex.plugin import register_plugin
    from sphinxcontrib.bibtex.style.referencing import author_year as ay
    from sphinxcontrib.bibtex.style.referencing import basic_author_year as bay
    from sphinxcontrib.bibtex.style.template import join2, post_text, pre_text, reference

    @node
    def label_year(children: Any, data: dict) -> Any:
        """The year as the bibliography's label shows it: '1986b' when there are several."""
        assert not children
        return Text(str(data["formatted_entry"].label).rsplit(", ", 1)[-1])

    class Parenthetical(bay.BasicAuthorYearParentheticalReferenceStyle):
        def inner(self, role_name: str) -> Any:
            return join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
                pre_text,
                reference[join(sep=self.author_year_sep)[
                    self.person.author_or_editor_or_title(full="s" in role_name), label_year]],
                post_text,
            ]

    class Textual(bay.BasicAuthorYearTextualReferenceStyle):
        def inner(self, role_name: str) -> Any:
            return join(sep=self.text_reference_sep)[
                self.person.author_or_editor_or_title(full="s" in role_name),
                join[
                    self.bracket.left,
                    join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
                        pre_text, reference[label_year], post_text],
                    self.bracket.right,
                ],
            ]

    class LabelYearReferenceStyle(ay.AuthorYearReferenceStyle):
        def __post_init__(self) -> None:
            super().__post_init__()
            for k, style in enumerate(self.styles):
                if type(style) is bay.BasicAuthorYearParentheticalReferenceStyle:
                    self.styles[k] = Parenthetical(
                        bracket=style.bracket, person=style.person,
                        author_year_sep=style.author_year_sep,
                        pre_text_sep=style.pre_text_sep, post_text_sep=style.post_text_sep)
                elif type(style) is bay.BasicAuthorYearTextualReferenceStyle:
                    self.styles[k] = Textual(
                        bracket=style.bracket, person=style.person,
                        text_reference_sep=style.text_reference_sep,
                        pre_text_sep=style.pre_text_sep, post_text_sep=style.post_text_sep)
            self.role_style.update(  # the role -> style map was built from the old list
                (role, style) for style in self.styles[:2] for role in style.role_names())

    register_plugin("sphinxcontrib.bibtex.style.referencing", "flt_author_year",
                    LabelYearReferenceStyle, force=True)


def _last_name(person: Any) -> str:
    from pybtex.richtext import Text

    parts = person.rich_prelast_names + person.rich_last_names
    return Text(" ").join(parts).render_as("text") if parts else str(person)


def author_year_label(entry: Any) -> str:
    """'Hopfield, 1982', 'Krotov and Hopfield, 2016', 'Jacot et al., 2018' for an entry."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_last_name(p) for p in persons]
    if not names:
        who = entry.fields.get("organization") or entry.fields.get("title", entry.key)[:20]
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


# ---- 3. The execution-times table -------------------------------------------------------------
def _reading_order(env: Any) -> list[str]:
    order: list[str] = []

    def walk(doc: str) -> None:
        if doc in order:
            return
        order.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    walk(env.config.root_doc)
    return order


def _exec_table(app: Any, env: Any, docname: str) -> Any:
    from myst_nb.sphinx_ import NbMetadataCollector
    from sphinx.addnodes import pending_xref

    latex = app.builder.format == "latex"
    data = NbMetadataCollector.get_doc_data(env)
    rows = [(doc, data[doc]["exec_data"]) for doc in _reading_order(env)
            if doc in data and data[doc].get("exec_data")]
    headers = ["Section", "Run time (s)", "Status"]
    table = nodes.table(classes=["flt-exec-table"])
    tgroup = nodes.tgroup(cols=3)
    table += tgroup
    for width in (70, 15, 15):
        tgroup += nodes.colspec(colwidth=width)
    thead, tbody = nodes.thead(), nodes.tbody()
    tgroup += thead
    tgroup += tbody

    def row(*cells: Any) -> Any:
        r = nodes.row()
        for cell in cells:
            para = cell if isinstance(cell, nodes.paragraph) else nodes.paragraph(text=str(cell))
            r += nodes.entry("", para)
        return r

    thead += row(*headers)
    times = []
    for doc, info in rows:
        secnum = env.toc_secnumbers.get(doc, {}).get("")
        number = ".".join(map(str, secnum)) + " " if secnum else ""
        title = env.titles[doc].astext() if doc in env.titles else doc
        link = pending_xref(
            refdoc=docname, reftarget="/" + doc, reftype="doc", refdomain="std",
            refexplicit=True, refwarn=True, classes=["xref", "doc"],
        )
        link += nodes.inline(text=number + title)
        para = nodes.paragraph()
        para += link
        source = env.doc2path(doc, False)  # the notebook, for whoever edits it
        para += nodes.inline(text=str(source), classes=["flt-exec-path"])
        runtime = info.get("runtime")
        if runtime is not None:
            times.append(runtime)
        ok = info.get("succeeded")
        status = ("ok" if ok else "failed") if latex else ("✓" if ok else "✗ failed")
        tbody += row(para, "-" if runtime is None else f"{runtime:.1f}", status)
    if times:
        tbody += row(f"All {len(times)} notebooks: total, median",
                     f"{sum(times):.0f}, {statistics.median(times):.1f}", "")
    return table


class FltExecTable(SphinxPostTransform):
    """Replace myst-nb's execution-statistics placeholder before myst-nb does (priority 8)."""

    default_priority = 7

    def run(self, **kwargs: Any) -> None:
        from myst_nb.ext.execution_tables import ExecutionStatsNode

        for node in list(self.document.findall(ExecutionStatsNode)):
            node.replace_self(_exec_table(self.app, self.env, self.env.docname))


# ---- 4. The index of numbered statements -----------------------------------------------------
def _collect_statements(app: Any, doctree: Any) -> None:
    env = app.env
    if any(doctree.findall(StatementIndexNode)):
        # The index's titles hold math, added after reading: load MathJax on its page too.
        env.get_domain("math").data["has_equations"][env.docname] = True
    found = []
    for node in doctree.findall(lambda n: bool(getattr(n, "get", None)) and n.get("realtype")):
        if node.get("realtype") == "proof" or not node.get("label") or not node.get("ids"):
            continue
        found.append({
            "label": node["label"], "id": node["ids"][0], "realtype": node["realtype"],
            "countertype": node.get("countertype", node["realtype"]), "title": _title_nodes(node),
            "numbered": type(node).__name__ != "unenumerable_node",
        })
    if not hasattr(env, "flt_statements"):
        env.flt_statements = {}
    env.flt_statements[env.docname] = found


def _title_nodes(node: Any) -> list[Any]:
    """The statement's title as inline nodes (math stays math), without the surrounding '( )'."""
    title = next((c for c in node.children if isinstance(c, nodes.title)), None)
    if title is None:
        return []
    parts = [child.deepcopy() for child in title.children]
    if parts and isinstance(parts[0], nodes.Text):
        parts[0] = nodes.Text(parts[0].astext().lstrip().removeprefix("("))
    if parts and isinstance(parts[-1], nodes.Text):
        parts[-1] = nodes.Text(parts[-1].astext().rstrip().removesuffix(")"))
    return [p for p in parts if not (isinstance(p, nodes.Text) and not p.astext())]


def _purge_statements(app: Any, env: Any, docname: str) -> None:
    getattr(env, "flt_statements", {}).pop(docname, None)
    getattr(env, "flt_statement_pages", set()).discard(docname)


def _merge_statements(app: Any, env: Any, docnames: Any, other: Any) -> None:
    env.flt_statements = {**getattr(env, "flt_statements", {}),
                          **getattr(other, "flt_statements", {})}
    env.flt_statement_pages = getattr(env, "flt_statement_pages", set()) | getattr(
        other, "flt_statement_pages", set())


def _statement_pages(app: Any, env: Any) -> list[str]:
    """Pages holding the index are rewritten whenever anything was read."""
    return sorted(getattr(env, "flt_statement_pages", set()))


class StatementIndexNode(nodes.General, nodes.Element):
    """Placeholder for the index of statements, replaced once every page is read."""


class StatementIndex(SphinxDirective):
    """``{flt-statement-index}``: the table of every numbered statement, in reading order."""

    has_content = False

    def run(self) -> list[Any]:
        if not hasattr(self.env, "flt_statement_pages"):
            self.env.flt_statement_pages = set()
        self.env.flt_statement_pages.add(self.env.docname)
        return [StatementIndexNode()]


def _statement_table(app: Any, env: Any, docname: str) -> Any:
    from sphinx.util.nodes import make_refnode

    statements = getattr(env, "flt_statements", {})
    table = nodes.table(classes=["flt-statement-index"])
    tgroup = nodes.tgroup(cols=3)
    table += tgroup
    for width in (22, 43, 35):
        tgroup += nodes.colspec(colwidth=width)
    thead, tbody = nodes.thead(), nodes.tbody()
    tgroup += thead
    tgroup += tbody
    head = nodes.row()
    for text in ("Statement", "Title", "Section"):
        head += nodes.entry("", nodes.paragraph(text=text))
    thead += head
    for doc in _reading_order(env):
        secnum = env.toc_secnumbers.get(doc, {}).get("")
        section = (".".join(map(str, secnum)) + " " if secnum else "") + (
            env.titles[doc].astext() if doc in env.titles else doc)
        for item in statements.get(doc, []):
            number = ""
            if item["numbered"]:
                num = env.toc_fignumbers.get(doc, {}).get(item["countertype"], {}).get(item["id"])
                number = " " + ".".join(map(str, num)) if num else ""
            label = item["realtype"].title() + number
            row = nodes.row()
            para = nodes.paragraph()
            para += make_refnode(app.builder, docname, doc, item["id"], nodes.Text(label))
            row += nodes.entry("", para)
            title = nodes.paragraph()
            title += [child.deepcopy() for child in item["title"]]
            row += nodes.entry("", title)
            sec = nodes.paragraph()
            sec += make_refnode(app.builder, docname, doc, "", nodes.Text(section))
            row += nodes.entry("", sec)
            tbody += row
    return table


class FltStatementIndex(SphinxPostTransform):
    """Replace the placeholder with the table (after all pages are read and numbered)."""

    default_priority = 7

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(StatementIndexNode)):
            node.replace_self(_statement_table(self.app, self.env, self.env.docname))


# ---- 5. One copy of each script ----------------------------------------------------------------
def _dedupe_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Drop repeated <script> entries from a page.

    sphinx-thebe adds its inline configuration script with ``app.add_js_file`` after the
    HTML builder is set up, and Sphinx 7.4 then lists it twice; the second copy fails with
    "Identifier 'THEBE_JS_URL' has already been declared" on every page.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        # The file name (None and "" both mean an inline script), not str(js): that has the
        # priority in it, and the copies differ there.
        name = str(getattr(js, "filename", js) or "")
        key = (name, tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


# ---- 6. Unicode for pdflatex -----------------------------------------------------------------
_TEX_SYMBOLS = {
    "≤": r"\ensuremath{\le}", "≥": r"\ensuremath{\ge}", "≠": r"\ensuremath{\neq}",
    "≈": r"\ensuremath{\approx}", "≃": r"\ensuremath{\simeq}", "∼": r"\ensuremath{\sim}",
    "≪": r"\ensuremath{\ll}", "≫": r"\ensuremath{\gg}", "∝": r"\ensuremath{\propto}",
    "→": r"\ensuremath{\rightarrow}", "←": r"\ensuremath{\leftarrow}",
    "↔": r"\ensuremath{\leftrightarrow}", "⇒": r"\ensuremath{\Rightarrow}",
    "⇔": r"\ensuremath{\Leftrightarrow}", "↦": r"\ensuremath{\mapsto}",
    "∈": r"\ensuremath{\in}", "∉": r"\ensuremath{\notin}", "⊂": r"\ensuremath{\subset}",
    "⊆": r"\ensuremath{\subseteq}", "∪": r"\ensuremath{\cup}", "∩": r"\ensuremath{\cap}",
    "∅": r"\ensuremath{\emptyset}", "∀": r"\ensuremath{\forall}", "∃": r"\ensuremath{\exists}",
    "∑": r"\ensuremath{\sum}", "∏": r"\ensuremath{\prod}", "∫": r"\ensuremath{\int}",
    "√": r"\ensuremath{\surd}", "∂": r"\ensuremath{\partial}", "∇": r"\ensuremath{\nabla}",
    "×": r"\ensuremath{\times}", "÷": r"\ensuremath{\div}", "·": r"\ensuremath{\cdot}",
    "⋅": r"\ensuremath{\cdot}", "∘": r"\ensuremath{\circ}", "⊙": r"\ensuremath{\odot}",
    "⊗": r"\ensuremath{\otimes}", "⊕": r"\ensuremath{\oplus}", "⊤": r"\ensuremath{\top}",
    "⊥": r"\ensuremath{\perp}", "‖": r"\ensuremath{\|}", "∣": r"\ensuremath{|}",
    "−": r"\ensuremath{-}", "∓": r"\ensuremath{\mp}", "∗": r"\ensuremath{*}",
    "⟨": r"\ensuremath{\langle}", "⟩": r"\ensuremath{\rangle}", "⌈": r"\ensuremath{\lceil}",
    "⌉": r"\ensuremath{\rceil}", "⌊": r"\ensuremath{\lfloor}", "⌋": r"\ensuremath{\rfloor}",
    "ℝ": r"\ensuremath{\mathbb{R}}", "ℕ": r"\ensuremath{\mathbb{N}}",
    "ℤ": r"\ensuremath{\mathbb{Z}}", "𝔼": r"\ensuremath{\mathbb{E}}",
    "ℓ": r"\ensuremath{\ell}", "ħ": r"\ensuremath{\hbar}", "°": r"\ensuremath{^\circ}",
    "✓": r"\ensuremath{\checkmark}", "✔": r"\ensuremath{\checkmark}", "✗": "x", "✘": "x",
    "✅": r"\ensuremath{\checkmark}", "❌": "x", "…": r"\ldots{}", "↑": r"\ensuremath{\uparrow}",
    "↓": r"\ensuremath{\downarrow}", "★": r"\ensuremath{\star}", "†": r"\dag{}",
    "′": r"\ensuremath{'}", "″": r"\ensuremath{''}", "≡": r"\ensuremath{\equiv}",
    "≲": r"\ensuremath{\lesssim}", "≳": r"\ensuremath{\gtrsim}", "≍": r"\ensuremath{\asymp}",
    "∞": r"\ensuremath{\infty}", "±": r"\ensuremath{\pm}", "▸": r"\ensuremath{\triangleright}",
    "ᵖ": r"\ensuremath{^p}", "ᵀ": r"\ensuremath{^\top}",
}
_GREEK_MACRO = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
                "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon",
                "phi", "chi", "psi", "omega"}


def tex_for_char(ch: str) -> str | None:
    """A pdflatex rendering of ``ch`` (math symbols, Greek, sub- and superscripts), or None."""
    import unicodedata

    if ch in _TEX_SYMBOLS:
        return _TEX_SYMBOLS[ch]
    name = unicodedata.name(ch, "")
    m = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER ([A-Z ]+)", name)
    if m:
        letter = m.group(2).lower()
        if letter == "final sigma":
            letter = "sigma"
        if letter not in _GREEK_MACRO:
            return None
        if m.group(1) == "CAPITAL":
            macro = letter.capitalize()
            has_macro = macro in {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma",
                                  "Upsilon", "Phi", "Psi", "Omega"}
            return rf"\ensuremath{{\{macro}}}" if has_macro else None
        return rf"\ensuremath{{\{letter}}}"
    m = re.fullmatch(r"(SUBSCRIPT|SUPERSCRIPT) (\w+)", name)
    if m:
        digits = {"ZERO": "0", "ONE": "1", "TWO": "2", "THREE": "3", "FOUR": "4", "FIVE": "5",
                  "SIX": "6", "SEVEN": "7", "EIGHT": "8", "NINE": "9", "MINUS": "-", "PLUS": "+",
                  "LATIN SMALL LETTER I": "i", "LATIN SMALL LETTER N": "n"}
        d = digits.get(m.group(2))
        if d is not None:
            return rf"\ensuremath{{{'_' if m.group(1) == 'SUBSCRIPT' else '^'}{{{d}}}}}"
    return None


def _pdflatex_engine(app: Any, config: Any) -> None:
    """Undo sphinx-jupyterbook-latex's forced xelatex (it runs first, at priority 500).

    ``flt_latex_engine`` (default "pdflatex") is the engine; for pdflatex, drop the two
    xelatex-only packages that sphinx-jupyterbook-latex adds to the preamble.
    """
    app.flt_numfig_secnum_depth = config.numfig_secnum_depth
    engine = config.flt_latex_engine
    if engine == config.latex_engine:
        return
    config.latex_engine = engine
    if engine == "pdflatex":
        preamble = config.latex_elements.get("preamble", "")
        for line in (r"\usepackage[Latin,Greek]{ucharclasses}", r"\usepackage{unicode-math}"):
            preamble = preamble.replace(line, "")
        config.latex_elements["preamble"] = preamble


def _provide_bbm(outdir: Any) -> None:
    """jupyterBook.cls loads bbm.sty, which in Debian only the very large texlive-fonts-extra ships.

    The book never uses \\mathbbm; when TeX cannot find bbm.sty, write a two-line stand-in
    next to the .tex so that texlive-latex-extra is enough.
    """
    import shutil
    import subprocess

    kpsewhich = shutil.which("kpsewhich")
    if kpsewhich and subprocess.run([kpsewhich, "bbm.sty"], capture_output=True).returncode == 0:
        return
    (outdir / "bbm.sty").write_text(
        "\\ProvidesPackage{bbm}[2026/01/01 stand-in written by flt_lib._sphinx]\n"
        "\\providecommand{\\mathbbm}[1]{\\mathbb{#1}}\n", encoding="utf-8")


def _part_numbering(env: Any) -> dict[str, str]:
    """For each toctree caption of the root document: 'numbered', 'appendix' or 'unnumbered'."""
    from sphinx import addnodes

    out: dict[str, str] = {}
    root = env.config.root_doc
    if root not in env.all_docs:
        return out
    for toctree in env.get_doctree(root).findall(addnodes.toctree):
        caption = toctree.get("caption")
        if not caption:
            continue
        if not toctree.get("numbered"):
            out[caption] = "unnumbered"
        else:
            out[caption] = "appendix" if APPENDIX_CAPTION.match(caption) else "numbered"
    return out


def number_parts_like_the_website(tex: str, parts: dict[str, str]) -> str:
    """Number the PDF's chapters as the website does: front and back matter unnumbered,
    chapters 1, 2, ..., appendices A, B, ... (LaTeX otherwise numbers every chapter)."""
    switch = {
        "unnumbered": r"\setcounter{secnumdepth}{-2}",
        "numbered": r"\setcounter{secnumdepth}{2}",
        "appendix": r"\appendix\setcounter{secnumdepth}{2}",
    }
    for caption, kind in parts.items():
        escaped = caption.replace("-", r"\sphinxhyphen{}")
        for form in {caption, escaped}:
            tex = tex.replace(f"\\part{{{form}}}", f"{switch[kind]}\n\\part{{{form}}}", 1)
    return tex


def _keep_numbering_depth(app: Any) -> None:
    """sphinx-jupyterbook-latex sets numfig_secnum_depth = 2 for the PDF, because its
    chapters sit under parts. Sphinx numbers statements with it too ("Theorem 1.1.3"): keep
    the website's depth while numbering ("Theorem 1.3"), and give LaTeX its value only for
    writing (equations and figures then restart at each chapter: (1.1), Figure 1.1)."""
    depth = getattr(app, "flt_numfig_secnum_depth", None)
    if depth is not None and app.config.numfig_secnum_depth != depth:
        app.flt_latex_secnum_depth = app.config.numfig_secnum_depth
        app.config.numfig_secnum_depth = depth


def _latex_writing_depth(app: Any, env: Any) -> None:
    """After numbering, before writing (the LaTeX builder emits no write-started event)."""
    depth = getattr(app, "flt_latex_secnum_depth", None)
    if depth is not None and app.builder.name == "latex":
        app.config.numfig_secnum_depth = depth


def _braced(text: str, start: int) -> int:
    """Index just past the group that opens with the brace at ``text[start]``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{" and text[i - 1] != "\\":
            depth += 1
        elif text[i] == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def short_captions(tex: str) -> str:
    """Give every caption that holds a link (a citation) a plain short form.

    pdflatex stops on a ``\\hyperlink`` inside a caption ("Argument of \\Hy@tempa has an
    extra }"); the optional short caption, without links, is what hyperref processes.
    """
    out, pos = [], 0
    while (i := tex.find("\\caption{", pos)) >= 0:
        j = _braced(tex, i + len("\\caption"))
        body = tex[i + len("\\caption") + 1:j - 1]
        out.append(tex[pos:i])
        if "\\hyperlink" in body:
            plain = re.sub(r"\\hyperlink\{[^}]*\}", "", body)
            plain = plain.replace("\\DUrole{bibtex-citation}", "")
            out.append(f"\\caption[{{{plain}}}]{{{body}}}")
        else:
            out.append(tex[i:j])
        pos = j
    out.append(tex[pos:])
    return "".join(out)


_EXERCISE_LABEL = re.compile(r"\\label\{exercise:([^}]+)\}")
_DOC_HYPERREF = re.compile(r"\\hyperref\[\\detokenize\{[^}:]*:([^}]+)\}\]")


def exercise_links(tex: str) -> str:
    """Point the PDF's links to exercises at the labels sphinx-exercise writes.

    sphinx-exercise labels an exercise ``exercise:<label>`` in LaTeX, while a ``{ref}`` to it
    (the course guide's homework table, for one) becomes ``<docname>:<label>``: 95 links were
    unresolved. Rewrite every such link whose label is an exercise's.
    """
    labels = set(_EXERCISE_LABEL.findall(tex))

    def fix(m: re.Match) -> str:
        return f"\\hyperref[exercise:{m.group(1)}]" if m.group(1) in labels else m.group(0)

    return _DOC_HYPERREF.sub(fix, tex)


def _latex_unicode(app: Any, exc: Exception | None) -> None:
    """Declare every non-Latin character of the written .tex files for pdflatex, and number
    the chapters as the website does."""
    if exc is not None or app.builder.name != "latex":
        return
    from pathlib import Path

    parts = _part_numbering(app.env)
    for tex in Path(app.outdir).glob("*.tex"):
        text = tex.read_text(encoding="utf-8")
        if "\\part{" in text:
            text = number_parts_like_the_website(text, parts)
        tex.write_text(exercise_links(short_captions(text)), encoding="utf-8")
    if app.config.latex_engine != "pdflatex":
        return
    from pathlib import Path

    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    _provide_bbm(Path(app.outdir))
    for tex in Path(app.outdir).glob("*.tex"):
        text = tex.read_text(encoding="utf-8")
        chars = sorted({ch for ch in text if ord(ch) > 0x24F and ch not in "–—‘’“”\u00a0"})
        lines = []
        for ch in chars:
            rendering = tex_for_char(ch)
            if rendering is None:
                logger.warning(f"no LaTeX for {ch!r} (U+{ord(ch):04X}) in {tex.name}; shown as ?")
                rendering = "?"
            lines.append(f"\\DeclareUnicodeCharacter{{{ord(ch):04X}}}{{{rendering}}}")
        if lines and "\\begin{document}" in text:
            block = "% Characters declared by flt_lib._sphinx for pdflatex\n" + "\n".join(lines)
            tex.write_text(text.replace("\\begin{document}", block + "\n\\begin{document}", 1),
                           encoding="utf-8")


def _proof_labels_in_latex() -> None:
    """Give sphinx-proof's LaTeX labels a document name on every page.

    For the PDF, sphinx-proof labels a statement ``<docname>:<label>``, taking the docname from
    the enclosing section whose name equals the page title. When the two differ in their
    quotes or case ("Cover’s counting theorem" against "cover's counting theorem"), it writes
    ``None:<label>``: every link to the statement is then unresolved and its number is lost
    (11 statements of Sections 1.3 and A.3). Fall back to the nearest enclosing node that
    names its document.
    """
    try:
        from sphinx_proof import nodes as proof_nodes
    except ImportError:
        return
    original = proof_nodes.find_parent
    if getattr(original, "_flt_fallback", False):
        return

    def find_parent(env: Any, node: Any, parent_tag: str) -> str | None:
        found = original(env, node, parent_tag)
        while found is None and node is not None:
            node = node.parent
            if node is not None and "docname" in node.attributes:
                found = node.attributes["docname"]
        return found

    find_parent._flt_fallback = True  # type: ignore[attr-defined]
    proof_nodes.find_parent = find_parent


def setup(app: Any) -> dict[str, Any]:
    _register_bibliography_style()
    _proof_labels_in_latex()
    app.connect("env-get-updated", letter_appendices, priority=900)
    app.add_post_transform(FltExecTable)
    app.add_node(StatementIndexNode)
    app.add_directive("flt-statement-index", StatementIndex)
    app.add_post_transform(FltStatementIndex)
    app.connect("doctree-read", _collect_statements)
    app.connect("env-purge-doc", _purge_statements)
    app.connect("env-merge-info", _merge_statements)
    app.connect("env-updated", _statement_pages)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.connect("build-finished", _latex_unicode)
    app.add_config_value("flt_latex_engine", "pdflatex", "env")
    app.connect("config-inited", _pdflatex_engine, priority=900)
    app.connect("builder-inited", _keep_numbering_depth, priority=900)
    app.connect("env-check-consistency", _latex_writing_depth)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
