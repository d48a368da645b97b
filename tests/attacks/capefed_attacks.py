"""The attacks of tests/test_federated_attacks.py, injected into real processes by ``sitecustomize`` (test only).

The control file (``CAPEFED_ATTACK_FILE``, JSON, rewritten by the test before each run) says what to do:

* ``"aggregator": {"attack": NAME, "victim": SITE, "dump": PATH, ...}``: the ServerApp's transport
  (``capefed.app.server_app.FlowerTransport.exchange``) is replaced by one that records every request it sends and every
  reply it receives (pickled to ``dump`` after each exchange: everything the aggregator's process holds) and changes
  them as attack NAME says (:data:`ATTACKS`); the aggregator's own code is untouched otherwise. At the end of the run
  it keeps pulling replies that came too late (``late_wait`` seconds): a real aggregator may keep them.
* ``"sites": {SITE: {"fault": FAULT, "seconds": S}}``: that site's worker misbehaves (:data:`SITE_FAULTS`): slow to
  release or to set up, a release far outside its range, or its worker process killed while it answers (``die``:
  while it computes its release; ``die-pushing``: after it handed its release's reply to the SuperNode and before the
  reply's contents, so the SuperNode holds a reply whose parts never come).
"""

from __future__ import annotations

import importlib.abc
import json
import os
import pickle
import signal
import sys
import time
from typing import Any

import numpy as np

CONTROL = os.environ.get("CAPEFED_ATTACK_FILE", "")


def control() -> dict[str, Any]:
    try:
        with open(CONTROL) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


# -- the aggregator ----------------------------------------------------------------------------------------------

class Recorder:
    """Every item the aggregator sent and received, by node, with the site names learnt from the hello."""

    def __init__(self, settings: dict[str, Any]):
        self.settings = settings
        self.items: list[dict[str, Any]] = []
        self.names: dict[int, str] = {}
        self.waiting: dict[str, tuple[int, list[tuple[str, str, Any]]]] = {}
        self.state: dict[str, Any] = {}

    def add(self, node: int, action: str, request: Any, reply: Any, late: bool = False) -> None:
        if reply is not None and action == "hello":
            role, name = reply.config.get("role"), reply.config.get("name")
            self.names[node] = "helper" if role == "helper" else str(name)
        self.items.append({"action": action, "node": node, "site": self.names.get(node),
                           "request": {"config": dict(request.config), "arrays": dict(request.arrays)},
                           "reply": None if reply is None else {"config": dict(reply.config),
                                                                "arrays": dict(reply.arrays)},
                           "late": late})

    def dump(self) -> None:
        path = self.settings.get("dump")
        if path:
            with open(f"{path}.tmp", "wb") as handle:
                pickle.dump({"items": self.items, "names": self.names}, handle)
            os.replace(f"{path}.tmp", path)

    def node_of(self, name: str) -> int | None:
        return next((n for n, s in self.names.items() if s == name), None)


def record(recorder: Recorder, items: dict[int, list], replies: dict[int, Any]) -> dict[int, list]:
    """Record the items sent and the replies to them; returns each node's reply items (by key)."""
    from capefed.app.messages import unbundle  # noqa: PLC0415

    opened: dict[int, list] = {}
    for node, its in items.items():
        reply = replies.get(node)
        try:
            answered = {k: p for k, _, p in unbundle(reply)} if reply is not None else {}
        except ValueError:  # a node-level refusal answers every item
            answered = {k: reply for k, _, _ in its}
        for key, action, payload in its:
            recorder.add(node, action, payload, answered.get(key))
        if reply is not None:
            opened[node] = [(k, a, answered[k]) for k, a, _ in its if k in answered]
    return opened


def attacked(attack: Any, recorder: Recorder, requests: dict[int, Any], send: Any, send_extra: Any
             ) -> dict[int, Any]:
    """One exchange of the aggregator under ``attack``: its bundles opened, changed, sent (``send``), the replies
    changed and bundled again; ``send_extra`` sends the attack's own extra requests."""
    from capefed.app.messages import bundle, unbundle  # noqa: PLC0415

    items = attack.before(recorder, {node: list(unbundle(p)) for node, p in requests.items()})
    opened = attack.after(recorder, None, items, send(items), send_extra)
    return {node: bundle(v) for node, v in opened.items() if v}


def _push_pull(server_app: Any, transport: Any, requests: dict[int, Any], timeout: float, until: Any
               ) -> tuple[dict[int, Any], dict[str, int]]:
    """FlowerTransport.exchange's push and pull, returning also the message ids still unanswered."""
    messages = [server_app.Message(server_app.to_records(p), node, "query.bundle") for node, p in requests.items()]
    start = time.monotonic()
    ids = list(transport.grid.push_messages(messages)) if messages else []
    waiting = {message_id: node for message_id, node in zip(ids, requests, strict=True)}
    replies: dict[int, Any] = {}
    while waiting and time.monotonic() < start + timeout:
        for reply in transport.grid.pull_messages(list(waiting)):
            node = waiting.pop(reply.metadata.reply_to_message_id, None)
            if node is not None and not (reply.has_error() and reply.error.code
                                         == server_app.ErrorCode.NODE_UNAVAILABLE):
                replies[node] = server_app._decoded(node, reply)
        if not waiting or (until is not None and until(set(replies), time.monotonic() - start)):
            break
        time.sleep(transport.poll)
    return replies, waiting


def _install_aggregator(server_app: Any) -> None:
    from capefed.app.messages import bundle  # noqa: PLC0415

    settings = control().get("aggregator")
    if not settings:
        return
    recorder = Recorder(settings)
    attack = ATTACKS[settings.get("attack", "honest")]

    def send(transport: Any, items: dict[int, list], timeout: float, until: Any = None) -> dict[int, list]:
        """Send bundles of items, record them and the replies; returns each node's reply items (by key)."""
        requests = {node: bundle(v) for node, v in items.items() if v}
        replies, waiting = _push_pull(server_app, transport, requests, timeout, until)
        opened = record(recorder, items, replies)
        for message_id, node in waiting.items():
            recorder.waiting[message_id] = (node, items[node])
        recorder.dump()
        return opened

    def exchange(self: Any, action: str, requests: Any, timeout: float, until: Any = None) -> dict[int, Any]:
        return attacked(attack, recorder, requests, lambda items: send(self, items, timeout, until),
                        lambda items: send(self, items, timeout))

    original = server_app.run_rounds

    def run_rounds(transport: Any, rounds: Any) -> Any:
        try:
            return original(transport, rounds)
        finally:
            _late(server_app, transport, recorder, float(settings.get("late_wait", 0.0)))

    server_app.FlowerTransport.exchange = exchange
    server_app.run_rounds = run_rounds


def _late(server_app: Any, transport: Any, recorder: Recorder, seconds: float) -> None:
    """Replies that came after the aggregator stopped waiting, pulled until they arrive or ``seconds`` passed."""
    from capefed.app.messages import unbundle  # noqa: PLC0415

    end = time.monotonic() + seconds
    while recorder.waiting and time.monotonic() < end:
        for reply in transport.grid.pull_messages(list(recorder.waiting)):
            node, items = recorder.waiting.pop(reply.metadata.reply_to_message_id, (None, []))
            if node is None or reply.has_error():
                continue
            answered = {k: p for k, _, p in unbundle(server_app._decoded(node, reply))}
            for key, action, payload in items:
                recorder.add(node, action, payload, answered.get(key), late=True)
        time.sleep(0.5)
    recorder.dump()


def _actions(items: dict[int, list]) -> set[str]:
    return {a for its in items.values() for _, a, _ in its}


class Honest:
    """Records everything and changes nothing."""

    def before(self, recorder: Recorder, items: dict[int, list]) -> dict[int, list]:
        return items

    def after(self, recorder: Recorder, transport: Any, items: dict[int, list], opened: dict[int, list],
              send: Any) -> dict[int, list]:
        return opened


class FalseClaimAfter(Honest):
    """The victim's masked release arrives; the aggregator says it dropped out (hides the reply from its own
    round code, which then asks for a survivor set without the victim)."""

    def after(self, recorder, transport, items, opened, send):
        node = recorder.node_of(recorder.settings["victim"])
        if node in opened:
            opened[node] = [(k, a, p) for k, a, p in opened[node] if a != "release"]
        return opened


class FalseClaimBefore(Honest):
    """The victim is never asked to release; the aggregator says it dropped out."""

    def before(self, recorder, items):
        node = recorder.node_of(recorder.settings["victim"])
        if node in items:
            kept = [(k, a, p) for k, a, p in items[node] if a != "release"]
            recorder.state.setdefault("held", []).extend((k, a, p) for k, a, p in items[node] if a == "release")
            items[node] = kept
        return items


class HeldBack(FalseClaimBefore):
    """As FalseClaimBefore, then, once the survivors revealed their shares, the held release request goes to the
    victim (it answers; the aggregator keeps its masked release) and the aggregator asks everyone to sign and reveal
    a set with the victim in it."""

    def after(self, recorder, transport, items, opened, send):
        if "reveal" not in _actions(items) or not recorder.state.get("held"):
            return opened
        victim = recorder.node_of(recorder.settings["victim"])
        held = recorder.state.pop("held")
        send({victim: held})
        sites = [n for n in recorder.names if recorder.names[n] != "helper"]
        _confirm_and_reveal(recorder, items, send, {n: sorted(recorder.names[m] for m in sites) for n in sites})
        return opened


class SecondClaim(FalseClaimAfter):
    """After a first claim (the victim's release hidden) and its reveal, a second claim in the same stage: a set
    without ``second`` sent to sign and reveal."""

    def after(self, recorder, transport, items, opened, send):
        opened = super().after(recorder, transport, items, opened, send)
        if "reveal" in _actions(items) and not recorder.state.get("second done"):
            recorder.state["second done"] = True
            second = recorder.settings["second"]
            others = sorted(s for s in recorder.names.values() if s not in ("helper", second))
            _confirm_and_reveal(recorder, items, send, {n: others for n in recorder.names
                                                       if recorder.names[n] in others})
        return opened


def _confirm_and_reveal(recorder: Recorder, template: dict[int, list], send: Any, sets: dict[int, list[str]]
                        ) -> None:
    """Ask each node to sign the set given for it, then to reveal it with whatever signatures came back."""
    base = next(p for its in template.values() for _, a, p in its if a in ("reveal", "recover"))
    stage = base.config["stage"]
    requests = {}
    for node, survivors in sets.items():
        payload = base.copy()
        for key in ("survivor_signatures", "w_digest"):
            payload.config.pop(key, None)
        payload.config.update(survivors=survivors, stage=stage)
        requests[node] = [(f"x{node}", "confirm", payload)]
    replies = send(requests)
    signatures = {recorder.names[n]: p.config.get("signature", b"") for n, its in replies.items() for _, _, p in its}
    reveals = {}
    for node, survivors in sets.items():
        payload = requests[node][0][2].copy()
        payload.config["survivor_signatures"] = [signatures.get(s, b"\0" * 64) or b"\0" * 64 for s in survivors]
        reveals[node] = [(f"y{node}", "reveal", payload)]
    send(reveals)


class TwoSets(Honest):
    """The survivor set shown to two groups differently: ``group_a`` sign set ``set_a``, the others ``set_b``; then
    each group is asked to reveal for its set with the signatures the aggregator has."""

    def before(self, recorder, items):
        acts = _actions(items)
        if "confirm" in acts:
            for node, its in items.items():
                chosen = self._set(recorder, node)
                for _, _, payload in its:
                    payload.config["survivors"] = chosen
        if "reveal" in acts:
            signatures = recorder.state.get("signatures", {})
            for node, its in items.items():
                chosen = self._set(recorder, node)
                for _, _, payload in its:
                    payload.config["survivors"] = chosen
                    payload.config["survivor_signatures"] = [signatures.get(s, b"\0" * 64) for s in chosen]
        return items

    def _set(self, recorder: Recorder, node: int) -> list[str]:
        s = recorder.settings
        return s["set_a"] if recorder.names.get(node) in s["group_a"] else s["set_b"]

    def after(self, recorder, transport, items, opened, send):
        if "confirm" in _actions(items):
            recorder.state["signatures"] = {recorder.names[n]: p.config.get("signature") for n, its in opened.items()
                                            for _, _, p in its}
        return opened


class Equivocate(Honest):
    """Every request to the victim carries other settings (``changes``) than everyone else's: another design."""

    def before(self, recorder, items):
        node = recorder.node_of(recorder.settings["victim"])
        for _, _, payload in items.get(node, []):
            if "settings" in payload.config:
                changed = json.loads(payload.config["settings"]) | recorder.settings["changes"]
                payload.config["settings"] = json.dumps(changed)
        return items


class Forge(Honest):
    """The release requests altered on the way out: in capePCA the helper's share signed by a key of the
    aggregator's own, in capeAGN the site noise weakened to tau_g,s^2 = 0."""

    def before(self, recorder, items):
        from capefed.app.trust import sign  # noqa: PLC0415
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: PLC0415

        key = recorder.state.setdefault("key", Ed25519PrivateKey.generate())
        for its in items.values():
            for _, action, payload in its:
                c = payload.config
                if action == "release" and c.get("algorithm") == "capePCA" and "sealed_e" in c:
                    c["helper_signature"] = sign(key, "share", b"forged", c["sealed_e"])
                if action == "release" and c.get("algorithm") == "capeAGN":
                    c["var_g"] = 0.0
        return items


ATTACKS = {"honest": Honest(), "forge": Forge(), "false-claim-after": FalseClaimAfter(),
           "false-claim-before": FalseClaimBefore(), "held-back": HeldBack(), "second-claim": SecondClaim(),
           "two-sets": TwoSets(), "equivocate": Equivocate()}


# -- a site --------------------------------------------------------------------------------------------------------

def _fault(name: str) -> dict[str, Any]:
    return control().get("sites", {}).get(name, {})


def _install_release(module: Any) -> None:
    original = module.release
    dp = module.dp

    def release(site: Any, c: Any) -> Any:
        fault = _fault(site.name)
        kind = fault.get("fault")
        if kind == "slow":
            time.sleep(float(fault["seconds"]))
        if kind == "die" and not os.path.exists(fault["marker"]):
            _die(fault["marker"])
        if kind == "die-pushing" and not os.path.exists(fault["marker"]):
            _DYING.append(fault["marker"])  # the reply to this request is the one whose contents never come
        if kind != "range":
            return original(site, c)
        honest_release, honest_encode = dp.site_stage_release, dp.encode_release

        def huge(*args: Any, **kwargs: Any) -> np.ndarray:
            return np.full(honest_release(*args, **kwargs).shape, float(fault.get("value", 1e300)))

        def saturate(values: np.ndarray, encoding: Any) -> np.ndarray:
            top = float(2**63 - 1024)
            with np.errstate(over="ignore"):
                scaled = np.ldexp(values, encoding.bits)
            return np.clip(scaled, -top, top).astype(np.int64).view(np.uint64)

        dp.site_stage_release, dp.encode_release = huge, saturate
        try:
            return original(site, c)
        finally:
            dp.site_stage_release, dp.encode_release = honest_release, honest_encode

    module.release = release


_DYING: list[str] = []


def _die(marker: str) -> None:
    with open(marker, "w") as handle:
        handle.write(str(os.getpid()))
    os.kill(os.getpid(), signal.SIGKILL)


def _install_push(module: Any) -> None:
    """The worker pushes a reply's contents (``push_objects``) right after handing the reply over (PushMessages)."""
    original = module.push_objects

    def push_objects(*args: Any, **kwargs: Any) -> Any:
        if _DYING:
            _die(_DYING.pop())
        return original(*args, **kwargs)

    module.push_objects = push_objects


def _install_setup(module: Any) -> None:
    original = module.setup

    def setup(site: Any, c: Any) -> Any:
        fault = _fault(site.name)
        if fault.get("fault") == "slow-setup":
            time.sleep(float(fault["seconds"]))
        return original(site, c)

    module.setup = setup


TARGETS = {"capefed.app.server_app": _install_aggregator, "capefed.app.siterelease": _install_release,
           "capefed.app.sitesetup": _install_setup, "flwr.supernode.runtime.run_clientapp": _install_push}


class _Finder(importlib.abc.MetaPathFinder):
    """Hands each target module to its installer right after it is executed."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in TARGETS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        execute = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            TARGETS[name](module)

        spec.loader.exec_module = exec_module
        return spec


def install_hook() -> None:
    sys.meta_path.insert(0, _Finder())
