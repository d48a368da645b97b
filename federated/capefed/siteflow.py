"""What a site does with each request of the aggregator, refusing (status "refused", the reason naming the failed
check) anything outside the plan it computed itself (docs/federated.md, "Sites protect themselves").

* ``hello`` (here): reads its data, makes a fresh X25519 key for the round (kept in ``state``) and answers with its
  reported budget in a statement signed by its identity key (:mod:`capefed.trust`).
* ``setup`` (:mod:`capefed.sitesetup`): secret-shares its self-mask seed (and, helper-free, its noise seed and masked
  secure-sum share) with every other site, sealed and signed, bound to the round's plan.
* ``release`` (:mod:`capefed.siterelease`): checks the aggregator's f_s, tau_g,s^2 and the noise, records the release
  in its ledger and sends it masked.
* ``confirm`` and ``reveal`` (:mod:`capefed.sitereveal`): signs one survivor set per stage, then, once every member of
  it signed the same set, reveals per site the self-mask share (in the set) or the noise share (not in it), never
  both, once.

Every request after the hello must carry the plan this site set up with (its digest: settings and signed
statements) and come within its own ``deadline`` of its previous answer in the round.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping
from typing import Any

from . import dp
from .messages import Payload
from .requests import RequestError, RoundContext, round_context, text
from .sealing import SealError, new_key_pair
from .shares import ShareError
from .site import AgnModel, SiteConfig, SiteConfigError, load_site
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

    def data(self, settings: dp.RoundSettings, dim: int | None) -> tuple[Any, dp.SiteBudget]:
        agn = None
        if settings.algorithm == "capeAGN":
            agn = AgnModel(model=settings.model, dim=dim if settings.model == "stm" else None,
                           sigma2=settings.sigma2, norm_bound=settings.norm_bound)
        return load_site(self.config, settings.algorithm, agn)

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

    def context(self, c: Mapping[str, Any], step: str) -> tuple[RoundContext, Any, dp.SiteBudget, bytes]:
        """The verified round context, this site's data and budget now, and its round key; refuses when its values
        changed since its statement, the plan breaks its promise or its limits, or is not the plan it set up with."""
        ctx = round_context(c, self.roster)
        private = self.state.get(self.key(ctx.round_id, "key"))
        if private is None:
            raise Refusal(f"it has no key for round {ctx.round_id} (was it restarted after the hello?)")
        data, budget = self.data(ctx.settings, ctx.plan.dim)
        mine = ctx.statements.get(self.name)
        if mine is None or mine.budget != budget.to_dict():
            site = budget.site
            raise Refusal(f"its budget or data changed since the design (now N_s = {site.n}, eps = {site.eps:g}, "
                          f"delta = {site.delta:g}, weight = {site.weight}, D = {budget.dim}); it releases nothing "
                          "under a design made for other values")
        problem = dp.site_plan_problem(ctx.plan, budget, min_collusion=self.config.collusion,
                                       max_dropouts=self.config.dropouts)
        if problem:
            raise Refusal(f"refuses the design: {problem}")
        self._bind(ctx, step)
        return ctx, data, budget, private

    def ledger(self):
        c = self.config
        return dp.read_ledger(c.ledger, self.name, c.budget_eps, c.budget_delta)

    def check_ledger(self, ctx: RoundContext) -> None:
        """The whole round must fit the ledger's total budget (checked at set-up and before the first release)."""
        ledger = self.ledger()
        if not any(e.round == ctx.round_id for e in ledger.entries):
            dp.spend(ledger, [dp.release_entry(ctx.plan, s, self.name, ctx.round_id) for s in ctx.plan.stages])

    def commit_budget(self, ctx: RoundContext, stage: dp.RoundStage) -> None:
        """Record this stage's release in the ledger before it is sent (at its worst-case view,
        ``dpcore.federation.release_entry``), under the ledger's lock (``dpcore.federation.update_ledger``: concurrent
        rounds lose no release): the whole round must fit the total budget, and a stage already recorded (a replayed
        request) is refused."""
        entry = dp.release_entry(ctx.plan, stage, self.name, ctx.round_id)

        def add(ledger):
            if not any(e.round == ctx.round_id for e in ledger.entries):
                dp.spend(ledger, [dp.release_entry(ctx.plan, s, self.name, ctx.round_id) for s in ctx.plan.stages])
            return dp.spend(ledger, [entry])

        c = self.config
        dp.update_ledger(c.ledger, self.name, c.budget_eps, c.budget_delta, add)

    def hello(self, c: Mapping[str, Any]) -> Payload:
        round_id = text(c, "round")
        algorithm = text(c, "algorithm", choices=tuple(dp.ROUND_STAGES))
        agn = AgnModel.from_request(c) if algorithm == "capeAGN" else None
        _, budget = load_site(self.config, algorithm, agn)
        if self.key(round_id, "key") in self.state:
            raise Refusal(f"it already answered the hello of round {round_id} (one round key per round)")
        private, public = new_key_pair()
        self.state[self.key(round_id, "key")] = private
        statement, signature = signed_statement(self.identity, round_id, self.name, budget.to_dict(), public)
        site = budget.site
        reply = {"status": "ok", "role": "site", "name": site.name, "n": site.n, "eps": site.eps,
                 "delta": site.delta, "dim": budget.dim, "public_key": public, "digest": dp.budget_digest(budget),
                 "statement": statement, "signature": signature}
        if site.weight is not None:
            reply["weight"] = site.weight
        return Payload(reply)


class _Request(dict):
    """The request's configuration values with its arrays attached (fields are read only through the parsers)."""

    def __init__(self, payload: Payload):
        super().__init__(payload.config)
        self.arrays = payload.arrays


def _handlers(site: SiteParty) -> dict[str, Any]:
    from .siterelease import release  # noqa: PLC0415  (the steps import this module)
    from .sitereveal import confirm, reveal  # noqa: PLC0415
    from .sitesetup import setup  # noqa: PLC0415

    return {"hello": site.hello, "setup": lambda c: setup(site, c), "release": lambda c: release(site, c),
            "confirm": lambda c: confirm(site, c), "reveal": lambda c: reveal(site, c)}


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
        round_id = request.config.get("round")
        if isinstance(round_id, str) and reply.config.get("status") == "ok":
            state[site.key(round_id, "last")] = repr(time.time()).encode()
        return reply
    except Refusal as exc:
        return _refuse(f"site {name}: {exc}", name if action == "hello" else None)
    except (RequestError, SiteConfigError, TrustError, SealError, ShareError, dp.InputError) as exc:
        return _refuse(f"site {name}: {exc}", name if action == "hello" else None)
