"""What the page's code listings hold: algorithm, argument checks, signatures,
docstrings.

Every ``show_source(x)`` call in ``chapters/*/*.ipynb`` renders the source of one
``flt_lib`` function or class. This module finds those calls, renders each listing as
the page shows it (:func:`flt_lib.source.show_source`, docstring left out) and sorts its
non-blank lines with the AST:

- ``signature``: a ``def``/``class`` header with its decorators;
- ``docstring``: a docstring that is still shown (of a nested function, or with
  ``docstring=True``);
- ``check``: a statement that validates arguments (see :func:`is_check`);
- ``algorithm``: everything else, comments included.

``python -m book.listings`` prints one row per listing that shows checks, largest first,
and the totals; ``--all`` prints every listing. ``tests/book/test_listings.py`` uses the
same count.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

from book import ROOT

CALL = re.compile(
    r"show_source\(\s*([\w.]+)\s*(?:,\s*docstring\s*=\s*(True|False)\s*)?\)"
)
CHECK_CALL = re.compile(r"_?(check|validate)")
KINDS = ("algorithm", "check", "signature", "docstring")


def cell_source(cell: dict) -> str:
    """A notebook cell's source as one string."""
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def notebook_namespace(cells: list[dict]) -> dict:
    """The notebook's ``flt_lib`` imports, executed."""
    ns: dict = {}
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse(cell_source(cell))
        except SyntaxError:
            continue
        for node in tree.body:
            module = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
            if module.startswith("flt_lib"):
                code = compile(ast.Module([node], []), "<imports>", "exec")
                exec(code, ns)  # noqa: S102
    return ns


def show_source_calls(notebooks: list[Path] | None = None):
    """Yield ``(path, cells, index, cell, expr, obj, docstring)`` for every
    ``show_source`` call in the notebooks."""
    for path in notebooks or sorted((ROOT / "chapters").glob("*/*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        ns = None
        for i, cell in enumerate(cells):
            if cell["cell_type"] != "code" or "show_source(" not in cell_source(cell):
                continue
            ns = notebook_namespace(cells) if ns is None else ns
            for expr, doc in CALL.findall(cell_source(cell)):
                obj = eval(expr, ns)  # noqa: S307
                yield path, cells, i, cell, expr, obj, doc == "True"


def _is_docstring(st: ast.stmt) -> bool:
    return (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)
            and isinstance(st.value.value, str))


def is_check(st: ast.stmt) -> bool:
    """Whether a statement validates arguments rather than computing: a ``raise`` or an
    ``assert``; an ``if`` whose every branch is a check (``if x.ndim != 2: raise
    ...``); a statement that calls a checking helper (``_check_qkv(q, k, v)``, ``x =
    _validate_x(x)``, ``k = check_tensor(W, "W", ndim=2).shape[0]``)."""
    if isinstance(st, (ast.Raise, ast.Assert)):
        return True
    if isinstance(st, ast.If):
        return all(is_check(s) for s in st.body + st.orelse)
    if not isinstance(st, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return False
    for node in ast.walk(st.value) if st.value is not None else ():
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
            if CHECK_CALL.match(name):
                return True
    return False


def classify(code: str) -> dict[int, str]:
    """``{line number (1-based): kind}`` for every non-blank line of ``code``."""
    tree = ast.parse(code)
    lines = code.splitlines()
    kind: dict[int, str] = {}

    def mark(a: int, b: int, what: str) -> None:
        for n in range(a, b + 1):
            kind.setdefault(n, what)

    def visit(body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([st.lineno] + [d.lineno for d in st.decorator_list])
                mark(first, st.body[0].lineno - 1, "signature")
                inner = st.body
                if _is_docstring(inner[0]):
                    mark(inner[0].lineno, inner[0].end_lineno, "docstring")
                    inner = inner[1:]
                visit(inner)
            elif is_check(st):
                mark(st.lineno, st.end_lineno, "check")
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    sub = getattr(st, field, None)
                    if sub:
                        # the statement's own header lines are algorithm
                        mark(st.lineno, sub[0].lineno - 1, "algorithm")
                        visit(sub)
                if isinstance(st, ast.Match):
                    for case in st.cases:
                        visit(case.body)
                mark(st.lineno, st.end_lineno, "algorithm")

    visit(tree.body)
    # a comment line sits between statements: it is algorithm unless inside a check
    return {n: kind.get(n, "algorithm") for n in range(1, len(lines) + 1)
            if lines[n - 1].strip()}


@dataclass(frozen=True)
class Count:
    """The lines of one listing, sorted by kind, and where it stands."""

    where: str            # "chapter/notebook:cell-id"
    qualname: str
    collapsed: bool
    headline: bool
    lines: dict[str, int]
    checks: tuple[str, ...]  # the check statements, first line of each


def count(item) -> Count:
    """Sort the lines of one listing (an item of :func:`show_source_calls`)."""
    from flt_lib.source import show_source

    path, _, _, cell, _, obj, doc = item
    listing = show_source(obj, docstring=doc)
    kinds = classify(listing.code)
    lines = {k: sum(1 for v in kinds.values() if v == k) for k in KINDS}
    tree = ast.parse(listing.code)
    checks = []

    def walk(body):
        for st in body:
            if is_check(st) and not isinstance(st, ast.FunctionDef):
                checks.append(ast.unparse(st).splitlines()[0][:70])
                continue
            for field in ("body", "orelse", "finalbody"):
                walk(getattr(st, field, None) or [])

    walk(tree.body)
    md = cell["metadata"]
    return Count(
        where=f"{path.parent.name}/{path.stem}:{cell.get('id')}",
        qualname=listing.qualname,
        collapsed="hide-output" in md.get("tags", []),
        headline=bool(md.get("flt", {}).get("headline")),
        lines=lines,
        checks=tuple(checks),
    )


def counts(notebooks: list[Path] | None = None) -> list[Count]:
    """One :class:`Count` per ``show_source`` call, in notebook order."""
    return [count(item) for item in show_source_calls(notebooks)]


def totals(rows: list[Count]) -> dict[str, int]:
    """The lines of each kind, summed over ``rows``."""
    return {k: sum(r.lines[k] for r in rows) for k in KINDS}


def main(argv: list[str] | None = None) -> None:
    """Command line: the listings with checks, largest first, and the totals."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--all", action="store_true", help="every listing, not only those with checks"
    )
    args = p.parse_args(argv)
    rows = counts()
    shown = rows if args.all else [r for r in rows if r.lines["check"]]
    shown.sort(key=lambda r: (-r.lines["check"], r.where))
    for r in shown:
        flag = "H" if r.headline else ("c" if r.collapsed else " ")
        print(f"{r.lines['check']:3d} {flag} {r.where:58s} {r.qualname}")
    t = totals(rows)
    n = sum(t.values())
    with_checks = sum(1 for r in rows if r.lines["check"])
    print(f"\n{len(rows)} listings, {with_checks} with checks; "
          f"{n} lines: " + ", ".join(f"{k} {t[k]} ({t[k] / n:.0%})" for k in KINDS))


if __name__ == "__main__":
    main()
