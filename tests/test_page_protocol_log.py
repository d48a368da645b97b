"""AppTest of the Protocol walk-through's section on a real run: the message log of a federated run (the last
local run, or uploaded) beside the protocol's round for the same design, differences highlighted, bad files
refused with a message."""

from __future__ import annotations

import copy
import json

import pytest
from capefed.ops.demo import message_log_round, prepare_demo, run_in_memory
from conftest import app_test

import pages.shared.federated_log as federated_log
from dpcore.federation import LOG_FORMAT
from dpcore.limits import MAX_MESSAGE_LOG_BYTES

PAGE = "pages/protocol.py"


@pytest.fixture(scope="module")
def document(tmp_path_factory):
    demo = prepare_demo(tmp_path_factory.mktemp("page-log") / "data")
    return {"format": LOG_FORMAT, "rounds": [message_log_round(o.to_dict()) for o in run_in_memory(demo)]}


@pytest.fixture
def no_local_run(tmp_path, monkeypatch):
    monkeypatch.setattr(federated_log, "LOCAL_LOG", tmp_path / "federated-run" / "message-log.json")
    return tmp_path / "federated-run" / "message-log.json"


def _shown(at):
    """The section switched on (it is off by default: the page does not read any file unless asked)."""
    assert "pr_log_source" not in [r.key for r in at.radio]
    at.toggle(key="pr_log_show").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _upload(at, content: bytes, name: str = "message-log.json"):
    at = _shown(at)
    at.radio(key="pr_log_source").set_value("an uploaded message log").run()
    at.file_uploader(key="pr_log_upload").set_value((name, content, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _frame(at):
    return next(d.value for d in at.dataframe if "status" in d.value.columns)


def test_without_a_local_run_the_page_says_how_to_make_one(no_local_run):
    at = app_test(PAGE)
    assert not at.exception and not at.get("file_uploader")
    at = _shown(at)
    assert at.radio(key="pr_log_source").value == "an uploaded message log"
    at.radio(key="pr_log_source").set_value("the last local run").run()
    assert any("make federated" in i.value for i in at.info)
    assert not at.error


def test_the_last_local_run_is_shown_beside_the_protocol(no_local_run, document):
    no_local_run.parent.mkdir()
    no_local_run.write_text(json.dumps(document))
    at = app_test(PAGE)
    assert not at.exception and not [d for d in at.dataframe if "status" in d.value.columns]
    at = _shown(at)
    assert at.radio(key="pr_log_source").value == "the last local run"
    frame = _frame(at)
    assert set(frame["status"]) == {"same"}
    assert (frame["shape (run)"] == frame["shape (protocol)"]).all()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Kinds of message that differ"] == "0"
    assert metrics["Protocol messages in the run"] == metrics["Messages the protocol lists"]
    at.selectbox(key="pr_log_round").set_value("2. capeAGN (released)").run()
    frame = _frame(at)
    assert "M3~hat_north" in set(frame["carries"]) and set(frame["status"]) == {"same"}


def test_an_uploaded_log_with_a_changed_message_shows_the_difference(no_local_run, document):
    changed = copy.deepcopy(document)
    release = next(e for e in changed["rounds"][0]["entries"] if e["content"] == "Ahat_east")
    release["shape"], release["unique"] = [64, 63], 2016
    at = _upload(app_test(PAGE), json.dumps(changed).encode())
    frame = _frame(at)
    row = frame[frame["carries"] == "Ahat_east"].iloc[0]
    assert row["status"] == "different" and row["shape (run)"] == "64 x 63" and row["shape (protocol)"] == "64 x 64"
    assert {m.label: m.value for m in at.metric}["Kinds of message that differ"] == "1"


@pytest.mark.parametrize("content, words", [
    (b"{not json", "not valid JSON"),
    (json.dumps({"format": "other"}).encode(), "not a message log"),
    (b" " * (MAX_MESSAGE_LOG_BYTES + 1), "more than"),
])
def test_a_bad_upload_is_refused_with_a_message(no_local_run, content, words):
    at = _upload(app_test(PAGE), content)
    assert any(words in e.value for e in at.error), [e.value for e in at.error]
    assert not [d for d in at.dataframe if "status" in d.value.columns]
