"""Numbers in prose come from the page: the check for hand-typed numbers.

It finds every decimal number in a notebook's markdown that is neither glued, nor a
setting written in the notebook's code, nor a cited paper's figure, nor on the
notebook's allowlist.

A measured number typed by hand drifts from the output it was copied from. The book's
rule (MAINTAINING.md, "House rules") is that a number in prose is one of

- glued from the page: ``{glue:text}`name:.3f``` (see :mod:`flt_lib.glue`);
- a literal that appears in one of the notebook's code cells (a setting: ``lr=5e-3``,
  ``rho = 0.1``, a tolerance ``1e-12``), compared by value;
- a figure of a cited paper: the sentence holds a ``{cite`` role;
- exact mathematics or another deliberate exception, listed in the notebook metadata
  ``flt.allowed_numbers`` as ``{"number": "0.5", "reason": "..."}``.

Cross-references ("Section 4.2", "Theorems 5.3 and 5.4") are not numbers. Run as
``python book/check_numbers.py NOTEBOOK ...`` (or ``python -m book.check_numbers``); it
prints each violation and exits 1 if any.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# A decimal number (0.73, 12.5, .5 is not used in the book) or scientific notation
# (1e-3, 2.5e+04), with an optional sign or thousands separators ignored.
NUMBER = re.compile(
    r"(?<![\w.\-])(?:\d+\.\d+(?:[eE][-+−]?\d+)?|\d+[eE][-+−]?\d+)(?![\w.]\d)"
)
# Things that look like numbers but are names: cross-references, versions, labels.
REF_WORDS = (
    r"(?:Sections?|Chapters?|Figures?|Figs?\.|Tables?|Theorems?|Lemmas?|Propositions?|"
    r"Corollar(?:y|ies)|Definitions?|Remarks?|Examples?|Exercises?|Equations?|Eqs?\.|"
    r"Algorithms?|Assumptions?|Conditions?|Claims?|Steps?|Listings?|Parts?|Appendix|"
    r"§§?|version|v|Python|torch|PyTorch|numpy|NumPy|sections?|chapters?|figures?|"
    r"tables?|theorems?|equations?|exercises?)"
)
REF = re.compile(
    REF_WORDS + r"[\s~]*\(?\d+\.\d+(?:\.\d+)*\)?"
    r"(?:\s*(?:,|and|or|to|–|-|—)\s*\(?\d+\.\d+(?:\.\d+)*\)?)*"
)
ROLE = re.compile(
    r"\{[\w:-]+\}`[^`]*`"
)  # {glue:text}`x:.3f`, {cite:p}`key`, {ref}`lbl`
URL = re.compile(r"https?://\S+|\]\([^)]*\)|<[^>]*>")
LABEL_LINE = re.compile(r"^\s*(?::[\w-]+:.*|\([\w:-]+\)=|:::?\{.*|```\{.*)$", re.M)
CITE = re.compile(r"\{cite[\w:]*\}`")
# Sentence boundaries: ". " before a capital, ignoring common abbreviations and
# decimals.
ABBREV = re.compile(r"\b(?:et al|e\.g|i\.e|cf|vs|Fig|Eq|Eqs|resp|approx|no)\.", re.I)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*(\[$`{])|\n\s*\n|\n(?=\s*[-*|] )")


@dataclass(frozen=True)
class Violation:
    """One hand-typed number in one markdown cell."""

    path: str  # notebook path as given
    cell: int  # 0-based cell index
    number: str  # the number as written
    context: str  # the sentence around it, shortened

    def __str__(self) -> str:
        return f"{self.path}: cell {self.cell}: {self.number!r} in: {self.context}"


def _value(text: str) -> float | None:
    try:
        return float(text.replace("−", "-"))
    except ValueError:
        return None


def code_literals(nb: dict) -> set[float]:
    """Every numeric literal in the notebook's code cells, by value."""
    values: set[float] = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        for m in re.finditer(r"(?<![\w.])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", src):
            v = _value(m.group(0))
            if v is not None:
                values.add(v)
    return values


def allowed(nb: dict) -> set[str]:
    """The notebook's allowlist, from ``metadata.flt.allowed_numbers``."""
    entries = nb.get("metadata", {}).get("flt", {}).get("allowed_numbers", [])
    out = set()
    for e in entries:
        if not isinstance(e, dict) or not e.get("reason") or "number" not in e:
            raise ValueError(
                f"allowlist entry {e!r}: expected {{'number': ..., 'reason': ...}}"
            )
        out.add(str(e["number"]))
    return out


def sentences(text: str) -> list[str]:
    """Split markdown into sentences (tables and list items count as one each)."""
    protected = ABBREV.sub(lambda m: m.group(0).replace(".", "\0"), text)
    return [s.replace("\0", ".") for s in SENTENCE_END.split(protected)]


def check_notebook(path: Path | str) -> list[Violation]:
    """Every hand-typed decimal number in the notebook's markdown cells."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    literals = code_literals(nb)
    allow = allowed(nb)
    out: list[Violation] = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = LABEL_LINE.sub(" ", "".join(cell["source"]))
        for sentence in sentences(text):
            cited = bool(CITE.search(sentence))
            bare = URL.sub(" ", ROLE.sub(" ", REF.sub(" ", sentence)))
            for m in NUMBER.finditer(bare):
                number = m.group(0)
                if cited or number in allow or _value(number) in literals:
                    continue
                context = " ".join(sentence.split())
                out.append(Violation(str(path), index, number, context[:160]))
    return out


def main(argv: list[str]) -> int:
    """Check the notebooks named in ``argv``; print each violation; 1 if any, else 0."""
    if not argv:
        print(__doc__)
        return 2
    found = [v for p in argv for v in check_notebook(p)]
    for v in found:
        print(v)
    print(f"{len(found)} hand-typed number(s) in {len(argv)} notebook(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
