"""Before and after a scenario edit: what the edit did to tau_c, the headline gain, feasibility and the audit's
verdicts (the dashboard's before-and-after panel; docs/math/cape.md, docs/math/audit.md)."""

from __future__ import annotations

from dataclasses import dataclass

from ..scenario import scenario_edits
from .audit import VIEWS
from .gain import headline_of
from .plan import Plan

__all__ = ["ChangeRow", "PlanChange", "compare_plans"]


@dataclass(frozen=True, kw_only=True)
class ChangeRow:
    """One quantity before and after; ``better`` is True / False when the change helps / hurts, None when neutral."""

    quantity: str
    before: str
    after: str
    changed: bool
    better: bool | None


@dataclass(frozen=True, kw_only=True)
class PlanChange:
    """What the user changed (``edits``, in words) and what it did (``rows``), with a one-line ``summary``."""

    edits: tuple[str, ...]
    rows: tuple[ChangeRow, ...]
    summary: str


def _verdicts(plan: Plan) -> dict[str, list[str]]:
    """For every audited view, the sites whose promise it breaks."""
    if plan.audit is None:
        return {}
    out: dict[str, list[str]] = {view: [] for view in VIEWS if any(r.view == view for r in plan.audit.rows)}
    for row in plan.audit.rows:
        if not row.ok:
            out[row.view].append(row.site)
    return out


def _verdict_text(sites: list[str] | None, total: int) -> str:
    if sites is None:
        return "not audited"
    if not sites:
        return f"kept for all {total} sites"
    return f"broken for {', '.join(sites)}"


def _audit_line(plan: Plan) -> str:
    if plan.audit is None:
        return "no audit (infeasible)"
    failing = len(plan.audit.failing())
    total = len(plan.audit.rows)
    return "every promise kept" if failing == 0 else f"{failing} of {total} site-views break their promise"


def _row(quantity: str, before: str, after: str, better: bool | None) -> ChangeRow:
    return ChangeRow(quantity=quantity, before=before, after=after, changed=before != after,
                     better=better if before != after else None)


def compare_plans(before: Plan, after: Plan) -> PlanChange:
    """The rows of the panel: tau_c, DP floor, the headline gain, feasibility, the audit in total and every view
    whose verdict changed; ``better`` says which way each moved (a larger gain, a feasible design and fewer broken
    promises are better; tau_c and the floor are neutral)."""
    h0, h1 = headline_of(before.design), headline_of(after.design)
    rows = [
        _row("tau_c", f"{h0.tau_c:.4g}", f"{h1.tau_c:.4g}", None),
        _row("DP floor", f"{h0.tau_floor:.4g} (site {h0.floor_site})", f"{h1.tau_floor:.4g} (site {h1.floor_site})",
             None),
    ]
    g0, g1 = h0.gain, h1.gain
    gain_better = None if g0 is None or g1 is None else g1 > g0
    if g0 is None or g1 is None:
        gain_better = g1 is not None
    rows.append(_row("CAPE gain G", h0.value_text, h1.value_text, gain_better))
    f0, f1 = before.design.feasible, after.design.feasible
    rows.append(_row("feasible", "yes" if f0 else "no", "yes" if f1 else "no", f1))
    fail0 = len(before.audit.failing()) if before.audit else None
    fail1 = len(after.audit.failing()) if after.audit else None
    audit_better = None if fail0 is None or fail1 is None else fail1 < fail0
    rows.append(_row("audit", _audit_line(before), _audit_line(after), audit_better))
    v0, v1 = _verdicts(before), _verdicts(after)
    for view in VIEWS:
        a, b = v0.get(view), v1.get(view)
        if a is None and b is None:
            continue
        text0 = _verdict_text(a, before.scenario.n_sites)
        text1 = _verdict_text(b, after.scenario.n_sites)
        if text0 != text1:
            better = None if a is None or b is None else len(b) < len(a)
            rows.append(_row(f"audit: {view} view", text0, text1, better))
    edits = tuple(scenario_edits(before.scenario, after.scenario))
    return PlanChange(edits=edits, rows=tuple(rows), summary=_summary(g0, g1, fail0, fail1))


def _summary(g0: float | None, g1: float | None, fail0: int | None, fail1: int | None) -> str:
    if g1 is None:
        gain = "no CAPE design exists any more"
    elif g0 is None:
        gain = f"a design exists again, with gain {g1:.3g}×"
    elif abs(g1 - g0) <= 1e-9 * max(g0, 1.0):
        gain = f"the gain stays at {g1:.3g}×"
    else:
        gain = f"the gain {'rose' if g1 > g0 else 'fell'} from {g0:.3g}× to {g1:.3g}×"
    if fail0 is None or fail1 is None or fail0 == fail1:
        audit = "" if fail1 is None or fail1 == 0 else f"; {fail1} site-views still break their promise"
    elif fail1 > fail0:
        audit = f"; broken promises went from {fail0} to {fail1}"
    else:
        audit = f"; broken promises went down from {fail0} to {fail1}"
    return gain[0].upper() + gain[1:] + audit + "."
