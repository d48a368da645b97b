"""Splitting data into sites (docs/data.md): integer site sizes and the shuffled deal of samples.

:func:`split_sites` shuffles first (the bundled MNIST file is sorted by label). When the sites need more samples
than the data set has, that is an error unless sampling with replacement is asked for; then the result says so and
what it costs (``with_replacement`` and ``message``); nothing is silently shrunk or stretched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..limits import CONCENTRATION_RANGE
from ..validation import InputError, check_choice, check_positive_int, check_range

__all__ = ["REPLACEMENT_CONSEQUENCE", "SIZE_SCHEMES", "SiteSplit", "SizeScheme", "apportion", "check_supply",
           "site_sizes", "sizes_from_fractions", "split_sites"]

SizeScheme = Literal["equal", "skewed"]

REPLACEMENT_CONSEQUENCE = (
    "Sampling with replacement uses some records more than once. The noise is calibrated to the sensitivity of one "
    "record, and a record present m times moves the statistic m times as far, so it is protected only as a group of "
    "m records (about m eps and a larger delta). The code does not account for this: use it to explore, not to "
    "protect people."
)
"""What sampling with replacement does to the privacy promise (shown wherever it can be switched on)."""


SIZE_SCHEMES: dict[SizeScheme, str] = {
    "equal": "sizes as equal as possible",
    "skewed": "Dirichlet proportions (smaller concentration = more unequal), at least min_size each",
}


def apportion(total: int, shares: np.ndarray, minimum: int = 1) -> np.ndarray:
    """Integer sizes >= ``minimum`` summing to ``total``, the rest split in proportion to ``shares``
    by largest remainders (ties to the lower index). ``shares`` may be 2-d: one row per draw."""
    p = np.asarray(shares, dtype=float)
    single = p.ndim == 1
    p = np.atleast_2d(p)
    if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p.sum(axis=1) <= 0):
        raise InputError("shares must be finite, >= 0 and not all zero")
    n_sites = p.shape[1]
    total = check_positive_int(total, "N")
    minimum = check_positive_int(minimum, "minimum", minimum=0)
    if total < n_sites * minimum:
        raise InputError(f"N = {total} is too small for {n_sites} sites of at least {minimum} samples", "N")
    rest = total - n_sites * minimum
    exact = rest * p / p.sum(axis=1, keepdims=True)
    base = np.floor(exact).astype(np.int64)
    left = rest - base.sum(axis=1)
    order = np.argsort(-(exact - base), axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(p.shape[0])[:, None]
    ranks[rows, order] = np.arange(n_sites)[None, :]
    sizes = minimum + base + (ranks < left[:, None])
    return sizes[0] if single else sizes


def sizes_from_fractions(total: int, fractions: np.ndarray) -> np.ndarray:
    """Site sizes for ``total`` samples in proportion to ``fractions`` (largest remainders, as
    :func:`apportion` with no minimum); a site that would get none takes one from the largest site."""
    sizes = apportion(total, fractions, minimum=0)
    if np.any(sizes < 1):
        sizes = np.maximum(sizes, 1)
        sizes[np.argmax(sizes)] -= int(sizes.sum() - total)
    return sizes


def site_sizes(n_total: int, n_sites: int, scheme: str = "equal", *, rng: np.random.Generator | None = None,
               concentration: float = 1.0, min_size: int = 1) -> np.ndarray:
    """Integer site sizes summing to ``n_total``: equal (remainder to the first sites) or skewed
    (min_size + Multinomial(n_total - S min_size, p) with p ~ Dirichlet(concentration), seeded by ``rng``)."""
    n_total = check_positive_int(n_total, "N")
    n_sites = check_positive_int(n_sites, "S")
    scheme = check_choice(scheme, "split", tuple(SIZE_SCHEMES))
    min_size = check_positive_int(min_size, "min_size")
    if n_total < n_sites * min_size:
        raise InputError(f"{n_total:,} samples cannot give {n_sites} sites at least {min_size} sample(s) each", "N")
    if scheme == "equal":
        sizes = np.full(n_sites, n_total // n_sites)
        sizes[: n_total % n_sites] += 1
        return sizes
    if rng is None:
        raise InputError("a skewed split needs a random generator (rng)", "rng")
    concentration = check_range(concentration, "concentration", *CONCENTRATION_RANGE)
    p = rng.dirichlet(np.full(n_sites, concentration))
    return min_size + rng.multinomial(n_total - n_sites * min_size, p)


@dataclass(frozen=True, kw_only=True)
class SiteSplit:
    """Site data (each D x N_s), the column indices they came from, labels, and how they were drawn.

    ``with_replacement`` is True when the sites needed more samples than the data set has; ``message``
    then says what that means. ``by_label`` marks the non-IID split (sites see few labels each).
    """

    sites: tuple[np.ndarray, ...]
    indices: tuple[np.ndarray, ...]
    labels: tuple[np.ndarray, ...] | None
    with_replacement: bool
    by_label: bool
    message: str | None

    @property
    def sizes(self) -> np.ndarray:
        return np.array([idx.size for idx in self.indices], dtype=int)


def check_supply(needed: int, available: int, allow_replacement: bool) -> None:
    """Refuse sites that need more samples than the data set has (``needed`` > ``available``) unless sampling with
    replacement is allowed: the check :func:`split_sites` makes, for a page to make before its Run is enabled."""
    if needed > available and not allow_replacement:
        raise InputError(f"the sites need {needed:,} samples but the data set has {available:,}; allow sampling with "
                         "replacement or use smaller sites", "sizes")


def split_sites(x: np.ndarray, sizes: Any, rng: np.random.Generator, *, labels: np.ndarray | None = None,
                by_label: bool = False, allow_replacement: bool = False) -> SiteSplit:
    """Shuffle the samples (columns of ``x``) and deal them to sites of the given ``sizes``.

    If the sizes add up to more than the N samples available, an error says so, unless ``allow_replacement`` (off by
    default): then every sample is used once and the shortfall is drawn again with replacement, and ``message`` says
    what that does to the privacy promise (a record used m times moves the statistic m times as far as the
    sensitivity assumes; nothing accounts for it).
    ``by_label`` sorts the shuffled samples by label before dealing, so each site holds a few labels only
    (a non-IID split for demonstrations).
    """
    x = np.asarray(x)
    if x.ndim != 2:
        raise InputError("data must be a D x N matrix", "data")
    n = x.shape[1]
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.size == 0:
        raise InputError("site sizes must be a non-empty list of integers", "sizes")
    sizes = np.array([check_positive_int(v.item() if hasattr(v, "item") else v, "site size") for v in sizes])
    total = int(sizes.sum())
    if by_label and labels is None:
        raise InputError("a split by label needs labels; this data set has none", "split")
    if labels is not None and len(labels) != n:
        raise InputError(f"got {len(labels)} labels for {n} samples", "labels")
    with_replacement = total > n
    message = None
    if with_replacement:
        check_supply(total, n, allow_replacement)
        extra = rng.choice(n, size=total - n, replace=True)
        order = rng.permutation(np.concatenate([np.arange(n), extra]))
        counts = np.bincount(order, minlength=n)
        message = (
            f"sampled with replacement: the sites need {total:,} samples but the data set has {n:,}, so every sample "
            f"is used once and {total - n:,} are drawn again ({int((counts > 1).sum()):,} samples appear more than "
            f"once, up to {int(counts.max())} times). {REPLACEMENT_CONSEQUENCE}"
        )
    else:
        order = rng.permutation(n)[:total]
    if by_label:
        order = order[np.argsort(np.asarray(labels)[order], kind="stable")]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    indices = tuple(order[bounds[i]: bounds[i + 1]] for i in range(sizes.size))
    sites = tuple(np.ascontiguousarray(x[:, idx]) for idx in indices)
    site_labels = None if labels is None else tuple(np.asarray(labels)[idx] for idx in indices)
    return SiteSplit(sites=sites, indices=indices, labels=site_labels, with_replacement=with_replacement,
                     by_label=bool(by_label), message=message)
