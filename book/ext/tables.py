"""Two tables that the book's pages hold.

- **The execution-times table** (``{nb-exec-table}``) lists sections by number and title
  in reading order, with run time and status only, so that it fits the page.
- **An index of numbered statements** (``{flt-statement-index}``): every definition,
  theorem, lemma, ... in reading order with its number, title and section, for the page
  that the navigation links as the book's proof index.
"""

from __future__ import annotations

import statistics
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

__all__ = ["FltExecTable", "FltStatementIndex", "StatementIndex", "setup"]


# ---- 3. The execution-times table ----------------------------------------------------
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
    rows = [
        (doc, data[doc]["exec_data"])
        for doc in _reading_order(env)
        if doc in data and data[doc].get("exec_data")
    ]
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
            para = (
                cell
                if isinstance(cell, nodes.paragraph)
                else nodes.paragraph(text=str(cell))
            )
            r += nodes.entry("", para)
        return r

    thead += row(*headers)
    times = []
    for doc, info in rows:
        secnum = env.toc_secnumbers.get(doc, {}).get("")
        number = ".".join(map(str, secnum)) + " " if secnum else ""
        title = env.titles[doc].astext() if doc in env.titles else doc
        link = pending_xref(
            refdoc=docname,
            reftarget="/" + doc,
            reftype="doc",
            refdomain="std",
            refexplicit=True,
            refwarn=True,
            classes=["xref", "doc"],
        )
        link += nodes.inline(text=number + title)
        para = nodes.paragraph()
        para += link
        if not latex:  # the notebook, for whoever edits it (in the PDF, an unbreakable
            # path that ran 60-110 pt into the margin)
            source = env.doc2path(doc, False)
            para += nodes.inline(text=str(source), classes=["flt-exec-path"])
        runtime = info.get("runtime")
        if runtime is not None:
            times.append(runtime)
        ok = info.get("succeeded")
        status = ("ok" if ok else "failed") if latex else ("✓" if ok else "✗ failed")
        tbody += row(para, "-" if runtime is None else f"{runtime:.1f}", status)
    if times:
        tbody += row(
            f"All {len(times)} notebooks: total, median",
            f"{sum(times):.0f}, {statistics.median(times):.1f}",
            "",
        )
    return table


class FltExecTable(SphinxPostTransform):
    """Replace myst-nb's execution-statistics placeholder before myst-nb does (priority
    8)."""

    default_priority = 7

    def run(self, **kwargs: Any) -> None:
        from myst_nb.ext.execution_tables import ExecutionStatsNode

        for node in list(self.document.findall(ExecutionStatsNode)):
            node.replace_self(_exec_table(self.app, self.env, self.env.docname))


# ---- 4. The index of numbered statements ---------------------------------------------
def _collect_statements(app: Any, doctree: Any) -> None:
    env = app.env
    if any(doctree.findall(StatementIndexNode)):
        # The index's titles hold math, added after reading: load MathJax on its page
        # too.
        env.get_domain("math").data["has_equations"][env.docname] = True
    found = []
    for node in doctree.findall(
        lambda n: bool(getattr(n, "get", None)) and n.get("realtype")
    ):
        if (
            node.get("realtype") == "proof"
            or not node.get("label")
            or not node.get("ids")
        ):
            continue
        found.append(
            {
                "label": node["label"],
                "id": node["ids"][0],
                "realtype": node["realtype"],
                "countertype": node.get("countertype", node["realtype"]),
                "title": _title_nodes(node),
                "numbered": type(node).__name__ != "unenumerable_node",
            }
        )
    if not hasattr(env, "flt_statements"):
        env.flt_statements = {}
    env.flt_statements[env.docname] = found


def _title_nodes(node: Any) -> list[Any]:
    """The statement's title as inline nodes (math stays math), without the surrounding
    '( )'."""
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
    env.flt_statements = {
        **getattr(env, "flt_statements", {}),
        **getattr(other, "flt_statements", {}),
    }
    env.flt_statement_pages = getattr(env, "flt_statement_pages", set()) | getattr(
        other, "flt_statement_pages", set()
    )


def _statement_pages(app: Any, env: Any) -> list[str]:
    """Pages holding the index are rewritten whenever anything was read."""
    return sorted(getattr(env, "flt_statement_pages", set()))


class StatementIndexNode(nodes.General, nodes.Element):
    """Placeholder for the index of statements, replaced once every page is read."""


class StatementIndex(SphinxDirective):
    """``{flt-statement-index}``: the table of every numbered statement, in reading
    order."""

    has_content = False

    def run(self) -> list[Any]:
        if not hasattr(self.env, "flt_statement_pages"):
            self.env.flt_statement_pages = set()
        self.env.flt_statement_pages.add(self.env.docname)
        return [StatementIndexNode()]


def _relinked(parts: list[Any], docname: str) -> list[Any]:
    """Title nodes copied from a statement's page, their cross-references resolved from
    ``docname``, the page that shows the index.

    A citation in a statement's title is a ``pending_xref`` whose ``refdoc`` names the
    statement's page, and Sphinx resolves it relative to that page: copied as it was,
    a citation of Theorem 7.9 linked ``../bibliography.html#id65`` from an index one
    folder higher, a page that does not exist.
    """
    from sphinx.addnodes import pending_xref

    for part in parts:
        if isinstance(part, nodes.Element):
            for ref in part.findall(pending_xref):
                ref["refdoc"] = docname
    return parts


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
            env.titles[doc].astext() if doc in env.titles else doc
        )
        for item in statements.get(doc, []):
            number = ""
            if item["numbered"]:
                num = (
                    env.toc_fignumbers.get(doc, {})
                    .get(item["countertype"], {})
                    .get(item["id"])
                )
                number = " " + ".".join(map(str, num)) if num else ""
            label = item["realtype"].title() + number
            row = nodes.row()
            para = nodes.paragraph()
            para += make_refnode(
                app.builder, docname, doc, item["id"], nodes.Text(label)
            )
            row += nodes.entry("", para)
            title = nodes.paragraph()
            title += _relinked([child.deepcopy() for child in item["title"]], docname)
            row += nodes.entry("", title)
            sec = nodes.paragraph()
            sec += make_refnode(app.builder, docname, doc, "", nodes.Text(section))
            row += nodes.entry("", sec)
            tbody += row
    return table


class FltStatementIndex(SphinxPostTransform):
    """Replace the placeholder with the table (after all pages are read and
    numbered)."""

    default_priority = 7

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(StatementIndexNode)):
            node.replace_self(_statement_table(self.app, self.env, self.env.docname))


def setup(app: Any) -> dict[str, Any]:
    """Register both tables (loaded by :mod:`book.ext`)."""
    app.add_post_transform(FltExecTable)
    app.add_node(StatementIndexNode)
    app.add_directive("flt-statement-index", StatementIndex)
    app.add_post_transform(FltStatementIndex)
    app.connect("doctree-read", _collect_statements)
    app.connect("env-purge-doc", _purge_statements)
    app.connect("env-merge-info", _merge_statements)
    app.connect("env-updated", _statement_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
