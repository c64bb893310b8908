"""The strict build, from the execution cache that nbval filled: no warnings, nothing run twice.

These tests carry the marker `book`: `make test` runs them after nbval has executed every
notebook (stage 1), so the build must find every notebook in the cache and execute none.
"""

from __future__ import annotations

import os
import re
from collections import Counter

import pytest

from conftest import ROOT, toc_files, toc_notebooks
from book import build as _build

IN_MAKE_TEST = bool(os.environ.get("FLT_RUN_ID"))


@pytest.fixture(scope="module")
def build_log() -> str:
    from filelock import FileLock

    # the lock is shared with tests/book/test_reader_notebooks.py, which reads _build/html
    with FileLock(str(ROOT / "_build" / ".html.lock")):
        proc = _build.build(fresh=True)
    return proc.stdout + proc.stderr


@pytest.mark.book
def test_strict_build_has_no_warnings(build_log):
    warnings = [line for line in build_log.splitlines() if re.search(r"WARNING: |ERROR: |CRITICAL: ", line)]
    assert "build succeeded" in build_log and not warnings, (
        "strict build failed:\n" + "\n".join(warnings[:40]) + "\n" + build_log[-3000:]
    )
    html = ROOT / "_build" / "html"
    for page in toc_files():
        out = html / f"{page}.html"
        assert out.exists(), f"no HTML for {page}"
        assert "Traceback (most recent call last)" not in out.read_text(encoding="utf-8"), f"{page}: a cell raised"
    times = (html / "chapters" / "execution_times.html").read_text(encoding="utf-8")
    for nb in toc_notebooks():
        page = nb.relative_to(ROOT).with_suffix("").as_posix()
        assert page in times, f"{page} missing from the execution-times table"


@pytest.mark.book
@pytest.mark.skipif(not IN_MAKE_TEST, reason="only meaningful after stage 1 of `make test`")
def test_build_executed_no_notebook(build_log):
    executed = re.findall(r"(\S+\.ipynb): Executing notebook", build_log)
    cached = re.findall(r"(\S+\.ipynb): Using cached notebook", build_log)
    assert not executed, f"the build executed notebooks that nbval had run: {executed}"
    assert len(cached) == len(toc_notebooks()), (
        f"{len(cached)} notebooks came from the cache, expected all {len(toc_notebooks())}"
    )


@pytest.mark.book
@pytest.mark.skipif(not IN_MAKE_TEST, reason="only meaningful after stage 1 of `make test`")
def test_each_notebook_executed_once_in_this_run(build_log):
    run = os.environ["FLT_RUN_ID"]
    rows = [r for r in _build.read_log() if r["run"] == run and r["by"] in ("nbval", "executor")]
    counts = Counter(r["notebook"] for r in rows)
    expected = {nb.relative_to(ROOT).as_posix() for nb in toc_notebooks()}
    missing = sorted(expected - set(counts))
    twice = sorted(nb for nb, k in counts.items() if k > 1)
    assert not missing, f"not executed by nbval in this run: {missing}"
    assert not twice, f"executed more than once in this run: {twice}"


# A raw cross-reference label in a code listing (``eq-rnn-lru-param``, ``(eq-...)``,
# ``{eq}`...```, ``thm-...``, ``def-...``) reads as noise where the page prints "(4.19)".
RAW_LABEL = re.compile(
    r"\{(?:eq|numref|ref|prf:ref)\}`|\(eq-[a-z0-9]|"
    r"\b(?:eq|thm|def|lem|prop|cor|alg)-[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b"
)
# Notebook code shown on the pages (cell inputs, not the library listings) still cites
# labels in comments; this many on the built site when the listings reached 0. Lower it as
# they are rewritten; never raise it.
MAX_LABELS_IN_NOTEBOOK_CODE = 38


def raw_labels(html: str) -> dict[str, list[str]]:
    """The raw labels in the code blocks (``div.highlight pre``) of one page: in the
    listings (a cell's output: ``show_source``), in notebook code (a cell's input), and
    elsewhere."""
    from bs4 import BeautifulSoup

    found: dict[str, list[str]] = {"listing": [], "notebook code": [], "other": []}
    for pre in BeautifulSoup(html, "html.parser").select("div.highlight pre"):
        if pre.find_parent("div", class_="cell_output"):
            where = "listing"
        elif pre.find_parent("div", class_="cell_input"):
            where = "notebook code"
        else:
            where = "other"
        found[where] += RAW_LABEL.findall(pre.get_text())
    return found


def test_raw_label_finder_finds_what_it_should():
    listing = (
        '<div class="cell_output docutils container"><div class="highlight-python '
        'notranslate"><div class="highlight"><pre><span class="sd">"""Eq. (eq-rnn-lru) '
        "and </span>{eq}`x` thm-distil-gradient</pre></div></div></div>"
    )
    found = raw_labels(listing + "<p>eq-outside-a-listing</p>")["listing"]
    assert "{eq}`" in found and "thm-distil-gradient" in found, found
    assert any(f.startswith("(eq-") for f in found), found
    assert "eq-outside-a-listing" not in found
    code = '<div class="cell_input"><div class="highlight"><pre>x = 1 - y  # eq-a-b</pre></div></div>'
    assert raw_labels(code) == {"listing": [], "notebook code": ["eq-a-b"], "other": []}


@pytest.mark.book
def test_no_raw_label_in_the_built_listings():
    site = ROOT / "_build" / "html"
    pages = sorted((site / "chapters").rglob("*.html")) if site.exists() else []
    if not pages:
        pytest.skip("no built site: `make book` builds _build/html")
    in_listings, in_code = {}, 0
    for page in pages:
        found = raw_labels(page.read_text(encoding="utf-8"))
        if found["listing"] or found["other"]:
            in_listings[page.relative_to(site).as_posix()] = sorted(
                set(found["listing"] + found["other"]))[:5]
        in_code += len(found["notebook code"])
    assert not in_listings, f"raw labels in the listings of {len(in_listings)} pages: {in_listings}"
    assert in_code <= MAX_LABELS_IN_NOTEBOOK_CODE, (
        f"{in_code} raw labels in notebook code on the pages (at most "
        f"{MAX_LABELS_IN_NOTEBOOK_CODE})")
