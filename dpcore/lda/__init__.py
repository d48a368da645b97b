"""Differentially private LDA by the method of moments (paper 004) and its distributed CAPE version, capeLDA
(docs/math/lda.md).

* :mod:`.corpus` - synthetic LDA corpora and the population moments;
* :mod:`.moments` - the unbiased estimators M1, M2, M3 from word counts (M3 projected, no D^3 array);
* :mod:`.site` - one site's documents and the moments it releases (the interface of :mod:`dpcore.tensor.release`);
* :mod:`.recovery` - whitening, the robust tensor power method, topics and alpha, the topic error;
* :mod:`.sensitivity` - global and local L2 sensitivities of the data-flow edges, with explicit constants;
* :mod:`.budget`, :mod:`.placements`, :mod:`.ptr`, :mod:`.configurations` - paper 004's four noise configurations,
  their conditions and budgets, and propose-test-release for configuration 2;
* :mod:`.online` - the online tensor power method (paper 001, Alg. 2) for the LDA moments;
* :mod:`.problem`, :mod:`.algorithm`, :mod:`.algorithms`, :mod:`.table`, :mod:`.compare` - the algorithm table
  (capeLDA, conventional, pooled, local, non-private, configurations 1-4, random) and comparisons over runs.

Imports the bottom layer, privacy, data, scenario, cape and the tensor toolkit (:mod:`dpcore.tensor`: whitening,
power method, message flows); never a sibling family.
"""

from .compare import LdaComparison, LdaRun, compare_lda
from .configurations import CONFIGURATIONS, EDGES, PRIVACY, ConfigurationResult, run_configuration, summarize_data
from .corpus import ALPHA_SHAPES, ISSUE_CORPUS, LdaModel, make_lda_model, sample_lda_corpus
from .family import FAMILY
from .front import capelda
from .problem import (
    LdaProblem,
    LdaResult,
    LdaSettings,
    LdaSpec,
    check_synthetic_size,
    corpus_lda_problem,
    synthetic_lda_problem,
)
from .recovery import METRICS, LdaFit, fit_lda, match_topics, topic_error
from .site import LdaSite, pool_lda_sites
from .table import ALGORITHMS, algorithm, check_algorithms, configuration_names, default_algorithms, run_algorithm

__all__ = [
    "capelda",
    "ALGORITHMS",
    "ALPHA_SHAPES",
    "CONFIGURATIONS",
    "EDGES",
    "FAMILY",
    "ISSUE_CORPUS",
    "METRICS",
    "PRIVACY",
    "ConfigurationResult",
    "LdaComparison",
    "LdaFit",
    "LdaModel",
    "LdaProblem",
    "LdaResult",
    "LdaRun",
    "LdaSettings",
    "LdaSite",
    "LdaSpec",
    "algorithm",
    "check_algorithms",
    "check_synthetic_size",
    "compare_lda",
    "configuration_names",
    "corpus_lda_problem",
    "default_algorithms",
    "fit_lda",
    "make_lda_model",
    "match_topics",
    "pool_lda_sites",
    "run_algorithm",
    "run_configuration",
    "sample_lda_corpus",
    "summarize_data",
    "synthetic_lda_problem",
    "topic_error",
]
