"""The planner's sentences, derived from the numbers (docs/planner.md): what will be answered, the headline (the first
scheme's answer, then every other scheme's against it, with its bits per value where its values travel on a ring),
the forward answer and the limits of the method for this answer. Every scheme is named by its table entry
(:mod:`.schemes`); none is named here."""

from __future__ import annotations

import numpy as np

from ..experiments.families import FAMILIES
from ..family import PlannerData
from ..scenario import Scenario
from .knobs import Question
from .schemes import lead_scheme, planner_schemes, scheme_noise, scheme_words, sentence_start
from .solve import PROBABILITY, Answer, Forward

__all__ = ["CURVE_RUNS_WORDS", "forward_sentence", "headline", "premise_limits", "question_sentence", "target_text"]

CURVE_RUNS_WORDS = "the simulated studies of the curve (each its own data and noise)"


def _listed(words: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def premise_limits(family: str, answers: dict[str, Answer], data: PlannerData, p: float,
                   scenario: Scenario) -> tuple[str, ...]:
    """Where the method may be wrong for this answer (docs/planner.md, "Checking the premise"), in words from the
    numbers: which schemes the curve is for, how a scheme on a ring is read, the share's method, the data's own."""
    names = [scheme_words(family, s) for s in answers]
    others = [e.title for e in FAMILIES[family].algorithms.values() if e.planner is None and e.private]
    out = [f"the curve is for {_listed(names)}, whose noise is one term on the aggregate"
           + (f"; it does not answer for {_listed(others)}, whose noise is not" if others else "")]
    lead = lead_scheme(family)
    base = scheme_noise(family, lead, scenario, data.settings)
    for scheme, entry in planner_schemes(family).items():
        if entry.planner.ring is not None and scheme in answers:
            above = float(np.max(scheme_noise(family, scheme, scenario, data.settings) / base)) - 1.0
            out.append(f"{scheme_words(family, scheme)} sends integers, summed exactly on a ring: the curve reads its "
                       f"error (its noise and the sites' rounding, bounded in closed form, {above:.2%} above "
                       f"{scheme_words(family, lead)}'s noise in the scenario as it stands) as Gaussian noise of that "
                       "size, so its answer errs on the safe side by that much; the check runs it itself")
    out.append(f"the share {p:.0%} comes from {CURVE_RUNS_WORDS}: a normal prediction bound over them; the check "
               "measures it again on fresh studies with a confidence interval")
    out.extend(data.premise)
    return tuple(out)


def _format(value: float | int | None, integer: bool) -> str:
    if value is None:
        return "unreachable"
    return f"{int(value):,}" if integer else f"{value:.3g}"


def target_text(family: str, target: float) -> str:
    """The target in words: '80% of the non-private result', 'a component error q_comp of 0.5'."""
    hooks = FAMILIES[family].planner
    metric = FAMILIES[family].metrics[hooks.metric]
    if hooks.percent:
        return f"{target:.0%} of the non-private result"
    article = "an" if metric.words[:1].lower() in "aeiou" else "a"
    return (f"{article} {metric.words} of {target:.3g}" if not metric.higher_is_better
            else f"{metric.words} {target:.3g}")


def _reach_words(family: str, target: float) -> str:
    """The one definition of "reaches" the user reads: a study's one run, on its own data and noise."""
    higher = FAMILIES[family].metrics[FAMILIES[family].planner.metric].higher_is_better
    return (f"a study reaches it when its one run, on its own data and with its own noise, gives "
            f"{'at least' if higher else 'at most'} {target:g}")


def _sizes_words(scenario_dict: dict | None) -> str:
    """' (sites hold A 8,907, B 17,814, C 26,721)' when the sites' sizes differ."""
    if scenario_dict is None:
        return ""
    sites = scenario_dict["sites"]
    if len({s["n"] for s in sites}) == 1:
        return ""
    shown = ", ".join(f"{s['name']} {s['n']:,}" for s in sites[:6])
    return f" on average (the sites hold {shown}{', ...' if len(sites) > 6 else ''})"


def _ring_words(a: Answer) -> str:
    return "" if a.bits is None else f" (integers, {a.bits} bits per value)"


def _other(family: str, q: Question, scenario: Scenario, lead: Answer, scheme: str, a: Answer) -> str:
    """One more scheme's answer against the lead's: ' The conventional scheme needs 2,700, 2.3 times as many.'"""
    name = sentence_start(scheme_words(family, scheme))
    if a.answer is None:
        return f" {name} cannot: {a.reason}."
    if a.any_value:
        return f" {name} too, with any {q.words(scenario)}{_ring_words(a)}."
    text = f" {name} needs {_format(a.answer, q.integer)}{_ring_words(a)}"
    if lead.answer and not lead.any_value:
        ratio = f"{float(a.answer) / float(lead.answer):.2g}"
        what = "as many" if q.knob != "eps" else "the eps"
        text += f", about {what}" if ratio == "1" else f", {ratio} times {what}"
    return text + "."


def headline(family: str, q: Question, scenario: Scenario, answers: dict[str, Answer], p: float) -> str:
    """'capePCA: with samples per site = 1,200, 90 % of fresh studies reach 80% of the non-private result (a study
    reaches it when ...; half of them already at 950). Discrete capePCA needs 1,201 (integers, 36 bits per value),
    about as many. The conventional scheme needs 2,700, 2.3 times as many.' or the reason one cannot, from the
    numbers (the first scheme of :func:`~dpcore.planner.schemes.planner_schemes` leads)."""
    lead_name, *others = answers
    title = sentence_start(scheme_words(family, lead_name))
    words = q.words(scenario)
    target = target_text(family, q.target)
    lead = answers[lead_name]
    if lead.answer is None:
        first = f"{title} cannot reach {target} in {p:.0%} of fresh studies: {lead.reason}."
    elif lead.any_value:
        first = (f"{title} reaches {target} in {p:.0%} of fresh studies with any {words} "
                 f"({_reach_words(family, q.target)}; the target is met at every noise measured).")
    else:
        first = (f"{title}: with {words} = {_format(lead.answer, q.integer)}{_sizes_words(lead.scenario)}, "
                 f"{p:.0%} of fresh studies reach {target} ({_reach_words(family, q.target)}")
        if lead.median is not None and lead.median != lead.answer:
            first += f"; half of them already at {_format(lead.median, q.integer)}"
        first += ")."
    return first + "".join(_other(family, q, scenario, lead, s, answers[s]) for s in others)


def forward_sentence(family: str, result_forward: dict[str, Forward] | None, reason: str, p: float,
                     target: float | None) -> str:
    """The forward answer in words: 'With the scenario as it stands, capePCA gets a share ... of 0.83 on average and
    at least 0.79 in 90 % of fresh studies. The conventional scheme gets ...', one sentence per scheme."""
    if result_forward is None:
        return f"The scenario as it stands cannot be simulated: {reason}."
    metric = FAMILIES[family].metrics[FAMILIES[family].planner.metric]
    side = "at least" if metric.higher_is_better else "at most"
    parts = []
    for scheme, f in result_forward.items():
        text = (f"{scheme_words(family, scheme)} gets a {metric.words} of {f.mean:.3g} on average and {side} "
                f"{f.reach:.3g} in {p:.0%} of fresh studies")
        if f.share is not None:
            text += f"; {f.share:.0%} of the curve's studies there reach {target:g}"
        parts.append(text)
    return "With the scenario as it stands, " + ". ".join(sentence_start(part) if i else part
                                                          for i, part in enumerate(parts)) + "."


def question_sentence(family: str, scenario: Scenario, q: Question, data_description: str,
                      probability: float = PROBABILITY) -> str:
    """What the planner will answer, from the inputs it will run: 'For capePCA on <data>, with the 5 sites of the
    scenario (N_s = 1,000; eps = 1, delta = 1e-05): the samples per site at which 90 % of fresh studies of capePCA,
    discrete capePCA and the conventional scheme reach 80% of ...'."""
    sizes, eps, delta = scenario.sizes, scenario.eps, scenario.delta

    def same(values, fmt: str) -> str:
        return format(values[0], fmt) if np.all(values == values[0]) else "from " + format(values.min(), fmt) + \
            " to " + format(values.max(), fmt)

    names = _listed([scheme_words(family, s) for s in planner_schemes(family)])
    return (f"For {FAMILIES[family].cape} on {data_description}, with the {scenario.n_sites} sites of the scenario "
            f"(N_s {same(sizes, ',')}; eps {same(eps, 'g')}, delta {same(delta, 'g')}; {scenario.calibration} "
            f"calibration): the {q.words(scenario)} at which {probability:.0%} of fresh studies of each of {names} "
            f"reach {target_text(family, q.target)}, everything else held as the scenario has it.")
