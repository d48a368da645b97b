"""What eps means for a site's views (dpcore.cape.attack), the before-and-after comparison of two plans
(dpcore.cape.change), the scenario's edits in words (dpcore.scenario.scenario_edits) and the notation."""

from __future__ import annotations

import itertools
import math

import pytest

from dpcore.cape import attack_sentence, compare_plans, plan_scenario, site_attack_views
from dpcore.notation import GLOSSARY, symbolic
from dpcore.privacy import noise_multiplier
from dpcore.scenario import preset_scenario, scenario_edits, scenario_from_dict
from dpcore.validation import InputError

NDTR_CHECK = 0.5  # Phi(0)


def test_views_of_an_equal_site_by_hand():
    """Five equal sites, analytic calibration: the promise has m = Delta/tau_s = 1/c(0.5, 1e-5); the aggregator's
    sigma_eff^2 = tau_s^2 (S+1)/(2S) = 0.6 tau_s^2 (docs/math/audit.md); the published aggregate carries
    tau_c / mu_s = (tau_s/5) / (1/5) = tau_s, exactly the promise."""
    plan = plan_scenario(preset_scenario("equal").replace(calibration="analytic"), collusion=0)
    views = {v.key: v for v in site_attack_views(plan, "B")}
    assert list(views) == ["promise", "aggregator", "pooled"]  # no coalition view with c = 0
    m = 1.0 / noise_multiplier(0.5, 1e-5, "analytic")
    assert views["promise"].m == pytest.approx(m, rel=1e-9)
    assert views["aggregator"].m == pytest.approx(m / math.sqrt(0.6), rel=1e-9)
    assert views["pooled"].m == pytest.approx(m, rel=1e-9)
    assert views["promise"].kept and views["pooled"].kept and not views["aggregator"].kept
    assert views["aggregator"].eps_eff == pytest.approx(0.661, abs=5e-4)  # docs/math/audit.md
    # the attacker's curve of each view at the false-positive rate Phi(-m): TPR = Phi(0) = 1/2
    assert float(views["promise"].tpr(0.5 * math.erfc(m / math.sqrt(2)))) == pytest.approx(NDTR_CHECK, abs=1e-12)


def test_sentence_states_each_view_and_the_broken_promise():
    plan = plan_scenario(preset_scenario("equal").replace(calibration="analytic"))
    views = site_attack_views(plan, "A")
    assert [v.key for v in views] == ["promise", "aggregator", "aggregator+coalition", "pooled"]
    text = attack_sentence(views, "A", 0.2)
    rates = [f"**{100 * float(v.tpr(0.2)):.0f}** through {v.label}" for v in views]
    for rate in rates:
        assert rate in text
    assert "wrongly accuses only 20 in 100 absent people" in text
    assert "catches 20." in text
    worst = max(views, key=lambda v: v.m)
    assert f"worth eps = {worst.eps_eff:.3g} instead of the promised 0.5" in text
    with pytest.raises(InputError):
        attack_sentence(views, "A", 0.0)
    with pytest.raises(InputError, match="site"):
        site_attack_views(plan, "Z")


def test_only_the_promise_without_a_feasible_design():
    plan = plan_scenario(preset_scenario("equal"), solver="closed-form")
    assert not plan.design.feasible
    assert [v.key for v in site_attack_views(plan, "A")] == ["promise"]


def test_compare_plans_one_strict_site():
    before = plan_scenario(preset_scenario("equal"))
    after = plan_scenario(preset_scenario("one-strict"))
    change = compare_plans(before, after)
    assert change.edits == ("site C: eps 0.5 → 0.1",)
    rows = {r.quantity: r for r in change.rows}
    assert (rows["CAPE gain G"].before, rows["CAPE gain G"].after) == ("5×", "1.16×")
    assert rows["CAPE gain G"].better is False and rows["feasible"].changed is False
    assert rows["DP floor"].after.endswith("(site C)")
    assert change.summary == "The gain fell from 5× to 1.16×."
    back = compare_plans(after, before)
    assert back.summary == "The gain rose from 1.16× to 5×." and back.edits == ("site C: eps 0.1 → 0.5",)


def test_compare_plans_reports_the_audit_views_that_changed():
    before = plan_scenario(preset_scenario("equal"))  # classic: every promise kept
    after = plan_scenario(preset_scenario("equal").replace(calibration="analytic"))
    change = compare_plans(before, after)
    rows = {r.quantity: r for r in change.rows}
    assert rows["audit"].before == "every promise kept" and rows["audit"].better is False
    assert rows["audit: aggregator view"].after == "broken for A, B, C, D, E"
    assert "audit: outside view" not in rows  # kept before and after: not listed
    assert change.summary.startswith("The gain stays at 5×; broken promises went from 0 to ")
    infeasible = compare_plans(before, plan_scenario(preset_scenario("equal"), solver="closed-form"))
    assert {r.quantity: r for r in infeasible.rows}["feasible"].after == "no"
    assert infeasible.summary.startswith("No CAPE design exists any more")


def _scenario(sites, **settings):
    return scenario_from_dict({"sites": [{"name": n, "n": size, "eps": e, "delta": 1e-5} for n, size, e in sites],
                               **settings})


def test_scenario_edits_in_words():
    base = _scenario([("A", 100, 0.5), ("B", 200, 0.5)])
    assert scenario_edits(base, base) == []
    assert scenario_edits(base, _scenario([("A", 100, 0.5), ("B", 200, 0.5), ("C", 50, 1.0)])) == [
        "site C added (N_s = 50, eps = 1, delta = 1e-05)"]
    assert scenario_edits(base, _scenario([("A", 100, 0.5)])) == ["site B removed"]
    assert scenario_edits(base, _scenario([("A", 100, 0.5), ("Z", 300, 0.5)])) == ["site B renamed Z: N_s 200 → 300"]
    assert scenario_edits(base, _scenario([("B", 200, 0.5), ("A", 100, 0.5)])) == ["sites reordered: B, A"]
    assert scenario_edits(base, base.replace(calibration="analytic", tau_c=0.01, seed=3)) == [
        "calibration classic → analytic", "tau_c the DP floor → 0.01", "seed 0 → 3"]
    many = _scenario([(f"s{i}", 10 + i, 0.5) for i in range(12)])
    lines = scenario_edits(many, many.with_sites(eps=0.2), limit=5)
    assert len(lines) == 5 and lines[-1] == "and 8 more changes"


def test_scenario_edits_empty_exactly_when_nothing_changed():
    """Every single-site edit of N_s or eps on a three-site scenario (and no edit) over a small grid."""
    rows = [(100, 0.5), (200, 1.0), (300, 0.1)]
    base = _scenario([(f"s{i}", n, e) for i, (n, e) in enumerate(rows)])
    for index, size, eps in itertools.product(range(3), (100, 200, 300), (0.1, 0.5, 1.0)):
        edited_rows = list(rows)
        edited_rows[index] = (size, eps)
        edited = _scenario([(f"s{j}", n, e) for j, (n, e) in enumerate(edited_rows)])
        lines = scenario_edits(base, edited)
        assert (lines == []) == (base == edited)
        assert len(lines) <= 1 and all(line.startswith(f"site s{index}: ") for line in lines)


def test_symbolic_notation():
    assert symbolic("tau_c >= max_s mu_s tau_s") == "τ_c ≥ max_s μ_s τ_s"
    assert symbolic("G = sum mu_s^2 tau_s^2 / tau_c^2") == "G = Σ μ_s² τ_s² / τ_c²"
    assert symbolic("site 2 (B), eps: must be a number > 0") == "site 2 (B), ε: must be a number > 0"
    assert symbolic("sigma_eff >= tau_g,s and Delta_s, delta_s, Phi") == "σ_eff ≥ τ_g,s and Δ_s, δ_s, Φ"
    # words that merely contain the names, and code spans, stay as they are
    assert symbolic("epsilon, deltas, taught, `python -m dpcore pca --eps 1`") == (
        "epsilon, deltas, taught, `python -m dpcore pca --eps 1`")
    for text in ("tau_c >= max_s mu_s tau_s", "sqrt(sum_s mu_s^2 tau_g,s^2)", "(eps, delta)-DP"):
        assert symbolic(symbolic(text)) == symbolic(text)


def test_glossary_defines_the_jargon_once():
    names = [t.name for t in GLOSSARY]
    assert len(set(names)) == len(names)
    for word in ("aggregate noise", "DP floor", "conventional scheme", "helper", "effective noise"):
        assert word in names
    for term in GLOSSARY:
        assert "\n" not in term.definition and term.docs.startswith("docs/")
