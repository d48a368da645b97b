"""benchmarks/suite.py's per-module CPU (benchmarks/cpu_plugin.py): a real pytest run in a subprocess, whose test
reaps a child that spent CPU, is recorded with the child's CPU under its module; without the variable nothing is."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.cpu_plugin import OUT_VARIABLE
from benchmarks.suite import module_cpu

ROOT = Path(__file__).resolve().parents[1]
BURN = '''
import subprocess, sys

CHILD = "import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass"

def test_a_child_burns():
    subprocess.run([sys.executable, "-c", CHILD], check=True)

def test_nothing():
    pass
'''


def _pytest(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "test_burn.py").write_text(BURN)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           "-p", "benchmarks.cpu_plugin", "--rootdir", str(tmp_path), str(tmp_path / "test_burn.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**{k: v for k, v in os.environ.items() if k != OUT_VARIABLE}, "PYTHONPATH": str(ROOT),
                               **env})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_each_test_is_recorded_with_the_cpu_of_the_children_it_reaped(tmp_path):
    prefix = tmp_path / "records"
    _pytest(tmp_path, {OUT_VARIABLE: str(prefix)})
    (path,) = tmp_path.glob("records-*.jsonl")
    records = {r["id"].split("::")[1]: r for r in map(json.loads, path.read_text().splitlines())}
    assert set(records) == {"test_a_child_burns", "test_nothing"}
    assert records["test_a_child_burns"]["children"] >= 0.4  # the child's CPU (user + system), counted once reaped
    assert records["test_nothing"]["children"] == 0.0
    assert all(r["self"] >= 0 and r["wall"] >= 0 for r in records.values())
    (module,) = module_cpu(prefix)
    assert module.endswith("test_burn.py")
    assert module_cpu(prefix)[module] >= 0.4


def test_without_the_variable_nothing_is_written(tmp_path):
    _pytest(tmp_path, {})
    assert not list(tmp_path.glob("*.jsonl"))


def test_the_sampler_counts_a_new_process_by_its_kind_and_not_one_started_before():
    """A process started before the sampler is not counted; one started after it is, under its kind, with at least
    the CPU it spent up to its last reading (it burns 0.6 s, then sleeps for ten sampling intervals); so is one that
    has ended but is not yet reaped (a zombie, whose command line reads as empty), by the command line it had. The
    sampler sees every new process of the machine (other tests' too): each of these carries its own token."""
    from benchmarks.process_cpu import SAMPLE_SECONDS, ProcessSampler, kind_of

    token = secrets.token_hex(8)
    burn = ("import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"
            f"time.sleep({10 * SAMPLE_SECONDS})  # {token}")
    earlier = subprocess.Popen([sys.executable, "-c", burn + " before streamlit"])
    sampler = ProcessSampler().start()
    subprocess.run([sys.executable, "-c", burn + " chromium"], check=True)
    zombie = subprocess.Popen([sys.executable, "-c", burn + " flower-superlink"])
    try:
        state = Path(f"/proc/{zombie.pid}/stat")
        while state.read_text().rsplit(")", 1)[1].split()[0] != "Z":  # ended, not reaped: nothing waits for it yet
            time.sleep(SAMPLE_SECONDS / 4)
        time.sleep(5 * SAMPLE_SECONDS)  # read as a zombie several times
        sampler.stop()
    finally:
        zombie.wait()
        earlier.wait()
    ours = {command.rsplit(token, 1)[1].strip(): (kind_of(command), cpu)
            for command, cpu in sampler.processes() if token in command}
    floor = 0.6 - 2 / os.sysconf("SC_CLK_TCK")  # /proc counts user and system CPU in whole clock ticks each
    assert set(ours) == {"chromium", "flower-superlink"}, ours  # not the one started before
    assert ours["chromium"][0] == "chromium" and floor <= ours["chromium"][1] < 5.0, ours
    assert ours["flower-superlink"][0] == "Flower SuperLink" and floor <= ours["flower-superlink"][1] < 5.0, ours


def test_each_kind_of_process_is_named_by_its_command_line():
    from benchmarks.process_cpu import kind_of

    venv = "/x/.venv/bin/"
    assert kind_of(f"/usr/bin/python {venv}flwr run /x/federated capefed-loopback --stream") == "flwr run"
    assert kind_of(f"/usr/bin/python {venv}flwr ls capefed-loopback --run-id 3") == "flwr ls"
    assert kind_of(f"/usr/bin/python {venv}flwr supernode register k.pub") == "flwr (other commands)"
    assert kind_of(f"{venv}python -m capefed.ops.runner /x/federated capefed-loopback --run-config a=1 --flwr "
                   f"{venv}flwr ") == "capefed runner"  # /proc ends each argument with a NUL, read as a space
    assert kind_of(f"{venv}python -m capefed.ops.worker --serve --runtime 127.0.0.1:1") == "capefed worker"
    assert kind_of(f"{venv}python -m capefed.ops.supernode --insecure") == "Flower SuperNode"
    assert kind_of(f"{venv}python {venv}flwr-serverapp --runtime-api-address 127.0.0.1:2") == "Flower ServerApp"
    assert kind_of(f"{venv}python -u -c import sys;exec(eval(sys.stdin.readline()))") == "pytest-xdist worker"
    assert kind_of("/usr/lib/chromium/chromium --type=renderer") == "chromium"
    assert kind_of("/bin/sleep 5") == "other"
