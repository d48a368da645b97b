"""capefed.supernode: the two waits it shortens are where it expects them in the pinned Flower (the idle
``time.sleep(3)`` of the SuperNode's loop, the heartbeat interval the SuperNode announces and keeps), and after
``shorten_waits`` they are IDLE_SECONDS and HEARTBEAT_SECONDS. Run in a subprocess: it changes Flower's modules."""

from __future__ import annotations

import os
import subprocess
import sys

from capefed.federation import APP_DIR, REPO_DIR
from capefed.supernode import FLOWER_IDLE_SECONDS, HEARTBEAT_SECONDS, IDLE_SECONDS

CHECK = f"""
import inspect, time
import flwr.supercore.heartbeat as heartbeat
import flwr.supernode.fleet_http_connection as connection
import flwr.supernode.start_client_internal as loop
source = inspect.getsource(loop.start_client_internal)
assert "time.sleep({FLOWER_IDLE_SECONDS})" in source, "the idle wait moved"
assert connection.HEARTBEAT_DEFAULT_INTERVAL == heartbeat.HEARTBEAT_DEFAULT_INTERVAL == 30
assert "HEARTBEAT_DEFAULT_INTERVAL" in inspect.getsource(heartbeat.HeartbeatSender._run)
from capefed.supernode import shorten_waits
shorten_waits()
assert connection.HEARTBEAT_DEFAULT_INTERVAL == heartbeat.HEARTBEAT_DEFAULT_INTERVAL == {HEARTBEAT_SECONDS}
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
