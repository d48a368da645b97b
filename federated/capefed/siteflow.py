"""What a site does with each request of the aggregator, refusing (status "refused", the reason naming the failed
check) anything outside the plan it computed itself (docs/federated.md, "Sites protect themselves").

* ``hello``: reads its data, makes a fresh X25519 key for the round (kept in ``state``) and answers with its
  reported budget in a statement signed by its identity key (:mod:`capefed.trust`).
* ``setup`` (helper-free only): verifies every site's statement against the roster, recomputes the plan, checks
  its own promise in it (:func:`dpcore.federation.site_plan_problem`) and its ledger, then for every stage draws its
  w_s from its noise seed, masks its fixed-point encoding with one ChaCha20 mask per other site (keys from X25519
  between the two sites' round keys) and sends every other site, sealed and signed, its masked share and a
  Shamir share (t-of-S, pycryptodome) of its noise seed.
* ``release``: the same checks; the aggregator's f_s, tau_g,s^2 and W must be what the plan says (f's sample variance
  within the chi-square bounds of the design's); it opens its helper share (signed by the pinned helper key) or
  sums the masked shares into W and sets e_s = (q_s - c_s W) / mu_s; it records the release in its ledger (which
  refuses a round the total budget cannot pay for), draws g_s from ChaCha20 and releases.
* ``recover`` (helper-free): after sites dropped out, a survivor that released the stage, whose promise still holds
  with the dropped sites counted as colluders (:func:`dpcore.federation.dropout_audit`), hands the aggregator its
  Shamir shares of the dropped sites' noise seeds and W.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

import numpy as np
from Crypto.Protocol.SecretSharing import Shamir
from scipy.stats import chi2

from . import dp
from .messages import Payload
from .requests import RequestError, RoundContext, array, blob, number, round_context, text, texts
from .sealing import SealError, new_key_pair, open_array, open_bytes, pair_key, seal_bytes, seal_context
from .site import AgnModel, SiteConfig, SiteConfigError, load_site
from .trust import TrustError, load_identity, read_roster, sign, signed_statement, verify

__all__ = ["CHI2_TAIL", "blob_context", "handle_site", "mask_context", "parse_blob"]

CHI2_TAIL = 1e-9
"""Probability under the design's law of refusing an honest f_s or e_s by the sample-variance check."""
_SHARE_BYTES = 1 + 32


class _Refusal(Exception):
    pass


def _refuse(reason: str, name: str | None = None) -> Payload:
    config = {"status": "refused", "reason": reason}
    if name:
        config["name"] = name
    return Payload(config)


def blob_context(round_id: str, stage: str, sender: str, receiver: str) -> bytes:
    return "\x1f".join(("capefed-setup-v1", round_id, stage, sender, receiver)).encode()


def mask_context(round_id: str, stage: str, a: str, b: str) -> bytes:
    first, second = sorted((a, b))
    return "\x1f".join(("capefed-mask-v1", round_id, stage, first, second)).encode()


def parse_blob(plain: bytes, size: int) -> tuple[np.ndarray, bytes]:
    """A setup message's content: the masked share (``size`` uint64) and a Shamir share (index, 32 bytes)."""
    if len(plain) != 8 * size + _SHARE_BYTES:
        raise SealError(f"a setup message holds {len(plain)} bytes, expected {8 * size + _SHARE_BYTES}")
    return np.frombuffer(plain[: 8 * size], dtype="<u8").astype(np.uint64), plain[8 * size:]


class _Site:
    """One request at one site: configuration, identity, roster and state."""

    def __init__(self, config: SiteConfig, state: MutableMapping[str, bytes]):
        self.config, self.state, self.name = config, state, config.name
        try:
            self.identity = load_identity(config.identity)
            self.roster = read_roster(config.roster)
            pinned = self.roster.key(self.name, "site")
        except TrustError as exc:
            raise _Refusal(f"identity: {exc}") from exc
        if pinned.public_bytes_raw() != self.identity.public_key().public_bytes_raw():
            raise _Refusal(f"identity: this node's key is not the one the roster pins for site {self.name}")

    # -- shared -------------------------------------------------------------------------------------------------
    def secret(self, round_id: str) -> bytes:
        if self.config.seed is not None:
            return dp.secret_bytes(self.config.seed)
        key = f"{round_id}/secret"
        if key not in self.state:
            self.state[key] = dp.fresh_secret()
        return self.state[key]

    def data(self, settings: dp.RoundSettings, dim: int | None) -> tuple[Any, dp.SiteBudget]:
        agn = None
        if settings.algorithm == "capeAGN":
            agn = AgnModel(model=settings.model, dim=dim if settings.model == "stm" else None,
                           sigma2=settings.sigma2, norm_bound=settings.norm_bound)
        return load_site(self.config, settings.algorithm, agn)

    def context(self, c: Mapping[str, Any]) -> tuple[RoundContext, Any, dp.SiteBudget, bytes]:
        """The verified round context, this site's data and budget now, and its round key; refuses when its values
        changed since its statement or the plan breaks its promise."""
        ctx = round_context(c, self.roster)
        private = self.state.get(f"{ctx.round_id}/key")
        if private is None:
            raise _Refusal(f"it has no key for round {ctx.round_id} (was it restarted after the hello?)")
        data, budget = self.data(ctx.settings, ctx.plan.dim)
        mine = ctx.statements.get(self.name)
        if mine is None or mine.budget != budget.to_dict():
            site = budget.site
            raise _Refusal(f"its budget or data changed since the design (now N_s = {site.n}, eps = {site.eps:g}, "
                           f"delta = {site.delta:g}, weight = {site.weight}, D = {budget.dim}); it releases nothing "
                           "under a design made for other values")
        problem = dp.site_plan_problem(ctx.plan, budget, min_collusion=self.config.collusion)
        if problem:
            raise _Refusal(f"refuses the design: {problem}")
        return ctx, data, budget, private

    def _ledger(self):
        c = self.config
        return dp.read_ledger(c.ledger, self.name, c.budget_eps, c.budget_delta)

    def commit_budget(self, ctx: RoundContext, stage: dp.RoundStage) -> None:
        """Record this stage's release in the ledger before it is sent, under the ledger's lock (concurrent rounds
        lose no release). The first release of a round is allowed only if the whole round fits the total budget; a
        stage already recorded (a replayed request) is refused."""
        entry = dp.release_entry(ctx.plan, stage, self.name, ctx.round_id)

        def add(ledger):
            if not any(e.round == ctx.round_id for e in ledger.entries):
                dp.spend(ledger, [dp.release_entry(ctx.plan, s, self.name, ctx.round_id) for s in ctx.plan.stages])
            return dp.spend(ledger, [entry])

        c = self.config
        dp.update_ledger(c.ledger, self.name, c.budget_eps, c.budget_delta, add)

    def check_ledger(self, ctx: RoundContext) -> None:
        ledger = self._ledger()
        if not any(e.round == ctx.round_id for e in ledger.entries):
            dp.spend(ledger, [dp.release_entry(ctx.plan, s, self.name, ctx.round_id) for s in ctx.plan.stages])

    # -- hello ----------------------------------------------------------------------------------------------------
    def hello(self, c: Mapping[str, Any]) -> Payload:
        round_id = text(c, "round")
        algorithm = text(c, "algorithm", choices=tuple(dp.ROUND_STAGES))
        agn = AgnModel.from_request(c) if algorithm == "capeAGN" else None
        _, budget = load_site(self.config, algorithm, agn)
        private, public = new_key_pair()
        self.state[f"{round_id}/key"] = private
        statement, signature = signed_statement(self.identity, round_id, self.name, budget.to_dict(), public)
        site = budget.site
        reply = {"status": "ok", "role": "site", "name": site.name, "n": site.n, "eps": site.eps,
                 "delta": site.delta, "dim": budget.dim, "public_key": public, "digest": dp.budget_digest(budget),
                 "statement": statement, "signature": signature}
        if site.weight is not None:
            reply["weight"] = site.weight
        return Payload(reply)

    # -- helper-free set-up -------------------------------------------------------------------------------------
    def setup(self, c: Mapping[str, Any]) -> Payload:
        ctx, _, _, private = self.context(c)
        plan, s = ctx.plan, ctx.settings
        if s.noise != "helper-free":
            raise _Refusal(f"a set-up request belongs to the helper-free variant; the round's is {s.noise}")
        self.check_ledger(ctx)
        me = ctx.index(self.name)
        others = [n for n in plan.names if n != self.name]
        reply: dict[str, Any] = {"status": "ok", "recipients": others}
        for stage in plan.stages:
            seed = dp.noise_seed(self.secret(ctx.round_id), s.run, s.algorithm, stage.stage, self.name)
            encoded, _ = dp.site_draw(seed, plan, stage, me)
            add, subtract = [], []
            for other in others:
                key = pair_key(private, ctx.statements[other].public_key,
                               mask_context(ctx.round_id, stage.stage, self.name, other))
                mask = dp.secure_rng(key).bit_generator.random_raw(stage.size).astype(np.uint64)
                (add if plan.names.index(other) > me else subtract).append(mask)
            share = dp.mask_share(encoded, add, subtract).astype("<u8").tobytes()
            parts = [Shamir.split(plan.threshold, len(plan.names), half) for half in (seed[:16], seed[16:])]
            blobs, signatures = [], []
            for other in others:
                index = plan.names.index(other)
                piece = bytes([index + 1]) + parts[0][index][1] + parts[1][index][1]
                context = blob_context(ctx.round_id, stage.stage, self.name, other)
                sealed = seal_bytes(share + piece, ctx.statements[other].public_key, context)
                blobs.append(sealed)
                signatures.append(sign(self.identity, "setup", context, sealed))
            reply[f"blobs/{stage.stage}"] = blobs
            reply[f"blob_signatures/{stage.stage}"] = signatures
        return Payload(reply)

    def _open_setup(self, c: Mapping[str, Any], ctx: RoundContext, stage: dp.RoundStage, private: bytes,
                    senders: list[str]) -> list[tuple[np.ndarray, bytes]]:
        """The masked shares and Shamir shares other sites sent this site for ``stage``, verified and opened."""
        blobs, signatures = c.get("blobs"), c.get("blob_signatures")
        if not isinstance(blobs, list) or not isinstance(signatures, list) or not (
                len(blobs) == len(signatures) == len(senders)):
            raise RequestError("the request must carry one setup message and one signature per sender")
        opened = []
        for sender, sealed, signature in zip(senders, blobs, signatures, strict=True):
            if not isinstance(sealed, bytes) or len(sealed) > 8 * stage.size + 1024:
                raise RequestError(f"the setup message from site {sender} must be bytes of the stage's size")
            context = blob_context(ctx.round_id, stage.stage, sender, self.name)
            if not verify(self.roster.key(sender, "site"), signature, "setup", context, sealed):
                raise _Refusal(f"the setup message from site {sender} is not signed by the key the roster pins for "
                               "it (forged or altered)")
            try:
                opened.append(parse_blob(open_bytes(sealed, private, context), stage.size))
            except SealError as exc:
                raise _Refusal(f"the setup message from site {sender}: {exc}") from exc
        return opened

    # -- release ----------------------------------------------------------------------------------------------------
    def _helper_share(self, c: Mapping[str, Any], ctx: RoundContext, stage: dp.RoundStage, private: bytes,
                      count: int) -> np.ndarray:
        sealed = blob(c, "sealed_e")
        helpers = self.roster.names("helper")
        context = seal_context(ctx.round_id, stage.stage, self.name)
        if len(helpers) != 1 or not verify(self.roster.key(helpers[0], "helper"), c.get("helper_signature"),
                                           "share", context, sealed):
            raise _Refusal("the helper's share is not signed by the helper key the roster pins (a forged share)")
        try:
            return open_array(sealed, private, context, count)
        except SealError as exc:
            raise _Refusal(str(exc)) from exc

    def _own_row(self, c: Mapping[str, Any], ctx: RoundContext, stage: dp.RoundStage, private: bytes) -> np.ndarray:
        """This site's row e_s of the stage (before the noise object's shape) from the secure sum."""
        s, me = ctx.settings, ctx.index(self.name)
        senders = texts(c, "senders", most=dp.MAX_SITES)
        if sorted(senders) != sorted(n for n in ctx.plan.names if n != self.name):
            raise _Refusal("the secure sum needs a setup message from every other site of the plan")
        opened = self._open_setup(c, ctx, stage, private, senders)
        seed = dp.noise_seed(self.secret(ctx.round_id), s.run, s.algorithm, stage.stage, self.name)
        encoded, own = dp.site_draw(seed, ctx.plan, stage, me)
        add, subtract = [], []
        for other in (n for n in ctx.plan.names if n != self.name):
            key = pair_key(private, ctx.statements[other].public_key,
                           mask_context(ctx.round_id, stage.stage, self.name, other))
            mask = dp.secure_rng(key).bit_generator.random_raw(stage.size).astype(np.uint64)
            (add if ctx.plan.names.index(other) > me else subtract).append(mask)
        total = dp.secure_sum([dp.mask_share(encoded, add, subtract)] + [y for y, _ in opened], ctx.plan, stage)
        self.state[f"{ctx.round_id}/W/{stage.stage}"] = total.astype("<f8").tobytes()
        return dp.site_term(own, total, stage, me)

    def release(self, c: Mapping[str, Any]) -> Payload:
        ctx, data, budget, private = self.context(c)
        plan, s, me = ctx.plan, ctx.settings, ctx.index(self.name)
        stage = plan.stage(text(c, "stage", choices=[p.stage for p in plan.stages]))
        digest = dp.budget_digest(budget)
        if text(c, "digest") != digest:
            raise _Refusal("the release request names another digest than its own values' (changed since the design)")
        if f"{ctx.round_id}/released/{stage.stage}" in self.state:
            raise _Refusal(f"it already released stage {stage.stage} of round {ctx.round_id}")
        design = stage.design
        var_g = number(c, "var_g", 0.0, 1e300)
        if not dp.design_matches(np.array([var_g]), np.array([design.var_g[me]])):
            raise _Refusal(f"stage {stage.stage}: the aggregator asks for tau_g,s^2 = {var_g:.6g}; the plan this site "
                           f"computed says {design.var_g[me]:.6g} (a weakened design)")
        count = dp.noise_unique(stage.stage, s.path, plan.dim, s.k)
        f = array(c.arrays if hasattr(c, "arrays") else {}, "f", (count,))
        w = array(c.arrays, "w", (plan.dim, s.k)) if stage.stage == "M3" else None
        if s.noise == "helper":  # the helper sends the unique entries of the noise object
            e = self._helper_share(c, ctx, stage, private, count)
        else:
            e = dp.noise_entries(self._own_row(c, ctx, stage, private), stage.stage, s.m3_noise, s.path, plan.dim, w)
        for what, values, var in (("the aggregator's noise f_s", f, design.var_f[me]),
                                  ("its helper term e_s", e, design.var_e[me])):
            problem = _variance_problem(what, values, float(var), stage.stage)
            if problem:
                raise _Refusal(f"stage {stage.stage}: {problem}")
        self.commit_budget(ctx, stage)
        rng = dp.party_generator("secure", self.secret(ctx.round_id), s.run, s.algorithm, stage.stage, dp.SITE,
                                 self.name)
        g = dp.noise_entries(dp.site_noise(float(design.var_g[me]), stage.size, rng), stage.stage, s.m3_noise,
                             s.path, plan.dim, w)
        release = dp.site_stage_release(stage.stage, s.path, data, e, f, g, w)
        self.state[f"{ctx.round_id}/released/{stage.stage}"] = b"1"
        return Payload({"status": "ok", "digest": digest}, {"release": release})

    # -- recovery (helper-free) -----------------------------------------------------------------------------------
    def recover(self, c: Mapping[str, Any]) -> Payload:
        ctx, _, _, private = self.context(c)
        plan = ctx.plan
        stage = plan.stage(text(c, "stage", choices=[p.stage for p in plan.stages]))
        dropped = texts(c, "dropped", most=dp.MAX_SITES)
        if (not dropped or len(set(dropped)) != len(dropped) or self.name in dropped
                or not set(dropped) <= set(plan.names)):
            raise RequestError("the field 'dropped' must name other sites of the plan, each once")
        if len(dropped) > ctx.settings.dropouts:
            raise _Refusal(f"{len(dropped)} site(s) dropped out, more than the {ctx.settings.dropouts} the plan "
                           "survives; it hands out no share of their noise seeds")
        if ctx.settings.noise != "helper-free":
            raise _Refusal("only the helper-free variant recovers through the sites")
        saved = self.state.get(f"{ctx.round_id}/W/{stage.stage}")
        if f"{ctx.round_id}/released/{stage.stage}" not in self.state or saved is None:
            raise _Refusal(f"it did not release stage {stage.stage} of round {ctx.round_id}, so it does not help "
                           "recover it")
        report = dp.dropout_audit(plan, stage, dropped)
        failing = [r for r in report.rows if r.site == self.name and not r.ok]
        if failing:
            raise _Refusal(f"with {', '.join(dropped)} counted as colluders its {failing[0].view} view would leave "
                           f"eps_eff = {failing[0].eps_eff:.4g} > {failing[0].eps:.4g}; it hands out no share")
        opened = self._open_setup(c, ctx, stage, private, dropped)
        total = np.frombuffer(saved, dtype="<f8").astype(float)
        return Payload({"status": "ok", "shares": [piece for _, piece in opened]}, {"total": total})


def _variance_problem(what: str, values: np.ndarray, var: float, stage: str) -> str | None:
    """The sample variance of i.i.d. N(0, var) entries outside the two-sided chi-square bounds at CHI2_TAIL
    (matrix stages only: the third-moment laws are not i.i.d. per entry)."""
    n = values.size
    if stage == "M3" or n < 32:
        return None
    ss = float(np.sum(values**2))
    if var <= 0:
        return None if ss == 0 else f"{what} is not zero although the design gives it variance 0"
    lo, hi = chi2.ppf(CHI2_TAIL, n) * var, chi2.isf(CHI2_TAIL, n) * var
    if not lo <= ss <= hi:
        return (f"{what} has sample variance {ss / n:.4g}; the design says {var:.4g} (outside the chi-square "
                f"bounds {lo / n:.4g} to {hi / n:.4g}: a weakened or forged term)")
    return None


class _Request(dict):
    """The request's configuration values with its arrays attached (fields are read only through the parsers)."""

    def __init__(self, payload: Payload):
        super().__init__(payload.config)
        self.arrays = payload.arrays


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
        site = _Site(site_config, state)
        handlers = {"hello": site.hello, "setup": site.setup, "release": site.release, "recover": site.recover}
        if action not in handlers:
            return _refuse(f"site {name}: unknown request {action[:40]!r}")
        return handlers[action](_Request(request))
    except _Refusal as exc:
        return _refuse(f"site {name}: {exc}", name if action == "hello" else None)
    except (RequestError, SiteConfigError, TrustError, dp.InputError) as exc:
        return _refuse(f"site {name}: {exc}", name if action == "hello" else None)
