"""Reader notebooks for Colab and JupyterLab, made from the book (``make jupyter``).

Usage, from the repository root, after ``make book`` (the execution cache must hold
every notebook: nothing is executed here)::

    python -m book.jupyter            # _build/jupyter/ and _build/student/jupyter/

The source notebooks are written in MyST (``{prf:theorem}``, ``{cite:t}``, ``{eq}``,
``{solution-start}``, ``{glue:text}``), which only Sphinx renders; Colab and JupyterLab
show it as source text. This command runs Sphinx with the builder ``flt_jupyter``
(``book/jupyter_builder.py``, built on ``sphinx-tojupyter``) over the book, from the
same execution cache as the website, and writes for every section

- ``_build/jupyter/<chapter>/<section>.ipynb``: plain Jupyter Markdown and LaTeX,
  numbers and links as on the website, solutions collapsed;
- ``_build/student/jupyter/<chapter>/<section>.ipynb``: the same without solutions.

Every notebook's setup cell installs ``flt_lib`` pinned to the commit the notebooks were
built from (``git+<repository.url>@<40-hex sha>``), which exists as soon as that commit
is pushed. Outputs are stripped. When a built website exists (``_build/html``,
``_build/student/html``), its download button's copy of each notebook (``_sources/``) is
replaced by the generated one.

As a Sphinx extension (``_config.yml``), this module also points the website's Colab
button at the published notebooks (``flt_notebooks`` in ``_config.yml``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from book import ROOT

BUILD = ROOT / "_build"
OUT = BUILD / "jupyter"
STUDENT_OUT = BUILD / "student" / "jupyter"
DOCTREES = BUILD / ".doctrees-jupyter"

READER_SETUP = '''\
# Setup: installs flt_lib, the book's library, as it was when this notebook was made.
import importlib.util, os, re, subprocess, sys
FLT_LIB = "flt_lib @ git+{repo_url}@{ref}"
if importlib.util.find_spec("flt_lib") is None:
    spec = os.environ.get("FLT_LIB_SPEC", FLT_LIB)
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", spec],
                         capture_output=True, text=True)
    if pip.returncode:
        err = re.sub(r"\\x1b\\[[0-9;]*[A-Za-z]", "", pip.stderr).strip().splitlines()
        class SetupFailed(Exception):
            def _render_traceback_(self):  # IPython shows these lines, no traceback
                return [str(self)]
        raise SetupFailed(
            f"Could not install flt_lib ({{err[-1] if err else 'pip failed'}}).\\n"
            "Check the internet connection (in Colab: Runtime > Restart session) and "
            "run "
            "this cell again, or paste this into a new cell and run it:\\n"
            f"  %pip install \\"{{spec}}\\"")
import flt_lib
from flt_lib.device import get_device, set_threads
from flt_lib.plotting import use_book_style
from flt_lib.rng import set_seed
set_seed(0)
set_threads()  # torch threads: FLT_THREADS, default 1
use_book_style()
device = get_device()  # FLT_DEVICE=cuda to run on a GPU
print(f"flt_lib {{flt_lib.__version__}} on {{device}}")'''


def reader_setup_source(repo_url: str, ref: str) -> str:
    """The setup cell of a generated notebook: flt_lib from ``repo_url`` at ``ref``.

    Args:
        repo_url: the repository, an ``https://`` (or, in tests, ``file://``) URL.
        ref: a 40-hex commit or a tag name that exists when the notebooks are published.
    """
    if not isinstance(repo_url, str) or not re.match(r"^(https|file)://", repo_url):
        raise ValueError(
            f"repo_url must be an https:// or file:// URL, got {repo_url!r}"
        )
    if not isinstance(ref, str) or not re.fullmatch(
        r"[0-9A-Za-z][0-9A-Za-z._/-]*", ref
    ):
        raise ValueError(f"ref must be a commit sha or a tag name, got {ref!r}")
    return READER_SETUP.format(repo_url=repo_url.rstrip("/"), ref=ref)


def read_config(root: Path = ROOT) -> dict:
    """``_config.yml`` as a dict."""
    import yaml

    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


def built_from(root: Path = ROOT) -> tuple[str, bool]:
    """(HEAD's 40-hex sha, whether flt_lib/ or pyproject.toml differ from it)."""
    sha = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dirty = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "status",
            "--porcelain",
            "--",
            "flt_lib",
            "pyproject.toml",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return sha, bool(dirty)


def finish_notebook(
    nb: dict, *, title: str, setup: str, edition: str, ref: str
) -> dict:
    """Pin the setup cell, give every cell an id, strip outputs and set the metadata."""
    import nbformat

    cells = nb["cells"]
    # sphinx-tojupyter puts the LaTeX macros first; the title cell goes before them.
    if (
        len(cells) > 1
        and cells[1]["cell_type"] == "markdown"
        and cells[1]["source"].startswith("# ")
    ):
        cells[0], cells[1] = cells[1], cells[0]
    taken = set()
    for k, cell in enumerate(cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "markdown":
            cell["source"] = re.sub(r"\n{3,}", "\n\n", cell["source"]).strip("\n")
            cell["metadata"] = {}  # sphinx-tojupyter's "hide-output" means nothing here
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
            if "setup" in tags:
                cell["source"] = setup
                cell["metadata"] = {"tags": ["setup"]}
        if not cell.get("id") or cell["id"] in taken or cell["cell_type"] == "markdown":
            cell["id"] = (
                f"md-{k:03d}" if cell["cell_type"] == "markdown" else f"cell-{k:03d}"
            )
        taken.add(cell["id"])
    nb["metadata"] = {
        "kernelspec": {
            "display_name": "Python 3",
            "language": "python",
            "name": "python3",
        },
        "language_info": {"name": "python"},
        "colab": {"provenance": [], "toc_visible": True},
        "title": title,
        "flt": {
            "edition": edition,
            "flt_lib_ref": ref,
            "generated_by": "python -m book.jupyter; edit chapters/, not this file",
        },
    }
    nb["nbformat"], nb["nbformat_minor"] = 4, 5
    nbformat.validate(nbformat.from_dict(nb))
    return nb


def add_grader(nb: dict, tags: tuple[str, ...] = ("grader",)) -> bool:
    """Put the grader cell (otter-grader and the public tests) after the setup cell.

    Only for a notebook with ``grader.check("<name>")`` cells (a graded exercise's
    check, ``book/graded.py``); returns whether it did. The cell is folded in Colab and
    JupyterLab: it holds the tests' source, which ``grader.check`` reads from
    ``tests/``.
    """
    from book import graded
    from book.assignments import grader_init, otter_test_file

    names = [
        m.group(1)
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for m in re.finditer(r'^grader\.check\("([\w]+)"\)', graded._src(c), re.M)
    ]
    if not names:
        return False
    tests = {}
    for name in names:
        public, _ = graded.load_tests(graded.TESTS_DIR / f"{name}.py")
        g = graded.Graded(name, Path(), "", "", "", "", tests=public)
        tests[name] = otter_test_file(g, hidden=False)
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": "grader",
        "metadata": {"cellView": "form", "jupyter": {"source_hidden": True},
                     "tags": list(tags)},
        "outputs": [],
        "source": "# @title Grader (otter-grader and this notebook's public tests)\n"
        + grader_init(None, tests),
    }
    at = next(
        (k + 1 for k, c in enumerate(nb["cells"])
         if "setup" in c.get("metadata", {}).get("tags", [])),
        0,
    )
    nb["cells"].insert(at, cell)
    return True


def _missing_from_cache() -> list[str]:
    import nbformat

    from book.build import cached_record, notebooks, open_cache

    cache = open_cache()
    return [
        str(p.relative_to(ROOT))
        for p in notebooks()
        if cached_record(cache, nbformat.read(p, as_version=4)) is None
    ]


def generate(
    out: Path = OUT,
    student_out: Path | None = STUDENT_OUT,
    *,
    ref: str | None = None,
    quiet: bool = True,
) -> dict[str, list[Path]]:
    """Write both editions; return {'full': [paths], 'student': [paths]}.

    Raises:
        RuntimeError: if the execution cache lacks a notebook (run ``make book``
            first), or
            Sphinx fails.
    """
    from jupyter_book.config import get_final_config
    from jupyter_book.sphinx import build_sphinx

    missing = _missing_from_cache()
    if missing:
        raise RuntimeError(
            "the execution cache lacks "
            + ", ".join(missing[:5])
            + (" ..." if len(missing) > 5 else "")
            + ": run `make book` first "
            "(make jupyter executes nothing)"
        )
    config = read_config()
    repo_url = config["repository"]["url"]
    if ref is None:
        ref, dirty = built_from()
        if dirty:
            print(
                "[book.jupyter] note: flt_lib/ has uncommitted changes; the "
                f"notebooks pin {ref[:12]}, which does not contain them"
            )
    setup = reader_setup_source(repo_url, ref)
    tmp_out, tmp_student = BUILD / ".jupyter_full", BUILD / ".jupyter_student"
    for d in (tmp_out, tmp_student):
        shutil.rmtree(d, ignore_errors=True)
    sphinx_config, _ = get_final_config(
        user_yaml=ROOT / "_config.yml",
        sourcedir=ROOT,
        cli_config={"latex_individualpages": False},
    )
    extensions = list(sphinx_config["extensions"])
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    result = build_sphinx(
        ROOT,
        BUILD / ".jupyter_sphinx",
        doctreedir=DOCTREES,
        builder="flt_jupyter",
        path_config=ROOT / "_config.yml",
        noconfig=True,
        quiet=quiet,
        really_quiet=quiet,
        confoverrides={
            "extensions": extensions + ["book.jupyter_builder"],
            "flt_jupyter_out": str(tmp_out),
            "flt_jupyter_student_out": str(tmp_student) if student_out else "",
            "nb_execution_mode": "cache",
            "latex_individualpages": False,
        },
    )
    if result:
        raise RuntimeError(f"Sphinx failed ({result}); see its messages above")
    written: dict[str, list[Path]] = {"full": [], "student": []}
    for edition, src, dst in (
        ("full", tmp_out, out),
        ("student", tmp_student, student_out),
    ):
        if dst is None:
            continue
        shutil.rmtree(dst, ignore_errors=True)
        for path in sorted(src.rglob("*.ipynb")):
            nb = json.loads(path.read_text(encoding="utf-8"))
            title = nb.get("metadata", {}).get("title", path.stem)
            nb = finish_notebook(nb, title=title, setup=setup, edition=edition, ref=ref)
            if edition == "student":
                add_grader(nb)
            target = Path(dst) / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(
                json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
            )
            written[edition].append(target)
        shutil.rmtree(src, ignore_errors=True)
    return written


def copy_into_site(written: list[Path], out: Path, site: Path) -> int:
    """Replace the site's downloadable notebooks (``_sources/``) by generated ones."""
    n = 0
    for path in written:
        target = site / "_sources" / "chapters" / path.relative_to(out)
        if target.exists():
            shutil.copy2(path, target)
            n += 1
    return n


# ---- The website's Colab button ----------------------------------------------------
def colab_url(config: dict, docname: str) -> str:
    """The Colab address of the generated notebook of page ``docname``."""
    where = config or {}
    m = re.match(
        r"^https://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$",
        where.get("repository", ""),
    )
    if not m:
        raise ValueError(
            f"flt_notebooks.repository must be a GitHub URL, got {where!r}"
        )
    path = "/".join(p for p in (where.get("path", "").strip("/"),) if p)
    rel = docname[len("chapters/") :] if docname.startswith("chapters/") else docname
    rel = f"{path}/{rel}" if path else rel
    return (
        f"https://colab.research.google.com/github/{m.group(1)}/{m.group(2)}/blob/"
        f"{where.get('branch', 'main')}/{rel}.ipynb"
    )


def _retarget_colab(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    config = app.config.flt_notebooks
    if not config:
        return

    def walk(buttons: list) -> None:
        for button in buttons:
            if button.get("text") == "Colab" and "url" in button:
                button["url"] = colab_url(config, pagename)
            walk(button.get("buttons", []))

    walk(context.get("header_buttons", []))


def setup(app: Any) -> dict:
    """Sphinx extension for the website: the Colab button opens the reader notebook."""
    app.add_config_value("flt_notebooks", {}, "html")
    app.connect("html-page-context", _retarget_colab, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str]) -> int:
    """``python -m book.jupyter [-v]``: write both editions; 0 on success."""
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    t0 = time.perf_counter()
    try:
        written = generate(quiet="-v" not in argv)
    except RuntimeError as err:
        print(f"[book.jupyter] {err}", file=sys.stderr)
        return 1
    copied = copy_into_site(written["full"], OUT, BUILD / "html")
    copied_s = copy_into_site(
        written["student"], STUDENT_OUT, BUILD / "student" / "html"
    )
    print(
        f"[book.jupyter] {len(written['full'])} notebooks in {OUT.relative_to(ROOT)}, "
        f"{len(written['student'])} in {STUDENT_OUT.relative_to(ROOT)} "
        f"({copied} + {copied_s} download copies updated) "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
