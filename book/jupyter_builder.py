"""The Sphinx builder ``flt_jupyter``: reader notebooks from the resolved doctrees.

It extends QuantEcon's ``sphinx-tojupyter`` (0.6.0), whose ``jupyter`` builder turns a
Sphinx doctree into plain Jupyter Markdown, through its two hooks, a builder subclass
and a translator subclass. What ``sphinx-tojupyter`` does for us, unchanged: headings,
paragraphs, lists, emphasis, inline literals, tables, display math with ``\\tag{n}``,
the text of resolved cross-references and citations, the glued numbers (MyST-NB's
``pasted-text`` nodes).

What it does not do for this book, and this module adds (each in one method below):

- **code cells.** With MyST-NB notebooks its translator writes every code cell as a
  fenced Markdown block (the cell's language, ``ipython3``, is not its kernel's
  ``python3``), without the cell's id or tags. We take every code cell from the source
  notebook instead, by the ``cell_index`` MyST-NB records: source, id and metadata
  exactly as written.
- **statements.** It labels every sphinx-proof node by its node class, so with a shared
  counter (``prf_realtyp_to_countertyp``) a definition reads "Theorem 1.1", and it
  prints "Proof." twice. We use the node's ``realtype`` and its number in
  ``countertype``, as the website does: "**Definition 4.1** (Gate)." and "*Proof.*".
- **exercises and solutions** (sphinx-exercise): it numbers exercises as section
  headings and prints every solution openly. We head exercises "**Exercise 4.3**", put a
  solution's text inside ``<details>`` (collapsed in Colab and JupyterLab) and fold its
  code cells; the student edition drops solutions.
- **links.** It links to sibling ``.ipynb`` files and in-page anchors; ours go to the
  page on the website (``html.baseurl``), so a reader of one notebook reaches every
  reference.
- **equation numbers.** It prefixes the chapter's number to a per-page count; we use the
  number the website shows (``toc_fignumbers``, so appendices read "(A.3)").
- **figures and listings.** Outputs are stripped, so a figure's caption becomes a
  Markdown cell after its code, and a ``show_source`` listing becomes a fenced Python
  block.
- **inline math** as ``$x$`` rather than ``$ x $``.

Loaded only by ``python -m book.jupyter`` (through ``confoverrides``), never by the
website.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
from docutils import nodes
from sphinx.util import logging
from sphinx_tojupyter.builders.jupyter import JupyterBuilder
from sphinx_tojupyter.writers.jupyter import JupyterWriter
from sphinx_tojupyter.writers.translate_all import JupyterTranslator

from book import graded

logger = logging.getLogger(__name__)

SHOW_SOURCE_ONLY = re.compile(r"(\s*show_source\([^\n]*\)\s*)+")
SOLUTION_TITLE = "# @title Solution"


def _number(env: Any, docname: str, kind: str, ident: str) -> str:
    """The website's number of ``ident`` (a ``kind``) in ``docname``; '' if none."""
    number = env.toc_fignumbers.get(docname, {}).get(kind, {}).get(ident)
    return ".".join(map(str, number)) if number else ""


class FltJupyterTranslator(JupyterTranslator):
    """sphinx-tojupyter's translator, with the additions the module docstring lists."""

    def __init__(self, builder: Any, document: Any) -> None:
        super().__init__(builder, document)
        self.student = builder.student
        self.docname = builder.docname
        self.env = builder.env
        self.source_nb = builder.source_notebook(self.docname)
        self.in_solution = False
        self.solution_summary = ""
        self.skip_proof_word = False
        self.first_title = True

    # ---- cells -----------------------------------------------------------------------
    def _code_cell(self, index: int, *, solution: bool) -> None:
        src = self.source_nb["cells"][index]
        cell = nbformat.v4.new_code_cell(
            "".join(src["source"]) if isinstance(src["source"], list) else src["source"]
        )
        cell["id"] = src.get("id", cell["id"])
        meta = json.loads(json.dumps(src.get("metadata", {})))
        if solution or "solution" in meta.get("tags", []):
            meta["cellView"] = "form"  # Colab folds a cell that starts with "# @title"
            meta.setdefault("jupyter", {})[
                "source_hidden"
            ] = True  # JupyterLab folds it
            if not cell["source"].startswith("# @title"):
                cell["source"] = f"{SOLUTION_TITLE}\n{cell['source']}"
        cell["metadata"] = meta
        self.output["cells"].append(cell)

    def _listing(self, container: nodes.Element) -> str:
        """A ``show_source`` output as Markdown: header line and fenced Python block."""
        parts = []
        for block in container.findall(nodes.literal_block):
            code = block.astext().rstrip("\n")
            lang = block.get("language", "")
            head = ""
            para = block.parent and next(
                (p for p in block.parent.findall(nodes.paragraph)), None
            )
            if lang != "python" and code.startswith("# flt_lib."):  # text/plain form
                head, _, code = code.partition("\n")
                head = f"`{head[2:].strip()}`"
            elif para is not None:
                head = para.astext()
                head = re.sub(r"^(\S+) in (\S+),", r"`\1` in `\2`,", head)
            fence = "`" * max(
                3, max((len(m) for m in re.findall(r"`+", code)), default=0) + 1
            )
            parts.append(f"{head}\n\n{fence}python\n{code}\n{fence}".strip())
        return "\n\n".join(parts)

    def visit_container(self, node: nodes.Element) -> None:
        if node.get("nb_element") != "cell_code":
            return super().visit_container(node)
        self.add_markdown_cell()
        index = int(node["cell_index"])
        src = self.source_nb["cells"][index]
        tags = src.get("metadata", {}).get("tags", [])
        source = (
            "".join(src["source"]) if isinstance(src["source"], list) else src["source"]
        )
        if "remove-input" in tags and SHOW_SOURCE_ONLY.fullmatch(source):
            outputs = [
                c for c in node.children if c.get("nb_element") == "cell_code_output"
            ]
            listing = "\n\n".join(self._listing(o) for o in outputs)
            if listing:
                if "hide-output" in tags:
                    first = listing.split("\n", 1)[0]
                    listing = (
                        f"<details><summary>{_md_inline_to_html(first)}</summary>\n\n"
                        f"{listing.split(chr(10), 1)[1].strip()}\n\n</details>"
                    )
                self.markdown_lines.append(listing)
                self.add_markdown_cell()
                raise nodes.SkipNode
        self._code_cell(index, solution=self.in_solution)
        for figure in node.findall(nodes.figure):
            caption = next(iter(figure.findall(nodes.caption)), None)
            if caption is None:
                continue
            ident = (figure.get("ids") or [""])[0]
            number = _number(self.env, self.docname, "figure", ident)
            self.markdown_lines.append(f"<a id='{ident}'></a>\n\n**Figure {number}.** ")
            for child in caption.children:
                child.walkabout(self)
            self.add_markdown_cell()
        raise nodes.SkipNode

    def add_markdown_cell(self, slide_type: str = "slide", title: bool = False) -> None:
        if self.in_solution and "".join(self.markdown_lines).strip():
            self.markdown_lines.insert(
                0, f"<details><summary>{self.solution_summary}</summary>\n\n"
            )
            while self.markdown_lines and not self.markdown_lines[-1].strip():
                self.markdown_lines.pop()
            self.markdown_lines.append("\n\n</details>")
        super().add_markdown_cell(slide_type=slide_type, title=title)
        if self.output["cells"] and self.output["cells"][-1]["cell_type"] == "markdown":
            self.output["cells"][-1]["metadata"] = {}

    # ---- text ------------------------------------------------------------------------
    def visit_Text(self, node: nodes.Text) -> None:
        if self.in_math and not self.in_code_block and not self.table_builder:
            self.markdown_lines.append(f"${node.astext().strip()}$")
            return
        if self.skip_proof_word:
            self.skip_proof_word = False
            text = node.astext()
            if text.startswith("Proof."):
                stripped = text[len("Proof.") :].lstrip()
                if stripped:
                    super().visit_Text(nodes.Text(stripped))
                return
        super().visit_Text(node)

    def visit_title(self, node: nodes.Element) -> None:
        super().visit_title(node)
        if self.first_title and self.section_level == 1:
            self.first_title = False
            number = self.env.toc_secnumbers.get(self.docname, {}).get("")
            if number:
                self.markdown_lines.append(".".join(map(str, number)) + " ")

    def visit_math_block(self, node: nodes.Element) -> None:
        super().visit_math_block(node)
        if node.get("label"):
            ident = (node.get("ids") or [""])[0]
            number = _number(self.env, self.docname, "displaymath", ident)
            self.math_block_label = f" \\tag{{{number}}}\n" if number else "\n"

    # ---- links -----------------------------------------------------------------------
    def visit_reference(self, node: nodes.Element) -> None:
        self.markdown_lines.append("[")
        self.reference_text_start = len(self.markdown_lines)

    def depart_reference(self, node: nodes.Element) -> None:
        if "refuri" in node:
            url = node["refuri"]
            if node.get("internal") and not re.match(r"^[a-z]+://", url):
                url = self.builder.page_url(self.docname) + (
                    url if url.startswith("#") else ""
                )
        elif "refid" in node:
            url = f"{self.builder.page_url(self.docname)}#{node['refid']}"
        else:
            url = ""
        url = url.replace("(", "%28").replace(")", "%29").replace(" ", "%20")
        self.markdown_lines.append(f"]({url})")

    def visit_target(self, node: nodes.Element) -> None:
        pass  # anchors would point into the notebook; links go to the website

    # ---- statements (sphinx-proof) ---------------------------------------------------
    def _statement(self, node: nodes.Element) -> None:
        self.add_markdown_cell()
        realtype = node.get("realtype") or node.get("type") or "statement"
        countertype = node.get("countertype") or realtype
        ident = (node.get("ids") or [""])[0]
        number = _number(self.env, self.docname, countertype, ident)
        title = ""
        for child in node.children:
            if isinstance(child, nodes.title):
                title = child.astext().strip()
        title = (
            title[1:-1].strip()
            if title.startswith("(") and title.endswith(")")
            else title
        )
        name = f"{realtype.title()} {number}" if number else realtype.title()
        head = f"**{name}** ({title})." if title else f"**{name}.**"
        self.markdown_lines.append(f"{head}\n\n")
        self._remove_title_node(node)

    def _statement_end(self, node: nodes.Element) -> None:
        self.add_markdown_cell()

    def visit_proof_node(self, node: nodes.Element) -> None:
        self.add_markdown_cell()
        self.markdown_lines.append("*Proof.* ")
        self.skip_proof_word = True

    def depart_proof_node(self, node: nodes.Element) -> None:
        self.add_markdown_cell()

    def visit_admonition(self, node: nodes.Element) -> None:
        """A titled admonition (``{admonition}``, ``{tip}`` ...): its title in bold."""
        titles = [c for c in node.children if isinstance(c, nodes.title)]
        if titles:
            self.add_markdown_cell()
            self.markdown_lines.append(f"**{titles[0].astext().strip()}.** ")
            node.remove(titles[0])

    def depart_admonition(self, node: nodes.Element) -> None:
        pass

    # ---- exercises and solutions (sphinx-exercise) -----------------------------------
    def visit_exercise_enumerable_node(self, node: nodes.Element) -> None:
        self.add_markdown_cell()
        ident = node.get("label", "")
        number = _number(self.env, self.docname, "exercise", ident)
        subtitle = "".join(c.astext() for c in node.findall(nodes.subtitle)).strip()
        head = (
            f"**Exercise {number}** ({subtitle})."
            if subtitle
            else f"**Exercise {number}.**"
        )
        self.markdown_lines.append(f"<a id='{ident}'></a>\n\n{head} ")
        for child in list(node.findall(nodes.title)) + list(
            node.findall(nodes.subtitle)
        ):
            child.parent.remove(child)

    def depart_exercise_enumerable_node(self, node: nodes.Element) -> None:
        self.add_markdown_cell()

    visit_exercise_node = visit_exercise_enumerable_node
    depart_exercise_node = depart_exercise_enumerable_node

    def visit_solution_node(self, node: nodes.Element) -> None:
        if self.student:  # no solution; a graded exercise's stub and check stay
            self.add_markdown_cell()
            for cell in node.findall(nodes.container):
                if cell.get("nb_element") != "cell_code":
                    continue
                src = self.source_nb["cells"][int(cell["cell_index"])]
                flt = src.get("metadata", {}).get("flt", {})
                if "graded" in flt:
                    code = graded.stub(graded._src(src), flt["graded"])
                elif "graded_check" in flt:
                    code = f'grader.check("{flt["graded_check"]}")'
                else:
                    continue
                new = nbformat.v4.new_code_cell(code.rstrip("\n"))
                new["id"] = src.get("id", new["id"])
                self.output["cells"].append(new)
            raise nodes.SkipNode
        self.add_markdown_cell()
        target = node.get("target_label", "")
        number = ""
        registry = getattr(self.env, "sphinx_exercise_registry", {})
        if target in registry:
            number = _number(
                self.env,
                registry[target].get("docname", self.docname),
                "exercise",
                target,
            )
        self.solution_summary = (
            f"Solution to Exercise {number}" if number else "Solution"
        )
        self.in_solution = True
        self.solution_start = len(self.output["cells"])
        for child in list(node.findall(nodes.title)):
            child.parent.remove(child)

    def depart_solution_node(self, node: nodes.Element) -> None:
        self.add_markdown_cell()
        self.in_solution = False
        added = self.output["cells"][self.solution_start :]
        if not any(c["cell_type"] == "markdown" for c in added):
            # a solution in code only: still a collapsed block that says where it is
            self.output["cells"].insert(
                self.solution_start,
                nbformat.v4.new_markdown_cell(
                    f"<details><summary>{self.solution_summary}</summary>\n\n"
                    "The solution is the folded code cell below.\n\n</details>"
                ),
            )

    def unknown_visit(self, node: nodes.Node) -> None:
        pass

    def unknown_departure(self, node: nodes.Node) -> None:
        pass


# every sphinx-proof statement type goes through _statement
for _kind in (
    "theorem",
    "axiom",
    "lemma",
    "definition",
    "remark",
    "conjecture",
    "corollary",
    "algorithm",
    "criterion",
    "example",
    "property",
    "observation",
    "proposition",
    "assumption",
    "notation",
    "unenumerable",
):
    setattr(
        FltJupyterTranslator, f"visit_{_kind}_node", FltJupyterTranslator._statement
    )
    setattr(
        FltJupyterTranslator,
        f"depart_{_kind}_node",
        FltJupyterTranslator._statement_end,
    )


def _md_inline_to_html(text: str) -> str:
    """`a` in `b` -> <code>a</code> in <code>b</code>, for a <summary> line."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


class FltJupyterWriter(JupyterWriter):
    """sphinx-tojupyter's writer, with our translator."""

    def _identify_translator(self, builder: Any) -> type:
        return FltJupyterTranslator


class FltJupyterBuilder(JupyterBuilder):
    """Writes each notebook page twice: the full edition and the student edition."""

    name = "flt_jupyter"
    _writer_class = FltJupyterWriter
    student = False

    def init(self) -> None:
        super().init()
        self.site = (self.config.html_baseurl or "").rstrip("/") + "/"
        self.written: dict[str, list[str]] = {"full": [], "student": []}

    def page_url(self, docname: str) -> str:
        return f"{self.site}{docname}.html"

    def get_target_uri(self, docname: str, typ: str | None = None) -> str:
        return self.page_url(docname)

    def get_relative_uri(self, from_: str, to: str, typ: str | None = None) -> str:
        return self.get_target_uri(to, typ)

    def get_outdated_docs(self):
        return [
            d for d in self.env.found_docs if self.env.doc2path(d).endswith(".ipynb")
        ]

    def source_notebook(self, docname: str) -> dict:
        return json.loads(Path(self.env.doc2path(docname)).read_text(encoding="utf-8"))

    def write_doc(self, docname: str, doctree: nodes.document) -> None:
        if not str(self.env.doc2path(docname)).endswith(".ipynb"):
            return
        import docutils.io

        self.docname = docname
        for edition, outdir in (
            ("full", self.config.flt_jupyter_out),
            ("student", self.config.flt_jupyter_student_out),
        ):
            if not outdir:
                continue
            self.student = edition == "student"
            writer = self._writer_class(self)
            writer._set_ref_urlpath(None)
            writer._set_tojupyter_image_urlpath(None)
            writer.write(doctree.deepcopy(), docutils.io.StringOutput(encoding="utf-8"))
            nb = nbformat.reads(writer.output, as_version=4)
            rel = (
                Path(docname).relative_to("chapters")
                if docname.startswith("chapters/")
                else Path(docname)
            )
            target = Path(outdir) / rel.with_suffix(".ipynb")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
            self.written[edition].append(str(rel))
        self.student = False

    def finish(self) -> None:
        pass


def setup(app: Any) -> dict:
    """Sphinx entry point: the builder ``flt_jupyter`` and its settings."""
    import sphinx_tojupyter

    sphinx_tojupyter.setup(
        app
    )  # its config values (tojupyter_*), which the translator reads
    app.add_builder(FltJupyterBuilder)
    app.add_config_value("flt_jupyter_out", "", "")
    app.add_config_value("flt_jupyter_student_out", "", "")
    # MyST-NB renders outputs by builder name; sphinx-tojupyter's setup replaced the
    # overrides.
    app.config["nb_mime_priority_overrides"] = list(
        app.config["nb_mime_priority_overrides"]
    ) + [
        ("flt_jupyter", "text/markdown", 10),
        ("flt_jupyter", "text/plain", 20),
        ("flt_jupyter", "image/png", 30),
        ("flt_jupyter", "text/html", 40),
    ]
    return {"parallel_read_safe": True, "parallel_write_safe": False}
