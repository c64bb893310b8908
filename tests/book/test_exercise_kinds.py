"""Every exercise has one kind; every chapter has open-ended projects; graded exercises grade.

An exercise is a MyST ``{exercise}`` directive in a markdown cell. Its text (after the option
lines such as ``:label:``) starts with exactly one of the four kinds of ``KINDS``. Its solution
runs from ``{solution-start} <label>`` to the next ``{solution-end}``, possibly across cells.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT
from book import notebook as nbt

PEN, COMPUTATIONAL, GRADED, PROJECT = (
    "(Pen and paper.)",
    "(Computational.)",
    "(Graded coding.)",
    "(Open-ended project.)",
)
KINDS = (PEN, COMPUTATIONAL, GRADED, PROJECT)
MIN_PROJECTS = 2  # open-ended projects per chapter folder
CHAPTERS = (
    "01_connectionism",
    "02_feedforward",
    "03_gradient_learning",
    "04_recurrent",
    "05_transformers",
    "06_symmetry",
    "07_feature_learning",
    "appendix_bayesian",
)

_OPTION = re.compile(r"^\s*:[\w-]+:")


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def exercises(nb: dict) -> list[dict]:
    """The exercises of a notebook, in order: label, text, kind, and their solution.

    Each entry has ``label``, ``text`` (the body without option lines), ``kind`` (the
    member of ``KINDS`` the text starts with, or None), ``solution_md`` (the markdown of
    the solution) and ``solution_code`` (the code cells inside the solution).
    """
    found: list[dict] = []
    by_label: dict[str, dict] = {}
    current: dict | None = None  # the exercise whose solution is open
    for cell in nb["cells"]:
        text = _src(cell)
        if cell["cell_type"] != "markdown":
            if current is not None:
                current["solution_code"].append(cell)
            continue
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            m = nbt._FENCE_OPEN.match(lines[i])
            name = m.group("name") if m else None
            if name == "exercise" and current is None:
                j = nbt._skip_directive(lines, i)
                body = lines[i + 1 : j - 1]
                label = next(
                    (ln.split(":label:", 1)[1].strip() for ln in body if ":label:" in ln),
                    None,
                )
                while body and (_OPTION.match(body[0]) or not body[0].strip()):
                    body = body[1:]
                prose = "\n".join(body).strip()
                entry = {
                    "label": label,
                    "text": prose,
                    "kind": next((k for k in KINDS if prose.startswith(k)), None),
                    "solution_md": "",
                    "solution_code": [],
                }
                found.append(entry)
                by_label[label] = entry
                i = j
            elif name == "solution-start" and current is None:
                current = by_label.get(m.group("arg").strip())
                if current is None:  # a solution for an unknown label: test_kinds reports
                    current = {"solution_md": "", "solution_code": []}
                i = nbt._skip_directive(lines, i)
            elif name == "solution-end" and current is not None:
                current = None
                i = nbt._skip_directive(lines, i)
            else:
                if current is not None:
                    current["solution_md"] += lines[i] + "\n"
                i += 1
    return found


def kind_problems(ex: dict) -> list[str]:
    """What is wrong with one exercise's kind (an empty list if nothing)."""
    label, text = ex["label"], ex["text"]
    problems = []
    if ex["kind"] is None:
        problems.append(f"{label}: starts with no kind, expected one of {KINDS}: {text[:60]!r}")
    elif any(k in text[len(ex["kind"]) :] for k in KINDS):
        problems.append(f"{label}: more than one kind in {text[:80]!r}")
    if ex["kind"] == GRADED:
        meta = [c.get("metadata", {}) for c in ex["solution_code"]]
        for key, what in (("graded", "the solution"), ("graded_check", "the check")):
            if not any(
                "solution" in m.get("tags", []) and key in m.get("flt", {}) for m in meta
            ):
                problems.append(
                    f"{label}: graded coding, but no code cell of its solution is {what}"
                    f" (tag `solution`, metadata flt.{key}; see book/graded.py)"
                )
    if ex["kind"] == PROJECT and "good answer" not in ex["solution_md"]:
        problems.append(f"{label}: open-ended project whose solution does not say what a good answer shows")
    return problems


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


NOTEBOOKS = [p for p in nbt.notebooks(ROOT) if p.parent.name in CHAPTERS]
IDS = [str(p.relative_to(ROOT / "chapters")) for p in NOTEBOOKS]


def test_every_chapter_folder_is_known():
    folders = {p.parent.name for p in nbt.notebooks(ROOT)}
    assert folders == set(CHAPTERS), f"chapter folders changed: {sorted(folders ^ set(CHAPTERS))}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_exercise_has_one_kind(path):
    """Exactly one of the four kinds opens each exercise; graded ones check, projects advise."""
    nb = _load(path)
    exs = exercises(nb)
    md = "\n".join(_src(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert len(exs) == md.count("{exercise}"), f"{path.name}: an exercise was not parsed"
    problems = [p for ex in exs for p in kind_problems(ex)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_has_open_ended_projects(chapter):
    kinds = Counter(
        ex["kind"]
        for path in NOTEBOOKS
        if path.parent.name == chapter
        for ex in exercises(_load(path))
    )
    assert kinds[PROJECT] >= MIN_PROJECTS, (
        f"{chapter}: {kinds[PROJECT]} open-ended projects, need at least {MIN_PROJECTS}"
    )


def _nb(*cells: tuple) -> dict:
    """Cells from (type, source, tags) or (type, source, tags, flt metadata)."""
    out = []
    for t, s, tags, *flt in cells:
        meta = {"tags": tags} if tags else {}
        if flt:
            meta["flt"] = flt[0]
        out.append({"cell_type": t, "source": s, "metadata": meta})
    return {"cells": out}


def _ex(label: str, text: str) -> str:
    return f":::{{exercise}}\n:label: {label}\n\n{text}\n:::\n"


def _sol(label: str, text: str = "") -> str:
    return f":::{{solution-start}} {label}\n:class: dropdown\n:::\n\n{text}\n"


END = ":::{solution-end}\n:::\n"


def test_the_checks_can_fail():
    """A missing kind, two kinds, an ungraded 'graded' exercise and a project without advice
    are all reported; well-formed exercises, with solutions across cells, are not."""
    nb = _nb(
        ("markdown", _ex("ex-none", "Show that $x = x$."), []),
        ("markdown", _sol("ex-none") + END, []),
        ("markdown", _ex("ex-two", f"{PEN} {COMPUTATIONAL} Show it."), []),
        ("markdown", _sol("ex-two") + END, []),
        ("markdown", _ex("ex-graded-bad", f"{GRADED} Write `f`."), []),
        ("markdown", _sol("ex-graded-bad"), []),
        ("code", "def f(x):\n    return x\nassert f(1) == 1\n", []),  # not tagged
        ("markdown", END, []),
        ("markdown", _ex("ex-graded-ok", f"{GRADED} Write `g`."), []),
        ("markdown", _sol("ex-graded-ok"), []),
        ("code", "def g(x):\n    return x\n", ["solution"], {"graded": "g"}),
        ("code", "grading.agree(g, lib, cases)\n", ["solution"], {"graded_check": "g"}),
        ("markdown", END + "\n" + _ex("ex-project-bad", f"{PROJECT} Explore."), []),
        ("markdown", _sol("ex-project-bad", "Try things.") + END, []),
        ("markdown", _ex("ex-project-ok", f"{PROJECT} Explore.") + "\n"
         + _sol("ex-project-ok", "A good answer measures.") + END, []),
    )
    exs = exercises(nb)
    assert [e["label"] for e in exs] == [
        "ex-none", "ex-two", "ex-graded-bad", "ex-graded-ok", "ex-project-bad", "ex-project-ok",
    ]
    bad = {e["label"] for e in exs if kind_problems(e)}
    assert bad == {"ex-none", "ex-two", "ex-graded-bad", "ex-project-bad"}, bad


def test_course_guide_lists_every_project():
    """The course guide promises projects; it must point at every one of them."""
    guide = (ROOT / "chapters" / "course_guide.md").read_text(encoding="utf-8")
    projects = [
        ex["label"]
        for path in NOTEBOOKS
        for ex in exercises(_load(path))
        if ex["kind"] == PROJECT
    ]
    missing = [label for label in projects if f"<{label}>`" not in guide]
    assert not missing, f"projects not listed in chapters/course_guide.md: {missing}"
