"""sphinx-proof: every statement's LaTeX label names its document.

For the PDF, sphinx-proof labels a statement ``<docname>:<label>``, taking the docname
from the enclosing section whose name equals the page title
(``sphinx_proof.nodes.find_parent``). When the two differ in their quotes or case
("Cover’s counting theorem" against "cover's counting theorem"), it writes
``None:<label>``: every link to the statement is then unresolved and its number is lost
(11 statements of Sections 1.3 and A.3). :func:`install` wraps ``find_parent`` to fall
back to the nearest enclosing node that names its document. No upstream issue for this
was found (searched sphinx-proof's tracker; its LaTeX support came with
executablebooks/sphinx-proof#58). Remove this module when sphinx-proof finds the
document name by itself.
"""

from __future__ import annotations

from typing import Any

__all__ = ["install"]


def install() -> None:
    """Wrap ``sphinx_proof.nodes.find_parent`` (once; without sphinx-proof, do nothing).

    For the PDF, sphinx-proof labels a statement ``<docname>:<label>``, taking the
    docname from the enclosing section whose name equals the page title. When the two
    differ in their quotes or case ("Cover’s counting theorem" against "cover's counting
    theorem"), it writes ``None:<label>``: every link to the statement is then
    unresolved and its number is lost (11 statements of Sections 1.3 and A.3). Fall back
    to the nearest enclosing node that names its document.
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
