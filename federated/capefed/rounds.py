"""The aggregator's side of one capePCA or capeAGN round, over any transport (Flower or in-process).

1. **hello** to every connected node: the helper answers with its role (signed), each site with its budget and a
   fresh X25519 key in a statement signed by its identity key. Only parties the roster pins count: a node whose
   hello cannot be verified (a stranger, or an impostor using a site's name) is ignored and listed.
2. **design**: ``dpcore.federation.plan_round`` solves every stage's noise design for the round's noise variant and
   drop-out tolerance and audits it; an invalid budget, an infeasible design or a failing audit ends the round here
   ("refused"), with the reason. Every other party recomputes the same plan from the signed statements.
3. **noise**: helper variant: the helper gets the statements and the design and answers with one sealed, signed e_s
   per site and stage (on capeAGN's projected path the M3 shares are asked for after stage 1, with W).
   Helper-free: every site answers a ``setup`` request with its masked share and a Shamir share of its noise seed for
   every other site, sealed and signed; the aggregator forwards them unread.
4. **releases**, stage by stage: each site gets its sealed e_s (or the other sites' setup messages), the aggregator's
   f_s (and for capeAGN's M3 stage W), checks everything against its own plan and answers with its release. A site
   that refuses or sends something unusable stops the round, naming it; nothing is released. A site that does not
   answer (it vanished after the noise was set up) is a drop-out: up to the plan's ``dropouts``, the aggregator
   recovers its term (from the helper, or from the survivors' Shamir shares of its noise seed and W), otherwise the
   round stops.
5. **aggregation**: a = sum_s mu_s (a_hat_s - f_s) over the survivors, plus the recovered terms, divided by the
   survivors' weight when sites dropped out; capePCA publishes the top-K eigenvectors, capeAGN whitens M2 and
   decomposes M3. The outcome lists the sites that took part, those that dropped out and the audit of what was
   released (``dpcore.federation.dropout_audit``).

Every message is logged (:class:`dpcore.federation.LogEntry`) with the names ``dpcore.cape.protocol`` uses.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from Crypto.Protocol.SecretSharing import Shamir

from . import dp
from .checks import budget_from_hello, release_problem
from .helper import sealed_key, signature_key
from .messages import BUNDLE, Payload, bundle, config_bytes, site_label, unbundle
from .sealing import OVERHEAD_BYTES
from .trust import Roster, TrustError, read_roster, verify, verify_statement

__all__ = ["AggregatorSettings", "RoundOutcome", "RoundStopped", "Transport", "run_round", "run_rounds",
           "settings_from_run_config"]

_STEPS = {  # protocol step numbers of dpcore.cape.protocol: (helper noise, aggregator noise, release)
    ("capePCA", "A"): (1, 2, 4),
    ("capeAGN", "M2"): (1, 2, 3),
    ("capeAGN", "M3"): (5, 6, 7),
}
_SYMBOLS = {("capePCA", "A"): ("e", "f", "Ahat"), ("capeAGN", "M2"): ("E2", "F2", "M2hat"),
            ("capeAGN", "M3"): ("E3", "F3", "M3~hat")}
NOISE_READY = "noise-ready"
"""The checkpoint after the noise was set up (helper shares or the sites' set-up) and before any release."""


@dataclass(frozen=True)
class _SiteNode:
    node: int
    budget: dp.SiteBudget
    key: bytes
    statement: str
    signature: bytes

    @property
    def name(self) -> str:
        return self.budget.name


class Transport(Protocol):
    """How the aggregator reaches the other parties."""

    def wait_for_nodes(self, count: int, timeout: float) -> list[int]:
        """The ids of the connected nodes once at least ``count`` are connected (or all there are at ``timeout``)."""

    def exchange(self, action: str, requests: Mapping[int, Payload], timeout: float) -> dict[int, Payload]:
        """Send one request per node and return the replies that arrived within ``timeout`` seconds."""


_Exchange = Generator[Any, Any, dict[int, Payload]]


class RoundStopped(Exception):
    """The round cannot go on; ``sites`` names the parties at fault (empty when none is)."""

    def __init__(self, reason: str, sites: tuple[str, ...] = ()):
        super().__init__(reason)
        self.reason = reason
        self.sites = sites


@dataclass(frozen=True, kw_only=True)
class AggregatorSettings:
    """The aggregator's run: the round's public settings, its own seed (None: a fresh 256-bit secret), how many
    sites must take part, D for capeAGN's single topic model (the vocabulary), the time limits, the round's id (binds
    every sealed message and signature) and the roster file of the pinned parties."""

    round: dp.RoundSettings
    sites: int
    seed: int | str | None = None
    dim: int | None = None
    timeout: float = 120.0
    connect_timeout: float = 120.0
    round_id: str = "round"
    roster: str | None = None

    def public(self) -> dict[str, Any]:
        """What every site needs to read its data for this round: the algorithm, the round id and capeAGN's model
        (with D for the single topic model, sigma^2 and the norm bound for the Gaussian mixture)."""
        r = self.round
        out: dict[str, Any] = {"algorithm": r.algorithm, "round": self.round_id}
        if r.algorithm == "capeAGN":
            out["model"] = r.model
            if r.model == "stm":
                out["dim"] = int(self.dim)
            else:
                out.update(sigma2=float(r.sigma2), norm_bound=float(r.norm_bound))
        return out


@dataclass(kw_only=True)
class RoundOutcome:
    """What a round produced: ``status`` "released", "refused" (before any noise was drawn) or "stopped" (a party
    failed; nothing was released). ``aggregates`` and ``outputs`` are empty unless released. ``took_part``: the
    sites whose releases are in the output; ``dropped``: sites that vanished after the noise was set up (their terms
    recovered); ``ignored``: nodes whose hello could not be verified; ``audit``: per stage, the audit of what was
    released (rows of ``AuditRow.to_dict``)."""

    algorithm: str
    status: str
    reason: str | None = None
    sites: tuple[str, ...] = ()
    plan: dp.RoundPlan | None = None
    aggregates: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    log: list[dp.LogEntry] = field(default_factory=list)
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    took_part: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    audit: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def plan_dict(self) -> dict[str, Any] | None:
        """The settings and the sites' budgets (what rebuilds the design), with the designs for reading."""
        if self.plan is None:
            return None
        p = self.plan
        return {"settings": p.settings.to_dict(), "sites": [b.to_dict() for b in p.budgets],
                "digests": list(p.digests), "refusal": p.refusal, "notes": list(p.notes),
                "stages": [{"stage": s.stage, "statistic": s.statistic, "shape": list(s.shape), "unique": s.unique,
                            "design": s.design.to_dict()} for s in p.stages]}

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "status": self.status, "reason": self.reason, "sites": list(self.sites),
                "plan": self.plan_dict(), "aggregates": {k: v.tolist() for k, v in self.aggregates.items()},
                "outputs": {k: np.asarray(v).tolist() for k, v in self.outputs.items()},
                "log": [e.to_dict() for e in self.log], "exchanges": self.exchanges, "seconds": self.seconds,
                "took_part": list(self.took_part), "dropped": list(self.dropped), "ignored": list(self.ignored),
                "audit": self.audit}


def _optional(run_config: Mapping[str, Any], key: str) -> float | None:
    value = float(run_config.get(key, -1.0))
    return None if value < 0 else value


def _law(run_config: Mapping[str, Any]) -> dict[str, str]:
    """The third-moment noise law of the run configuration ("" or absent: dpcore's default)."""
    law = str(run_config.get("m3-noise", ""))
    return {"m3_noise": law} if law else {}


_RUN_TYPES: dict[str, tuple[type, ...]] = {
    "pca-k": (int,), "agn-k": (int,), "sites": (int,), "run": (int,), "seed": (int, str), "collusion": (int,),
    "dropouts": (int,), "agn-dim": (int,), "split": (int, float), "timeout": (int, float),
    "connect-timeout": (int, float), "agn-sigma2": (int, float), "agn-norm-bound": (int, float),
    "neighbouring": (str,), "calibration": (str,), "solver": (str,), "agn-model": (str,), "agn-path": (str,),
    "m3-noise": (str,), "noise": (str,), "roster": (str,), "algorithms": (str,), "out": (str,), "poll": (int, float),
    "checkpoint": (str,)}
MAX_TIMEOUT = 86_400.0


def check_run_config(run_config: Mapping[str, Any]) -> None:
    """Every key of the run configuration the aggregator reads: the right type, finite numbers, time limits in
    (0, MAX_TIMEOUT], counts bounded; raises ValueError naming the key and what is allowed."""
    for key, kinds in _RUN_TYPES.items():
        if key not in run_config:
            continue
        value = run_config[key]
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise ValueError(f"run configuration {key} must be {' or '.join(k.__name__ for k in kinds)} "
                             f"(got {value!r:.40})")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"run configuration {key} must be finite (got {value!r})")
        if isinstance(value, str) and len(value) > 4096:
            raise ValueError(f"run configuration {key} is longer than 4096 characters")
    for key in ("timeout", "connect-timeout", "poll"):
        if key in run_config and not 0 < float(run_config[key]) <= MAX_TIMEOUT:
            raise ValueError(f"run configuration {key} must be in (0, {MAX_TIMEOUT:g}] seconds")
    for key, top in (("sites", dp.MAX_SITES), ("pca-k", dp.MAX_FEDERATED_MATRIX_DIM),
                     ("agn-k", dp.MAX_FEDERATED_MATRIX_DIM), ("agn-dim", dp.MAX_FEDERATED_MATRIX_DIM),
                     ("dropouts", dp.MAX_SITES), ("collusion", dp.MAX_SITES)):
        if key in run_config and not -1 <= int(run_config[key]) <= top:
            raise ValueError(f"run configuration {key} must be at most {top}")


def settings_from_run_config(run_config: Mapping[str, Any], algorithm: str, round_id: str) -> AggregatorSettings:
    """The aggregator's settings for one algorithm from the run configuration (keys as in the app's pyproject),
    every value checked (:func:`check_run_config`)."""
    check_run_config(run_config)
    k = int(run_config["pca-k"] if algorithm == "capePCA" else run_config["agn-k"])
    collusion = run_config.get("collusion", -1)
    model = str(run_config.get("agn-model", "stm"))
    settings = dp.RoundSettings(algorithm=algorithm, k=k, neighbouring=str(run_config["neighbouring"]),
                                calibration=str(run_config["calibration"]), solver=str(run_config["solver"]),
                                collusion=None if int(collusion) < 0 else int(collusion),
                                split=float(run_config["split"]), run=int(run_config["run"]), model=model,
                                sigma2=_optional(run_config, "agn-sigma2"),
                                norm_bound=_optional(run_config, "agn-norm-bound"),
                                path=str(run_config.get("agn-path", "dense")),
                                noise=str(run_config.get("noise", "helper")),
                                dropouts=max(int(run_config.get("dropouts", 0)), 0),
                                **_law(run_config))
    seed = run_config.get("seed", -1)
    roster = str(run_config.get("roster", "")) or None
    return AggregatorSettings(round=settings, sites=int(run_config["sites"]),
                              seed=None if isinstance(seed, int) and seed < 0 else seed,
                              dim=int(run_config["agn-dim"]) if algorithm == "capeAGN" and model == "stm" else None,
                              timeout=float(run_config["timeout"]),
                              connect_timeout=float(run_config["connect-timeout"]), round_id=round_id, roster=roster)


def _secret(seed: int | str | None) -> bytes | int | str:
    return seed if seed is not None else dp.fresh_secret()


class _Round:  # the aggregator's state of one round: its messages, sites, plan and every step of the flow
    def __init__(self, settings: AggregatorSettings):
        self.settings = settings
        self.algorithm = settings.round.algorithm
        self.log: list[dp.LogEntry] = []
        self.exchanges: list[dict[str, Any]] = []
        self.node_names: dict[int, str] = {}
        self.ignored: list[str] = []
        self.dropped: list[str] = []
        self.plan: dp.RoundPlan | None = None
        self.sites: list[_SiteNode] = []

    # -- messages and log --------------------------------------------------------------------------
    def entry(self, stage: str, step: int, sender: str, receiver: str, content: str, shape: tuple[int, ...],
              unique: int, nbytes: int, channel: str, *, route: tuple[str, ...] | None = None, protocol: bool = True,
              site: str | None = None, numbers: int | None = None) -> None:
        if numbers is None:
            numbers = math.prod(shape) if shape else 1
        self.log.append(dp.LogEntry(algorithm=self.algorithm, stage=stage, step=step, sender=sender,
                                    receiver=receiver, content=content, shape=tuple(int(d) for d in shape),
                                    numbers=int(numbers), unique=int(unique), bytes=int(nbytes), channel=channel,
                                    route=route or (sender, receiver), protocol=protocol, site=site))

    def exchange(self, action: str, requests: dict[int, Payload], timeout: float) -> _Exchange:
        """Yield the requests to the scheduler (:func:`run_rounds`), which sends them together with the other
        rounds' requests of the same step, and receive the replies that arrived in time."""
        replies, seconds = yield ("exchange", action, requests, timeout)
        for node, request in requests.items():
            reply = replies.get(node)
            self.exchanges.append({"action": action, "node": str(node), "party": self.node_names.get(node, str(node)),
                                   "request_bytes": request.nbytes,
                                   "reply_bytes": None if reply is None else reply.nbytes,
                                   "answered": reply is not None, "seconds": seconds})
        return replies

    def context(self) -> dict[str, Any]:
        """What every request after the hello carries: the round, the public settings and the signed statements,
        from which each party recomputes the plan."""
        return {"round": self.settings.round_id, "settings": json.dumps(self.plan.settings.to_dict()),
                "statements": [s.statement for s in self.sites], "signatures": [s.signature for s in self.sites]}

    @property
    def live(self) -> list[_SiteNode]:
        return [s for s in self.sites if s.name not in self.dropped]

    # -- 1. hello ----------------------------------------------------------------------------------
    def _roster(self) -> Roster:
        if not self.settings.roster:
            raise RoundStopped("the run configuration names no roster (the pinned parties' keys)")
        try:
            return read_roster(self.settings.roster)
        except TrustError as exc:
            raise RoundStopped(f"the aggregator's roster: {exc}") from exc

    def _identify(self, roster: Roster, node: int, reply: Mapping[str, Any]) -> _SiteNode | str | None:
        """A verified site, "helper" for the verified helper, or None (ignored, with the reason noted)."""
        round_id = self.settings.round_id
        if reply.get("role") == "helper":
            name = str(reply.get("name", ""))[:64]
            try:
                if verify(roster.key(name, "helper"), reply.get("signature"), "helper-hello", round_id, name):
                    return "helper"
            except TrustError:
                pass
            self.ignored.append(f"node {node}: claims to be the helper, but its hello is not signed by a helper key "
                                "the roster pins")
            return None
        try:
            statement = verify_statement(roster, reply.get("statement"), reply.get("signature"), round_id)
            budget, key = budget_from_hello(reply)
        except (TrustError, ValueError) as exc:
            self.ignored.append(f"node {node} (calls itself {str(reply.get('name', '?'))[:64]!r}): {exc}")
            return None
        if (statement.name != budget.name or statement.public_key != key
                or statement.budget != budget.to_dict()):
            self.ignored.append(f"node {node}: its hello does not match its signed statement")
            return None
        return _SiteNode(node=node, budget=budget, key=key, statement=reply["statement"],
                         signature=reply["signature"])

    def hello(self) -> Generator[Any, Any, int | None]:
        s = self.settings
        helper_needed = s.round.noise == "helper"
        needed = s.sites + (1 if helper_needed else 0)
        roster = self._roster()
        nodes = yield ("nodes", needed, s.connect_timeout)
        if len(nodes) < needed:
            raise RoundStopped(f"only {len(nodes)} node(s) connected within {s.connect_timeout:g} s; the round needs "
                               + ("the helper and " if helper_needed else "") + f"{s.sites} sites")
        request = s.public()
        replies = yield from self.exchange("hello", {n: Payload(dict(request)) for n in nodes}, s.timeout)
        silent = [n for n in nodes if n not in replies]
        helpers, refused, blamed = [], [], []
        for node in nodes:
            if node not in replies:
                continue
            reply = replies[node].config
            if reply.get("status") != "ok":
                refused.append(str(reply.get("reason", f"node {node} refused the hello"))[:2000])
                blamed.append(str(reply.get("name", node))[:64])
                continue
            found = self._identify(roster, node, reply)
            if found == "helper":
                helpers.append(node)
                self.node_names[node] = dp.HELPER
            elif found is not None:
                self.sites.append(found)
                self.node_names[node] = site_label(found.name)
        names = [x.name for x in self.sites]
        if len(set(names)) != len(names):
            raise RoundStopped("two nodes proved the same site identity: " + ", ".join(sorted(names)))
        problems = refused + ([f"node(s) {', '.join(map(str, silent))} did not answer the hello within "
                               f"{s.timeout:g} s"] if silent else [])
        if len(self.sites) == s.sites and (len(helpers) == 1 or not helper_needed):
            self.ignored.extend(f"ignored: {p}" for p in problems)  # a stranger cannot stop a complete round
            problems = []
        if helper_needed and len(helpers) != 1:
            raise RoundStopped("; ".join(problems + [f"the round needs exactly one helper node; {len(helpers)} "
                                                     "answered as helper"] + self.ignored), tuple(blamed))
        if len(self.sites) != s.sites or problems:
            raise RoundStopped("; ".join(problems + [f"the round expects {s.sites} sites; {len(self.sites)} answered "
                                                     "with a statement signed by a pinned key: "
                                                     + (", ".join(sorted(names)) or "none")] + self.ignored),
                               tuple(blamed))
        self.sites.sort(key=lambda x: x.name)
        for node in nodes:
            party = self.node_names.get(node)
            if party is None:
                continue
            self.entry("hello", 0, dp.AGGREGATOR, party, "hello (algorithm, round id, public settings)", (), 0,
                       config_bytes(request), "control", protocol=False)
            content = ("hello answer: role" if party == dp.HELPER else
                       "hello answer: N_s, eps_s, delta_s, weight, D, public key, digest")
            self.entry("hello", 0, party, dp.AGGREGATOR, content, (), 0, config_bytes(replies[node].config),
                       "control", protocol=False)
        return helpers[0] if helpers else None

    # -- 3. noise: the helper's shares, or the sites' set-up ------------------------------------------
    def shares(self, helper: int, stages: list[dp.RoundStage], w: np.ndarray | None = None
               ) -> Generator[Any, Any, dict[str, dict[str, tuple[bytes, bytes]]]]:
        s, plan = self.settings, self.plan
        config = dict(self.context(), stages=[p.stage for p in stages])
        arrays = {}
        for p in stages:
            arrays[f"mixing/{p.stage}"] = np.asarray(p.design.e_mixing, dtype=float)
            arrays[f"weights/{p.stage}"] = np.asarray(p.design.weights, dtype=float)
            arrays[f"var_e/{p.stage}"] = np.asarray(p.design.var_e, dtype=float)
        if w is not None:
            arrays["w"] = w
            self.entry("M3", 4, dp.AGGREGATOR, dp.HELPER, "W (whitening)", w.shape, w.size, w.nbytes, "private")
        request = Payload(config, arrays)
        names = ", ".join(p.stage for p in stages)
        self.entry(stages[0].stage, 0, dp.AGGREGATOR, dp.HELPER,
                   f"design for the helper (stage {names}): signed site statements, settings, mixing, weights, helper "
                   "variances", (), 0, request.nbytes - (0 if w is None else w.nbytes), "control", protocol=False)
        replies = yield from self.exchange("shares", {helper: request}, s.timeout)
        if helper not in replies:
            raise RoundStopped(f"the helper did not answer within {s.timeout:g} s; no noise was handed out")
        reply = replies[helper].config
        if reply.get("status") != "ok":
            raise RoundStopped(f"the helper refused: {str(reply.get('reason', 'no reason given'))[:2000]}")
        shares: dict[str, dict[str, tuple[bytes, bytes]]] = {}
        for p in stages:
            expected = 8 * p.unique + OVERHEAD_BYTES
            shares[p.stage] = {}
            for name in plan.names:
                sealed, signature = reply.get(sealed_key(p.stage, name)), reply.get(signature_key(p.stage, name))
                if not isinstance(sealed, bytes) or len(sealed) != expected or not isinstance(signature, bytes):
                    raise RoundStopped(f"the helper's share for site {name}, stage {p.stage} is missing or has the "
                                       f"wrong length (expected {expected} bytes)")
                shares[p.stage][name] = (sealed, signature)
        return shares

    def setup(self) -> Generator[Any, Any, dict[str, dict[tuple[str, str], tuple[bytes, bytes]]]]:
        """Helper-free: every site's sealed, signed set-up message for every other site and stage."""
        s, plan = self.settings, self.plan
        request = self.context()
        requests = {x.node: Payload(dict(request)) for x in self.sites}
        for x in self.sites:
            self.entry(plan.stages[0].stage, 0, dp.AGGREGATOR, site_label(x.name),
                       "set-up request: signed site statements, settings", (), 0, config_bytes(request), "control",
                       protocol=False, site=x.name)
        replies = yield from self.exchange("setup", requests, s.timeout)
        problems = []
        messages: dict[str, dict[tuple[str, str], tuple[bytes, bytes]]] = {p.stage: {} for p in plan.stages}
        for x in self.sites:
            reply = replies.get(x.node)
            if reply is None:
                problems.append((x.name, f"site {x.name} did not answer the set-up within {s.timeout:g} s"))
                continue
            c = reply.config
            if c.get("status") != "ok":
                reason = str(c.get("reason", "refused without a reason"))[:2000]
                problems.append((x.name, reason if reason.startswith(f"site {x.name}") else f"site {x.name}: {reason}"))
                continue
            others = [n for n in plan.names if n != x.name]
            if c.get("recipients") != others:
                problems.append((x.name, f"site {x.name} addressed its set-up to other sites than the plan's"))
                continue
            for p in plan.stages:
                blobs, sigs = c.get(f"blobs/{p.stage}"), c.get(f"blob_signatures/{p.stage}")
                size = 8 * p.size + 33 + OVERHEAD_BYTES
                if (not isinstance(blobs, list) or not isinstance(sigs, list) or len(blobs) != len(others)
                        or len(sigs) != len(others) or any(not isinstance(b, bytes) or len(b) != size for b in blobs)):
                    problems.append((x.name, f"site {x.name} sent a malformed set-up for stage {p.stage}"))
                    break
                for other, sealed, sig in zip(others, blobs, sigs, strict=True):
                    messages[p.stage][(x.name, other)] = (sealed, sig)
                    self.entry(p.stage, 0, site_label(x.name), site_label(other),
                               "masked share and Shamir share of the noise seed (sealed)", (p.size,), p.size,
                               len(sealed), "private", route=(site_label(x.name), dp.AGGREGATOR, site_label(other)),
                               protocol=False, site=other)
        if problems:
            raise RoundStopped("set-up: " + "; ".join(t for _, t in problems) + ". Nothing was released.",
                               tuple(n for n, _ in problems))
        return messages

    # -- 4. releases -------------------------------------------------------------------------------
    def _noise_fields(self, p: dp.RoundStage, name: str, noise: Any) -> tuple[dict[str, Any], int]:
        """The fields that carry site ``name``'s noise of stage p: its helper share (and the helper's signature), or
        the other sites' set-up messages; and their bytes."""
        if self.plan.settings.noise == "helper":
            sealed, signature = noise[name]
            return {"sealed_e": sealed, "helper_signature": signature}, len(sealed)
        senders = [n for n in self.plan.names if n != name]
        blobs = [noise[(sender, name)] for sender in senders]
        return ({"senders": senders, "blobs": [b for b, _ in blobs], "blob_signatures": [g for _, g in blobs]},
                sum(len(b) for b, _ in blobs))

    def releases(self, p: dp.RoundStage, noise: Any, f: list[np.ndarray], w: np.ndarray | None
                 ) -> Generator[Any, Any, dict[str, np.ndarray]]:
        s, r, stage, plan = self.settings, self.settings.round, p.stage, self.plan
        step_e, step_f, step_r = _STEPS[(self.algorithm, stage)]
        sym_e, sym_f, sym_r = _SYMBOLS[(self.algorithm, stage)]
        release_shape = p.shape if stage != "M3" else (r.k,) * 3
        release_count = dp.noise_unique(stage, "projected" if stage == "M3" else r.path, plan.dim, r.k)
        requests = {}
        for x in self.live:
            i, name = plan.names.index(x.name), x.name
            fields, nbytes = self._noise_fields(p, name, noise)
            config = dict(s.public(), **self.context(), stage=stage, digest=plan.digests[i],
                          var_g=float(p.design.var_g[i]), **fields)
            requests[x.node] = Payload(config, {"f": f[i]} | ({"w": w} if w is not None else {}))
            label = site_label(name)
            # helper-free: no helper message; e_s comes from the other sites' set-up messages (the secure sum)
            sender = dp.HELPER if r.noise == "helper" else dp.SITES
            self.entry(stage, step_e, sender, label, f"{sym_e}_{name}", p.shape, p.unique, nbytes, "private",
                       route=(sender, dp.AGGREGATOR, label), site=name)
            self.entry(stage, step_f, dp.AGGREGATOR, label, f"{sym_f}_{name}", p.shape, p.unique, f[i].nbytes,
                       "private", site=name)
            self.entry(stage, step_r, dp.AGGREGATOR, label, "release request: round, stage, design digest, tau_g,s^2",
                       (), 0, config_bytes(config) - nbytes, "control", protocol=False, site=name)
        replies = yield from self.exchange("release", requests, s.timeout)
        silent = [x for x in self.live if x.node not in replies]
        problems = [(x.name, release_problem(x.name, replies.get(x.node), plan.digests[plan.names.index(x.name)],
                                             release_count, s.timeout)) for x in self.live if x.node in replies]
        problems = [(name, problem) for name, problem in problems if problem]
        if problems:
            raise RoundStopped(f"stage {stage}: " + "; ".join(x for _, x in problems) + ". Nothing was released.",
                               tuple(name for name, _ in problems))
        if silent:
            self._dropped_out(stage, [x.name for x in silent])
        out = {}
        for x in self.live:
            release = np.asarray(replies[x.node].arrays["release"], dtype=float)
            out[x.name] = release
            self.entry(stage, step_r, site_label(x.name), dp.AGGREGATOR, f"{sym_r}_{x.name}", release_shape,
                       release_count, release.nbytes, "to aggregator", site=x.name)
        return out

    def _dropped_out(self, stage: str, names: list[str]) -> None:
        s, k = self.settings, self.plan.settings.dropouts
        total = sorted(set(self.dropped) | set(names))
        if len(total) > k:
            raise RoundStopped(f"stage {stage}: " + "; ".join(f"site {n} did not answer within {s.timeout:g} s"
                                                              for n in names)
                               + f"; {len(total)} drop-out(s) is more than the {k} the plan survives. Nothing was "
                               "released.", tuple(names))
        self.dropped = total

    # -- drop-outs: the vanished sites' terms ---------------------------------------------------------
    def recover(self, p: dp.RoundStage, helper: int | None, noise: Any, w: np.ndarray | None
                ) -> Generator[Any, Any, list[np.ndarray]]:
        """mu_v e_v (projected like the releases) of every dropped site v, from the helper or the survivors."""
        s, plan, r = self.settings, self.plan, self.settings.round
        dropped = list(self.dropped)
        config = dict(self.context(), stage=p.stage, dropped=dropped)
        if r.noise == "helper":
            arrays = {"w": w} if (w is not None and r.path == "projected" and p.stage == "M3") else {}
            replies = yield from self.exchange("recover", {helper: Payload(config, arrays)}, s.timeout)
            terms = self._helper_terms(replies.get(helper), p, dropped)
        else:
            requests = {}
            for x in self.live:
                requests[x.node] = Payload(dict(config, blobs=[noise[(v, x.name)][0] for v in dropped],
                                                blob_signatures=[noise[(v, x.name)][1] for v in dropped]))
            replies = yield from self.exchange("recover", requests, s.timeout)
            terms = self._site_terms(replies, p, dropped)
        out = []
        for name, row in zip(dropped, terms, strict=True):
            i = plan.names.index(name)
            out.append(float(p.design.weights[i]) * dp.aggregator_subtract(p.stage, r.path, row, w))
            self.entry(p.stage, 0, dp.HELPER if r.noise == "helper" else dp.SITES, dp.AGGREGATOR,
                       f"recovered term of {name} (it released nothing)", p.shape, p.unique, row.nbytes, "control",
                       protocol=False, site=name)
        return out

    def _helper_terms(self, reply: Payload | None, p: dp.RoundStage, dropped: list[str]) -> list[np.ndarray]:
        if reply is None or reply.config.get("status") != "ok":
            why = "did not answer" if reply is None else str(reply.config.get("reason", "refused"))[:2000]
            raise RoundStopped(f"stage {p.stage}: recovering {', '.join(dropped)}: the helper {why}. Nothing was "
                               "released.")
        terms = np.asarray(reply.arrays.get("terms", np.empty(0)))
        count = dp.noise_unique(p.stage, self.settings.round.path, self.plan.dim, self.settings.round.k)
        roster = self._roster()
        helper = roster.names("helper")
        if (terms.shape != (len(dropped), count) or not np.all(np.isfinite(terms)) or len(helper) != 1
                or not verify(roster.key(helper[0], "helper"), reply.config.get("signature"), "recover",
                              self.settings.round_id, p.stage, terms.astype("<f8").tobytes())):
            raise RoundStopped(f"stage {p.stage}: the helper's recovered terms are malformed or not signed by the "
                               "pinned helper key. Nothing was released.")
        return [np.asarray(t, dtype=float) for t in terms]

    def _site_terms(self, replies: dict[int, Payload], p: dp.RoundStage, dropped: list[str]) -> list[np.ndarray]:
        """Each dropped site's e_v from the survivors' Shamir shares of its noise seed and the secure sum W."""
        plan, problems, shares, totals = self.plan, [], {v: [] for v in dropped}, []
        for x in self.live:
            reply = replies.get(x.node)
            c = None if reply is None else reply.config
            if c is None or c.get("status") != "ok":
                problems.append(f"site {x.name} " + ("did not answer" if c is None else
                                                     str(c.get("reason", "refused"))[:2000]))
                continue
            pieces, total = c.get("shares"), np.asarray(reply.arrays.get("total", np.empty(0)))
            if (not isinstance(pieces, list) or len(pieces) != len(dropped)
                    or any(not isinstance(b, bytes) or len(b) != 33 for b in pieces) or total.shape != (p.size,)):
                problems.append(f"site {x.name} sent malformed shares")
                continue
            for v, piece in zip(dropped, pieces, strict=True):
                shares[v].append(piece)
            totals.append(np.asarray(total, dtype=float))
        if problems or len(totals) < plan.threshold:
            raise RoundStopped(f"stage {p.stage}: recovering {', '.join(dropped)}: " + "; ".join(problems)
                               + f" ({len(totals)} survivor(s) answered, {plan.threshold} needed). Nothing was "
                               "released.")
        if any(not np.array_equal(t, totals[0]) for t in totals[1:]):
            raise RoundStopped(f"stage {p.stage}: the survivors disagree on the secure sum W. Nothing was released.")
        out = []
        for v in dropped:
            halves = [Shamir.combine([(b[0], b[1 + 16 * h:17 + 16 * h]) for b in shares[v][:plan.threshold]])
                      for h in (0, 1)]
            i = plan.names.index(v)
            _, own = dp.site_draw(halves[0] + halves[1], plan, p, i)
            row = dp.site_term(own, totals[0], p, i)
            out.append(dp.noise_entries(row, p.stage, plan.settings.m3_noise, plan.settings.path, plan.dim, None
                                        if not (p.stage == "M3" and plan.settings.path == "projected") else self.w))
        return out

    def stage(self, p: dp.RoundStage, secret: Any, helper: int | None, noise: Any, w: np.ndarray | None
              ) -> Generator[Any, Any, np.ndarray]:
        """One stage from the aggregator's side: draw every f_s, collect the releases, recover the terms of sites
        that dropped out, combine."""
        r, plan = self.settings.round, self.plan
        f = []
        for i, name in enumerate(plan.names):
            rng = dp.party_generator("secure", secret, r.run, self.algorithm, p.stage, dp.AGGREGATOR, name)
            f.append(dp.noise_entries(dp.aggregator_noise(p.design.var_f[i], p.size, rng), p.stage, r.m3_noise,
                                      r.path, plan.dim, w))
        releases = yield from self.releases(p, noise, f, w)
        missing = (yield from self.recover(p, helper, noise, w)) if self.dropped else []
        survivors = [plan.names.index(x.name) for x in self.live]
        subtract = [dp.aggregator_subtract(p.stage, r.path, f[i], w) for i in survivors]
        partial = dp.combine([releases[plan.names[i]] for i in survivors], subtract, p.design.weights[survivors])
        return dp.recovered_aggregate(partial, missing, p.design.weights, survivors)

    def checkpoint(self) -> Generator[Any, Any, None]:
        yield ("checkpoint", NOISE_READY)

    # -- the whole round ---------------------------------------------------------------------------
    def agn(self, secret: Any, helper: int | None, noise: dict[str, Any]
            ) -> Generator[Any, Any, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
        r, plan = self.settings.round, self.plan
        dim = plan.dim
        m2 = yield from self.stage(plan.stage("M2"), secret, helper, noise["M2"], None)
        try:
            whitening = dp.whitening_output(m2, dim, r.k)
        except dp.WhiteningError as exc:
            raise RoundStopped(f"stage M2: {exc} Nothing was released.") from exc
        w = self.w = whitening.w
        for x in self.live:
            self.entry("M3", 4, dp.AGGREGATOR, site_label(x.name), "W (whitening)", w.shape, w.size, w.nbytes,
                       "broadcast", site=x.name)
        p3 = plan.stage("M3")
        if p3.needs_w and r.noise == "helper":
            noise |= yield from self.shares(helper, [p3], w)
        m3 = yield from self.stage(p3, secret, helper, noise["M3"], w)
        comps, weights, values = dp.tensor_output(
            m3, whitening, dp.party_generator("secure", secret, r.run, self.algorithm, "M3", dp.AGGREGATOR),
            model=r.model, scale=r.norm_bound or 1.0, n_restarts=r.n_restarts, n_iter=r.n_iter)
        self.entry("M3", 8, dp.AGGREGATOR, "everyone", "components a_k and weights w_k", (dim, r.k), dim * r.k + r.k,
                   comps.nbytes + weights.nbytes, "public", numbers=dim * r.k + r.k)
        return ({"M2": m2, "M3": m3},
                {"whitening": w, "components": comps, "weights": weights, "eigenvalues": values})

    def audit(self) -> dict[str, list[dict[str, Any]]]:
        """Per stage, the audit of what was released: the survivors' views with the promise's c colluders, every
        dropped site counted among them."""
        return {p.stage: dp.dropout_audit(self.plan, p, self.dropped).to_records() for p in self.plan.stages}

    def run(self) -> Generator[Any, Any, RoundOutcome]:
        s = self.settings
        secret = _secret(s.seed)
        start = time.perf_counter()
        outcome = RoundOutcome(algorithm=self.algorithm, status="stopped", log=self.log, exchanges=self.exchanges)
        try:
            helper = yield from self.hello()
            try:
                self.plan = plan = dp.plan_round([x.budget for x in self.sites], s.round)
            except dp.InputError as exc:
                outcome.status, outcome.reason = "refused", f"invalid round settings: {exc}"
                return outcome
            outcome.plan = plan
            if plan.refusal:
                outcome.status, outcome.reason = "refused", plan.refusal
                return outcome
            if s.round.noise == "helper":
                noise: dict[str, Any] = yield from self.shares(helper, [p for p in plan.stages if not p.needs_w])
            else:
                noise = yield from self.setup()
            yield from self.checkpoint()
            if self.algorithm == "capePCA":
                aggregate = yield from self.stage(plan.stage("A"), secret, helper, noise["A"], None)
                values, vectors = dp.pca_output(aggregate, plan.dim, s.round.k)
                aggregates, outputs = {"A": aggregate}, {"eigenvalues": values, "components": vectors}
                self.entry("A", 5, dp.AGGREGATOR, "everyone", "V_K (top-K eigenvectors)", vectors.shape, vectors.size,
                           vectors.nbytes, "public")
            else:
                aggregates, outputs = yield from self.agn(secret, helper, noise)
            outcome.status, outcome.aggregates, outcome.outputs = "released", aggregates, outputs
            outcome.took_part = tuple(x.name for x in self.live)
            outcome.audit = self.audit()
            return outcome
        except RoundStopped as stop:
            outcome.status, outcome.reason, outcome.sites = "stopped", stop.reason, stop.sites
            outcome.aggregates, outcome.outputs = {}, {}
            return outcome
        finally:
            outcome.seconds = time.perf_counter() - start
            outcome.dropped, outcome.ignored = tuple(self.dropped), tuple(self.ignored)


def run_rounds(transport: Transport, settings: Sequence[AggregatorSettings]) -> list[RoundOutcome]:
    """Several rounds side by side, step by step: the requests all rounds have for a node at the same step travel
    as one bundle (``messages.bundle``), so capePCA and capeAGN together take four exchanges on the dense path
    with the helper (hello, shares, the first stage of both, capeAGN's M3 stage; five on the projected path, whose M3
    shares need W); the helper-free variant has a set-up exchange instead of the shares. Every round keeps its own
    keys, design, streams, checks and log; one round's failure does not stop another. Never raises for a party's
    failure."""
    rounds = [_Round(s) for s in settings]
    steps = [r.run() for r in rounds]
    outcomes: list[RoundOutcome | None] = [None] * len(rounds)
    pending: dict[int, tuple[str, dict[int, Payload], float]] = {}

    def advance(i: int, value: Any) -> None:
        """Run round i until it needs an exchange (kept in ``pending``) or ends."""
        try:
            while True:
                request = steps[i].send(value)
                if request[0] == "nodes":
                    value = transport.wait_for_nodes(request[1], request[2])
                    continue
                if request[0] == "checkpoint":
                    hook = getattr(transport, "checkpoint", None)
                    value = hook(request[1]) if hook else None
                    continue
                pending[i] = request[1:]
                return
        except StopIteration as stop:
            outcomes[i] = stop.value

    for i in range(len(rounds)):
        advance(i, None)
    while pending:
        batch = dict(sorted(pending.items()))
        pending.clear()
        per_node: dict[int, list[tuple[str, str, Payload]]] = {}
        for i, (action, requests, _) in batch.items():
            for node, payload in requests.items():
                per_node.setdefault(node, []).append((str(i), action, payload))
        timeout = max(t for _, _, t in batch.values())
        start = time.perf_counter()
        replies = transport.exchange(BUNDLE, {n: bundle(items) for n, items in per_node.items()}, timeout)
        seconds = time.perf_counter() - start
        opened: dict[int, dict[str, Payload]] = {}
        for node, payload in replies.items():
            try:
                opened[node] = {key: reply for key, _, reply in unbundle(payload)}
            except ValueError:  # not a bundle: a node-level failure (e.g. Flower's error reply) answers every item
                opened[node] = {key: payload for key, _, _ in per_node[node]}
        for i, (_, requests, _) in batch.items():
            answers = {n: opened[n][str(i)] for n in requests if n in opened and str(i) in opened[n]}
            advance(i, (answers, seconds))
    return [o for o in outcomes if o is not None]


def run_round(transport: Transport, settings: AggregatorSettings) -> RoundOutcome:
    """One round (:func:`run_rounds` with one)."""
    return run_rounds(transport, [settings])[0]
