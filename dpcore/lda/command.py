"""The argument table of ``dpcore lda`` (:class:`dpcore.family.FamilyCommand`, ``Family.command``): capeLDA's own
flags as data; the command line builds the parser from them (:mod:`dpcore.cli.family_command`)."""

from __future__ import annotations

from ..data import BUNDLED_CORPORA, VOCABULARY_RULES
from ..family import FamilyCommand, Flag
from ..limits import (
    DELTA_RANGE,
    EPS_RANGE,
    MAX_LDA_ALPHA0,
    MAX_LDA_DOC_LENGTH,
    MAX_LDA_DOCUMENTS,
    MAX_LDA_TOP_WORDS,
    MAX_LDA_TOPICS,
    MAX_LDA_VOCABULARY,
    MAX_RUNS,
    MAX_SEED,
    MAX_SITES,
    SPLIT_RANGE,
)
from ..privacy import CALIBRATIONS
from .corpus import ALPHA_SHAPES
from .table import ALGORITHMS, default_algorithms

__all__ = ["COMMAND", "DEFAULTS"]

DEFAULTS = {"docs": 20_000, "sites": 5, "vocab": 100, "topics": 5, "alpha0": 1.0, "doc_length": 50, "eps": [30.0],
            "delta": 1e-6, "runs": 10, "seed": 0}
"""The command's defaults (the synthetic corpus, the sites, the budget, runs and seed)."""
_DEFAULT_NAMES = default_algorithms()

COMMAND = FamilyCommand(
    help="private topic models: paper 004's LDA configurations 1-4, capeLDA and its baselines",
    description="Runs the chosen LDA algorithms R times on a synthetic LDA corpus (K topics over D words, Dirichlet "
    "concentration alpha_0), the bundled Python-docs corpus (--corpus) or a text file (--text, one document per "
    "line), split over S equal sites, and reports per algorithm the mean of every metric ({metrics}) with its "
    "standard error, or why it is unusable. Configurations 1-4 run on the pooled documents at one curator; 2, 3 and 4 "
    "are not DP as published.",
    arguments=(
        Flag(name="--configuration", nargs="+", metavar="NAME", default=_DEFAULT_NAMES,
             help=f"one or more of {', '.join(ALGORITHMS)} (1-4: paper 004's configurations, 2ptr: configuration 2 "
             f"by propose-test-release, cape: capeLDA; default: {' '.join(_DEFAULT_NAMES)})"),
        Flag(name="--text", metavar="PATH", exclusive="data", help="text file, one document per line (stop words "
             "removed)"),
        Flag(name="--corpus", choices=tuple(BUNDLED_CORPORA), exclusive="data", help="a bundled text corpus"),
        Flag(name="--docs", integer=(3, MAX_LDA_DOCUMENTS),
             help=f"synthetic documents in all (default {DEFAULTS['docs']:,}; 3 to {MAX_LDA_DOCUMENTS:,})"),
        Flag(name="--sites", integer=(1, MAX_SITES), default=DEFAULTS["sites"],
             help=f"equal sites S sharing the documents (default {DEFAULTS['sites']}; at most {MAX_SITES})"),
        Flag(name="--vocab", integer=(3, MAX_LDA_VOCABULARY), help=f"synthetic vocabulary size D (default "
             f"{DEFAULTS['vocab']}; 3 to {MAX_LDA_VOCABULARY:,}), or with --text and --vocab-rule frequent the D most "
             "frequent words"),
        Flag(name="--topics", integer=(1, MAX_LDA_TOPICS), default=DEFAULTS["topics"],
             help=f"topics K (default {DEFAULTS['topics']}; 1 to {MAX_LDA_TOPICS}, at most D - 1)"),
        Flag(name="--alpha0", real=(0.0, MAX_LDA_ALPHA0), low_open=True, default=DEFAULTS["alpha0"],
             help=f"Dirichlet concentration alpha_0 (default 1; above 0, at most {MAX_LDA_ALPHA0:g})"),
        Flag(name="--alpha-shape", choices=tuple(ALPHA_SHAPES), help="synthetic alpha: symmetric (default) or drawn "
             "from a Dirichlet (distinct whitened eigenvalues)"),
        Flag(name="--doc-length", integer=(3, MAX_LDA_DOC_LENGTH), help=f"words per synthetic document (default "
             f"{DEFAULTS['doc_length']}; 3 to {MAX_LDA_DOC_LENGTH:,})"),
        Flag(name="--eps", real=EPS_RANGE, nargs="+", default=tuple(DEFAULTS["eps"]),
             help="eps of every site; several values give a curve (default 30)"),
        Flag(name="--delta", real=DELTA_RANGE, high_open=True, default=DEFAULTS["delta"],
             help=f"delta of every site (default {DEFAULTS['delta']:g})"),
        Flag(name="--calibration", choices=CALIBRATIONS, default="analytic", help="Gaussian calibration (default "
             "analytic: a valid guarantee at every eps)"),
        Flag(name="--split", real=SPLIT_RANGE, default=0.5, help="share of every budget spent on M2, from "
             f"{SPLIT_RANGE[0]:g} to {SPLIT_RANGE[1]:g} (default 0.5)"),
        Flag(name="--collusion", integer=(0, MAX_SITES - 1), metavar="C",
             help="capeLDA with the collusion-robust design for up to C colluding sites (0 to S - 1): every view keeps "
             "the promised eps, at a cost in accuracy; default: the plain design, whose aggregator may learn more "
             "than promised (the guarantees say)"),
        Flag(name="--runs", integer=(1, MAX_RUNS), default=DEFAULTS["runs"],
             help=f"runs R (default {DEFAULTS['runs']}; at most {MAX_RUNS:,})"),
        Flag(name="--seed", integer=(0, MAX_SEED), default=DEFAULTS["seed"],
             help="seed of the model, the documents and all noise (default 0)"),
        Flag(name="--vocab-rule", choices=tuple(VOCABULARY_RULES), help="--text vocabulary: " + "; ".join(
            f"{k}: {v}" for k, v in VOCABULARY_RULES.items()) + " (default: file with --vocabulary, else frequent)"),
        Flag(name="--vocabulary", metavar="FILE", help="--text: a public vocabulary file (one word per line)"),
        Flag(name="--top-words", integer=(0, MAX_LDA_TOP_WORDS), default=0, metavar="N",
             help="text corpora: print the N most probable words of each topic of the non-private and capeLDA results "
             f"(at most {MAX_LDA_TOP_WORDS})"),
        Flag(name="--json", action="store_true", help="print JSON instead of a table"),
    ),
)
"""In the order of the help."""
