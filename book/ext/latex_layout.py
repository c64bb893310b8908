"""The PDF's layout: tables within the text width, proofs in the body's style.

Two doctree transforms that run for the LaTeX builder only (the website is unchanged):

- **Tables fit the text width.** Sphinx sets a table without explicit column widths in
  ``l`` columns (one line per cell, as wide as its longest entry) once it has more than
  30 rows (a ``longtable``), so the index of statements and Chapter 7's notation table
  ran 139-261 pt into the margin. Every table gets column widths, proportional to the
  length of its columns' text (within bounds), and the class ``colwidths-given``,
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

# A column's share of the line: at least MIN_SHARE of the widest, and its text length
# counted up to MAX_CHARS characters (a long cell wraps anyway).
MIN_CHARS = 6
MAX_CHARS = 60


def column_widths(rows: list[list[str]]) -> list[int]:
    """Relative column widths for a table from the text of its cells.

    Each column's width is the length of its longest entry, clipped to
    [``MIN_CHARS``, ``MAX_CHARS``] characters, so that a column of short numbers is not
    squeezed into nothing and one long cell does not take the whole line.

    Args:
        rows: the cells' text, one list per row (rows may be shorter than the widest).

    Returns:
        One positive integer per column (as many as the longest row has cells).
    """
    ncols = max((len(r) for r in rows), default=0)
    widths = [MIN_CHARS] * ncols
    for row in rows:
        for j, text in enumerate(row):
            longest = max((len(line) for line in text.splitlines()), default=0)
            widths[j] = max(widths[j], min(longest, MAX_CHARS))
    return widths


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
            rows = [
                [entry.astext() for entry in row.findall(nodes.entry)]
                for row in tgroup.findall(nodes.row)
            ]
            if not colspecs or any(
                e.get("morecols") for e in tgroup.findall(nodes.entry)
            ):
                continue
            # The book's own tables set their widths on purpose (book.ext.tables).
            if not any(c.startswith("flt-") for c in table["classes"]):
                for colspec, width in zip(colspecs, column_widths(rows)):
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
