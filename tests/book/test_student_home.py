"""The student edition's home page and table of contents (issue 20, item 6), from the sources."""

from __future__ import annotations

import re

import pytest

from book.student_site import FULL_ONLY, student_intro, student_toc
from conftest import ROOT


def test_student_home_page_promises_no_rocket_no_collapsed_solutions_no_course_guide():
    full = (ROOT / "chapters" / "intro.md").read_text(encoding="utf-8")
    student = student_intro(full)
    assert "rocket" in full and "collapsed" in full and "course_guide" in full
    for promise in ("rocket", "course_guide", "Colab button", "<!--", "-->"):
        assert promise not in student, f"the student home page still has {promise!r}"
    assert not re.search(r"collapsed[^.]*solution|solution[^.]*collapsed", student, re.I)
    assert "download button" in student and "without their solutions" in student
    assert "## What is inside" in student and "## Conventions" in student


def test_student_toc_drops_the_course_guide_and_nothing_else():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    out = student_toc(toc)
    for page in FULL_ONLY:
        assert page in toc and page not in out
    dropped = [ln for ln in toc.splitlines() if ln not in out.splitlines()]
    assert len(dropped) == len(FULL_ONLY), dropped


def test_student_intro_rejects_bad_input():
    with pytest.raises(TypeError, match="text must be a str"):
        student_intro(None)  # type: ignore[arg-type]
