"""What an aggregator holds after a round, and a site's exact eps against it (tests only).

From every request the aggregator's process sent and every reply it received (``Held``: the masked releases, the
shares revealed, the helper's terms, the secure sums, the commitments), :func:`knowledge` works out per stage which
sites' releases it can unmask (a self-mask seed rebuilt from t shares that matches the site's commitment) and which
sites' noise terms it knows (a noise seed rebuilt the same way, or the helper's term). :func:`view_eps` then computes
a site's exact eps against that knowledge by Gaussian conditioning of the whole observation model - latent (e_1..e_S,
W, g_1..g_S) with the design's joint law; observed: y_t - f_t = [t = v] a + e_t + g_t for every unmasked release,
e_t for every known term, W when revealed - and the Gaussian mechanism's exact privacy profile. Nothing here uses the
audit's closed forms: it is the independent check of the promise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from capefed.app import shares

from dpcore.cape.audit import effective_sigma
from dpcore.cape.helper_free import joint_covariance
from dpcore.cape.noise_variants import NOISE_VARIANTS
from dpcore.federation import Ledger, RoundPlan, composed_eps, read_ledger, read_ledger_key, round_accounts
from dpcore.privacy.calibration import exact_eps

__all__ = ["Held", "Knowledge", "held_from_exchanges", "knowledge", "ledger_problems", "site_ledger", "spent_stages",
           "view_eps", "worst"]


def site_ledger(node: Mapping[str, Any]) -> Ledger:
    """A site's ledger, read and verified with its key (the node configuration's ``ledger`` and ``ledger-key``)."""
    return read_ledger(node["ledger"], read_ledger_key(node["ledger-key"]), node["name"])


def spent_stages(ledger: Ledger, round_id: str) -> dict[str, float]:
    """The stages of ``round_id`` the site recorded as spent (it signed a survivor set holding itself), by mu."""
    account = round_accounts(ledger).get(round_id)
    return {} if account is None else {s.stage: s.mu for s in account.stages if s.stage in account.spent}


@dataclass
class Held:
    """Everything of one stage the aggregator received: masked releases by site, every revealed share (kind, site,
    share), the helper's terms by site, whether W was revealed, and every site's commitments."""

    masked: dict[str, list[np.ndarray]] = field(default_factory=dict)
    shares: list[tuple[str, str, bytes]] = field(default_factory=list)
    terms: dict[str, np.ndarray] = field(default_factory=dict)
    w_revealed: bool = False
    commitments: dict[str, list[bytes]] = field(default_factory=dict)


def held_from_exchanges(exchanges: Iterable[Mapping[str, Any]], plan: RoundPlan) -> dict[str, Held]:
    """Per stage, what the aggregator received in these exchanges: each an item ``{"action", "node", "request",
    "reply"}`` with the request and reply as {"config", "arrays"} (reply None: nothing came back)."""
    held = {p.stage: Held() for p in plan.stages}
    for item in exchanges:
        reply = item.get("reply")
        if not reply or reply["config"].get("status") != "ok":
            continue
        action, request, config, arrays = item["action"], item["request"]["config"], reply["config"], reply["arrays"]
        if action == "setup":
            name = item.get("site")
            for p in plan.stages:
                held[p.stage].commitments[name] = list(config.get(f"commit/{p.stage}", []))
        elif action == "release" and "masked" in arrays:
            held[request["stage"]].masked.setdefault(item["site"], []).append(np.asarray(arrays["masked"]))
        elif action == "reveal":
            stage = held[request["stage"]]
            for name, kind, piece in zip(plan.names, config.get("kinds", []), config.get("shares", []), strict=False):
                if kind in shares.KINDS and isinstance(piece, bytes) and len(piece) == shares.SHARE_BYTES:
                    stage.shares.append((kind, name, piece))
            stage.w_revealed |= "total" in arrays
        elif action == "recover" and "terms" in arrays:
            for name, row in zip(config.get("dropped", []), arrays["terms"], strict=False):
                held[request["stage"]].terms[name] = np.asarray(row)
    return held


@dataclass(frozen=True)
class Knowledge:
    """Per stage: the sites whose releases the aggregator can unmask and those whose noise terms it knows."""

    released: frozenset[str]
    terms: frozenset[str]
    w_known: bool


def _rebuilt(held: Held, kind: str, name: str, round_id: str, stage: str, threshold: int) -> bool:
    pieces = [p for k, n, p in held.shares if k == kind and n == name]
    committed = held.commitments.get(name, [b"", b""])[shares.KINDS.index(kind)]
    try:
        seed = shares.combine(pieces, threshold)
    except shares.ShareError:
        return False
    return shares.commitment(kind, round_id, stage, name, seed) == committed


def knowledge(held: Mapping[str, Held], plan: RoundPlan, round_id: str) -> dict[str, Knowledge]:
    out = {}
    for p in plan.stages:
        h = held[p.stage]
        released = {n for n in plan.names if n in h.masked and _rebuilt(h, "mask", n, round_id, p.stage,
                                                                           plan.threshold)}
        terms = {n for n in plan.names if n in h.terms or _rebuilt(h, "noise", n, round_id, p.stage, plan.threshold)}
        out[p.stage] = Knowledge(released=frozenset(released), terms=frozenset(terms), w_known=h.w_revealed)
    return out


def view_eps(plan: RoundPlan, stage: str, victim: str, know: Knowledge, colluders: Sequence[str] = ()
             ) -> tuple[float, float]:
    """(exact eps of ``victim`` against the aggregator with ``know`` and the sites ``colluders`` (each knows its own
    e_t and g_t, and W helper-free), the promised eps) at the stage's delta: 0 when its release cannot be unmasked
    (the output is a function of the unmasked releases and the known terms)."""
    p = plan.stage(stage)
    v = plan.names.index(victim)
    promise = float(p.eps[v])
    if victim not in know.released:
        return 0.0, promise
    design = p.design
    n = design.n_sites
    m = 2 * n + 1
    cov = np.zeros((m, m))
    cov[: n + 1, : n + 1] = joint_covariance(design)
    cov[n + 1:, n + 1:] = np.diag(np.clip(design.var_g, 0.0, None))
    rows, b = [], []
    for t, name in enumerate(plan.names):
        if name in know.released:
            row = np.zeros(m)
            row[t] = row[n + 1 + t] = 1.0
            rows.append(row)
            b.append(1.0 if t == v else 0.0)
        if name in know.terms:
            row = np.zeros(m)
            row[t] = 1.0
            rows.append(row)
            b.append(0.0)
    for name in colluders:
        t = plan.names.index(name)
        for column in (t, n + 1 + t):
            row = np.zeros(m)
            row[column] = 1.0
            rows.append(row)
            b.append(0.0)
    if know.w_known or (colluders and not NOISE_VARIANTS[plan.settings.noise].helper):
        row = np.zeros(m)
        row[n] = 1.0
        rows.append(row)
        b.append(0.0)
    lin = np.array(rows)
    sigma = effective_sigma(np.array(b), lin @ cov @ lin.T)
    eps = math.inf if sigma == 0 else exact_eps(sigma, float(p.sensitivities[v]), float(p.delta[v]))
    return eps, promise


def worst(plan: RoundPlan, know: Mapping[str, Knowledge], victims: Sequence[str] | None = None,
          colluders: Sequence[str] = ()) -> list[tuple[str, str, float, float]]:
    """(stage, site, eps, promise) of every site (or ``victims``) but the colluders, and stage."""
    return [(p.stage, name, *view_eps(plan, p.stage, name, know[p.stage], colluders))
            for p in plan.stages for name in (victims or plan.names) if name not in colluders]


def ledger_problems(plan: RoundPlan, rows: Sequence[tuple[str, str, float, float]], round_id: str,
                    ledgers: Mapping[str, Any]) -> list[str]:
    """Where a site's ledger records less than the aggregator could learn: every site whose release it can read
    (eps > 0) must have recorded that stage of the round as spent (not merely reserved) at a mu whose eps at the
    stage's delta is at least that."""
    problems = []
    for stage, site, eps, _ in rows:
        if eps == 0.0:
            continue
        spent = spent_stages(ledgers[site], round_id)
        delta = float(plan.stage(stage).delta[plan.names.index(site)])
        recorded = composed_eps([spent[stage]], delta) if stage in spent else 0.0
        if recorded < eps * (1 - 1e-9):
            problems.append(f"{site} stage {stage}: the aggregator learnt eps {eps:.6g}; recorded {recorded:.6g}")
    return problems
