"""capefed.ops.supernode: the waits it shortens are where it expects them in the pinned Flower (the idle
``time.sleep(3)`` of the SuperNode's loop, the heartbeat interval the SuperNode announces and keeps and the life of a
task a worker claimed), and after ``shorten_waits`` they are IDLE_SECONDS and HEARTBEAT_SECONDS. Run in a subprocess: it
changes Flower's modules. capefed.ops.worker: a worker killed in the middle of its work is started again by its
supervisor. The SuperNode's guards against a reply no worker will send (``guard_replies``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from capefed.ops.federation import APP_DIR, REPO_DIR
from capefed.ops.processes import children
from capefed.ops.supernode import FLOWER_IDLE_SECONDS, HEARTBEAT_SECONDS, IDLE_LONGEST, IDLE_SECONDS

CHECK = f"""
import inspect, time
import flwr.supercore.heartbeat as heartbeat
import flwr.supercore.corestate.in_memory_corestate as tasks
import flwr.supernode.fleet_http_connection as connection
import flwr.supernode.start_client_internal as loop
source = inspect.getsource(loop.start_client_internal)
assert "time.sleep({FLOWER_IDLE_SECONDS})" in source, "the idle wait moved"
assert connection.HEARTBEAT_DEFAULT_INTERVAL == heartbeat.HEARTBEAT_DEFAULT_INTERVAL == 30
assert tasks.HEARTBEAT_DEFAULT_INTERVAL == 30
assert "HEARTBEAT_DEFAULT_INTERVAL" in inspect.getsource(heartbeat.HeartbeatSender._run)
assert "HEARTBEAT_DEFAULT_INTERVAL" in inspect.getsource(tasks.InMemoryCoreState.acknowledge_task_heartbeat)
from capefed.ops.supernode import shorten_waits
shorten_waits()
assert connection.HEARTBEAT_DEFAULT_INTERVAL == heartbeat.HEARTBEAT_DEFAULT_INTERVAL == {HEARTBEAT_SECONDS}
assert tasks.HEARTBEAT_DEFAULT_INTERVAL == {HEARTBEAT_SECONDS}
start = time.monotonic(); loop.time.sleep({FLOWER_IDLE_SECONDS}); idle = time.monotonic() - start
start = time.monotonic(); loop.time.sleep(0.05); other = time.monotonic() - start
assert {IDLE_SECONDS} <= idle < {FLOWER_IDLE_SECONDS} - 1, idle
loop.time.news = time.monotonic() - 15  # 15 s without a message: a tenth of it, 1.5 s (capefed.app.pacing)
start = time.monotonic(); loop.time.sleep({FLOWER_IDLE_SECONDS}); paced = time.monotonic() - start
assert 1.5 <= paced < {FLOWER_IDLE_SECONDS} - 0.2, paced
loop.time.news = time.monotonic() - 600
start = time.monotonic(); loop.time.sleep({FLOWER_IDLE_SECONDS}); longest = time.monotonic() - start
assert {IDLE_LONGEST} <= longest < {FLOWER_IDLE_SECONDS}, longest
loop.time.heard()  # a message: short again
start = time.monotonic(); loop.time.sleep({FLOWER_IDLE_SECONDS}); idle = time.monotonic() - start
assert {IDLE_SECONDS} <= idle < {FLOWER_IDLE_SECONDS} - 1, idle
assert 0.05 <= other < 1, other
start = time.monotonic(); loop.time.sleep(0.5); reply = time.monotonic() - start
assert 0.1 <= reply < 0.45, reply
assert "time.sleep(0.5)" in inspect.getsource(loop._push_messages)
assert loop.time.monotonic is time.monotonic
import flwr.supernode.nodestate.in_memory_nodestate as nodestate
push = inspect.getsource(loop._push_messages)
assert "send(message, object_tree" in push, "the reply's send moved"
assert "object_store.get(tree.object_id)) == b\"\"" in push, "the wait for the reply's contents moved"
assert "TaskType.AGENT_APP" in inspect.getsource(nodestate.InMemoryNodeState.finish_task)
assert "CLIENT_APP" not in inspect.getsource(nodestate.InMemoryNodeState.finish_task), "Flower answers it now"
assert nodestate.CLIENT_APP_CRASHED_ERROR.code and loop.iterate_object_tree
assert "is_retrieved" in nodestate.MessageEntry.__dataclass_fields__
assert "self.lock_msg_store" in inspect.getsource(nodestate.InMemoryNodeState.__init__)
from capefed.ops.supernode import guard_replies
guard_replies(); guard_replies()
assert loop._push_messages.guarded
print("ok")
"""


def test_the_supernode_waits_are_shortened_where_flower_keeps_them():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_DIR), str(APP_DIR)]))
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


GUARD = '''
import threading
import time
from capefed.ops.supernode import ReplyLost, _complete_before_sending, guard_replies
guard_replies()
import flwr.supernode.start_client_internal as loop
from flwr.app import Message, RecordDict, ArrayRecord
import numpy as np
from flwr.common.constant import ErrorCode, SubStatus
from flwr.supercore.constant import TaskType
from flwr.supercore.object_store import ObjectStoreFactory
from flwr.supernode.nodestate.in_memory_nodestate import InMemoryNodeState
from flwr.supercore.inflatable.inflatable_object import get_object_tree

store = ObjectStoreFactory().store()
state = InMemoryNodeState(store)
state.set_node_id(7)
RUN = 5
from flwr.supercore.task_identity import TaskIdentity
TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = RUN, 1, 1  # the aggregator's side, building a request

def received(kind):
    msg = Message(RecordDict(), dst_node_id=7, message_type=kind)
    loop._insert_message(msg, state, store)
    (taken,) = state.get_messages_legacy(run_ids=[RUN], is_reply=False)  # the worker takes it
    task = state.create_task(task_type=TaskType.CLIENT_APP, run_id=RUN)
    token = state.claim_task(task)
    assert token and state.activate_task(task)
    return taken, task

# a ClientApp task that ends FAILED without a reply is answered with Flower's crash error
taken, task = received("query")
assert state.finish_task(task, SubStatus.FAILED, "the worker's call failed")
(reply,) = state.get_messages_legacy(is_reply=True)
assert reply.metadata.reply_to_message_id == taken.metadata.message_id
assert reply.has_error() and reply.error.code == ErrorCode.CLIENT_APP_CRASHED, reply.error
state.delete_messages(message_ids=[reply.metadata.message_id, taken.metadata.message_id])

# a ClientApp task that ends FAILED before its worker took the message: answered too (no other task will take it)
msg = Message(RecordDict(), dst_node_id=7, message_type="query")
loop._insert_message(msg, state, store)
task = state.create_task(task_type=TaskType.CLIENT_APP, run_id=RUN)
assert state.claim_task(task) and state.activate_task(task)
assert state.finish_task(task, SubStatus.FAILED, "the worker could not read its task")
(reply,) = state.get_messages_legacy(is_reply=True)
assert reply.metadata.reply_to_message_id == msg.metadata.message_id and reply.has_error()
state.delete_messages(message_ids=[reply.metadata.message_id, msg.metadata.message_id])

# a reply whose part never arrives: waited for while the task lives, dropped once it ended
taken, task = received("query")
answer = Message(RecordDict({"a": ArrayRecord([np.ones(3)])}), reply_to=taken)
answer.metadata.__dict__["_message_id"] = answer.object_id
tree = get_object_tree(answer)
state.store_message(answer)
store.preregister(RUN, tree)  # handed over (PushMessages); its contents never pushed
sent = []

def push():  # the SuperNode's loop pushing the reply it finds in its store (send and push_object stand in)
    loop._push_messages(state=state, object_store=store, send=lambda *a: sent.append(a) or (set(), ""),
                        push_object=lambda *a: None)

thread = threading.Thread(target=push, daemon=True); thread.start()
time.sleep(1.0)
assert thread.is_alive() and not sent  # its worker still holds the task: waiting
state.finish_task(task, SubStatus.COMPLETED, "")
thread.join(10)
assert not thread.is_alive() and not sent  # dropped, never sent; the loop goes on
assert state.get_messages_legacy() == []
try:
    _complete_before_sending(lambda *a: None, store, state, loop.iterate_object_tree)(answer, tree, 0.0)
except ReplyLost as exc:
    assert "never arrived: its worker ended without them" in str(exc)

# a complete reply is sent at once
taken, task = received("query")
done = Message(RecordDict(), reply_to=taken)
done.metadata.__dict__["_message_id"] = done.object_id
loop._insert_message(done, state, store)
from capefed.ops.supernode import shorten_waits
shorten_waits()
loop.time.news = time.monotonic() - 600  # long idle: the node's next idle wait would be its longest
push()
assert len(sent) == 1
assert time.monotonic() - loop.time.news < 5  # the message it handled makes the next idle waits short again
print("ok")
'''


def test_the_supernode_never_waits_for_a_reply_no_worker_will_send():
    """Under capefed.ops.supernode a ClientApp task that ends FAILED without a reply is answered with Flower's crash
    error (Flower 1.41 answers only a failed AgentApp task: its loop waited for that reply forever), and a reply whose
    contents never arrive is waited for only while its worker holds the task, then dropped (Flower waited forever).
    Flower's node state and the guards in a subprocess (they change Flower's modules)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_DIR), str(APP_DIR)]))
    done = subprocess.run([sys.executable, "-c", GUARD], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def _worker_children(pid: int) -> list[int]:
    return children().get(pid, [])


def test_a_killed_worker_is_started_again_by_its_supervisor():
    """``python -m capefed.ops.worker`` keeps one serving child; SIGKILL it and a new one takes its place; SIGTERM to
    the supervisor stops both. (No SuperNode: the child keeps asking for one, which is all it needs to stay up.)"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_DIR), str(APP_DIR)]))
    supervisor = subprocess.Popen([sys.executable, "-m", "capefed.ops.worker", "--runtime", "127.0.0.1:9",
                                   "--poll", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = _wait_for(lambda: _worker_children(supervisor.pid), 60)
        os.kill(first[0], signal.SIGKILL)
        second = _wait_for(lambda: [c for c in _worker_children(supervisor.pid) if c != first[0]], 60)
        assert second and supervisor.poll() is None
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=30) == 0
        assert not _worker_children(supervisor.pid)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
    output = supervisor.stdout.read()
    assert "ended with signal 9; starting it again" in output, output[-2000:]


def _wait_for(found, seconds: float):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = found()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"nothing after {seconds} s")


def test_a_task_ends_only_after_its_last_heartbeat_and_a_refused_call_never_stops_the_worker(monkeypatch):
    """A heartbeat still under way when the task ended reached the SuperNode after the task's end: refused (401), and
    Flower's HTTP retries answer a 401 with SIGINT to the whole worker, which then stopped in the middle of its next
    task. run_task joins its heartbeats before it ends the task, and its calls give up on a 401 without a signal."""
    import flwr.supernode.runtime.run_clientapp as runtime
    import httpx
    from capefed.ops import worker
    from flwr.supercore.runtime import RuntimeHttpClient

    events: list[str] = []
    beating = threading.Event()

    def heartbeat(self, request):
        events.append("beat")
        beating.set()
        time.sleep(0.5)  # a slow answer on a loaded machine: the task's reply is pushed meanwhile
        events.append("beat done")

    message = type("M", (), {"metadata": type("D", (), {"message_type": "query"})()})()
    fab, run = type("F", (), {"hash_str": "h"})(), type("R", (), {"run_id": 1})()
    monkeypatch.setattr(worker, "HEARTBEAT_SECONDS", 0.01)
    monkeypatch.setattr(RuntimeHttpClient, "SendTaskHeartbeat", heartbeat)
    monkeypatch.setattr(runtime, "pull_task_input", lambda client: (message, None, run, fab))
    monkeypatch.setattr(runtime, "push_message", lambda client, reply, context: beating.wait(60))
    monkeypatch.setattr(runtime, "push_task_output", lambda **kw: events.append("end"))
    line = worker.run_task("127.0.0.1:9", "token", lambda message, context: "reply", {"h": None})
    assert line == "answered query of run 1"
    assert beating.is_set() and events[-1] == "end" and "beat done" in events, events

    interrupted = []
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    try:
        refused = httpx.Response(401, request=httpx.Request("POST", "http://127.0.0.1:9/"))

        def call():
            raise httpx.HTTPStatusError("refused", request=refused.request, response=refused)

        try:
            worker._task_retries().invoke(call)
        except httpx.HTTPStatusError as exc:
            assert exc.response.status_code == 401
        else:
            raise AssertionError("a refused call must end with its error")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert interrupted == []


def test_a_task_builds_no_certificate_store(monkeypatch):
    """The task's calls and its heartbeats go over plain HTTP to the SuperNode on the same host: neither client loads
    the system's certificates (httpx's default ``verify=True`` costs about 20 ms of CPU for every client)."""
    import ssl

    import flwr.supernode.runtime.run_clientapp as runtime
    from capefed.ops import worker
    from flwr.supercore.runtime import RuntimeHttpClient

    stores: list[str] = []
    beats = threading.Event()
    original = ssl.create_default_context

    def counted(*args, **kwargs):
        stores.append("store")
        return original(*args, **kwargs)

    message = type("M", (), {"metadata": type("D", (), {"message_type": "query"})()})()
    fab, run = type("F", (), {"hash_str": "h"})(), type("R", (), {"run_id": 1})()
    monkeypatch.setattr(ssl, "create_default_context", counted)
    monkeypatch.setattr(worker, "HEARTBEAT_SECONDS", 0.01)
    monkeypatch.setattr(RuntimeHttpClient, "SendTaskHeartbeat", lambda self, request: beats.set())
    monkeypatch.setattr(runtime, "pull_task_input", lambda client: (message, None, run, fab))
    monkeypatch.setattr(runtime, "push_message", lambda client, reply, context: beats.wait(60))
    monkeypatch.setattr(runtime, "push_task_output", lambda **kw: None)
    assert worker.run_task("127.0.0.1:9", "token", lambda message, context: "reply", {"h": None}) == (
        "answered query of run 1")
    assert beats.is_set() and stores == []
