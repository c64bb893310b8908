"""Numbering: appendix letters, and the PDF numbered like the website.

- **Appendix letters.** Chapters in a part of ``_toc.yml`` whose caption starts with
  "Appendix" (or "Appendices") are numbered A, B, ... instead of continuing the chapter
  numbers, and so are their sections, theorems, equations and figures ("Theorem A.2",
  "(A.3)"). Sphinx numbers with integers; this renames the chapter's number after Sphinx
  has assigned them.
- **Parts in the PDF.** Front and back matter unnumbered, chapters 1, 2, ..., appendices
  A, B, ... (LaTeX otherwise numbers every chapter), and statements numbered by chapter
  as on the website ("Theorem 1.3", not "Theorem 1.1.3").
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes

__all__ = [
    "appendix_docnames",
    "letter_appendices",
    "number_parts_like_the_website",
    "setup",
]

APPENDIX_CAPTION = re.compile(r"^\s*appendi(x|ces)\b", re.I)


def appendix_docnames(env: Any) -> list[str]:
    """Chapters listed in a toctree of the root document captioned
    "Appendix"/"Appendices"."""
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
            doc
            for doc, secnums in env.toc_secnumbers.items()
            if (secnums.get("") or (None,))[0] == old
        ]
        for doc in members:
            env.toc_secnumbers[doc] = {
                anchor: _rename(num, old, new)
                for anchor, num in env.toc_secnumbers[doc].items()
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


def _part_numbering(env: Any) -> dict[str, str]:
    """For each toctree caption of the root document: 'numbered', 'appendix' or
    'unnumbered'."""
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
        # Sphinx numbers figures, tables, listings and equations "\arabic{chapter}.n":
        # in the appendix they read "Figure 1.2" where the website has "Figure A.2".
        "appendix": r"\appendix\setcounter{secnumdepth}{2}"
        + "".join(
            rf"\renewcommand{{\the{c}}}{{\thechapter.\arabic{{{c}}}}}"
            for c in ("figure", "table", "literalblock", "equation")
        ),
    }
    for caption, kind in parts.items():
        escaped = caption.replace("-", r"\sphinxhyphen{}")
        for form in {caption, escaped}:
            tex = tex.replace(
                f"\\part{{{form}}}", f"{switch[kind]}\n\\part{{{form}}}", 1
            )
    return tex


def _keep_numbering_depth(app: Any) -> None:
    """sphinx-jupyterbook-latex sets numfig_secnum_depth = 2 for the PDF, because its
    chapters sit under parts. Sphinx numbers statements with it too ("Theorem 1.1.3"):
    keep the website's depth while numbering ("Theorem 1.3"), and give LaTeX its value
    only for writing (equations and figures then restart at each chapter: (1.1), Figure
    1.1)."""
    depth = getattr(app, "flt_numfig_secnum_depth", None)
    if depth is not None and app.config.numfig_secnum_depth != depth:
        app.flt_latex_secnum_depth = app.config.numfig_secnum_depth
        app.config.numfig_secnum_depth = depth


def _latex_writing_depth(app: Any, env: Any) -> None:
    """After numbering, before writing (the LaTeX builder emits no write-started
    event)."""
    depth = getattr(app, "flt_latex_secnum_depth", None)
    if depth is not None and app.builder.name == "latex":
        app.config.numfig_secnum_depth = depth


def _remember_numbering_depth(app: Any, config: Any) -> None:
    """Keep the website's ``numfig_secnum_depth`` before other extensions change it."""
    app.flt_numfig_secnum_depth = config.numfig_secnum_depth


def setup(app: Any) -> dict[str, Any]:
    """Register the numbering hooks (loaded by :mod:`book.ext`)."""
    app.connect("env-get-updated", letter_appendices, priority=900)
    app.connect("config-inited", _remember_numbering_depth, priority=900)
    app.connect("builder-inited", _keep_numbering_depth, priority=900)
    app.connect("env-check-consistency", _latex_writing_depth)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
