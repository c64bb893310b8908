"""sphinx-exercise: the PDF's links to exercises point at the labels it writes.

sphinx-exercise labels an exercise ``exercise:<label>`` in LaTeX, while a ``{ref}`` to
it (the course guide's homework table, for one) becomes ``<docname>:<label>``: 95 links
were unresolved. No upstream issue for this mismatch was found; the closest is
executablebooks/sphinx-exercise#30 ("Exercise does not support Latex builds in Sphinx",
open). Remove this module when a ``{ref}`` to an exercise resolves in the PDF without
it.
"""

from __future__ import annotations

import re

__all__ = ["exercise_links"]

_EXERCISE_LABEL = re.compile(r"\\label\{exercise:([^}]+)\}")
_DOC_HYPERREF = re.compile(r"\\hyperref\[\\detokenize\{[^}:]*:([^}]+)\}\]")


def exercise_links(tex: str) -> str:
    """Point the PDF's links to exercises at the labels sphinx-exercise writes.

    sphinx-exercise labels an exercise ``exercise:<label>`` in LaTeX, while a ``{ref}``
    to it (the course guide's homework table, for one) becomes ``<docname>:<label>``: 95
    links were unresolved. Rewrite every such link whose label is an exercise's.
    """
    labels = set(_EXERCISE_LABEL.findall(tex))

    def fix(m: re.Match) -> str:
        return (
            f"\\hyperref[exercise:{m.group(1)}]" if m.group(1) in labels else m.group(0)
        )

    return _DOC_HYPERREF.sub(fix, tex)
