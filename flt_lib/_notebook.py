"""Book tooling (not part of the library API): the notebooks' shared setup cell, and editions.

Usage, from the repository root::

    python -m flt_lib._notebook stamp             # re-stamp every notebook's setup cell
    python -m flt_lib._notebook check             # exit 1 if any setup cell is stale
    python -m flt_lib._notebook strip             # remove outputs from every notebook
    python -m flt_lib._notebook student OUT_DIR   # copy of chapters/ without solution cells

The setup cell is generated from one template, filled in from ``_config.yml``
(``repository.url``) and ``flt_lib.__version__``. On a machine without flt_lib (Colab) it
installs the package from the repository **pinned to the tag v<version>**, never a bare name
from PyPI. The environment variable ``FLT_LIB_SPEC`` overrides the pip spec, which is how the
tests point a clean environment at the local checkout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUP_TAG = "setup"          # marks the setup cell
SOLUTION_TAG = "solution"    # marks code cells that belong to an exercise's solution
SETUP_TAGS = [SETUP_TAG, "hide-input"]  # hide-input: the website collapses the cell

SETUP_TEMPLATE = '''\
# Setup: the same cell opens every notebook (`make stamp` writes it).
import importlib.util, os, subprocess, sys
if importlib.util.find_spec("flt_lib") is None:  # on Colab: install the pinned version
    url = "git+{repo_url}@v{version}"
    spec = os.environ.get("FLT_LIB_SPEC", f"flt_lib @ {{url}}")
    if subprocess.run([sys.executable, "-m", "pip", "install", "-q", spec]).returncode:
        raise SystemExit(
            f"pip could not install {{spec!r}} (its message is above).\\n"
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
    """Return ``_config.yml`` as a dict (needs PyYAML, which the book's environment has)."""
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
    """The setup cell every notebook must carry, from ``_config.yml`` and ``__version__``."""
    import flt_lib

    return setup_source(read_config(root)["repository"]["url"], flt_lib.__version__)


def notebooks(root: Path = ROOT) -> list[Path]:
    """All notebooks under ``chapters/``, sorted."""
    return sorted(p for p in (root / "chapters").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _dump(nb: dict, path: Path) -> None:
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def setup_cell_index(nb: dict) -> int | None:
    """Index of the first code cell, which must be the setup cell; None if there is none."""
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "code":
            return i
    return None


def _fill_ids(nb: dict) -> bool:
    """Give every cell without an ``id`` (nbformat >= 4.5) a unique one; return True if any."""
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
        # No setup cell yet: insert one after the leading markdown cells (title and goals).
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
    """Remove outputs and execution counts from ``path``; return True if the file changed."""
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


def student_copy(nb: dict) -> dict:
    """A copy of a notebook with the exercises' solutions removed.

    Drops code cells tagged ``solution`` and, in markdown, everything between a
    ``solution-start`` and its ``solution-end`` directive.
    """
    out = dict(nb, cells=[])
    inside = False
    for cell in nb["cells"]:
        text = _source(cell)
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "markdown" and "{solution-start}" in text:
            inside = True
            head = text.split(":::{solution-start}")[0].split("```{solution-start}")[0]
            if head.strip():
                out["cells"].append(dict(cell, source=head))
            if "{solution-end}" in text:
                inside = False
            continue
        if inside:
            if cell["cell_type"] == "markdown" and "{solution-end}" in text:
                inside = False
            continue
        if SOLUTION_TAG in tags:
            continue
        out["cells"].append(cell)
    return out


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"stamp", "check", "strip", "student"}:
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
            print("usage: python -m flt_lib._notebook student OUT_DIR")
            return 2
        out_dir = Path(argv[1])
        for p in paths:
            target = out_dir / p.relative_to(ROOT / "chapters")
            target.parent.mkdir(parents=True, exist_ok=True)
            _dump(student_copy(_load(p)), target)
            print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
