"""Glue a number computed on the page into the prose around it (MyST-NB's ``glue``).

The book's prose never types a measured number by hand: a code cell calls
``glue("gap", gap)`` and the markdown writes ``{glue:text}`gap:.3f```. This is the same
function as :func:`myst_nb.glue` and stores the value in the same way (a display output
with ``scrapbook`` metadata, which MyST-NB reads when it builds the page). It is copied
here, in six lines, so that the notebooks also run where myst-nb is not installed
(Colab, JupyterLab): there the call shows nothing, or the value when ``display=True``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["glue"]

# The MIME prefix with which MyST-NB hides a glued value from the cell's visible output.
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, variable: Any, display: bool = False) -> None:
    """Store ``variable``'s display value under ``name`` for ``{glue:text}`name```.

    Args:
        name: key, unique within the notebook (letters, digits, ``_`` and ``-``).
        variable: any object; numbers are formatted by the role's format spec. A
            one-element tensor or NumPy scalar is stored as a Python number, so that
            ``:.3f`` can format it.
        display: also show the value in the cell's output.
    """
    if not isinstance(name, str) or not name or any(
        not (ch.isalnum() or ch in "_-") for ch in name
    ):
        raise ValueError(
            "name must be a non-empty string of letters, digits, '_' or '-', "
            f"got {name!r}"
        )
    try:
        from IPython.core.formatters import format_display_data
        from IPython.display import display as ipy_display
    except ImportError:  # a plain Python script: there is no page to glue into
        return

    if hasattr(variable, "item") and getattr(variable, "ndim", None) == 0:
        variable = variable.item()  # tensor(0.45) -> 0.45
    mimebundle, metadata = format_display_data(variable)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    bundle = {prefix + k: v for k, v in mimebundle.items()}
    ipy_display(bundle, raw=True, metadata=metadata)
