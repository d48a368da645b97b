"""Real-browser smoke test: start the app, open it in headless Debian chromium, visit every page.

Fails on any exception box, traceback text or error element on any page, and when chromium is missing
(``make test`` installs Debian's chromium).

Every wait is on a state of the page, never on a time (issue 29: a test that slept 800 ms after pressing Enter read the
address before the edit's run on a loaded machine): :func:`_rerun` does an action and waits until a script run that
started after it has finished (the runs a page's websocket reports, :class:`_Runs`); :func:`_wait_idle` waits until
no run is going on; :func:`_settled` until charts or a grid stop moving; a test that reads a value (the address, a
widget) waits for that value.

The ``server`` (one ``streamlit run app.py``) and ``browser`` (one headless chromium) fixtures are the session's
(tests/conftest.py): every browser test of a pytest process shares them; each test opens its own pages, so each has
its own Streamlit session.
"""

from __future__ import annotations

import time
import weakref

import pytest
from browser_support import streamlit_server as _streamlit_server

from pages.shared.catalog import PAGES

pytestmark = pytest.mark.browser


def _assert_clean(page, where: str) -> None:
    for selector in ('[data-testid="stException"]', '[data-testid="stAlertContentError"]'):
        boxes = page.locator(selector)
        assert boxes.count() == 0, f"{where}: error element {selector}: {boxes.first.inner_text()[:500]}"
    body = page.locator("body").inner_text()
    for marker in ("Traceback (most recent call last)", "StreamlitAPIException", "ModuleNotFoundError"):
        assert marker not in body, f"{where}: page shows {marker!r}"


class _Runs:
    """The script runs of a page's app session, as its websocket reports them (Streamlit's ForwardMsg): whole runs
    finished so far, and whether one is going on. The exact state, whatever the machine's load: a run that starts
    late or ends within one frame of the page is still seen."""

    def __init__(self) -> None:
        self.finished = 0
        self.fragments = 0  # runs of a fragment alone (a Run button in the Run section's fragment) finished so far
        self.running = False

    def frame(self, payload) -> None:
        from google.protobuf.message import DecodeError
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if not isinstance(payload, (bytes, bytearray)):
            return
        try:
            message = ForwardMsg.FromString(bytes(payload))
        except DecodeError:
            return
        kind = message.WhichOneof("type")
        if kind == "new_session":
            self.running = True
        elif kind == "session_status_changed":
            self.running = message.session_status_changed.script_is_running
        elif kind == "script_finished" and message.script_finished in (
                ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR):
            self.finished += 1  # a whole run ended (not one stopped for a rerun, not a fragment's)
        elif kind == "script_finished" and message.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
            self.fragments += 1


_RUNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _page(owner, width: int, height: int = 900):
    """A new page of ``owner`` (the browser, or a context made for downloads) whose script runs are followed
    (:class:`_Runs`)."""
    page = owner.new_page(viewport={"width": width, "height": height}) if hasattr(owner, "new_context") else (
        owner.new_page())
    runs = _Runs()
    _RUNS[page] = runs
    page.on("websocket", lambda socket: socket.on("framereceived", runs.frame))
    return page


def _until(page, condition, what: str, seconds: float = 180.0) -> None:
    """Wait until ``condition()`` holds (the page's events keep arriving meanwhile); fail naming ``what`` after
    ``seconds``, a bound for a loaded machine, not a time the test relies on."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s for {what}")
        page.wait_for_timeout(20)


def _wait_idle(page) -> None:
    """Wait until the page's first script run has finished and none is going on."""
    runs = _RUNS[page]
    _until(page, lambda: runs.finished > 0 and not runs.running, "the page's script run to finish")


def _rerun(page, action) -> None:
    """Do ``action`` (a click, a key press, an upload that reruns the script) and wait until a run that started
    after it has finished: the state it causes, however long the machine takes to start the run."""
    runs = _RUNS[page]
    _wait_idle(page)  # no run of an earlier action still going on
    before = runs.finished
    action()
    _until(page, lambda: runs.finished > before and not runs.running, "a script run after the action to finish")


def _fragment_rerun(page, action) -> None:
    """Do ``action`` (a click inside a fragment, e.g. a page's Run) and wait until a run of that fragment alone that
    started after it has finished."""
    runs = _RUNS[page]
    _wait_idle(page)
    before = runs.fragments
    action()
    _until(page, lambda: runs.fragments > before and not runs.running, "the fragment's run after the action to finish")


_STILL = """([selector, first]) => {
    const found = [...document.querySelectorAll(selector)];
    const boxes = (first ? found.slice(0, 1) : found).map((e) => {
        const r = e.getBoundingClientRect();
        return [r.x, r.y, r.width, r.height, e.querySelector('.main-svg, canvas') ? 1 : 0];
    });
    const now = JSON.stringify(boxes);
    window.__settledFrames = window.__settledLast === now ? (window.__settledFrames || 0) + 1 : 0;
    window.__settledLast = now;
    return boxes.every((b) => b[4] === 1 && b[2] > 0) && window.__settledFrames >= 5;
}"""


def _settled(page, selector: str = '[data-testid="stPlotlyChart"]', *, first: bool = False) -> None:
    """Wait until every element of ``selector`` (charts by default; with ``first``, the first only) is drawn (an SVG
    or canvas inside) and has kept the same box for five animation frames running: laid out, not moving."""
    page.wait_for_function(_STILL, arg=[selector, first], polling="raf", timeout=60_000)


def test_every_page_renders_without_errors(server, browser):
    page = _page(browser, 1280)
    page.goto(server, wait_until="domcontentloaded")
    _wait_idle(page)
    page.get_by_role("heading", name="Private multi-site analysis with correlated noise").wait_for(timeout=60_000)
    _assert_clean(page, "home")
    nav = page.locator('[data-testid="stSidebarNav"]')
    for info in PAGES[1:]:
        _rerun(page, nav.get_by_role("link", name=info.title, exact=True).click)
        page.locator("h1").first.wait_for(timeout=60_000)
        _assert_clean(page, info.title)
    page.close()


def test_narrow_window_has_no_horizontal_scroll(server, browser):
    page = _page(browser, 420)
    page.goto(server, wait_until="domcontentloaded")
    _wait_idle(page)
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 1, f"home page scrolls horizontally by {overflow}px at 420px width"
    page.close()


# --- dashboard pages of issue 6: narrow windows, editing the Sites table, shared links ---------------------------

DASHBOARD_PAGES = ("pages/home.py", "pages/sites.py", "pages/noise_design.py", "pages/gain.py", "pages/epsilon.py",
                   "pages/protocol.py", "pages/glossary.py")


def _open(browser, server, width: int, query: str = ""):
    page = _page(browser, width)
    page.goto(server + query, wait_until="domcontentloaded")
    _wait_idle(page)
    page.get_by_role("heading", name="Private multi-site analysis with correlated noise").wait_for(timeout=60_000)
    return page


def _open_list(page, select: str, option) -> None:
    """Open the select box ``select`` until ``option`` shows: a click that lands while the page still reruns (its
    chart code loading when idle, a worker warming up) can be lost with the element it landed on, so the list is
    opened again until the option is there (a state, at most five tries)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(5):
        page.locator(select).click()
        try:
            option.wait_for(timeout=10_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    option.wait_for(timeout=10_000)


def _goto(page, title: str) -> None:
    """Follow a sidebar link (opening the collapsed sidebar on narrow windows first)."""
    nav = page.locator('[data-testid="stSidebarNav"]')
    if not nav.is_visible():
        expand = '[data-testid="stExpandSidebarButton"], [data-testid="stSidebarCollapsedControl"] button'
        page.locator(expand).first.click()
        nav.wait_for(state="visible", timeout=10_000)
    _rerun(page, nav.get_by_role("link", name=title, exact=True).click)
    page.locator("h1").first.wait_for(timeout=60_000)
    collapse = page.locator('[data-testid="stSidebarCollapseButton"] button')
    if page.viewport_size["width"] < 640 and collapse.count() and collapse.first.is_visible():
        collapse.first.click()
        nav.wait_for(state="hidden", timeout=10_000)


def _title_of(path: str) -> str:
    return next(p.title for p in PAGES if p.path == path)


def test_dashboard_pages_fit_a_narrow_window(server, browser):
    page = _open(browser, server, 420)
    for path in DASHBOARD_PAGES:
        if path != "pages/home.py":
            _goto(page, _title_of(path))
        _assert_clean(page, path)
        _settled(page)  # charts laid out
        overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"{path} scrolls horizontally by {overflow}px at 420px width"
        widest = page.evaluate(
            "() => Math.max(0, ...[...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
            ".map(e => e.getBoundingClientRect().right))")
        client = page.evaluate("() => document.documentElement.clientWidth")
        assert widest <= client + 1, f"{path}: a chart reaches {widest}px in a {client}px window"
    page.close()


def _sites_grid(page):
    """Sites and budgets opened, its table drawn: the table's locator and its bounding box."""
    _goto(page, "Sites and budgets")
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.wait_for(timeout=30_000)
    _settled(page, '[data-testid="stDataFrame"]', first=True)  # the grid drawn on its canvas, at its place
    return grid, grid.bounding_box()


def _edit_grid_cell(page, x: float, y: float, text: str, attempts: int = 4) -> None:
    """Type ``text`` into the data-editor cell at (x, y): select it, open its editor (an <input class="gdg-input">
    over the canvas), fill and commit. A click can land while the grid is still being laid out: retry then."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    editor = page.locator(".gdg-input").first
    for _ in range(attempts):
        page.mouse.click(x, y)
        page.mouse.dblclick(x, y)
        try:
            editor.wait_for(state="visible", timeout=5_000)
        except PlaywrightTimeout:
            continue
        editor.fill(text)
        _rerun(page, lambda: editor.press("Enter"))  # the edit's run, then the page it drew
        _settled(page, '[data-testid="stDataFrame"]', first=True)
        return
    raise AssertionError("the data editor's cell editor did not open")


def test_editing_the_sites_table_reaches_the_noise_design_page(server, browser):
    import numpy as np

    from dpcore.cape import dp_floor
    from dpcore.scenario import default_scenario

    page = _open(browser, server, 1280)
    _, box = _sites_grid(page)
    header = row = 35  # glide-data-grid default heights in Streamlit
    x = box["x"] + 150  # row-selector (~33 px) and site (~80 px) columns, then N_s
    y = box["y"] + header + 2 * row + row / 2  # third row: site C
    _edit_grid_cell(page, x, y, "2400")
    _assert_clean(page, "sites after edit")
    assert "scenario=1." in page.url  # the address bar now holds the edited scenario
    _goto(page, "Noise design")
    _assert_clean(page, "noise design after edit")
    edited = default_scenario().with_sizes(np.array([1000, 800, 2400, 500, 1500]))
    floor = dp_floor(edited.weights(), edited.taus("mean"))
    metric = page.locator('[data-testid="stMetric"]').filter(has_text="DP floor")
    assert f"{floor:.4g}" in metric.inner_text()
    page.close()


def test_a_shared_link_opens_the_dashboard_with_its_scenario(server, browser):
    from dpcore.scenario import preset_scenario, scenario_to_query

    page = _open(browser, server, 1280, f"/?scenario={scenario_to_query(preset_scenario('one-large'))}")
    _assert_clean(page, "home from link")
    assert "Loaded the scenario from the link: 5 sites, N = 6,000" in page.locator("body").inner_text()
    _goto(page, "Sites and budgets")
    assert "N = 6,000" in page.locator('[data-testid="stSidebar"]').inner_text()
    page.close()
    bad = _open(browser, server, 1280, "/?scenario=1.not-a-scenario")
    errors = bad.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 1 and "could not be loaded" in errors.first.inner_text()
    bad.close()


def test_a_deep_link_on_a_fresh_server_uses_the_app_navigation(browser):
    """Streamlit's legacy pages/ mode runs a page file directly when a deep link is a fresh server's first
    request; pages.shared.navigation.start_page must put the app's navigation back."""
    with _streamlit_server() as url:
        page = _page(browser, 1280)
        page.goto(url + "/sites", wait_until="domcontentloaded")
        _wait_idle(page)
        page.get_by_role("heading", name="Sites and budgets").first.wait_for(timeout=60_000)
        links = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
        titles = [" ".join(t.split()) for t in links]
        assert any("Privacy-utility" in t for t in titles), titles
        assert not any(t.strip().endswith("common") or t.strip().endswith("app") for t in titles), titles
        assert len(titles) == len(PAGES)
        _assert_clean(page, "deep link /sites")
        page.close()


def test_typing_n_1e19_into_the_sites_table_gets_a_message(server, browser):
    """issue 12: a number cell silently reverted 1e19 (and turned "1e19" into 119); N_s is text now, so the value
    reaches the check and the message says what is allowed, next to the table."""
    page = _open(browser, server, 1280)
    _, box = _sites_grid(page)
    x, y = box["x"] + 150, box["y"] + 35 + 2 * 35 + 35 / 2  # N_s of the third row (site C)
    for typed in ("1e19", "10000000000000000000"):
        _edit_grid_cell(page, x, y, typed)
        errors = page.locator('[data-testid="stAlertContentError"]')
        assert errors.count() == 1, typed
        assert f"site 3 (C), n: must be an integer from 1 to 1,000,000,000 (got '{typed}')" in errors.first.inner_text()
        assert "Traceback" not in page.locator("body").inner_text()
    _edit_grid_cell(page, x, y, "2400")  # a valid value clears it
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    assert "N = 6,200" in page.locator('[data-testid="stSidebar"]').inner_text()


# --- issue 11: one headline, the before-and-after panel, what ε means, charts and tables that fit -------------

def _headline(page) -> str:
    return " ".join(page.locator(".st-key-headline_box").first.inner_text().split())


def test_one_headline_on_every_scenario_page_and_the_change_panel_with_undo(server, browser):
    page = _open(browser, server, 1280)
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0  # .streamlit/config.toml: viewer toolbar
    first = _headline(page)
    assert first.startswith("The aggregate carries 2.22 times less noise variance than if each site added its own.")
    for title in ("Sites and budgets", "Noise design", "CAPE gain"):
        _goto(page, title)
        _assert_clean(page, title)
        assert _headline(page) == first, title
    _goto(page, "Home")
    _rerun(page, page.get_by_role("button", name="CAPE stops helping: a strict site").click)
    panel = page.locator(".st-key-change_panel")
    panel.wait_for(timeout=30_000)
    text = " ".join(panel.inner_text().split())
    assert "site C:" in text and "ε 0.3 → 0.1" in text and "The gain fell from 2.22× to 1.16×." in text
    assert "CAPE gain G" in text and "τ_c" in text and "audit" in text
    assert _headline(page).startswith("The aggregate carries 1.16 times less noise variance")
    explanation = page.locator('[data-testid="stAlertContentInfo"]', has_text="the gain falls to 1.16")
    explanation.first.wait_for(timeout=30_000)  # the lesson's sentence, read off the same scenario
    _goto(page, "Noise design")  # the panel and the headline follow the scenario to every page
    assert page.locator(".st-key-change_panel").count() == 1
    assert _headline(page).startswith("The aggregate carries 1.16 times")
    _rerun(page, page.locator(".st-key-change_panel").get_by_role("button", name="Undo").click)
    page.locator(".st-key-change_panel").wait_for(state="detached", timeout=30_000)
    assert _headline(page) == first
    _goto(page, "Home")  # issue 29: the explanation follows the state (it said "falls to 1.16" under 2.22)
    page.locator(".st-key-headline_box", has_text="2.22 times less").wait_for(timeout=30_000)
    assert explanation.count() == 0
    _assert_clean(page, "after undo")
    page.close()


def test_what_epsilon_means_draws_the_views(server, browser):
    page = _open(browser, server, 1280)
    _goto(page, "What ε means")
    _assert_clean(page, "What ε means")
    sentence = " ".join(page.locator('[data-testid="stAlertContentInfo"]').first.inner_text().split())
    assert "Take one person who may or may not be in site 1's data." in sentence  # the class demonstration
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .main-svg').length >= 2")
    legend = page.locator('[data-testid="stPlotlyChart"]').nth(1).locator(".legend").text_content()
    for label in ("the site's own promise", "what the aggregator effectively sees", "pooled data", "guessing"):
        assert label in legend
    # a legend entry is toggled by its transparent .legendtoggle rectangle, which lies over the entry's text
    page.locator(".legend .traces", has_text="what the aggregator effectively sees").first.locator(
        ".legendtoggle").click()
    _wait_idle(page)
    _assert_clean(page, "What ε means, aggregator view")
    page.close()


def _legends_below_plots(page) -> list[str]:
    """Charts whose legend is not entirely below the plotting area (where the mode bar cannot cover it)."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].flatMap((c, i) => {
        const legend = c.querySelector('.legend'), plot = c.querySelector('.nsewdrag');
        if (!legend || !plot) return [];
        return legend.getBoundingClientRect().top >= plot.getBoundingClientRect().bottom - 1 ? [] : [`chart ${i}`];
    })""")


@pytest.mark.parametrize("width", [420, 1400])
def test_tables_and_legends_fit(server, browser, width):
    page = _open(browser, server, width)
    for title in ("Noise design", "CAPE gain", "What ε means", "Protocol walk-through", "Privacy-utility"):
        _goto(page, title)
        _settled(page)  # charts laid out
        assert _legends_below_plots(page) == [], f"{title} at {width}px"
        cut = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stTable"]')]
            .filter(t => t.scrollWidth > t.clientWidth + 1 || t.getBoundingClientRect().right >
                         document.documentElement.clientWidth + 1).length""")
        assert cut == 0, f"{title}: a table is cut at {width}px"
    page.close()


def test_topic_models_page_runs_its_story_and_the_one_click_breakdown(server, browser):
    """Topic models in chromium: press Run on the defaults, see the chart and the headline sentence; one click to
    where CAPE stops helping runs at once and explains why."""
    page = _open(browser, server, 1280)
    _goto(page, "Topic models")
    _assert_clean(page, "Topic models")
    _fragment_rerun(page, page.get_by_role("button", name="Run", exact=True).click)  # the Run's fragment alone
    page.get_by_text("capeLDA's topic error is").first.wait_for(timeout=120_000)
    _assert_clean(page, "Topic models after Run")
    assert "closes" in page.locator("body").inner_text()
    page.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=60_000)
    _rerun(page, page.get_by_role("button", name="Show where CAPE stops helping").click)
    page.get_by_text("never the noise pooled data need").first.wait_for(timeout=120_000)
    # the sentence read off the runs (dpcore.lda.story.breakdown_sentence), not a fixed claim
    page.get_by_text("better than random topics").first.wait_for(timeout=120_000)
    _assert_clean(page, "Topic models breakdown")
    assert page.get_by_role("button", name="Back to the opening setting").count() == 1
    page.close()


def test_privacy_utility_opens_on_a_stored_figure_and_a_live_run_shows_moving_progress(server, browser):
    """Privacy-utility in chromium: the stored full-size figure at once; one click to where CAPE stops helping;
    running a stored figure again live shows a progress bar that moves (the fragment polls the background sweep
    every second). The live run is Fig. 3 at D = 50 (10 runs, 250 steps): the opening D = 10 figure's designs and
    data are prepared when the page opens (its guarantees), and its runs then end within one poll on a quiet
    machine."""
    import re


    page = _open(browser, server, 1280)
    _goto(page, "Privacy-utility")
    page.get_by_text("Stored result, full paper size").first.wait_for(timeout=60_000)
    page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for(timeout=60_000)
    _assert_clean(page, "Privacy-utility")
    assert "closes 59% of the gap" in page.locator("body").inner_text()  # of the numbers it prints
    meeting = page.locator(".st-key-pu_meeting")
    meeting.wait_for(timeout=60_000)  # Fig. 3: the interval at ε = 10 excludes 0, so the curves do not meet
    assert "The curves do not meet on this figure" in meeting.inner_text()
    assert "(paired difference -0.014 ± 0.00342, 95% interval, which excludes 0)" in meeting.inner_text()
    assert page.get_by_text("Estimated time: about").count() == 1
    _rerun(page, page.get_by_role("button", name="Show where CAPE stops helping").click)
    page.get_by_text("The curves meet at ε = 0.001").first.wait_for(timeout=60_000)
    _assert_clean(page, "Privacy-utility, where CAPE stops helping")
    page.close()

    page = _open(browser, server, 1280)
    _goto(page, "Privacy-utility")
    # the page has drawn its stored figure (its state) before the preset is changed: a click on the select box while
    # the page still reruns can be lost with the element it landed on, so open the list until it shows
    page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for(timeout=60_000)
    option = page.get_by_role("option", name=re.compile(r"^Fig\. 3 \(top row\): MOG \(D = 50"))
    _open_list(page, ".st-key-pu_preset", option)
    _rerun(page, option.click)
    # Fig. 3 at D = 50 drawn: its box (the D = 10 figure's says the curves do not meet, this one that CAPE stays ahead)
    page.locator(".st-key-pu_meeting", has_text="stays clearly ahead").wait_for(timeout=60_000)
    page.get_by_text("Stored result, full paper size").first.wait_for(timeout=60_000)
    # every text the progress bar ever shows, recorded in the page as it changes (a poll from here can miss a bar
    # that lives less than one poll)
    page.evaluate("""() => {
        window.__progress = [];
        const record = () => document.querySelectorAll('[data-testid="stProgress"]').forEach(
            (bar) => window.__progress.push(bar.innerText));
        new MutationObserver(record).observe(document.body, {childList: true, subtree: true, characterData: true});
    }""")
    page.get_by_role("button", name="Run it again live").click()
    page.get_by_text("Complete: 10 runs").first.wait_for(timeout=300_000)
    steps: list[int] = []
    for text in page.evaluate("() => window.__progress"):
        found = re.search(r"step (\d+) of (\d+)", text)
        if found and (not steps or steps[-1] != int(found.group(1))):
            steps.append(int(found.group(1)))
    assert len(steps) >= 2 and steps == sorted(steps), steps  # the bar moved forward while the sweep ran
    _assert_clean(page, "Privacy-utility after a live run")


def _tables_cut(page) -> int:
    """Data frames (canvas grids) whose content is wider than their box or that reach past the window."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].filter(t => {
        const scroller = t.querySelector('.dvn-scroller');
        const wider = scroller ? scroller.scrollWidth > scroller.clientWidth + 1 : false;
        return wider || t.getBoundingClientRect().right > document.documentElement.clientWidth + 1;
    }).length""")


@pytest.mark.parametrize(("title", "sentence", "why"), [
    ("capePCA", "capePCA closes", "the noise that even pooled data need"),
    ("capeAGN", "capeAGN closes", "the M2 noise that even pooled data need"),
])
def test_computing_page_runs_its_story_and_the_one_click_breakdown(server, browser, title, sentence, why):
    """capePCA and capeAGN in chromium at 1400 px: press Run on the defaults, see the sentence, the charts with their
    legends under the plot and an uncut results table; one click to where CAPE stops helping says why; back."""
    page = _open(browser, server, 1400)
    _goto(page, title)
    _assert_clean(page, title)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text(sentence).first.wait_for(timeout=300_000)  # the run's sentence, then the rest of the script
    _wait_idle(page)
    page.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=60_000)
    _settled(page)  # charts laid out
    _assert_clean(page, f"{title} after Run")
    assert _legends_below_plots(page) == [], title
    assert _tables_cut(page) == 0, f"{title}: a table is cut at 1400px"
    page.get_by_role("button", name="Show where CAPE stops helping").click()
    page.get_by_text(why).first.wait_for(timeout=300_000)  # four cases of runs: long on a loaded machine
    _wait_idle(page)
    _assert_clean(page, f"{title} breakdown")
    body = page.locator("body").inner_text()
    assert "Where CAPE stops helping" in body and "colluding sites" in body and "The largest site" in body
    _rerun(page, page.get_by_role("button", name="Back to the opening setting").click)
    page.get_by_role("button", name="Show where CAPE stops helping").wait_for(timeout=60_000)
    _assert_clean(page, f"{title} back to the opening")
    page.close()


def _chips_out_of_view(page, key: str) -> list[str]:
    """The chosen values of multiselect ``key`` whose chip is not entirely inside the visible part of the box that
    holds the chips (which scrolls sideways when they do not wrap)."""
    return page.evaluate("""(key) => {
        const box = document.querySelector(`.st-key-${key} [data-testid="stMultiSelectTagsContainer"]`);
        const outer = box.getBoundingClientRect();
        return [...box.querySelectorAll('[data-tag]')].filter(chip => {
            const r = chip.getBoundingClientRect();
            return r.width === 0 || r.left < outer.left - 1 || r.right > outer.right + 1 || r.bottom > outer.bottom + 1;
        }).map(chip => chip.getAttribute('aria-label'));
    }""", key)


def test_capepca_algorithms_box_shows_every_chosen_algorithm_at_1400px(server, browser):
    """Issue 36: at 1,400 px capePCA's Algorithms box (a third of the page) cut off "local" and hid "non-dp pool":
    Streamlit keeps the chosen values on one line that scrolls sideways. The chips now wrap; with all seven chosen
    every one is in view. Waits on the page's state (the chips drawn, the new chip present), never on time."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server + "/capepca", wait_until="domcontentloaded")
    page.get_by_role("heading", name="capePCA: distributed private PCA").wait_for(timeout=120_000)
    chips = page.locator(".st-key-pca_algorithms [data-tag]")
    chips.nth(3).wait_for(timeout=60_000)  # the opening's four algorithms
    labels = [chips.nth(i).get_attribute("aria-label") for i in range(chips.count())]
    assert labels == ["capePCA", "conv", "local", "non-dp pool"]
    page.wait_for_function("(key) => document.querySelectorAll(`.st-key-${key} [data-tag]`).length === 4",
                           arg="pca_algorithms")
    assert _chips_out_of_view(page, "pca_algorithms") == []
    for name in ("pooled AG", "DPdisPCA", "central (DPDPCA)"):  # all seven chosen
        # each choice re-runs the page: on a loaded machine its list opens later than Playwright's default 30 s wait
        page.locator(".st-key-pca_algorithms [data-testid='stMultiSelect'] input").first.click(timeout=60_000)
        page.get_by_role("option", name=name, exact=True).click(timeout=60_000)
        page.locator(f".st-key-pca_algorithms [data-tag][aria-label='{name}']").wait_for(timeout=60_000)
        page.keyboard.press("Escape")
    assert chips.count() == 7
    assert _chips_out_of_view(page, "pca_algorithms") == []
    _assert_clean(page, "capePCA with seven algorithms")
    page.close()
