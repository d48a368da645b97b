"""What a site does with each request of the aggregator, refusing (status "refused", the reason naming the failed
check) anything outside the plan it computed itself (docs/federated.md, "Sites protect themselves").

* ``hello`` (here): reads its data, makes a fresh X25519 key for the round (kept in ``state``) and answers with its
  reported budget in a statement signed by its identity key (:mod:`capefed.app.trust`).
* ``setup`` (:mod:`capefed.app.sitesetup`): secret-shares its self-mask seed (and, helper-free, its noise seed and
  masked secure-sum share) with every other site, sealed and signed, bound to the round's plan.
* ``release`` (:mod:`capefed.app.siterelease`): checks the aggregator's f_s, tau_g,s^2 and the noise, records the
  release in its ledger and sends it masked.
* ``confirm`` and ``reveal`` (:mod:`capefed.app.sitereveal`): signs one survivor set per stage, then, once every member
  of it signed the same set, reveals per site the self-mask share (in the set) or the noise share (not in it), never
  both, once.

Every request after the hello must carry the plan this site set up with (its digest: settings and signed
statements) and come within its own ``deadline`` of its previous answer in the round.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import dp
from .messages import Payload
from .requests import RequestError, RoundContext, round_context, text
from .sealing import SealError, new_key_pair
from .shares import ShareError
from .site import AgnModel, SiteConfig, SiteConfigError, agn_model, load_site
from .sitestudy import (
    StudyRefusal,
    StudyRound,
    check_peers,
    check_round,
    signed_by_site,
    study_round,
    synthetic_data,
)
from .trust import TrustError, load_identity, read_roster, signed_statement

__all__ = ["Refusal", "SiteParty", "blob_context", "handle_site", "mask_context"]

SETUP = "setup"
"""The step that fixes a round's plan at a site: every later request must carry the same plan."""


class Refusal(Exception):
    """A request this site refuses; the text names the failed check."""


def _refuse(reason: str, name: str | None = None) -> Payload:
    config = {"status": "refused", "reason": reason}
    if name:
        config["name"] = name
    return Payload(config)


def blob_context(round_id: str, plan: str, stage: str, sender: str, receiver: str) -> bytes:
    """What a set-up message from ``sender`` to ``receiver`` is sealed and signed for: the round, its plan's digest,
    the stage and the pair."""
    return "\x1f".join(("capefed-setup-v2", round_id, plan, stage, sender, receiver)).encode()


def mask_context(round_id: str, stage: str, a: str, b: str) -> bytes:
    first, second = sorted((a, b))
    return "\x1f".join(("capefed-mask-v1", round_id, stage, first, second)).encode()


class SiteParty:
    """One request at one site: configuration, identity, roster and the node's state (byte strings by key)."""

    def __init__(self, config: SiteConfig, state: MutableMapping[str, bytes]):
        self.config, self.state, self.name = config, state, config.name
        self.notes: list[str] = []  # lines for this site's own log (never sent)
        try:
            self.identity = load_identity(config.identity)
            self.roster = read_roster(config.roster)
            pinned = self.roster.key(self.name, "site")
        except TrustError as exc:
            raise Refusal(f"identity: {exc}") from exc
        if pinned.public_bytes_raw() != self.identity.public_key().public_bytes_raw():
            raise Refusal(f"identity: this node's key is not the one the roster pins for site {self.name}")

    def key(self, round_id: str, *parts: str) -> str:
        """The state key of one thing of a round."""
        return "/".join((round_id, *parts))

    def secret(self, round_id: str) -> bytes:
        if self.config.seed is not None:
            return dp.secret_bytes(self.config.seed)
        key = self.key(round_id, "secret")
        if key not in self.state:
            self.state[key] = dp.fresh_secret()
        return self.state[key]

    def data(self, settings: dp.RoundSettings, dim: int | None, sr: StudyRound | None = None, round_id: str = ""
             ) -> tuple[Any, dp.SiteBudget]:
        """Its data for the round and the budget it reports; in a dry run the data are synthetic of the same shape
        (drawn from a seed kept for the round, so every stage reads the same), its own file only checked."""
        agn = agn_model(settings.algorithm, settings, dim)
        data, budget = load_site(self.config, settings.algorithm, agn)
        if sr is not None and sr.dry:
            seed = self.state.get(self.key(round_id, "synthetic"))
            if seed is None:
                seed = self.state[self.key(round_id, "synthetic")] = dp.fresh_secret()
            rng = np.random.default_rng(int.from_bytes(seed, "big"))
            data = synthetic_data(settings.algorithm, budget, settings, rng)
        return data, budget

    def ledger(self) -> dp.Ledger:
        """Its ledger, every event checked with its key (a missing or damaged ledger or key is a refusal), made with
        the totals its configuration names (when it names them)."""
        c = self.config
        ledger = dp.read_ledger(c.ledger, self.ledger_key(), self.name)
        if c.budget_eps is not None and (ledger.eps_total, ledger.delta_total) != (c.budget_eps, c.budget_delta):
            raise Refusal(f"its ledger was made for eps_total = {ledger.eps_total:g} at delta_total = "
                          f"{ledger.delta_total:g}; its configuration says {c.budget_eps:g} at {c.budget_delta:g} (a "
                          "budget is not reset by changing the configuration)")
        return ledger

    def ledger_key(self) -> bytes:
        return dp.read_ledger_key(self.config.ledger_key)

    def update_ledger(self, change) -> dp.Ledger:
        """Append events to its ledger under its lock (``dpcore.federation.update_ledger``)."""
        self.ledger()  # the configured totals
        return dp.update_ledger(self.config.ledger, self.ledger_key(), self.name, change)

    def _bind(self, ctx: RoundContext, step: str) -> None:
        """The plan digest of the round (fixed at set-up) and this site's deadline between two steps."""
        saved = self.state.get(self.key(ctx.round_id, "plan"))
        if step == SETUP and saved is None:
            self.state[self.key(ctx.round_id, "plan")] = ctx.digest.encode()
        elif saved is None:
            raise Refusal(f"it has not set up round {ctx.round_id} (no set-up request came before this {step})")
        elif saved.decode() != ctx.digest:
            raise Refusal(f"the round's settings or statements differ from those it set up round {ctx.round_id} with "
                          "(another plan than the one it was shown before; the aggregator equivocates)")
        last = self.state.get(self.key(ctx.round_id, "last"))
        if last is not None and time.time() - float(last.decode()) > self.config.deadline:
            raise Refusal(f"the {step} request came {time.time() - float(last.decode()):.0f} s after its previous "
                          f"answer in round {ctx.round_id}; it waits at most {self.config.deadline:g} s between two "
                          "steps (its own deadline)")

    def context(self, c: Mapping[str, Any], step: str) -> Step:
        """The verified round context, its study and ledger, this site's data and budget now, and its round key;
        refuses when its values changed since its statement, the plan breaks its promise or its limits, the round is
        outside the study it signed or its ledger cannot back it, or the plan is not the one it set up with."""
        ctx = round_context(c, self.roster)
        sr = study_round(c, self.roster, self.name)
        self._bind(ctx, step)
        private = self.state.get(self.key(ctx.round_id, "key"))
        if private is None:
            raise Refusal(f"it has no key for round {ctx.round_id} (was it restarted after the hello?)")
        data, budget = self.data(ctx.settings, ctx.plan.dim, sr, ctx.round_id)
        mine = ctx.statements.get(self.name)
        if mine is None or mine.budget != budget.to_dict():
            site = budget.site
            raise Refusal(f"its budget or data changed since the design (now N_s = {site.n}, eps = {site.eps:g}, "
                          f"delta = {site.delta:g}, weight = {site.weight}, D = {budget.dim}); it releases nothing "
                          "under a design made for other values")
        required = self.config.collusion
        if required is None:
            required = dp.default_collusion(len(ctx.plan.names))
        problem = dp.site_plan_problem(ctx.plan, budget, min_collusion=required, max_dropouts=self.config.dropouts)
        if problem:
            raise Refusal(f"refuses the design: {problem}")
        ledger = self.ledger()
        check_round(ledger, sr, ctx, self.name)
        if step == SETUP:
            check_peers(ledger, ctx, self.name, int(self.state.get(self.key(ctx.round_id, "events"), b"1")))
        return Step(ctx=ctx, data=data, budget=budget, private=private, study=sr, ledger=ledger)

    def hello(self, c: Mapping[str, Any]) -> Payload:
        round_id = text(c, "round")
        algorithm = text(c, "algorithm", choices=tuple(dp.ROUND_STAGES))
        sr = study_round(c, self.roster, self.name)
        ledger = self.ledger()
        signed_by_site(ledger, sr.study)
        agn = AgnModel.from_request(c) if dp.federated_algorithm(algorithm).public_model else None
        _, budget = load_site(self.config, algorithm, agn)
        if self.key(round_id, "key") in self.state:
            raise Refusal(f"it already answered the hello of round {round_id} (one round key per round)")
        private, public = new_key_pair()
        self.state[self.key(round_id, "key")] = private
        self.state[self.key(round_id, "events")] = str(ledger.head.count).encode()
        statement, signature = signed_statement(self.identity, round_id, self.name, budget.to_dict(), public,
                                                study=sr.study.digest, ledger=ledger.head.to_list(), mode=sr.mode)
        site = budget.site
        reply = {"status": "ok", "role": "site", "name": site.name, "n": site.n, "eps": site.eps,
                 "delta": site.delta, "dim": budget.dim, "public_key": public, "digest": dp.budget_digest(budget),
                 "statement": statement, "signature": signature}
        if site.weight is not None:
            reply["weight"] = site.weight
        return Payload(reply)


@dataclass(frozen=True, kw_only=True)
class Step:
    """One verified request of a round at a site: its context, the site's data and budget, its round key, the
    round's study and mode, and its ledger as read for the request."""

    ctx: RoundContext
    data: Any
    budget: dp.SiteBudget
    private: bytes
    study: StudyRound
    ledger: dp.Ledger


class _Request(dict):
    """The request's configuration values with its arrays attached (fields are read only through the parsers)."""

    def __init__(self, payload: Payload):
        super().__init__(payload.config)
        self.arrays = payload.arrays


def _handlers(site: SiteParty) -> dict[str, Any]:
    from .siterelease import release  # noqa: PLC0415  (the steps import this module)
    from .siteresult import result  # noqa: PLC0415
    from .sitereveal import confirm, reveal  # noqa: PLC0415
    from .sitesetup import setup  # noqa: PLC0415

    return {"hello": site.hello, "setup": lambda c: setup(site, c), "release": lambda c: release(site, c),
            "confirm": lambda c: confirm(site, c), "reveal": lambda c: reveal(site, c),
            "result": lambda c: result(site, c)}


def handle_site(action: str, config: Mapping[str, Any], request: Payload, state: MutableMapping[str, bytes]
                ) -> Payload:
    """Answer one request; anything unusable is answered with status "refused" and the reason."""
    try:
        site_config = SiteConfig.from_mapping(config)
    except SiteConfigError as exc:
        name = str(config.get("name", "?"))[:64]
        return _refuse(f"site {name}: configuration: {exc}", name)
    name = site_config.name
    try:
        site = SiteParty(site_config, state)
        handlers = _handlers(site)
        if action not in handlers:
            return _refuse(f"site {name}: unknown request {action[:40]!r}")
        reply = handlers[action](_Request(request))
        reply.notes.extend(site.notes)
        round_id = request.config.get("round")
        if isinstance(round_id, str) and reply.config.get("status") == "ok":
            state[site.key(round_id, "last")] = repr(time.time()).encode()
        return reply
    except Refusal as exc:
        return _refuse(f"site {name}: {exc}", name if action == "hello" else None)
    except (RequestError, SiteConfigError, TrustError, SealError, ShareError, StudyRefusal, dp.InputError) as exc:
        return _refuse(f"site {name}: {exc}", name if action == "hello" else None)
