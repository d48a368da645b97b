"""What one OTD comparison runs on (docs/math/capeagn.md): the data (:class:`OtdProblem`, from a synthetic model,
uploaded MOG samples or an uploaded corpus), the settings shared by every run (:class:`OtdSettings`) and one
algorithm's output (:class:`Decomposition`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..data.split import sizes_from_fractions
from ..data.text import Corpus
from ..limits import (
    DEFAULT_MEMORY_BUDGET,
    MAX_COMPONENTS,
    MAX_DATA_MAGNITUDE,
    MAX_DOC_LENGTH,
    MAX_OTD_DIM,
    MAX_OTD_SAMPLES,
    MAX_SIGMA2,
    MAX_SITE_NUMBERS,
    MEMORY_BUDGET_RANGE,
    NORM_BOUND_RANGE,
)
from ..scenario import Scenario
from ..seeding import UPLOAD_SPLIT_STREAM, stream_rng
from ..tensor.moments import ESTIMATORS, MogSite, StmSite, mog_sites, stm_site_from_words
from ..tensor.paths import PATHS
from ..tensor.power import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, check_iterations
from ..tensor.release import M3_NOISE
from ..validation import (
    InputError,
    check_choice,
    check_int_range,
    check_magnitude,
    check_positive,
    check_positive_int,
    check_range,
    check_rank,
    check_split,
)
from .models import (
    DEFAULT_SIGMA2,
    DEFAULT_TOPIC_CONCENTRATION,
    DEFAULT_WEIGHT_CONCENTRATION,
    MixtureModel,
    make_model,
    mog_norm_bound,
    sample_mog,
    sample_stm,
)

__all__ = ["Decomposition", "OtdProblem", "OtdSettings", "SyntheticSpec", "corpus_problem", "mog_problem",
           "synthetic_problem", "upload_problem"]


@dataclass(frozen=True, eq=False, kw_only=True)
class OtdProblem:
    """Data for one run: the sites' samples (already scaled), K, and what the result is compared to.

    ``scale`` multiplies recovered MOG components back to original units (the public bound zeta);
    ``truth`` is None for uploaded data (then the non-private result is the reference)."""

    kind: str
    sites: tuple[MogSite | StmSite, ...]
    k: int
    scale: float = 1.0
    sigma2: float = 0.0
    truth: MixtureModel | None = None
    vocabulary: tuple[str, ...] | None = None
    random_norm: float = 1.0
    notes: tuple[str, ...] = ()

    @property
    def dim(self) -> int:
        return self.sites[0].dim

    @property
    def n_sites(self) -> int:
        return len(self.sites)

    @property
    def sizes(self) -> np.ndarray:
        return np.array([s.n for s in self.sites], dtype=int)


@dataclass(frozen=True, kw_only=True)
class OtdSettings:
    """Algorithm settings shared by every run. ``eps_split`` is the share a of eps and delta spent on
    the first (whitening) stage; ``local_site`` None means the least noisy site (the largest for equal budgets).
    ``collusion`` c (None: the plain design) makes capeAGN use ``design_collusion_robust`` with c colluders for
    both stages."""

    eps_split: float = 0.5
    n_restarts: int = DEFAULT_RESTARTS
    n_iter: int = DEFAULT_ITERATIONS
    path: str = "auto"
    memory_budget: int = DEFAULT_MEMORY_BUDGET
    m3_noise: str = "published"
    local_site: int | None = None
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION
    collusion: int | None = None

    def __post_init__(self) -> None:
        """The settings enter here and are checked once; every run trusts them."""
        check_split(self.eps_split, "eps split")
        check_iterations(self.n_restarts, self.n_iter)
        check_choice(self.path, "path", PATHS)
        check_int_range(self.memory_budget, "memory budget (bytes)", *MEMORY_BUDGET_RANGE)
        check_choice(self.m3_noise, "m3_noise", tuple(M3_NOISE))
        if self.collusion is not None:
            check_positive_int(self.collusion, "collusion", minimum=0)


@dataclass(frozen=True, eq=False, kw_only=True)
class Decomposition:
    """One algorithm's output: recovered components (K x D, original units) and weights."""

    algorithm: str
    components: np.ndarray
    weights: np.ndarray
    eigenvalues: np.ndarray
    whitening_eigenvalues: np.ndarray | None
    path: str
    notes: tuple[str, ...] = ()
    bits_per_value: int | None = None
    """Width of the ring the releases travelled on (the discrete design: docs/math/discrete.md); None: float64."""


@dataclass(frozen=True, kw_only=True)
class SyntheticSpec:
    """A synthetic model: kind, D, K, MOG sigma^2, STM document length and estimator, and which ground truth
    (:data:`~dpcore.agn.models.TRUTHS`: ours or the authors' set-up)."""

    kind: str
    dim: int
    k: int
    sigma2: float = DEFAULT_SIGMA2
    doc_length: int = 3
    estimator: str = "first"
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION
    weight_concentration: float = DEFAULT_WEIGHT_CONCENTRATION
    truth: str = "ours"

    def __post_init__(self) -> None:
        """Sizes are bounded here, before a model or a sample is drawn (dpcore/limits.py)."""
        check_int_range(self.dim, "D", 2, MAX_OTD_DIM)
        check_int_range(self.k, "K", 1, MAX_COMPONENTS)
        check_int_range(self.doc_length, "document length L", 3, MAX_DOC_LENGTH)
        check_range(self.sigma2, "sigma^2", 0.0, MAX_SIGMA2)

    def check_load(self, sizes: Sequence[int]) -> None:
        """The samples one run draws for sites of ``sizes``: S x N_s at most MAX_OTD_SAMPLES, and S x N_s x D (MOG
        coordinates) or S x N_s x L (STM words) at most MAX_SITE_NUMBERS; checked before anything is drawn."""
        total = int(sum(int(n) for n in sizes))
        if total > MAX_OTD_SAMPLES:
            raise InputError(f"the sites hold {total:,} samples in all (S x N_s), more than the {MAX_OTD_SAMPLES:,} a "
                             "capeAGN run draws; use fewer sites or smaller N_s", "sites")
        per_sample = self.dim if self.kind == "mog" else self.doc_length
        numbers = total * per_sample
        if numbers > MAX_SITE_NUMBERS:
            what = "D" if self.kind == "mog" else "L"
            raise InputError(f"the sites' samples hold {numbers:,} numbers (S x N_s x {what}), more than the "
                             f"{MAX_SITE_NUMBERS:,} a run keeps in memory; use fewer or smaller sites or a smaller "
                             f"{what}", "sites")

    def model(self, rng: np.random.Generator) -> MixtureModel:
        check_choice(self.estimator, "estimator", tuple(ESTIMATORS))
        return make_model(self.kind, self.dim, self.k, rng, sigma2=self.sigma2, doc_length=self.doc_length,
                          topic_concentration=self.topic_concentration,
                          weight_concentration=self.weight_concentration, truth=self.truth)


def synthetic_problem(model: MixtureModel, sizes: Sequence[int], rng: np.random.Generator,
                      estimator: str = "first") -> OtdProblem:
    """Fresh samples of ``model`` for sites of the given sizes (drawn site by site). MOG samples are
    divided by the public bound zeta = sqrt(1 + D sigma^2) + 4 sigma and clipped to norm 1."""
    sizes = [check_positive_int(int(n), "N_s") for n in sizes]
    if model.kind == "mog":
        parts = [sample_mog(model, n, rng) for n in sizes]
        zeta = mog_norm_bound(model.dim, model.sigma2)
        sites, sigma2, clipped = mog_sites(parts, model.sigma2, zeta)
        notes = (f"samples divided by the public bound zeta = sqrt(1 + D sigma^2) + 4 sigma = {zeta:.3g}"
                 + (f"; {clipped} sample(s) clipped to norm zeta" if clipped else ""),)
        return OtdProblem(kind="mog", sites=sites, k=model.k, scale=zeta, sigma2=sigma2, truth=model, notes=notes)
    sites = tuple(stm_site_from_words(sample_stm(model, n, rng), model.dim, estimator) for n in sizes)
    return OtdProblem(kind="stm", sites=sites, k=model.k, truth=model)


def mog_problem(
    values: np.ndarray, k: int, fractions: Sequence[float], rng: np.random.Generator, *,
    sigma2: float | None = None, norm_bound: float | None = None,
) -> OtdProblem:
    """Uploaded MOG samples (N x D, original units) shuffled (``rng``) and split over sites in proportion
    to ``fractions``. ``sigma2`` None estimates sigma^2 as the smallest eigenvalue of the sample
    covariance (Hsu & Kakade 2013; not private, said in the notes). ``norm_bound`` is a public bound B
    (samples longer than B are clipped); None uses the largest sample norm (the paper's preprocessing,
    not private). No ground truth: the non-private result is the reference."""
    x = check_magnitude(values, "samples", MAX_DATA_MAGNITUDE)  # squares and moments stay finite
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise InputError("MOG data need at least 2 samples (rows) and 2 features (columns)", "file")
    n, dim = x.shape
    k = check_rank(k, dim)
    fractions = np.asarray(fractions, dtype=float)
    if n < fractions.size:
        raise InputError(f"{n} samples cannot be split over {fractions.size} sites", "file")
    notes: list[str] = []
    if sigma2 is None:
        if dim <= k or n <= dim:
            raise InputError(f"estimating sigma^2 needs D > K and more samples than features (N = {n}, D = {dim}, "
                             f"K = {k}); give sigma^2", "sigma2")
        cov = np.cov(x, rowvar=False)
        sigma2 = max(float(scipy.linalg.eigh(cov, eigvals_only=True, subset_by_index=[0, 0])[0]), 0.0)
        notes.append(f"sigma^2 = {sigma2:.4g} estimated as the smallest eigenvalue of the sample covariance "
                     "(Hsu & Kakade); this estimate is computed from the data and is not differentially private")
    else:
        sigma2 = check_positive(sigma2, "sigma^2", allow_zero=True)
    if norm_bound is None:
        bound = float(np.linalg.norm(x, axis=1).max())
        if bound <= 0:
            raise InputError("all samples are zero", "file")
        notes.append(f"samples divided by their largest norm {bound:.4g} (the paper's preprocessing); this uses the "
                     "data and is not private - give a public norm bound instead")
    else:
        bound = check_range(norm_bound, "norm bound", *NORM_BOUND_RANGE)
    sizes = sizes_from_fractions(n, fractions)
    order = rng.permutation(n)
    parts = np.split(x[order], np.cumsum(sizes)[:-1])
    sites, sigma2_scaled, clipped = mog_sites(parts, sigma2, bound)
    if clipped:
        notes.append(f"{clipped} sample(s) longer than the norm bound {bound:.4g} were clipped to it")
    notes.append(f"{n:,} samples shuffled and split over {len(sizes)} sites in proportion to the scenario's N_s: "
                 + ", ".join(str(int(v)) for v in sizes))
    return OtdProblem(kind="mog", sites=sites, k=k, scale=bound, sigma2=sigma2_scaled, notes=tuple(notes))


def corpus_problem(corpus: Corpus, k: int, fractions: np.ndarray, rng: np.random.Generator,
                   estimator: str | None = None) -> OtdProblem:
    """Shuffle the documents (``rng``) and split them over sites in proportion to ``fractions``
    (e.g. the scenario's N_s / N). ``estimator`` defaults to "first" for text, "all" for counts."""
    k = check_rank(k, corpus.dim, dim_name="D (vocabulary size)")
    fractions = np.asarray(fractions, dtype=float)
    if corpus.n < fractions.size:
        raise InputError(f"{corpus.n} documents cannot be split over {fractions.size} sites", "file")
    estimator = estimator or ("first" if corpus.first is not None else "all")
    sizes = sizes_from_fractions(corpus.n, fractions)
    order = rng.permutation(corpus.n)
    sites = []
    start = 0
    for size in sizes:
        rows = order[start:start + size]
        start += size
        first = None if corpus.first is None else corpus.first[rows]
        sites.append(StmSite(corpus.counts[rows].tocsr(), first, estimator))
    notes = corpus.notes + (f"{corpus.n:,} documents shuffled and split over {len(sizes)} sites in proportion to the "
                            f"scenario's N_s: {', '.join(str(int(s)) for s in sizes)}",)
    return OtdProblem(kind="stm", sites=tuple(sites), k=k, vocabulary=corpus.vocabulary, notes=notes)


def upload_problem(data: np.ndarray | Corpus, k: int, scenario: Scenario, seed: int, *, sigma2: float | None = None,
                   norm_bound: float | None = None, estimator: str | None = None) -> OtdProblem:
    """Uploaded data dealt out to the scenario's sites in proportion to N_s / N, shuffled by the stream
    ``stream_rng(seed, UPLOAD_SPLIT_STREAM)``: a numeric table (N x D samples) is a MOG problem
    (:func:`mog_problem`, ``sigma2`` and ``norm_bound``), a :class:`~dpcore.data.Corpus` an STM problem
    (:func:`corpus_problem`, ``estimator``). The one step from an upload to a problem of the command line and the
    capeAGN page."""
    fractions = scenario.sizes / scenario.total_n
    rng = stream_rng(seed, UPLOAD_SPLIT_STREAM)
    if isinstance(data, Corpus):
        return corpus_problem(data, k, fractions, rng, estimator)
    return mog_problem(data, k, fractions, rng, sigma2=sigma2, norm_bound=norm_bound)
