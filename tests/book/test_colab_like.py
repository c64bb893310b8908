"""Each chapter's first notebook, alone in a fresh environment, installs flt_lib and runs.

This mimics pressing "Open in Colab": each notebook is copied into an empty directory outside
the repository; one new virtual environment gets only what Colab has (numpy, torch, matplotlib,
scipy, ipykernel); the first notebook's own setup cell installs flt_lib, as on Colab.
FLT_LIB_SPEC points that install at this checkout instead of the pinned release tag (which a
test cannot fetch before it is published). One environment serves every chapter, and at the
end every module of the installed flt_lib is imported in it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT, toc_notebooks


def first_notebook_of_each_chapter():
    firsts = {}
    for nb in toc_notebooks():
        firsts.setdefault(nb.parent, nb)
    return list(firsts.values())


@pytest.mark.book
def test_first_notebook_of_every_chapter_runs_in_a_fresh_environment(tmp_path, monkeypatch):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(pip + ["torch==2.13.0", "numpy", "matplotlib", "scipy", "ipykernel"],
                   check=True, timeout=900)
    before = subprocess.run([py, "-c", "import importlib.util as u; print(u.find_spec('flt_lib'))"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert before.stdout.strip() == "None", "the fresh environment must not see flt_lib yet"
    subprocess.run([py, "-m", "ipykernel", "install", "--prefix", str(venv), "--name", "colab-like"],
                   check=True, capture_output=True)

    monkeypatch.setenv("FLT_LIB_SPEC", str(ROOT))
    monkeypatch.setenv("JUPYTER_PATH", str(venv / "share" / "jupyter"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("FLT_DEVICE", raising=False)
    firsts = first_notebook_of_each_chapter()
    assert len(firsts) >= 4, firsts
    for i, notebook in enumerate(firsts):
        work = tmp_path / f"colab-{i}"
        work.mkdir()
        shutil.copy(notebook, work / notebook.name)
        nb = nbformat.read(work / notebook.name, as_version=4)
        NotebookClient(nb, kernel_name="colab-like", timeout=600,
                       resources={"metadata": {"path": str(work)}}).execute()
        setup = nb.cells[[c.cell_type for c in nb.cells].index("code")]
        first_out = "".join(o.get("text", "") for o in setup.outputs)
        assert "flt_lib" in first_out and "on cpu" in first_out, f"{notebook.name}: {first_out}"
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
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
