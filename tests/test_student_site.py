"""The student edition builds as its own website, strictly, without executing a notebook.

`make student` builds it from the full build's execution cache (outputs shown); here, inside
`make test`, it is built with execution off and no outputs, so no notebook runs twice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, toc_files
from flt_lib import _notebook as nbt

JB = Path(sys.executable).parent / "jupyter-book"


@pytest.mark.slow
def test_student_site_builds_strictly_without_solutions(tmp_path):
    book = tmp_path / "book"
    n = nbt.student_book(book)  # no executed_dir: no outputs, nothing executed
    assert n == len(nbt.notebooks(ROOT))
    config = (book / "_config.yml").read_text(encoding="utf-8")
    assert "execute_notebooks: 'off'" in config and "(student edition)" in config
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [str(JB), "build", "-W", "-n", "--keep-going", "--path-output", str(tmp_path / "site"),
         str(book)],
        capture_output=True, text=True, env=env, timeout=900,
    )
    log = proc.stdout + proc.stderr
    warnings = [line for line in log.splitlines() if re.search(r"WARNING: |ERROR: ", line)]
    assert proc.returncode == 0 and not warnings, "\n".join(warnings[:30]) + log[-2000:]
    assert "Executing notebook" not in log, "the student site build executed a notebook"
    html = tmp_path / "site" / "_build" / "html"
    for page in toc_files():
        if not (ROOT / f"{page}.ipynb").exists():
            continue
        text = (html / f"{page}.html").read_text(encoding="utf-8")
        assert 'class="solution' not in text, f"{page}: a solution is on the student site"
        labels = re.findall(r":label:\s*(ex-[\w-]+)", json.dumps(json.loads(
            (ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))))
        missing = [label for label in labels if f'id="{label}"' not in text]
        assert not missing, f"{page}: exercises missing from the student site: {missing}"
        # The notebook a student downloads from the page is the student copy.
        source = json.loads((html / "_sources" / f"{page}.ipynb").read_text(encoding="utf-8"))
        assert not any(
            "solution" in c.get("metadata", {}).get("tags", []) for c in source["cells"]
        ), f"{page}: the downloadable notebook still has solution cells"
        assert nbt.setup_cell_index(source) is not None, f"{page}: no setup cell to download"
