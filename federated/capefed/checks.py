"""What the aggregator checks in the answers it gets: a site's hello (its reported budget, public key and digest)
and a site's release (answered in time, status, digest, shape, finite numbers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import dp
from .messages import Payload
from .sealing import KEY_BYTES

__all__ = ["budget_from_hello", "release_problem"]


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


def release_problem(name: str, reply: Payload | None, digest: str, count: int, timeout: float) -> str | None:
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
