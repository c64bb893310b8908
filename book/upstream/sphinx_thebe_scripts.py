"""sphinx-thebe: one copy of each script on a page.

sphinx-thebe adds its inline configuration script with ``app.add_js_file`` after the
HTML builder is set up, and Sphinx 7.4 then lists it twice; the second copy fails with
"Identifier 'THEBE_JS_URL' has already been declared" on every page. No upstream issue
for this was found (searched sphinx-thebe's and Sphinx's trackers); remove this module
when a sphinx-thebe release adds its script once.
"""

from __future__ import annotations

from typing import Any

__all__ = ["dedupe_scripts", "setup"]


def dedupe_scripts(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """Drop repeated <script> entries from a page.

    sphinx-thebe adds its inline configuration script with ``app.add_js_file`` after the
    HTML builder is set up, and Sphinx 7.4 then lists it twice; the second copy fails
    with "Identifier 'THEBE_JS_URL' has already been declared" on every page.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        # The file name (None and "" both mean an inline script), not str(js): that has
        # the priority in it, and the copies differ there.
        name = str(getattr(js, "filename", js) or "")
        key = (name, tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


def setup(app: Any) -> dict[str, Any]:
    """Register the clean-up (loaded by :mod:`book.ext`)."""
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
