"""A site's study and ledger in a round (docs/federated.md, "A study every site approves", "The ledger").

* **The study.** Every request carries the study (its text), every site's approval of it and the round's mode. The
  site answers only a round of a study its own ledger says it approved (an ``approve`` event with the study's digest:
  another study, or the same one with one field changed, has another digest), that every site of the study signed,
  whose algorithm, settings and sites' values are the study's (:func:`dpcore.federation.round_problem`) and whose
  every site's signed statement names the same study and mode. It takes part in at most the study's number of rounds
  of each algorithm (its ledger counts them).
* **Ledger heads.** Every statement a site signs carries its ledger's head; a site refuses a round in which another
  site's ledger is not a continuation of the one it saw before (:func:`dpcore.federation.peer_problem`).
* **Two phases.** At set-up the site reserves the round's worst-case cost in its ledger and answers with a signed
  reservation (round, plan digest, its ledger's head after it); a release request must carry every site's reservation,
  each signed and newer than that site's statement. Before it signs a survivor set holding itself, the site records the
  stage as spent. A round ends at the site with its result, or once its own deadline has passed for every step a
  round can have (:data:`ROUND_STEPS`): with its result the unsigned stages are void, without it every stage counts
  (:func:`dpcore.federation.stale_rounds`).
* **Dry runs.** In a dry run the site checks everything above and its ledger (read, verified, locked) but writes
  nothing to it, and it releases statistics of synthetic data of the study's shape, never its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import dp
from .requests import RequestError, RoundContext, text
from .trust import MODES, Roster, TrustError, sign, verify, verify_approvals

__all__ = ["ROUND_STEPS", "StudyRound", "check_peers", "check_reservations", "check_round", "reservation",
           "study_round", "synthetic_data"]

ROUND_STEPS = 10
"""The most requests a site answers in one round after its set-up (release, confirm and reveal of two stages, the
result, and margin): a round reserved more than this many of the site's deadlines ago is over at the site."""


@dataclass(frozen=True, kw_only=True)
class StudyRound:
    """What a request says about the round's study: the parsed study and whether the round is a dry run."""

    study: dp.Study
    dry: bool

    @property
    def mode(self) -> str:
        return "dry-run" if self.dry else "real"


class StudyRefusal(ValueError):
    """A round outside the study the site signed, or a ledger that cannot back it; the text names the check."""


def study_round(c: Mapping[str, Any], roster: Roster, name: str | None = None) -> StudyRound:
    """The request's study, every site's approval of it checked against the roster (``name``'s own first: a study
    whose digest is not the one this site signed is refused as such), and the round's mode."""
    raw = text(c, "study", limit=dp.MAX_STUDY_BYTES)
    mode = text(c, "mode", choices=MODES)
    try:
        study = dp.parse_study(raw)
    except dp.InputError as exc:
        raise StudyRefusal(f"{exc}") from exc
    approvals = c.get("approvals")
    names = sorted(study.names)
    if name in names and isinstance(approvals, list) and len(approvals) == len(names):
        try:
            verify_approvals(roster, study.digest, [name], [approvals[names.index(name)]])
        except TrustError:
            raise StudyRefusal(_not_signed(study)) from None
    try:
        verify_approvals(roster, study.digest, names, approvals)
    except TrustError as exc:
        raise StudyRefusal(f"the study's approvals: {exc}") from exc
    return StudyRound(study=study, dry=mode == "dry-run")


def signed_by_site(ledger: dp.Ledger, study: dp.Study) -> None:
    """The study is one this site approved: its ledger holds the approval of exactly this digest."""
    if not dp.approved(ledger, study.digest):
        raise StudyRefusal(_not_signed(study))


def _not_signed(study: dp.Study) -> str:
    return (f"it did not sign study {study.digest[:16]}... ({study.title[:80]!r}): a site answers only rounds of a "
            "study it signed, and a study with any field changed has another digest")


def check_round(ledger: dp.Ledger, sr: StudyRound, ctx: RoundContext, name: str) -> None:
    """Everything a site checks of a round against its study and its ledger (module docstring); raises
    StudyRefusal naming the check."""
    signed_by_site(ledger, sr.study)
    for other, statement in ctx.statements.items():
        if statement.study != sr.study.digest or statement.mode != sr.mode:
            raise StudyRefusal(f"site {other}'s statement is for study {statement.study[:16]}... ({statement.mode}), "
                               f"not this request's {sr.study.digest[:16]}... ({sr.mode})")
    problem = dp.round_problem(sr.study, ctx.settings, ctx.plan.budgets)
    if problem:
        raise StudyRefusal(f"the round is outside the study it signed: {problem}")
    account = dp.round_accounts(ledger).get(ctx.round_id)
    if account is not None and account.settled:
        raise StudyRefusal(f"round {ctx.round_id} is closed in its ledger ({account.reason}); it answers nothing "
                           "more of it")


def check_peers(ledger: dp.Ledger, ctx: RoundContext, name: str, upto: int) -> None:
    """Every other site's ledger, as its statement reports it, continues the one this site recorded before the round
    began (its first ``upto`` events: rounds of one run run side by side, and a statement is older than the
    reservations of the run's other rounds)."""
    for other, statement in ctx.statements.items():
        if other == name:
            continue
        try:
            head = dp.LedgerHead.from_list(statement.ledger, f"site {other}'s ledger head")
        except dp.InputError as exc:
            raise StudyRefusal(str(exc)) from exc
        problem = dp.peer_problem(ledger, other, head, upto)
        if problem:
            raise StudyRefusal(f"{problem}; it takes no part in a round with a ledger that does not continue the one "
                               "it saw")


def peers(ctx: RoundContext, name: str) -> dict[str, dp.LedgerHead]:
    """The ledger heads of the other sites' statements."""
    return {n: dp.LedgerHead.from_list(s.ledger) for n, s in ctx.statements.items() if n != name}


def reservation(identity: Any, ctx: RoundContext, name: str, head: dp.LedgerHead, mode: str) -> tuple[str, bytes]:
    """A site's signed reservation: the round, its plan's digest, the site, the mode and its ledger's head after the
    reservation."""
    body = json.dumps({"round": ctx.round_id, "plan": ctx.digest, "site": name, "mode": mode,
                       "ledger": head.to_list()}, sort_keys=True, separators=(",", ":"))
    return body, sign(identity, "reservation", body)


def check_reservations(c: Mapping[str, Any], ctx: RoundContext, roster: Roster, mode: str
                       ) -> dict[str, dp.LedgerHead]:
    """Every site of the plan reserved this round: one reservation per site, signed by its pinned key, for this round,
    plan and mode, its ledger the one of its statement with at least one event more (a dry run: none fewer). Returns
    the heads (what the site records of the others when it spends)."""
    bodies, signatures = c.get("reservations"), c.get("reservation_signatures")
    names = list(ctx.plan.names)
    if not isinstance(bodies, list) or not isinstance(signatures, list) or not (
            len(bodies) == len(signatures) == len(names)) or not all(isinstance(b, str) for b in bodies):
        raise RequestError("the request must carry one signed reservation per site of the plan")
    heads = {}
    for name, body, signature in zip(names, bodies, signatures, strict=True):
        if len(body) > 1024 or not verify(roster.key(name, "site"), signature, "reservation", body):
            raise StudyRefusal(f"site {name}'s reservation is not signed by the key the roster pins for it: every "
                               "site reserves its budget before any site releases")
        doc = dp.load_json(body, f"site {name}'s reservation", max_bytes=1024)
        if not isinstance(doc, dict) or (doc.get("round"), doc.get("plan"), doc.get("site"), doc.get("mode")) != (
                ctx.round_id, ctx.digest, name, mode):
            raise StudyRefusal(f"site {name}'s reservation is for another round, plan or mode")
        head = dp.LedgerHead.from_list(doc.get("ledger"), f"site {name}'s reserved ledger head")
        said = dp.LedgerHead.from_list(ctx.statements[name].ledger)
        grew = head.count > said.count if mode == "real" else head.count >= said.count
        if head.ledger != said.ledger or not grew:
            raise StudyRefusal(f"site {name}'s reservation does not extend the ledger of its statement (it recorded "
                               "no reservation)")
        heads[name] = head
    return heads


def synthetic_data(algorithm: str, budget: dp.SiteBudget, settings: dp.RoundSettings, rng: np.random.Generator
                   ) -> Any:
    """Data of the study's shape for a dry run (N_s samples of D), drawn fresh and never the site's own: capePCA
    samples of norm at most 1, capeAGN documents of a random topic model or samples of a random Gaussian mixture;
    drawn from ``rng`` (a dry run's: seeded from a fresh secret kept for its round)."""
    return dp.federated_algorithm(algorithm).synthetic(budget, settings, rng)


def horizon(deadline: float) -> float:
    """Seconds after its reservation a round is certainly over at a site whose deadline between steps is this."""
    return ROUND_STEPS * deadline


def now() -> float:
    return time.time()
