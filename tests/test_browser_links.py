"""Real-browser tests of issue 21: a link copied after navigating, editing or Undo opens the same state (scenario and
the page's own settings) in a fresh browser context; the Sites table stores every numeric format it shows or a person
types, or says why not."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from test_browser import _assert_clean, _edit_grid_cell, _goto, _headline, _open, _wait_idle, browser, server  # noqa: F401

pytestmark = pytest.mark.browser


def _fresh(browser, url: str):  # noqa: F811 - the fixture of test_browser
    """The link opened in a new browser context (no cookies, no session): what a colleague sees."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    _wait_idle(page)
    page.locator("h1").first.wait_for(timeout=60_000)
    return context, page


def test_a_link_copied_after_navigating_editing_and_undo_opens_the_same_state(server, browser):  # noqa: F811
    page = _open(browser, server, 1280)
    first = _headline(page)
    page.get_by_role("button", name="CAPE stops helping: a strict site").click()
    _wait_idle(page)
    strict = _headline(page)
    assert strict.startswith("The aggregate carries 1.16 times")
    for title in ("Sites and budgets", "Noise design", "Gain G(n)"):  # every navigation clears Streamlit's query
        _goto(page, title)
        assert "scenario=1." in page.url, title
    page.get_by_text("geometric", exact=True).click()  # a page setting that matters: the family of sizes
    _wait_idle(page)
    assert "settings=" in page.url and "gain_family" in unquote(page.url)
    context, other = _fresh(browser, page.url)
    assert _headline(other) == strict
    assert other.locator('label:has-text("geometric") input').is_checked()  # the page's own setting came along
    assert not other.locator('label:has-text("one-large") input').is_checked()
    _assert_clean(other, "gain page from the link")
    context.close()
    _goto(page, "Home")
    page.locator(".st-key-change_panel").get_by_role("button", name="Undo").click()
    _wait_idle(page)
    assert _headline(page) == first
    context, other = _fresh(browser, page.url)
    assert _headline(other) == first
    context.close()
    page.close()
