"""The Protocol walk-through reads a deployment's message log: the file the aggregator writes (run configuration
``log=``), named by CAPEFED_MESSAGE_LOG. The three-host test (tests/test_federated_hosts.py) shows the log of a
real deployment on the page; these check the source's behaviour with a log the ServerApp's own writer produced."""

from __future__ import annotations

import pytest
from capefed.app.messages import message_log_round, write_log
from capefed.ops.demo import prepare_demo, run_in_memory
from conftest import app_test

from pages.shared.federated_log import DEPLOYMENT_LOG_VARIABLE

PAGE = "pages/protocol.py"


def show_deployment_log(monkeypatch, path):
    """The Protocol page with CAPEFED_MESSAGE_LOG=path, its real-run section switched on."""
    monkeypatch.setenv(DEPLOYMENT_LOG_VARIABLE, str(path))
    at = app_test(PAGE)
    at.toggle(key="pr_log_show").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def deployment_log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("deployment")
    path = folder / "message-log.json"
    write_log(path, [message_log_round(o.to_dict()) for o in run_in_memory(prepare_demo(folder / "data"),
                                                                          ("capePCA",))])
    return path


def test_the_deployments_log_is_the_first_source_when_named(monkeypatch, deployment_log):
    at = show_deployment_log(monkeypatch, deployment_log)
    radio = at.radio(key="pr_log_source")
    assert radio.value == "the deployment's log" and len(radio.options) == 3
    assert any("capePCA: released" in s.value for s in at.success)
    frame = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert set(frame["status"]) == {"same"}


def test_a_deployment_log_not_written_yet_is_said_so(monkeypatch, tmp_path):
    at = show_deployment_log(monkeypatch, tmp_path / "not-yet.json")
    assert any("not-yet.json" in i.value and "log=" in i.value for i in at.info)
    assert not at.error


def test_without_the_variable_the_page_offers_the_two_usual_sources(monkeypatch):
    monkeypatch.delenv(DEPLOYMENT_LOG_VARIABLE, raising=False)
    at = app_test(PAGE)
    at.toggle(key="pr_log_show").set_value(True).run()
    assert "the deployment's log" not in at.radio(key="pr_log_source").options
