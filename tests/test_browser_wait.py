"""The benchmarks' wait in the page (``benchmarks.bench_pages.wait_until``, issue 34): it ends on the change of the
page that makes its check true, sees a state that no change of the page shows, and times out as Playwright's own wait
does. The benchmarks time a click with it, so a wait that ended early would report a Run faster than it was."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from benchmarks.bench_pages import wait_until

pytestmark = pytest.mark.browser

STATE = "() => document.getElementById('a').getAttribute('data-state')"


def test_the_benchmarks_wait_ends_on_the_change_that_makes_it_true_and_times_out_otherwise(browser):
    page = browser.new_page()
    try:
        page.set_content("<div id='a' data-state='running'></div>")
        page.evaluate("() => setTimeout(() => document.getElementById('a').setAttribute('data-state', 'done'), 300)")
        wait_until(page, "(wanted) => document.getElementById('a').getAttribute('data-state') === wanted", "done",
                   timeout_ms=60_000)
        assert page.evaluate(STATE) == "done"  # it did not end before the change (300 ms after it began)

        page.evaluate("() => setTimeout(() => { window.flag = 1; }, 300)")  # no change of the page shows this one
        wait_until(page, "() => window.flag === 1", timeout_ms=60_000)
        assert page.evaluate("() => window.flag") == 1

        with pytest.raises(PlaywrightTimeout, match="not done within 300 ms"):
            wait_until(page, "() => false", timeout_ms=300)
    finally:
        page.close()
