"""``python -m dpcore otd``: capeAGN and its baselines on a synthetic model or uploaded data.

Example: ``python -m dpcore otd --model stm --d 10 --k 5 --sites 5 --ns 1000 --eps 1 --delta 0.01 --runs 10``.
``--json`` prints ``{"results": [{"algorithm", "metric", "mean", "std", "runs", "failed"}, ...], "path": ...}``.
"""

from __future__ import annotations

import argparse

from ..agn import (
    ALGORITHMS,
    DEFAULT_SIGMA2,
    METRICS,
    MODELS,
    TRUTHS,
    OtdSettings,
    SyntheticSpec,
    compare_algorithms,
    default_algorithms,
    upload_problem,
)
from ..agn.guarantees import comparison_guarantees
from ..cape.guarantee import run_guarantee_records
from ..data import parse_numeric_csv, parse_uploaded_documents, parse_vocabulary
from ..limits import (
    DEFAULT_MEMORY_BUDGET,
    MAX_COMPONENTS,
    MAX_DOC_LENGTH,
    MAX_OTD_DIM,
    MAX_OTD_SAMPLES,
    MAX_POWER_ITERATIONS,
    MAX_POWER_RESTARTS,
    MAX_PUBLISHED_PROJECTED_K,
    MAX_RUNS,
    MAX_TEXT_BYTES,
    MAX_UPLOAD_BYTES,
    MAX_VOCABULARY_BYTES,
    MAX_WORKERS,
    MEMORY_BUDGET_RANGE,
    SPLIT_RANGE,
)
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..tensor import DEFAULT_ITERATIONS, DEFAULT_RESTARTS, ESTIMATORS, M3_NOISE, PATHS
from ..tensor.power import check_power_work
from ..textio import read_file, values_text
from ..validation import InputError
from ..workers import WORKERS_ENV, worker_count
from . import print_guarantees, print_json, print_rings, say
from .options import (
    COLLUSION,
    COMPONENTS,
    DELTA,
    DOC_LENGTH,
    EPS,
    ITERATIONS,
    MEMORY_MIB,
    NORM_BOUND,
    OTD_DIM,
    RESTARTS,
    RUNS,
    SEED,
    SIGMA2,
    SITE_SIZE,
    SITES,
    SPLIT,
    WORKERS,
    algorithm_names,
)
from .table import fmt, metrics_text, table

DEFAULT_ALGORITHMS = default_algorithms()


def register(sub: argparse._SubParsersAction) -> None:  # long: one add_argument per option, in help order
    p = sub.add_parser(
        "otd",
        help="capeAGN: distributed private tensor decomposition (MOG or single topic model) and baselines",
        description="Run capeAGN and its baselines R times on a synthetic mixture of Gaussians (mog) or single "
        f"topic model (stm), or on uploaded data (--data), and report every metric ({metrics_text(METRICS)}). "
        "Sites and budgets come from --scenario or "
        "from --sites/--ns/--eps/--delta (which override the file's values when both are given).",
    )
    p.add_argument("--model", choices=MODELS, required=True, help="mog (mixture of Gaussians) or stm (single topic)")
    p.add_argument("--d", type=OTD_DIM, help=f"dimension D (vocabulary size for stm; 2 to {MAX_OTD_DIM:,}); default 10 "
                   "for synthetic data")
    p.add_argument("--k", type=COMPONENTS, default=None, help=f"number of components K (default 5, at most "
                   f"{MAX_COMPONENTS})")
    p.add_argument("--sites", type=SITES, help="number of sites S (default 5 without --scenario)")
    p.add_argument("--ns", type=SITE_SIZE, help=f"samples per site N_s (default 1000 without --scenario; S x N_s at "
                   f"most {MAX_OTD_SAMPLES:,})")
    p.add_argument("--scenario", metavar="FILE", help="scenario JSON (sites, budgets, weights, relation, calibration)")
    p.add_argument("--eps", type=EPS, help="total eps per site, split between the two stages (default 1)")
    p.add_argument("--delta", type=DELTA, help="total delta per site (default 0.01, as in the paper)")
    p.add_argument("--algorithms", nargs="+", metavar="NAME", default=list(DEFAULT_ALGORITHMS),
                   help=f"any of {', '.join(ALGORITHMS)} (default: {' '.join(DEFAULT_ALGORITHMS)})")
    p.add_argument("--runs", type=RUNS, default=10, help=f"number of runs R (default 10, as in the paper; at most "
                   f"{MAX_RUNS:,})")
    p.add_argument("--seed", type=SEED, help="seed of the model, the data and all noise (default: the scenario's)")
    p.add_argument("--path", choices=PATHS, default="auto",
                   help="third moment: dense D^3 tensors, projected (no D^3 array), or auto (dense when it fits "
                   "the memory budget)")
    p.add_argument("--memory-budget", type=MEMORY_MIB, default=DEFAULT_MEMORY_BUDGET / 2**20, metavar="MIB",
                   help=f"memory budget in MiB that decides the path (default {DEFAULT_MEMORY_BUDGET // 2**20}; "
                   f"{MEMORY_BUDGET_RANGE[0] // 2**20} to {MEMORY_BUDGET_RANGE[1] // 2**20:,})")
    p.add_argument("--split", type=SPLIT, default=0.5, help="share of eps and delta for the first stage, from "
                   f"{SPLIT_RANGE[0]:g} to {SPLIT_RANGE[1]:g} (default 0.5)")
    p.add_argument("--collusion", type=COLLUSION, metavar="C",
                   help="capeAGN with the collusion-robust design for up to C colluding sites (0 to S - 1): every "
                   "view keeps the promised eps, at a cost in accuracy; default: "
                   "the plain design, whose aggregator may learn more than promised (the guarantees say)")
    p.add_argument("--m3-noise", choices=tuple(M3_NOISE), default="published",
                   help="third-moment noise law: published (i.i.d. unique entries, the paper's; default; projected "
                   f"path up to K = {MAX_PUBLISHED_PROJECTED_K}) or symmetrized (more noise on repeated indices, "
                   "any K)")
    p.add_argument("--restarts", type=RESTARTS, default=DEFAULT_RESTARTS,
                   help=f"tensor power method restarts L (at most {MAX_POWER_RESTARTS:,})")
    p.add_argument("--iterations", type=ITERATIONS, default=DEFAULT_ITERATIONS,
                   help=f"tensor power method iterations N (at most {MAX_POWER_ITERATIONS:,})")
    p.add_argument("--sigma2", type=SIGMA2, help=f"MOG component variance sigma^2 (default {DEFAULT_SIGMA2}; "
                   "for --data: estimated from the data when omitted, which is not private)")
    p.add_argument("--doc-length", type=DOC_LENGTH, default=3,
                   help=f"STM words per synthetic document, 3 <= L <= {MAX_DOC_LENGTH}")
    p.add_argument("--estimator", choices=tuple(ESTIMATORS), help="STM moment estimator (default first; "
                   "count CSVs use all)")
    p.add_argument("--calibration", choices=CALIBRATIONS, help="Gaussian calibration (default classic, as the paper)")
    p.add_argument("--neighbouring", choices=NEIGHBOURING, help="neighbouring relation (default replace-one)")
    p.add_argument("--data", metavar="FILE", help="uploaded data: numeric CSV of samples (mog); text, one document "
                   "per line, or a .csv document-term count table (stm)")
    p.add_argument("--vocabulary", metavar="FILE", help="stm: a public vocabulary file (one word per line); it sets "
                   "D, so it does not go with --d")
    p.add_argument("--norm-bound", type=NORM_BOUND, help="mog --data: public bound on sample norms (default: the "
                   "largest norm, not private)")
    p.add_argument("--truth", choices=tuple(TRUTHS), default="ours",
                   help="synthetic ground truth: ours (default: " + TRUTHS["ours"] + ") or authors (" +
                   TRUTHS["authors"] + ")")
    p.add_argument("--workers", type=WORKERS, metavar="W",
                   help=f"worker processes for the runs (default: {WORKERS_ENV} or the CPUs, at most {MAX_WORKERS}; "
                   "any number gives the same results)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _scenario(args: argparse.Namespace) -> Scenario:
    if args.scenario:
        scenario = load_scenario(args.scenario)
        if args.sites is not None and args.sites != scenario.n_sites:
            raise InputError(f"--sites {args.sites} disagrees with the {scenario.n_sites} sites of {args.scenario}")
        changes = {key: value for key, value in (("n", args.ns), ("eps", args.eps), ("delta", args.delta))
                   if value is not None}
        if changes:
            scenario = scenario.with_sites(**changes)
    else:
        n_sites = 5 if args.sites is None else args.sites
        site_size = 1000 if args.ns is None else args.ns
        eps = 1.0 if args.eps is None else args.eps
        delta = 0.01 if args.delta is None else args.delta
        scenario = equal_sites_scenario(n_sites, site_size, eps, delta, name_prefix="site")
    extra = {key: value for key, value in (("calibration", args.calibration), ("neighbouring", args.neighbouring))
             if value is not None}
    return scenario.replace(**extra) if extra else scenario


def _upload_problem(args: argparse.Namespace, scenario: Scenario, seed: int):
    if args.vocabulary and args.d is not None:
        raise InputError("--d does not apply with --vocabulary: the vocabulary file sets D (its number of words); "
                         "drop --d, or drop --vocabulary to keep the D most frequent words")
    if args.model == "mog" and args.vocabulary:
        raise InputError("--vocabulary applies to --model stm only")
    content = read_file(args.data, MAX_UPLOAD_BYTES if args.model == "mog" else MAX_TEXT_BYTES, "data file")
    k = 5 if args.k is None else args.k
    if args.model == "mog":
        return upload_problem(parse_numeric_csv(content).values, k, scenario, seed, sigma2=args.sigma2,
                              norm_bound=args.norm_bound)
    vocabulary = (parse_vocabulary(read_file(args.vocabulary, MAX_VOCABULARY_BYTES, "vocabulary file"))
                  if args.vocabulary else None)
    if vocabulary is None and args.d is None:
        raise InputError("stm --data needs --d (vocabulary size: the D most frequent words) or --vocabulary FILE")
    corpus = parse_uploaded_documents(content, args.data, vocab_size=args.d, vocabulary=vocabulary)
    return upload_problem(corpus, k, scenario, seed, estimator=args.estimator)


def run(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    seed = scenario.seed if args.seed is None else args.seed
    algorithms, unknown = algorithm_names(args.algorithms, ALGORITHMS)
    if unknown:
        raise InputError(f"unknown algorithm(s) {', '.join(unknown)}; choose from {', '.join(ALGORITHMS)}")
    if args.data is None and args.vocabulary:
        raise InputError("--vocabulary applies to --data (uploaded documents) only")
    if args.collusion is not None and args.collusion > scenario.n_sites - 1:
        raise InputError(f"--collusion must be at most S - 1 = {scenario.n_sites - 1} (got {args.collusion})")
    settings = OtdSettings(eps_split=args.split, n_restarts=args.restarts, n_iter=args.iterations, path=args.path,
                           memory_budget=int(args.memory_budget * 2**20), m3_noise=args.m3_noise,
                           collusion=args.collusion)
    workers = worker_count(args.runs, args.workers)  # checked before anything runs
    check_power_work(5 if args.k is None else args.k, args.restarts, args.iterations)  # K x L x N, before any data
    if args.data:
        if args.truth != "ours":
            raise InputError("--truth applies to synthetic data only (uploaded data have no ground truth)")
        problem = _upload_problem(args, scenario, seed)
        result = compare_algorithms(scenario, algorithms, problem=problem, runs=args.runs, seed=seed,
                                    settings=settings, workers=workers)
    else:
        spec = SyntheticSpec(kind=args.model, dim=10 if args.d is None else args.d, k=5 if args.k is None else args.k,
                             sigma2=DEFAULT_SIGMA2 if args.sigma2 is None else args.sigma2,
                             doc_length=args.doc_length, estimator=args.estimator or "first", truth=args.truth)
        result = compare_algorithms(scenario, algorithms, spec=spec, runs=args.runs, seed=seed, settings=settings,
                                    workers=workers)
    guarantees = comparison_guarantees(result)
    if args.json:
        print_json({**result.to_dict(), "collusion": args.collusion,
                    "guarantees": run_guarantee_records(guarantees)})
        return 0
    for note in result.notes:
        say(f"note: {note}")
    p = result.problem
    print(f"{p.kind.upper()}, D = {p.dim}, K = {p.k}, {p.n_sites} sites (N_s = {values_text(p.sizes)}), "
          f"{result.runs} run(s), seed {result.seed}; {result.scenario.neighbouring} neighbours, "
          f"{result.scenario.calibration} calibration, eps split {result.settings.eps_split:g}")
    print(f"path: {result.path.path} ({result.path.reason})")
    reference = ("true components" if result.reference == "truth" else
                 "the non-private result (no ground truth: q_comp is the distance to it)")
    print(f"q_comp (ours), q_comp of unit-length components (the paper's) and weight error against {reference}")
    rows = []
    for alg in result.algorithms:
        summaries = [result.summary(alg, m) for m in METRICS]
        rows.append([ALGORITHMS[alg].title, *(fmt(v) for s in summaries for v in (s.mean, s.std)),
                     summaries[0].runs, summaries[0].failed])
    print(table(["algorithm", *(t for m in METRICS.values() for t in (m.column, "std")), "runs", "failed"], rows))
    print_rings(result.bits_per_value(), ALGORITHMS)
    print_guarantees({ALGORITHMS[name].title: gs for name, gs in guarantees.items()},
                     robust_hint=ALGORITHMS["cape"].title if "cape" in guarantees and args.collusion is None else None)
    for alg, message in result.failures.items():
        say(f"{ALGORITHMS[alg].title}: {message}")
    return 0
