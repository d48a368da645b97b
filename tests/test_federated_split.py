"""The Flower app and the operator's tools apart (issue 33): nothing under ``capefed/app`` imports ``capefed/ops``;
the production ServerApp and round carry no fault-injection hook; the drop-out demonstration's failing site
(``capefed.ops.dropout``, fault injection from outside the app) withholds exactly the releases and passes everything
else to the reviewed ClientApp. Its real-process run is tests/test_federated_faults.py
(``test_a_site_killed_after_the_noise_set_up_is_survived``); the in-memory one tests/test_federated_trust.py."""

from __future__ import annotations

import ast
import inspect
import tomllib
from pathlib import Path

from capefed.app import rounds, server_app
from capefed.app.messages import BUNDLE, Payload, bundle
from capefed.app.wire import to_records
from capefed.ops.dropout import asks_to_release, failing, fresh_signal, signal_file
from flwr.app import Message
from test_federated_flower_objects import task_identity  # noqa: F401  (the fixture: Flower stamps new messages)
from test_layout import _tool

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "federated" / "capefed" / "app"


def _message(*actions: str) -> Message:
    items = [(str(i), action, Payload({"round": f"r{i}"})) for i, action in enumerate(actions)]
    return Message(to_records(bundle(items)), 1, f"query.{BUNDLE}")


def test_the_flower_app_never_imports_the_operators_tools():
    assert _tool().app_imports_ops(ROOT) == []
    components = tomllib.loads((ROOT / "federated" / "pyproject.toml").read_text())["tool"]["flwr"]["app"]
    assert components["components"] == {"serverapp": "capefed.app.server_app:app",
                                         "clientapp": "capefed.app.client_app:app"}


def test_the_production_round_has_no_fault_injection_hook():
    """No checkpoint (or any other pause for a demonstration) in the ServerApp, its transport, the round or the run
    configuration: the round only ever asks its transport for nodes and exchanges."""
    config = tomllib.loads((ROOT / "federated" / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
    assert "checkpoint" not in config
    assert set(inspect.signature(server_app.FlowerTransport).parameters) == {"grid", "poll"}
    for path in sorted(APP.glob("*.py")):
        text = path.read_text()
        assert "checkpoint" not in text, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Yield) and isinstance(node.value, ast.Tuple) and node.value.elts:
                first = node.value.elts[0]
                assert isinstance(first, ast.Constant) and first.value in ("nodes", "exchange"), (path.name,
                                                                                                 node.lineno)
    assert not hasattr(rounds, "NOISE_READY")


def test_the_failing_site_withholds_exactly_the_releases(tmp_path):
    for actions in (("release",), ("setup", "release"), ("release", "confirm")):
        assert asks_to_release(_message(*actions)), actions
    for actions in (("hello",), ("setup",), ("hello", "setup"), ("confirm", "reveal"), ("result",)):
        assert not asks_to_release(_message(*actions)), actions
    assert not asks_to_release(Message(to_records(Payload({"status": "ok"})), 1, f"query.{BUNDLE}"))  # no bundle
    signal = fresh_signal(tmp_path, "east")
    assert signal == signal_file(tmp_path, "east") and signal.parent.is_dir() and not signal.exists()
    seen = []
    app = failing(lambda message, context: seen.append(message) or "answered", signal)
    for actions in (("hello",), ("setup",), ("confirm", "reveal"), ("result",)):
        message = _message(*actions)
        assert app(message=message, context=None) == "answered" and seen[-1] is message
    assert not signal.exists()
    signal.write_text("from an earlier run\n")
    assert fresh_signal(tmp_path, "east") == signal and not signal.exists()
