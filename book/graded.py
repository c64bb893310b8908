"""The book's graded coding exercises: find them, stub them, and run their tests.

A graded exercise lives in its section's notebook and in one test file:

* the exercise, a markdown ``{exercise}`` whose text starts with "(Graded coding.)";
* inside its solution, a code cell tagged ``solution`` whose metadata holds
  ``"flt": {"graded": "<name>"}``. It defines the function ``<name>``, and the lines the
  student writes sit between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` (otter-grader's
  markers). The cell imports what it uses; it may rely on ``math``, ``np`` (NumPy) and
  ``torch`` only, which every assignment imports first (``PREAMBLE``);
* right after it, a code cell tagged ``solution`` with
  ``"flt": {"graded_check": "<name>"}`` that shows, on the page, the solution agreeing
  with the library. The student edition replaces it by ``grader.check("<name>")``;
* ``book/graded/<name>.py``: the tests, one function per test, in otter-grader's
  exception-based form. A test takes the student's function as its argument (otter
  passes it by name from the notebook's globals), imports what it needs inside its body,
  and fails with an ``AssertionError`` naming the input (``flt_lib.grading.agree``).
  A test whose name starts with ``test_hidden`` is hidden: the autograder runs it, the
  student never sees it. ``WRONG = {"what is wrong": "lines"}`` holds deliberately wrong
  bodies (replacing the solution's lines) that the tests must catch.

Usage, from the repository root::

    python -m book.graded list             # every graded exercise, with its section
    python -m book.graded check [NAME ...] # solution passes, stub and wrong bodies fail
"""

from __future__ import annotations

import ast
import json
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from book import ROOT

TESTS_DIR = ROOT / "book" / "graded"
PREAMBLE = "import math\n\nimport numpy as np\nimport torch\n"
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
GRADED_KIND = "(Graded coding.)"


@dataclass
class Test:
    """One test function of a test file."""

    name: str
    source: str  # the function's definition
    hidden: bool
    params: list[str]


@dataclass
class Graded:
    """One graded coding exercise."""

    name: str
    notebook: Path
    label: str  # the exercise's label
    text: str  # the exercise's statement (MyST)
    solution: str  # the solution cell's source, markers included
    check: str  # the check cell's source ('' if none)
    tests: list[Test] = field(default_factory=list)
    wrong: dict[str, str] = field(default_factory=dict)

    @property
    def test_file(self) -> Path:
        return TESTS_DIR / f"{self.name}.py"


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


_EXERCISE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{exercise\}", re.M)
_LABEL = re.compile(r"^:label:\s*(\S+)", re.M)


def find(notebook: Path) -> list[Graded]:
    """The graded exercises of one notebook, in order."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    found: list[Graded] = []
    last_exercise: tuple[str, str] | None = None
    for cell in nb["cells"]:
        text = _src(cell)
        if cell["cell_type"] == "markdown":
            for m in _EXERCISE.finditer(text):
                body = text[m.end() :]
                close = re.search(
                    r"^" + re.escape(m.group("fence")) + r"\s*$", body, re.M
                )
                body = body if close is None else body[: close.start()]
                label = _LABEL.search(body)
                prose = "\n".join(
                    ln for ln in body.split("\n") if not re.match(r"^\s*:[\w-]+:", ln)
                ).strip()
                last_exercise = (label.group(1) if label else "", prose)
            continue
        meta = cell.get("metadata", {}).get("flt", {})
        if "graded" in meta:
            label, prose = last_exercise or ("", "")
            found.append(Graded(meta["graded"], notebook, label, prose, text, ""))
        elif "graded_check" in meta:
            match = [g for g in found if g.name == meta["graded_check"]]
            if match:
                match[-1].check = text
    for g in found:
        if g.test_file.exists():
            g.tests, g.wrong = load_tests(g.test_file)
    return found


def find_all(root: Path = ROOT) -> list[Graded]:
    """Every graded exercise of the book, in table-of-contents order of the folders."""
    out: list[Graded] = []
    for nb in sorted((root / "chapters").glob("*/*.ipynb")):
        out.extend(find(nb))
    return out


def load_tests(path: Path) -> tuple[list[Test], dict[str, str]]:
    """The test functions and the wrong bodies of one test file."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    tests, wrong = [], {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            seg = ast.get_source_segment(source, node)
            start = node.lineno - 1 - len(node.decorator_list)
            seg = "\n".join(source.split("\n")[start : node.end_lineno])
            tests.append(
                Test(
                    node.name,
                    seg,
                    node.name.startswith("test_hidden"),
                    [a.arg for a in node.args.args],
                )
            )
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "WRONG" for t in node.targets
        ):
            wrong = ast.literal_eval(node.value)
    return tests, wrong


def split(solution: str) -> tuple[str, str, str]:
    """(before, body, after) around the ``# BEGIN SOLUTION`` ... ``# END SOLUTION``.

    ``body`` excludes the two marker lines."""
    lines = solution.split("\n")
    starts = [i for i, ln in enumerate(lines) if ln.strip() == BEGIN]
    ends = [i for i, ln in enumerate(lines) if ln.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(
            f"a graded solution needs one '{BEGIN}' line and one '{END}' line "
            "after it, "
            f"found {len(starts)} and {len(ends)}"
        )
    a, b = starts[0], ends[0]
    return "\n".join(lines[:a]), "\n".join(lines[a + 1 : b]), "\n".join(lines[b + 1 :])


def _indent(before: str, body: str) -> str:
    for ln in body.split("\n"):
        if ln.strip():
            return ln[: len(ln) - len(ln.lstrip())]
    return "    "


def solution_lines(solution: str) -> int:
    """How many lines the student writes: the solution's lines, less blanks and
    comments."""
    _, body, _ = split(solution)
    return sum(
        1 for ln in body.split("\n") if ln.strip() and not ln.strip().startswith("#")
    )


def stub(solution: str, name: str) -> str:
    """The student's starting point: the solution's lines replaced by a stub."""
    before, body, after = split(solution)
    pad = _indent(before, body)
    n = solution_lines(solution)
    lines = f"about {n} line{'s' if n != 1 else ''}"
    middle = (
        f'{pad}# YOUR CODE HERE ({lines})\n{pad}raise NotImplementedError("{name}")'
    )
    return "\n".join(x for x in (before, middle, after) if x != "").rstrip() + "\n"


def strip_markers(solution: str) -> str:
    """The solution without its marker lines (what the full edition's reader sees)."""
    before, body, after = split(solution)
    return "\n".join(x for x in (before, body, after) if x != "")


def with_body(solution: str, body: str) -> str:
    """The solution with its lines replaced by ``body`` (re-indented, markers kept)."""
    before, old, after = split(solution)
    pad = _indent(before, old)
    new = textwrap.indent(textwrap.dedent(body).strip("\n"), pad)
    new = f"{pad}{BEGIN}\n{new}\n{pad}{END}"
    return "\n".join(x for x in (before, new, after) if x != "")


def run(
    source: str, g: Graded, tests: list[Test] | None = None
) -> list[tuple[str, str | None]]:
    """Execute ``source`` (a version of the solution cell) and run the tests on it.

    Returns ``[(test name, None if it passed else its failure message)]``, the way
    otter-grader runs an exception-based test: the test's parameters are looked up by
    name in the cell's globals."""
    env: dict = {"__name__": "__graded__"}
    exec(compile(PREAMBLE + source, f"<{g.name}>", "exec"), env)
    results = []
    for t in g.tests if tests is None else tests:
        scope: dict = {}
        exec(compile(t.source, f"<{g.name}:{t.name}>", "exec"), scope)
        fn = scope[t.name]
        try:
            fn(*[env[p] for p in t.params])
        except Exception as err:  # a failing test, reported as otter would
            results.append((t.name, f"{type(err).__name__}: {err}"))
        else:
            results.append((t.name, None))
    return results


def problems(g: Graded) -> list[str]:
    """What is wrong with one graded exercise's wiring and tests ([] if nothing)."""
    out: list[str] = []
    where = f"{g.name} ({g.notebook.relative_to(ROOT)})"
    if not g.text.startswith(GRADED_KIND):
        out.append(
            f"{where}: the exercise before the graded cell is not '{GRADED_KIND}'"
        )
    if not g.test_file.exists():
        return out + [f"{where}: no test file {g.test_file.relative_to(ROOT)}"]
    if not g.check:
        out.append(f"{where}: no check cell (metadata flt.graded_check = {g.name!r})")
    if not any(not t.hidden for t in g.tests) or not any(t.hidden for t in g.tests):
        out.append(f"{where}: needs at least one public and one hidden test")
    if not g.wrong:
        out.append(f"{where}: WRONG holds no deliberately wrong body")
    try:
        split(g.solution)
    except ValueError as err:
        return out + [f"{where}: {err}"]
    for t, msg in run(g.solution, g):
        if msg is not None:
            out.append(f"{where}: the solution fails {t}: {msg}")
    for t, msg in run(stub(g.solution, g.name), g):
        if msg is None:
            out.append(f"{where}: the untouched stub passes {t}")
    for what, body in g.wrong.items():
        failed = [m for _, m in run(with_body(g.solution, body), g) if m is not None]
        if not failed:
            out.append(f"{where}: the wrong body '{what}' passes every test")
        elif not any("on the case" in m for m in failed):
            out.append(
                f"{where}: the wrong body '{what}' fails, but no message names the "
                "input "
                f"(first: {failed[0][:200]})"
            )
    return out


def main(argv: list[str]) -> int:
    """``python -m book.graded list|check [NAME ...]``; 0 when every check passes."""
    if not argv or argv[0] not in {"list", "check"}:
        print(__doc__)
        return 2
    every = find_all()
    if argv[0] == "list":
        for g in every:
            print(f"{g.notebook.relative_to(ROOT)}  {g.name}  ({len(g.tests)} tests)")
        return 0
    wanted = set(argv[1:])
    chosen = [g for g in every if not wanted or g.name in wanted]
    if wanted - {g.name for g in chosen}:
        print(f"no graded exercise named {sorted(wanted - {g.name for g in chosen})}")
        return 1
    bad = 0
    for g in chosen:
        found = problems(g)
        bad += bool(found)
        print(f"{'FAIL' if found else 'ok  '} {g.name}")
        for p in found:
            print(f"     {p}")
    print(f"{len(chosen) - bad} of {len(chosen)} graded exercises pass their checks")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
