"""Home page (AppTest): renders the explanation, the picture and the tour without errors."""

from __future__ import annotations

from conftest import app_test

from pages.common import PAGES


def test_home_renders_title_gain_and_tour():
    at = app_test()
    assert not at.exception
    assert at.title[0].value == "Private multi-site analysis with correlated noise"
    assert at.metric[0].value == "5.0x"  # the default scenario has five sites: equal-site gain S
    assert "correlation-assisted private estimation" in at.markdown[0].value
    assert len(at.error) == 0
    assert PAGES[0].path == "pages/home.py"
