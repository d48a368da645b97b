"""One real run: a SuperLink, a helper and three sites as separate processes on loopback (Flower, insecure mode,
no Ray), one capePCA and one capeAGN round, started by the launcher of ``make federated`` in its own process.
The released aggregates and the recovered components must be identical to the in-process run of the same
functions with the same seeds, the messages must be the ones dpcore.cape.protocol lists, and no process may be left
behind, also when the test fails (the launcher stops everything; the test then stops whatever still carries
the run's token)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from capefed.app.messages import read_log
from capefed.app.rounds import settings_from_run_config
from capefed.ops.federation import APP_DIR, REPO_DIR, tagged_processes

from dpcore.federation import SiteBudget, plan_round, protocol_differences

pytestmark = pytest.mark.federated

# Safety limits only, so that the test never hangs: the run takes about a minute on an idle 2-core machine and
# several on a loaded one; how long it takes is measured by benchmarks/bench_federated.py, not asserted here.
RUN_TIMEOUT = 540.0  # seconds the launcher gives `flwr run`
TEST_TIMEOUT = 600.0  # the whole launcher, start to stop; then it is interrupted and everything is stopped


def _stop_leftovers(tag: str) -> list[int]:
    left = tagged_processes(tag)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.timeout(TEST_TIMEOUT + 60)
def test_superlink_helper_and_three_sites_as_processes(tmp_path):
    tag = secrets.token_hex(12)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_DIR), str(APP_DIR)]))
    start = time.monotonic()
    launcher = subprocess.Popen(
        [sys.executable, "-m", "capefed.ops.launch", "--workdir", str(tmp_path), "--tag", tag,
         "--timeout", str(RUN_TIMEOUT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    try:
        output, _ = launcher.communicate(timeout=TEST_TIMEOUT)
    finally:
        if launcher.poll() is None:  # interrupt it as Ctrl-C would: it stops its processes itself
            os.killpg(launcher.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                launcher.wait(timeout=15)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        left = _stop_leftovers(tag)
    seconds = time.monotonic() - start
    print(output)
    print(f"launcher finished in {seconds:.1f} s")
    assert left == [], f"processes of the run were still running: {left}"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["leftover"] == [] and summary["tag"] == tag
    assert launcher.returncode == 0, output[-3000:]
    rounds = json.loads((tmp_path / "outcome.json").read_text())["rounds"]
    # the in-process run, computed by the launcher with one BLAS thread like every party
    reference = json.loads((tmp_path / "simulation.json").read_text())
    assert [r["algorithm"] for r in rounds] == ["capePCA", "capeAGN"]
    logged = read_log(tmp_path / "message-log.json")  # the message log, read back with every field checked
    assert [r.status for r in logged.rounds] == ["released", "released"]
    for outcome, logged_round in zip(rounds, logged.rounds, strict=True):
        assert outcome["status"] == "released", outcome["reason"]
        simulated = reference[outcome["algorithm"]]
        assert set(outcome["aggregates"]) == set(simulated["aggregates"])
        for stage, aggregate in outcome["aggregates"].items():
            # JSON keeps every float exactly (shortest repr round-trips)
            assert np.array_equal(np.asarray(aggregate), np.asarray(simulated["aggregates"][stage])), stage
        for key, value in simulated["outputs"].items():
            assert np.array_equal(np.asarray(outcome["outputs"][key]), np.asarray(value)), key
        settings = settings_from_run_config(summary["run_config"], outcome["algorithm"], "check")
        plan = plan_round([SiteBudget.from_dict(b) for b in outcome["plan"]["sites"]], settings.round)
        assert logged_round.settings == plan.settings and logged_round.budgets == plan.budgets
        assert [e.to_dict() for e in logged_round.entries] == outcome["log"]
        assert protocol_differences(logged_round.entries, plan) == []
        sealed = [e for e in logged_round.entries if e.protocol and e.sender == "helper"]
        assert sealed and all(e.route == ("helper", "aggregator", e.receiver) for e in sealed)
    assert "identical to the in-process run" in output and "no process left" in output
