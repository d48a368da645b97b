"""The Flower side without processes: the ServerApp's transport (push_messages / pull_messages with a time limit)
and the ClientApp's handler, with real flwr Message, RecordDict and Context objects, wired by a Grid stand-in
that delivers each message to the node's ClientApp in the same process. Checks that a whole round goes through
the Flower records unchanged (aggregates identical to the in-process run), that a node whose reply never comes
is reported after the time limit, and that a ClientApp error reply stops the round naming the site."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from capefed.app import client_app
from capefed.app.messages import Payload
from capefed.app.pacing import RAMP, pause
from capefed.app.rounds import run_rounds, settings_from_run_config
from capefed.app.server_app import POLL_LONGEST, FlowerTransport
from capefed.app.wire import from_records, to_records
from capefed.ops.demo import prepare_demo, simulate
from flwr.app import Context, Error, Message, RecordDict
from flwr.common.constant import ErrorCode
from flwr.supercore.task_identity import TaskIdentity

_RUNS = itertools.count()


class LocalGrid:
    """Delivers every pushed message to the addressed node's ClientApp at once; ``silent`` nodes never reply,
    ``failing`` nodes reply with a Flower error."""

    def __init__(self, nodes, silent=(), failing=(), code=0, reason="ClientApp raised ValueError"):
        self.contexts = {i + 1: Context(run_id=7, node_id=i + 1, node_config=dict(config), state=RecordDict(),
                                        run_config={}) for i, config in enumerate(nodes)}
        self.silent, self.failing = set(silent), set(failing)
        self.code, self.reason = code, reason
        self.replies: dict[str, Message] = {}
        self.count = 0

    def get_node_ids(self):
        return list(self.contexts)

    def push_messages(self, messages):
        ids = []
        for message in messages:
            self.count += 1
            message_id = f"m{self.count}"
            message.metadata.__dict__["_message_id"] = message_id
            node = message.metadata.dst_node_id
            assert message.metadata.message_type == "query.bundle"
            if node in self.failing:
                self.replies[message_id] = Message(Error(code=self.code, reason=self.reason), reply_to=message)
            elif node not in self.silent:
                self.replies[message_id] = client_app.handle(message, self.contexts[node])
            ids.append(message_id)
        return ids

    def pull_messages(self, message_ids):
        return [self.replies.pop(i) for i in list(message_ids) if i in self.replies]


@pytest.fixture(autouse=True)
def task_identity():
    """Flower stamps new messages with the identity of the running task (set by flwr-serverapp in a real run)."""
    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 7, 0, 1
    yield
    TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return prepare_demo(tmp_path_factory.mktemp("flower-objects") / "data", ledger_rounds=10_000)


def _settings(demo, timeout=5.0):
    config = dict(demo.run_config) | {"timeout": timeout, "connect-timeout": 1.0}
    run = next(_RUNS)  # a round id of its own per call: a site never releases a stage of a round id twice
    return [settings_from_run_config(config, a, f"7/{a}/{run}") for a in ("capePCA", "capeAGN")]


def test_records_carry_payloads_unchanged():
    payload = Payload({"n": 3, "x": 0.1, "s": "north", "b": b"\x00\xff", "names": ["a", "b"], "keys": [b"k1", b"k2"]},
                      {"f": np.random.default_rng(0).standard_normal(7), "w": np.ones((3, 2))})
    back = from_records(to_records(payload))
    assert back.config == payload.config
    for key, values in payload.arrays.items():
        assert back.arrays[key].dtype == values.dtype and np.array_equal(back.arrays[key], values)


def test_a_round_through_flower_records_equals_the_in_process_run(demo):
    grid = LocalGrid(demo.nodes)
    outcomes = run_rounds(FlowerTransport(grid, poll=0.01), _settings(demo))
    for outcome, settings in zip(outcomes, _settings(demo), strict=True):
        assert outcome.status == "released", outcome.reason
        simulated = simulate(demo.nodes, settings)
        for stage, aggregate in outcome.aggregates.items():
            assert np.array_equal(aggregate, simulated.aggregates[stage])
    # the private keys stayed in the sites' node state
    for context in grid.contexts.values():
        if context.node_config["role"] == "site":
            assert any(key.endswith("/key") for key in context.state.config_records["capefed"])


def test_a_node_that_never_replies_is_reported_after_the_time_limit(demo):
    grid = LocalGrid(demo.nodes, silent={3})
    start = time.monotonic()
    outcomes = run_rounds(FlowerTransport(grid, poll=0.01), _settings(demo, timeout=0.3))
    assert time.monotonic() - start < 5
    for outcome in outcomes:
        assert outcome.status == "stopped" and "node(s) 3 did not answer the hello within 0.3 s" in outcome.reason


def test_the_pause_between_polls_is_a_tenth_of_the_quiet_within_its_bounds():
    assert RAMP == 0.1
    assert pause(0.0, 0.25, 1.0) == 0.25 and pause(2.5, 0.25, 1.0) == 0.25  # a tenth of 2.5 s is the shortest
    assert pause(4.0, 0.25, 1.0) == pytest.approx(0.4) and pause(10.0, 0.25, 1.0) == pytest.approx(1.0)
    assert pause(600.0, 0.25, 1.0) == 1.0 and pause(600.0, 0.5, 2.0) == 2.0


class CountingGrid(LocalGrid):
    """A LocalGrid that records when the transport asked for replies."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pulls: list[float] = []

    def pull_messages(self, message_ids):
        self.pulls.append(time.monotonic())
        return super().pull_messages(message_ids)


def test_the_aggregator_asks_less_often_the_longer_it_waits_and_never_past_the_deadline(demo):
    """A node that never answers a 12 s step: the transport's requests start every ``poll`` seconds, their gaps grow
    with the quiet (a tenth of it) up to POLL_LONGEST, and the step still ends at its deadline, not a pause later."""
    grid = CountingGrid(demo.nodes, silent={3})
    transport = FlowerTransport(grid, poll=0.01)
    requests = {node: Payload({"n": 0}) for node in grid.get_node_ids()}
    grid.push_messages = lambda messages: [f"m{i}" for i, _ in enumerate(messages)]  # nothing ever answers
    start = time.monotonic()
    assert transport.exchange("bundle", requests, timeout=12.0) == {}
    seconds = time.monotonic() - start
    assert 12.0 <= seconds < 12.0 + POLL_LONGEST, seconds  # the last pause was cut at the deadline
    # after a request at q the transport sleeps the paced pause of its quiet or up to its deadline, whichever is
    # shorter: the next request comes no sooner (a loaded machine only adds to the gap). Its quiet counts from its own
    # start, which lies between ``start`` and its first request: at least q - pulls[0] (from ``start`` it could be
    # less, by the time the transport took to send its messages: on a loaded machine 2 % of a pause and more); its
    # deadline is at least start + 12
    pulls = np.asarray(grid.pulls)
    least = [min(pause(q - pulls[0], 0.01, POLL_LONGEST), start + 12.0 - q) for q in pulls[:-1]]
    assert np.all(np.diff(pulls) >= 0.98 * np.asarray(least)), list(zip(np.diff(pulls), least, strict=True))
    assert np.diff(pulls).max() >= 0.9 * POLL_LONGEST  # after about 10 s of quiet: the longest pause
    # at most as many requests as the pacing formula makes when every sleep and request takes no time (a slower
    # machine only lengthens the gaps): about 60, where a fixed 0.01 s poll made 1,200
    paced, t = 0, 0.0
    while t < 12.0:
        paced += 1
        t += min(pause(t, 0.01, POLL_LONGEST), 12.0 - t)
    assert len(grid.pulls) <= paced + 1 and paced < 80, (len(grid.pulls), paced)


def test_a_crashed_worker_is_a_node_that_did_not_answer_not_a_refusal(demo):
    """Flower's "ClientApp stopped responding" (the SuperNode's reply for a worker that died inside its task) says the
    node answered nothing: the transport counts it as silence (server_app.NO_ANSWER), as after the deadline, so a
    drop-out round can go on without it; a ClientApp that raised is that node's refusal."""
    crashed = LocalGrid(demo.nodes, failing={3}, code=ErrorCode.CLIENT_APP_CRASHED,
                        reason="ClientApp stopped responding.")
    # the replies are made inside push_messages, within the step's time: 3 s leaves room for a loaded machine
    for outcome in run_rounds(FlowerTransport(crashed, poll=0.01), _settings(demo, timeout=3.0)):
        assert outcome.status == "stopped" and "node(s) 3 did not answer the hello within 3 s" in outcome.reason
        assert "stopped responding" not in outcome.reason
    raised = LocalGrid(demo.nodes, failing={3})
    for outcome in run_rounds(FlowerTransport(raised, poll=0.01), _settings(demo, timeout=3.0)):
        assert outcome.status == "stopped" and "node 3 failed: ClientApp raised ValueError" in outcome.reason


def test_a_clientapp_error_stops_the_round_naming_the_site(demo):
    grid = LocalGrid(demo.nodes)
    transport = FlowerTransport(grid, poll=0.01)
    original = grid.push_messages

    def fail_releases(messages):  # node 2 answers the hello and shares, then its ClientApp fails
        messages = list(messages)
        if grid.count >= 5:  # hello: 4 messages, shares: 1; then the releases
            grid.failing = {2}
        return original(messages)

    grid.push_messages = fail_releases
    outcomes = run_rounds(transport, _settings(demo))
    name = demo.nodes[1]["name"]
    for outcome in outcomes:
        assert outcome.status == "stopped" and outcome.sites == (name,)
        assert f"site {name}: node 2 failed: ClientApp raised ValueError" in outcome.reason
        assert outcome.aggregates == {}
