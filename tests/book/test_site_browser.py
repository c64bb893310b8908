"""The website in a real browser (`make browser-test`; not part of `make test`).

Loads every page of the built site (``_build/html``, or ``FLT_SITE``) in Debian's Chromium
through Playwright, at 1280 px and at 390 px (a phone), and asserts what a reader needs:

- no request leaves the site (MathJax and fonts are served by the book itself), and no
  request of the site fails (a missing favicon would);
- no raw TeX outside code, and no MathJax error;
- the sidebar opens (at 390 px it starts hidden; at 1280 px it closes and opens again);
- no display equation or code block is wider than its box without a scroll cue, no page
  scrolls sideways, and code lines of at most 88 characters fit the column at 1280 px;
- every image has an alt text that says something (not a file path);
- no console error (pydata-sphinx-theme's "Got invalid theme mode" on a first visit was one),
  and the root page, which only redirects, asks for no missing favicon;
- at 390 px every figure is a link to its full-size PNG (a tap opens it), which is at least
  twice as wide as the figure is shown;
- search ranks a page whose title holds the query first, and its snippets are text, not
  the header's buttons or the page's contents list.

Screenshots of a few named pages go to ``_build/screenshots/``. Needs ``/usr/bin/chromium``
(``apt-get install -y chromium``) and the pinned ``playwright`` that `make browser-test`
installs into ``.venv``. Run alone: ``FLT_BROWSER_TEST=1 .venv/bin/python -m pytest
tests/test_site_browser.py``.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from pathlib import Path

import pytest

from conftest import ROOT

SITE = Path(os.environ.get("FLT_SITE", ROOT / "_build" / "html")).resolve()
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
WIDTHS = (1280, 390)
MAX_CODE_CHARS = 88

pytestmark = pytest.mark.skipif(
    not os.environ.get("FLT_BROWSER_TEST"),
    reason="browser test: run `make browser-test` (needs Chromium; see README)",
)


def _pages() -> list[str]:
    if not SITE.is_dir():
        return []
    skip = {"_static", "_sources", "_images", "mathjax"}
    return sorted(
        str(p.relative_to(SITE))
        for p in SITE.rglob("*.html")
        if not skip & set(p.relative_to(SITE).parts)
        # index.html only redirects to the first page (a meta refresh), which is tested
        and 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8", errors="replace")[:2000]
    )


PAGES = _pages()
# Named screenshots: (file stem, page, width, what to scroll to or None, open the sidebar?)
SCREENSHOTS = [
    ("home-1280", "chapters/intro.html", 1280, None, False),
    ("home-390", "chapters/intro.html", 390, None, False),
    ("sidebar-open-390", "chapters/intro.html", 390, None, True),
    ("perceptron-figure-1280", "chapters/01_connectionism/02_perceptron.html", 1280,
     "div.cell_output img", False),
    ("backprop-wide-equation-390", "chapters/03_gradient_learning/01_backprop.html", 390,
     "#equation-eq-bp-mlp", False),
    ("backprop-theorem-390", "chapters/03_gradient_learning/01_backprop.html", 390,
     "div.proof", False),
    ("token-selection-theorem-1280", "chapters/07_feature_learning/06_token_selection.html",
     1280, "div.proof", False),
    ("execution-times-1280", "chapters/execution_times.html", 1280, "table", False),
    ("bibliography-1280", "chapters/bibliography.html", 1280, None, False),
    ("proof-index-1280", "chapters/proof_index.html", 1280, "table", False),
    # A two-panel figure on a phone (Figure 7.16: four runs, each with its own dash).
    ("token-selection-figure-390", "chapters/07_feature_learning/06_token_selection.html",
     390, "#fig-ts-training", False),
]

# Text that MathJax should have typeset: \( \[ $...$ with TeX inside, or a TeX command.
RAW_TEX = re.compile(
    r"\\\(|\\\[|\$\$|\$[^$\n]*[\\^_{}][^$\n]*\$"
    r"|\\(?:frac|mathbb|mathcal|mathrm|operatorname|begin|end|sum|int|sqrt|left|right|cdot"
    r"|alpha|beta|gamma|delta|sigma|theta|lambda|mu|top|le|ge|infty|text)\b"
)

STATE_JS = r"""
() => {
  if (window.fltMarkOverflow) window.fltMarkOverflow();
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight, mjx-assistive-mml';
  const texts = [];
  const main = document.querySelector('main') || document.body;
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    const st = getComputedStyle(el);
    if (st.display === 'none' || st.visibility === 'hidden') continue;
    if (n.textContent.trim()) texts.push(n.textContent);
  }
  const clippedEquations = [];
  for (const box of document.querySelectorAll('div.math')) {
    const mjx = box.querySelector('mjx-container');
    if (!mjx || !box.offsetParent) continue;
    const wide = mjx.scrollWidth > mjx.clientWidth + 1;
    const overBox = mjx.getBoundingClientRect().right > box.getBoundingClientRect().right + 1;
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(mjx).overflowX);
    const cue = mjx.classList.contains('flt-scroll-cue');
    if (overBox || (wide && !(scrolls && cue))) clippedEquations.push(box.id || mjx.textContent.slice(0, 40));
  }
  const uncuedCode = [], longCode = [], tightCode = [];
  for (const pre of document.querySelectorAll('main pre')) {
    if (!pre.offsetParent) continue;
    const wide = pre.scrollWidth > pre.clientWidth + 1;
    const longest = Math.max(...pre.textContent.split('\n').map(l => l.length));
    const where = (pre.closest('.cell') || pre).id || pre.textContent.slice(0, 50);
    if (wide && !pre.classList.contains('flt-scroll-cue')) uncuedCode.push(where);
    if (longest > 88) longCode.push(`${longest} chars: ` + pre.textContent.split('\n').find(l => l.length === longest).slice(0, 60));
    else if (wide) tightCode.push(`${longest} chars overflow: ${where}`);
  }
  const badAlt = [];
  for (const img of document.images) {
    const alt = (img.getAttribute('alt') || '').trim();
    const src = img.getAttribute('src') || '';
    if (!alt || /\.(png|jpe?g|svg|gif|webp)$/i.test(alt) || /^\S*[\/\\]\S*$/.test(alt) || src.endsWith(alt))
      badAlt.push(src.split('/').pop() + ' alt=' + JSON.stringify(alt));
  }
  return {
    text: texts.join('\n'),
    mathErrors: document.querySelectorAll('mjx-merror, [data-mjx-error], .MathJax_Error').length,
    clippedEquations, uncuedCode, longCode, tightCode, badAlt,
    pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth,
  };
}
"""

SIDEBAR_JS = r"""
() => {
  const s = document.querySelector('.bd-sidebar-primary');
  if (!s) return null;
  const r = s.getBoundingClientRect(), st = getComputedStyle(s);
  const link = s.querySelector('nav a, .bd-links a');
  return {visible: st.visibility !== 'hidden' && st.display !== 'none' && r.right > 50 && r.left >= -1,
          links: s.querySelectorAll('a.reference').length, left: r.left, width: r.width,
          linkVisible: !!link && link.getBoundingClientRect().right > 0};
}
"""


_STATES: dict[tuple[str, int], dict] = {}  # page states measured by test_page, reused


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site in {SITE}: run `make book` first (or set FLT_SITE)")
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(SITE))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: `apt-get install -y chromium` (see README)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _open(browser, server, page_path: str, width: int):
    """A loaded page, MathJax finished, with the requests that left the site and failed."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    outside, failed, errors = [], [], []

    def route(r):
        url = r.request.url
        if url.startswith(server) or url.startswith(("data:", "blob:", "about:")):
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    page.route("**/*", route)
    page.on("response", lambda resp: resp.status >= 400 and failed.append(f"{resp.status} {resp.url}"))
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append("console: " + msg.text))
    page.goto(server + page_path, wait_until="load")
    page.evaluate(
        "async () => { if (window.MathJax && MathJax.startup && MathJax.startup.promise)"
        " await MathJax.startup.promise; await document.fonts.ready; }"
    )
    page.wait_for_timeout(200)
    return context, page, outside, failed, errors


def _toggle(page):
    page.locator("button.primary-toggle:visible, label.primary-toggle:visible").first.click()
    page.wait_for_timeout(500)
    return page.evaluate(SIDEBAR_JS)


def test_site_has_pages():
    assert len(PAGES) > 20, f"only {len(PAGES)} pages found in {SITE}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page_path", PAGES)
def test_page(browser, server, page_path, width):
    context, page, outside, failed, errors = _open(browser, server, page_path, width)
    try:
        state = _STATES[(page_path, width)] = page.evaluate(STATE_JS)
        problems = []
        if outside:
            problems.append(f"requests left the site: {outside[:5]}")
        if failed:
            problems.append(f"failed requests: {failed[:5]}")
        if errors:
            problems.append(f"JavaScript errors: {errors[:3]}")
        raw = sorted({m.group(0) for m in RAW_TEX.finditer(state["text"])})
        if raw:
            problems.append(f"raw TeX outside code: {raw[:8]}")
        if state["mathErrors"]:
            problems.append(f"{state['mathErrors']} MathJax errors")
        if state["clippedEquations"]:
            problems.append(f"equations clipped without a scroll cue: {state['clippedEquations'][:5]}")
        if state["uncuedCode"]:
            problems.append(f"code blocks scroll without a cue: {state['uncuedCode'][:5]}")
        if width == 1280 and state["tightCode"]:
            problems.append(f"lines of <= {MAX_CODE_CHARS} chars do not fit: {state['tightCode'][:3]}")
        if state["pageWidth"] > state["viewport"]:
            problems.append(f"the page scrolls sideways: {state['pageWidth']} > {state['viewport']} px")
        if state["badAlt"]:
            problems.append(f"images without a real alt text: {state['badAlt'][:5]}")
        if page.locator("button.primary-toggle:visible, label.primary-toggle:visible").count():
            before = page.evaluate(SIDEBAR_JS)
            if width < 960:
                after = _toggle(page)
                if before["visible"] or not after["visible"] or not after["linkVisible"]:
                    problems.append(f"the sidebar does not open: before {before}, after {after}")
            else:
                closed, reopened = _toggle(page), _toggle(page)
                if not before["visible"] or closed["visible"] or not reopened["visible"]:
                    problems.append(f"the sidebar toggle fails: {before} -> {closed} -> {reopened}")
        elif page_path.startswith("chapters/"):
            problems.append("no sidebar button")
        assert not problems, f"{page_path} at {width} px:\n  " + "\n  ".join(problems)
    finally:
        context.close()


@pytest.mark.parametrize("page_path", [p for p in PAGES if p.startswith("chapters/")])
def test_code_lines_fit(browser, server, page_path):
    """Code and printed lines on the page are at most 88 characters (they fit at 1280 px).

    Content, not layout: it fails for a notebook whose code or output is too wide.
    """
    state = _STATES.get((page_path, 1280))
    if state is None:
        context, page, *_ = _open(browser, server, page_path, 1280)
        state = page.evaluate(STATE_JS)
        context.close()
    assert not state["longCode"], (
        f"{page_path}: lines longer than {MAX_CODE_CHARS} characters:\n  "
        + "\n  ".join(state["longCode"][:10])
    )


@pytest.mark.parametrize("name,page_path,width,target,sidebar", SCREENSHOTS, ids=[s[0] for s in SCREENSHOTS])
def test_screenshots(browser, server, name, page_path, width, target, sidebar):
    if not (SITE / page_path).exists():
        pytest.skip(f"{page_path} not in this build")
    context, page, *_ = _open(browser, server, page_path, width)
    try:
        if target and page.locator(target).count():
            page.locator(target).first.scroll_into_view_if_needed()
            page.evaluate("() => window.scrollBy(0, -120)")
        if sidebar:
            assert _toggle(page)["visible"], "the sidebar did not open"
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"))
    finally:
        context.close()


def test_root_page_asks_for_no_missing_file(browser, server):
    """The root index.html only redirects; it names the favicon, so the browser does not
    ask for /favicon.ico, which the site lacks."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    failed, errors = [], []
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    try:
        page.goto(server, wait_until="load")
        page.wait_for_url("**/chapters/intro.html", timeout=10000)
        page.wait_for_load_state("load")
        page.wait_for_timeout(500)
        assert not failed, f"failed requests from the root page: {failed}"
        assert not errors, f"console errors: {errors}"
    finally:
        context.close()


FIGURES_JS = r"""
() => [...document.querySelectorAll('.bd-article div.cell_output img')].map(img => {
  const a = img.closest('a');
  const box = img.getBoundingClientRect();
  return {src: img.getAttribute('src'), shown: box.width, shownHeight: box.height,
          natural: img.naturalWidth, naturalHeight: img.naturalHeight,
          href: a ? a.getAttribute('href') : null};
})
"""


@pytest.mark.parametrize("page_path", [
    "chapters/07_feature_learning/06_token_selection.html",
    "chapters/01_connectionism/02_perceptron.html",
    "chapters/05_transformers/01_attention.html",
])
def test_figures_open_at_full_size_on_a_phone(browser, server, page_path):
    """At 390 px a figure is shown about 358 px wide (legends about 5 px tall); a tap on it
    opens its PNG, at least twice as many pixels wide."""
    if not (SITE / page_path).exists():
        pytest.skip(f"{page_path} not in this build")
    context, page, *_ = _open(browser, server, page_path, 390)
    try:
        figures = page.evaluate(FIGURES_JS)
        assert figures, f"no figure on {page_path}"
        # Sphinx links a figure with a given width to its file; flt.js links the rest.
        problems = [f for f in figures if f["href"] != f["src"]]
        assert not problems, f"figures without a link to their image: {problems[:3]}"
        small = [f for f in figures if f["natural"] < 2 * f["shown"] - 1]
        assert not small, f"full size not twice the shown width: {small[:3]}"
        # shrunk to the page, not squeezed: the shown figure keeps the PNG's aspect ratio
        squeezed = [f for f in figures if f["shown"] and abs(
            f["shownHeight"] / f["shown"] - f["naturalHeight"] / f["natural"]) > 0.02 * (
            f["naturalHeight"] / f["natural"])]
        assert not squeezed, f"figures out of proportion at 390 px: {squeezed[:3]}"
        href = figures[0]["href"]
        status = page.evaluate("async (u) => (await fetch(u)).status", href)
        assert status == 200, f"{href}: HTTP {status}"
    finally:
        context.close()


SEARCH_JS = r"""
async () => {
  for (let i = 0; i < 100; i++) {
    const items = document.querySelectorAll('#search-results ul.search > li');
    const done = document.querySelector('#search-results .search-summary');
    if (items.length && done && done.innerText.trim()) break;
    await new Promise(r => setTimeout(r, 100));
  }
  return [...document.querySelectorAll('#search-results ul.search > li')].map(li => ({
    title: (li.querySelector('a') || li).textContent.trim(),
    snippet: (li.querySelector('p.context') || {textContent: ''}).textContent,
  }));
}
"""


def test_search_ranks_a_matching_title_first_and_shows_text(browser, server):
    context, page, *_ = _open(browser, server, "search.html?q=token+selection", 1280)
    try:
        results = page.evaluate(SEARCH_JS)
        assert results, "no search results for 'token selection'"
        assert "token selection" in results[0]["title"].lower(), (
            f"first result for 'token selection': {[r['title'] for r in results[:5]]}")
        for r in results[:10]:
            snippet = r["snippet"]
            # The download menu's labels, alone: ".ipynb", ".md", ".pdf"
            assert not re.search(r"(^|\s)\.(ipynb|md|pdf)(\s|$)", snippet), (
                f"{r['title']}: snippet shows the header's buttons: {snippet[:120]!r}")
            assert not re.search(r"\bContents\b", snippet[:80]), (
                f"{r['title']}: snippet starts with the contents list: {snippet[:120]!r}")
    finally:
        context.close()
