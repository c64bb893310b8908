"""The book's tooling: build, tests' plugins, notebook editions, benchmark, Sphinx
extension.

This package lives beside the library ``flt_lib`` and is never installed
(``pyproject.toml`` packages ``flt_lib*`` only), so Colab never sees it. Run its
commands from the repository root, as the Makefile does (``python -m book.build book``);
Jupyter Book loads the Sphinx extension ``book.ext`` from this checkout through
``sphinx.local_extensions`` in ``_config.yml``. Every path is found from this file,
which is always in the checkout.

Modules:

- :mod:`book.build`: the execution cache and its key, the parallel executor, the strict
  build;
- :mod:`book.nbval_cache`: the pytest plugin that stores nbval's executed notebooks;
- :mod:`book.notebook`: setup-cell stamping, stripping, the student edition, release
  checks;
- :mod:`book.bench`: ``make bench``;
- :mod:`book.ext`: the Sphinx extension (numbering, bibliography, tables, LaTeX);
- :mod:`book.upstream`: small patches of other packages, each with the issue it works
  around.
"""

from __future__ import annotations

from pathlib import Path

ROOT = (
    Path(__file__).resolve().parent.parent
)  # the repository: book/ is never installed

__all__ = ["ROOT"]
