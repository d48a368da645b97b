"""The end of a round at a site: the published result, the audit of its own views, its ledger settled, and a log that
says in plain words what it released, what it spent and what remains (docs/federated.md, "What each operator sees").

After a round the aggregator sends every site of the plan a ``result`` request: the round's status and reason, the
published output, the sites that took part and those dropped. The site checks the request like every other (the
plan it set up with, its study, within its own deadline), then:

* computes the audit of its own views itself, never taking the aggregator's: for every stage it signed a survivor
  set holding itself, the audit of what was released with the sites that set excluded in every coalition
  (:func:`dpcore.federation.dropout_audit`); a stage it signed no such set for released nothing that can be read;
* settles the round in its ledger (the stages it signed for stay spent, the others are void:
  :mod:`dpcore.federation.accounts`); a dry run writes nothing;
* writes ``<results>/<round>.json`` (its configuration's ``results``, or ``results/`` beside its ledger): the
  status, the published output, its audit, what it spent and what remains; and logs the same in words.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from . import dp
from .messages import Payload
from .requests import RequestError, text, texts
from .siteflow import SiteParty, Step

__all__ = ["RESULT_FORMAT", "result", "result_path"]

RESULT_FORMAT = "capefed-site-result-v1"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def result_path(site: SiteParty, round_id: str) -> Path:
    folder = site.config.results or Path(site.config.ledger).parent / "results"
    return folder / f"{_SAFE.sub('-', round_id).strip('-.')[:120] or 'round'}.json"


def _outputs(request: Any) -> dict[str, np.ndarray]:
    out = {}
    for key, value in request.arrays.items():
        if key.startswith("output/"):
            value = np.asarray(value)
            if value.dtype != np.float64 or not np.all(np.isfinite(value)):
                raise RequestError(f"the published output {key[7:]!r} must be finite numbers")
            out[key[7:]] = value
    return out


def _signed_set(site: SiteParty, round_id: str, stage: str) -> list[str] | None:
    saved = site.state.get(site.key(round_id, "set", stage))
    return None if saved is None else dp.load_json(saved, "the site's signed survivor set")


def _views(site: SiteParty, step: Step) -> dict[str, Any]:
    """Per stage: the rows of this site's views in the audit of what was released (or why nothing was)."""
    ctx, out = step.ctx, {}
    for stage in ctx.plan.stages:
        signed = _signed_set(site, ctx.round_id, stage.stage)
        if signed is None or site.name not in signed:
            out[stage.stage] = {"released": False, "views": []}
            continue
        excluded = [n for n in ctx.plan.names if n not in signed]
        report = dp.dropout_audit(ctx.plan, stage, excluded)
        out[stage.stage] = {"released": True, "survivors": signed,
                            "views": [r.to_dict() for r in report.rows if r.site == site.name]}
    return out


def _settle(site: SiteParty, step: Step, status: str) -> dp.Ledger:
    ctx = step.ctx
    if step.study.dry:
        return step.ledger

    def change(ledger: dp.Ledger) -> list:
        account = dp.round_accounts(ledger).get(ctx.round_id)
        if account is None or account.settled:
            return []
        return [dp.settle_event(ledger, ctx.round_id, f"the round ended at the aggregator: {status}")]

    return site.update_ledger(change)


def _write(path: Path, document: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o750)
    handle = tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False)
    try:
        with handle:
            json.dump(document, handle, indent=1, allow_nan=False)
        os.replace(handle.name, path)
    finally:
        Path(handle.name).unlink(missing_ok=True)


def _cost_lines(site: SiteParty, step: Step, views: Mapping[str, Any], ledger: dp.Ledger) -> list[str]:
    ctx, sr = step.ctx, step.study
    account = dp.round_accounts(ledger).get(ctx.round_id)
    costs = {s.stage: s for s in account.stages} if account else {
        s.stage: dp.release_entry(ctx.plan, s, site.name, ctx.round_id) for s in ctx.plan.stages}
    lines, spent = [], []
    for stage, entry in views.items():
        cost = costs[stage]
        if entry["released"]:
            spent.append(cost.mu)
            worst = max(entry["views"], key=lambda r: -1.0 if r["eps_eff"] is None else r["eps_eff"], default=None)
            said = "" if worst is None else (
                f"; its worst view ({worst['view']}"
                + (f" with {', '.join(worst['coalition'])}" if worst["coalition"] else "")
                + f") has eps_eff = {worst['eps_eff']:.4g} against the promised {worst['eps']:.4g}")
            lines.append(f"released stage {stage} (its release unmasked by the survivor set it signed: "
                         f"{', '.join(entry['survivors'])}): mu = {cost.mu:.4g}{said}")
        else:
            lines.append(f"released nothing that can be read in stage {stage} (it signed no survivor set holding "
                         "itself): void, nothing spent")
    total = dp.composed_eps(spent, ledger.delta_total)
    lines.append(("dry run (synthetic data): its ledger records nothing; this round would have spent " if sr.dry else
                  "this round spent ") + f"eps = {total:.4g} at delta = {ledger.delta_total:g} (mu = "
                 f"{dp.composed_mu(spent):.4g})")
    b = dp.budget(ledger)
    round_mu = dp.composed_mu([c.mu for c in costs.values()])
    more = int((b.remaining_mu / round_mu) ** 2) if round_mu > 0 else 0
    left = sr.study.rounds - dp.study_rounds_used(ledger, sr.study.digest, ctx.settings.algorithm)
    lines.append(f"its ledger: eps = {b.counted_eps:.4g} of its total {b.eps_total:.4g} at delta = {b.delta_total:g} "
                 f"spent or reserved ({b.rounds} round(s), {b.open_rounds} not settled); what remains allows {more} "
                 f"more round(s) like this one; the study allows {left} more of {ctx.settings.algorithm}")
    return lines


def result(site: SiteParty, c: Mapping[str, Any]) -> Payload:
    """Answer a result request (module docstring)."""
    step = site.context(c, "result")
    ctx = step.ctx
    status = text(c, "status", choices=dp.ROUND_STATUSES)
    reason = text(c, "reason", limit=4000) if c.get("reason") is not None else ""
    took_part, dropped = texts(c, "took_part", most=dp.MAX_SITES), texts(c, "dropped", most=dp.MAX_SITES)
    outputs = _outputs(c) if status == "released" else {}
    views = _views(site, step)
    ledger = _settle(site, step, status)
    lines = _cost_lines(site, step, views, ledger)
    path = result_path(site, ctx.round_id)
    b = dp.budget(ledger)
    _write(path, {"format": RESULT_FORMAT, "round": ctx.round_id, "study": step.study.study.digest,
                  "mode": step.study.mode, "algorithm": ctx.settings.algorithm, "site": site.name, "status": status,
                  "reason": reason, "took_part": took_part, "dropped": dropped,
                  "outputs": {k: v.tolist() for k, v in outputs.items()}, "audit": views, "summary": lines,
                  "ledger": {"head": ledger.head.to_list(), "eps_total": b.eps_total, "delta_total": b.delta_total,
                             "counted_eps": b.counted_eps, "remaining_mu": b.remaining_mu}})
    shown = ", ".join(f"{k} ({' x '.join(map(str, v.shape))})" for k, v in outputs.items()) or "nothing"
    site.notes.append(f"round {ctx.round_id} ({ctx.settings.algorithm}, study {step.study.study.title[:80]!r}) "
                      f"ended: {status}" + (f" ({reason[:300]})" if reason else "") + f"; published: {shown}; "
                      f"saved with the audit of its views to {path}")
    site.notes.extend(lines)
    return Payload({"status": "ok"})
