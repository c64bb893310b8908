"""The PDF through pdflatex: Unicode, the engine, a missing package, captions.

After the LaTeX builder writes the book's ``.tex``:

- every character pdflatex does not know (Greek letters, arrows, ≤, ✓ in text and code
  outputs) gets a ``DeclareUnicodeCharacter`` in the preamble, so `make pdf` does not
  break when a chapter prints a new symbol;
- parts are numbered as on the website (:mod:`book.ext.numbering`), links to exercises
  point at sphinx-exercise's labels (:mod:`book.upstream.sphinx_exercise_links`), and a
  caption holding a citation gets a plain short form.

Before the build, the engine is set back to pdflatex (sphinx-jupyterbook-latex forces
xelatex), and ``bbm.sty`` gets a stand-in when TeX lacks it.
"""

from __future__ import annotations

import re
from typing import Any

from book.ext.numbering import _part_numbering, number_parts_like_the_website
from book.upstream.sphinx_exercise_links import exercise_links

__all__ = ["compose_accents", "short_captions", "tex_for_char", "setup"]


_TEX_SYMBOLS = {
    "≤": r"\ensuremath{\le}",
    "≥": r"\ensuremath{\ge}",
    "≠": r"\ensuremath{\neq}",
    "≈": r"\ensuremath{\approx}",
    "≃": r"\ensuremath{\simeq}",
    "∼": r"\ensuremath{\sim}",
    "≪": r"\ensuremath{\ll}",
    "≫": r"\ensuremath{\gg}",
    "∝": r"\ensuremath{\propto}",
    "→": r"\ensuremath{\rightarrow}",
    "←": r"\ensuremath{\leftarrow}",
    "↔": r"\ensuremath{\leftrightarrow}",
    "⇒": r"\ensuremath{\Rightarrow}",
    "⇔": r"\ensuremath{\Leftrightarrow}",
    "↦": r"\ensuremath{\mapsto}",
    "∈": r"\ensuremath{\in}",
    "∉": r"\ensuremath{\notin}",
    "⊂": r"\ensuremath{\subset}",
    "⊆": r"\ensuremath{\subseteq}",
    "∪": r"\ensuremath{\cup}",
    "∩": r"\ensuremath{\cap}",
    "∅": r"\ensuremath{\emptyset}",
    "∀": r"\ensuremath{\forall}",
    "∃": r"\ensuremath{\exists}",
    "∑": r"\ensuremath{\sum}",
    "∏": r"\ensuremath{\prod}",
    "∫": r"\ensuremath{\int}",
    "√": r"\ensuremath{\surd}",
    "∂": r"\ensuremath{\partial}",
    "∇": r"\ensuremath{\nabla}",
    "×": r"\ensuremath{\times}",
    "÷": r"\ensuremath{\div}",
    "·": r"\ensuremath{\cdot}",
    "⋅": r"\ensuremath{\cdot}",
    "∘": r"\ensuremath{\circ}",
    "⊙": r"\ensuremath{\odot}",
    "⊗": r"\ensuremath{\otimes}",
    "⊕": r"\ensuremath{\oplus}",
    "⊤": r"\ensuremath{\top}",
    "⊥": r"\ensuremath{\perp}",
    "‖": r"\ensuremath{\|}",
    "∣": r"\ensuremath{|}",
    "−": r"\ensuremath{-}",
    "∓": r"\ensuremath{\mp}",
    "∗": r"\ensuremath{*}",
    "⟨": r"\ensuremath{\langle}",
    "⟩": r"\ensuremath{\rangle}",
    "⌈": r"\ensuremath{\lceil}",
    "⌉": r"\ensuremath{\rceil}",
    "⌊": r"\ensuremath{\lfloor}",
    "⌋": r"\ensuremath{\rfloor}",
    "ℝ": r"\ensuremath{\mathbb{R}}",
    "ℕ": r"\ensuremath{\mathbb{N}}",
    "ℤ": r"\ensuremath{\mathbb{Z}}",
    "𝔼": r"\ensuremath{\mathbb{E}}",
    "ℓ": r"\ensuremath{\ell}",
    "ħ": r"\ensuremath{\hbar}",
    "°": r"\ensuremath{^\circ}",
    "✓": r"\ensuremath{\checkmark}",
    "✔": r"\ensuremath{\checkmark}",
    "✗": "x",
    "✘": "x",
    "✅": r"\ensuremath{\checkmark}",
    "❌": "x",
    "…": r"\ldots{}",
    "↑": r"\ensuremath{\uparrow}",
    "↓": r"\ensuremath{\downarrow}",
    "★": r"\ensuremath{\star}",
    "†": r"\dag{}",
    "′": r"\ensuremath{'}",
    "″": r"\ensuremath{''}",
    "≡": r"\ensuremath{\equiv}",
    "≲": r"\ensuremath{\lesssim}",
    "≳": r"\ensuremath{\gtrsim}",
    "≍": r"\ensuremath{\asymp}",
    "∞": r"\ensuremath{\infty}",
    "±": r"\ensuremath{\pm}",
    "▸": r"\ensuremath{\triangleright}",
    "ᵖ": r"\ensuremath{^p}",
    "ᵀ": r"\ensuremath{^\top}",
}
_GREEK_MACRO = {
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
}


def tex_for_char(ch: str) -> str | None:
    """A pdflatex rendering of ``ch`` (math symbols, Greek, sub- and superscripts), or
    None."""
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
            has_macro = macro in {
                "Gamma",
                "Delta",
                "Theta",
                "Lambda",
                "Xi",
                "Pi",
                "Sigma",
                "Upsilon",
                "Phi",
                "Psi",
                "Omega",
            }
            return rf"\ensuremath{{\{macro}}}" if has_macro else None
        return rf"\ensuremath{{\{letter}}}"
    m = re.fullmatch(r"(SUBSCRIPT|SUPERSCRIPT) (\w+)", name)
    if m:
        digits = {
            "ZERO": "0",
            "ONE": "1",
            "TWO": "2",
            "THREE": "3",
            "FOUR": "4",
            "FIVE": "5",
            "SIX": "6",
            "SEVEN": "7",
            "EIGHT": "8",
            "NINE": "9",
            "MINUS": "-",
            "PLUS": "+",
            "LATIN SMALL LETTER I": "i",
            "LATIN SMALL LETTER N": "n",
        }
        d = digits.get(m.group(2))
        if d is not None:
            return rf"\ensuremath{{{'_' if m.group(1) == 'SUBSCRIPT' else '^'}{{{d}}}}}"
    return None


# Combining accents (U+0300-U+036F) after a letter, as LaTeX's text and math accents. A
# combining character follows its letter, so a \DeclareUnicodeCharacter cannot put the
# accent on it: "R\u0302" (R-hat, which Unicode has no single character for) gave "R?".
_COMBINING = {
    "\u0300": ("`", "grave"),
    "\u0301": ("'", "acute"),
    "\u0302": ("^", "hat"),
    "\u0303": ("~", "tilde"),
    "\u0304": ("=", "bar"),
    "\u0306": ("u", "breve"),
    "\u0307": (".", "dot"),
    "\u0308": ('"', "ddot"),
    "\u030c": ("v", "check"),
}


def compose_accents(text: str) -> str:
    r"""Letters with a combining accent, for pdflatex.

    First composed where Unicode has one character for the pair ("e\u0301" -> "\u00e9",
    which pdflatex knows); a pair that stays apart ("R\u0302") becomes an accent macro
    that works in text and in math: ``{\ifmmode\hat{R}\else\^{R}\fi}``. A combining
    accent after anything but an ASCII letter or digit is left alone (and then reported
    by :func:`_latex_unicode`).
    """
    import unicodedata

    text = unicodedata.normalize("NFC", text)
    marks = "".join(_COMBINING)

    def macro(m: re.Match) -> str:
        base, mark = m.group(1), m.group(2)
        text_accent, math_accent = _COMBINING[mark]
        return rf"{{\ifmmode\{math_accent}{{{base}}}\else\{text_accent}{{{base}}}\fi}}"

    return re.sub(rf"([A-Za-z0-9])([{marks}])", macro, text)


def _pdflatex_engine(app: Any, config: Any) -> None:
    """Undo sphinx-jupyterbook-latex's forced xelatex (it runs first, at priority 500).

    ``flt_latex_engine`` (default "pdflatex") is the engine; for pdflatex, drop the two
    xelatex-only packages that sphinx-jupyterbook-latex adds to the preamble.
    """
    engine = config.flt_latex_engine
    if engine == config.latex_engine:
        return
    config.latex_engine = engine
    if engine == "pdflatex":
        preamble = config.latex_elements.get("preamble", "")
        for line in (
            r"\usepackage[Latin,Greek]{ucharclasses}",
            r"\usepackage{unicode-math}",
        ):
            preamble = preamble.replace(line, "")
        config.latex_elements["preamble"] = preamble


def _provide_bbm(outdir: Any) -> None:
    """jupyterBook.cls loads bbm.sty, which in Debian only the very large
    texlive-fonts-extra ships.

    The book never uses \\mathbbm; when TeX cannot find bbm.sty, write a two-line
    stand-in next to the .tex so that texlive-latex-extra is enough.
    """
    import shutil
    import subprocess

    kpsewhich = shutil.which("kpsewhich")
    if (
        kpsewhich
        and subprocess.run([kpsewhich, "bbm.sty"], capture_output=True).returncode == 0
    ):
        return
    (outdir / "bbm.sty").write_text(
        "\\ProvidesPackage{bbm}[2026/01/01 stand-in written by book.ext.latex]\n"
        "\\providecommand{\\mathbbm}[1]{\\mathbb{#1}}\n",
        encoding="utf-8",
    )


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
        body = tex[i + len("\\caption") + 1 : j - 1]
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


def _latex_unicode(app: Any, exc: Exception | None) -> None:
    """Declare every non-Latin character of the written .tex files for pdflatex, and
    number the chapters as the website does."""
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
        text = compose_accents(tex.read_text(encoding="utf-8"))
        tex.write_text(text, encoding="utf-8")
        chars = sorted(
            {ch for ch in text if ord(ch) > 0x24F and ch not in "–—‘’“”\u00a0"}
        )
        lines = []
        for ch in chars:
            rendering = tex_for_char(ch)
            if rendering is None:
                logger.warning(
                    f"no LaTeX for {ch!r} (U+{ord(ch):04X}) in {tex.name}; shown as ?"
                )
                rendering = "?"
            lines.append(f"\\DeclareUnicodeCharacter{{{ord(ch):04X}}}{{{rendering}}}")
        if lines and "\\begin{document}" in text:
            block = (
                "% Characters declared by book.ext.latex for pdflatex\n"
                + "\n".join(lines)
            )
            tex.write_text(
                text.replace("\\begin{document}", block + "\n\\begin{document}", 1),
                encoding="utf-8",
            )


def setup(app: Any) -> dict[str, Any]:
    """Register the LaTeX hooks (loaded by :mod:`book.ext`)."""
    app.add_config_value("flt_latex_engine", "pdflatex", "env")
    app.connect("config-inited", _pdflatex_engine, priority=900)
    app.connect("build-finished", _latex_unicode)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
