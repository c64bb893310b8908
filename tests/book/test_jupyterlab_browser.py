"""One generated notebook in JupyterLab, in headless Chromium: it reads as the website does.

Opt-in (FLT_BROWSER_TEST=1; `make jupyterlab-test` or `make browser-test`), after
`make jupyter`: needs Debian's /usr/bin/chromium and the pinned playwright. Opens Section 4.3
from _build/jupyter, as `make lab` serves it, and asserts that no directive text is visible,
that a statement heading, an equation number and a citation link are rendered, and that every
solution is collapsed. Screenshots: _build/screenshots/jupyterlab-*.png.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import ROOT

NOTEBOOK = ROOT / "_build" / "jupyter" / "04_recurrent" / "03_lstm_gru.ipynb"
SHOTS = ROOT / "_build" / "screenshots"
RAW = (":::{", "{prf:", "{cite", "{numref", "{eq}", "{solution", "{exercise", "{glue")

pytestmark = pytest.mark.skipif(
    not os.environ.get("FLT_BROWSER_TEST"), reason="opt-in: make jupyterlab-test")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def lab(tmp_path):
    assert NOTEBOOK.exists(), "run make book && make jupyter first"
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # render every cell, not only those on screen, so that the whole page can be checked
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    news = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = _free_port(), secrets.token_hex(8)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}
    cmd = [str(ROOT / ".venv" / "bin" / "jupyter") if (ROOT / ".venv").exists()
           else sys.executable.replace("python", "jupyter"), "lab", "--no-browser",
           "--ip=127.0.0.1", f"--port={port}", f"--ServerApp.token={token}",
           "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
           f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
           f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}"]
    if os.getuid() == 0:
        cmd.append("--allow-root")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5).close()
            break
        except OSError:
            time.sleep(0.5)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("JupyterLab did not start")
    yield f"{base}/lab/tree/{NOTEBOOK.name}?token={token}"
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def test_generated_notebook_in_jupyterlab_reads_like_the_website(lab):
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(lab)
        page.wait_for_selector(".jp-Notebook .jp-MarkdownCell", timeout=60_000)
        page.wait_for_function(
            "document.querySelectorAll('.jp-RenderedMarkdown mjx-container').length > 20",
            timeout=60_000)
        page.wait_for_timeout(2000)
        notebook = page.locator(".jp-Notebook").first
        shown = notebook.inner_text()
        left = [tok for tok in RAW if tok in shown]
        assert not left, f"directive text visible in JupyterLab: {left}"
        assert page.locator("mjx-merror").count() == 0, "MathJax could not render a formula"

        # the LSTM's definition: a statement, a numbered equation and a citation in one cell
        source = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
        cell = next(c["source"] for c in source["cells"] if "(Long short-term memory)" in c["source"])
        number = re.search(r"\*\*(Definition [0-9.]+)\*\*", cell).group(1)
        tag = re.search(r"\\tag\{([0-9.]+)\}", cell).group(1)
        statement = page.locator(".jp-RenderedMarkdown strong",
                                 has_text=re.compile(rf"^{re.escape(number)}$"))
        assert statement.count() == 1, f"no heading {number!r} rendered"
        block = page.locator(".jp-MarkdownCell", has=statement)
        shown_tags = block.evaluate(
            "b => [...b.querySelectorAll('mjx-container')].map(e => e.textContent).join(' ')")
        assert f"({tag})" in shown_tags, f"the equation number ({tag}) is not rendered"
        cite = block.locator("a", has_text="1997").first
        assert "bibliography.html" in cite.get_attribute("href")

        details = page.locator(".jp-RenderedMarkdown details")
        assert details.count() >= 3
        for k in range(details.count()):
            assert details.nth(k).evaluate("e => !e.open"), "a solution is open"
            body = details.nth(k).locator("p").first
            assert not body.is_visible(), "a solution's text is visible"
        solution_code = page.locator(".jp-CodeCell", has_text="Solution")  # folded input
        assert solution_code.count() >= 1

        block.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        page.screenshot(path=str(SHOTS / "jupyterlab-statement.png"))
        solution = page.locator(".jp-MarkdownCell", has=page.locator(
            "summary", has_text="Solution to Exercise")).first
        exercise = page.locator(".jp-MarkdownCell", has=page.locator(
            "strong", has_text=re.compile(r"^Exercise "))).first
        exercise.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        assert solution.is_visible()
        page.wait_for_timeout(500)
        page.screenshot(path=str(SHOTS / "jupyterlab-solution.png"))
        browser.close()
