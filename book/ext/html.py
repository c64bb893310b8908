"""The website's header and root page.

- **The PDF in the navigation bar.** A button in every page's header links the whole
  book as a PDF (``flt_pdf``, a path in the site's root, default ``book.pdf``; `make
  pdf` copies it there), and the download menu's "print this page" button, whose label
  ".pdf" looked like the book's PDF, is dropped. ``flt_pdf = ""`` (the student edition,
  which has no PDF) shows no button.
- **The theme starts in "auto" mode.** Without ``default_mode`` pydata-sphinx-theme
  stored an empty mode on a first visit and logged "Got invalid theme mode" in the
  console.
- **The root ``index.html``** (a redirect written by sphinx-external-toc) names the
  favicon, so a browser does not ask for ``/favicon.ico``, which the site lacks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["setup"]

PDF_BUTTON_LABEL = "book-pdf-button"


def _theme_defaults(app: Any, config: Any) -> None:
    """pydata-sphinx-theme reads its default mode from ``html_context``."""
    config.html_context.setdefault("default_mode", "auto")


def _header_buttons(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """Add the PDF button; drop "print this page to PDF" from the download menu."""
    buttons = context.get("header_buttons")
    if buttons is None:
        return
    for group in buttons:
        if group.get("type") == "group":
            group["buttons"] = [
                b for b in group["buttons"] if b.get("label") != "download-pdf-button"
            ]
    pdf = app.config.flt_pdf
    if not pdf:
        return
    button = {
        "type": "link",
        "url": context["pathto"](pdf, 1),
        "tooltip": "The whole book as a PDF",
        "icon": "fas fa-file-pdf",
        "label": PDF_BUTTON_LABEL,
    }
    at = next(
        (i for i, b in enumerate(buttons) if b.get("label") == "download-buttons"),
        len(buttons),
    )
    buttons.insert(at, button)


def _root_index_favicon(app: Any, exc: Exception | None) -> None:
    """Name the favicon in the root redirect page (which sphinx-external-toc wrote)."""
    if exc is not None or app.builder.format != "html":
        return
    index = Path(app.outdir) / "index.html"
    favicon = app.config.html_favicon
    if not index.exists() or not favicon:
        return
    text = index.read_text(encoding="utf-8")
    if 'http-equiv="Refresh"' not in text or 'rel="icon"' in text:
        return
    name = "_static/" + Path(favicon).name
    index.write_text(
        text.rstrip("\n") + f'\n<link rel="icon" href="{name}" />\n', encoding="utf-8"
    )


def setup(app: Any) -> dict[str, Any]:
    """Register the header and root-page hooks (loaded by :mod:`book.ext`)."""
    app.add_config_value("flt_pdf", "book.pdf", "html")
    app.connect("config-inited", _theme_defaults)
    app.connect("html-page-context", _header_buttons, priority=600)
    app.connect("build-finished", _root_index_favicon, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
