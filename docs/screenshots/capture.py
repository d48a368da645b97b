"""Take the README screenshots from the running app: `.venv/bin/python docs/screenshots/capture.py`.

Starts the dashboard on a free port, opens every page listed in pages/shared/catalog.py: PAGES in headless Debian
chromium (Playwright) at 1280 px, and saves one full-page PNG per page into docs/screenshots/. With
``--narrow`` it also saves 420 px wide versions (``*-narrow.png``) and prints any horizontal overflow; with
``--extras`` more states (sites-problems.png, noise-design-infeasible.png, home-change.png after the Home page's
"CAPE stops helping" button, epsilon-broken.png after "A promise breaks"); with ``--results`` the
capePCA, capeAGN and Topic models pages after pressing their Run button (``*-results.png``), capePCA and capeAGN after
"Show where CAPE stops helping" (``*-breakdown.png``), and Privacy-utility after the same button
(``privacy-utility-stops.png``; the page opens on a stored figure, nothing to run). ``--only`` limits every part to the
pages named.
``--planner`` the Planner after Plan and Check (``planner-results.png``).
The README's pictures: ``capture.py --extras --results --planner``.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pages.shared.catalog import PAGES  # noqa: E402

OUT = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start() -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(180):
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("streamlit did not start")


def _wait(page) -> None:
    page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    page.wait_for_timeout(800)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)
    page.wait_for_timeout(1500)


def _slug(path: str) -> str:
    return Path(path).stem.replace("_", "-")


def _extras(browser, url: str) -> None:
    """Two states worth a picture: the Sites table with problems, the infeasible closed form on equal sites."""
    sys.path.insert(0, str(ROOT))
    from dpcore.scenario import preset_scenario, scenario_to_query

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url, wait_until="domcontentloaded")
    _wait(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Sites and budgets", exact=True).click()
    _wait(page)
    grid = page.locator('[data-testid="stDataFrame"]').first
    box = grid.bounding_box()
    x, y = box["x"] + 225, box["y"] + 35 + 35 + 17  # eps of site B
    editor = page.locator(".gdg-input").first  # the cell editor drawn over the canvas grid
    for _attempt in range(4):  # the first click can land before the grid is ready
        page.mouse.click(x, y)
        page.wait_for_timeout(300)
        page.mouse.dblclick(x, y)
        try:
            editor.wait_for(state="visible", timeout=5_000)
        except Exception:  # playwright's TimeoutError
            continue
        editor.fill("-1")
        editor.press("Enter")
        _wait(page)
        break
    page.screenshot(path=str(OUT / "sites-problems.png"))
    print("docs/screenshots/sites-problems.png")
    page.close()

    page = browser.new_page(viewport={"width": 1280, "height": 1300})
    page.goto(f"{url}/?scenario={scenario_to_query(preset_scenario('equal'))}", wait_until="domcontentloaded")
    _wait(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Noise design", exact=True).click()
    _wait(page)
    page.get_by_text("Published closed form", exact=True).click()
    _wait(page)
    page.screenshot(path=str(OUT / "noise-design-infeasible.png"))
    print("docs/screenshots/noise-design-infeasible.png")
    page.close()

    # The lesson's one click: equal sites (CAPE wins), then one strict site (it stops helping), with the panel.
    page = browser.new_page(viewport={"width": 1280, "height": 1250})
    page.goto(url, wait_until="domcontentloaded")
    _wait(page)
    for label in ("CAPE wins: equal sites", "CAPE stops helping: a strict site"):
        page.get_by_role("button", name=label).click()
        _wait(page)
    page.mouse.move(5, 5)
    page.screenshot(path=str(OUT / "home-change.png"))
    print("docs/screenshots/home-change.png")
    # A promise that breaks: the default sites with the exact calibration, seen on What ε means.
    page.get_by_role("button", name="A promise breaks: exact calibration").click()
    _wait(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="What ε means", exact=True).click()
    _wait(page)
    page.get_by_text("The shared scenario", exact=True).click()  # the page opens on its class demonstration
    _wait(page)
    _shoot_full(page, OUT / "epsilon-broken.png")
    page.close()


def _shoot_full(page, target: Path, width: int = 1280) -> None:
    """Grow the window to the main container's height (the app scrolls inside it), then a full-page PNG."""
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " return m ? m.scrollHeight : document.body.scrollHeight; }")
    page.set_viewport_size({"width": width, "height": min(max(int(height) + 40, 900), 12_000)})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(target), full_page=True)
    page.set_viewport_size({"width": width, "height": 900})
    print(target.relative_to(ROOT))


def _privacy_utility_stops(browser, url: str) -> None:
    """Privacy-utility opens on a stored full-size figure (privacy-utility.png); after "Show where CAPE stops
    helping" it shows Fig. 2(b), where the curves meet at small eps, with the sentence saying why."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{url}/privacy_utility", wait_until="domcontentloaded")
    _wait(page)
    page.get_by_role("button", name="Show where CAPE stops helping", exact=True).click()
    _wait(page)
    page.get_by_text("The curves meet at").first.wait_for(timeout=60_000)
    page.mouse.move(5, 5)
    page.wait_for_selector('.js-plotly-plot', timeout=120_000)
    _shoot_full(page, OUT / "privacy-utility-stops.png")
    page.close()


def _results(browser, url: str, only: list[str] | None = None) -> None:
    """The pages that compute something, after their Run button: what a user sees after a run; then capePCA and
    capeAGN after their one click to where CAPE stops helping. Privacy-utility shows a stored figure without
    running: its second picture is where CAPE stops helping."""
    if not only or "privacy_utility" in only:
        _privacy_utility_stops(browser, url)
    for stem, button in (("capepca", "Run"), ("capeagn", "Run"), ("topic_models", "Run")):
        if only and stem not in only:
            continue
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/{stem}", wait_until="domcontentloaded")
        _wait(page)
        page.get_by_role("button", name=button, exact=True).click()
        page.wait_for_timeout(1500)
        # a sweep reruns itself run by run with a Stop button; wait until that button is gone
        page.mouse.move(5, 5)  # no tooltip of the Run button in the picture
        no_stop = "() => ![...document.querySelectorAll('button')].some(b => b.innerText.includes('Stop'))"
        page.wait_for_function(no_stop, timeout=300_000)
        _wait(page)
        page.wait_for_selector('.js-plotly-plot', timeout=120_000)
        _shoot_full(page, OUT / f"{_slug(stem)}-results.png")
        if stem in ("capepca", "capeagn"):
            page.get_by_role("button", name="Show where CAPE stops helping").click()
            page.wait_for_timeout(1500)
            page.mouse.move(5, 5)
            page.get_by_text("Where CAPE stops helping", exact=True).wait_for(timeout=300_000)
            _wait(page)
            _shoot_full(page, OUT / f"{_slug(stem)}-breakdown.png")
        page.close()


def _planner(browser, url: str) -> None:
    """The Planner after Plan and Check on its opening settings (synthetic data, solve N_s, 80 %): the README's
    stakeholder step (planner-results.png)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{url}/planner", wait_until="domcontentloaded")
    _wait(page)
    page.get_by_role("button", name="Plan").click()
    _wait(page)
    page.get_by_role("button", name="Check: run capePCA").click()
    _wait(page)
    page.mouse.move(5, 5)
    _shoot_full(page, OUT / "planner-results.png")
    page.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--narrow", action="store_true", help="also take 420 px wide screenshots")
    parser.add_argument("--only", nargs="*", help="page file stems to capture (default: all)")
    parser.add_argument("--extras", action="store_true",
                        help="also capture the states worth a picture: Sites with problems, the infeasible closed "
                        "form, the Home page's one-click lessons, a broken promise on What ε means")
    parser.add_argument("--results", action="store_true",
                        help="also capture capePCA, capeAGN, Privacy-utility and Topic models after pressing Run")
    parser.add_argument("--planner", action="store_true",
                        help="also capture the Planner after Plan and Check (planner-results.png)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    proc, url = _start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            widths = [(1280, "")] + ([(420, "-narrow")] if args.narrow else [])
            for width, suffix in widths:
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(url, wait_until="domcontentloaded")
                _wait(page)
                for info in PAGES:
                    stem = Path(info.path).stem
                    if args.only and stem not in args.only:
                        continue
                    page.goto(url if stem == "home" else f"{url}/{stem}", wait_until="domcontentloaded")
                    _wait(page)
                    overflow = page.evaluate(
                        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
                    # the app scrolls inside its main container: grow the window to its height, then shoot
                    height = page.evaluate(
                        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                        " return m ? m.scrollHeight : document.body.scrollHeight; }")
                    page.set_viewport_size({"width": width, "height": min(max(int(height) + 40, 900), 12_000)})
                    page.wait_for_timeout(1500)
                    target = OUT / f"{_slug(info.path)}{suffix}.png"
                    page.screenshot(path=str(target), full_page=True)
                    page.set_viewport_size({"width": width, "height": 900})
                    print(f"{target.relative_to(ROOT)}  width {width}px  horizontal overflow {overflow}px")
                page.close()
            if args.extras:
                _extras(browser, url)
            if args.results:
                _results(browser, url, args.only)
            if args.planner:
                _planner(browser, url)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
