"""L2 sensitivities of the released statistics (docs/math/sensitivities.md), per site with N = N_s.

Two neighbouring relations, chosen explicitly:

* ``replace-one`` (default): neighbouring data sets differ by replacing one sample. The bounds are
  Frobenius-norm bounds on the change of the released matrix or tensor, the norm the Gaussian
  mechanism needs.
* ``as-published``: the papers' constants. For ``pca`` and ``mog-m2`` they bound the spectral norm,
  which the Gaussian mechanism does not use; replacing one sample can change the Frobenius norm by
  sqrt(2)/N (orthogonal unit samples), so these constants are only kept to reproduce the papers.

Statistics (samples have ||x|| <= 1 after preprocessing):

=========  ==============================  =======================  =====================
name       released quantity               as-published             replace-one
=========  ==============================  =======================  =====================
mean       mean of scalars in [0, 1]       1/N                      1/N
pca        A = (1/N) X X^T                 1/N                      sqrt(2)/N
stm-m2     sym. mean of t1 t2^T (one-hot)  sqrt(2)/N                sqrt(2)/N
stm-m3     sym. mean of t1 x t2 x t3       sqrt(2)/N                sqrt(2)/N
mog-m2     mean t t^T - sigma^2 I          1/N                      sqrt(2)/N
mog-m3     mean t^(x)3 - sigma^2 correction 2/N + 6 D sigma^2 / N   2/N + 6 D sigma^2 / N
=========  ==============================  =======================  =====================

The MOG M3 constant is the papers' triangle-inequality bound; it is valid (if loose) under
replace-one as well: ||x^(x)3 - y^(x)3||_F <= 2 and the sigma^2 correction moves by at most
sigma^2 sqrt(3D + 6) * 2/N <= 6 D sigma^2 / N.

LDA moments (paper 004; docs/math/lda.md): the unbiased estimators of Definition 3.1 from N documents, with the
Dirichlet concentration alpha_0, a2 = alpha_0/(alpha_0 + 1), a3 = alpha_0/(alpha_0 + 2),
b3 = 2 alpha_0^2 / ((alpha_0 + 1)(alpha_0 + 2)); neighbours replace one document (both relations: the paper's
printed constants are L1 bounds for its misprinted estimators, so the project's own Frobenius bounds are used):

=========  ==============================  =====================================
lda-m2     M2_hat (D x D)                  (sqrt(2) + sqrt(6) a2) / N
lda-m3     M3_hat (D x D x D)              sqrt(2) (1 + 6 a3 + 3 b3) / N
=========  ==============================  =====================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from ..validation import InputError, check_choice, check_positive, check_positive_int

__all__ = ["LDA_STATISTICS", "NEIGHBOURING", "SENSITIVITIES", "STATISTICS", "LdaStatistic", "Neighbouring",
           "Sensitivity", "Statistic", "lda_sensitivity", "lda_sensitivity_unchecked", "sensitivity",
           "sensitivity_unchecked", "statistic_bound", "statistic_entries"]

Neighbouring = Literal["replace-one", "as-published"]
NEIGHBOURING: tuple[Neighbouring, ...] = get_args(Neighbouring)
Statistic = Literal["mean", "pca", "stm-m2", "stm-m3", "mog-m2", "mog-m3"]
STATISTICS: tuple[Statistic, ...] = get_args(Statistic)
LdaStatistic = Literal["lda-m2", "lda-m3"]
LDA_STATISTICS: tuple[LdaStatistic, ...] = get_args(LdaStatistic)
SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True, kw_only=True)
class Sensitivity:
    """One row of the sensitivity table (the module docstring's tables): the released statistic's ``name``, its
    tensor ``order`` (0: a scalar mean, 2: a matrix, 3: a third-order tensor; its unique entries follow), ``delta(n,
    published, params)``: its L2 sensitivity from ``n`` samples (``published``: the papers' constants; ``params``:
    the model's parameters named in ``needs``, e.g. ``dim`` and ``sigma2`` for mog-m3, ``alpha0`` for LDA), and
    ``bound(sigma2)``: a bound on |entry| under the sensitivities' premise."""

    name: str
    order: int
    delta: Callable[[int, bool, dict[str, float]], float]
    needs: tuple[str, ...] = ()
    bound: Callable[[float], float] = lambda sigma2: 1.0


def _lda_m2(n: int, published: bool, p: dict[str, float]) -> float:
    a0 = float(p["alpha0"])
    return (SQRT2 + math.sqrt(6.0) * a0 / (a0 + 1.0)) / n


def _lda_m3(n: int, published: bool, p: dict[str, float]) -> float:
    a0 = float(p["alpha0"])
    a3, b3 = a0 / (a0 + 2.0), 2.0 * a0 * a0 / ((a0 + 1.0) * (a0 + 2.0))
    return SQRT2 * (1.0 + 6.0 * a3 + 3.0 * b3) / n


SENSITIVITIES: dict[str, Sensitivity] = {row.name: row for row in (
    Sensitivity(name="mean", order=0, delta=lambda n, published, p: 1.0 / n),
    Sensitivity(name="pca", order=2, delta=lambda n, published, p: (1.0 if published else SQRT2) / n),
    Sensitivity(name="stm-m2", order=2, delta=lambda n, published, p: SQRT2 / n),
    Sensitivity(name="stm-m3", order=3, delta=lambda n, published, p: SQRT2 / n),
    Sensitivity(name="mog-m2", order=2, delta=lambda n, published, p: (1.0 if published else SQRT2) / n,
                bound=lambda sigma2: 1.0 + sigma2),
    Sensitivity(name="mog-m3", order=3, delta=lambda n, published, p: (2.0 + 6.0 * p["dim"] * p["sigma2"]) / n,
                needs=("dim", "sigma2"), bound=lambda sigma2: 1.0 + 3.0 * sigma2),
    Sensitivity(name="lda-m2", order=2, delta=_lda_m2, needs=("alpha0",)),
    Sensitivity(name="lda-m3", order=3, delta=_lda_m3, needs=("alpha0",)),
)}
"""Every released statistic's sensitivity, by name: the one table :func:`sensitivity`, :func:`lda_sensitivity`,
:func:`statistic_entries` and :func:`statistic_bound` read (a new statistic is a new row, never a new branch)."""


def _row(statistic: str) -> Sensitivity:
    if statistic not in SENSITIVITIES:
        raise ValueError(f"unknown statistic {statistic!r}")
    return SENSITIVITIES[statistic]


def sensitivity(
    statistic: str,
    n: int,
    neighbouring: str = "replace-one",
    *,
    dim: int | None = None,
    sigma2: float | None = None,
) -> float:
    """L2 sensitivity Delta of ``statistic`` computed from ``n`` samples (table in the module docstring).

    ``dim`` (D) and ``sigma2`` (the scaled MOG component variance) are needed for ``mog-m3`` only. Checks its
    arguments; :func:`sensitivity_unchecked` is the formula for validated inputs.
    """
    statistic = check_choice(statistic, "statistic", STATISTICS)
    neighbouring = check_choice(neighbouring, "neighbouring", NEIGHBOURING)
    n = check_positive_int(n, "N")
    if SENSITIVITIES[statistic].needs:
        if dim is None or sigma2 is None:
            raise InputError(f"the {statistic} sensitivity needs the dimension D and the component variance sigma^2")
        dim = check_positive_int(dim, "D")
        sigma2 = check_positive(sigma2, "sigma^2", allow_zero=True)
    return sensitivity_unchecked(statistic, n, neighbouring, dim=dim, sigma2=sigma2)


def sensitivity_unchecked(statistic: Statistic, n: int, neighbouring: Neighbouring, *, dim: int | None = None,
                          sigma2: float | None = None) -> float:
    """The formula of :func:`sensitivity` for inputs validated at the boundary (a Scenario's sizes and relation,
    a statistic chosen from :data:`STATISTICS`; ``dim`` and ``sigma2`` given for mog-m3)."""
    return _row(statistic).delta(n, neighbouring == "as-published", {"dim": dim, "sigma2": sigma2})


def statistic_entries(statistic: Statistic, dim: int) -> int:
    """Unique entries of one release of ``statistic`` (its noise is drawn per unique entry): 1 for the mean,
    D (D + 1) / 2 for a second moment, C(D + 2, 3) for a third."""
    order = _row(statistic).order
    return 1 if order == 0 else math.comb(int(dim) + order - 1, order)


def statistic_bound(statistic: Statistic, sigma2: float | None = None) -> float:
    """A bound on |entry| of ``statistic`` under the sensitivities' premise (||x|| <= 1, one-hot words): 1, except
    MOG's moments, whose sigma^2 corrections add sigma^2 (M2) and 3 sigma^2 (M3: m_i [j = k] + ... per entry)."""
    return float(_row(statistic).bound(float(sigma2 or 0.0)))


def lda_sensitivity(statistic: str, n: int, alpha0: float) -> float:
    """L2 sensitivity of the LDA moment ``statistic`` ("lda-m2" or "lda-m3") from ``n`` >= 3 documents with the
    Dirichlet concentration ``alpha0`` > 0 (table in the module docstring). Checks its arguments."""
    statistic = check_choice(statistic, "statistic", LDA_STATISTICS)
    n = check_positive_int(n, "number of documents N", minimum=3)
    alpha0 = check_positive(alpha0, "alpha_0")
    return lda_sensitivity_unchecked(statistic, n, alpha0)


def lda_sensitivity_unchecked(statistic: LdaStatistic, n: int, alpha0: float) -> float:
    """The formula of :func:`lda_sensitivity` for validated inputs:
    Delta2 = (sqrt(2) + sqrt(6) a2) / N and Delta3 = sqrt(2) (1 + 6 a3 + 3 b3) / N."""
    return _row(statistic).delta(n, False, {"alpha0": alpha0})
