"""Every notebook runs on Colab as it is: it imports only what Colab has, plus flt_lib.

Colab ships numpy, torch, matplotlib and scipy; the setup cell installs flt_lib, whose own
run-time dependencies must be exactly those four, so installing it changes nothing else.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import tomllib

import pytest

from conftest import ROOT
from book import notebook as nbt

COLAB = {"numpy", "torch", "matplotlib", "scipy"}
ALLOWED = set(sys.stdlib_module_names) | COLAB | {"flt_lib"}
NOTEBOOKS = nbt.notebooks(ROOT)


def _optional(tree: ast.AST) -> set[int]:
    """ids of import nodes inside ``try: ... except ImportError`` (optional imports)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
            for h in node.handlers
        ):
            for stmt in node.body:
                out |= {id(n) for n in ast.walk(stmt)}
    return out


def _imports(source: str, *, full: bool = False) -> set[str]:
    """Top-level names of the modules ``source`` imports (optional imports left out)."""
    # IPython magics and shell escapes are not Python: drop them before parsing.
    source = "\n".join("" if re.match(r"\s*[%!]", line) else line for line in source.splitlines())
    names = set()
    tree = ast.parse(source)
    optional = _optional(tree)
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            names |= {a.name if full else a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module if full else node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "chapters")))
def test_notebook_imports_only_what_colab_has(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells if c["cell_type"] == "code"]
    used = set().union(*(_imports(src) for src in code))
    assert used <= ALLOWED, f"{path.name} imports {sorted(used - ALLOWED)}, which Colab lacks"


def test_flt_lib_runtime_dependencies_are_what_colab_has():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower() for d in deps}
    assert names == COLAB, f"flt_lib's dependencies {sorted(names)} must be exactly {sorted(COLAB)}"


def test_flt_lib_modules_import_only_their_dependencies():
    bad = {}
    for path in sorted((ROOT / "flt_lib").rglob("*.py")):
        used = _imports(path.read_text(encoding="utf-8"))
        if used - ALLOWED:
            bad[str(path.relative_to(ROOT))] = sorted(used - ALLOWED)
    assert not bad, f"flt_lib modules import packages outside its dependencies: {bad}"


def test_the_import_scanner_sees_imports():
    assert _imports("import numpy as np\nfrom torch import nn\n%matplotlib inline\nimport os.path") == {
        "numpy", "torch", "os"
    }


def test_the_import_scanner_skips_optional_imports():
    src = "try:\n    import IPython\nexcept ImportError:\n    pass\nimport scipy.linalg"
    assert _imports(src) == {"scipy"}
    assert _imports(src, full=True) == {"scipy.linalg"}
