"""A lecture opening the link together, and the direct loads a visitor waits for, each as a ratio to a floor.

Run: ``.venv/bin/python benchmarks/bench_classroom.py [--sessions 50] [--repeat 3] [--no-browser]``
(the browser part needs Playwright and Debian's chromium, like bench_pages.py; ``--servers 2`` runs the burst
against two server processes behind a round-robin proxy started here, see docs/dashboard.md "Serving a class").

**Burst** (no browser): ``--sessions`` lightweight clients open the Home page of one ``streamlit run app.py`` at
the same moment, each as a browser's first visit does it: ``GET /`` and the module scripts that index.html names
(``--no-assets`` skips them), ``/_stcore/health`` and ``/_stcore/host-config``, then Streamlit's websocket
(``/_stcore/stream``) with the ``rerun_script`` message a browser sends, until the server says the script has
finished. Per visitor: the first byte of ``GET /``, and the *first page* (from the start of the burst until the
last element of Home has arrived). Meanwhile a separate client asks ``/_stcore/health`` every 0.1 s; the table
gives the slowest answer during the burst. Twice: on a **warm** server (one visitor has opened Home before, as
the teacher does) and on a **cold** one (the burst is the first thing the fresh server sees; streamlit's and the
pages' imports happen in it).

**Floors** measured in the same run: the same burst against a trivial page (``st.title`` and one paragraph, the
same server settings), the same browser's direct load of that page, and one million standard normals with numpy.
Each figure is printed with its ratio to the floor and the machine's load average (``os.getloadavg``); ``--repeat``
repeats each measurement, and the table gives the median and the spread (min-max).

**Direct loads** (browser): a new tab opens the page's address (a new session, the server warm; the tab's
browser context is new too, so nothing is cached in the browser: the first visit of a class member), until the
page is usable (bench_pages.USABLE_JS). Server CPU and browser CPU are counted as in bench_pages.py.

Targets (issue 25; the exit status is 1 when a median misses one): 50 visitors' first pages within 8 s, the health
check answered within 2 s (load < 3), Home's direct load under 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import re
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_pages import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    USABLE_JS,
    _cpu,
    start_server,
    stop_server,
    wait_until,
)

TARGET_FIRST_PAGE_S = 8.0
TARGET_HEALTH_S = 2.0
TARGET_HOME_DIRECT_S = 2.0
DIRECT_PAGES = (("home", "Home", "Private multi-site analysis"), ("noise_design", "Noise design", "Noise design"),
                ("sites", "Sites and budgets", "Sites and budgets"),
                ("privacy_utility", "Privacy-utility", "Privacy-utility"))
# The floor's page freezes its imports for the garbage collector as the dashboard does (pages.shared.navigation):
# without, every session's post-run full collection walks streamlit's own objects and the floor is not one.
TRIVIAL_APP = '''import gc
import streamlit as st
st.title("Floor")
st.write("A trivial page: the cost of a Streamlit session by itself.")
gc.freeze()
'''
BURST_TIMEOUT_S = 600.0


# ------------------------------------------------------------------------------------------------ servers

# ------------------------------------------------------------------------------------------------ the burst

@dataclass(frozen=True)
class Visit:
    """One simulated visitor: seconds from the start of the burst to the first byte of ``GET /`` and to the end of
    the first script run (every element of the page received)."""

    first_byte: float
    first_page: float
    elements: int
    bytes_received: int


def _asset_paths(index_html: str) -> list[str]:
    """The scripts and style sheets index.html makes a browser fetch before it opens the websocket."""
    return re.findall(r'(?:src|href)="\./(static/(?:js|css)/[^"]+)"', index_html)


async def _get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, path: str,
               cookies: dict[str, str]) -> bytes:
    """One HTTP/1.1 GET on a kept-alive connection, the body as sent (gzip, not decompressed), keeping the cookies
    the server sets as a browser does: a client this light leaves the machine's CPU to the server (httpx took as
    much CPU as the server did)."""
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip\r\nConnection: keep-alive\r\n"
                 f"{'Cookie: ' + cookie + chr(13) + chr(10) if cookie else ''}\r\n".encode())
    await writer.drain()
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    if not head.startswith("HTTP/1.1 200"):
        raise RuntimeError(f"GET {path}: {head.splitlines()[0]}")
    for name, value in re.findall(r"\n[Ss]et-[Cc]ookie: *([^=;\r]+)=([^;\r]*)", head):
        cookies[name] = value
    length = re.search(r"\n[Cc]ontent-[Ll]ength: *(\d+)", head)
    if length:
        return await reader.readexactly(int(length.group(1)))
    body = bytearray()  # chunked
    while size := int((await reader.readline()).strip() or b"0", 16):
        body += await reader.readexactly(size)
        await reader.readline()
    await reader.readline()
    return bytes(body)


async def _visit(url: str, page: str, start: float, assets: bool) -> Visit:
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    host = url.removeprefix("http://")
    cookies: dict[str, str] = {}
    reader, writer = await asyncio.open_connection(*host.split(":"))
    try:
        body = await _get(reader, writer, host, "/" + page, cookies)
        first_byte = time.perf_counter() - start  # (the whole of index.html: 3 KB, one packet)
        if assets:
            html = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
            for path in _asset_paths(html.decode(errors="replace")):
                await _get(reader, writer, host, "/" + path, cookies)
        await _get(reader, writer, host, "/_stcore/health", cookies)
        await _get(reader, writer, host, "/_stcore/host-config", cookies)
    finally:
        writer.close()
    ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
    back = BackMsg()
    back.rerun_script.query_string = ""
    back.rerun_script.page_name = page
    back.rerun_script.context_info.url = f"{url}/{page}"
    back.rerun_script.context_info.timezone = "UTC"
    back.rerun_script.context_info.locale = "en-GB"
    elements = received = 0
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else None
    async with websockets.connect(ws_url, subprotocols=["streamlit"], origin=url, max_size=None,
                                  additional_headers=headers,
                                  open_timeout=BURST_TIMEOUT_S, ping_interval=None) as ws:
        await ws.send(back.SerializeToString())
        while True:
            data = await asyncio.wait_for(ws.recv(), BURST_TIMEOUT_S)
            received += len(data)
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "delta":
                elements += 1
            elif kind == "script_finished":
                break
    return Visit(first_byte=first_byte, first_page=time.perf_counter() - start, elements=elements,
                 bytes_received=received)


class HealthProbe:
    """Asks ``/_stcore/health`` every ``period`` seconds in its own thread; ``worst`` is the slowest answer."""

    def __init__(self, url: str, period: float = 0.1) -> None:
        self.url, self.period, self.worst = url + "/_stcore/health", period, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            t = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url, timeout=BURST_TIMEOUT_S) as r:
                    r.read()
            except OSError:
                pass
            self.worst = max(self.worst, time.perf_counter() - t)
            self._stop.wait(self.period)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class Burst:
    """A burst of visitors: the slowest first byte, the median and slowest first page, the slowest health answer,
    and the server's CPU seconds during the burst."""

    first_byte_max: float
    first_page_median: float
    first_page_max: float
    health_max: float
    server_cpu: float
    client_cpu: float
    elements: int
    kib_per_visit: float


def burst(url: str, server_pid: int, sessions: int, page: str = "", *, assets: bool = True) -> Burst:
    async def everyone() -> list[Visit]:
        start = time.perf_counter()
        return await asyncio.gather(*(_visit(url, page, start, assets) for _ in range(sessions)))

    cpu0, client0 = _cpu(server_pid), time.process_time()
    with HealthProbe(url) as probe:
        visits = asyncio.run(everyone())
    client_cpu = time.process_time() - client0
    pages = [v.first_page for v in visits]
    return Burst(first_byte_max=max(v.first_byte for v in visits), first_page_median=statistics.median(pages),
                 first_page_max=max(pages), health_max=probe.worst, server_cpu=_cpu(server_pid) - cpu0,
                 client_cpu=client_cpu, elements=visits[0].elements,
                 kib_per_visit=statistics.median(v.bytes_received for v in visits) / 1024)


# ------------------------------------------------------------------------------------------------ browser loads

def direct_load(browser, url: str, stem: str, heading: str, server_pid: int) -> tuple[float, float, float]:
    """A new browser context (empty cache) opens ``url/stem``: wall seconds until usable, server and browser CPU."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    address = f"{url}/{stem}" if stem != "home" else url
    server0, browser0 = _cpu(server_pid), _cpu(os.getpid(), exclude=server_pid)
    start = time.perf_counter()
    try:
        page.goto(address, wait_until="commit")
        wait_until(page, USABLE_JS, heading)
        wall = time.perf_counter() - start
    finally:
        context.close()
    return wall, _cpu(server_pid) - server0, _cpu(os.getpid(), exclude=server_pid) - browser0


# ------------------------------------------------------------------------------------------------ table

def normals_floor() -> float:
    """Seconds for one million standard normals (numpy's default generator), the best of five."""
    rng = np.random.default_rng(0)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        rng.standard_normal(1_000_000)
        best = min(best, time.perf_counter() - t)
    return best


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} ({min(values):.2f}-{max(values):.2f})"


def _line(name: str, values: list[float], floor: list[float] | None, target: str = "") -> str:
    ratio = f"{statistics.median(values) / statistics.median(floor):7.1f}x" if floor else f"{'':8}"
    return f"{name:<52} {_spread(values):>22} {ratio}  {target}"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f} (5 min {five:.2f}) on {os.cpu_count()} CPUs"


def _repeat(n: int, fn: Callable[[], Burst]) -> list[Burst]:
    out = []
    for _ in range(n):
        out.append(fn())
        print(f"  .. {out[-1]}; {_load()}", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50, help="visitors in one burst")
    parser.add_argument("--repeat", type=int, default=3, help="measurements of each figure (median and spread)")
    parser.add_argument("--no-browser", action="store_true", help="skip the direct loads in chromium")
    parser.add_argument("--no-cold", action="store_true", help="skip the burst on a freshly started server")
    parser.add_argument("--no-assets", action="store_true", help="visitors skip index.html's scripts")
    parser.add_argument("--servers", type=int, nargs="*", default=[1, 2],
                        help="also burst through nginx with this many Streamlit processes (tools/serve_class.py; "
                        "skipped without nginx; none: --servers with no value)")
    parser.add_argument("--app", default=str(ROOT / "app.py"), help="the app to serve (default: the dashboard)")
    args, _ = parser.parse_known_args()  # `python -m benchmarks` passes its own arguments to every script
    assets = not args.no_assets
    print(f"start: {_load()}; {args.sessions} visitors per burst, {args.repeat} repeats, "
          f"assets {'fetched' if assets else 'skipped'}", flush=True)
    rows: list[str] = []
    normals = [normals_floor() for _ in range(args.repeat)]
    rows.append(_line("floor: 1e6 normals (s)", normals, None))

    with tempfile.TemporaryDirectory() as tmp:
        trivial = Path(tmp) / "trivial.py"
        trivial.write_text(TRIVIAL_APP)
        proc, url = start_server(trivial)
        try:
            burst(url, proc.pid, 1, assets=assets)
            floor_bursts = _repeat(args.repeat, lambda: burst(url, proc.pid, args.sessions, assets=assets))
            floor_direct: list[float] = []
            if not args.no_browser:
                floor_direct = _browser_loads(url, proc.pid, [("", "trivial", "Floor")], args.repeat)[1]["trivial"]
        finally:
            stop_server(proc)
    floor_page = [b.first_page_max for b in floor_bursts]
    rows.append(_line(f"floor: {args.sessions} visitors, trivial page, last (s)", floor_page, None))
    if floor_direct:
        rows.append(_line("floor: trivial page, direct load (s)", floor_direct, None))

    app = Path(args.app)
    if not args.no_cold:
        cold = []
        for _ in range(args.repeat):
            proc, url = start_server(app)
            try:
                cold.extend(_repeat(1, lambda u=url, p=proc.pid: burst(u, p, args.sessions, assets=assets)))
            finally:
                stop_server(proc)
        rows.append(_line(f"cold server: {args.sessions} visitors' first page, last", [b.first_page_max for b in cold],
                          floor_page, f"target {TARGET_FIRST_PAGE_S:g} s"))
        rows.append(_line("cold server: health check, slowest answer", [b.health_max for b in cold], None,
                          f"target {TARGET_HEALTH_S:g} s"))
    proc, url = start_server(app)
    try:
        burst(url, proc.pid, 1, assets=assets)  # the teacher opens Home first
        warm = _repeat(args.repeat, lambda: burst(url, proc.pid, args.sessions, assets=assets))
    finally:
        stop_server(proc)
    rows.append(_line(f"warm server: {args.sessions} visitors, slowest first byte", [b.first_byte_max for b in warm],
                      None))
    rows.append(_line(f"warm server: {args.sessions} visitors' first page, median", [b.first_page_median for b in warm],
                      floor_page))
    rows.append(_line(f"warm server: {args.sessions} visitors' first page, last", [b.first_page_max for b in warm],
                      floor_page, f"target {TARGET_FIRST_PAGE_S:g} s"))
    rows.append(_line("warm server: health check, slowest answer", [b.health_max for b in warm], None,
                      f"target {TARGET_HEALTH_S:g} s"))
    rows.append(_line("warm server: server CPU per visitor (s)", [b.server_cpu / args.sessions for b in warm],
                      [b.server_cpu / args.sessions for b in floor_bursts]))
    rows.append(f"{'Home as sent: elements, KiB per visitor':<52} {warm[0].elements:>7} {warm[0].kib_per_visit:9.0f}")
    for n in args.servers:
        rows.extend(_proxied(n, app, args.sessions, args.repeat, assets, floor_page))
    home_direct: list[float] = []
    if not args.no_browser:
        proc, url = start_server(app)  # a fresh server: each page's first load carries its imports
        try:
            first, loads = _browser_loads(url, proc.pid, list(DIRECT_PAGES), args.repeat)
        finally:
            stop_server(proc)
        for _stem, title, _ in DIRECT_PAGES:
            rows.append(_line(f"first load after server start: {title} (s)", [first[title]], floor_direct))
        home_direct = loads["Home"]
        for stem, title, _ in DIRECT_PAGES:
            target = f"target {TARGET_HOME_DIRECT_S:g} s" if stem == "home" else ""
            rows.append(_line(f"direct load: {title} (s)", loads[title], floor_direct, target))

    print(f"\n{'figure':<52} {'median (min-max)':>22} {'/ floor':>8}")
    print("\n".join(rows))
    print(f"end: {_load()}")
    missed = (statistics.median(b.first_page_max for b in warm) > TARGET_FIRST_PAGE_S
              or statistics.median(b.health_max for b in warm) > TARGET_HEALTH_S
              or (home_direct and statistics.median(home_direct) > TARGET_HOME_DIRECT_S))
    if missed:
        print("a target was missed (medians; the load average above says how busy the machine was)")
    return 1 if missed else 0


def _proxied(n: int, app: Path, sessions: int, repeat: int, assets: bool, floor_page: list[float]) -> list[str]:
    """Rows of the warm burst through nginx in front of ``n`` Streamlit processes (nginx serves /static/)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from serve_class import ClassServers

    try:
        servers = ClassServers(n, app=app)
        servers.__enter__()
    except (FileNotFoundError, RuntimeError) as exc:
        return [f"nginx, {n} server(s): skipped ({exc})"]
    try:
        burst(servers.url, servers.streamlit_pids[0], 5 * n, assets=assets)  # warm every process
        cpu0 = sum(_cpu(p) for p in servers.streamlit_pids)
        bursts = _repeat(repeat, lambda: burst(servers.url, servers.streamlit_pids[0], sessions, assets=assets))
        cpu = (sum(_cpu(p) for p in servers.streamlit_pids) - cpu0) / repeat / sessions
    finally:
        servers.__exit__()
    label = f"nginx + {n} server{'s' if n > 1 else ''}"
    return [_line(f"{label}: {sessions} visitors' first page, last", [b.first_page_max for b in bursts], floor_page,
                  f"target {TARGET_FIRST_PAGE_S:g} s"),
            _line(f"{label}: health check, slowest answer", [b.health_max for b in bursts], None,
                  f"target {TARGET_HEALTH_S:g} s"),
            _line(f"{label}: Streamlit CPU per visitor (s)", [cpu], None)]


def _browser_loads(url: str, server_pid: int, pages: list[tuple[str, str, str]],
                   repeat: int) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Per page title: the first direct load (the server's first run of that page), and ``repeat`` later ones."""
    if not os.path.exists(CHROMIUM):
        print(f"needs Debian's chromium at {CHROMIUM} (make chromium)")
        return {t: float("nan") for _, t, _ in pages}, {t: [float("nan")] for _, t, _ in pages}
    from playwright.sync_api import sync_playwright

    first: dict[str, float] = {}
    out: dict[str, list[float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for stem, title, heading in pages:
            first[title] = direct_load(browser, url, stem or "home", heading, server_pid)[0]
        for stem, title, heading in pages:
            samples = [direct_load(browser, url, stem or "home", heading, server_pid) for _ in range(repeat)]
            out[title] = [s[0] for s in samples]
            print(f"  .. direct {title}: first {first[title]:.2f}, then wall {[round(s[0], 2) for s in samples]}, "
                  f"server cpu {[round(s[1], 2) for s in samples]}, browser cpu {[round(s[2], 2) for s in samples]}; "
                  f"{_load()}", flush=True)
        browser.close()
    return first, out


if __name__ == "__main__":
    raise SystemExit(main())
