"""`make lab`: JupyterLab from .venv serves the chapters, and its kernel imports flt_lib.

Starts the server headless (no browser) on a free local port through the same Makefile
target README names, checks that it answers, and stops it.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 (local server)
        return r.status, r.read()


def _run_in_kernel(base: str, port: int, token: str, code: str) -> str:
    """Start a kernel through the server's REST API, run ``code`` over its websocket,
    return what it printed, and shut the kernel down."""
    import asyncio
    import uuid

    from tornado.websocket import websocket_connect

    req = urllib.request.Request(f"{base}/api/kernels?token={token}", data=b"{}", method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 (local server)
        kernel_id = json.loads(r.read())["id"]

    async def run() -> str:
        ws = await websocket_connect(
            f"ws://127.0.0.1:{port}/api/kernels/{kernel_id}/channels?token={token}")
        msg_id, out = uuid.uuid4().hex, []
        ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "test",
                       "session": uuid.uuid4().hex, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": False,
                        "user_expressions": {}, "allow_stdin": False},
        }))
        while True:
            msg = json.loads(await asyncio.wait_for(ws.read_message(), 60))
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                out.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                ws.close()
                return "".join(out)

    try:
        return asyncio.run(run())
    finally:
        req = urllib.request.Request(f"{base}/api/kernels/{kernel_id}?token={token}",
                                     method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()  # noqa: S310 (local server)


@pytest.mark.slow
def test_make_lab_serves_the_chapters_with_a_kernel_that_finds_flt_lib(tmp_path):
    port, token = _free_port(), secrets.token_hex(8)
    args = (f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.token={token} "
            "--ServerApp.port_retries=0")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}  # no user settings leak in
    venv = Path(sys.executable).parent.parent
    proc = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_ARGS={args}", f"VENV={venv}"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline, status = time.monotonic() + 90, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status, body = _get(f"{base}/api/status?token={token}")
                break
            except OSError:
                time.sleep(0.5)
        if status != 200:
            out = proc.stdout.read().decode(errors="replace") if proc.poll() is not None else ""
            pytest.fail(f"JupyterLab did not answer on port {port} (exit {proc.poll()}):\n{out[-2000:]}")
        code, page = _get(f"{base}/lab?token={token}")
        assert code == 200 and b"JupyterLab" in page
        _, listing = _get(f"{base}/api/contents?token={token}")
        names = {item["name"] for item in json.loads(listing)["content"]}
        assert "01_connectionism" in names, f"the file browser does not show the chapters: {names}"
        printed = _run_in_kernel(base, port, token, "import flt_lib; print(flt_lib.__file__)")
        assert str(ROOT / "flt_lib") in printed, f"the kernel imports another flt_lib: {printed!r}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    with pytest.raises(OSError):
        _get(f"{base}/api/status?token={token}")
