"""Issue 29, cause 9: the front door (``import dpcore``) let seeds out of range and wrong argument types through
(AttributeError, TypeError, ValueError instead of the library's InputError), and capeLDA's alpha_0 limit was not
applied to real corpora (OverflowError). The class: every public function is handed out through one entry
(dpcore.arguments.front_door) that checks every argument by its annotation and, by name, against one table of ranges
(ARGUMENT_RANGES). The tests are generated from the public names, their signatures and that table, so a new public
function or parameter is covered as soon as it is listed in dpcore/__init__.pyi; VALID_CALLS gives each function one
call that works (a new function without one fails here)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import dpcore
from dpcore.arguments import ARGUMENT_RANGES, FRONT_DOOR_MARK, parameter_types
from dpcore.validation import InputError

PUBLIC = {name: getattr(dpcore, name) for name in dpcore.__all__ if name != "__version__"}
FUNCTIONS = {name: value for name, value in PUBLIC.items() if callable(value) and not isinstance(value, type)}

# Numeric parameters checked by type only, each with its reason (every other numeric parameter has a range).
UNRANGED = {}


def _valid_calls() -> dict[str, dict]:
    x = np.random.default_rng(3).standard_normal((150, 6))
    scenario = dpcore.equal_sites_scenario(3, 50, 1.0, 1e-5)
    plan = dpcore.plan_scenario(scenario)
    corpus = dpcore.load_bundled_corpus()
    return {
        "scenario_from_dict": {"data": scenario.to_dict()},
        "load_scenario": None,  # a file: tested with tmp_path below
        "equal_sites_scenario": {"n_sites": 3, "site_size": 50, "eps": 1.0, "delta": 1e-5},
        "default_scenario": {},
        "plan_scenario": {"scenario": scenario},
        "headline_gain": {"scenario": scenario},
        "compare_plans": {"before": plan, "after": plan},
        "explain_design": {"design": plan.design},
        "capepca": {"data": x, "k": 2, "eps": 1.0, "delta": 1e-5, "sites": 3},
        "capeagn": {"data": np.abs(x), "k": 2, "eps": 1.0, "delta": 1e-5, "sites": 3},
        "capelda": {"corpus": corpus, "k": 3, "eps": 30.0, "delta": 1e-6, "sites": 2},
        "load_bundled": {"name": "digits"},
        "load_bundled_corpus": {},
        "dataset_from_array": {"values": x},
        "parse_numeric_csv": {"content": b"1,2\n3,4\n5,6\n"},
        "table_to_dataset": {"table": dpcore.parse_numeric_csv(b"1,2\n3,4\n5,6\n")},
        "parse_text_corpus": {"content": b"alpha beta gamma\nbeta gamma delta\n", "rule": "frequent",
                              "vocab_size": 3},
        "compare": {"family": "otd", "scenario": scenario, "algorithms": ("nonpriv",), "runs": 1, "workers": 1},
    }


@pytest.fixture(scope="module")
def valid():
    return _valid_calls()


def test_every_public_function_goes_through_the_front_door_and_has_a_valid_call(valid):
    assert set(FUNCTIONS) == set(valid), "give a new public function a valid call in VALID_CALLS"
    for name, function in FUNCTIONS.items():
        assert getattr(function, FRONT_DOOR_MARK, False), name
        hints = parameter_types(function)
        annotated = {p for p in inspect.signature(function).parameters}
        assert annotated <= set(hints), (name, annotated - set(hints))  # every annotation resolves


def test_every_numeric_parameter_has_a_range_or_a_reason():
    for name, function in FUNCTIONS.items():
        for parameter, tp in parameter_types(function).items():
            numeric = any(t in (int, float) for t in (getattr(tp, "__args__", None) or (tp,)))
            if numeric:
                assert parameter in ARGUMENT_RANGES or (name, parameter) in UNRANGED, (name, parameter)


WRONG = ["x", b"\xff", 1.5, 7, True, None, object(), [1], (1, 2), {"a": 1}, math.nan, math.inf, 10**30, -1,
         "\ud800", np.float64(2.5), np.int64(3), np.array([1.0, 2.0])]


def _call(function, kwargs):
    try:
        function(**kwargs)
    except InputError as exc:
        return exc
    return None


@pytest.mark.parametrize("name", sorted(n for n in FUNCTIONS if n != "load_scenario"))
def test_any_value_for_any_argument_is_taken_or_refused_as_an_input_error(valid, name):
    """Each argument in turn gets every value of WRONG (the others valid): the call either works or raises
    InputError; when the value does not have the parameter's type or range, the message names the argument."""
    from dpcore.arguments import argument_problem

    function, base = FUNCTIONS[name], valid[name]
    hints = parameter_types(function)
    for parameter in inspect.signature(function).parameters:
        for value in WRONG:
            kwargs = dict(base, **{parameter: value})
            if name in ("capepca", "capeagn", "capelda") and parameter == "scenario" and value is not None:
                kwargs = {k: v for k, v in kwargs.items() if k not in ("eps", "delta", "sites")}
            try:
                refusal = _call(function, kwargs)
            except Exception as exc:  # noqa: BLE001 - what this test is for
                pytest.fail(f"{name}({parameter}={value!r:.40}) raised {type(exc).__name__}: {exc}")
            if argument_problem(parameter, value, hints.get(parameter)) is not None:
                assert refusal is not None and f"{name}: {parameter}" in str(refusal), (name, parameter, value)
                assert refusal.field == parameter


@pytest.mark.parametrize("parameter", sorted(ARGUMENT_RANGES))
def test_values_just_outside_each_range_are_refused_by_every_function_that_takes_them(valid, parameter):
    rule = ARGUMENT_RANGES[parameter]
    outside = [rule.low - 1 if rule.integer else rule.low - max(abs(rule.low), 1e-9) * 0.5,
               rule.high + 1 if rule.integer else rule.high * 2 + 1]
    if rule.low_open:
        outside.append(rule.low)
    if rule.high_open:
        outside.append(rule.high)
    outside = [int(v) if rule.integer else float(v) for v in outside]
    takers = [n for n, f in FUNCTIONS.items() if parameter in inspect.signature(f).parameters and valid.get(n)]
    for name in takers:
        for value in outside:
            box = (value,) if parameter in ("drop_columns", "image_shape") else value
            if parameter == "image_shape":
                box = (value, 1)
            refusal = _call(FUNCTIONS[name], dict(valid[name], **{parameter: box}))
            assert refusal is not None and f"{name}: {parameter} must be {rule.text()}" in str(refusal), (
                name, parameter, value, refusal)


def test_seeds_out_of_range_are_refused_with_the_range(valid):
    for name in ("capepca", "capeagn", "capelda", "equal_sites_scenario"):
        for seed in (-1, 2**32, 10**30, 1.0, "0", None):
            refusal = _call(FUNCTIONS[name], dict(valid[name], seed=seed))
            assert refusal is not None and "seed must be" in str(refusal), (name, seed)


def test_a_scenario_built_directly_is_checked_by_the_scenarios_rules(valid):
    bad = dpcore.Scenario(sites=(dpcore.Site(name="a", n=10**30, eps=math.nan, delta=1e-5),
                                 dpcore.Site(name="b", n=100, eps=1.0, delta=1e-5)))
    for name in ("capepca", "plan_scenario", "headline_gain"):
        kwargs = {k: v for k, v in valid[name].items() if k not in ("eps", "delta", "sites")}
        refusal = _call(FUNCTIONS[name], dict(kwargs, scenario=bad))
        assert refusal is not None and "scenario is not valid: site 1 (a), n: must be an integer" in str(refusal)
        assert "eps: must be a number" in str(refusal)


def test_capelda_applies_the_alpha0_limit_to_real_corpora(valid):
    from dpcore.lda.problem import corpus_lda_problem
    from dpcore.limits import MAX_LDA_ALPHA0

    corpus = valid["capelda"]["corpus"]
    for alpha0 in (MAX_LDA_ALPHA0 * 1.01, 1e200, 1e308):
        refusal = _call(FUNCTIONS["capelda"], dict(valid["capelda"], alpha0=alpha0))
        assert refusal is not None and "alpha0 must be a number above 0 and at most 1000" in str(refusal)
        with pytest.raises(InputError, match="alpha_0 must be at most 1000"):  # the library's own entry too
            corpus_lda_problem(corpus, 3, alpha0, np.array([0.5, 0.5]), np.random.default_rng(0))


def test_load_scenario_refuses_what_is_not_a_path(tmp_path):
    for value in (None, 7, 1.5, [1], b"\xff"):
        refusal = _call(FUNCTIONS["load_scenario"], {"path": value})
        assert refusal is not None and "load_scenario: path must be" in str(refusal)
    path = tmp_path / "s.json"
    path.write_text(dpcore.default_scenario().to_json())
    assert dpcore.load_scenario(path) == dpcore.default_scenario()
    assert dpcore.load_scenario(str(path)) == dpcore.default_scenario()


def test_a_wrong_signature_is_an_input_error_naming_the_function():
    with pytest.raises(InputError, match="capepca: missing a required argument: 'k'"):
        dpcore.capepca(np.ones((10, 3)), eps=1.0, delta=1e-5, sites=2)
    with pytest.raises(InputError, match="capepca: got an unexpected keyword argument 'kk'"):
        dpcore.capepca(np.ones((10, 3)), k=1, kk=2)
