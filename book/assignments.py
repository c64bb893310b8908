"""Programming assignments from the book's graded exercises (``make assignments``).

Usage, from the repository root::

    python -m book.assignments [CHAPTER ...] [--out DIR] [--no-run-tests]

For every chapter (or those named, e.g. ``04_recurrent``), this writes an otter-grader
*master notebook* (otter's assignment format: an ``ASSIGNMENT CONFIG`` cell, and for
each question its statement, its solution between ``# BEGIN SOLUTION`` and
``# END SOLUTION``, and its tests) and runs ``otter assign`` on it. The result, in
``_build/assignments/``:

- ``<chapter>/student/``: the notebook to hand out, with stubs and ``grader.check``
  cells, and the public tests;
- ``<chapter>/autograder/``: the solution notebook, all tests (public and hidden), and
  ``autograder.zip`` for Gradescope, ``otter run`` and ``otter grade``;
- ``<chapter>/master/``: the master notebook otter read, and its requirements;
- ``README.md``: one page for teachers.

The questions are the book's graded exercises (``book/graded.py``), each the same code
as in the book: a student who solved it in the book's student edition has solved it
here. Statements come from the reader notebooks of ``make jupyter`` (equation numbers
and links as on the website) when they exist, else from the MyST source with its roles
spelled out.
``otter assign`` runs each solution notebook against its tests (``--no-run-tests`` skips
that); ``make test`` checks the same thing faster, by running every test on every
solution in one process (``tests/book/test_graded.py``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from book import ROOT
from book import graded as gr

OUT = ROOT / "_build" / "assignments"
OTTER_PIN = "otter-grader==7.0.0"

CHAPTER_TITLES = {
    "01_connectionism": "Chapter 1: Connectionism",
    "02_feedforward": "Chapter 2: Feedforward networks",
    "03_gradient_learning": "Chapter 3: Gradient-based learning",
    "04_recurrent": "Chapter 4: Recurrent networks",
    "05_transformers": "Chapter 5: Transformers",
    "06_symmetry": "Chapter 6: Symmetry and equivariance",
    "07_feature_learning": "Chapter 7: Feature learning theory",
    "appendix_bayesian": "Appendix A: Bayesian learning",
}


def _cell(kind: str, source: str, **meta) -> dict:
    cell = {"cell_type": kind, "metadata": meta, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def otter_test_file(g: gr.Graded, *, hidden: bool) -> str:
    """``g``'s tests as one otter-grader test file (hidden ones only if ``hidden``)."""
    chosen = [t for t in g.tests if hidden or not t.hidden]
    parts = [
        "from otter.test_files import test_case\n",
        "OK_FORMAT = False\n",
        f'name = "{g.name}"',
        f"points = {len(chosen)}\n",
    ]
    for t in chosen:
        parts.append(f"@test_case(points=1, hidden={t.hidden})\n{t.source}\n")
    return "\n".join(parts)


def _plain(text: str) -> str:
    """An exercise statement's MyST as plain Markdown (without Sphinx's numbers)."""
    text = re.sub(r"\{eq\}`([^`]+)`", r"(equation `\1`)", text)
    text = re.sub(
        r"\{(?:ref|numref|prf:ref|doc)\}`(?:([^`<]+?)\s*<([^`]+)>|([^`]+))`",
        lambda m: (m.group(1) or f"`{m.group(3)}`").strip(),
        text,
    )
    text = re.sub(r"\{cite:[pt]\}`([^`]+)`", r"[\1]", text)
    return text


def statement(g: gr.Graded) -> str:
    """The exercise's statement as Markdown: from the reader notebook, if built."""
    chapter, stem = g.notebook.parent.name, g.notebook.stem
    reader = ROOT / "_build" / "jupyter" / chapter / f"{stem}.ipynb"
    if reader.exists():
        nb = json.loads(reader.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            src = gr._src(cell)
            if (
                cell["cell_type"] == "markdown"
                and gr.GRADED_KIND in src
                and (f"`{g.name}(" in src)
            ):
                return src
    return f"**Exercise** ({g.notebook.stem})\n\n" + _plain(g.text)


def master_notebook(chapter: str, questions: list[gr.Graded], setup: str) -> dict:
    """otter's master notebook for one chapter's graded exercises."""
    title = CHAPTER_TITLES.get(chapter, chapter)
    config = "\n".join(
        [
            "# ASSIGNMENT CONFIG",
            f"name: {chapter}",
            "init_cell: false",
            "check_all_cell: true",
            "export_cell: false",
            "run_tests: true",
            "requirements: requirements.txt",
            "overwrite_requirements: false",
            "generate: true",
            "tests:",
            "  files: true",
            "  ok_format: false",
        ]
    )
    cells = [
        _cell("raw", config),
        _cell(
            "markdown",
            f"# {title}: graded exercises\n\n"
            "Each question asks you to write a function the chapter teaches. "
            "Replace the "
            "`raise NotImplementedError` line by your code, run the cell, then run the "
            "`grader.check` cell below it: it compares your function with the book's "
            "library, `flt_lib`, on random inputs and edge cases, and says which input "
            "failed and how. The autograder also runs hidden tests.",
        ),
        _cell("code", setup),
        _cell("code", grader_init(f"{chapter}.ipynb")),
        _cell("code", gr.PREAMBLE),
    ]
    for g in questions:
        section = g.notebook.stem
        cells += [
            _cell("raw", f"# BEGIN QUESTION\nname: {g.name}\npoints: {len(g.tests)}"),
            _cell("markdown", statement(g) + f"\n\n*(From section `{section}`.)*"),
            _cell("raw", "# BEGIN SOLUTION"),
            _cell("code", _with_prompt(g)),
            _cell("raw", "# END SOLUTION"),
            _cell("raw", "# BEGIN TESTS"),
        ]
        for t in g.tests:
            head = '""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n'
            cells.append(_cell("code", (head if t.hidden else "") + t.source))
        cells += [_cell("raw", "# END TESTS"), _cell("raw", "# END QUESTION")]
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {
                "display_name": "Python 3",
                "language": "python",
                "name": "python3",
            },
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def grader_init(notebook: str | None, tests: dict[str, str] | None = None) -> str:
    """The cell that installs otter-grader (pinned) if missing and makes ``grader``.

    With ``tests`` ({name: test file source}), the cell first writes those files into
    ``tests/``, so that ``grader.check`` works where the notebook has no folder beside
    it (Colab)."""
    lines = [
        '# Grader: `grader.check("name")` runs the tests of one exercise (otter).',
        "import importlib.util, pathlib, subprocess, sys",
        'if importlib.util.find_spec("otter") is None:',
        "    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q',",
        f'                    "{OTTER_PIN}"], check=True)',
        "import otter",
    ]
    if tests:
        lines += ["TESTS = {"]
        for name, source in tests.items():
            if "'''" in source or source.rstrip().endswith("\\"):
                raise ValueError(f"the tests of {name} cannot be quoted as r'''...'''")
            lines.append(f"    {name!r}: r'''\n{source.rstrip()}\n''',")
        lines += [
            "}",
            'pathlib.Path("tests").mkdir(exist_ok=True)',
            "for name, source in TESTS.items():",
            '    pathlib.Path("tests", f"{name}.py").write_text(source)',
        ]
    arg = f"{notebook!r}, " if notebook else ""
    lines.append(f'grader = otter.Notebook({arg}tests_dir="tests")')
    return "\n".join(lines)


def _with_prompt(g: gr.Graded) -> str:
    """The solution cell, with the book's stub as otter's prompt for the student."""
    before, body, after = gr.split(g.solution)
    pad = gr._indent(before, body)
    stub_lines = gr.stub(g.solution, g.name).split("\n")
    todo = [
        ln for ln in stub_lines if "YOUR CODE HERE" in ln or "NotImplementedError" in ln
    ]
    prompt = "\n".join(
        [
            f'{pad}""" # BEGIN PROMPT',
            *todo,
            f'{pad}""" # END PROMPT',
            f"{pad}# BEGIN SOLUTION NO PROMPT",
            body,
            f"{pad}# END SOLUTION",
        ]
    )
    return "\n".join(x for x in (before, prompt, after) if x != "")


def _drop_prompts(path: Path) -> None:
    """Remove the student's prompt (kept by otter) from the solution notebook."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = gr._src(cell)
        src = re.sub(
            r'\n[ \t]*""" # BEGIN PROMPT\n.*?""" # END PROMPT', "", src, flags=re.S
        )
        src = re.sub(
            r"\n[ \t]*# (BEGIN SOLUTION NO PROMPT|END SOLUTION)[ \t]*(?=\n|$)", "", src
        )
        cell["source"] = src
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def requirements(ref: str, repo_url: str) -> str:
    """What the autograder installs: the book's library at ``ref``, and its pins."""
    pins = [
        ln
        for ln in (ROOT / "requirements.txt").read_text(encoding="utf-8").split("\n")
        if re.match(r"^(torch|numpy|scipy|matplotlib)==", ln)
    ]
    return "\n".join([*pins, f"flt_lib @ git+{repo_url}@{ref}", ""])


TEACHER_README = """\
# Graded assignments: a page for teachers

One assignment per chapter, built by `make assignments` from the book's graded coding
exercises (one or more per section). Each question asks the student to write a method
the section teaches; its tests compare the student's function with the book's library,
`flt_lib`, on random inputs and on edge cases, and a failure names the input and shows
the expected and received values or shapes.

| Assignment | Questions | Points |
|---|---|---|
{table}

## What is here

- `<chapter>/student/<chapter>.ipynb`: hand this out (stubs and `grader.check` cells),
  with its `tests/` folder: the public tests, which students run themselves.
- `<chapter>/autograder/`: the solution notebook, every test (public and **hidden**),
  and `autograder.zip` for Gradescope. Keep this folder to yourself.
- `<chapter>/master/<chapter>.ipynb`: otter-grader's master notebook, if you want to
  edit questions and run `otter assign <chapter>.ipynb <out>` yourself.

## Grading

- **One notebook, no Docker**, in the book's environment (`make assignments` installs
  otter-grader into `.venv`):
  `.venv/bin/otter run -a <chapter>/autograder/autograder.zip SUBMISSION.ipynb` writes
  `results.json` with a score per question (one point per test) and every failure's
  message.
- **A folder of submissions** (needs Docker):
  `.venv/bin/otter grade -a <chapter>/autograder/autograder.zip --ext ipynb DIR/`
  (`DIR` holds the submissions)
  writes `final_grades.csv`.
- **Gradescope**: create a programming assignment, upload
  `<chapter>/autograder/autograder.zip` as its autograder, and let students submit their
  `.ipynb`.
- **Colab**: students need nothing else. The notebook's first cell installs `flt_lib`,
  pinned to the commit the assignment was built from, and its second `{otter}`.

## Honest limits

- The hidden tests are hidden from the student notebook, not secret: they are in the
  book's public repository (`book/graded/`). Add your own to `autograder/tests/` if
  that matters for your course.
- The tests check the function's outputs against the library's, not its style or speed.

Built from commit `{ref}` in {seconds:.0f} s.
"""


def build(
    chapters: list[str] | None = None,
    out: Path = OUT,
    *,
    run_tests: bool = True,
    ref: str | None = None,
) -> dict[str, Path]:
    """Write the assignments of ``chapters`` (default: all) into ``out``.

    Returns ``{chapter: its folder}``. Raises ``RuntimeError`` if ``otter assign``
    fails.
    """
    from book.jupyter import read_config, reader_setup_source

    start = time.perf_counter()
    by_chapter: dict[str, list[gr.Graded]] = defaultdict(list)
    for g in gr.find_all():
        by_chapter[g.notebook.parent.name].append(g)
    unknown = set(chapters or []) - set(by_chapter)
    if unknown:
        raise ValueError(
            f"no graded exercises in chapters {sorted(unknown)}; "
            f"chapters with some: {sorted(by_chapter)}"
        )
    chosen = chapters or sorted(by_chapter)
    if not (ROOT / "_build" / "jupyter").is_dir():
        print(
            "[book.assignments] note: no _build/jupyter; statements cite equations by "
            "label. `make book && make jupyter` first gives the website's numbers."
        )
    repo_url = read_config()["repository"]["url"].rstrip("/")
    if ref is None:
        ref = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    setup = reader_setup_source(repo_url, ref)
    out.mkdir(parents=True, exist_ok=True)
    done: dict[str, Path] = {}
    rows = []
    otter = Path(sys.executable).with_name("otter")
    for chapter in chosen:
        qs = by_chapter[chapter]
        folder = out / chapter
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        nb = master_notebook(chapter, qs, setup)
        if not run_tests:
            nb["cells"][0]["source"] = nb["cells"][0]["source"].replace(
                "run_tests: true", "run_tests: false"
            )
        master = folder / f"{chapter}.ipynb"
        master.write_text(json.dumps(nb, indent=1), encoding="utf-8")
        (folder / "requirements.txt").write_text(requirements(ref, repo_url))
        dist = folder / "dist"
        proc = subprocess.run(
            [str(otter), "assign", master.name, "dist"],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if proc.returncode:
            raise RuntimeError(
                f"otter assign failed for {chapter}:\n{proc.stdout[-3000:]}\n"
                f"{proc.stderr[-3000:]}"
            )
        for part in ("autograder", "student"):
            shutil.move(str(dist / part), str(folder / part))
        shutil.rmtree(dist)
        (folder / "master").mkdir()
        master.rename(folder / "master" / master.name)
        (folder / "requirements.txt").rename(folder / "master" / "requirements.txt")
        for z in (folder / "autograder").glob("*.zip"):
            z.rename(folder / "autograder" / "autograder.zip")
        _drop_prompts(folder / "autograder" / master.name)
        done[chapter] = folder
        rows.append(f"| `{chapter}` | {len(qs)} | {sum(len(g.tests) for g in qs)} |")
    (out / "README.md").write_text(
        TEACHER_README.format(
            table="\n".join(rows),
            otter=OTTER_PIN,
            ref=ref[:12],
            seconds=time.perf_counter() - start,
        ),
        encoding="utf-8",
    )
    return done


def main(argv: list[str]) -> int:
    """``python -m book.assignments [CHAPTER ...] [--out DIR] [--no-run-tests]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m book.assignments", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("chapters", nargs="*")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-run-tests", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    done = build(args.chapters or None, args.out, run_tests=not args.no_run_tests)
    print(
        f"{len(done)} assignments in {args.out} ({time.perf_counter() - start:.0f} s); "
        f"teachers: {args.out / 'README.md'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
