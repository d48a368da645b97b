"""Real-browser smoke test: start the app, open it in headless Debian chromium, visit every page.

Fails on any exception box, traceback text or error element on any page. Skips only when chromium
is absent *and* the test is not running under CI (``make test`` installs it; CI must run it).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pages.common import PAGES

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
        if proc.poll() is not None:
            raise RuntimeError("streamlit exited early:\n" + (proc.stdout.read() if proc.stdout else ""))
    else:
        proc.kill()
        raise RuntimeError("streamlit did not become healthy within 90 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI; `make test` installs Debian's chromium")
        pytest.skip("Debian chromium not installed (run `make test`, which installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _assert_clean(page, where: str) -> None:
    for selector in ('[data-testid="stException"]', '[data-testid="stAlertContentError"]'):
        boxes = page.locator(selector)
        assert boxes.count() == 0, f"{where}: error element {selector}: {boxes.first.inner_text()[:500]}"
    body = page.locator("body").inner_text()
    for marker in ("Traceback (most recent call last)", "StreamlitAPIException", "ModuleNotFoundError"):
        assert marker not in body, f"{where}: page shows {marker!r}"


def _wait_idle(page) -> None:
    """Wait until the script run has finished (no running indicator) and the page has content."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    page.wait_for_timeout(500)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000
    )
    page.wait_for_timeout(300)


def test_every_page_renders_without_errors(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(server, wait_until="domcontentloaded")
    _wait_idle(page)
    page.get_by_role("heading", name="Private multi-site analysis with correlated noise").wait_for(timeout=60_000)
    _assert_clean(page, "home")
    nav = page.locator('[data-testid="stSidebarNav"]')
    for info in PAGES[1:]:
        nav.get_by_role("link", name=info.title, exact=True).click()
        _wait_idle(page)
        page.locator("h1").first.wait_for(timeout=60_000)
        _assert_clean(page, info.title)
    page.close()


def test_narrow_window_has_no_horizontal_scroll(server, browser):
    page = browser.new_page(viewport={"width": 420, "height": 900})
    page.goto(server, wait_until="domcontentloaded")
    _wait_idle(page)
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 1, f"home page scrolls horizontally by {overflow}px at 420px width"
    page.close()
