"""Sweep engine: specification, exact agreement with the single-point runs, common random numbers, nested
samples, statistics of the summary, monotone curves, capePCA vs pooled AG, progress, stop, cache."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from dpcore import agn, experiments, pca
from dpcore.cape import design_collusion_robust
from dpcore.data import load_bundled, preprocess, split_sites
from dpcore.experiments import OtdData, PcaData, SweepSpec
from dpcore.limits import MAX_SWEEP_RUNS
from dpcore.scenario import scenario_from_dict
from dpcore.validation import InputError

DIGITS = PcaData(dataset="digits", k=5, solver_dtype="float64")


def equal_sites(n_sites: int, size: int, eps: float = 1.0, delta: float = 1e-3, **extra):
    sites = [{"name": f"s{i + 1}", "n": size, "eps": eps, "delta": delta} for i in range(n_sites)]
    return scenario_from_dict({"sites": sites, **extra})


def pca_spec(parameter="eps", grid=(0.3, 1.0, 3.0), algorithms=("cape", "conv", "nonpriv"), runs=3, seed=3,
             scenario=None, data=DIGITS) -> SweepSpec:
    return SweepSpec(family="pca", parameter=parameter, grid=grid, algorithms=algorithms,
                     scenario=scenario or equal_sites(4, 300), data=data, runs=runs, seed=seed)


def otd_spec(parameter="eps", grid=(1.0, 10.0), algorithms=("cape", "conv", "nonpriv"), runs=2, seed=5,
             scenario=None, data=None) -> SweepSpec:
    return SweepSpec(family="otd", parameter=parameter, grid=grid, algorithms=algorithms,
                     scenario=scenario or equal_sites(3, 600, eps=3.0),
                     data=data or OtdData(model="mog", dim=6, k=3), runs=runs, seed=seed)


def pivot(result, algorithm, metric):
    """runs x grid values of one algorithm and metric."""
    t = result.table
    rows = t[(t["algorithm"] == algorithm) & (t["metric"] == metric)]
    return rows.pivot(index="run", columns="value", values="result").to_numpy()


# ----------------------------------------------------------------------------------------------
# Specification
# ----------------------------------------------------------------------------------------------

def test_spec_is_normalised_and_round_trips_through_json():
    spec = SweepSpec(family="pca", parameter="eps", grid=[10, 0.1, 1], algorithms=["conv", "cape", "conv"],
                     scenario=equal_sites(3, 100),
                     data=PcaData(dataset="digits", k=4, dim=999, spectrum="exponential"), runs=2, seed=7)
    assert spec.grid == (0.1, 1.0, 10.0)
    assert spec.algorithms == ("conv", "cape")
    old = spec.replace(algorithms=("cape", "nondp", "nonpriv"))  # the old name of the non-private reference
    assert old.algorithms == ("cape", "nonpriv")
    assert spec.data.dim == 64 and spec.data.spectrum == "power"  # settings of the synthetic data do not apply
    text = spec.to_json()
    assert json.loads(text)["grid"] == [0.1, 1.0, 10.0]
    again = experiments.spec_from_json(text)
    assert again == spec and again.to_json() == text
    assert SweepSpec(family="pca", parameter="eps", grid=(0.1, 1.0, 10.0), algorithms=("conv", "cape"),
                     scenario=equal_sites(3, 100),
                     data=PcaData(dataset="digits", k=4), runs=2, seed=7).to_json() == text
    otd = otd_spec(parameter="ns", grid=(300, 100))
    assert otd.grid == (100, 300) and all(isinstance(v, int) for v in otd.grid)
    assert experiments.spec_from_dict(otd.to_dict()) == otd
    assert spec.replace(runs=5).runs == 5


@pytest.mark.parametrize("text, parameter, message", [
    ("", "eps", "the grid is empty"),
    ("   ", "delta", "the grid is empty"),
    ("0.1, abc", "eps", "grid value 'abc' is not a number"),
    ("0.1, -1", "eps", "must be in [1e-06, 10000]"),
    ("0.01, 1", "delta", "must be in [1e-100, 1)"),
    ("100, 2.5", "ns", "integer >= 1"),
    ("1, 3", "sites", "integer >= 2"),
    ("1, 1, 2", "c", "the grid repeats 1"),
])
def test_bad_grids_are_explained(text, parameter, message):
    with pytest.raises(InputError, match=None) as info:
        experiments.parse_grid(text, parameter)
    assert message in str(info.value)
    assert info.value.field == "grid"


def test_parse_grid_accepts_scientific_notation_and_sorts():
    assert experiments.parse_grid("1e-2; 1e-4 1e-3", "delta") == (1e-4, 1e-3, 1e-2)
    assert experiments.parse_grid("1e3, 100", "ns") == (100, 1000)


def test_spec_errors_name_the_problem():
    with pytest.raises(InputError, match=r"collusion bound c must be at most S - 1 = 3"):
        pca_spec("c", (0, 4))
    with pytest.raises(InputError, match="choose at least one algorithm"):
        pca_spec(algorithms=())
    with pytest.raises(InputError, match="algorithm must be one of"):
        pca_spec(algorithms=("cape", "capeAGN"))
    with pytest.raises(InputError, match="runs must be at most"):
        pca_spec(runs=MAX_SWEEP_RUNS + 1)
    with pytest.raises(InputError, match="K must be <= D = 64"):
        PcaData(dataset="digits", k=65)
    with pytest.raises(InputError, match="needs OtdData"):
        SweepSpec(family="otd", parameter="eps", grid=(1.0,), algorithms=("cape",), scenario=equal_sites(3, 100),
                  data=DIGITS)
    with pytest.raises(InputError, match="numbers of site data"):
        pca_spec("ns", (100, 10**6), data=PcaData(dataset="mnist", k=5))
    with pytest.raises(InputError, match="unknown sweep field"):
        experiments.spec_from_dict({**pca_spec().to_dict(), "colour": "red"})
    with pytest.raises(InputError, match="not valid JSON"):
        experiments.spec_from_json("{")


def test_scenario_at_sets_the_swept_parameter_on_every_site():
    base = scenario_from_dict({"sites": [{"name": "A", "n": 100, "eps": 0.5, "delta": 1e-5, "weight": 0.4},
                                         {"name": "B", "n": 300, "eps": 0.2, "delta": 1e-6, "weight": 0.6}],
                               "tau_c": 0.5})
    spec = pca_spec("eps", (0.1, 2.0), scenario=base)
    at = experiments.scenario_at(spec, 2.0)
    assert list(at.eps) == [2.0, 2.0] and list(at.sizes) == [100, 300] and at.tau_c is None
    assert list(at.weights()) == [0.4, 0.6]
    at = experiments.scenario_at(pca_spec("ns", (50, 70), scenario=base), 70)
    assert list(at.sizes) == [70, 70] and list(at.delta) == [1e-5, 1e-6]
    at = experiments.scenario_at(pca_spec("sites", (2, 5), scenario=base), 5)
    assert at.names == ["A", "B", "A#2", "B#2", "A#3"]
    assert list(at.sizes) == [100, 300, 100, 300, 100] and not at.weights_given
    equal = experiments.scenario_at(pca_spec("sites", (2, 6)), 6)
    assert equal.names == [f"s{i}" for i in range(1, 7)] and set(equal.sizes) == {300}


# ----------------------------------------------------------------------------------------------
# Agreement with single-point runs, reproducibility
# ----------------------------------------------------------------------------------------------

def test_pca_sweep_equals_compare_pca_at_every_grid_point_exactly():
    spec = pca_spec(grid=(0.3, 3.0), algorithms=tuple(pca.ALGORITHMS), runs=2)
    result = experiments.run_sweep(spec, use_cache=False)
    for value in spec.grid:
        setup = pca.prepare_pca(load_bundled("digits"), experiments.scenario_at(spec, value), 5, seed=spec.seed,
                                solver_dtype=spec.data.solver_dtype, allow_replacement=True)
        comparison = pca.compare_pca(setup.problem, setup.privacy, spec.algorithms, runs=2, seed=spec.seed)
        for algorithm, runs in comparison.results.items():
            for run, res in enumerate(runs):
                for metric in pca.METRICS:
                    got = result.table.query("value == @value and algorithm == @algorithm and run == @run and "
                                             "metric == @metric")["result"].item()
                    assert got == res.metric(metric), (value, algorithm, run, metric)


def test_float32_solver_agrees_with_float64_to_rounding():
    exact = experiments.run_sweep(pca_spec(algorithms=("cape", "dpdis", "local")), use_cache=False)
    fast = experiments.run_sweep(pca_spec(algorithms=("cape", "dpdis", "local"), data=PcaData(dataset="digits", k=5)),
                            use_cache=False)
    a, b = exact.table["result"].to_numpy(), fast.table["result"].to_numpy()
    assert not np.array_equal(a, b)  # really computed in another precision
    np.testing.assert_allclose(b, a, rtol=2e-5, atol=1e-6)


def test_otd_sweep_equals_compare_algorithms_at_every_grid_point():
    spec = otd_spec(algorithms=("cape", "conv", "local", "nonpriv", "random"))
    result = experiments.run_sweep(spec, use_cache=False)
    for value in spec.grid:
        comparison = agn.compare_algorithms(experiments.scenario_at(spec, value), spec.algorithms,
                                               spec=spec.data.synthetic(), runs=spec.runs, seed=spec.seed)
        for record in comparison.records:
            got = result.table.query("value == @value and algorithm == @record.algorithm and run == @record.run")
            assert got.set_index("metric")["result"]["q_comp"] == record.q_comp
            assert got.set_index("metric")["result"]["weight_error"] == record.weight_error


@pytest.mark.parametrize("make", [lambda: pca_spec(), lambda: otd_spec()], ids=["pca", "otd"])
def test_same_seed_same_table_byte_for_byte(make):
    spec = make()
    first = experiments.run_sweep(spec, use_cache=False).to_csv()
    second = experiments.run_sweep(spec, use_cache=False).to_csv()
    assert first == second
    assert first.splitlines()[0] == ",".join(experiments.TABLE_COLUMNS)
    other = experiments.run_sweep(spec.replace(seed=spec.seed + 1), use_cache=False).to_csv()
    assert other != first


def test_running_the_runs_one_by_one_gives_the_same_table():
    spec = pca_spec(runs=3)
    whole = experiments.run_sweep(spec, use_cache=False)
    pieces = [experiments.sweep_runs(spec, [r]) for r in (2, 0, 1)]
    assert experiments.sweep_result(spec, pieces).to_csv() == whole.to_csv()
    with pytest.raises(InputError, match="the same run appears twice"):
        experiments.sweep_result(spec, [pieces[0], pieces[0]])
    with pytest.raises(InputError, match="outside 0..2"):
        experiments.sweep_runs(spec, [3])


# ----------------------------------------------------------------------------------------------
# Common random numbers and nested samples
# ----------------------------------------------------------------------------------------------

def test_common_random_numbers_along_eps():
    """With the same standard normals, conv's aggregate is A + c(eps) Z: a 10% larger eps improves every run a
    little, while the runs differ from each other by much more; the non-private reference is identical."""
    result = experiments.run_sweep(pca_spec(grid=(1.0, 1.1), algorithms=("cape", "conv", "local", "nonpriv"), runs=6),
                              use_cache=False)
    nonpriv = pivot(result, "nonpriv", "captured_energy")
    assert np.all(nonpriv == nonpriv[:, :1])
    for algorithm in ("cape", "conv", "local"):
        values = pivot(result, algorithm, "captured_energy_ratio")
        steps = values[:, 1] - values[:, 0]
        assert np.all(steps > 0)  # independent draws would flip the sign in about half the runs
        if algorithm != "cape":  # (capePCA sits where a K-th eigenvalue crossing can make one run jump)
            # independent draws: std(step) about sqrt(2) std(value); common draws: far smaller
            assert steps.std(ddof=1) < 0.5 * values[:, 0].std(ddof=1)


def test_nested_samples_along_n_s():
    spec = pca_spec("ns", (60, 150), algorithms=("nonpriv",), runs=1)
    result = experiments.run_sweep(spec, use_cache=False)
    prepared = preprocess(load_bundled("digits").x, "max-norm")
    split = split_sites(prepared.x, [150] * 4, np.random.default_rng([spec.seed, 1]))
    for n in (60, 150):
        problem = pca.pca_problem([x[:, :n] for x in split.sites], 5)
        got = result.table.query("value == @n and metric == 'captured_energy'")["result"].item()
        assert got == pytest.approx(problem.optimal_energy, rel=1e-12)


def test_nested_sites_along_s():
    """The first S sites of the largest configuration hold the same samples at every S."""
    spec = pca_spec("sites", (2, 3, 5), algorithms=("nonpriv", "conv"), runs=2, scenario=equal_sites(2, 120))
    result = experiments.run_sweep(spec, use_cache=False)
    prepared = preprocess(load_bundled("digits").x, "max-norm")
    split = split_sites(prepared.x, [120] * 5, np.random.default_rng([spec.seed, 1]))
    for n_sites in spec.grid:
        optimum = pca.pca_problem(list(split.sites[:n_sites]), 5).optimal_energy
        got = result.table.query("value == @n_sites and metric == 'captured_energy' and algorithm == 'nonpriv'")
        np.testing.assert_allclose(got["result"], optimum, rtol=1e-12)
    np.testing.assert_allclose(result.gains["gain"], [2, 3, 5])


def test_collusion_sweep_uses_robust_designs_and_leaves_baselines_alone():
    spec = pca_spec("c", (0, 1, 3), algorithms=("cape", "conv", "local"), runs=2)
    result = experiments.run_sweep(spec, use_cache=False)
    tau = spec.scenario.sensitivities("pca") * spec.scenario.multipliers()
    for c, gain in zip(spec.grid, result.gains["gain"], strict=True):
        assert gain == pytest.approx(design_collusion_robust(tau, np.full(4, 0.25), c).gain)
        assert gain == pytest.approx((4 - c) / 1.01, rel=1e-3)
    for algorithm in ("conv", "local"):
        values = pivot(result, algorithm, "captured_energy")
        assert np.all(values == values[:, :1])
    cape = pivot(result, "cape", "captured_energy")
    assert not np.all(cape == cape[:, :1])
    assert any("collusion-robust design" in n for n in result.notes)


def test_otd_collusion_and_sites_sweeps_run():
    result = experiments.run_sweep(otd_spec("c", (0, 2), algorithms=("cape", "random")), use_cache=False)
    assert set(result.gains["design"]) == {"M2 stage", "M3 stage"}
    np.testing.assert_allclose(result.gains["gain"], [3 / 1.01] * 2 + [1 / 1.01] * 2, rtol=1e-3)
    random = pivot(result, "random", "q_comp")
    assert np.all(random == random[:, :1])
    result = experiments.run_sweep(otd_spec("sites", (2, 4), algorithms=("cape", "local")), use_cache=False)
    local = pivot(result, "local", "q_comp")
    assert np.all(local == local[:, :1])  # site 1 is the largest site at every S and holds the same documents
    np.testing.assert_allclose(result.gains["gain"], [2, 2, 4, 4])


# ----------------------------------------------------------------------------------------------
# Summary statistics
# ----------------------------------------------------------------------------------------------

def test_summary_mean_standard_error_and_t_interval_by_hand():
    spec = pca_spec(grid=(1.0,), algorithms=("cape",), runs=4)
    values = [1.0, 2.0, 3.0, 4.0]
    table = pd.DataFrame({"parameter": "eps", "value": 1.0, "algorithm": "cape", "run": range(4),
                          "metric": "captured_energy", "result": values, "status": "ok"})
    row = experiments.summarise_table(spec, table).query("metric == 'captured_energy'").iloc[0]
    assert row["runs"] == 4 and row["failed"] == 0
    assert row["mean"] == pytest.approx(2.5)
    assert row["std"] == pytest.approx(math.sqrt(5 / 3))
    assert row["se"] == pytest.approx(math.sqrt(5 / 3) / 2)
    t975_3 = 3.182446305284263  # Student t, 3 degrees of freedom, 97.5% quantile
    assert row["ci_low"] == pytest.approx(2.5 - t975_3 * math.sqrt(5 / 3) / 2)
    assert row["ci_high"] == pytest.approx(2.5 + t975_3 * math.sqrt(5 / 3) / 2)
    table.loc[3, ["result", "status"]] = [np.nan, "whitening failed"]
    row = experiments.summarise_table(spec, table).query("metric == 'captured_energy'").iloc[0]
    assert row["runs"] == 3 and row["failed"] == 1 and row["mean"] == pytest.approx(2.0)
    other = experiments.summarise_table(spec, table).query("metric == 'subspace_distance'").iloc[0]
    assert other["runs"] == 0 and math.isnan(other["mean"])


def test_failed_whitening_is_recorded_not_averaged():
    """local at eps = 0.01 with K = 5 of D = 6: its noisy M2 loses a top eigenvalue in every run; at eps = 1000 with
    N_s = 20,000 it never does. (The earlier K = 3, N_s = 600, eps 0.01 vs 10 failed in no run at all in 3 of 8
    independent seeds; this setting failed all 3 runs at 0.01 and none at 1000 in 10 of 10.)"""
    spec = otd_spec(grid=(0.01, 1000.0), algorithms=("local",), runs=3, scenario=equal_sites(3, 20_000, eps=3.0),
                    data=OtdData(model="mog", dim=6, k=5))
    result = experiments.run_sweep(spec, use_cache=False)
    failed = result.table[result.table["status"] != "ok"]
    assert len(failed) > 0 and set(failed["status"]) == {"whitening failed"}
    assert failed["result"].isna().all() and (failed["value"] == 0.01).all()
    row = result.summary.query("value == 0.01 and metric == 'q_comp'").iloc[0]
    assert row["failed"] == len(failed) // failed["metric"].nunique() and row["runs"] == 3 - row["failed"]


# ----------------------------------------------------------------------------------------------
# Statistical properties (common random numbers make them sharp)
# ----------------------------------------------------------------------------------------------

def paired_monotone(values: np.ndarray, increasing: bool, trend: bool = True) -> None:
    """Runs x grid values: no step goes significantly the wrong way (one-sided paired t at 0.1%), and (``trend``)
    the curve as a whole moves the right way (one-sided paired t at 0.5%). (The subspace distance, the sine of
    the largest principal angle, saturates near 1 while most directions are noise: only the first check.)"""
    sign = 1.0 if increasing else -1.0
    ok = ~np.isnan(values).any(axis=1)
    values = sign * values[ok]
    steps = np.diff(values, axis=1)
    n = steps.shape[0]
    se = steps.std(axis=0, ddof=1) / math.sqrt(n)
    t999 = scipy.stats.t.ppf(0.999, n - 1)
    assert np.all(steps.mean(axis=0) >= -t999 * se), (steps.mean(axis=0), se)
    if trend:
        total = values[:, -1] - values[:, 0]
        assert total.mean() > scipy.stats.t.ppf(0.995, n - 1) * total.std(ddof=1) / math.sqrt(n)


@pytest.mark.parametrize("parameter, grid", [("eps", (0.3, 1.0, 3.0, 10.0)), ("ns", (50, 100, 200, 400))])
def test_pca_utility_is_non_decreasing_in_eps_and_n_s(parameter, grid):
    spec = pca_spec(parameter, grid, algorithms=("cape", "pool_ag", "conv", "local", "dpdis"), runs=8,
                    scenario=equal_sites(4, 300 if parameter == "eps" else 100))
    result = experiments.run_sweep(spec, use_cache=False)
    for algorithm in spec.algorithms:
        paired_monotone(pivot(result, algorithm, "captured_energy_ratio"), increasing=True)
        paired_monotone(pivot(result, algorithm, "subspace_distance"), increasing=False, trend=False)


@pytest.mark.parametrize("model", ["mog", "stm"])
def test_otd_error_is_non_increasing_in_eps_and_n_s(model):
    for parameter, grid, size in (("eps", (1.0, 3.0, 10.0, 30.0), 2000), ("ns", (500, 1000, 2000, 4000), 500)):
        spec = otd_spec(parameter, grid, algorithms=("cape", "conv", "local"), runs=10,
                        scenario=equal_sites(3, size, eps=3.0), data=OtdData(model=model, dim=8, k=3))
        result = experiments.run_sweep(spec, use_cache=False)
        for algorithm in spec.algorithms:
            paired_monotone(pivot(result, algorithm, "q_comp"), increasing=False)


def test_cape_matches_pooled_analyze_gauss_within_its_interval():
    spec = pca_spec(grid=(0.3, 1.0, 3.0, 10.0), algorithms=("cape", "pool_ag", "conv"), runs=10,
                    scenario=equal_sites(4, 300))
    result = experiments.run_sweep(spec, use_cache=False)
    metric = "captured_energy_ratio"
    cape, pool, conv = (result.summary_of(a, metric) for a in ("cape", "pool_ag", "conv"))
    distinguishes = False
    for i in range(len(spec.grid)):
        se = math.hypot(cape["se"][i], pool["se"][i])
        assert abs(cape["mean"][i] - pool["mean"][i]) <= 4 * se
        assert cape["ci_low"][i] - 2 * pool["se"][i] <= pool["mean"][i] <= cape["ci_high"][i] + 2 * pool["se"][i]
        distinguishes |= abs(cape["mean"][i] - conv["mean"][i]) > 8 * math.hypot(cape["se"][i], conv["se"][i])
    assert distinguishes  # the comparison is sharp enough to tell conv apart
    gains = result.gains["gain"].to_numpy()
    np.testing.assert_allclose(gains, 4.0)  # equal sites: G = S, and tau_c is the pooled level
    np.testing.assert_allclose(result.gains["tau_c"] * 4, result.gains["tau_conv"] * 2)  # tau_conv = tau_s / sqrt(S)


# ----------------------------------------------------------------------------------------------
# Progress, stop, cache
# ----------------------------------------------------------------------------------------------

def test_progress_counts_every_step():
    spec = pca_spec(grid=(0.3, 1.0, 3.0), algorithms=("cape", "nonpriv"), runs=2)
    calls = []
    experiments.run_sweep(spec, use_cache=False, progress=lambda done, total, label: calls.append((done, total, label)))
    per_run = 3 + 1  # cape at every eps, nonpriv once (it does not depend on eps)
    assert [c[0] for c in calls] == list(range(1, 2 * per_run + 1))
    assert {c[1] for c in calls} == {2 * per_run}
    assert calls[0][2] == "run 1/2, eps = 0.3: capePCA" and calls[-1][2] == "run 2/2, eps = 0.3: non-dp pool"


def test_stop_returns_the_finished_runs_marked_incomplete():
    spec = pca_spec(runs=4)
    per_run = 3 + 3 + 1
    calls = {"n": 0}

    def should_stop() -> bool:
        calls["n"] += 1
        return calls["n"] >= 2 * per_run + 2  # two runs finished, the third started

    result = experiments.run_sweep(spec, use_cache=False, should_stop=should_stop)
    assert not result.complete and result.runs_done == 2
    assert sorted(result.table["run"].unique()) == [0, 1]
    assert set(result.summary["runs"]) == {2}
    assert "stopped after 2 of 4 runs" in result.status()
    full = experiments.run_sweep(spec, use_cache=False)
    assert result.table.equals(full.table[full.table["run"] < 2].reset_index(drop=True))
    assert experiments.cached_result(spec) is not None  # the complete run was cached, the stopped one was not
    experiments.clear_cache()
    experiments.run_sweep(spec, use_cache=False, should_stop=lambda: True)
    assert experiments.cached_result(spec) is None


def test_cache_hit_returns_the_stored_result():
    experiments.clear_cache()
    spec = pca_spec(runs=2)
    first = experiments.run_sweep(spec)
    info = experiments.cache_info()
    assert info["misses"] == 1 and info["hits"] == 0 and info["results"] == 1
    calls = []
    second = experiments.run_sweep(experiments.spec_from_json(spec.to_json()), progress=lambda *a: calls.append(a))
    assert second is first and experiments.cache_info()["hits"] == 1
    assert calls == [(1, 1, "cached result")]
    third = experiments.run_sweep(spec, use_cache=False)
    assert third is not first and third.to_csv() == first.to_csv()
    experiments.clear_cache()
    assert experiments.cache_info() == {"hits": 0, "misses": 0, "results": 0, "plans": 0}


def test_notes_state_calibration_caveats_and_what_is_shared():
    spec = pca_spec(grid=(0.5, 2.0), scenario=equal_sites(4, 300, delta=0.01, tau_c=0.1))
    notes = " | ".join(experiments.run_sweep(spec, use_cache=False).notes)
    assert "classic calibration, replace-one neighbours" in notes
    assert "classic Gaussian calibration at eps = 2 (>= 1) is not a valid" in notes
    assert "delta is not well below 1/N_s at eps = 0.5, 2" in notes
    assert "target tau_c = 0.1 is not used" in notes
    assert "same standard normals at every eps" in notes
    assert "preprocessing: centred and divided by the largest sample norm" in notes


def test_to_dict_is_json_ready():
    result = experiments.run_sweep(pca_spec(runs=2), use_cache=False)
    data = result.to_dict()
    assert data["complete"] and data["runs_done"] == 2
    assert len(data["summary"]) == 3 * 3 * 3 and len(data["gains"]) == 3
    assert set(data["summary"][0]) == set(experiments.SUMMARY_COLUMNS)
    json.dumps(data)
