"""capefed.ops.supernode: the waits it shortens are where it expects them in the pinned Flower (the idle
``time.sleep(3)`` of the SuperNode's loop, the heartbeat interval the SuperNode announces and keeps and the life of a
task a worker claimed), and after ``shorten_waits`` they are IDLE_SECONDS and HEARTBEAT_SECONDS. Run in a subprocess: it
changes Flower's modules. capefed.ops.worker: a worker killed in the middle of its work is started again by its
supervisor."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from capefed.ops.federation import APP_DIR, REPO_DIR
from capefed.ops.processes import children
from capefed.ops.supernode import FLOWER_IDLE_SECONDS, HEARTBEAT_SECONDS, IDLE_SECONDS

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
assert 0.05 <= other < 1, other
start = time.monotonic(); loop.time.sleep(0.5); reply = time.monotonic() - start
assert 0.1 <= reply < 0.45, reply
assert "time.sleep(0.5)" in inspect.getsource(loop._push_messages)
assert loop.time.monotonic is time.monotonic
print("ok")
"""


def test_the_supernode_waits_are_shortened_where_flower_keeps_them():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_DIR), str(APP_DIR)]))
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120, env=env)
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
