"""The aggregator's side of one capePCA or capeAGN round, over any transport (Flower or in-process).

1. **hello** to every connected node: the helper answers with its role, each site with N_s, eps_s, delta_s, its
   weight, D, a fresh public key and the digest of these values.
2. **design**: ``dpcore.federation.plan_round`` solves every stage's noise design and audits it; an invalid budget,
   an infeasible design or a failing audit ends the round here ("refused"), with the reason.
3. **shares**: the helper gets the sites' public keys and, per stage, the weights and helper variances; it answers
   with one sealed e_s per site and stage, which the aggregator forwards unread.
4. **releases**, stage by stage: each site gets its sealed e_s, the aggregator's f_s (and for capeAGN's M3 stage
   W), checks that its values still match the design's digest and answers with its release (unique entries).
   The aggregator checks every release (answered in time, status, digest, shape, finite numbers) before using
   any: a failing site stops the round with a message naming it, and nothing is released.
5. **aggregation**: a = sum_s mu_s (a_hat_s - f_s) (capeAGN's M3 stage subtracts F3_s(W, W, W)); capePCA publishes
   the top-K eigenvectors, capeAGN whitens M2 (W goes to the sites) and decomposes M3.

Every message is logged (:class:`capefed.messages.LogEntry`) with the names ``dpcore.cape.protocol`` uses.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from . import dp
from .helper import sealed_key
from .messages import BUNDLE, LogEntry, Payload, bundle, config_bytes, site_label, unbundle
from .sealing import KEY_BYTES, OVERHEAD_BYTES

__all__ = ["AggregatorSettings", "RoundOutcome", "RoundStopped", "Transport", "run_round", "run_rounds",
           "settings_from_run_config"]

_STEPS = {  # protocol step numbers of dpcore.cape.protocol: (helper noise, aggregator noise, release)
    ("capePCA", "A"): (1, 2, 4),
    ("capeAGN", "M2"): (1, 2, 3),
    ("capeAGN", "M3"): (5, 6, 7),
}
_SYMBOLS = {("capePCA", "A"): ("e", "f", "Ahat"), ("capeAGN", "M2"): ("E2", "F2", "M2hat"),
            ("capeAGN", "M3"): ("E3", "F3", "M3~hat")}


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
    """The aggregator's run: the round's public settings, its own seed (None: fresh entropy), how many sites must
    take part, D for capeAGN (the vocabulary), the time limits and the round's id (binds the sealed shares)."""

    round: dp.RoundSettings
    sites: int
    seed: int | None = None
    dim: int | None = None
    timeout: float = 120.0
    connect_timeout: float = 120.0
    round_id: str = "round"


@dataclass(kw_only=True)
class RoundOutcome:
    """What a round produced: ``status`` "released", "refused" (before any noise was drawn) or "stopped" (a party
    failed; nothing was released). ``aggregates`` and ``outputs`` are empty unless released."""

    algorithm: str
    status: str
    reason: str | None = None
    sites: tuple[str, ...] = ()
    plan: dp.RoundPlan | None = None
    aggregates: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    log: list[LogEntry] = field(default_factory=list)
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        plan = None
        if self.plan is not None:
            plan = {"settings": self.plan.settings.to_dict(), "sites": [b.to_dict() for b in self.plan.budgets],
                    "digests": list(self.plan.digests), "refusal": self.plan.refusal, "notes": list(self.plan.notes),
                    "stages": [{"stage": p.stage, "statistic": p.statistic, "kind": p.kind, "dim": p.dim,
                                "design": p.design.to_dict()} for p in self.plan.stages]}
        return {"algorithm": self.algorithm, "status": self.status, "reason": self.reason, "sites": list(self.sites),
                "plan": plan, "aggregates": {k: v.tolist() for k, v in self.aggregates.items()},
                "outputs": {k: np.asarray(v).tolist() for k, v in self.outputs.items()},
                "log": [e.to_dict() for e in self.log], "exchanges": self.exchanges, "seconds": self.seconds}


def settings_from_run_config(run_config: Mapping[str, Any], algorithm: str, round_id: str) -> AggregatorSettings:
    """The aggregator's settings for one algorithm from the run configuration (keys as in the app's pyproject)."""
    k = int(run_config["pca-k"] if algorithm == "capePCA" else run_config["agn-k"])
    collusion = run_config.get("collusion", -1)
    settings = dp.RoundSettings(algorithm=algorithm, k=k, neighbouring=str(run_config["neighbouring"]),
                                calibration=str(run_config["calibration"]), solver=str(run_config["solver"]),
                                collusion=None if int(collusion) < 0 else int(collusion),
                                split=float(run_config["split"]), run=int(run_config["run"]))
    seed = run_config.get("seed", -1)
    return AggregatorSettings(round=settings, sites=int(run_config["sites"]),
                              seed=None if int(seed) < 0 else int(seed),
                              dim=int(run_config["agn-dim"]) if algorithm == "capeAGN" else None,
                              timeout=float(run_config["timeout"]),
                              connect_timeout=float(run_config["connect-timeout"]), round_id=round_id)


def _fresh_seed(seed: int | None) -> int:
    return seed if seed is not None else secrets.randbits(63)


class _Round:
    """State of one round on the aggregator."""

    def __init__(self, settings: AggregatorSettings):
        self.settings = settings
        self.algorithm = settings.round.algorithm
        self.log: list[LogEntry] = []
        self.exchanges: list[dict[str, Any]] = []
        self.node_names: dict[int, str] = {}

    # -- messages and log --------------------------------------------------------------------------
    def entry(self, stage: str, step: int, sender: str, receiver: str, content: str, shape: tuple[int, ...],
              unique: int, nbytes: int, channel: str, *, route: tuple[str, ...] | None = None, protocol: bool = True,
              site: str | None = None, numbers: int | None = None) -> None:
        if numbers is None:
            numbers = math.prod(shape) if shape else 1
        self.log.append(LogEntry(algorithm=self.algorithm, stage=stage, step=step, sender=sender, receiver=receiver,
                                 content=content, shape=tuple(int(d) for d in shape), numbers=int(numbers),
                                 unique=int(unique), bytes=int(nbytes), channel=channel,
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

    # -- 1. hello ----------------------------------------------------------------------------------
    def hello(self) -> Generator[Any, Any, tuple[int, list[tuple[int, dp.SiteBudget, bytes]]]]:
        s = self.settings
        nodes = yield ("nodes", s.sites + 1, s.connect_timeout)
        if len(nodes) < s.sites + 1:
            raise RoundStopped(f"only {len(nodes)} node(s) connected within {s.connect_timeout:g} s; the round needs "
                               f"the helper and {s.sites} sites")
        request = {"algorithm": self.algorithm, "round": s.round_id}
        if self.algorithm == "capeAGN":
            request["dim"] = int(s.dim)
        replies = yield from self.exchange("hello", {n: Payload(dict(request)) for n in nodes}, s.timeout)
        silent = [n for n in nodes if n not in replies]
        if silent:
            raise RoundStopped(f"node(s) {', '.join(map(str, silent))} did not answer the hello within {s.timeout:g} s")
        helpers, sites, problems, blamed = [], [], [], []
        for node in nodes:
            reply = replies[node].config
            if reply.get("status") != "ok":
                problems.append(str(reply.get("reason", f"node {node} refused the hello")))
                blamed.append(str(reply.get("name", node)))
                continue
            if reply.get("role") == "helper":
                helpers.append(node)
                self.node_names[node] = dp.HELPER
                continue
            try:
                budget, key = _budget_from_hello(reply)
            except ValueError as exc:
                problems.append(f"node {node} sent an invalid hello: {exc}")
                blamed.append(str(reply.get("name", node)))
                continue
            sites.append((node, budget, key))
            self.node_names[node] = site_label(budget.name)
        if problems:
            raise RoundStopped("; ".join(problems), tuple(blamed))
        if len(helpers) != 1:
            raise RoundStopped(f"the round needs exactly one helper node; {len(helpers)} answered as helper")
        if len(sites) != s.sites:
            raise RoundStopped(f"the round expects {s.sites} sites; {len(sites)} answered: "
                               + ", ".join(b.name for _, b, _ in sites))
        sites.sort(key=lambda item: item[1].name)
        for node in nodes:
            party = self.node_names[node]
            self.entry("hello", 0, dp.AGGREGATOR, party, "hello (algorithm, round id)", (), 0,
                       config_bytes(request), "control", protocol=False)
            answer = replies[node].config
            content = ("hello answer: role" if party == dp.HELPER else
                       "hello answer: N_s, eps_s, delta_s, weight, D, public key, digest")
            self.entry("hello", 0, party, dp.AGGREGATOR, content, (), 0, config_bytes(answer), "control",
                       protocol=False)
        return helpers[0], sites

    # -- 3. shares ---------------------------------------------------------------------------------
    def shares(self, helper: int, plan: dp.RoundPlan, keys: list[bytes]
               ) -> Generator[Any, Any, dict[str, dict[str, bytes]]]:
        s = self.settings
        config = {"round": s.round_id, "algorithm": self.algorithm, "run": s.round.run, "names": list(plan.names),
                  "public_keys": keys, "stages": [p.stage for p in plan.stages], "kinds": [p.kind for p in plan.stages],
                  "dims": [p.dim for p in plan.stages]}
        arrays = {}
        for p in plan.stages:
            arrays[f"weights/{p.stage}"] = np.asarray(p.design.weights, dtype=float)
            arrays[f"var_e/{p.stage}"] = np.asarray(p.design.var_e, dtype=float)
        request = Payload(config, arrays)
        self.entry("shares", 0, dp.AGGREGATOR, dp.HELPER,
                   "design for the helper: site names, public keys, weights and helper variances per stage", (), 0,
                   request.nbytes, "control", protocol=False)
        replies = yield from self.exchange("shares", {helper: request}, s.timeout)
        if helper not in replies:
            raise RoundStopped(f"the helper did not answer within {s.timeout:g} s; no noise was handed out")
        reply = replies[helper].config
        if reply.get("status") != "ok":
            raise RoundStopped(f"the helper refused: {reply.get('reason', 'no reason given')}")
        shares: dict[str, dict[str, bytes]] = {}
        for p in plan.stages:
            expected = 8 * dp.unique_count(p.kind, p.dim) + OVERHEAD_BYTES
            shares[p.stage] = {}
            for name in plan.names:
                sealed = reply.get(sealed_key(p.stage, name))
                if not isinstance(sealed, bytes) or len(sealed) != expected:
                    raise RoundStopped(f"the helper's share for site {name}, stage {p.stage} is missing or has the "
                                       f"wrong length (expected {expected} bytes)")
                shares[p.stage][name] = sealed
        return shares

    # -- 4. releases -------------------------------------------------------------------------------
    def releases(self, plan: dp.RoundPlan, stage: str, sites: list[tuple[int, dp.SiteBudget, bytes]],
                 sealed: dict[str, bytes], f: list[np.ndarray], w: np.ndarray | None
                 ) -> Generator[Any, Any, list[np.ndarray]]:
        s = self.settings
        p = plan.stage(stage)
        step_e, step_f, step_r = _STEPS[(self.algorithm, stage)]
        sym_e, sym_f, sym_r = _SYMBOLS[(self.algorithm, stage)]
        unique = dp.unique_count(p.kind, p.dim)
        noise_shape = (p.dim,) * (2 if p.kind == "matrix" else 3)
        k = s.round.k
        release_shape = noise_shape if stage != "M3" else (k, k, k)
        release_count = unique if stage != "M3" else dp.unique_count("tensor", k)
        requests = {}
        for i, (node, budget, _) in enumerate(sites):
            name = budget.name
            config = {"algorithm": self.algorithm, "round": s.round_id, "run": s.round.run, "stage": stage,
                      "kind": p.kind, "dim": p.dim, "digest": plan.digests[i], "var_g": float(p.design.var_g[i]),
                      "sealed_e": sealed[name]}
            arrays = {"f": f[i]}
            if w is not None:
                arrays["w"] = w
            requests[node] = Payload(config, arrays)
            label = site_label(name)
            self.entry(stage, step_e, dp.HELPER, label, f"{sym_e}_{name}", noise_shape, unique, len(sealed[name]),
                       "private", route=(dp.HELPER, dp.AGGREGATOR, label), site=name)
            self.entry(stage, step_f, dp.AGGREGATOR, label, f"{sym_f}_{name}", noise_shape, unique, f[i].nbytes,
                       "private", site=name)
            self.entry(stage, step_r, dp.AGGREGATOR, label,
                       "release request: round, stage, design digest, tau_g,s^2", (), 0,
                       config_bytes(config, ["algorithm", "round", "run", "stage", "kind", "dim", "digest", "var_g"]),
                       "control", protocol=False, site=name)
        replies = yield from self.exchange("release", requests, s.timeout)
        problems: list[str] = []
        blamed: list[str] = []
        out = []
        for i, (node, budget, _) in enumerate(sites):
            problem = _check_release(budget.name, replies.get(node), plan.digests[i], release_count, s.timeout)
            if problem:
                problems.append(problem)
                blamed.append(budget.name)
                continue
            out.append(np.asarray(replies[node].arrays["release"], dtype=float))
        if problems:
            raise RoundStopped(f"stage {stage}: " + "; ".join(problems) + ". Nothing was released.", tuple(blamed))
        for (_, budget, _), release in zip(sites, out, strict=True):
            self.entry(stage, step_r, site_label(budget.name), dp.AGGREGATOR, f"{sym_r}_{budget.name}", release_shape,
                       release_count, release.nbytes, "to aggregator", site=budget.name)
        return out

    # -- the whole round ---------------------------------------------------------------------------
    def run(self) -> Generator[Any, Any, RoundOutcome]:
        s = self.settings
        seed = _fresh_seed(s.seed)
        start = time.perf_counter()
        outcome = RoundOutcome(algorithm=self.algorithm, status="stopped", log=self.log, exchanges=self.exchanges)
        try:
            helper, sites = yield from self.hello()
            budgets = [b for _, b, _ in sites]
            try:
                plan = dp.plan_round(budgets, s.round)
            except dp.InputError as exc:
                outcome.status, outcome.reason = "refused", f"invalid round settings: {exc}"
                return outcome
            outcome.plan = plan
            if plan.refusal:
                outcome.status, outcome.reason = "refused", plan.refusal
                return outcome
            shares = yield from self.shares(helper, plan, [key for _, _, key in sites])
            names = plan.names
            run, algorithm = s.round.run, self.algorithm
            aggregates: dict[str, np.ndarray] = {}
            outputs: dict[str, np.ndarray] = {}
            dim = plan.budgets[0].dim
            k = s.round.k

            def draw_f(stage: str) -> list[np.ndarray]:
                p = plan.stage(stage)
                return [dp.aggregator_noise(p.design.var_f[i], p.kind, p.dim,
                                            dp.party_rng(seed, run, algorithm, stage, dp.AGGREGATOR, name))
                        for i, name in enumerate(names)]

            if algorithm == "capePCA":
                p = plan.stage("A")
                f = draw_f("A")
                releases = yield from self.releases(plan, "A", sites, shares["A"], f, None)
                aggregates["A"] = dp.combine(releases, f, p.design.weights)
                outputs["eigenvalues"], outputs["components"] = dp.pca_output(aggregates["A"], dim, k)
                self.entry("A", 5, dp.AGGREGATOR, "everyone", "V_K (top-K eigenvectors)", (dim, k), dim * k,
                           outputs["components"].nbytes, "public")
            else:
                p2, p3 = plan.stage("M2"), plan.stage("M3")
                f2 = draw_f("M2")
                releases = yield from self.releases(plan, "M2", sites, shares["M2"], f2, None)
                aggregates["M2"] = dp.combine(releases, f2, p2.design.weights)
                try:
                    whitening = dp.whitening_output(aggregates["M2"], dim, k)
                except dp.WhiteningError as exc:
                    raise RoundStopped(f"stage M2: {exc} Nothing was released.") from exc
                for _, budget, _ in sites:
                    self.entry("M3", 4, dp.AGGREGATOR, site_label(budget.name), "W (whitening)", (dim, k), dim * k,
                               whitening.w.nbytes, "broadcast", site=budget.name)
                f3 = draw_f("M3")
                releases = yield from self.releases(plan, "M3", sites, shares["M3"], f3, whitening.w)
                projected = [dp.project_tensor(f, dim, whitening.w) for f in f3]
                aggregates["M3"] = dp.combine(releases, projected, p3.design.weights)
                comps, weights, values = dp.tensor_output(
                    aggregates["M3"], whitening, dp.party_rng(seed, run, algorithm, "M3", dp.AGGREGATOR),
                    n_restarts=s.round.n_restarts, n_iter=s.round.n_iter)
                outputs.update(whitening=whitening.w, components=comps, weights=weights, eigenvalues=values)
                self.entry("M3", 8, dp.AGGREGATOR, "everyone", "components a_k and weights w_k", (dim, k),
                           dim * k + k, comps.nbytes + weights.nbytes, "public", numbers=dim * k + k)
            outcome.status, outcome.aggregates, outcome.outputs = "released", aggregates, outputs
            return outcome
        except RoundStopped as stop:
            outcome.status, outcome.reason, outcome.sites = "stopped", stop.reason, stop.sites
            outcome.aggregates, outcome.outputs = {}, {}
            return outcome
        finally:
            outcome.seconds = time.perf_counter() - start


def _budget_from_hello(reply: Mapping[str, Any]) -> tuple[dp.SiteBudget, bytes]:
    """A site's hello answer as a budget and public key; ValueError says what is wrong."""
    name = reply.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("no site name")
    values = {}
    for key, kind in (("n", int), ("eps", float), ("delta", float), ("dim", int)):
        value = reply.get(key)
        wrong_type = not isinstance(value, int if kind is int else (int, float))
        if isinstance(value, bool) or wrong_type:
            raise ValueError(f"site {name}: {key} must be a number (got {value!r})")
        values[key] = kind(value)
    weight = reply.get("weight")
    if weight is not None and (isinstance(weight, bool) or not isinstance(weight, (int, float))):
        raise ValueError(f"site {name}: weight must be a number (got {weight!r})")
    key = reply.get("public_key")
    if not isinstance(key, bytes) or len(key) != KEY_BYTES:
        raise ValueError(f"site {name}: the public key must be {KEY_BYTES} bytes")
    budget = dp.SiteBudget(name=name, n=values["n"], eps=values["eps"], delta=values["delta"],
                           weight=None if weight is None else float(weight), dim=values["dim"])
    if reply.get("digest") != dp.budget_digest(budget):
        raise ValueError(f"site {name}: the digest does not match the values it reported")
    return budget, key


def _check_release(name: str, reply: Payload | None, digest: str, count: int, timeout: float) -> str | None:
    """Why a site's answer to a release request cannot be used, or None."""
    if reply is None:
        return f"site {name} did not answer within {timeout:g} s"
    if reply.config.get("status") != "ok":
        reason = str(reply.config.get("reason", "refused without a reason"))
        return reason if reason.startswith(f"site {name}") else f"site {name}: {reason}"
    if reply.config.get("digest") != digest:
        return f"site {name} answered for other values than the design was made for (digest changed)"
    release = reply.arrays.get("release")
    if release is None:
        return f"site {name} sent no release"
    release = np.asarray(release)
    if release.shape != (count,):
        return f"site {name} sent a release of shape {release.shape}; this stage needs ({count},) unique entries"
    if not np.issubdtype(release.dtype, np.floating):
        return f"site {name} sent a release of type {release.dtype}; floating-point numbers are needed"
    if not np.all(np.isfinite(release)):
        return f"site {name} sent non-finite numbers (NaN or infinity) in its release"
    return None


def run_rounds(transport: Transport, settings: Sequence[AggregatorSettings]) -> list[RoundOutcome]:
    """Several rounds side by side, step by step: the requests all rounds have for a node at the same step travel
    as one bundle (``messages.bundle``), so capePCA and capeAGN together take four exchanges (hello, shares, the
    first stage of both, capeAGN's M3 stage) instead of seven. Every round keeps its own keys, design, streams,
    checks and log; one round's failure does not stop another. Never raises for a party's failure."""
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
