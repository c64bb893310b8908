"""The book's Sphinx extension, loaded by ``_config.yml`` (``sphinx.local_extensions``).

Jupyter Book puts the repository on ``sys.path`` and loads ``book.ext``, whose
:func:`setup` registers each part; no install of this checkout is needed. Each part is a
module with its own ``setup``, so a test can load one alone:

- :mod:`book.ext.cache`: the execution cache is keyed on ``flt_lib`` (also for a plain
  ``jupyter-book build``), and a page whose cached outputs changed is read again;
- :mod:`book.ext.numbering`: appendix letters, and the PDF's parts numbered as the
  website;
- :mod:`book.ext.bibliography`: "Author, Year" labels and citations;
- :mod:`book.ext.tables`: the execution-times table and the index of numbered
  statements;
- :mod:`book.ext.latex`: the PDF through pdflatex;
- :mod:`book.upstream`: patches of sphinx-proof and sphinx-thebe, each in its own
  module.

The website's CSS, JavaScript and favicon live in ``_static/``, which Jupyter Book
includes by itself. Nothing here is imported by ``flt_lib`` or by a notebook.
"""

from __future__ import annotations

from typing import Any

__all__ = ["setup"]


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point: register every part of the extension."""
    from book.ext import bibliography, cache, latex, numbering, tables
    from book.upstream import sphinx_proof_labels, sphinx_thebe_scripts

    sphinx_proof_labels.install()
    for part in (cache, numbering, bibliography, tables, latex, sphinx_thebe_scripts):
        part.setup(app)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
