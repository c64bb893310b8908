"""The student edition (`make student`): every exercise and heading kept, no solution left.

The checks read the full edition with their own, simpler parser (one regular expression over
the notebook's cells joined in order), so that a bug in ``book.notebook.student_copy``
cannot hide itself.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from book import graded
from book import notebook as nbt

NOTEBOOKS = nbt.notebooks(ROOT)
IDS = [str(p.relative_to(ROOT / "chapters")) for p in NOTEBOOKS]
CELL = "\n<<<CELL {kind} {n}>>>\n"  # marker between cells in the joined text
# A solution: from its solution-start fence to the fence that closes its solution-end.
SOLUTION = re.compile(r"^:{3,}\{solution-start\}.*?^:{3,}\{solution-end\}[^\n]*\n(?:[^\n]*\n)*?:{3,}[ \t]*$", re.M | re.S)
SOLUTION_WHOLE = re.compile(r"^(:{3,})\{solution\}.*?^\1[ \t]*$", re.M | re.S)
HEADING = re.compile(r"^#{1,6} .+$", re.M)
EXERCISE_LABEL = re.compile(r"^:{3,}\{exercise\}[^\n]*\n(?::[^\n]*\n)*?:label:\s*(\S+)", re.M)
FENCE_WORDS = ("{solution-start}", "{solution-end}", "{solution}")


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _joined(nb: dict, *, tagged: bool = True) -> str:
    """The cells' sources in order, with markers; ``tagged=False`` leaves out solution code."""
    parts = []
    for n, cell in enumerate(nb["cells"]):
        tags = cell.get("metadata", {}).get("tags", [])
        if not tagged and nbt.SOLUTION_TAG in tags:
            continue
        kind = "solution-code" if nbt.SOLUTION_TAG in tags else cell["cell_type"]
        parts.append(CELL.format(kind=kind, n=n) + _src(cell))
    return "".join(parts) + "\n"


def _solution_spans(text: str) -> list[str]:
    return [m.group(0) for m in SOLUTION.finditer(text)] + [
        m.group(0) for m in SOLUTION_WHOLE.finditer(text)
    ]


def _outside_solutions(text: str) -> str:
    for span in _solution_spans(text):
        text = text.replace(span, "\n")
    return text


def _substantive(line: str) -> bool:
    """A line specific enough that finding it elsewhere means it was copied."""
    return len(line.strip()) >= 25 and not line.startswith("<<<CELL")


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory) -> Path:
    """The student edition, written by the same command `make student` runs."""
    out = tmp_path_factory.mktemp("student")
    proc = subprocess.run(
        [sys.executable, "-m", "book.notebook", "student", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _pair(student_dir: Path, path: Path) -> tuple[dict, dict]:
    full = json.loads(path.read_text(encoding="utf-8"))
    student = json.loads((student_dir / path.relative_to(ROOT / "chapters")).read_text("utf-8"))
    return full, student


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_student_edition_keeps_every_exercise_and_heading(student_dir, path):
    full, student = _pair(student_dir, path)
    full_text, student_text = _joined(full, tagged=False), _joined(student)
    labels = EXERCISE_LABEL.findall(full_text)
    assert len(labels) >= 2, f"{path.name}: found {len(labels)} exercise labels in the full edition"
    lost = [label for label in labels if label not in EXERCISE_LABEL.findall(student_text)]
    assert not lost, f"{path.name}: the student edition lost exercises {lost}"
    headings = HEADING.findall(_outside_solutions(full_text))
    missing = [h for h in headings if h not in HEADING.findall(student_text)]
    assert not missing, f"{path.name}: the student edition lost headings {missing}"
    # Every substantive line outside the solutions survives (exercise texts, summaries, code).
    kept = set(student_text.splitlines())
    dropped = [
        line
        for line in _outside_solutions(full_text).splitlines()
        if _substantive(line) and line not in kept and not line.startswith(":")
    ]
    assert not dropped, f"{path.name}: lines outside any solution were removed: {dropped[:5]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_student_edition_has_no_solution_left(student_dir, path):
    full, student = _pair(student_dir, path)
    full_text, student_text = _joined(full), _joined(student)
    spans = _solution_spans(full_text)
    assert len(spans) >= 2, f"{path.name}: found {len(spans)} solutions in the full edition"
    outside = set(_outside_solutions(full_text).splitlines())
    # a graded exercise keeps its stub: the lines before `# BEGIN SOLUTION` (book/graded.py)
    for g in graded.find(path):
        outside |= set(graded.stub(g.solution, g.name).splitlines())
    leaked = [
        line
        for span in spans
        for line in span.splitlines()
        if _substantive(line) and line not in outside and line in set(student_text.splitlines())
    ]
    assert not leaked, f"{path.name}: solution text left in the student edition: {leaked[:5]}"
    tagged = [c for c in student["cells"] if nbt.SOLUTION_TAG in c.get("metadata", {}).get("tags", [])]
    assert not tagged, f"{path.name}: {len(tagged)} solution-tagged code cells left"
    # No stray fence: every remaining directive fence is balanced, none belongs to a solution.
    stray = [w for w in FENCE_WORDS if w in student_text]
    assert not stray, f"{path.name}: solution fences left in the student edition: {stray}"
    for cell in student["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        opened = len(re.findall(r"^:{3,}\{", _src(cell), re.M))
        closed = len(re.findall(r"^:{3,}[ \t]*$", _src(cell), re.M))
        assert opened == closed, f"{path.name}: unbalanced fences in cell {cell.get('id')}:\n{_src(cell)[:400]}"


def _names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names a cell binds, names it reads) at module level, roughly but conservatively."""
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            bound.update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        elif isinstance(node, ast.Lambda):
            bound.update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound, read


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_student_notebook_needs_no_solution_code(student_dir, path):
    """A downloaded student notebook runs: no kept cell reads a name only a solution defined."""
    full, _ = _pair(student_dir, path)
    student = nbt.student_copy(full)
    kept_ids = {c.get("id") for c in student["cells"]}
    defined = set(dir(builtins)) | {"display", "get_ipython", "In", "Out", "_"}
    from_solutions: set[str] = set()
    for cell in full["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "\n".join(
            line for line in _src(cell).splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        bound, read = _names(ast.parse(source))
        if cell.get("id") in kept_ids:
            needed = (read - bound - defined) & from_solutions
            assert not needed, (
                f"{path.name}: cell {cell.get('id')} reads {sorted(needed)}, which only "
                "solution cells define, so the student notebook would fail there"
            )
            defined |= bound
        else:
            from_solutions |= bound - defined


def test_student_copy_works_on_directives_not_cells():
    """One markdown cell ends a solution and starts the next exercise (the case that broke)."""
    nb = {
        "cells": [
            {"cell_type": "markdown", "id": "a", "metadata": {}, "source": (
                "## Exercises\n\n:::{exercise}\n:label: ex-a\n\nFirst.\n:::\n\n"
                ":::{solution-start} ex-a\n:class: dropdown\n:::\n\nSecret one.")},
            {"cell_type": "code", "id": "b", "metadata": {}, "source": "x = 1", "outputs": [],
             "execution_count": None},
            {"cell_type": "markdown", "id": "c", "metadata": {}, "source": (
                "More secret.\n\n:::{solution-end}\n:::\n\n:::{exercise}\n:label: ex-b\n\nSecond.\n:::\n\n"
                ":::{solution-start} ex-b\n:class: dropdown\n:::\n\nSecret two.\n\n:::{solution-end}\n:::\n\n"
                "## Summary\n\n- kept")},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    out = nbt.student_copy(nb)
    text = "\n".join(_src(c) for c in out["cells"])
    assert "ex-a" in text and "ex-b" in text and "## Summary" in text and "- kept" in text
    assert "Secret" not in text and "solution" not in text and "x = 1" not in text
    assert [c["id"] for c in out["cells"]] == ["a", "c"]


def test_student_copy_rejects_an_unclosed_solution():
    nb = {"cells": [{"cell_type": "markdown", "id": "a", "metadata": {},
                     "source": ":::{solution-start} ex-a\n:::\n\nno end"}]}
    with pytest.raises(ValueError, match="solution-start directive has no matching solution-end"):
        nbt.student_copy(nb)
    nb["cells"][0]["source"] = "text\n:::{solution-end}\n:::"
    with pytest.raises(ValueError, match="unexpected solution-end directive outside a solution"):
        nbt.student_copy(nb)


def test_transplant_outputs_only_onto_unchanged_cells():
    out = [{"output_type": "stream", "name": "stdout", "text": "1\n"}]
    nb = {"cells": [{"cell_type": "code", "id": "a", "source": "print(1)", "outputs": []},
                    {"cell_type": "code", "id": "b", "source": "print(2)", "outputs": []}]}
    done = {"cells": [{"cell_type": "code", "id": "a", "source": "print(1)", "outputs": out,
                       "execution_count": 1},
                      {"cell_type": "code", "id": "b", "source": "print(3)", "outputs": out}]}
    cells = nbt.transplant_outputs(nb, done)["cells"]
    assert cells[0]["outputs"] == out and cells[1]["outputs"] == []
