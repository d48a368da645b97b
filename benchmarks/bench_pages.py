"""Time to usable of every dashboard page in a real browser, once the server is warm.

Run: ``.venv/bin/python benchmarks/bench_pages.py [--repeat 3] [--pages sites noise_design ...]``
(needs the test requirements, Playwright, and Debian's chromium: ``make test`` installs both).

Starts ``streamlit run app.py`` on a free port and opens it in headless chromium at 1280 x 900. Warm-up: every
page is visited once through the sidebar and once by its address (the first-ever imports of streamlit, plotly,
scipy and the page modules happen there and are not counted). Then, ``--repeat`` times for every page:

* **click**: from the Home page, click the page's sidebar link;
* **direct**: open the page's address in a new tab (a new session, the server's caches warm).

A page counts as usable when its title is shown, the script run has finished (``stApp`` reports the script state
``notRunning``), no element is still loading its code (no ``stSkeleton``) and every plotly chart on it has drawn.
The table prints the median and the largest of the repeats, in seconds, and the machine's load average (the
numbers are wall-clock times on a shared machine). Target (issue 11): every page usable within 1 s.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.process_cpu import cpu_seconds, stat_fields  # noqa: E402
from pages.shared.catalog import PAGES  # noqa: E402

TARGET_SECONDS = 1.0
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
# The page has finished: its title is the expected one, the script run is over and every plotly chart has drawn.
USABLE_JS = """(title) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const h1 = document.querySelector('h1');
  if (!h1 || !h1.innerText.includes(title)) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;  // an element still loading its code
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return charts.every(c => c.querySelector('.main-svg'));
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(app: Path = ROOT / "app.py", *, extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """``streamlit run app`` (``extra``: more ``streamlit run`` options) on a free loopback port, one BLAS thread;
    (process, base url) once its health check answers, within 120 s."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", *extra],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(480):
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.25)
    stop_server(proc)
    raise RuntimeError(f"streamlit ({Path(app).name}) did not become healthy within 120 s")


def stop_server(proc: subprocess.Popen) -> None:
    """Ask the server to stop; kill it when it has not within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _heading(info) -> str:
    """Text the page's title (h1) contains: its navigation title; the home page's h1 is its own."""
    return "" if info is PAGES[0] else info.title


UNTIL_JS = """([check, arg, timeout, safety]) => new Promise((resolve, reject) => {
  const done = new Function('return ' + check)();
  let observer = null, timer = null, safe = null;
  const finish = (ok) => {
    if (observer === null) return;
    observer.disconnect(); observer = null; clearTimeout(timer); clearInterval(safe);
    ok ? resolve(true) : reject(new Error('not done within ' + timeout + ' ms'));
  };
  const look = () => { if (done(arg)) finish(true); };
  observer = new MutationObserver(look);
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(() => finish(false), timeout);
  safe = setInterval(look, safety);
  look();
})"""
"""Waits in the page until ``check(arg)`` holds, looking at every change of the page (a MutationObserver) and every
``safety`` ms. Playwright's ``wait_for_function(..., polling=20)`` cost chromium 0.1-0.4 CPU s per 4 s of waiting on
an idle Topic models page (0.04-0.09 s this way, measured beside a running test suite), which a click's browser CPU
then counted as the page's: a user's browser does not poll."""
SAFETY_MS = 500
"""How often :data:`UNTIL_JS` looks without a change of the page (a state that no change of the DOM shows)."""


def wait_until(page, check: str, arg: Any = None, *, timeout_ms: int = 300_000) -> None:
    """Until the JavaScript function ``check`` holds for ``arg`` in ``page`` (:data:`UNTIL_JS`); Playwright's
    TimeoutError after ``timeout_ms``, as ``wait_for_function`` raises it."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.evaluate(UNTIL_JS, [check, arg, timeout_ms, SAFETY_MS])
    except PlaywrightError as exc:
        if "not done within" in str(exc):
            raise PlaywrightTimeout(str(exc)) from exc
        raise


def _wait_usable(page, heading: str, timeout_ms: int = 300_000) -> None:
    wait_until(page, USABLE_JS, heading, timeout_ms=timeout_ms)


def _processes() -> dict[int, list[str]]:
    """Every live process's /proc stat fields (:func:`~benchmarks.process_cpu.stat_fields`), read once."""
    found = {int(entry): stat_fields(entry) for entry in os.listdir("/proc") if entry.isdigit()}
    return {pid: fields for pid, fields in found.items() if fields is not None}


def _cpu_by_pid(root: int, exclude: int | None = None) -> dict[int, float]:
    """CPU seconds (user + system) of each live process of ``root``'s tree, without the tree of ``exclude``: one
    reading of /proc gives both the tree (parent pids) and the CPU."""
    processes, tree = _processes(), {}
    for pid, fields in processes.items():
        tree.setdefault(int(fields[1]), []).append(pid)
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid == exclude:
            continue
        if pid in processes:
            out[pid] = cpu_seconds(processes[pid])
        todo.extend(tree.get(pid, []))
    return out


def _cpu(root: int, exclude: int | None = None) -> float:
    """CPU seconds (user + system) of process ``root`` and its live descendants, without the tree of ``exclude``."""
    return sum(_cpu_by_pid(root, exclude).values())


@dataclass(frozen=True)
class Sample:
    """One navigation: wall-clock seconds to usable, and the CPU seconds the server and the browser spent."""

    wall: float
    server_cpu: float
    browser_cpu: float


def _measure(server: int, act, wait) -> Sample:
    server0, browser0 = _cpu(server), _cpu(os.getpid(), exclude=server)
    start = time.perf_counter()
    act()
    wait()
    wall = time.perf_counter() - start
    return Sample(wall=wall, server_cpu=_cpu(server) - server0,
                  browser_cpu=_cpu(os.getpid(), exclude=server) - browser0)


def _home(page, url: str, home_title: str) -> None:
    page.goto(url, wait_until="domcontentloaded")
    _wait_usable(page, home_title)


def _click(page, url: str, info, home_title: str, server: int) -> Sample:
    _home(page, url, home_title)
    link = page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=info.title, exact=True)
    return _measure(server, link.click, lambda: _wait_usable(page, _heading(info)))


def _direct(browser, url: str, info, server: int) -> Sample:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    address = f"{url}/{Path(info.path).stem}" if info is not PAGES[0] else url
    try:
        return _measure(server, lambda: page.goto(address, wait_until="commit"),
                        lambda: _wait_usable(page, _heading(info)))
    finally:
        page.close()


def _row(title: str, clicks: list[Sample], directs: list[Sample]) -> str:
    def med(samples: list[Sample], field: str) -> float:
        return statistics.median(getattr(x, field) for x in samples)

    return (f"{title:<24} {med(clicks, 'wall'):8.2f} {max(x.wall for x in clicks):6.2f} "
            f"{med(clicks, 'server_cpu'):7.2f} {med(clicks, 'browser_cpu'):7.2f}   "
            f"{med(directs, 'wall'):8.2f} {max(x.wall for x in directs):6.2f} "
            f"{med(directs, 'server_cpu'):7.2f} {med(directs, 'browser_cpu'):7.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="measurements per page and kind (median reported)")
    parser.add_argument("--pages", nargs="*", help="page file stems to measure (default: every page)")
    args, _ = parser.parse_known_args()  # `python -m benchmarks` passes its own arguments to every script
    if not os.path.exists(CHROMIUM):
        print(f"needs Debian's chromium at {CHROMIUM} (make chromium)")
        return 1
    from playwright.sync_api import sync_playwright

    chosen = [p for p in PAGES if not args.pages or Path(p.path).stem in args.pages]
    home_title = _heading(PAGES[0])
    proc, url = start_server()
    slow = False
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            warm_start = time.perf_counter()
            for info in PAGES:  # warm-up: first imports, caches of the default scenario
                if info is PAGES[0]:
                    _home(page, url, home_title)
                else:
                    _click(page, url, info, home_title, proc.pid)
                _direct(browser, url, info, proc.pid)
            print(f"warm-up (every page once by click and by address): {time.perf_counter() - warm_start:.1f} s; "
                  f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
            print(f"{'':<24} {'--- click in the sidebar ---':^32}   {'--- open the address ---':^32}")
            print(f"{'page':<24} {'median':>8} {'max':>6} {'srv cpu':>7} {'brw cpu':>7}   "
                  f"{'median':>8} {'max':>6} {'srv cpu':>7} {'brw cpu':>7}   (seconds; target {TARGET_SECONDS:g} s)")
            for info in chosen:
                clicks = [_click(page, url, info, home_title, proc.pid) for _ in range(args.repeat)]
                directs = [_direct(browser, url, info, proc.pid) for _ in range(args.repeat)]
                worst = max(statistics.median(x.wall for x in clicks), statistics.median(x.wall for x in directs))
                flag = "  SLOW" if worst > TARGET_SECONDS else ""
                slow |= bool(flag)
                print(_row(info.title, clicks, directs) + flag, flush=True)
            browser.close()
        print(f"load average at the end: {os.getloadavg()[0]:.1f}. srv cpu / brw cpu: CPU seconds of the streamlit "
              "server and of chromium (all its processes) during the navigation, medians; on a busy machine the "
              "wall-clock time can be several times their sum.")
    finally:
        stop_server(proc)
    return 1 if slow else 0


if __name__ == "__main__":
    raise SystemExit(main())
