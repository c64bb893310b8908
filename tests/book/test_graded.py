"""The graded coding exercises: every section has one, and its tests can fail.

For every graded exercise (``book/graded.py``): the solution passes all its tests, public
and hidden; the untouched stub fails every one; each deliberately wrong body fails one,
with a message naming the input. The same tests, written as otter-grader test files
(``book/assignments.py``), give the same verdicts when otter runs them. Nothing here
executes a notebook: each solution cell runs alone, after the assignment's imports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from conftest import ROOT
from book import graded as gr
from book import notebook as nbt
from book.assignments import otter_test_file

GRADED = gr.find_all(ROOT)
IDS = [g.name for g in GRADED]
SECTIONS = [p for p in nbt.notebooks(ROOT) if p.parent.name[:2].isdigit()
            or p.parent.name.startswith("appendix")]


def test_every_section_has_a_graded_exercise():
    have = {g.notebook for g in GRADED}
    missing = [str(p.relative_to(ROOT)) for p in SECTIONS if p not in have]
    assert not missing, f"sections without a graded coding exercise: {missing}"


def test_names_are_unique_and_every_test_file_is_used():
    twice = [n for n, k in Counter(IDS).items() if k > 1]
    assert not twice, f"graded exercises defined twice: {twice}"
    files = {p.stem for p in gr.TESTS_DIR.glob("*.py")}
    assert files - set(IDS) == set(), f"test files of no exercise: {files - set(IDS)}"


@pytest.mark.parametrize("g", GRADED, ids=IDS)
def test_solution_passes_stub_and_wrong_bodies_fail(g):
    assert gr.problems(g) == []


def _otter(g: gr.Graded, source: str, tmp_path, *, hidden: bool):
    from otter.test_files import create_test_file
    from otter.nbmeta_config import NBMetadataConfig

    path = tmp_path / f"{g.name}{'_all' if hidden else ''}.py"
    path.write_text(otter_test_file(g, hidden=hidden), encoding="utf-8")
    env: dict = {}
    exec(compile(gr.PREAMBLE + source, g.name, "exec"), env)
    test = create_test_file(str(path), NBMetadataConfig())
    test.run(env)
    return test


@pytest.mark.parametrize("g", GRADED, ids=IDS)
def test_otter_gives_the_same_verdicts(g, tmp_path):
    """otter-grader itself runs the generated test files: public for the student, all
    for the autograder."""
    for hidden in (False, True):
        assert _otter(g, g.solution, tmp_path, hidden=hidden).passed_all
        stub = _otter(g, gr.stub(g.solution, g.name), tmp_path, hidden=hidden)
        assert stub.grade == 0, stub.summary()
    for what, body in g.wrong.items():
        test = _otter(g, gr.with_body(g.solution, body), tmp_path, hidden=True)
        assert not test.passed_all, f"otter passes the wrong body {what!r}"
        assert "on the case" in test.summary(), test.summary()


def test_the_checks_can_fail(tmp_path):
    """A solution that fails its own tests, a stub that passes one, a wrong body that
    passes: each is reported."""
    g = next(g for g in GRADED if g.name == "my_top_p")
    bad = gr.Graded(**{**g.__dict__, "solution": gr.with_body(
        g.solution, "return logits")})
    assert any("the solution fails" in p for p in gr.problems(bad))
    lazy = gr.Graded(**{**g.__dict__, "wrong": {"same as the solution": gr.split(
        g.solution)[1]}})
    assert any("passes every test" in p for p in gr.problems(lazy))
    passing_stub = gr.Graded(**{**g.__dict__, "tests": [gr.Test(
        "test_nothing", "def test_nothing(my_top_p):\n    pass", False, ["my_top_p"])]})
    assert any("untouched stub passes" in p for p in gr.problems(passing_stub))


@pytest.mark.book
def test_make_assignments_and_otter_run(tmp_path):
    """``make assignments`` for one chapter, then otter's own grader (``otter run``) on
    the solution notebook (full marks) and on the untouched student notebook (none)."""
    from book.assignments import build

    out = tmp_path / "assignments"
    build(["05_transformers"], out, run_tests=False)
    folder = out / "05_transformers"
    zip_ = folder / "autograder" / "autograder.zip"
    assert zip_.exists() and (out / "README.md").exists()
    student = folder / "student" / "05_transformers.ipynb"
    text = student.read_text(encoding="utf-8")
    assert "NotImplementedError" in text and "BEGIN SOLUTION" not in text
    public = {p.name for p in (folder / "student" / "tests").glob("*.py")}
    assert public == {f"{g.name}.py" for g in GRADED
                      if g.notebook.parent.name == "05_transformers"}
    otter = ROOT / ".venv" / "bin" / "otter"
    otter = otter if otter.exists() else "otter"
    scores = {}
    for kind, nb in (("solution", folder / "autograder" / "05_transformers.ipynb"),
                     ("student", student)):
        res = tmp_path / kind
        res.mkdir()
        subprocess.run([str(otter), "run", "--no-logo", "-a", str(zip_), "-o", str(res),
                        str(nb)], check=True, capture_output=True, text=True, timeout=600)
        tests = json.loads((res / "results.json").read_text())["tests"]
        scores[kind] = [(t["name"], t.get("score"), t.get("max_score")) for t in tests
                        if t.get("max_score")]
    assert scores["solution"] and all(s == m for _, s, m in scores["solution"])
    assert all(s == 0 for _, s, _ in scores["student"]), scores["student"]


def test_course_guide_links_every_graded_exercise():
    """The course guide's weekly plan names each week's graded exercises."""
    guide = (ROOT / "chapters" / "course_guide.md").read_text(encoding="utf-8")
    missing = [g.label for g in GRADED if f"<{g.label}>`" not in guide]
    assert not missing, f"graded exercises not in chapters/course_guide.md: {missing}"
