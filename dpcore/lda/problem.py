"""What one LDA comparison runs on (docs/math/lda.md): the corpus split over sites (:class:`LdaProblem`, from a
synthetic LDA model or a text corpus), the settings shared by every run (:class:`LdaSettings`, :class:`LdaSpec`)
and one algorithm's output (:class:`LdaResult`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..data.split import sizes_from_fractions
from ..data.text import Corpus
from ..limits import (
    MAX_DENSE_M3_DIM,
    MAX_LDA_ALPHA0,
    MAX_LDA_DOC_LENGTH,
    MAX_LDA_DOCUMENTS,
    MAX_LDA_TOPICS,
    MAX_LDA_VOCABULARY,
    MAX_LDA_WORDS,
)
from ..tensor.paths import PATHS
from ..tensor.power import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, check_iterations
from ..validation import InputError, check_choice, check_positive, check_positive_int, check_rank, check_split
from .budget import LdaDataSummary, summarize_site
from .corpus import (
    ALPHA_SHAPES,
    DEFAULT_ALPHA0,
    DEFAULT_DOC_LENGTH,
    DEFAULT_TOPIC_CONCENTRATION,
    LdaModel,
    make_lda_model,
    sample_lda_corpus,
)
from .moments import prepare_counts
from .sensitivity import Condition
from .site import LdaSite, pool_lda_sites

__all__ = ["LdaProblem", "LdaResult", "LdaSettings", "LdaSpec", "check_synthetic_size", "corpus_lda_problem",
           "synthetic_lda_problem"]


@dataclass(frozen=True, eq=False, kw_only=True)
class LdaProblem:
    """The documents of one run, split over sites, with K, alpha_0 and what results are compared to (``truth``:
    the synthetic model; None for text, where the non-private result is the reference)."""

    sites: tuple[LdaSite, ...]
    k: int
    alpha0: float
    truth: LdaModel | None = None
    vocabulary: tuple[str, ...] | None = None
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

    @cached_property
    def pooled(self) -> LdaSite:
        """Every document at one curator (the configurations, the pooled and non-private baselines)."""
        return pool_lda_sites(self.sites)

    @cached_property
    def summary(self) -> LdaDataSummary:
        """M2_hat of the pooled corpus, its K+1 largest eigenvalues, Delta2, Delta3 (the configurations' conditions)."""
        return summarize_site(self.pooled, self.k)

    def head(self, sizes: Sequence[int]) -> LdaProblem:
        """The problem with site s holding its first sizes[s] documents (nested samples along an N_s sweep)."""
        sites = tuple(site.head(int(n)) for site, n in zip(self.sites, sizes, strict=True))
        return LdaProblem(sites=sites, k=self.k, alpha0=self.alpha0, truth=self.truth, vocabulary=self.vocabulary,
                          notes=self.notes)

    def first_sites(self, n_sites: int) -> LdaProblem:
        """The problem of the first ``n_sites`` sites (nested sites along an S sweep)."""
        return LdaProblem(sites=self.sites[:n_sites], k=self.k, alpha0=self.alpha0, truth=self.truth,
                          vocabulary=self.vocabulary, notes=self.notes)


@dataclass(frozen=True, kw_only=True)
class LdaSettings:
    """Algorithm settings shared by every run. ``eps_split`` is the share a of every budget spent on M2 by capeLDA and
    its baselines (the configurations split over their own edges, equally); ``path`` the third-moment path of the
    two-stage flows (dense only for D <= :data:`~dpcore.limits.MAX_DENSE_M3_DIM`); ``local_site`` None means the
    largest site; ``collusion`` c (None: the plain design) makes capeLDA collusion-robust in both stages."""

    eps_split: float = 0.5
    n_restarts: int = DEFAULT_RESTARTS
    n_iter: int = DEFAULT_ITERATIONS
    path: str = "auto"
    local_site: int | None = None
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION
    collusion: int | None = None

    def __post_init__(self) -> None:
        check_split(self.eps_split, "eps split")
        check_iterations(self.n_restarts, self.n_iter)
        check_choice(self.path, "path", PATHS)
        check_positive(self.topic_concentration, "topic concentration")
        if self.local_site is not None:
            check_positive_int(self.local_site, "local site", minimum=0)
        if self.collusion is not None:
            check_positive_int(self.collusion, "collusion", minimum=0)

    def m3_path(self, dim: int) -> str:
        """The third-moment path at vocabulary size D: "dense" when forced or (auto) D <= MAX_DENSE_M3_DIM."""
        if self.path == "dense" and dim > MAX_DENSE_M3_DIM:
            raise InputError(f"the dense LDA third moment is for D <= {MAX_DENSE_M3_DIM} (got D = {dim}); use the "
                             "projected path (auto or projected)", "path")
        if self.path == "auto":
            return "dense" if dim <= MAX_DENSE_M3_DIM else "projected"
        return self.path


@dataclass(frozen=True, kw_only=True)
class LdaSpec:
    """A synthetic LDA model: vocabulary size D, topics K, Dirichlet concentration alpha_0, the shape of alpha
    (:data:`~dpcore.lda.corpus.ALPHA_SHAPES`), words per document and the topics' Dirichlet concentration.
    Validated on construction (every bound a named limit of :mod:`dpcore.limits`)."""

    dim: int = 100
    k: int = 5
    alpha0: float = DEFAULT_ALPHA0
    alpha_shape: str = "symmetric"
    doc_length: int = DEFAULT_DOC_LENGTH
    topic_concentration: float = DEFAULT_TOPIC_CONCENTRATION

    def __post_init__(self) -> None:
        dim = check_positive_int(self.dim, "vocabulary size D", minimum=3)
        if dim > MAX_LDA_VOCABULARY:
            raise InputError(f"vocabulary size D must be at most {MAX_LDA_VOCABULARY:,} (got {dim:,})", "D")
        k = check_rank(self.k, dim - 1, name="topics K", dim_name="D - 1")
        if k > MAX_LDA_TOPICS:
            raise InputError(f"topics K must be at most {MAX_LDA_TOPICS} (got {k})", "K")
        check_alpha0(self.alpha0)
        check_choice(self.alpha_shape, "alpha shape", tuple(ALPHA_SHAPES))
        length = check_positive_int(self.doc_length, "words per document", minimum=3)
        if length > MAX_LDA_DOC_LENGTH:
            raise InputError(f"words per document must be at most {MAX_LDA_DOC_LENGTH:,} (got {length:,})",
                             "doc_length")
        check_positive(self.topic_concentration, "topic concentration")

    def model(self, rng: np.random.Generator) -> LdaModel:
        return make_lda_model(self.dim, self.k, rng, alpha0=self.alpha0, alpha_shape=self.alpha_shape,
                              topic_concentration=self.topic_concentration)

    def describe(self) -> str:
        return (f"synthetic LDA: D = {self.dim}, K = {self.k}, alpha_0 = {self.alpha0:g} ({self.alpha_shape}), "
                f"{self.doc_length} words per document")


@dataclass(frozen=True, eq=False, kw_only=True)
class LdaResult:
    """One algorithm's output in one run: topics (K x D probability vectors) and alpha, or ``usable`` False with the
    ``reason`` (a configuration whose condition failed on the corpus). Its privacy is the entry's computed guarantee
    (:meth:`dpcore.family.Algorithm.guarantees_of`)."""

    algorithm: str
    usable: bool
    topics: np.ndarray | None
    alpha: np.ndarray | None
    reason: str | None = None
    conditions: tuple[Condition, ...] = ()
    notes: tuple[str, ...] = field(default=())


def check_synthetic_size(spec: LdaSpec, sizes: Sequence[int]) -> None:
    """The boundary check of a synthetic corpus over sites: every site at least 3 documents, at most
    :data:`~dpcore.limits.MAX_LDA_DOCUMENTS` documents and :data:`~dpcore.limits.MAX_LDA_WORDS` words in all."""
    sizes = [int(n) for n in sizes]
    if min(sizes) < 3:
        raise InputError(f"every site needs at least 3 documents for the LDA moments (N_s = {sizes})", "documents")
    total = sum(sizes)
    if total > MAX_LDA_DOCUMENTS or total * spec.doc_length > MAX_LDA_WORDS:
        raise InputError(f"{total:,} documents of {spec.doc_length} words are more than one synthetic corpus may hold "
                         f"(at most {MAX_LDA_DOCUMENTS:,} documents and {MAX_LDA_WORDS:,} words); use fewer sites, "
                         "fewer documents per site or shorter documents", "documents")


def synthetic_lda_problem(model: LdaModel, sizes: Sequence[int], rng: np.random.Generator, *,
                          doc_length: int = DEFAULT_DOC_LENGTH) -> LdaProblem:
    """Fresh documents of ``model`` for sites of the given sizes (drawn site by site, each N_s >= 3)."""
    sites = []
    for n in sizes:
        counts = sample_lda_corpus(model, check_positive_int(int(n), "documents per site N_s", minimum=3), rng,
                                   doc_length=doc_length)
        sites.append(LdaSite(prepare_counts(counts), model.alpha0))
    return LdaProblem(sites=tuple(sites), k=model.k, alpha0=model.alpha0, truth=model)


def check_alpha0(alpha0: object) -> float:
    """The Dirichlet concentration alpha_0, checked: above 0 and at most MAX_LDA_ALPHA0, for a synthetic corpus and a
    real one alike (beyond it the moments' coefficients overflow: (alpha_0 + 2)(alpha_0 + 1) at 1e200)."""
    alpha0 = check_positive(alpha0, "alpha_0")
    if alpha0 > MAX_LDA_ALPHA0:
        raise InputError(f"alpha_0 must be at most {MAX_LDA_ALPHA0:g} (got {alpha0:g})", "alpha0")
    return alpha0


def corpus_lda_problem(corpus: Corpus, k: int, alpha0: float, fractions: np.ndarray,
                       rng: np.random.Generator) -> LdaProblem:
    """Shuffle the documents (``rng``) and split them over sites in proportion to ``fractions`` (each site >= 3
    documents); K <= D - 1 and D <= MAX_LDA_VOCABULARY (each site keeps a D x D second moment)."""
    if corpus.dim > MAX_LDA_VOCABULARY:
        raise InputError(f"the vocabulary has {corpus.dim:,} words; topic models take at most {MAX_LDA_VOCABULARY:,} "
                         "(every site keeps a D x D second moment): give a shorter word list or a smaller D", "D")
    k = check_rank(k, corpus.dim - 1, name="topics K", dim_name="D - 1 (vocabulary size minus one)")
    alpha0 = check_alpha0(alpha0)
    fractions = np.asarray(fractions, dtype=float)
    if corpus.n < 3 * fractions.size:
        raise InputError(f"{corpus.n} documents cannot be split over {fractions.size} sites with at least 3 each",
                         "file")
    sizes = sizes_from_fractions(corpus.n, fractions)
    if np.any(sizes < 3):
        raise InputError(f"the split gives a site fewer than 3 documents (sizes {sizes.tolist()}); the LDA moments "
                         "need at least 3 per site", "file")
    order = rng.permutation(corpus.n)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    sites = tuple(LdaSite(prepare_counts(corpus.counts[order[a:b]]), alpha0)
                  for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    notes = corpus.notes + (f"{corpus.n:,} documents shuffled and split over {len(sizes)} sites in proportion to the "
                            f"scenario's N_s: {', '.join(str(int(s)) for s in sizes)}",)
    return LdaProblem(sites=sites, k=k, alpha0=alpha0, vocabulary=corpus.vocabulary, notes=notes)
