"""The PDF's layout: tables within the text width, proofs in the body's style.

Two doctree transforms that run for the LaTeX builder only (the website is unchanged):

- **Tables fit the text width.** Sphinx sets a table without explicit column widths in
  ``l`` columns (one line per cell, as wide as its longest entry) once it has more than
  30 rows (a ``longtable``), so the index of statements and Chapter 7's notation table
  ran 139-261 pt into the margin. Every table gets column widths: its longest word, and
  a share of the rest of the line by the length of its text, and the class
  ``colwidths-given``,
  which makes Sphinx write ``\\X{w}{total}`` columns: paragraphs that wrap within a
  fixed share of the line width.
- **Proofs read "Proof." in the body's style.** sphinx-proof writes a proof as an
  untitled admonition, which LaTeX draws as a box with an empty coloured title bar. A
  proof becomes plain paragraphs that start with an italic *Proof.* and end with a
  square, as in most textbooks.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

__all__ = ["TablesFitTheLine", "PlainProofs", "column_widths", "setup"]

# Column widths in characters of body text: a column gets at least its longest word
# (which LaTeX cannot break; inline code counts 1.25 times: its letters are wider), and
# the rest of the line in proportion to its longest entry, counted up to MAX_CHARS.
MIN_CHARS = 4
MAX_CHARS = 60
LINE_CHARS = 80  # about what fits the 453 pt text block in a table's 9-10 pt type
CODE_WIDTH = 1.25


def column_widths(
    rows: list[list[str]], words: list[list[float]] | None = None
) -> list[int]:
    """Relative column widths for a table from the text of its cells.

    Each column gets at least its longest unbreakable word (``words``: the width of each
    cell's longest word, in characters; measured from ``rows`` when not given) plus two,
    so that LaTeX never has to push a word into the next column, and the rest of the
    line (``LINE_CHARS``) in proportion to the length of the column's longest entry,
    clipped to ``MAX_CHARS``. When the longest words alone fill the line, each column
    gets a share in proportion to its longest word.

    Args:
        rows: the cells' text, one list per row (rows may be shorter than the widest).
        words: the longest word of each cell, in characters, the same shape as ``rows``.

    Returns:
        One positive integer per column (as many as the longest row has cells).
    """
    ncols = max((len(r) for r in rows), default=0)
    if words is None:
        words = [[max((len(w) for w in t.split()), default=0) for t in r] for r in rows]
    need = [float(MIN_CHARS)] * ncols
    want = [float(MIN_CHARS)] * ncols
    for row, row_words in zip(rows, words):
        for j, (text, word) in enumerate(zip(row, row_words)):
            longest = max((len(line) for line in text.splitlines()), default=0)
            need[j] = max(need[j], word + 2)
            want[j] = max(want[j], min(longest, MAX_CHARS))
    want = [max(w, n) for w, n in zip(want, need)]
    if sum(want) > LINE_CHARS and sum(need) < LINE_CHARS:
        room = LINE_CHARS - sum(need)
        extra = [w - n for w, n in zip(want, need)]
        want = [n + room * e / sum(extra) for n, e in zip(need, extra)]
    elif sum(need) >= LINE_CHARS:
        # Even the longest words do not fit side by side: the line is shared in
        # proportion to them, so that a column of short words is not squeezed below
        # its longest one by its neighbours' long entries (7.8's comparison table gave
        # "transition" 12/271 of the line and ran it 11-21 pt into the next column).
        want = need
    return [max(1, round(w)) for w in want]


def _longest_word(entry: nodes.Element) -> float:
    """The widest unbreakable word of a table cell, in characters of body text."""
    best = 0.0
    for text in entry.findall(nodes.Text):
        scale = CODE_WIDTH if isinstance(text.parent, nodes.literal) else 1.0
        for word in text.astext().split():
            best = max(best, len(word) * scale)
    return best


class TablesFitTheLine(SphinxPostTransform):
    """Give every table column widths, so that LaTeX wraps its cells within the line."""

    default_priority = 400
    builders = ("latex",)

    def run(self, **kwargs: Any) -> None:
        for table in self.document.findall(nodes.table):
            if "colwidths-given" in table["classes"]:
                continue
            tgroup = next(iter(table.findall(nodes.tgroup)), None)
            if tgroup is None:
                continue
            colspecs = [c for c in tgroup.children if isinstance(c, nodes.colspec)]
            entries = [
                list(row.findall(nodes.entry)) for row in tgroup.findall(nodes.row)
            ]
            rows = [[entry.astext() for entry in row] for row in entries]
            words = [[_longest_word(entry) for entry in row] for row in entries]
            if not colspecs or any(
                e.get("morecols") for e in tgroup.findall(nodes.entry)
            ):
                continue
            # The book's own tables set their widths on purpose (book.ext.tables).
            if not any(c.startswith("flt-") for c in table["classes"]):
                for colspec, width in zip(colspecs, column_widths(rows, words)):
                    colspec["colwidth"] = width
            table["classes"].append("colwidths-given")


class PlainProofs(SphinxPostTransform):
    """A proof in the PDF: "*Proof.* ..." in the body's style, closed by a square."""

    default_priority = 400
    builders = ("latex",)

    def run(self, **kwargs: Any) -> None:
        for box in list(self.document.findall(nodes.admonition)):
            if "proof" not in box["classes"] or box.next_node(nodes.title) is not None:
                continue
            children = list(box.children)
            first = children[0] if children else None
            if isinstance(first, nodes.paragraph) and first.children:
                head = first.children[0]
                if isinstance(head, nodes.Text) and head.astext().startswith("Proof."):
                    rest = head.astext()[len("Proof.") :]
                    first.replace(head, nodes.Text(rest))
                    first.insert(0, nodes.emphasis(text="Proof."))
            last = children[-1] if children else None
            qed = nodes.raw("", r"\hfill\(\square\)", format="latex")
            if isinstance(last, nodes.paragraph):
                last += qed
            else:
                children.append(nodes.paragraph("", "", qed))
            # The box's only id is "proof", shared by every proof and linked by none;
            # a target before the first paragraph would run it into the one above.
            box.replace_self(children)


def setup(app: Any) -> dict[str, Any]:
    """Register both transforms (loaded by :mod:`book.ext`)."""
    app.add_post_transform(TablesFitTheLine)
    app.add_post_transform(PlainProofs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
