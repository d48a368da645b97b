"""The planner (docs/planner.md): the answer as a probability over fresh studies and its calibration, the forward
answer, the design and the guarantee at the answer, unreachable targets, the knobs and the sentences.

The calibration tests (issue 32, "Done when") build an answer from the curve's simulated studies (stream
PLANNER_STUDY_STREAM) and check it on at least 20 fresh studies of the real algorithm whose data and noise come from
another stream (PLANNER_CHECK_STREAM; the test checks that no seed is shared): at the answer the share of studies
that meet the target is at least p minus its binomial margin (the 1 % quantile of Binomial(n, p): 31 of 40 at p = 0.9)
and the check's own verdict is "met" (its 95 % interval reaches p: 32 of 40), and at 0.8 times the answer the whole
95 % Clopper-Pearson interval of the share lies below p. The share p is a probability over the curve's studies too,
so at one seed a fresh study's chance varies around p and the test is not a 1 %-level test per seed: on fresh seeds
0-10 (40 studies per point; docs/planner.md, "Calibration") the criterion held at 9 to 11 of 11 seeds per scheme and
point. Every scheme the planner answers for is checked (discrete CAPE too). Margins measured at seed 0 in each test's
docstring.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from dpcore.agn.sweep import OtdData
from dpcore.pca.planning import pca_noise
from dpcore.pca.sweep import PcaData
from dpcore.planner import check_plan, plan_target, prepare_data, question
from dpcore.planner.check import CheckResult
from dpcore.planner.knobs import at_value
from dpcore.privacy.calibration import multiplier
from dpcore.scenario import equal_sites_scenario, scenario_from_dict
from dpcore.seeding import PLANNER_CHECK_STREAM, PLANNER_STUDY_STREAM, study_seed
from dpcore.validation import InputError

SEED = 0
TARGET = 0.8
P = 0.9
STUDIES = 40
FIVE = equal_sites_scenario(5, 1000, 1.0, 1e-5)
SMALL = PcaData(dim=50, k=5)
"""capePCA's synthetic Gaussian at D = 50, K = 5 (the issue's own example): the claim is about studies, not D."""


def _calibrated(check: CheckResult, p: float, schemes=("cape", "cape-discrete", "conv")) -> None:
    """At the answer: met_count >= the 1 % quantile of Binomial(studies, p); short of it: the share's 95 % interval
    wholly below p (the check's own verdict 'missed')."""
    floor = int(binom.ppf(0.01, check.runs, p))
    for point in check.points:
        if point.scheme not in schemes:
            continue
        assert len(point.values) == check.runs >= 20
        if point.where == "answer":
            assert point.met_count >= floor, point
            assert point.met, point
        else:
            assert point.hi < p and not point.met, point


def _fresh(check: CheckResult, runs: int) -> None:
    """The check's studies come from seeds the curve did not use (curve: 12 studies of the plan's seed)."""
    curve = {study_seed(SEED, PLANNER_STUDY_STREAM, r) for r in range(64)}
    assert not curve & {study_seed(check.seed, PLANNER_CHECK_STREAM, r) for r in range(runs)}


@pytest.fixture(scope="module")
def synthetic():
    return prepare_data("pca", SMALL, None, SEED)


@pytest.fixture(scope="module")
def plan_n(synthetic):
    return plan_target("pca", synthetic, FIVE, question("n", TARGET, FIVE), seed=SEED, workers=2)


@pytest.mark.slow
def test_capepca_synthetic_answer_holds_for_a_share_p_of_fresh_studies(plan_n):
    """capePCA on the synthetic Gaussian (D = 50, K = 5), five sites at eps = 1, target 80 %, solving N_s, p = 0.9.
    Measured (40 fresh studies per point, seed 0): CAPE 1,290 per site (the old answer, 95 % of single runs on one
    data set, was 933), 38/40 at the answer and 31/40 at 0.8x (interval top 0.892); discrete capePCA 1,292, 40/40 and
    30/40; conventional 3,008, 39/40 and 25/40. Over seeds 0-10: 0.889, 0.893 and 0.898 of the 440 fresh studies met
    the target at the answers, 0.49, 0.54 and 0.50 at 0.8x. Floor 31/40 (32/40 for the verdict 'met')."""
    check = check_plan(plan_n, runs=STUDIES, workers=2)
    _fresh(check, STUDIES)
    _calibrated(check, P, schemes=("cape", "cape-discrete", "conv"))


def test_the_answer_is_the_knob_value_where_the_curve_reaches_p(plan_n):
    """The answer's noise is where a share p of the curve's studies (at the answer's N) reaches the target; half of
    them at the lower end of the interval, (1 + p) / 2 at the upper; the answer's own curve is within 2 % of its N."""
    for a in plan_n.answers.values():
        assert isinstance(a.answer, int) and a.interval[0] <= a.answer <= a.interval[1]
        assert a.reach == pytest.approx(TARGET, abs=0.01) and a.predicted > a.reach
        total = at_value(plan_n.question, FIVE, a.answer).total_n
        assert abs(total - a.size) <= 0.02 * a.size
    record = plan_n.to_dict()
    assert record["question"]["probability"] == P and record["cape"]["probability"] == P


def test_each_answer_is_the_smallest_that_reaches_p(plan_n):
    """The answer's noise (closed form: capePCA's DP floor, the conventional sqrt(sum mu^2 tau^2)) is small enough
    that a share p of the studies of its curve reaches the target, and one sample fewer per site is not."""
    for scheme, a in plan_n.answers.items():
        curve = next(c for c in plan_n.curves if c.size == a.size and c.scales[0] <= a.scale <= c.scales[-1])
        reach = curve.reach(P)

        def at(n: int, scheme=scheme, curve=curve, reach=reach) -> float:
            noise = pca_noise(FIVE.with_sizes([n] * 5), SMALL)[scheme][0]
            return float(np.interp(np.log(noise), np.log(curve.scales), reach))

        assert pca_noise(FIVE.with_sizes([a.answer] * 5), SMALL)[scheme][0] == pytest.approx(a.scale, rel=1e-12)
        assert at(a.answer) >= TARGET > at(a.answer - 1)


def test_solving_eps_follows_the_calibration(synthetic):
    """Solving eps at a fixed N: both schemes read one curve (studies of the scenario's N), so c(eps_conv) =
    sqrt(S) c(eps_cape) within the 3-digit rounding up."""
    plan = plan_target("pca", synthetic, FIVE, question("eps", TARGET, FIVE), seed=SEED, workers=2)
    eps_cape, eps_conv = plan.answers["cape"].answer, plan.answers["conv"].answer
    ratio = multiplier(eps_cape, 1e-5, "classic") / multiplier(eps_conv, 1e-5, "classic")
    assert ratio == pytest.approx(math.sqrt(5), rel=0.01)
    assert plan.answers["cape"].size == plan.answers["conv"].size == FIVE.total_n


@pytest.mark.slow
def test_capepca_on_a_bundled_set_holds_for_a_share_p_of_fresh_studies():
    """capePCA on the bundled digits (1,797 x 64, K = 5), five sites of 300 (fresh studies: fresh deals of 1,500 of
    the 1,797 images and fresh noise), target 70 %, solving eps. Measured (40 studies, seed 0): CAPE eps 1.23, 38/40
    at the answer and 3/40 at 0.8x; discrete capePCA 1.23, 35/40 and 1/40; conventional 2.74, 37/40 and 2/40. Over
    seeds 0-10: 0.886, 0.902 and 0.927 of 440 at the answers (CAPE below the floor at seeds 9 and 10, as before the
    planner's rework), 0.07, 0.03, 0.04 at 0.8x."""
    data = prepare_data("pca", PcaData(dataset="digits", k=5), None, SEED)
    scenario = equal_sites_scenario(5, 300, 1.0, 1e-5)
    plan = plan_target("pca", data, scenario, question("eps", 0.7, scenario), seed=SEED, workers=2)
    check = check_plan(plan, runs=STUDIES, workers=2)
    _fresh(check, STUDIES)
    _calibrated(check, P, schemes=("cape", "cape-discrete", "conv"))


@pytest.mark.slow
def test_capeagn_synthetic_answer_holds_for_a_share_p_of_fresh_studies():
    """capeAGN on its synthetic MOG (D = 10, K = 5; the ground truth drawn from the plan's seed, every fresh study its
    own samples and noise), five sites of 1,000, target q_comp 0.8, solving eps. Measured (40 fresh studies, seeds 0
    and 1): CAPE eps 5.42 / 3.1, 38 / 38 of 40 at the answer, 29 / 22 at 0.8x (interval tops 0.85, 0.71). Where q_comp
    is small its spread across studies is wide against the move 0.8x makes (target 0.5: 36 of 40 still met at 0.8x at
    seed 0, an answer met by 40 of 40: conservative; target 0.3: 27 of 30), so the test asks where the claim is
    decidable with 40 studies; the conventional scheme is the baseline, not the claim (its 0.8x: 32 of 40). Discrete
    capeAGN (eps 5.42 at seed 0, its noise bound in both stages): 38/40 and 26/40. Over seeds 0-10: CAPE 0.905 and
    discrete 0.934 of 440 at the answers, 0.64 and 0.68 at 0.8x."""
    data = prepare_data("otd", OtdData(), None, SEED)
    plan = plan_target("otd", data, FIVE, question("eps", 0.8, FIVE), seed=SEED, workers=2)
    assert plan.answers["cape"].answer is not None and plan.answers["cape-discrete"].answer is not None
    check = check_plan(plan, runs=STUDIES, workers=2)
    _fresh(check, STUDIES)
    _calibrated(check, P, schemes=("cape", "cape-discrete"))


def _whole_draw(n: int, seed: int) -> np.ndarray:
    """The first ``n`` samples of study ``seed`` (SMALL's covariance), drawn whole and rotated to the data's basis."""
    from dpcore.pca.studies import STUDY_BLOCK, covariance, study_block
    root, basis = covariance(SMALL.dim, SMALL.spectrum, SMALL.decay)
    blocks = [study_block(root, seed, b, min(STUDY_BLOCK, n - b * STUDY_BLOCK)) for b in range(-(-n // STUDY_BLOCK))]
    return basis @ np.concatenate(blocks, axis=1)


def test_a_synthetic_study_is_the_exact_law_of_the_runs_data():
    """A synthetic study (drawn a block at a time in the eigenbasis, rotated, max-norm over the samples of largest raw
    norm with the triangle-inequality certificate) equals the same samples drawn whole and preprocessed as a run's
    (rotation, centring, the exact largest centred norm), within the float32 scatter's rounding; nested in N."""
    from dpcore.data import preprocess
    from dpcore.pca.studies import synthetic_study
    for n in (300, 9000, 20000):
        prepared = preprocess(_whole_draw(n, 7), "max-norm", features="centre")
        pooled, scale, _ = synthetic_study(SMALL.dim, SMALL.spectrum, SMALL.decay, True, n, 7)
        assert scale == pytest.approx(prepared.scale, rel=1e-12)
        whole = prepared.x @ prepared.x.T / n  # the study's scatter is summed in float32: 1e-6 of the largest entry
        assert np.abs(pooled - whole).max() <= 1e-6 * np.abs(whole).max()
    assert np.array_equal(_whole_draw(100, 7), _whole_draw(9000, 7)[:, :100])  # nested


def test_a_study_resumed_from_a_smaller_one_is_the_same_bit_for_bit():
    """The planner's rounds at the answer's N continue each study from the draw of a smaller one of its seed
    (docs/planner.md, "Speed"): the result must be exactly the study drawn from its first sample, whatever the start
    (so the curve does not depend on what was measured before), and a draw of another study is not used."""
    from dpcore.pca.studies import synthetic_study
    for small, large in ((5000, 30000), (9000, 17000), (16384, 40000), (8192, 8192)):
        fresh = synthetic_study(SMALL.dim, SMALL.spectrum, SMALL.decay, True, large, 7)
        start = synthetic_study(SMALL.dim, SMALL.spectrum, SMALL.decay, True, small, 7)[2]
        resumed = synthetic_study(SMALL.dim, SMALL.spectrum, SMALL.decay, True, large, 7, start)
        assert np.array_equal(fresh[0], resumed[0]) and fresh[1] == resumed[1]
        assert np.array_equal(fresh[2].scatter, resumed[2].scatter)
    other = synthetic_study(SMALL.dim, SMALL.spectrum, SMALL.decay, True, 20000, 8)[2]
    assert np.array_equal(synthetic_study(SMALL.dim, SMALL.spectrum, SMALL.decay, True, 30000, 7, other)[0],
                          synthetic_study(SMALL.dim, SMALL.spectrum, SMALL.decay, True, 30000, 7)[0])


def test_the_largest_norm_falls_back_to_every_sample_when_its_certificate_fails(monkeypatch):
    """With one candidate the triangle-inequality certificate cannot hold (the mean moves the one kept norm), so every
    sample is drawn again and measured: still the exact largest centred norm."""
    from dpcore.data import preprocess
    from dpcore.pca import studies
    calls = []
    exact = studies._exact_largest
    monkeypatch.setattr(studies, "CANDIDATES", 1)
    monkeypatch.setattr(studies, "_exact_largest", lambda *a: calls.append(a) or exact(*a))
    n = 20000
    _, scale, _ = studies.synthetic_study(SMALL.dim, SMALL.spectrum, SMALL.decay, True, n, 7)
    assert calls and scale == pytest.approx(preprocess(_whole_draw(n, 7), "max-norm", features="centre").scale,
                                            rel=1e-12)


def test_a_curve_measured_after_others_is_the_same_as_measured_first(synthetic, monkeypatch):
    """The curve's studies continue from the kept draws of smaller studies of their seeds: a curve at N measured after
    one at a smaller N equals the same curve measured with nothing kept, value for value, with one worker or two."""
    from collections import OrderedDict

    from dpcore.planner import curve
    grid = np.logspace(-4, -2, 3)
    monkeypatch.setattr(curve, "_CACHE", OrderedDict())
    monkeypatch.setattr(curve, "_STATES", OrderedDict())
    alone = curve.measure_curve("pca", synthetic, np.ones(1), size=12000, runs=3, workers=1, scales=grid)
    monkeypatch.setattr(curve, "_CACHE", OrderedDict())
    monkeypatch.setattr(curve, "_STATES", OrderedDict())
    curve.measure_curve("pca", synthetic, np.ones(1), size=9000, runs=3, workers=2, scales=grid)
    assert {size for states in curve._STATES.values() for size in states} == {8192}  # one full block kept per study
    after = curve.measure_curve("pca", synthetic, np.ones(1), size=12000, runs=3, workers=2, scales=grid)
    assert np.array_equal(alone.values, after.values)


def test_forward_answer_is_the_scenario_as_it_stands(synthetic, plan_n):
    """The first answer: at the scenario's own N and noise, the curve's mean and what a share p of studies reaches,
    for both schemes (CAPE's noise is smaller, so it gets more), in words from the same numbers."""
    fwd = plan_n.forward
    assert fwd["cape"].mean > fwd["conv"].mean and fwd["cape"].reach < fwd["cape"].mean
    assert fwd["cape"].scale == pytest.approx(pca_noise(FIVE)["cape"][0])
    for f in fwd.values():
        assert f"{f.mean:.3g} on average and at least {f.reach:.3g} in 90% of fresh studies" in plan_n.forward_sentence
        assert 0.0 <= f.share <= 1.0
    assert plan_n.forward_sentence.startswith("With the scenario as it stands, capePCA gets")


def test_the_guarantee_at_the_answer_and_the_design_certified_against_the_aggregator(synthetic):
    """Classic calibration at eps = 1.5 (>= 1: the formula proves nothing; the audit's exact eps decides): the papers'
    design leaves the aggregator view above the promise; 'certified against the aggregator' raises the noise by the
    smallest factor that certifies the release and aggregator views, and the answer needs more samples for it."""
    scenario = equal_sites_scenario(5, 1000, 1.5, 1e-5)
    q = question("n", TARGET, scenario)
    papers = plan_target("pca", synthetic, scenario, q, seed=SEED, workers=2)
    certified = plan_target("pca", synthetic, scenario, q, seed=SEED, workers=2, design="aggregator")
    views = {g["view"]: g for g in papers.guarantees()["cape"]}
    assert not views["aggregator"]["certified"] and views["aggregator"]["eps"] > 1.5
    assert any("classic Gaussian calibration" in c for c in papers.caveats())
    a = certified.answers["cape"]
    assert a.factor > 1.0 and a.answer > papers.answers["cape"].answer
    kept = {g["view"]: g for g in certified.guarantees()["cape"]}
    for view in ("release", "aggregator"):
        assert kept[view]["certified"] and kept[view]["eps"] <= 1.5 * (1 + 1e-9)
        assert kept[view]["promised_eps"] == pytest.approx(1.5)
    assert scenario_from_dict(a.noise_scenario).eps[0] < 1.5 and scenario_from_dict(a.scenario).eps[0] == 1.5


def test_unreachable_targets_say_why(synthetic):
    above = plan_target("pca", synthetic, FIVE, question("n", 1.2, FIVE), seed=SEED, workers=2)
    for a in above.answers.values():
        assert a.answer is None and "above the non-private result" in a.reason
    assert "cannot reach" in above.sentence
    digits = prepare_data("pca", PcaData(dataset="digits", k=5), None, SEED)
    beyond = plan_target("pca", digits, FIVE.with_sizes([300] * 5), question("n", 0.99, FIVE), seed=SEED, workers=2)
    assert beyond.answers["conv"].answer is None
    assert "1,797 samples you have" in beyond.answers["conv"].reason
    one = plan_target("pca", synthetic, FIVE, question("eps", 0.95, FIVE, site="s2"), seed=SEED, workers=2)
    assert one.answers["cape"].answer is None and "largest eps this tool accepts" in one.answers["cape"].reason
    for result in (above, beyond, one):
        assert "inf" not in result.sentence and "nan" not in result.sentence


def test_a_huge_site_is_refused_by_the_study_limit_before_any_draw(synthetic):
    """A scenario site of 10^9 samples on synthetic data: no simulated study of it is drawn (the named limit
    MAX_PLANNER_STUDY_NUMBERS bounds N x D before the loop); solving eps says why, and the forward answer too."""
    import time

    from dpcore.limits import MAX_PLANNER_STUDY_NUMBERS
    huge = FIVE.with_sizes([10**9, 1000, 1000, 1000, 1000])
    start = time.perf_counter()
    result = plan_target("pca", synthetic, huge, question("eps", TARGET, huge), seed=SEED, workers=2)
    assert time.perf_counter() - start < 120  # generous: the walk of every 4,096-sample block took minutes
    limit = MAX_PLANNER_STUDY_NUMBERS // SMALL.dim
    assert result.curve.size <= limit
    for a in result.answers.values():
        assert a.answer is None and f"{limit:,} samples one simulated study may hold" in a.reason
    assert result.forward is None and "cannot be simulated" in result.forward_sentence


def test_target_met_at_every_noise_says_any_value_works():
    """K = D: the captured energy is all of it whatever the noise (issue 36: not 'eps = 0.842 (uncertainty 0.842 to
    0.842)')."""
    data = prepare_data("pca", PcaData(dim=6, k=6), None, SEED)
    result = plan_target("pca", data, FIVE, question("eps", TARGET, FIVE), seed=SEED, workers=1, runs=4)
    assert result.answers["cape"].any_value and "with any eps of every site" in result.sentence
    assert "uncertainty" not in result.sentence


def test_unequal_sites_show_each_sites_size():
    """The answer for unequal sites names every site's N_s (issue 36: the mean alone hid 8,907 to 26,721)."""
    data = prepare_data("pca", SMALL, None, SEED)
    scenario = FIVE.with_sizes([500, 1000, 1500, 1000, 1000])
    result = plan_target("pca", data, scenario, question("n", TARGET, scenario), seed=SEED, workers=2)
    sites = result.answers["cape"].scenario["sites"]
    assert len({s["n"] for s in sites}) == 3
    assert "on average (the sites hold " + ", ".join(f"{s['name']} {s['n']:,}" for s in sites) in result.sentence
    from dpcore.planner.report import answer_rows, site_rows
    rows = site_rows(result)
    assert [r["N_s, capePCA"] for r in rows] == [f"{s['n']:,}" for s in sites]
    assert all(v is not None for row in answer_rows(result) for v in row.values())


def test_one_site_and_sites_knobs(synthetic, plan_n):
    n_one = plan_target("pca", synthetic, FIVE, question("n", 0.6, FIVE, site="s2"), seed=SEED, workers=2)
    a = n_one.answers["conv"]
    assert a.answer is None or scenario_from_dict(a.scenario).sizes[1] == a.answer
    sites = plan_target("pca", synthetic, FIVE, question("sites", TARGET, FIVE), seed=SEED, workers=2)
    cape = sites.answers["cape"].answer
    # capePCA's noise depends on the total N only: S sites of 1,000 need about as many samples as 5 sites of N_s
    assert abs(cape * 1000 - 5 * plan_n.answers["cape"].answer) <= 1000 + 0.05 * cape * 1000
    conv = sites.answers["conv"]  # its noise falls as 1 / sqrt(S), CAPE's as 1 / S
    assert (conv.answer is None and "sites" in conv.reason) or conv.answer > 2 * cape


def test_question_and_probability_check_their_input(synthetic):
    with pytest.raises(InputError, match="not in the scenario"):
        question("n", 0.8, FIVE, site="nowhere")
    with pytest.raises(InputError, match="not to the number of sites"):
        question("sites", 0.8, FIVE, site="s1")
    with pytest.raises(InputError, match="what to solve for"):
        question("delta", 0.8, FIVE)
    q = question("eps", 0.8, FIVE, site="3")
    assert q.site == 2 and at_value(q, FIVE, 2.5, checked=True).eps.tolist() == [1, 1, 2.5, 1, 1]
    for bad in (0.2, 1.0, math.nan):
        with pytest.raises(InputError, match="probability"):
            plan_target("pca", synthetic, FIVE, question("n", 0.8, FIVE), probability=bad)
    with pytest.raises(InputError, match="design"):
        plan_target("pca", synthetic, FIVE, question("n", 0.8, FIVE), design="trusting")


def test_curve_is_cached_and_the_answer_fast(synthetic, plan_n):
    import time
    start = time.perf_counter()
    again = plan_target("pca", synthetic, FIVE, question("n", TARGET, FIVE), seed=SEED, workers=2)
    assert again.curve is plan_n.curve and again.answers["cape"].answer == plan_n.answers["cape"].answer
    assert time.perf_counter() - start < 30  # generous: the benchmark holds its targets


def test_a_higher_probability_asks_for_more(synthetic, plan_n):
    """p = 0.97 needs more samples than p = 0.9, p = 0.5 fewer (the prediction bound moves with p)."""
    high = plan_target("pca", synthetic, FIVE, question("n", TARGET, FIVE), seed=SEED, workers=2, probability=0.97)
    low = plan_target("pca", synthetic, FIVE, question("n", TARGET, FIVE), seed=SEED, workers=2, probability=0.5)
    for scheme in ("cape", "conv"):
        assert low.answers[scheme].answer < plan_n.answers[scheme].answer < high.answers[scheme].answer
    assert "97% of fresh studies" in high.sentence


def test_curve_figure_draws_one_line_where_both_schemes_need_the_same_noise(plan_n):
    """On the eps knob both schemes read the same curve at the same target, so their answers need the same noise:
    one line, labelled with both; the x axis names PCA's one aggregate term."""
    from dataclasses import replace

    from dpcore.planner.export import ANSWER_LINE_TOLERANCE, answer_lines, curve_figure

    cape = plan_n.answers["cape"]
    same = replace(plan_n, answers={**plan_n.answers, "conv": replace(plan_n.answers["conv"], scale=cape.scale)})
    lines = answer_lines(same)
    assert len(lines) == 1 and "capePCA" in lines[0][1] and "conventional" in lines[0][1]
    moved = replace(cape, scale=cape.scale * (1 + 3 * ANSWER_LINE_TOLERANCE))
    apart = replace(same, answers={**same.answers, "cape": moved})  # discrete capePCA stays with the conventional
    assert len(answer_lines(apart)) == 2
    fig = curve_figure(plan_n)
    assert fig.layout.xaxis.title.text.startswith("std of the noise on the aggregate")
    assert all(np.isfinite(y) for y in fig.data[0].y)  # the band's outline has no gap


def test_a_reason_never_prints_inf_or_nan(plan_n):
    """Issue 29: a reason printed 'mean inf' when the studies at the smallest noise failed (whitening): the words say
    what happened instead, from the numbers."""
    from dataclasses import replace

    from dpcore.planner.solve import _best_words

    curve = plan_n.curve
    failed = replace(curve, values=np.full_like(curve.values, np.nan))
    half = curve.values.copy()
    half[0, ::2] = np.nan
    for c, words in ((failed, "every study failed even at the smallest noise"), (replace(curve, values=half), "50%")):
        text = _best_words(c, 0.9)
        assert words in text and "inf" not in text and "nan" not in text
