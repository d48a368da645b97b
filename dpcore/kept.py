"""Results kept for their inputs, compared by content: :func:`kept_by_content`.

A planner, a sweep or a comparison asks for the same noise design or integer design run after run (capePCA's planner
solved the same linear program hundreds of times per question); each is a pure function of values that pickle (a
scenario's budgets, a design's arrays). The key is the SHA-256 of the pickled arguments, so equal values in other
objects hit; values that do not pickle are computed without being kept. Every caller gets a deep copy of its own,
so nothing one caller does to its result reaches another; an exception is raised again at every call, never kept.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["KeptInfo", "kept_by_content"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, kw_only=True)
class KeptInfo:
    """Calls answered from what was kept (``hits``), computed (``misses``), and results kept now (``size``)."""

    hits: int
    misses: int
    size: int
    maxsize: int


def _key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    try:
        text = pickle.dumps((args, sorted(kwargs.items())), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    return hashlib.sha256(text).digest()


def kept_by_content(maxsize: int) -> Callable[[F], F]:
    """Keep a pure function's results for their arguments (module docstring), the ``maxsize`` most recently used.
    The wrapped function has ``cache_info()`` (:class:`KeptInfo`) and ``cache_clear()``."""
    if maxsize < 1:
        raise ValueError("maxsize must be at least 1")

    def decorate(function: F) -> F:
        kept: OrderedDict[bytes, Any] = OrderedDict()
        lock = threading.Lock()
        counts = {"hits": 0, "misses": 0}

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = _key(args, kwargs)
            if key is None:
                return function(*args, **kwargs)
            with lock:
                found = key in kept
                if found:
                    kept.move_to_end(key)
                    result = kept[key]
                    counts["hits"] += 1
            if not found:
                result = function(*args, **kwargs)
                with lock:
                    counts["misses"] += 1
                    kept[key] = result
                    while len(kept) > maxsize:
                        kept.popitem(last=False)
            return copy.deepcopy(result)

        def cache_info() -> KeptInfo:
            with lock:
                return KeptInfo(hits=counts["hits"], misses=counts["misses"], size=len(kept), maxsize=maxsize)

        def cache_clear() -> None:
            with lock:
                kept.clear()
                counts.update(hits=0, misses=0)

        wrapper.cache_info = cache_info  # type: ignore[attr-defined]
        wrapper.cache_clear = cache_clear  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
