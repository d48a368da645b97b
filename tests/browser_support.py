"""The browser tests' Streamlit server and chromium (tests/conftest.py makes them the session's fixtures; the test of
a fresh server's first request starts its own with :func:`streamlit_server`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
HEALTHY_WITHIN = 180.0
"""Seconds a server may take to answer its health check: a bound for a loaded machine, not a time tests rely on."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server() -> Iterator[str]:
    """A fresh `streamlit run app.py` on a free port; yields its URL. Its output goes to a temporary file (a pipe
    nobody reads would stop a long-lived server once full), shown when it exits early."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + HEALTHY_WITHIN
        try:
            while time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    time.sleep(0.5)
                if proc.poll() is not None:
                    log.seek(0)
                    raise RuntimeError("streamlit exited early:\n" + log.read())
            else:
                raise RuntimeError(f"streamlit did not become healthy within {HEALTHY_WITHIN:g} s")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """Headless Debian chromium through Playwright; fails the test when chromium is missing."""
    import pytest

    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian's chromium is missing: run `make test`, which installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()
