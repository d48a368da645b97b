"""The schemes the planner answers for (docs/planner.md, "Schemes"): read from each family's algorithm table (the
entries with a ``planner``), so discrete CAPE is answered beside continuous CAPE and the conventional scheme where the
family has it (capePCA, capeAGN), with its bits per value and the guarantee of every view at its answer, computed by
the discrete audit; its closed-form noise bounds the discrete design's error; no planner module names a scheme."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from dpcore.agn.sweep import OtdData
from dpcore.cape.discrete import output_std_bound
from dpcore.experiments import FAMILIES
from dpcore.pca.algorithms.cape_discrete import pca_discrete_design
from dpcore.pca.guarantees import pca_guarantees
from dpcore.pca.problem import pca_privacy
from dpcore.pca.sweep import PcaData
from dpcore.planner import plan_target, planner_schemes, prepare_data, question, scheme_words
from dpcore.planner.report import answer_rows, guarantee_lines
from dpcore.scenario import default_scenario, equal_sites_scenario, scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]
FIVE = equal_sites_scenario(5, 1000, 1.0, 1e-5)
SMALL = PcaData(dim=50, k=5)


def test_the_schemes_are_the_table_entries_with_a_planner():
    """Every family's schemes are its table's entries that say how the planner answers for them, in table order;
    discrete CAPE where the family has a ``cape-discrete`` algorithm, none where it does not."""
    for family, fam in FAMILIES.items():
        assert list(planner_schemes(family)) == [n for n, e in fam.algorithms.items() if e.planner is not None]
        assert next(iter(planner_schemes(family))) == "cape"
        assert ("cape-discrete" in planner_schemes(family)) == ("cape-discrete" in fam.algorithms)
    assert list(planner_schemes("pca")) == ["cape", "cape-discrete", "conv"]
    assert list(planner_schemes("lda")) == ["cape", "conv"]
    assert scheme_words("pca", "cape-discrete") == "discrete capePCA"


def test_no_planner_module_names_a_scheme():
    """The planner, its command and its page never branch on an algorithm's name: no string constant of theirs is the
    name of a scheme (the table's entries say everything)."""
    names = {n for f in FAMILIES for n in planner_schemes(f)}
    files = [*sorted((ROOT / "dpcore" / "planner").glob("*.py")), ROOT / "dpcore" / "cli" / "plan.py",
             ROOT / "pages" / "planner.py"]
    for path in files:
        found = [node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, ast.Constant) and node.value in names]
        assert not found, (path.name, found)


@pytest.mark.parametrize("scenario, dim", [(default_scenario(), 200), (equal_sites_scenario(5, 600, 8.0, 1e-5), 784),
                                           (equal_sites_scenario(3, 100, 0.01, 1e-5), 20),
                                           (equal_sites_scenario(10, 1000, 50.0, 1e-5), 50),
                                           (default_scenario().with_sizes([40, 900, 5000, 77, 300]), 10)])
def test_the_discrete_noise_bound_holds_and_is_tight(scenario, dim):
    """The planner's noise of discrete capePCA bounds the discrete design's (its noise, computed by the scale search;
    the rounding, at most S / (2 gamma) per entry, added in quadrature) and is at most 0.16 % above the continuous
    design's noise (kappa_max - 1 = 0.15 %; the rest is the smoothing and rounding terms)."""
    privacy = pca_privacy(scenario, dim=dim)
    dd = pca_discrete_design(privacy, dim)
    rounding = scenario.n_sites / (2.0 * dd.scale)
    bound = output_std_bound(privacy.design.output_std, scenario.sensitivities("pca"), privacy.design.weights,
                             dim * (dim + 1) // 2)
    assert bound >= np.hypot(dd.output_std(), rounding)
    assert privacy.design.output_std <= dd.output_std() <= bound <= 1.0016 * privacy.design.output_std
    noise = FAMILIES["pca"].algorithms["cape-discrete"].planner.noise(scenario, PcaData(dim=dim))
    assert noise[0] == pytest.approx(bound, rel=1e-12)


@pytest.fixture(scope="module")
def plan_n():
    data = prepare_data("pca", SMALL, None, 0)
    return plan_target("pca", data, FIVE, question("n", 0.8, FIVE), seed=0, workers=2)


def test_discrete_capepca_is_answered_with_its_bits_and_guarantee(plan_n):
    """Solving N_s on the synthetic Gaussian: discrete capePCA answers within 0.2 % of capePCA (its noise at most 0.16 %
    above), the conventional scheme far above; its bits per value are the discrete design's at its answer; every view
    of its guarantee there is the discrete audit's, computed independently, and no more revealing than continuous
    CAPE's at the same scenario; the sentences and the page's rows carry it."""
    cape, disc, conv = (plan_n.answers[s] for s in ("cape", "cape-discrete", "conv"))
    assert cape.answer <= disc.answer <= 1.002 * cape.answer + 1 < conv.answer
    assert cape.bits is None and conv.bits is None
    at = scenario_from_dict(disc.scenario)
    assert disc.bits == pca_discrete_design(pca_privacy(at, dim=SMALL.dim), SMALL.dim).ring_bits
    shown = {g["view"]: g for g in plan_n.guarantees()["cape-discrete"]}
    audit = {g.view: g for g in pca_guarantees("cape-discrete", pca_privacy(at, dim=SMALL.dim))}
    continuous = {g.view: g for g in pca_guarantees("cape", pca_privacy(at, dim=SMALL.dim))}
    assert set(shown) == set(audit) >= {"release", "aggregator", "coalition"}
    for view, g in shown.items():
        assert g["eps"] == pytest.approx(audit[view].eps, rel=1e-12)
        assert g["eps"] <= continuous[view].eps * (1 + 1e-9)
    assert f"Discrete capePCA needs {disc.answer:,} (integers, {disc.bits} bits per value)" in plan_n.sentence
    assert any(line.startswith("discrete capePCA, aggregator") for line in guarantee_lines(plan_n))
    rows = {r["scheme"]: r for r in answer_rows(plan_n)}
    assert rows["discrete capePCA"]["bits per value"] == str(disc.bits) and rows["capePCA"]["bits per value"] == \
        "float64"
    record = plan_n.to_dict()
    assert record["cape-discrete"]["bits_per_value"] == disc.bits and record["schemes"]["cape-discrete"] == \
        "discrete capePCA"
    assert any("discrete capePCA sends integers" in limit for limit in plan_n.limits)


def test_discrete_capeagn_is_answered_beside_capeagn():
    """capeAGN solving eps: discrete capeAGN needs at most 0.2 % more eps (its noise bound in both stages), its bits
    are the wider of its two rings; on data whose third moment takes the projected path it is refused with the
    reason, and the others are answered as before."""
    data = prepare_data("otd", OtdData(), None, 0)
    plan = plan_target("otd", data, FIVE, question("eps", 0.8, FIVE), seed=0, workers=2)
    cape, disc = plan.answers["cape"], plan.answers["cape-discrete"]
    assert cape.answer <= disc.answer <= cape.answer * 1.002 + 0.01 and disc.bits >= 20
    assert plan.guarantees()["cape-discrete"] and plan.forward is not None and "cape-discrete" in plan.forward
    projected = prepare_data("otd", OtdData(path="projected"), None, 0)
    plan = plan_target("otd", projected, FIVE, question("eps", 0.8, FIVE), seed=0, workers=2)
    assert plan.answers["cape-discrete"].answer is None and "dense path only" in plan.answers["cape-discrete"].reason
    assert plan.answers["cape"].answer is not None and "cape-discrete" not in plan.forward
    assert "Discrete capeAGN cannot: capeAGN (discrete) runs on the dense path only" in plan.sentence


def test_capelda_answers_for_its_two_schemes():
    data = prepare_data("lda", FAMILIES["lda"].sweep.data(), None, 0)
    plan = plan_target("lda", data, FIVE, question("eps", 0.5, FIVE), seed=0, workers=2, runs=4)
    assert list(plan.answers) == ["cape", "conv"] and "discrete" not in plan.sentence
