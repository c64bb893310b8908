"""The reader notebooks (`make jupyter`): what Colab and JupyterLab show, and that they run.

Marker `book`: `make test` runs these after nbval has filled the execution cache. The module
generates both editions once, into a temporary folder, executing nothing, then checks:
valid nbformat; no MyST left; solutions collapsed (full) or absent (student); statement,
equation and exercise numbers equal the built website's; the setup cell pinned to a commit;
its failure message; and the Colab-like run of every chapter's first generated notebook.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, toc_notebooks

pytestmark = pytest.mark.book

RAW_MYST = (":::{", "{prf:", "{cite", "{numref", "{ref}", "{eq}", "{solution", "{exercise",
            "{glue", "{doc}", "```{")
BARE_LABEL = re.compile(r"\((?:eq|fig)-[\w-]+\)|\b(?:def|thm|lem|prop|ex|eq|fig)-[a-z][\w-]*")
LINK_OR_ANCHOR = re.compile(r"\]\([^)]*\)|<a id='[^']*'></a>|https?://\S+")
# code is code: a show_source listing may quote a label in a docstring, as the website does
CODE = re.compile(r"^(`{3,})python\n.*?^\1$|`[^`\n]+`", re.S | re.M)
STATEMENT = ("Definition", "Theorem", "Lemma", "Proposition", "Corollary", "Remark", "Example",
             "Assumption", "Algorithm", "Conjecture", "Notation", "Observation", "Property",
             "Criterion", "Axiom")


def _sha() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    from book import jupyter

    out = tmp_path_factory.mktemp("reader")
    sha = _sha()
    written = jupyter.generate(out / "full", out / "student", ref=sha)
    return {"full": out / "full", "student": out / "student", "written": written, "ref": sha}


def _sections() -> list[Path]:
    return [p.relative_to(ROOT / "chapters") for p in toc_notebooks()]


def _markdown(nb) -> str:
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def test_every_section_in_both_editions_is_valid_nbformat_without_outputs(editions):
    for edition in ("full", "student"):
        for rel in _sections():
            path = editions[edition] / rel
            assert path.exists(), f"{edition}: {rel} was not generated"
            nb = _read(path)
            nbformat.validate(nb)
            for cell in nb.cells:
                if cell.cell_type == "code":
                    assert not cell.outputs and cell.execution_count is None, (rel, cell.id)


def test_no_raw_myst_in_any_markdown_cell(editions):
    problems = []
    for edition in ("full", "student"):
        for rel in _sections():
            text = _markdown(_read(editions[edition] / rel))
            problems += [f"{edition} {rel}: {tok!r}" for tok in RAW_MYST if tok in text]
            bare = BARE_LABEL.findall(LINK_OR_ANCHOR.sub("", CODE.sub("", text)))
            problems += [f"{edition} {rel}: bare label {b!r}" for b in bare]
    assert not problems, "\n".join(problems[:30])


def _source_solutions(rel: Path) -> tuple[int, set[str]]:
    """(number of solution-start directives, ids of solution code cells) in the source."""
    nb = _read(ROOT / "chapters" / rel)
    starts = sum(c.source.count("{solution-start}") for c in nb.cells if c.cell_type == "markdown")
    code = {c.id for c in nb.cells if c.cell_type == "code"
            and "solution" in c.metadata.get("tags", [])}
    return starts, code


def test_solutions_collapsed_in_the_full_edition_and_absent_in_the_student_edition(editions):
    total = 0
    for rel in _sections():
        starts, code_ids = _source_solutions(rel)
        total += starts
        full, student = _read(editions["full"] / rel), _read(editions["student"] / rel)
        summaries = set(re.findall(r"<summary>(Solution to Exercise [A-Z0-9.]+)</summary>",
                                   _markdown(full)))
        assert len(summaries) == starts, f"{rel}: {len(summaries)} collapsed solutions, {starts} in the source"
        for cell in full.cells:
            if cell.cell_type == "markdown" and "Solution to Exercise" in cell.source:
                assert cell.source.startswith("<details>") and cell.source.endswith("</details>"), (rel, cell.source[:200])
            if cell.id in code_ids:
                assert cell.metadata.get("cellView") == "form", (rel, cell.id)
                assert cell.metadata["jupyter"]["source_hidden"] is True, (rel, cell.id)
                assert cell.source.startswith("# @title Solution"), (rel, cell.id)
        assert code_ids <= {c.id for c in full.cells}, f"{rel}: a solution code cell is missing"
        assert "<summary>Solution" not in _markdown(student), rel
        solution_text = {c.source for c in full.cells if c.cell_type == "markdown"
                         and c.source.startswith("<details><summary>Solution")}
        assert not solution_text & {c.source for c in student.cells}, rel
        # a graded exercise's cells stay, as its stub and `grader.check` (book/graded.py)
        src = _read(ROOT / "chapters" / rel)
        graded_ids = {c.id for c in src.cells if {"graded", "graded_check"}
                      & set(c.metadata.get("flt", {}))}
        leaked = (code_ids - graded_ids) & {c.id for c in student.cells}
        assert not leaked, f"{rel}: solution code in the student edition: {leaked}"
        for cell in student.cells:
            if cell.id in graded_ids:
                assert ("raise NotImplementedError(" in cell.source
                        or cell.source.startswith("grader.check(")), (rel, cell.source)
                assert "# BEGIN SOLUTION" not in cell.source, (rel, cell.id)
        exercises = Counter(re.findall(r"\*\*Exercise ([A-Z0-9.]+)", _markdown(full)))
        assert exercises == Counter(re.findall(r"\*\*Exercise ([A-Z0-9.]+)", _markdown(student))), rel
    assert total > 100, f"only {total} solutions found in the sources"


def _site_numbers(html: str) -> Counter:
    text = re.sub(r"<[^>]+>", " ", html)
    text = re.sub(r"\s+", " ", text)
    found = Counter()
    for kind in STATEMENT:
        for num in re.findall(rf"caption-number\">\s*{kind} ([A-Z0-9]+\.\d+)", html):
            found[(kind, num)] += 1
    for num in re.findall(r"class=\"eqno\">\(([A-Z0-9]+\.\d+)\)", html):
        found[("eq", num)] += 1
    for num in set(re.findall(r"\bExercise ([A-Z0-9]+\.\d+)", text)) & set(
            re.findall(r"admonition-title[^>]*>\s*(?:<[^>]+>\s*)*Exercise ([A-Z0-9]+\.\d+)", html)):
        found[("Exercise", num)] += 1
    return found


def _notebook_numbers(md: str) -> Counter:
    found = Counter()
    for kind, num in re.findall(r"\*\*(" + "|".join(STATEMENT) + r") ([A-Z0-9]+\.\d+)\.?\*\*", md):
        found[(kind, num)] += 1
    for num in re.findall(r"\\tag\{([A-Z0-9]+\.\d+)\}", md):
        found[("eq", num)] += 1
    for num in set(re.findall(r"\*\*Exercise ([A-Z0-9]+\.\d+)", md)):
        found[("Exercise", num)] += 1
    return found


@pytest.fixture(scope="module")
def website():
    """The built website; built here (under the lock the build test shares) if it is stale."""
    from filelock import FileLock

    from book import build as _build

    html = ROOT / "_build" / "html"
    with FileLock(str(ROOT / "_build" / ".html.lock")):
        ok = _build.OK_MARKER
        if not (ok.exists() and ok.read_text().strip() == _build.cache_key()):
            proc = _build.build()
            assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return html


def test_statement_equation_and_exercise_numbers_equal_the_websites(editions, website):
    checked = 0
    for rel in _sections():
        page = (website / "chapters" / rel).with_suffix(".html").read_text(encoding="utf-8")
        site = _site_numbers(page)
        mine = _notebook_numbers(_markdown(_read(editions["full"] / rel)))
        assert mine == site, f"{rel}: only on the site {site - mine}, only in the notebook {mine - site}"
        checked += sum(site.values())
    assert checked > 500, f"only {checked} numbers compared"


def test_setup_cell_is_pinned_to_the_commit_the_notebooks_were_built_from(editions):
    from book.jupyter import read_config

    url = read_config()["repository"]["url"].rstrip("/")
    sha = editions["ref"]
    for edition in ("full", "student"):
        for rel in _sections():
            nb = _read(editions[edition] / rel)
            setup = next(c for c in nb.cells if c.cell_type == "code")
            assert "setup" in setup.metadata.get("tags", []), rel
            pins = re.findall(r"git\+(\S+?)@([0-9A-Za-z._/-]+)\"", setup.source)
            assert pins == [(url, sha)], f"{rel}: {pins}"
            assert re.fullmatch(r"[0-9a-f]{40}", pins[0][1])
            assert "SystemExit" not in setup.source and "YOU/REPO" not in setup.source
            assert nb.metadata["flt"]["flt_lib_ref"] == sha


def test_setup_failure_is_short_plain_and_says_what_to_do(editions, tmp_path):
    """Run the setup cell as Colab would when pip fails (an unreachable spec)."""
    from nbclient import NotebookClient

    nb = _read(editions["full"] / _sections()[0])
    setup = next(c for c in nb.cells if c.cell_type == "code")
    source = setup.source.replace('importlib.util.find_spec("flt_lib") is None', "True")
    source = source.replace('os.environ.get("FLT_LIB_SPEC", FLT_LIB)',
                            f'"flt_lib @ file://{tmp_path}/nothing-here"')
    test_nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    NotebookClient(test_nb, timeout=300, allow_errors=True, kernel_name="python3").execute()
    outputs = test_nb.cells[0].outputs
    errors = [o for o in outputs if o.output_type == "error"]
    assert len(errors) == 1, outputs
    shown = "\n".join(errors[0].traceback)
    assert "\x1b[" not in shown, shown
    assert "To exit" not in shown and "Traceback" not in shown, shown
    assert "Could not install flt_lib" in shown and "%pip install" in shown, shown
    assert len(shown.splitlines()) <= 5, shown


def first_generated_notebook_of_each_chapter(out: Path) -> list[Path]:
    firsts: dict[Path, Path] = {}
    for rel in _sections():
        firsts.setdefault(rel.parent, out / rel)
    return list(firsts.values())


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """A fresh virtual environment with Colab's packages only (no flt_lib, no otter), a
    kernel 'colab-like' in it, and a clone of this repository to install flt_lib from."""
    root = tmp_path_factory.mktemp("colab")
    clone = root / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(pip + ["torch==2.13.0", "numpy", "matplotlib", "scipy", "ipykernel"],
                   check=True, timeout=900)
    subprocess.run([py, "-m", "ipykernel", "install", "--prefix", str(venv), "--name",
                    "colab-like"], check=True, capture_output=True)
    return {"clone": clone, "venv": venv, "py": py}


def test_first_generated_notebook_of_every_chapter_runs_in_a_colab_like_environment(
        editions, colab, tmp_path, monkeypatch):
    """Colab's packages only; the notebook's own setup cell installs flt_lib from the pinned
    commit, here of a local clone of this repository (the same ref the notebook names)."""
    from nbclient import NotebookClient

    sha = editions["ref"]
    clone, venv, py = colab["clone"], colab["venv"], colab["py"]
    monkeypatch.setenv("JUPYTER_PATH", str(venv / "share" / "jupyter"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("FLT_DEVICE", raising=False)
    firsts = first_generated_notebook_of_each_chapter(editions["full"])
    assert len(firsts) >= 8, firsts
    for i, notebook in enumerate(firsts):
        work = tmp_path / f"colab-{i}"
        work.mkdir()
        shutil.copy(notebook, work / notebook.name)
        nb = nbformat.read(work / notebook.name, as_version=4)
        setup = next(c for c in nb.cells if c.cell_type == "code")
        pinned = re.search(r'FLT_LIB = "flt_lib @ git\+(\S+)@([0-9a-f]{40})"', setup.source)
        assert pinned and pinned.group(2) == sha, setup.source
        # the same pinned commit, fetched from the local clone instead of GitHub (a PEP 508
        # "name @ git+file:///..." is refused for its empty host, so the plain VCS form)
        monkeypatch.setenv("FLT_LIB_SPEC", f"git+file://{clone}@{pinned.group(2)}")
        NotebookClient(nb, kernel_name="colab-like", timeout=600,
                       resources={"metadata": {"path": str(work)}}).execute()
        first_out = "".join(o.get("text", "") for o in setup.outputs)
        assert "flt_lib" in first_out and "on cpu" in first_out, f"{notebook.name}: {first_out}"
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
                  if o.output_type == "error"]
        assert not errors, f"{notebook.name}: " + json.dumps(errors)[:2000]
    where = subprocess.run([py, "-c", "import flt_lib; print(flt_lib.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert str(venv) in where, f"flt_lib was not installed into the fresh environment: {where}"
    # Every module of the installed package imports with the run-time dependencies alone: no
    # Sphinx, nbval, jupyter-cache or build code is left in flt_lib (that is book/'s).
    walk = ("import flt_lib, pkgutil; mods = [m.name for m in pkgutil.walk_packages("
            "flt_lib.__path__, 'flt_lib.')]; [__import__(m) for m in mods]; print(len(mods))")
    out = subprocess.run([py, "-c", walk], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, f"a flt_lib module does not import on its own: {out.stderr}"
    assert int(out.stdout) > 20, out.stdout


def test_a_student_notebook_grades_a_right_and_a_wrong_answer_in_colab(
        editions, colab, tmp_path, monkeypatch):
    """A student notebook, run as a student would in Colab: its grader cell installs
    otter-grader (pinned) and writes the public tests; an exercise's stub filled in right
    passes `grader.check`, filled in wrong fails it, naming the input."""
    from nbclient import NotebookClient

    from book import graded

    monkeypatch.setenv("JUPYTER_PATH", str(colab["venv"] / "share" / "jupyter"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("FLT_DEVICE", raising=False)
    monkeypatch.setenv("FLT_LIB_SPEC", f"git+file://{colab['clone']}@{editions['ref']}")
    rel = next(r for r in _sections() if graded.find(ROOT / "chapters" / r))
    every = graded.find(ROOT / "chapters" / rel)
    g = every[0]
    work = tmp_path / "student"
    work.mkdir()
    nb = _read(editions["student"] / rel)
    grader = [c for c in nb.cells if "grader" in c.metadata.get("tags", [])]
    assert len(grader) == 1 and "otter-grader==" in grader[0].source
    assert grader[0].metadata["cellView"] == "form"  # folded in Colab
    stub = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                and f'raise NotImplementedError("{g.name}")' in c.source)
    check = stub + 1
    assert nb.cells[check].source == f'grader.check("{g.name}")', nb.cells[check].source
    # the student's two attempts: the right lines, then a wrong body, each checked (the
    # notebook's other graded exercises, if any, are answered right)
    for other in every:
        at = next(i for i, c in enumerate(nb.cells)
                  if f'raise NotImplementedError("{other.name}")' in c.source)
        nb.cells[at].source = other.solution
    wrong_body = next(iter(g.wrong.values()))
    nb.cells[check + 1:check + 1] = [
        nbformat.v4.new_code_cell(graded.with_body(g.solution, wrong_body)),
        nbformat.v4.new_code_cell(f'grader.check("{g.name}")'),
    ]
    NotebookClient(nb, kernel_name="colab-like", timeout=900, allow_errors=True,
                   resources={"metadata": {"path": str(work)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors, json.dumps(errors)[:2000]

    def shown(cell):
        return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                       for o in cell.outputs)

    right, wrong = shown(nb.cells[check]), shown(nb.cells[check + 2])
    assert "All test cases passed" in right, right
    assert "failed" in wrong and "on the case" in wrong, wrong


GLUE_ROLE = re.compile(r"\{glue:text\}`([^`:]+)(?::([^`]*))?`")


def _glued_values(rel: Path) -> dict[str, str]:
    """name -> text/plain of every glue record in the cached, executed copy of ``rel``."""
    from book.build import open_cache

    nb = _read(ROOT / "chapters" / rel)
    _, merged = open_cache().merge_match_into_notebook(nb)
    values = {}
    for cell in merged.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            text = out.get("data", {}).get("application/papermill.record/text/plain")
            if name and text is not None:
                values[name] = text
    return values


def test_glued_numbers_show_their_values(editions):
    import ast

    checked = 0
    for rel in _sections():
        source = _markdown(_read(ROOT / "chapters" / rel))
        roles = GLUE_ROLE.findall(source)
        if not roles:
            continue
        values = _glued_values(rel)
        shown = _markdown(_read(editions["full"] / rel))
        for name, spec in roles:
            assert name in values, f"{rel}: no glued value {name!r} in the execution cache"
            value = values[name]
            expected = format(ast.literal_eval(value), spec) if spec else value
            assert expected in shown, f"{rel}: {{glue:text}}`{name}` should show {expected!r}"
            checked += 1
    if not checked:
        pytest.skip("no page uses {glue:text} yet")
