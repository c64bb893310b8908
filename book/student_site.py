"""What the student website leaves out: the course guide, and promises it cannot keep.

The home page (``chapters/intro.md``) marks the paragraphs that only the full edition
can keep (the Colab button, collapsed solutions, the instructors' course guide) with
``<!-- not-in-student-edition -->`` ... ``<!-- /not-in-student-edition -->``, and
carries the student edition's wording inside ``<!-- student-edition`` ... ``-->``. Both
are HTML comments, invisible on the full website. ``student_intro`` swaps them;
``student_toc`` drops the pages listed in ``FULL_ONLY`` from the table of contents.
"""

from __future__ import annotations

import re

FULL_ONLY = (
    "chapters/course_guide",
)  # pages for instructors, not in the student edition
_FULL = re.compile(
    r"<!-- not-in-student-edition -->\n.*?<!-- /not-in-student-edition -->\n", re.S
)
_STUDENT = re.compile(r"<!-- student-edition\n(.*?)-->\n", re.S)


def student_intro(text: str) -> str:
    """The home page for students: full-edition paragraphs out, student ones in."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _STUDENT.sub(lambda m: m.group(1), _FULL.sub("", text))


def student_toc(toc: str) -> str:
    """``_toc.yml`` text without the full edition's own pages."""
    lines = toc.split("\n")
    keep = [
        ln
        for ln in lines
        if not any(
            re.fullmatch(rf"\s*- file: {re.escape(p)}\s*", ln) for p in FULL_ONLY
        )
    ]
    return "\n".join(keep)
