"""What an LDA curve's runs can compute before the Run (issue 34: the Topic models page prepares its opening setting
while the visitor reads the page, in a low-priority thread).

Of one run of :func:`dpcore.lda.curves.eps_curve` only the noise and what follows it depend on the privacy budgets:
the run's documents (:func:`dpcore.lda.compare.run_problem`), every site's and the pooled corpus's M2_s
(:attr:`dpcore.lda.site.LdaSite.m2_dense`) and the results of the algorithms whose result does not depend on eps
(non-private, random: their streams are keyed by seed, run and name, :func:`dpcore.seeding.run_rng`) are fixed by the
corpus settings, the sizes, the seed and the settings. :func:`prepare_runs` computes them run by run into a
:class:`CurvePreparation`, stopping between runs when asked; ``eps_curve(..., prepared=...)`` hands the finished runs
to its tasks, which install the M2_s in the documents they draw again and take the fixed results instead of
recomputing them. The arithmetic is the same, so the curve is the same number for number with or without a
preparation, finished or not (tests/test_lda_ahead.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..family import Algorithm
from ..seeding import run_rng
from .compare import Shared, run_problem
from .problem import LdaProblem, LdaResult, LdaSettings, LdaSpec
from .table import run_algorithm

__all__ = ["MAX_PREPARED_BYTES", "CurvePreparation", "PreparedRun", "install", "prepared_runs", "preparation_key",
           "prepare_runs"]

MAX_PREPARED_BYTES = 64 * 2**20
"""At most this many bytes of M2 matrices are prepared ahead for one setting (every run keeps S + 1 matrices of D x D
float64; the opening setting: 5 runs of 21 matrices of 100 x 100, 0.8 MB): the runs beyond it are left to the Run, which
draws them as it always does. A bound on memory and on what is sent to the worker processes, not on what a user may
ask for."""


@dataclass(frozen=True, eq=False, kw_only=True)
class PreparedRun:
    """One run's data-only parts: every site's M2_s in site order, the pooled corpus's M2, and the results of the
    algorithms that do not depend on eps, by name."""

    site_m2: tuple[np.ndarray, ...]
    pooled_m2: np.ndarray
    fixed: dict[str, LdaResult]


def preparation_key(spec: LdaSpec, sizes: np.ndarray, seed: int, settings: LdaSettings, first_eps: float) -> tuple:
    """What a prepared run depends on: the synthetic corpus's settings, the sites' document counts, the seed, the
    algorithm settings and the first eps of the grid (the fixed results run with its budgets, as in the curve)."""
    return (spec, tuple(int(n) for n in sizes), int(seed), settings, float(first_eps))


@dataclass(eq=False)
class CurvePreparation:
    """The runs prepared so far for one ``key`` (:func:`preparation_key`); one preparing thread at a time
    (``lock``), which stops between runs once ``stop`` is set."""

    key: tuple
    runs: dict[int, PreparedRun] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def finished(self, key: tuple) -> dict[int, PreparedRun]:
        """The runs finished so far when ``key`` is this preparation's, else none."""
        return dict(self.runs) if key == self.key else {}


def prepared_runs(runs: int, n_sites: int, dim: int) -> int:
    """How many of ``runs`` runs to prepare ahead within :data:`MAX_PREPARED_BYTES`."""
    per_run = (n_sites + 1) * dim * dim * 8
    return min(int(runs), MAX_PREPARED_BYTES // per_run)


def prepare_one(shared: Shared, run: int, entries: tuple[Algorithm, ...], scenario,
                stop: threading.Event | None = None) -> PreparedRun | None:
    """The data-only parts of run ``run`` (the same calls as the run itself: same documents, same streams); None when
    ``stop`` is set meanwhile (checked after every site's M2 and every result, so that a Run that starts does not
    share the CPU with the rest of a run prepared for nothing)."""
    stopped = (lambda: False) if stop is None else stop.is_set
    problem = run_problem(shared, run)
    site_m2 = []
    for site in (*problem.sites, problem.pooled):
        if stopped():
            return None
        site_m2.append(site.m2_dense)
    fixed = {}
    for entry in entries:
        if stopped():
            return None
        if not entry.private:
            fixed[entry.name] = run_algorithm(entry, problem, scenario, shared.settings,
                                              run_rng(shared.seed, run, entry.name, "lda"))
    return PreparedRun(site_m2=tuple(site_m2[:-1]), pooled_m2=site_m2[-1], fixed=fixed)


def prepare_runs(preparation: CurvePreparation, runs: int,
                 prepare: Callable[[int], PreparedRun | None]) -> None:
    """``prepare(run)`` for every run not yet in ``preparation``, in order, until its ``stop`` is set (checked
    between runs; ``prepare`` returns None when it stopped inside a run); returns at once when another thread is
    preparing it."""
    if not preparation.lock.acquire(blocking=False):
        return
    try:
        for run in range(runs):
            if preparation.stop.is_set():
                return
            if run not in preparation.runs:
                prepared = prepare(run)
                if prepared is None:
                    return
                preparation.runs[run] = prepared
    finally:
        preparation.lock.release()


def install(problem: LdaProblem, prepared: PreparedRun) -> None:
    """Give the documents of a run, drawn again, the M2_s computed ahead (the values of their ``m2_dense``)."""
    for site, m2 in zip(problem.sites, prepared.site_m2, strict=True):
        site.__dict__["m2_dense"] = m2  # the cached property's slot (functools.cached_property)
    problem.pooled.__dict__["m2_dense"] = prepared.pooled_m2
