"""The student edition builds as its own website, strictly, without executing a notebook.

Like `make student`, it takes the outputs from the execution cache, which nbval filled in
stage 1 of `make test` (marker `book`): the student notebooks are never executed, so no
notebook runs twice. Outputs are needed: a figure's number and label live on its output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, toc_files
from book import notebook as nbt

JB = Path(sys.executable).parent / "jupyter-book"


IN_MAKE_TEST = bool(os.environ.get("FLT_RUN_ID"))


@pytest.mark.book
@pytest.mark.slow
def test_student_site_builds_strictly_without_solutions(tmp_path):
    from book import build as _build

    cache = _build.open_cache(_build.CACHE_DIR)
    missing = [p.relative_to(ROOT) for p in nbt.notebooks(ROOT)
               if _build.cached_record(cache, nbformat.read(p, as_version=4)) is None]
    if missing and not IN_MAKE_TEST:
        pytest.skip(f"the execution cache lacks {len(missing)} notebooks: run `make book` first")
    assert not missing, f"nbval left notebooks out of the execution cache: {missing}"
    book = tmp_path / "book"
    n = nbt.student_book(book, executed_dir=_build.CACHE_DIR)  # outputs, nothing executed
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
    # issue 20: the home page promises no Colab button and no collapsed solutions, and the
    # instructors' course guide is not part of the student edition
    home = re.sub(r"<[^>]+>", " ", (html / "chapters" / "intro.html").read_text(encoding="utf-8"))
    for promise in ("rocket", "Colab button", "course guide", "Course guide"):
        assert promise not in home, f"the student home page mentions {promise!r}"
    assert not re.search(r"collapsed[^.]*solution|solution[^.]*collapsed", home, re.I)
    assert not (html / "chapters" / "course_guide.html").exists()
    assert not list(html.rglob("*.html")) or not any(
        "course_guide.html" in p.read_text(encoding="utf-8") for p in html.rglob("*.html"))
    for page in toc_files():
        if page == "chapters/course_guide":
            continue
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
