"""Shared by the benchmarks: time spent inside dpcore.linalg.top_eigenpairs."""

from __future__ import annotations

import time

from dpcore import linalg


class EigenTimer:
    """Context manager that wraps dpcore.linalg.top_eigenpairs (every eigen-decomposition of the PCA and OTD
    code goes through it) and adds up the seconds and calls spent inside."""

    def __init__(self) -> None:
        self.original = linalg.top_eigenpairs
        self.seconds = 0.0
        self.calls = 0

    def __enter__(self) -> EigenTimer:
        def timed(matrix, k, **options):
            start = time.perf_counter()
            out = self.original(matrix, k, **options)
            self.seconds += time.perf_counter() - start
            self.calls += 1
            return out

        linalg.top_eigenpairs = timed
        return self

    def __exit__(self, *exc) -> None:
        linalg.top_eigenpairs = self.original
