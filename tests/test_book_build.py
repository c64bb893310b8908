"""The strict build from a clean state: `jupyter-book build --all -W -n --keep-going`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, toc_files

JB = Path(sys.executable).parent / "jupyter-book"


@pytest.mark.slow
def test_strict_build_has_no_warnings(tmp_path):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("FLT_DEVICE", None)  # the website is built on the CPU
    proc = subprocess.run(
        [str(JB), "build", "--all", "-W", "-n", "--keep-going", "--path-output", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1500,
    )
    log = proc.stdout + proc.stderr
    (tmp_path / "build.log").write_text(log)
    warnings = [line for line in log.splitlines() if re.search(r"WARNING: |ERROR: |CRITICAL: ", line)]
    assert proc.returncode == 0 and not warnings, (
        f"strict build failed (exit {proc.returncode}):\n" + "\n".join(warnings[:40]) + "\n" + log[-3000:]
    )
    html = tmp_path / "_build" / "html"
    for page in toc_files():
        out = html / f"{page}.html"
        assert out.exists(), f"no HTML for {page}"
        text = out.read_text(encoding="utf-8")
        assert "Traceback (most recent call last)" not in text, f"{page}: a cell raised"
    # The execution-times page lists every executed notebook.
    times = (html / "chapters" / "execution_times.html").read_text(encoding="utf-8")
    for page in toc_files():
        if (ROOT / f"{page}.ipynb").exists():
            assert page in times, f"{page} missing from the execution-times table"
