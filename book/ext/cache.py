"""The execution cache is keyed on ``flt_lib``, also for a plain ``jupyter-book build``.

MyST-NB's ``cache`` mode matches a notebook to its cached outputs by the notebook's code
alone. At ``builder-inited`` this module opens the cache through
:func:`book.build.open_cache`, which empties it when it was filled under another key
(another ``flt_lib``, ``requirements.txt`` or device/thread setting). Between builds it
remembers which cache record each page was read from, and has Sphinx read a page again
when that record changed (e.g. after a change in ``flt_lib``), though the notebook did
not.

The configuration value ``flt_library_root`` names the folder that holds the
``flt_lib/`` the kernels import; it defaults to this repository (a test's tiny book sets
its own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from book import ROOT
from book.build import CACHE_DIR, cache_key, cached_record, open_cache

__all__ = ["setup"]


def _key(app: Any) -> str:
    """The cache key of the ``flt_lib`` this build's kernels import."""
    return cache_key(Path(app.config.flt_library_root or ROOT))


def _on_builder_inited(app: Any) -> None:
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return
    path = Path(config.execution_cache_path or CACHE_DIR)
    if not path.is_absolute():
        path = (Path(app.srcdir) / path).resolve()
    app.env.mystnb_config = config.copy(execution_cache_path=str(path))
    open_cache(path, key=_key(app))


def _notebook_records(app: Any) -> dict[str, int | None]:
    """For each notebook page, the pk of the cache record that matches it now."""
    import nbformat

    cache = open_cache(Path(app.env.mystnb_config.execution_cache_path), key=_key(app))
    out = {}
    for docname in app.env.found_docs:
        path = Path(app.env.doc2path(docname))
        if path.suffix == ".ipynb" and path.exists():
            record = cached_record(cache, nbformat.read(path, as_version=4))
            out[docname] = None if record is None else record.pk
    return out


def _uses_cache(env: Any) -> bool:
    config = getattr(env, "mystnb_config", None)
    return config is not None and config.execution_mode == "cache"


def _on_env_get_outdated(app: Any, env: Any, added, changed, removed) -> list[str]:
    """Re-read a page whose cached outputs changed (e.g. after a change in flt_lib)."""
    if not _uses_cache(env):
        return []
    before = getattr(env, "flt_nb_records", {})
    now = _notebook_records(app)
    return [
        d
        for d, pk in now.items()
        if d not in added | changed and before.get(d, -1) != pk
    ]


def _on_env_updated(app: Any, env: Any) -> list[str]:
    if _uses_cache(env):
        env.flt_nb_records = _notebook_records(app)
    return []


def setup(app: Any) -> dict[str, Any]:
    """Register the hooks (loaded by :mod:`book.ext`, or alone by a test's book)."""
    app.add_config_value("flt_library_root", "", "env")
    app.connect("builder-inited", _on_builder_inited, priority=600)  # after MyST-NB's
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.connect("env-updated", _on_env_updated)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
