"""In-process caches of the sweeps: prepared sweeps (plans) and complete results, keyed by JSON text.

Plans are keyed by the spec without its runs and algorithms (the data, problems and designs do not depend on
them); results by the spec's canonical JSON. Both are small LRU stores guarded by one lock, so a dashboard with
several sessions shares them safely.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

__all__ = ["cache_info", "clear_cache", "lookup_plan", "lookup_result", "store_plan", "store_result"]

_LOCK = threading.Lock()
_PLANS: OrderedDict[str, Any] = OrderedDict()
_RESULTS: OrderedDict[str, Any] = OrderedDict()
_PLAN_CACHE_SIZE = 2
_RESULT_CACHE_SIZE = 16
_STATS = {"hits": 0, "misses": 0}


def lookup_plan(key: str) -> Any | None:
    with _LOCK:
        plan = _PLANS.get(key)
        if plan is not None:
            _PLANS.move_to_end(key)
        return plan


def store_plan(key: str, plan: Any) -> None:
    with _LOCK:
        _PLANS[key] = plan
        while len(_PLANS) > _PLAN_CACHE_SIZE:
            _PLANS.popitem(last=False)


def lookup_result(key: str) -> Any | None:
    """The cached result for ``key`` or None (counts as a hit or a miss)."""
    with _LOCK:
        result = _RESULTS.get(key)
        if result is None:
            _STATS["misses"] += 1
        else:
            _STATS["hits"] += 1
            _RESULTS.move_to_end(key)
        return result


def store_result(key: str, result: Any) -> None:
    with _LOCK:
        _RESULTS[key] = result
        _RESULTS.move_to_end(key)
        while len(_RESULTS) > _RESULT_CACHE_SIZE:
            _RESULTS.popitem(last=False)


def cache_info() -> dict[str, int]:
    """Hits and misses of the result cache and the number of cached results and prepared sweeps."""
    with _LOCK:
        return {"hits": _STATS["hits"], "misses": _STATS["misses"], "results": len(_RESULTS), "plans": len(_PLANS)}


def clear_cache() -> None:
    """Forget every cached result and prepared sweep (and reset the counters)."""
    with _LOCK:
        _RESULTS.clear()
        _PLANS.clear()
        _STATS.update(hits=0, misses=0)
