"""Every surface that lists a family's algorithms takes every algorithm of its table (issue 35's loose ends): a sweep
with the discrete design runs to its guarantees in the library and on the command line for each family that has one;
every algorithm of every family's table runs through the command line at tiny sizes, or is refused on one line by its
table entry (``dense_only``), never with a traceback; the bits per value a run used are in its result, on the
command line and in the reports, derived from the results; the Flower round's ``noise`` takes only the variants whose
table entry says ``federated``."""

from __future__ import annotations

import dataclasses
import json
import tomllib

import pytest
from conftest import ROOT

from dpcore import experiments
from dpcore.agn import SyntheticSpec, compare_algorithms
from dpcore.agn.algorithms.discrete import agn_discrete_designs
from dpcore.agn.guarantees import otd_guarantees
from dpcore.cape.noise_variants import NOISE_VARIANTS, federated_variant, federated_variants, integer_variant
from dpcore.cli import main
from dpcore.data import synthetic_dataset
from dpcore.experiments import OtdData, PcaData, SweepSpec
from dpcore.experiments.designs import sweep_guarantees
from dpcore.experiments.families import FAMILIES
from dpcore.experiments.spec import scenario_at
from dpcore.family import FLOAT_VALUES, GuaranteeContext, bits_label, ring_sentence
from dpcore.federation import RoundSettings
from dpcore.pca import compare_pca, pca_privacy, prepare_pca
from dpcore.pca.algorithms.cape_discrete import pca_discrete_design
from dpcore.pca.guarantees import pca_guarantees
from dpcore.reports import otd_report, pca_report, report_csv, report_html, report_json
from dpcore.scenario import equal_sites_scenario
from dpcore.seeding import PCA_SYNTHETIC_STREAM, stream_rng
from dpcore.validation import InputError

DISCRETE = "cape-discrete"
WITH_DISCRETE = [name for name, family in FAMILIES.items() if DISCRETE in family.algorithms]

COMMANDS = {
    "pca": ["pca", "--dim", "6", "--k", "2", "--sites", "3", "--site-size", "40", "--runs", "1", "--workers", "1",
            "--algorithms"],
    "otd": ["otd", "--model", "mog", "--d", "4", "--k", "2", "--sites", "3", "--ns", "60", "--runs", "1",
            "--workers", "1", "--algorithms"],
    "lda": ["lda", "--docs", "60", "--sites", "3", "--vocab", "8", "--topics", "2", "--doc-length", "10", "--runs", "1",
            "--configuration"],
}
"""Each family's own command at tiny sizes, ending in its algorithm flag."""
SWEEPS = {
    "pca": ["--dim", "6", "--k", "2", "--sites", "3", "--ns", "40"],
    "otd": ["--d", "4", "--k", "2", "--sites", "3", "--ns", "60"],
    "lda": ["--d", "8", "--k", "2", "--sites", "3", "--ns", "60", "--doc-length", "10"],
}
"""Each family's sweep data flags at tiny sizes."""
EVERY_ALGORITHM = [(family, name) for family, f in FAMILIES.items() for name in f.algorithms]


def _cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _clean(code: int, err: str, argv: list[str]) -> None:
    """Exit 0, and no error, internal error or traceback on stderr (notes and failures of single runs may be)."""
    assert code == 0, (argv, err)
    assert "Traceback" not in err and "internal error" not in err
    assert not any(line.startswith("error") for line in err.splitlines()), err


def _sweep(family: str, algorithms: list[str], vary: str, grid: str, *extra: str) -> list[str]:
    return ["sweep", "--family", family, "--vary", vary, "--grid", grid, "--runs", "1", "--workers", "1",
            *SWEEPS[family], "--algorithms", *algorithms, *extra]


def test_every_family_has_tiny_command_line_settings():
    """The class-level checks below cover every family: a new family must say how it runs at tiny sizes."""
    assert set(COMMANDS) == set(FAMILIES) == set(SWEEPS)
    assert WITH_DISCRETE == ["pca", "otd"]


# ----------------------------------------------------------------------------------------------
# The discrete design in a sweep: library and command line
# ----------------------------------------------------------------------------------------------

def _discrete_spec(family: str, parameter: str, grid: tuple) -> SweepSpec:
    data = (PcaData(dataset="synthetic", dim=8, k=2, solver_dtype="float64") if family == "pca"
            else OtdData(model="mog", dim=5, k=2))
    return SweepSpec(family=family, parameter=parameter, grid=grid, algorithms=("cape", DISCRETE), runs=2, seed=4,
                     scenario=equal_sites_scenario(4, 150, 1.0, 1e-3, calibration="analytic"), data=data)


@pytest.mark.parametrize("family", WITH_DISCRETE)
@pytest.mark.parametrize(("parameter", "grid"), [("eps", (0.5, 2.0)), ("c", (0, 2))])
def test_a_sweep_with_the_discrete_design_runs_to_its_guarantees(family, parameter, grid):
    """Every grid point has the discrete design's results and every view's guarantee, at most the continuous design's
    eps in every view (docs/math/discrete.md, "The audit": no view of the discrete design reveals more)."""
    spec = _discrete_spec(family, parameter, grid)
    result = experiments.run_sweep(spec, use_cache=False, workers=1)
    ok = result.table[(result.table["algorithm"] == DISCRETE) & (result.table["status"] == "ok")]
    assert set(ok["value"]) == {float(v) for v in grid} and set(ok["run"]) == {0, 1}
    table = result.guarantees()
    for value in grid:
        at = table[table["value"] == float(value)]
        discrete = at[at["algorithm"] == DISCRETE].set_index("view")
        continuous = at[at["algorithm"] == "cape"].set_index("view")
        assert list(discrete.index) == list(continuous.index) and {"release", "aggregator"} <= set(discrete.index)
        for view in discrete.index:
            assert discrete.loc[view, "eps"] <= continuous.loc[view, "eps"] * (1 + 1e-9), (value, view)
    record = json.loads(json.dumps(result.to_dict()))
    assert any(g["algorithm"] == DISCRETE for g in record["guarantees"])


def test_the_pca_sweep_guarantee_is_the_one_of_the_prepared_data():
    """The sweep's hook gives the discrete design the data's D from the sweep's data settings; the same guarantee
    comes from the data prepared as `prepare_pca` prepares them (its D read off the data)."""
    spec = _discrete_spec("pca", "eps", (0.5, 2.0))
    table = sweep_guarantees(spec)
    for value in spec.grid:
        scenario = scenario_at(spec, value)
        dataset = synthetic_dataset(scenario.total_n, stream_rng(spec.seed, PCA_SYNTHETIC_STREAM), dim=8)
        setup = prepare_pca(dataset, scenario, 2, seed=spec.seed)
        expected = [g.label() for g in pca_guarantees(DISCRETE, setup.privacy)]
        got = table[(table["value"] == float(value)) & (table["algorithm"] == DISCRETE)]["label"].tolist()
        assert got == expected


def test_the_otd_sweep_guarantee_is_the_one_of_a_real_problem():
    spec = _discrete_spec("otd", "eps", (0.5, 2.0))
    table = sweep_guarantees(spec)
    for value in spec.grid:
        scenario = scenario_at(spec, value)
        run = compare_algorithms(scenario, [DISCRETE], spec=spec.data.synthetic(), runs=1, seed=spec.seed,
                                 settings=spec.data.settings(), workers=1)
        expected = [g.label() for g in otd_guarantees(DISCRETE, scenario, run.problem, run.settings)]
        got = table[(table["value"] == float(value)) & (table["algorithm"] == DISCRETE)]["label"].tolist()
        assert got == expected


def test_without_its_dimension_the_discrete_pca_guarantee_is_refused_with_what_to_do():
    scenario = equal_sites_scenario(3, 100, 1.0, 1e-3)
    with pytest.raises(InputError, match=r"depends on D.*pca_privacy\(\.\.\., dim=D\)"):
        pca_guarantees(DISCRETE, pca_privacy(scenario))
    assert pca_guarantees(DISCRETE, pca_privacy(scenario, dim=8))
    with pytest.raises(InputError, match="D must be"):
        pca_privacy(scenario, dim=1)


@pytest.mark.parametrize("family", WITH_DISCRETE)
def test_a_sweep_with_the_discrete_design_on_the_command_line(family, capsys, tmp_path):
    argv = _sweep(family, ["cape", DISCRETE], "c", "0,1", "--json")
    code, out, err = _cli(capsys, argv)
    _clean(code, err, argv)
    record = json.loads(out)
    assert {g["value"] for g in record["guarantees"] if g["algorithm"] == DISCRETE} == {0.0, 1.0}
    assert {r["value"] for r in record["summary"] if r["algorithm"] == DISCRETE and r["runs"] == 1} == {0.0, 1.0}
    argv = _sweep(family, ["cape", DISCRETE], "eps", "0.5,1", "--out", str(tmp_path / "t.csv"))
    code, out, err = _cli(capsys, argv)
    _clean(code, err, argv)
    assert FAMILIES[family].algorithms[DISCRETE].title in out
    assert DISCRETE in (tmp_path / "t.csv").read_text()


def test_a_design_the_discrete_algorithm_cannot_carry_is_refused_before_any_run(capsys):
    """At eps = 1e-5 no integer encoding of the design fits a 64-bit ring (the ring grows as the noise does, at a
    rounding under 0.1 % of the sensitivity: docs/math/discrete.md): the sweep is refused before its first step,
    naming the grid point and the algorithm, not after the other algorithms' runs."""
    spec = SweepSpec(family="pca", parameter="eps", grid=(1e-5, 1.0), algorithms=("cape", DISCRETE), runs=1, seed=0,
                     scenario=equal_sites_scenario(5, 1000, 1.0, 1e-6),
                     data=PcaData(dataset="synthetic", dim=20, k=2))
    steps = []
    with pytest.raises(InputError, match=r"at eps = 1e-05, capePCA \(discrete\): no integer encoding") as info:
        experiments.run_sweep(spec, use_cache=False, workers=1, progress=lambda *a: steps.append(a))
    assert info.value.field == "algorithms" and steps == []
    code, out, err = _cli(capsys, ["sweep", "--family", "pca", "--vary", "eps", "--grid", "0.00001,1", "--runs", "1",
                                   "--dim", "20", "--k", "2", "--sites", "5", "--ns", "1000", "--delta", "1e-6",
                                   "--algorithms", "cape", DISCRETE])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("error: at eps = 1e-05, capePCA (discrete): no integer encoding")


def test_a_preset_that_fixes_the_projected_path_refuses_a_dense_only_algorithm_saying_why(capsys):
    code, out, err = _cli(capsys, ["sweep", "--preset", "fig3-mog-d10-eps", "--quick", "--runs", "1", "--algorithms",
                                   "cape", DISCRETE])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "needs the dense path, but this sweep fixes the projected path" in err and "--path dense or auto" in err


# ----------------------------------------------------------------------------------------------
# Every algorithm of every family's table through the command line (the class-level check)
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("family", "name"), EVERY_ALGORITHM, ids=[f"{f}-{n}" for f, n in EVERY_ALGORITHM])
def test_every_algorithm_runs_through_its_command_and_a_sweep(family, name, capsys):
    title = FAMILIES[family].algorithms[name].title
    argv = [*COMMANDS[family], name, "--json"]
    code, out, err = _cli(capsys, argv)
    _clean(code, err, argv)
    record = json.loads(out)
    assert {r["algorithm"] for r in record["results"]} == {name}
    assert {g["algorithm"] for g in record["guarantees"]} == {name}
    code, out, err = _cli(capsys, argv[:-1])  # the text form: tables, titles, guarantee lines
    _clean(code, err, argv[:-1])
    assert name in out or title in out
    argv = _sweep(family, [name], "eps", "0.5,2", "--json")
    code, out, err = _cli(capsys, argv)
    _clean(code, err, argv)
    record = json.loads(out)
    assert {g["value"] for g in record["guarantees"] if g["algorithm"] == name} == {0.5, 2.0}
    assert {r["value"] for r in record["summary"] if r["algorithm"] == name} == {0.5, 2.0}


@pytest.mark.parametrize("name", list(FAMILIES["otd"].algorithms))
def test_the_projected_path_refuses_exactly_the_dense_only_entries_on_one_line(name, capsys):
    """What an entry cannot do is refused by its table entry (``dense_only``), with one line naming it, exit 2."""
    entry = FAMILIES["otd"].algorithms[name]
    for argv in ([*COMMANDS["otd"], name, "--path", "projected", "--json"],
                 _sweep("otd", [name], "eps", "0.5,2", "--path", "projected", "--json")):
        code, out, err = _cli(capsys, argv)
        if entry.dense_only:
            assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
            assert err.startswith("error: ") and name in err and "dense path" in err
        else:
            _clean(code, err, argv)


# ----------------------------------------------------------------------------------------------
# Bits per value: in the result, on the command line, in the reports
# ----------------------------------------------------------------------------------------------

def test_ring_sentence_and_labels_are_derived_from_the_bits():
    titles = {"a": "A", "b": "B (discrete)"}
    assert ring_sentence({"a": None}, titles) is None
    one = "B (discrete) sends integers, summed exactly modulo 2^23 (23 bits per value)"
    assert ring_sentence({"b": 23}, titles) == one + "."
    assert ring_sentence({"a": None, "b": 23}, titles) == one + "; the other algorithm sends float64 values."
    assert ring_sentence({"a": None, "c": None, "b": 23}, titles) == one + "; the other algorithms send float64 values."
    assert bits_label(36) == "36" and bits_label(None) == FLOAT_VALUES


def _pca_comparison():
    scenario = equal_sites_scenario(3, 120, 1.0, 1e-3, calibration="analytic")
    dataset = synthetic_dataset(scenario.total_n, stream_rng(2, PCA_SYNTHETIC_STREAM), dim=7)
    setup = prepare_pca(dataset, scenario, 2, seed=2)
    return setup, compare_pca(setup.problem, setup.privacy, ["cape", DISCRETE, "conv"], runs=2, seed=2, workers=1)


def test_pca_bits_per_value_is_the_discrete_designs_ring_and_the_report_carries_it(tmp_path):
    setup, comparison = _pca_comparison()
    ring = pca_discrete_design(setup.privacy, setup.problem.dim).ring_bits  # the design's checked ring
    assert comparison.bits_per_value() == {"cape": None, DISCRETE: ring, "conv": None}
    assert all(r.bits_per_value == ring for r in comparison.results[DISCRETE])
    report = pca_report(setup, comparison, source={"kind": "synthetic", "dim": 7, "spectrum": "power", "decay": 1.0},
                        k=2, features="centre", preprocessing="max-norm", scale=1.0, by_label=False,
                        allow_replacement=False, seed=2, algorithms=["cape", DISCRETE, "conv"], runs=2, rank=None)
    record = json.loads(report_json(report))
    by_title = {r["algorithm"]: r["bits_per_value"] for r in record["results"]}
    assert by_title == {"capePCA": None, "capePCA (discrete)": ring, "conv": None}
    sentence = f"capePCA (discrete) sends integers, summed exactly modulo 2^{ring} ({ring} bits per value)"
    assert any(s.startswith(sentence) for s in record["summary"])
    assert f"bits_per_value,{ring}" in report_csv(report) and sentence in report_html(report)
    plain = compare_pca(setup.problem, setup.privacy, ["cape", "conv"], runs=1, seed=2, workers=1)
    assert plain.bits_per_value() == {"cape": None, "conv": None}
    report = pca_report(setup, plain, source={"kind": "synthetic", "dim": 7, "spectrum": "power", "decay": 1.0}, k=2,
                        features="centre", preprocessing="max-norm", scale=1.0, by_label=False,
                        allow_replacement=False, seed=2, algorithms=["cape", "conv"], runs=1, rank=None)
    assert not any("modulo 2^" in s for s in report.summary)


def test_otd_bits_per_value_is_the_wider_stage_ring_and_the_report_and_cli_carry_it(capsys):
    scenario = equal_sites_scenario(3, 300, 2.0, 1e-3, calibration="analytic")
    spec = SyntheticSpec(kind="mog", dim=5, k=2)
    comparison = compare_algorithms(scenario, ["cape", DISCRETE], spec=spec, runs=1, seed=6, workers=1)
    ctx = GuaranteeContext(name=DISCRETE, scenario=comparison.scenario, problem=comparison.problem,
                           settings=comparison.settings)
    widest = max(d.ring_bits for d in agn_discrete_designs(ctx))
    assert comparison.bits_per_value() == {"cape": None, DISCRETE: widest}
    assert comparison.to_dict()["bits_per_value"] == {"cape": None, DISCRETE: widest}
    report = otd_report(comparison, spec=spec, source="synthetic MOG")
    assert {r["bits_per_value"] for r in report.results if r["algorithm"] == "capeAGN (discrete)"} == {widest}
    assert any(f"modulo 2^{widest}" in s for s in report.summary)
    plain = otd_report(compare_algorithms(scenario, ["cape"], spec=spec, runs=1, seed=6, workers=1), spec=spec,
                       source="synthetic MOG")
    assert not any("modulo 2^" in s for s in plain.summary)
    code, out, err = _cli(capsys, [*COMMANDS["otd"], "cape", DISCRETE, "--json"])
    bits = json.loads(out)["bits_per_value"]
    assert code == 0 and bits["cape"] is None and bits[DISCRETE] >= 8
    code, out, err = _cli(capsys, [*COMMANDS["otd"], "cape", DISCRETE])
    assert code == 0 and f"capeAGN (discrete) sends integers, summed exactly modulo 2^{bits[DISCRETE]} " in out


# ----------------------------------------------------------------------------------------------
# The Flower round's noise: only the variants whose entry says federated
# ----------------------------------------------------------------------------------------------

def _unrun_variant(monkeypatch) -> None:
    """A variant of the table the Flower round does not run (every variant of the table runs now: one is added for
    the test, as a new variant's entry would be before its round is built)."""
    monkeypatch.setitem(NOISE_VARIANTS, "staged", dataclasses.replace(integer_variant(), name="staged",
                                                                      federated=False))


def test_the_federated_choices_are_read_from_the_table(monkeypatch):
    assert federated_variants() == tuple(NOISE_VARIANTS)  # the Flower round runs every variant, the discrete one too
    assert integer_variant().name in federated_variants()
    _unrun_variant(monkeypatch)
    assert federated_variants() == tuple(n for n, e in NOISE_VARIANTS.items() if e.federated)
    assert set(federated_variants()) < set(NOISE_VARIANTS)  # the table has a variant the round does not run
    for name, entry in NOISE_VARIANTS.items():
        if entry.federated:
            assert federated_variant(name) == name
        else:
            with pytest.raises(InputError) as info:
                federated_variant(name)
            message = str(info.value)
            assert "\n" not in message and "does not run" in message
            assert all(repr(a) in message for a in federated_variants())
    with pytest.raises(InputError, match="got 'oracle'"):
        federated_variant("oracle")
    with pytest.raises(InputError, match="does not run yet") as info:  # a round's settings, wherever they come from
        RoundSettings(algorithm="capePCA", k=2, noise=next(n for n, e in NOISE_VARIANTS.items()
                                                         if not e.federated)).validated()
    assert info.value.field == "noise"


def test_the_launcher_refuses_a_variant_the_round_does_not_run_before_anything_starts(tmp_path, capsys, monkeypatch):
    from capefed.federation import main as launch

    _unrun_variant(monkeypatch)
    workdir = tmp_path / "run"
    for name, entry in NOISE_VARIANTS.items():
        if entry.federated:
            continue
        assert launch(["--workdir", str(workdir), "--noise", name]) == 2
        out, err = capsys.readouterr()
        assert len(err.strip().splitlines()) == 1 and err.startswith("error: --noise must be one of")
        assert all(repr(a) in err for a in federated_variants()) and not workdir.exists() and out == ""
    with pytest.raises(SystemExit):
        launch(["--help"])
    shown = capsys.readouterr().out
    assert "--noise {" + ",".join(federated_variants()) + "}" in shown


def test_the_run_configuration_and_the_makefile_default_are_federated_variants():
    config = tomllib.loads((ROOT / "federated" / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
    assert config["noise"] in federated_variants()
    makefile = (ROOT / "Makefile").read_text()
    default = next(line.split("?=")[1].strip() for line in makefile.splitlines() if line.startswith("NOISE ?="))
    assert default in federated_variants()
