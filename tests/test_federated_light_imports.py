"""The federation's processes start without scipy.stats (issue 34: every run starts a runner, a ServerApp and
``flwr`` commands, and scipy.stats alone costs a process about 1 CPU s to import), and the two quantiles that used it
are still scipy.stats' own: a site's sample-variance check of a received noise term (``capefed.app.siterelease``:
the chi-square law's CHI2_TAIL quantiles) and the aggregator's release range (``dpcore.federation.masking``: the
normal's upper RELEASE_TAIL / (2 entries) quantile, checked in tests/test_federated_wire.py)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from capefed.app.siterelease import CHI2_TAIL, _variance_problem
from scipy.stats import chi2

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("n", [32, 33, 100, 784 * 785 // 2, 10**6])
def test_the_variance_check_refuses_exactly_outside_scipy_stats_chi_square_bounds(n):
    """A term whose sum of squares is just inside scipy.stats.chi2's two CHI2_TAIL quantiles (times the design's
    variance) passes; just outside either one it is refused, naming both bounds."""
    var = 2.5
    lo, hi = chi2.ppf(CHI2_TAIL, n) * var, chi2.isf(CHI2_TAIL, n) * var

    def term(sum_of_squares: float) -> np.ndarray:
        values = np.ones(n)
        return values * np.sqrt(sum_of_squares / n)

    for inside in (lo * (1 + 1e-9), hi * (1 - 1e-9), n * var):
        assert _variance_problem("e_s", term(inside), var, iid=True) is None, inside
    for outside in (lo * (1 - 1e-6), hi * (1 + 1e-6)):
        problem = _variance_problem("e_s", term(outside), var, iid=True)
        assert problem is not None and "outside the chi-square bounds" in problem, outside
        assert f"{lo / n:.4g} to {hi / n:.4g}" in problem


def test_the_processes_of_a_run_do_not_import_scipy_stats():
    """The modules a run's processes load (the runner, the ServerApp, the ClientApp and the ops commands that start
    a federation) leave scipy.stats out: a fresh interpreter that imports them all has not loaded it."""
    modules = ["capefed.ops.runner", "capefed.app.server_app", "capefed.app.client_app", "capefed.ops.launch",
               "capefed.ops.worker", "capefed.ops.supernode"]
    assert _loaded_after_importing(modules, ("scipy.stats",)) == []


def _loaded_after_importing(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules whose names start with any of ``prefixes`` that a fresh interpreter has loaded once it imported
    ``modules``."""
    code = (f"import sys\nimport {', '.join(modules)}\n"
            f"print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={"PYTHONPATH": f"{ROOT}:{ROOT / 'federated'}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    return ast.literal_eval(done.stdout.strip())


def test_the_runner_and_the_key_and_roster_commands_load_no_scipy():
    """capefed.app.dp imports each dpcore name on first use: the runner (started for every run) and the key and roster
    commands read files and check them, and a fresh interpreter that imports them has loaded neither scipy nor the
    federation package (with every name imported up front each cost about 0.6 CPU s more to start)."""
    loaded = _loaded_after_importing(["capefed.ops.runner", "capefed.ops.keys", "capefed.ops.roster"],
                                     ("scipy", "dpcore.federation", "dpcore.agn"))
    assert loaded == [], loaded[:10]


def test_every_name_of_dp_is_its_dpcore_modules_own_and_no_other_name_is_there():
    import importlib

    from capefed.app import dp

    for name in dp.__all__:
        assert getattr(dp, name) is getattr(importlib.import_module(dp._MODULE_OF[name]), name), name
    assert dir(dp) == dp.__all__
    with pytest.raises(AttributeError, match="no attribute 'not_a_dpcore_name'"):
        dp.not_a_dpcore_name  # noqa: B018
