"""The code on the page: every notebook shows library code, and docstrings cite real labels.

Two static checks, over every notebook under ``chapters/`` and every module of ``flt_lib``
(so new chapters are held to them as soon as they exist):

- every notebook has at least one cell ``show_source(...)``, tagged ``remove-input``, holding
  nothing else; every argument resolves, through the notebook's own import statements and
  without running the notebook, to a function or class defined in ``flt_lib``;
- every book label cited in an ``flt_lib`` docstring (``eq-...``, ``def-...``, ``thm-...``,
  ...) is defined somewhere in the book's notebooks or markdown files.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT
from book import notebook as nbt

NOTEBOOKS = nbt.notebooks(ROOT)
IDS = [str(p.relative_to(ROOT / "chapters")) for p in NOTEBOOKS]

# Labels the book defines: `$$ ... $$ (eq-x)` for equations, `:label: x` for directives
# (sphinx-proof, exercises, figures written as directives), `"name": "fig-x"` in cell metadata.
_DEFINED = [
    re.compile(r"\$\$\s*\(([\w-]+)\)"),
    re.compile(r":label:\s*([\w-]+)"),
    re.compile(r"^\(([\w-]+)\)=\s*$", re.M),
]
# Labels cited in docstrings: the book's prefixes, as whole hyphenated words.
_PREFIXES = ("eq", "def", "thm", "lem", "prop", "rem", "cor", "fig", "ex")
_CITED = re.compile(rf"(?<![\w-])((?:{'|'.join(_PREFIXES)})-[a-z0-9]+(?:-[a-z0-9]+)*)")


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _parse(code: str) -> ast.Module | None:
    lines = [ln for ln in code.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _aliases(cells: list[dict]) -> dict[str, str]:
    """Name bound by each import statement of the notebook -> the dotted path it stands for."""
    out: dict[str, str] = {}
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        tree = _parse(_src(cell))
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        out[a.asname] = a.name
                    else:
                        out[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _resolve(path: str) -> object:
    """Import the longest importable module prefix of ``path`` and getattr the rest."""
    parts = path.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"no module in {path!r} can be imported")


def _show_source_calls(tree: ast.Module) -> list[ast.Call]:
    return [
        n for n in ast.walk(tree)
        if isinstance(n, ast.Call) and _dotted(n.func) in ("show_source", "source.show_source",
                                                           "flt_lib.source.show_source")
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_notebook_shows_library_code(path):
    cells = _cells(path)
    aliases = _aliases(cells)
    shown, problems = [], []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        tree = _parse(_src(cell))
        calls = _show_source_calls(tree) if tree else []
        if not calls:
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        if "remove-input" not in tags:
            problems.append(f"cell {i}: a show_source cell must be tagged remove-input")
        if not all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                   and s.value in calls for s in tree.body):
            problems.append(f"cell {i}: a show_source cell must hold show_source(...) only")
        for call in calls:
            if not call.args:
                problems.append(f"cell {i}: show_source() needs the object to show")
                continue
            name = _dotted(call.args[0])
            if name is None:
                problems.append(f"cell {i}: show_source needs a name like module.function, "
                                f"got {ast.unparse(call.args[0])}")
                continue
            head, _, rest = name.partition(".")
            if head not in aliases:
                problems.append(f"cell {i}: {name!r}: {head!r} is not bound by an import")
                continue
            full = aliases[head] + (f".{rest}" if rest else "")
            try:
                obj = _resolve(full)
            except (ImportError, AttributeError) as err:
                problems.append(f"cell {i}: {name!r} ({full}) does not resolve: {err}")
                continue
            module = getattr(obj, "__module__", "") or ""
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or not module.startswith("flt_lib"):
                problems.append(f"cell {i}: {name!r} is not a function or class of flt_lib")
            shown.append(full)
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)
    assert shown, f"{path.name} never shows library code with show_source(...)"


def _book_labels() -> set[str]:
    labels: set[str] = set()
    texts = [p.read_text(encoding="utf-8") for p in (ROOT / "chapters").rglob("*.md")]
    for path in NOTEBOOKS:
        for cell in _cells(path):
            texts.append(_src(cell))
            fig = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            if "name" in fig:
                labels.add(fig["name"])
    for text in texts:
        for pattern in _DEFINED:
            labels.update(pattern.findall(text))
    return labels


def _docstring_citations() -> dict[str, list[str]]:
    cited: dict[str, list[str]] = {}
    for path in sorted((ROOT / "flt_lib").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node) or ""
                where = f"{path.relative_to(ROOT)}:{getattr(node, 'name', '<module>')}"
                for label in _CITED.findall(doc):
                    cited.setdefault(label, []).append(where)
    return cited


def test_labels_cited_in_docstrings_exist_in_the_book():
    defined = _book_labels()
    assert len(defined) > 50, "found almost no labels in the book: is the pattern right?"
    missing = {label: where for label, where in _docstring_citations().items() if label not in defined}
    lines = [f"{label} (cited in {', '.join(where)})" for label, where in sorted(missing.items())]
    assert not missing, "labels cited in flt_lib docstrings but defined nowhere in the book:\n  " + "\n  ".join(lines)


def test_the_resolver_and_the_label_scan_work():
    # The checks above must be able to fail: a wrong name and a wrong label are caught.
    with pytest.raises(AttributeError):
        _resolve("flt_lib.optim.gd.no_such_function")
    assert _resolve("flt_lib.optim.gd.gradient_descent").__name__ == "gradient_descent"
    assert _CITED.findall("see eq. ``eq-gd-update`` and thm-gd-pl; not well-defined") == [
        "eq-gd-update", "thm-gd-pl"]
    cells = [{"cell_type": "code", "source": "from flt_lib.optim import gd as g\nimport flt_lib"}]
    assert _aliases(cells) == {"g": "flt_lib.optim.gd", "flt_lib": "flt_lib"}
