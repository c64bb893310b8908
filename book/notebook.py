"""The notebooks' shared setup cell, stripping, the student edition and release checks.

Usage, from the repository root::

    python -m book.notebook stamp             # re-stamp every notebook's setup cell
    python -m book.notebook check             # exit 1 if any setup cell is stale
    python -m book.notebook strip             # remove outputs from every notebook
    python -m book.notebook student OUT_DIR   # chapters' notebooks without solutions
    python -m book.notebook student-book OUT_DIR [--executed DIR]
                                          # the student edition as a book source tree
    python -m book.notebook release-check     # version, setup cells and git tag agree
    python -m book.notebook retitle           # '# 3.1 Title' -> '# Title' (toc numbers)

The setup cell is generated from one template, filled in from ``_config.yml``
(``repository.url``) and ``flt_lib.__version__``. On a machine without flt_lib (Colab)
it installs the package from the repository **pinned to the tag v<version>**, never a
bare name from PyPI. The environment variable ``FLT_LIB_SPEC`` overrides the pip spec,
which is how the tests point a clean environment at the local checkout.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from book import ROOT
from book.student_site import FULL_ONLY, student_intro, student_toc

SETUP_TAG = "setup"  # marks the setup cell
SOLUTION_TAG = "solution"  # marks code cells that belong to an exercise's solution
SETUP_TAGS = [SETUP_TAG, "hide-input"]  # hide-input: the website collapses the cell

SETUP_TEMPLATE = '''\
# Setup: the same cell opens every notebook (`make stamp` writes it).
import importlib.util, os, subprocess, sys
if importlib.util.find_spec("flt_lib") is None:  # on Colab: install the pinned version
    url = "git+{repo_url}@v{version}"
    spec = os.environ.get("FLT_LIB_SPEC", f"flt_lib @ {{url}}")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", spec],
                         capture_output=True, text=True)
    if pip.returncode:  # pip's own words, then ours: which spec and tag, and what to do
        raise SystemExit(
            f"pip could not install {{spec!r}}:\\n{{pip.stderr.strip()[-1500:]}}\\n\\n"
            "Check the network and that the repository has the tag v{version}\\n"
            "(for a fork: set repository.url in _config.yml and run `make stamp`),\\n"
            "or point FLT_LIB_SPEC at another pip spec, in a cell above this one:\\n"
            "  os.environ['FLT_LIB_SPEC'] = 'git+https://github.com/YOU/REPO@main'")
import flt_lib
from flt_lib.device import get_device, set_threads
from flt_lib.plotting import use_book_style
from flt_lib.rng import set_seed
set_seed(0)
set_threads()  # torch threads: FLT_THREADS, default 1
use_book_style()
device = get_device()  # FLT_DEVICE=cuda to run on a GPU
print(f"flt_lib {{flt_lib.__version__}} on {{device}}")'''


def read_config(root: Path = ROOT) -> dict:
    """Return ``_config.yml`` as a dict (needs PyYAML, which the book's environment
    has)."""
    import yaml

    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


def setup_source(repo_url: str, version: str) -> str:
    """The setup cell's source for a repository URL and a library version."""
    if not isinstance(repo_url, str) or not repo_url.startswith("https://"):
        raise ValueError(f"repo_url must be an https:// URL, got {repo_url!r}")
    if not isinstance(version, str) or not version:
        raise ValueError(f"version must be a non-empty string, got {version!r}")
    return SETUP_TEMPLATE.format(repo_url=repo_url.rstrip("/"), version=version)


def expected_setup_source(root: Path = ROOT) -> str:
    """The setup cell every notebook must carry, from ``_config.yml`` and
    ``__version__``."""
    import flt_lib

    return setup_source(read_config(root)["repository"]["url"], flt_lib.__version__)


def notebooks(root: Path = ROOT) -> list[Path]:
    """All notebooks under ``chapters/``, sorted."""
    return sorted(
        p
        for p in (root / "chapters").rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts
    )


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _dump(nb: dict, path: Path) -> None:
    path.write_text(
        json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def setup_cell_index(nb: dict) -> int | None:
    """Index of the first code cell, which must be the setup cell; None if there is
    none."""
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "code":
            return i
    return None


def _fill_ids(nb: dict) -> bool:
    """Give every cell without an ``id`` (nbformat >= 4.5) a unique one; return True if
    any."""
    taken = {c["id"] for c in nb.get("cells", []) if "id" in c}
    changed = False
    for k, cell in enumerate(nb.get("cells", [])):
        if "id" not in cell:
            new, n = f"cell-{k}", 0
            while new in taken:
                n += 1
                new = f"cell-{k}-{n}"
            cell["id"] = new
            taken.add(new)
            changed = True
    if changed:
        nb["nbformat"], nb["nbformat_minor"] = 4, max(5, nb.get("nbformat_minor", 5))
    return changed


def stamp_notebook(path: Path, source: str) -> bool:
    """Make the first code cell of ``path`` the setup cell (and give every cell an id).

    Returns True if the file changed.
    """
    nb = _load(path)
    i = setup_cell_index(nb)
    cell = {
        "cell_type": "code",
        "execution_count": None,
        "id": "flt-setup",  # nbformat >= 4.5 wants an id on every cell
        "metadata": {"tags": list(SETUP_TAGS)},
        "outputs": [],
        "source": source,
    }
    changed = _fill_ids(nb)
    if i is None or SETUP_TAG not in nb["cells"][i].get("metadata", {}).get("tags", []):
        # No setup cell yet: insert one after the leading markdown cells (title and
        # goals).
        j = 0
        while j < len(nb["cells"]) and nb["cells"][j].get("cell_type") == "markdown":
            j += 1
        nb["cells"].insert(j, cell)
    else:
        old = nb["cells"][i]
        if _source(old) == source and old.get("metadata", {}).get("tags") == SETUP_TAGS:
            if changed:
                _dump(nb, path)
            return changed
        cell["id"] = old.get("id", cell["id"])
        cell["metadata"] = {**old.get("metadata", {}), "tags": list(SETUP_TAGS)}
        nb["cells"][i] = cell
    _dump(nb, path)
    return True


def strip_notebook(path: Path) -> bool:
    """Remove outputs and execution counts from ``path``; return True if the file
    changed."""
    nb = _load(path)
    changed = False
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            changed = True
        cell["outputs"], cell["execution_count"] = [], None
    if changed:
        _dump(nb, path)
    return changed


# ---- The student edition -------------------------------------------------------------
# An exercise's solution runs from a `solution-start` directive to its `solution-end`
# directive; either may share a markdown cell with other text (the end of one solution
# and the next exercise, say). The student edition therefore works on directives, line
# by line, never on whole cells. A fence is a line like ":::{name} args" (or with
# backticks), closed by a line of the same character, at least as long.
_FENCE_OPEN = re.compile(
    r"^ {0,3}(?P<fence>:{3,}|`{3,})\{(?P<name>[^}\s]+)\}(?P<arg>.*)$"
)
_FENCE_CLOSE = re.compile(r"^ {0,3}(?P<fence>:{3,}|`{3,})\s*$")
SOLUTION_START, SOLUTION_END, SOLUTION = "solution-start", "solution-end", "solution"


def _skip_directive(lines: list[str], i: int) -> int:
    """Index just past the directive whose opening fence is ``lines[i]`` (nesting
    respected)."""
    stack = [_FENCE_OPEN.match(lines[i]).group("fence")]
    j = i + 1
    while j < len(lines) and stack:
        m_open, m_close = _FENCE_OPEN.match(lines[j]), _FENCE_CLOSE.match(lines[j])
        if (
            m_close
            and m_close.group("fence")[0] == stack[-1][0]
            and len(m_close.group("fence")) >= len(stack[-1])
        ):
            stack.pop()
        elif m_open:
            stack.append(m_open.group("fence"))
        j += 1
    return j


def split_solutions(text: str, inside: bool) -> tuple[str, str, bool]:
    """Split one markdown cell into (kept text, solution text, inside-a-solution at its
    end).

    ``inside`` says whether the cell starts inside a solution (after a
    ``solution-start`` in an earlier cell). The ``solution-start``/``solution-end``
    fences themselves, everything between them, and whole ``{solution}`` directives go
    to the solution text.
    """
    lines = text.split("\n")
    kept: list[str] = []
    dropped: list[str] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        name = m.group("name") if m else None
        if name == SOLUTION_END and inside:
            j = _skip_directive(lines, i)
            dropped += lines[i:j]
            i, inside = j, False
        elif name == SOLUTION_START and not inside:
            j = _skip_directive(lines, i)
            dropped += lines[i:j]
            i, inside = j, True
        elif name in (SOLUTION_START, SOLUTION_END):
            where = "inside" if inside else "outside"
            raise ValueError(
                f"unexpected {name} directive {where} a solution: {lines[i]!r}"
            )
        elif name == SOLUTION and not inside:  # a whole, ungated {solution} directive
            j = _skip_directive(lines, i)
            dropped += lines[i:j]
            i = j
        else:
            (dropped if inside else kept).append(lines[i])
            i += 1
    return _tidy("\n".join(kept)), "\n".join(dropped), inside


def _tidy(text: str) -> str:
    """Trim blank lines at both ends and runs of more than one blank line."""
    text = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text)
    return text.strip("\n")


def student_copy(nb: dict) -> dict:
    """A copy of a notebook with the exercises' solutions removed.

    Removes, directive by directive: every ``solution-start`` ... ``solution-end`` range
    (markdown text and any cells in between) and every ``{solution}`` directive, and
    drops code cells tagged ``solution`` wherever they are. Everything else, exercises,
    headings, summaries and the other cells' outputs included, is kept unchanged. A
    markdown cell left empty is dropped.

    Raises:
        ValueError: if a solution is opened and never closed, or closed and never
            opened.
    """
    out = dict(nb, cells=[])
    inside = False
    for cell in nb["cells"]:
        if cell.get("cell_type") == "markdown":
            kept, _, inside = split_solutions(_source(cell), inside)
            if kept.strip():
                out["cells"].append(dict(cell, source=kept))
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        flt = cell.get("metadata", {}).get("flt", {})
        if "graded" in flt or "graded_check" in flt:  # the stub and its check stay
            from book import graded

            name = flt.get("graded") or flt["graded_check"]
            code = (
                graded.stub(_source(cell), name).rstrip("\n")
                if "graded" in flt
                else f'grader.check("{name}")'
            )
            out["cells"].append(
                dict(cell, source=code, outputs=[], execution_count=None,
                     metadata={"flt": flt})
            )
            continue
        if inside or SOLUTION_TAG in tags:
            continue
        out["cells"].append(cell)
    if inside:
        raise ValueError("a solution-start directive has no matching solution-end")
    from book.jupyter import add_grader

    add_grader(out, tags=("grader", "hide-input"))
    return out


def transplant_outputs(nb: dict, executed: dict) -> dict:
    """Copy outputs from an executed copy of the same notebook onto ``nb``'s code cells.

    A cell receives outputs only from the executed cell with the same id *and* the same
    source, so an edited cell is never shown with an old output.
    """
    done = {
        c.get("id"): c
        for c in executed.get("cells", [])
        if c.get("cell_type") == "code" and c.get("id")
    }
    cells = []
    for cell in nb["cells"]:
        twin = done.get(cell.get("id"))
        if cell.get("cell_type") == "code" and twin and _source(twin) == _source(cell):
            cell = dict(cell, outputs=twin.get("outputs", []))
            cell["execution_count"] = twin.get("execution_count")
        cells.append(cell)
    return dict(nb, cells=cells)


def _executed_source(executed_dir: Path | None):
    """A function (relative path, notebook) -> executed notebook or None, for
    ``executed_dir``."""
    if executed_dir is None:
        return lambda rel, nb: None
    executed_dir = Path(executed_dir)
    if (executed_dir / "global.db").exists():  # a jupyter-cache folder
        import nbformat
        from jupyter_cache import get_cache

        from book.build import STAMP_NAME, cache_key

        stamp = executed_dir / STAMP_NAME
        if stamp.exists() and stamp.read_text().strip() != cache_key():
            print(f"{executed_dir} was filled with another flt_lib: no outputs taken")
            return lambda rel, nb: None

        cache = get_cache(executed_dir)

        def from_cache(rel: Path, nb: dict) -> dict | None:
            try:
                _, merged = cache.merge_match_into_notebook(nbformat.from_dict(nb))
            except KeyError:
                return None
            return json.loads(nbformat.writes(merged))

        return from_cache

    def from_folder(rel: Path, nb: dict) -> dict | None:
        target = executed_dir / rel
        return _load(target) if target.exists() else None

    return from_folder


STUDENT_NOTE = "Student edition: the exercises' solutions are not included."


def student_book(
    out_dir: Path, *, executed_dir: Path | None = None, root: Path = ROOT
) -> int:
    """Write the student edition as a complete book source tree in ``out_dir``.

    The tree holds ``_config.yml`` (title marked as the student edition, notebooks not
    executed, no Colab button, which would open the full notebook), ``_toc.yml``,
    ``references.bib`` and ``chapters/`` with every notebook replaced by its student
    copy. With ``executed_dir``, kept cells carry their outputs from there: either a
    jupyter-cache folder (the book build's execution cache; a notebook is looked up by
    its code) or a folder of executed notebooks mirroring the repository.

    Returns the number of notebooks written.
    """
    import shutil

    import yaml

    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    shutil.copytree(
        root / "chapters",
        out_dir / "chapters",
        ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"),
    )
    for name in ("_toc.yml", "references.bib"):
        shutil.copy2(root / name, out_dir / name)
    if (root / "_static").is_dir():
        shutil.copytree(root / "_static", out_dir / "_static")
    # the course guide is for instructors; the home page promises no Colab button and no
    # collapsed solutions (book/student_site.py)
    toc = out_dir / "_toc.yml"
    toc.write_text(student_toc(toc.read_text(encoding="utf-8")), encoding="utf-8")
    for page in FULL_ONLY:
        (out_dir / f"{page}.md").unlink(missing_ok=True)
    intro = out_dir / "chapters" / "intro.md"
    intro.write_text(student_intro(intro.read_text(encoding="utf-8")), encoding="utf-8")
    config = read_config(root)
    config["title"] = f"{config['title']} (student edition)"
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    config.setdefault("launch_buttons", {})["colab_url"] = ""
    config.setdefault("html", {})["announcement"] = STUDENT_NOTE
    # No PDF button: the book's PDF holds the solutions (book/ext/html.py).
    config.setdefault("sphinx", {}).setdefault("config", {})["flt_pdf"] = ""
    # The Sphinx extension is loaded from this checkout, not from the copy.
    local = config.get("sphinx", {}).get("local_extensions") or {}
    for name, where in local.items():
        local[name] = str((root / where).resolve())
    (out_dir / "_config.yml").write_text(
        "# Generated by `python -m book.notebook student-book`: do not edit.\n"
        + yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    n = 0
    executed_for = _executed_source(executed_dir)
    for path in notebooks(root):
        rel = path.relative_to(root)
        full = _load(path)
        nb = student_copy(full)
        executed = executed_for(rel, full)
        if executed is not None:
            nb = transplant_outputs(nb, executed)
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        _dump(nb, target)
        n += 1
    return n


# ---- Titles without hand-written numbers ---------------------------------------------
# The table of contents numbers chapters and sections (numbered: true in _toc.yml), so a
# title "# 3.1 Backpropagation" would show as "3.1. 3.1 Backpropagation". `retitle`
# removes such a number from the first heading of every notebook and every chapter's
# index.md.
_HAND_NUMBER = re.compile(r"^(#\s+)(?:\d+|[A-Z])(?:(?:\.\d+)+\.?|\.)\s+(?=\S)")


def hand_numbered_title(text: str) -> str | None:
    """The first line of ``text`` if it is a '# ' heading starting with a number, else
    None."""
    first = text.split("\n", 1)[0]
    return first if _HAND_NUMBER.match(first) else None


def retitle_text(text: str) -> str:
    """``text`` with the number removed from its first line's heading ('# 3.1 X' -> '#
    X')."""
    first, sep, rest = text.partition("\n")
    return _HAND_NUMBER.sub(r"\1", first, count=1) + sep + rest


def title_files(root: Path = ROOT) -> list[Path]:
    """Every notebook and every chapter index page (chapters/*/index.md)."""
    return notebooks(root) + sorted((root / "chapters").glob("*/index.md"))


def retitle_file(path: Path) -> bool:
    """Remove a hand-written number from the page title of ``path``; True if it
    changed."""
    path = Path(path)
    if path.suffix == ".md":
        text = path.read_text(encoding="utf-8")
        new = retitle_text(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
        return new != text
    nb = _load(path)
    cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "markdown"]
    if not cells:
        return False
    text = _source(cells[0])
    new = retitle_text(text)
    if new == text:
        return False
    cells[0]["source"] = (
        new.splitlines(keepends=True) if isinstance(cells[0]["source"], list) else new
    )
    _dump(nb, path)
    return True


# ---- The release check ---------------------------------------------------------------
_VERSION_RE = re.compile(r'^__version__\s*=\s*["\']([^"\']+)["\']', re.M)


def _git(root: Path, *args: str) -> tuple[int, str]:
    import subprocess

    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True
    )
    return proc.returncode, proc.stdout.strip() or proc.stderr.strip()


def release_problems(root: Path = ROOT) -> list[str]:
    """What stands between this checkout and a consistent release; empty when there is
    nothing.

    A release v<version> is consistent when ``flt_lib.__version__`` is <version>, every
    notebook's setup cell is stamped for that version (so Colab installs that tag), a
    git tag ``v<version>`` exists and carries the same version, and the library at the
    tag is the library here (``flt_lib/`` and ``pyproject.toml`` have no committed or
    uncommitted change since the tag), so the notebooks run against the code they were
    built with.
    """
    root = Path(root)
    m = _VERSION_RE.search(
        (root / "flt_lib" / "__init__.py").read_text(encoding="utf-8")
    )
    if not m:
        return ["flt_lib/__init__.py has no __version__ = '...' line"]
    version = m.group(1)
    tag = f"v{version}"
    problems = []
    expected = setup_source(read_config(root)["repository"]["url"], version)
    for path in notebooks(root):
        nb = _load(path)
        i = setup_cell_index(nb)
        if i is None or _source(nb["cells"][i]) != expected:
            rel = path.relative_to(root)
            problems.append(
                f"{rel}: setup cell not stamped for {tag}; run `make stamp`"
            )
    rc, _ = _git(root, "rev-parse", "-q", "--verify", f"refs/tags/{tag}^{{commit}}")
    if rc != 0:
        problems.append(
            f"no git tag {tag}: commit, then `git tag {tag}` (and push the tag), "
            "so that the setup cells' pinned install resolves"
        )
        return problems
    rc, text = _git(root, "show", f"{tag}:flt_lib/__init__.py")
    m_tag = _VERSION_RE.search(text) if rc == 0 else None
    if not m_tag or m_tag.group(1) != version:
        found = m_tag.group(1) if m_tag else "none"
        problems.append(f"tag {tag} carries __version__ {found!r}, not {version!r}")
    rc, changed = _git(
        root, "diff", "--name-only", tag, "--", "flt_lib", "pyproject.toml"
    )
    if rc != 0:
        problems.append(f"git diff against {tag} failed: {changed}")
    elif changed:
        files = ", ".join(changed.splitlines()[:5])
        problems.append(
            f"flt_lib differs from tag {tag} ({files}): Colab would install other "
            "code than this checkout's; bump __version__, `make stamp`, commit and tag "
            "again"
        )
    return problems


def main(argv: list[str]) -> int:
    """Command line (see the module's docstring); returns the exit code."""
    commands = {
        "stamp",
        "check",
        "strip",
        "student",
        "student-book",
        "release-check",
        "retitle",
    }
    if not argv or argv[0] not in commands:
        print(__doc__)
        return 2
    cmd, paths = argv[0], notebooks()
    if cmd == "stamp":
        source = expected_setup_source()
        for p in paths:
            if stamp_notebook(p, source):
                print(f"stamped {p.relative_to(ROOT)}")
    elif cmd == "check":
        source = expected_setup_source()
        stale = []
        for p in paths:
            nb = _load(p)
            i = setup_cell_index(nb)
            if i is None or _source(nb["cells"][i]) != source:
                stale.append(p)
        for p in stale:
            print(f"stale setup cell: {p.relative_to(ROOT)}")
        return 1 if stale else 0
    elif cmd == "strip":
        for p in paths:
            if strip_notebook(p):
                print(f"stripped {p.relative_to(ROOT)}")
    elif cmd == "student":
        if len(argv) != 2:
            print("usage: python -m book.notebook student OUT_DIR")
            return 2
        out_dir = Path(argv[1])
        for p in paths:
            target = out_dir / p.relative_to(ROOT / "chapters")
            target.parent.mkdir(parents=True, exist_ok=True)
            _dump(student_copy(_load(p)), target)
        print(f"wrote {len(paths)} student notebooks to {out_dir}")
    elif cmd == "student-book":
        if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--executed"):
            print(
                "usage: python -m book.notebook student-book OUT_DIR [--executed DIR]"
            )
            return 2
        executed = Path(argv[3]) if len(argv) == 4 else None
        if executed is not None and not executed.is_dir():
            print(f"no executed notebooks in {executed}: the student site has none")
            executed = None
        n = student_book(Path(argv[1]), executed_dir=executed)
        src = f", outputs from {executed}" if executed else ", without outputs"
        print(f"wrote the student edition's source ({n} notebooks{src}) to {argv[1]}")
    elif cmd == "retitle":
        for p in title_files():
            if retitle_file(p):
                print(f"retitled {p.relative_to(ROOT)}")
    elif cmd == "release-check":
        problems = release_problems()
        for line in problems:
            print(f"release-check: {line}")
        if not problems:
            import flt_lib

            print(f"release-check: v{flt_lib.__version__} is consistent")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
