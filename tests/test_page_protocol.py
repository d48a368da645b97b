"""AppTest of the Protocol walk-through: the three algorithms, counts, party views, symmetric noise."""

from __future__ import annotations

import pytest
from conftest import app_test

from dpcore.cape import agn_stage_designs, plan_scenario
from dpcore.cape.protocol import capeagn_round, symmetry_leak
from dpcore.federation import RoundSettings, SiteBudget, plan_round
from dpcore.scenario import default_scenario

PAGE = "pages/protocol.py"


def _clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.fixture
def at():
    at = app_test(PAGE)
    _clean(at)
    return at


def test_cape_round_default(at):
    assert not at.error
    metrics = _metrics(at)
    assert metrics["Numbers moved"] == "15" and metrics["Conventional scheme"] == "5"
    plan = plan_scenario(default_scenario(), "mean")
    assert metrics["Noise std left in the output"] == f"{plan.design.output_std:.4g}"
    messages = at.dataframe[0].value
    first = messages[messages["step"] == 1]
    assert first["from"].tolist() == ["helper"] * 5
    assert first["noise std per entry"].tolist() == pytest.approx(plan.design.std(plan.design.var_e).tolist())
    links = [p for p in at.get("page_link")]
    assert any("noise_design" in p.proto.page for p in links)
    parties = at.table[0].value  # a static table, so that its text wraps at any width
    assert parties.index.tolist()[:3] == ["helper", "outside observer", "aggregator"]


def test_capepca_counts_and_bad_rank(at):
    at.radio(key="pr_algorithm").set_value("capePCA").run()
    at.number_input(key="pr_dim_pca").set_value(20).run()
    _clean(at)
    assert _metrics(at)["Numbers moved"] == f"{3 * 5 * 400:,}"
    assert _metrics(at)["Unique entries"] == f"{3 * 5 * 210:,}"
    at.number_input(key="pr_rank_pca").set_value(30).run()
    _clean(at)
    assert at.error[0].value == "K must be ≤ D = 20 (got K = 30)"
    assert not at.metric


def test_capeagn_projected_noise_moves_fewer_numbers(at):
    at.radio(key="pr_algorithm").set_value("capeAGN").run()
    _clean(at)
    d2, d3 = agn_stage_designs(default_scenario(), "mog", 0.5, dim=10, sigma2=0.05)
    dense = capeagn_round(d2, d3, 10, 3)
    assert _metrics(at)["Numbers moved"] == f"{dense.total_numbers:,}"
    at.toggle(key="pr_projected").set_value(True).run()
    projected = capeagn_round(d2, d3, 10, 3, projected=True)
    assert _metrics(at)["Numbers moved"] == f"{projected.total_numbers:,}"
    assert projected.total_numbers < dense.total_numbers
    at.radio(key="pr_model").set_value("stm").run()
    _clean(at)
    assert not at.error


def test_symmetric_noise_section_quotes_the_leak(at):
    """On the scalar CAPE round the section says it concerns matrices (it explained matrices on a scalar); the helper's
    row of the party table says 'not audited' (a lone '-' became a stray bullet)."""
    assert any("A mean has no symmetric pairs" in c.value for c in at.caption)
    assert not any(m.value.startswith("With capePCA's design") for m in at.markdown)
    assert at.table[0].value.loc["helper", "ε effective / promised"] == "not audited"
    at.radio(key="pr_algorithm").set_value("capePCA").run()
    plan = plan_scenario(default_scenario(), "pca")
    rows = symmetry_leak(plan.design, plan.sensitivities, default_scenario().eps, default_scenario().delta)
    worst = max(rows, key=lambda r: r.eps_iid / r.eps)
    text = next(m.value for m in at.markdown if m.value.startswith("With capePCA's design"))
    assert f"site {worst.site} would get ε = {worst.eps_iid:.3g} instead of {worst.eps_symmetric:.3g}" in text


def test_helper_and_helper_free_side_by_side_and_the_dropout_what_if(at):
    """The comparison table is dpcore.cape.helper_free.compare_variants for the page's design, and the what-if
    table dropout_whatif for the chosen number of drop-outs (both variants)."""
    from dpcore.cape.helper_free import compare_variants, dropout_whatif

    plan = plan_scenario(default_scenario(), "mean")
    tables = {tuple(t.value.columns): t.value for t in at.table}
    comparison = next(v for k, v in tables.items() if "helper-free" in k)
    rows = compare_variants(plan.design, plan.collusion)
    assert list(comparison.index) == [r.view for r in rows]
    assert comparison["with a helper"].tolist() == [f"{r.helper:.4f}" for r in rows]
    assert comparison["helper-free"].tolist() == [f"{r.helper_free:.4f}" for r in rows]
    s = default_scenario()
    for k in (0, 1):
        at.slider(key="pr_dropouts").set_value(k).run()
        _clean(at)
        whatif = next(t.value for t in at.table if "worst sites to lose" in t.value.columns)
        for variant in ("helper", "helper-free"):
            case = dropout_whatif(plan.design, plan.sensitivities, s.eps, s.delta, plan.collusion, k, variant)
            assert whatif.loc[variant, "worst σ_eff / τ_s"] == f"{case.worst_ratio:.4f}"
            assert whatif.loc[variant, "promises broken"] == (", ".join(case.failing) or "none")
        # the Flower app's rule for the seeds' threshold, with the page's numbers (dpcore.federation.plan_round)
        needed = plan.collusion + 2 * k + 1
        caption = next(c.value for c in at.caption if "c + 2k + 1" in c.value)
        enough = s.n_sites >= needed
        assert f"= {needed} sites" in caption
        assert ("are enough" in caption) == enough and ("would refuse" in caption) == (not enough)
        budgets = [SiteBudget(site=site, dim=4) for site in s.sites]
        refusal = plan_round(budgets, RoundSettings(algorithm="capePCA", k=2, dropouts=k, noise="helper-free",
                                                    collusion=plan.collusion)).refusal
        assert ("Shamir threshold" in (refusal or "")) == (not enough and plan.collusion + k <= s.n_sites - 2)
