"""The noise design of a scenario with its audit (the Noise design page's and ``python -m dpcore design``'s result)
as a :class:`~dpcore.reports.Report`: every site's variances, the audit's rows, the guarantee of every view, the
explanation in words, and a script that repeats :func:`dpcore.cape.plan_scenario`."""

from __future__ import annotations

from typing import Any

from ..cape import Plan
from ..cape.explain import explain_design
from ..cape.guarantee import cape_guarantees
from .common import Report, plotly_objects, script_text

__all__ = ["design_report"]


def _figure(plan: Plan) -> Any:
    go = plotly_objects()
    d = plan.design.to_dict()
    names = [row["name"] for row in d["sites"]]
    fig = go.Figure()
    for term in ("e", "f", "g"):
        key = f"std_{term}"
        if key in d["sites"][0]:
            fig.add_trace(go.Bar(x=names, y=[row[key] for row in d["sites"]], name=f"{term}_s"))
    fig.update_layout(barmode="group", title="Noise std of each site's terms", height=400)
    return fig


def design_report(plan: Plan, *, options: dict[str, Any]) -> Report:
    """The report of ``plan`` made with ``options`` (the arguments of :func:`dpcore.cape.plan_scenario` besides the
    scenario: statistic, solver, objective, last, collusion, e_scale, dim, sigma2)."""
    scenario, design = plan.scenario, plan.design
    guarantees = []
    if design.feasible:
        views = cape_guarantees((design,), (plan.sensitivities,), (plan.statistic,), eps=scenario.eps,
                                delta=scenario.delta, names=scenario.names, calibration=scenario.calibration,
                                collusion=min(plan.collusion, scenario.n_sites - 1), shares=(1.0,))
        guarantees = [{"algorithm": "CAPE design", **g.to_dict(), "label": g.label()} for g in views]
    record = plan.to_dict()
    results = [{k: v for k, v in row.items() if not isinstance(v, (list, dict))} for row in record["sites"]]
    summary = tuple(explain_design(design))
    numbers = {"tau_c": float(design.tau_c) if design.feasible else None, "feasible": bool(design.feasible),
               "sites": [{k: v for k, v in row.items() if isinstance(v, (int, float))} for row in record["sites"]],
               "audit": record["audit"]}
    call = ", ".join(f"{k}={v!r}" for k, v in options.items())
    body = (f"scenario = scenario_from_dict(json.loads({scenario.to_json(None)!r}))\n"
            f"plan = plan_scenario(scenario, {call})\n"
            "record = plan.to_dict()\n"
            "numbers = {'tau_c': float(plan.design.tau_c) if plan.design.feasible else None, "
            "'feasible': bool(plan.design.feasible), 'sites': [{k: v for k, v in row.items() if isinstance(v, "
            "(int, float))} for row in record['sites']], 'audit': record['audit']}\n")
    script = script_text("a CAPE noise design and its audit", "from dpcore.cape import plan_scenario\n"
                         "from dpcore.scenario import scenario_from_dict\n", body)
    return Report(kind="noise design", title=f"CAPE noise design ({plan.statistic}, {scenario.n_sites} sites)",
                  summary=summary, settings=dict(options), seed=scenario.seed, results=results, numbers=numbers,
                  guarantees=guarantees, scenario=scenario.to_dict(), figures=(lambda: _figure(plan),),
                  notes=plan.warnings + (plan.audit.warnings if plan.audit else ()), script=script,
                  extra={"audit": record["audit"], "design": record})
