"""The planner's answer as the rows of its page's tables (docs/planner.md): each scheme's answer with what it means,
and each site's N_s and eps at the answers when the sites differ (issue 36: the per-site sizes behind a mean), every
cell text or a number, never None."""

from __future__ import annotations

from typing import Any

from ..family import bits_label
from ..notation import symbolic
from .answer import PlanResult
from .export import guarantee_rows
from .knobs import KNOBS
from .schemes import scheme_words

__all__ = ["answer_rows", "guarantee_lines", "site_rows"]

MISSING = "-"
"""A cell with no value (an unreachable answer's interval)."""


def _value(value: float | int | None, integer: bool) -> str:
    if value is None:
        return MISSING
    return f"{int(value):,}" if integer else f"{value:.3g}"


def answer_rows(result: PlanResult) -> list[dict[str, Any]]:
    """One row per scheme: the answer (or 'unreachable'; the reason is shown in full under the table), where half of
    the fresh studies meet the target, where (1 + p) / 2 do, what the studies average and what a share p of them
    reaches at the answer, and the bits per value its values travel on there (float64, or a ring's bits)."""
    q, p = result.question, result.probability
    knob = symbolic(KNOBS[q.knob])
    rows = []
    for scheme, a in result.answers.items():
        reachable = a.answer is not None
        answer = ("any" if a.any_value else _value(a.answer, q.integer)) if reachable else "unreachable"
        lo, hi = a.interval if a.interval is not None else (None, None)
        rows.append({"scheme": scheme_words(result.family, scheme),
                     f"{knob} ({p:.0%} of studies meet the target)": answer,
                     "half of them at": _value(lo, q.integer) if reachable else MISSING,
                     f"{(1 + p) / 2:.1%} at": _value(hi, q.integer) if reachable else MISSING,
                     "studies average there": MISSING if a.predicted is None else f"{a.predicted:.3g}",
                     f"{p:.0%} of them reach": MISSING if a.reach is None else f"{a.reach:.3g}",
                     "bits per value": bits_label(a.bits) if reachable else MISSING})
    return rows


def site_rows(result: PlanResult) -> list[dict[str, Any]]:
    """One row per site with its N_s and eps as given and at each reachable answer, when the sites differ in size or
    budget at an answer (empty when every site is the same)."""
    answers = {s: a for s, a in result.answers.items() if a.scenario is not None}
    sites = {s: a.scenario["sites"] for s, a in answers.items()}
    differ = any(len({x["n"] for x in v}) > 1 or len({x["eps"] for x in v}) > 1 for v in sites.values())
    if not differ or result.question.knob == "sites":
        return []
    rows = []
    for i, site in enumerate(result.scenario.sites):
        row: dict[str, Any] = {"site": site.name, "N_s as given": f"{site.n:,}", "ε as given": f"{site.eps:g}"}
        for scheme, v in sites.items():
            row[f"N_s, {scheme_words(result.family, scheme)}"] = f"{v[i]['n']:,}"
            row[f"ε, {scheme_words(result.family, scheme)}"] = f"{v[i]['eps']:.3g}"
        rows.append(row)
    return rows


def guarantee_lines(result: PlanResult) -> list[str]:
    """The guarantee of every view at the answers, one line each: 'CAPE, aggregator (worst: site s2): exact eps 0.994
    at delta 1e-05, delta 9.06e-06 at eps 1; promised (1, 1e-05): certified' (from the audit's records)."""
    lines = []
    for row in guarantee_rows(result):
        view = row["view"] + (f" of {row['colluders']}" if row["view"] == "coalition" else "")
        worst = f" (worst: site {row['site']})" if row["site"] else ""
        lines.append(f"{row['scheme']}, {view}{worst}: exact eps {row['eps']} at the promised delta, delta "
                     f"{row['delta']} at the promised eps; promised {row['promised']}: {row['certified']}")
    return lines
