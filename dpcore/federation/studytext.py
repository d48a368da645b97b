"""A study in plain words, and what it would expose of one site, every sentence built from the study's numbers and
dpcore's audit (docs/federated.md, "A study every site approves"): what ``python -m capefed.ops.study review`` and
``approve`` print."""

from __future__ import annotations

from ..cape.noise_variants import noise_variant
from .plan import ROUND_OUTPUTS
from .study import Exposure, Study

__all__ = ["describe_exposure", "describe_study"]


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def describe_study(study: Study) -> list[str]:
    """The study: its title, digest and proposer, its rounds, every algorithm (what it publishes, its data, its
    settings and protection) and every site's per-round and total budget."""
    lines = [f"Study {study.title!r}, proposed by {study.proposer}.",
             f"Digest {study.digest} (what every site signs; any change to the study changes it).",
             f"It runs at most {_count(study.rounds, 'round')} of each of: {', '.join(study.algorithms)}."]
    for name, entry in study.algorithms.items():
        s, plan = entry.settings, study.plans[name]
        variant = noise_variant(s.noise)
        lines.append(f"{name}: publishes {ROUND_OUTPUTS[name]}; K = {s.k}, D = {entry.dim}.")
        lines.append(f"  Data: {entry.data}")
        lines.append(f"  Protection: every stage ({', '.join(p.stage for p in plan.stages)}) is designed against "
                     f"{_count(plan.collusion, 'colluding site')} plus {_count(s.dropouts, 'drop-out')} (the design "
                     f"holds against {_count(plan.design_collusion, 'colluder')}); the zero-sum noise: "
                     f"{variant.title} ({s.noise}); {s.calibration} calibration, {s.neighbouring} neighbours, the "
                     f"{s.solver} solver" + (f"; {s.split:g} of each site's budget to M2, {s.model} model, "
                                             f"{s.path} third moment" if len(plan.stages) > 1 else "") + ".")
    lines.append(f"Sites (each round of each algorithm at the site's own eps and delta; the total over every round "
                 f"of the study at delta = {study.total_delta:g}, composed exactly):")
    for site in study.sites:
        counts = ", ".join(f"{study.counts[site.name][a]:,} samples for {a}" for a in study.algorithms)
        weight = "" if site.weight is None else f", weight {site.weight:g}"
        lines.append(f"  {site.name}: eps = {site.eps:g} at delta = {site.delta:g} per round{weight}; {counts}; "
                     f"at most eps = {study.totals[site.name]:.4g} over the whole study")
    return lines


def describe_exposure(study: Study, exposure: Exposure) -> list[str]:
    """What the study would expose of one site: per algorithm and stage, every audited view of its release (eps_eff
    against the promise), then one round's and the whole study's cost."""
    lines = [f"What site {exposure.site} would be exposed to (dpcore's audit of every view of each release; a "
             f"coalition is the aggregator with colluding sites):"]
    for algorithm, stages in exposure.views.items():
        for stage, rows in stages.items():
            if not rows:
                continue
            lines.append(f"  {algorithm} stage {stage} (promised eps = {rows[0].eps:.4g} at delta = "
                         f"{rows[0].delta:g}):")
            for r in rows:
                who = r.view + (f" with {', '.join(r.coalition)}" if r.coalition else "")
                lines.append(f"    {who}: eps_eff = {r.eps_eff:.4g} " + ("(kept)" if r.ok else "(BROKEN)"))
    worst = ", ".join(f"{c.algorithm} {c.stage}: {c.view} (mu = {c.mu:.4g})" for c in exposure.costs)
    lines.append(f"Its ledger records each release at its worst view ({worst}). One round of every algorithm costs "
                 f"mu = {exposure.round_mu:.4g} (eps = {exposure.round_eps:.4g} at delta = "
                 f"{exposure.total_delta:g}); all {_count(study.rounds, 'round')} cost mu = {exposure.total_mu:.4g} "
                 f"(eps = {exposure.total_eps:.4g} at delta = {exposure.total_delta:g}).")
    return lines
