"""Show a library function's source on the page, right under the equation it implements.

A notebook cell ``show_source(sgd.sgd_least_squares)`` displays the *current* source of
that function, read from the installed ``flt_lib`` with :mod:`inspect`, so the page can
never drift from the code. In Jupyter and Colab it renders as a highlighted code block
(Markdown output); in a plain terminal it prints as text. The website hides the calling
cell (tag ``remove-input``) and shows only the listing, without its docstring (pass
``docstring=True`` to keep it). A listing that is not the section's method may be
collapsed with the tag ``hide-output`` and a ``mystnb.code_prompt_show`` that names it.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Listing", "show_source"]

_PACKAGE_ROOT = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Listing:
    """The source of one ``flt_lib`` function or class, ready to display."""

    qualname: str    # dotted name, e.g. "flt_lib.optim.sgd.sgd_least_squares"
    # file, relative to the repository root, e.g. "flt_lib/optim/sgd.py"
    path: str
    first_line: int  # line number of the definition's first line in that file (1-based)
    last_line: int   # line number of the definition's last line
    # the source text, dedented (without the docstring if it was left out)
    code: str

    def header(self) -> str:
        """One line naming the object and where it lives."""
        return (
            f"{self.qualname}  ({self.path}, lines {self.first_line}-{self.last_line})"
        )

    def _repr_markdown_(self) -> str:
        longest = max((len(m) for m in re.findall(r"`+", self.code)), default=0)
        fence = "`" * max(3, longest + 1)
        return (
            f"`{self.qualname}` in `{self.path}`, "
            f"lines {self.first_line}–{self.last_line}\n\n"
            f"{fence}python\n{self.code}\n{fence}\n"
        )

    def __str__(self) -> str:
        return f"# {self.header()}\n{self.code}"

    def __repr__(self) -> str:  # what a plain console shows
        return str(self)


def _strip_docstring(code: str) -> str:
    """Remove the docstring of the outermost ``def``/``class`` in ``code``,
    if it has one."""
    tree = ast.parse(code)
    node = tree.body[0] if tree.body else None
    if (
        not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        or not node.body
    ):
        return code
    first = node.body[0]
    is_doc = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    if not is_doc:
        return code
    lines = code.splitlines(keepends=True)
    return "".join(lines[: first.lineno - 1] + lines[first.end_lineno:])


def show_source(obj: object, *, docstring: bool = False) -> Listing:
    """Return the source of an ``flt_lib`` function, class or method, for display in a
    notebook.

    Args:
        obj: a function, class or method defined in ``flt_lib`` (not a copy, not a
            string).
        docstring: if True, keep the docstring; by default it is left out, because the
            page states the equation right above the listing.

    Returns:
        A :class:`Listing`; as the last expression of a cell it renders as a code block.

    Raises:
        TypeError: if ``obj`` is not a function, method or class.
        ValueError: if ``obj`` is not defined in ``flt_lib``.
    """
    target = inspect.unwrap(obj) if callable(obj) else obj
    if isinstance(target, (staticmethod, classmethod)):
        target = target.__func__
    if inspect.ismethod(target):
        target = target.__func__
    if not (inspect.isfunction(target) or inspect.isclass(target)):
        raise TypeError(
            "obj must be an flt_lib function, method or class, "
            f"got {type(obj).__name__}"
        )
    if not isinstance(docstring, bool):
        raise TypeError(f"docstring must be a bool, got {type(docstring).__name__}")
    module = getattr(target, "__module__", "") or ""
    if module != "flt_lib" and not module.startswith("flt_lib."):
        raise ValueError(
            "obj must be defined in flt_lib, "
            f"got {getattr(target, '__qualname__', target)!r} "
            f"from module {module!r}"
        )
    lines, first = inspect.getsourcelines(target)
    code = textwrap.dedent("".join(lines))
    if not docstring:
        code = _strip_docstring(code)
    path = Path(inspect.getsourcefile(target)).resolve()
    try:
        rel = path.relative_to(_PACKAGE_ROOT.parent).as_posix()
    except ValueError:  # installed elsewhere (e.g. site-packages on Colab)
        rel = "flt_lib/" + path.relative_to(_PACKAGE_ROOT).as_posix()
    return Listing(
        qualname=f"{module}.{target.__qualname__}",
        path=rel,
        first_line=first,
        last_line=first + len(lines) - 1,
        code=code.rstrip("\n"),
    )
