"""What the aggregator checks in the answers it gets: a site's hello (its reported budget, public key and digest),
its masked release (status, digest, shape, ring elements) and its reveal (the shares the signed set calls for)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import dp, shares
from .messages import Payload
from .sealing import KEY_BYTES

__all__ = ["budget_from_hello", "release_problem", "reveal_problem"]


def budget_from_hello(reply: Mapping[str, Any]) -> tuple[dp.SiteBudget, bytes]:
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
    site = dp.Site(name=name, n=values["n"], eps=values["eps"], delta=values["delta"],
                   weight=None if weight is None else float(weight))
    budget = dp.SiteBudget(site=site, dim=values["dim"])
    if reply.get("digest") != dp.budget_digest(budget):
        raise ValueError(f"site {name}: the digest does not match the values it reported")
    return budget, key


def release_problem(name: str, reply: Payload, digest: str, count: int) -> str | None:
    """Why a site's answer to a release request cannot be used, or None: it must be "ok", for the design's digest,
    with its masked release: ``count`` ring elements (uint64)."""
    if reply.config.get("status") != "ok":
        reason = str(reply.config.get("reason", "refused without a reason"))
        return reason if reason.startswith(f"site {name}") else f"site {name}: {reason}"
    if reply.config.get("digest") != digest:
        return f"site {name} answered for other values than the design was made for (digest changed)"
    release = reply.arrays.get("masked")
    if release is None:
        return f"site {name} sent no release"
    release = np.asarray(release)
    if release.shape != (count,):
        return f"site {name} sent a release of shape {release.shape}; this stage needs ({count},) unique entries"
    if release.dtype != np.uint64:
        return (f"site {name} sent a release of type {release.dtype}; a release travels masked, as {count} ring "
                "elements (uint64)")
    return None


def reveal_problem(name: str, reply: Payload, plan: dp.RoundPlan, stage: dp.RoundStage, survivors: list[str]
                   ) -> str | None:
    """Why a survivor's reveal cannot be used, or None: one share per site of the plan, of the kind the signed set
    says (self-mask for a member, noise for an excluded site helper-free, none with a helper), each held by this
    site's position; helper-free with a site excluded, W of the stage's size."""
    c = reply.config
    helper_free = not dp.NOISE_VARIANTS[plan.settings.noise].helper
    kinds = ["mask" if n in survivors else ("noise" if helper_free else "none") for n in plan.names]
    pieces = c.get("shares")
    if c.get("kinds") != kinds or not isinstance(pieces, list) or len(pieces) != len(plan.names):
        return f"site {name} revealed other shares than the signed survivor set calls for"
    me = plan.names.index(name)
    for kind, piece in zip(kinds, pieces, strict=True):
        if kind == "none":
            if piece != b"":
                return f"site {name} revealed a share it should not have"
            continue
        if not isinstance(piece, bytes) or len(piece) != shares.SHARE_BYTES or piece[0] != me + 1:
            return f"site {name} revealed a malformed share (or one held by another site)"
    if helper_free and len(survivors) < len(plan.names):
        total = np.asarray(reply.arrays.get("total", np.empty(0)))
        kind = dp.sum_to_wire(np.zeros(0, dtype=np.int64 if stage.discrete is not None else float)).dtype
        if total.shape != (stage.size,) or total.dtype != kind or not np.all(np.isfinite(total)):
            return f"site {name} sent no usable secure sum W ({stage.size} finite numbers of type {kind} needed)"
    return None
