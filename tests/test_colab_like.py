"""A notebook alone, in a fresh environment, must install flt_lib by itself and run to the end.

This mimics pressing "Open in Colab": the notebook is copied into an empty directory outside
the repository, a new virtual environment gets only numpy, torch, matplotlib and ipykernel, and
the notebook's own setup cell installs flt_lib. FLT_LIB_SPEC points that install at this
checkout instead of the pinned release tag (which a test cannot fetch before it is published).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT, toc_notebooks


@pytest.mark.slow
def test_first_notebook_runs_in_a_fresh_environment(tmp_path, monkeypatch):
    notebook = toc_notebooks()[0]
    work = tmp_path / "colab"
    work.mkdir()
    shutil.copy(notebook, work / notebook.name)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(pip + ["torch==2.13.0", "numpy", "matplotlib", "ipykernel"], check=True, timeout=900)
    before = subprocess.run([py, "-c", "import importlib.util as u; print(u.find_spec('flt_lib'))"],
                            capture_output=True, text=True, cwd=work)
    assert before.stdout.strip() == "None", "the fresh environment must not see flt_lib yet"
    subprocess.run([py, "-m", "ipykernel", "install", "--prefix", str(venv), "--name", "colab-like"],
                   check=True, capture_output=True)

    monkeypatch.setenv("FLT_LIB_SPEC", str(ROOT))
    monkeypatch.setenv("JUPYTER_PATH", str(venv / "share" / "jupyter"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("FLT_DEVICE", raising=False)
    nb = nbformat.read(work / notebook.name, as_version=4)
    NotebookClient(nb, kernel_name="colab-like", timeout=600,
                   resources={"metadata": {"path": str(work)}}).execute()

    first_out = "".join(o.get("text", "") for o in nb.cells[[c.cell_type for c in nb.cells].index("code")].outputs)
    assert "flt_lib" in first_out and "on cpu" in first_out, first_out
    where = subprocess.run([py, "-c", "import flt_lib; print(flt_lib.__file__)"],
                           capture_output=True, text=True, cwd=work, check=True).stdout
    assert str(venv) in where, f"flt_lib was not installed into the fresh environment: {where}"
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, json.dumps(errors)[:2000]
