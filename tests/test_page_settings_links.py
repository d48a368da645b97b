"""Topic models', Privacy-utility's and the Planner's own settings travel in the address (``?settings=``) as every
other page's do (issue 21's leftover): a change shows up in the link, and the link opens the same settings in a new
session; a value out of range is refused with a message and the default kept."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT


def _settings(at) -> dict:
    value = at.query_params.get("settings")
    value = value[0] if isinstance(value, list) else value
    return json.loads(value) if value else {}


def _fresh(page: str, settings: dict):
    """The page opened from a link holding ``settings`` (a new session)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["settings"] = json.dumps(settings, separators=(",", ":"))
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page, changes", [
    ("pages/topic_models.py", {"tm_sites": 7, "tm_runs": 2, "tm_calibration": "classic"}),
    ("pages/privacy_utility.py", {"pu_mode": "scenario", "pu_family": "otd", "pu_d": 12, "pu_runs": 3}),
    ("pages/planner.py", {"plan_family": "lda", "plan_solve": "sites", "plan_error": 0.25}),
])
def test_a_link_opens_the_pages_own_settings(page, changes):
    at = _fresh(page, changes)
    for key, value in changes.items():
        assert at.session_state[key] == value, key
    assert _settings(at) == changes


def test_a_change_reaches_the_address_and_a_bad_value_is_refused():
    at = _fresh("pages/topic_models.py", {})
    at.number_input(key="tm_docs").set_value(400).run()
    assert _settings(at) == {"tm_docs": 400}
    bad = _fresh("pages/topic_models.py", {"tm_sites": 10**6, "tm_runs": 2})
    assert bad.session_state["tm_sites"] == 20 and bad.session_state["tm_runs"] == 2
    assert any("Sites S (tm_sites) is out of range: allowed is an integer from 1 to 100" in w.value
               for w in bad.warning)
