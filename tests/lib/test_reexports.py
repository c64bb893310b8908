"""One re-export convention for every subpackage of flt_lib.

A chapter's package (``flt_lib.recurrent``) lists its modules in ``__all__`` and imports
nothing: ``from flt_lib.recurrent import elman``. A module that grew into a subpackage
(``flt_lib.flt.ntk``) re-exports every public name of its files, so ``ntk.arccos_ntk``
works whichever file holds it.
"""

import importlib
import pkgutil

import pytest

import flt_lib

PACKAGES = [m.name for m in pkgutil.walk_packages(flt_lib.__path__, "flt_lib.") if m.ispkg]


@pytest.mark.parametrize("name", PACKAGES)
def test_package_follows_the_convention(name):
    pkg = importlib.import_module(name)
    subs = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__))
    assert hasattr(pkg, "__all__"), f"{name} has no __all__"
    names = set(pkg.__all__)
    if names <= set(subs):  # a chapter's package: its modules
        assert names == set(subs), f"{name}.__all__ misses modules {set(subs) - names}"
        return
    public = set()
    for sub in subs:
        public |= set(getattr(importlib.import_module(f"{name}.{sub}"), "__all__", []))
    assert names == public, (
        f"{name} re-exports {sorted(names - public)} that no file defines and misses "
        f"{sorted(public - names)}")
    for n in names:
        assert getattr(pkg, n) is not None


def test_library_modules_stay_under_500_lines():
    """README: a module that grows past 500 lines becomes a subpackage. The build tools
    (``flt_lib/_*.py``, moving to ``book/``) are single tools and exempt."""
    root = flt_lib.__path__[0]
    import pathlib

    long = {str(p.relative_to(root)): n for p in pathlib.Path(root).rglob("*.py")
            if not (p.parent == pathlib.Path(root) and p.name.startswith("_")
                    and p.name != "__init__.py" and p.name != "_validate.py")
            and (n := len(p.read_text().splitlines())) >= 500}
    assert not long, long
