"""``python -m dpcore otd``: capeAGN and its baselines on a synthetic model or uploaded data.

Example: ``python -m dpcore otd --model stm --d 10 --k 5 --sites 5 --ns 1000 --eps 1 --delta 0.01 --runs 10``.
``--json`` prints ``{"results": [{"algorithm", "metric", "mean", "std", "runs", "failed"}, ...], "path": ...}``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..data import parse_count_csv, parse_documents, parse_numeric_csv, parse_vocabulary
from ..limits import DEFAULT_MEMORY_BUDGET, MAX_SITES, MAX_UPLOAD_BYTES
from ..otd import (
    ALGORITHMS,
    DEFAULT_ITERATIONS,
    DEFAULT_RESTARTS,
    DEFAULT_SIGMA2,
    ESTIMATORS,
    M3_NOISE,
    MODELS,
    PATHS,
    OtdSettings,
    SyntheticSpec,
    compare_algorithms,
    corpus_problem,
    default_algorithms,
    mog_problem,
)
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..validation import InputError, check_delta, check_epsilon, check_positive_int
from . import print_json
from .table import fmt, table

DEFAULT_ALGORITHMS = default_algorithms()


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "otd",
        help="capeAGN: distributed private tensor decomposition (MOG or single topic model) and baselines",
        description="Run capeAGN and its baselines R times on a synthetic mixture of Gaussians (mog) or single "
        "topic model (stm), or on uploaded data (--data), and report q_comp (mean distance of each recovered "
        "component to the nearest true one) and the weight error. Sites and budgets come from --scenario or "
        "from --sites/--ns/--eps/--delta (which override the file's values when both are given).",
    )
    p.add_argument("--model", choices=MODELS, required=True, help="mog (mixture of Gaussians) or stm (single topic)")
    p.add_argument("--d", type=int, help="dimension D (vocabulary size for stm); default 10 for synthetic data")
    p.add_argument("--k", type=int, default=None, help="number of components K (default 5)")
    p.add_argument("--sites", type=int, help="number of sites S (default 5 without --scenario)")
    p.add_argument("--ns", type=int, help="samples per site N_s (default 1000 without --scenario)")
    p.add_argument("--scenario", metavar="FILE", help="scenario JSON (sites, budgets, weights, relation, calibration)")
    p.add_argument("--eps", type=float, help="total eps per site, split between the two stages (default 1)")
    p.add_argument("--delta", type=float, help="total delta per site (default 0.01, as in the paper)")
    p.add_argument("--algorithms", nargs="+", metavar="NAME", default=list(DEFAULT_ALGORITHMS),
                   help=f"any of {', '.join(ALGORITHMS)} (default: {' '.join(DEFAULT_ALGORITHMS)})")
    p.add_argument("--runs", type=int, default=10, help="number of runs R (default 10, as in the paper)")
    p.add_argument("--seed", type=int, help="seed of the model, the data and all noise (default: the scenario's)")
    p.add_argument("--path", choices=PATHS, default="auto",
                   help="third moment: dense D^3 tensors, projected (no D^3 array), or auto (dense when it fits "
                   "the memory budget)")
    p.add_argument("--memory-budget", type=float, default=DEFAULT_MEMORY_BUDGET / 2**20, metavar="MIB",
                   help=f"memory budget in MiB that decides the path (default {DEFAULT_MEMORY_BUDGET // 2**20})")
    p.add_argument("--split", type=float, default=0.5, help="share of eps and delta for the first stage (default 0.5)")
    p.add_argument("--m3-noise", choices=tuple(M3_NOISE), default="symmetrized",
                   help="third-moment noise law: symmetrized (both paths) or published (dense only)")
    p.add_argument("--restarts", type=int, default=DEFAULT_RESTARTS, help="tensor power method restarts L")
    p.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS, help="tensor power method iterations N")
    p.add_argument("--sigma2", type=float, help=f"MOG component variance sigma^2 (default {DEFAULT_SIGMA2}; "
                   "for --data: estimated from the data when omitted, which is not private)")
    p.add_argument("--doc-length", type=int, default=3, help="STM words per synthetic document L >= 3")
    p.add_argument("--estimator", choices=tuple(ESTIMATORS), help="STM moment estimator (default first; "
                   "count CSVs use all)")
    p.add_argument("--calibration", choices=CALIBRATIONS, help="Gaussian calibration (default classic, as the paper)")
    p.add_argument("--neighbouring", choices=NEIGHBOURING, help="neighbouring relation (default replace-one)")
    p.add_argument("--data", metavar="FILE", help="uploaded data: numeric CSV of samples (mog); text, one document "
                   "per line, or a .csv document-term count table (stm)")
    p.add_argument("--vocabulary", metavar="FILE", help="stm: a public vocabulary file (one word per line)")
    p.add_argument("--norm-bound", type=float, help="mog --data: public bound on sample norms (default: the largest "
                   "norm, not private)")
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
        n_sites = check_positive_int(5 if args.sites is None else args.sites, "--sites")
        if n_sites > MAX_SITES:
            raise InputError(f"--sites must be at most {MAX_SITES} (got {n_sites})")
        site_size = check_positive_int(1000 if args.ns is None else args.ns, "--ns")
        eps = check_epsilon(1.0 if args.eps is None else args.eps, "--eps")
        delta = check_delta(0.01 if args.delta is None else args.delta, "--delta")
        scenario = equal_sites_scenario(n_sites, site_size, eps, delta, name_prefix="site")
    extra = {key: value for key, value in (("calibration", args.calibration), ("neighbouring", args.neighbouring))
             if value is not None}
    return scenario.replace(**extra) if extra else scenario


def _read(path: str) -> bytes:
    file = Path(path)
    size = file.stat().st_size
    if size > MAX_UPLOAD_BYTES:
        raise InputError(f"{path} is {size / 2**20:.1f} MB, more than the limit of {MAX_UPLOAD_BYTES // 2**20} MB")
    return file.read_bytes()


def _upload_problem(args: argparse.Namespace, scenario: Scenario, seed: int):
    content = _read(args.data)
    fractions = scenario.sizes / scenario.total_n
    rng = np.random.default_rng([seed, 0x5B117])
    k = 5 if args.k is None else args.k
    if args.model == "mog":
        table_ = parse_numeric_csv(content)
        return mog_problem(table_.values, k, fractions, rng, sigma2=args.sigma2, norm_bound=args.norm_bound)
    vocabulary = parse_vocabulary(_read(args.vocabulary)) if args.vocabulary else None
    if vocabulary is None and args.d is None:
        raise InputError("stm --data needs --d (vocabulary size: the D most frequent words) or --vocabulary FILE")
    if args.data.lower().endswith((".csv", ".tsv")):
        corpus = parse_count_csv(content, vocab_size=args.d if vocabulary is None else None, vocabulary=vocabulary)
    else:
        corpus = parse_documents(content, vocab_size=args.d, vocabulary=vocabulary)
    return corpus_problem(corpus, k, fractions, rng, args.estimator)


def run(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    seed = scenario.seed if args.seed is None else args.seed
    algorithms = [name for item in args.algorithms for name in item.split(",") if name]
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown:
        raise InputError(f"unknown algorithm(s) {', '.join(unknown)}; choose from {', '.join(ALGORITHMS)}")
    if args.memory_budget <= 0:
        raise InputError(f"--memory-budget must be > 0 MiB (got {args.memory_budget:g})")
    settings = OtdSettings(eps_split=args.split, n_restarts=args.restarts, n_iter=args.iterations, path=args.path,
                           memory_budget=int(args.memory_budget * 2**20), m3_noise=args.m3_noise)
    if args.data:
        problem = _upload_problem(args, scenario, seed)
        result = compare_algorithms(scenario, algorithms, problem=problem, runs=args.runs, seed=seed,
                                    settings=settings)
    else:
        spec = SyntheticSpec(kind=args.model, dim=10 if args.d is None else args.d, k=5 if args.k is None else args.k,
                             sigma2=DEFAULT_SIGMA2 if args.sigma2 is None else args.sigma2,
                             doc_length=args.doc_length, estimator=args.estimator or "first")
        result = compare_algorithms(scenario, algorithms, spec=spec, runs=args.runs, seed=seed, settings=settings)
    if args.json:
        print_json(result.to_dict())
        return 0
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    p = result.problem
    print(f"{p.kind.upper()}, D = {p.dim}, K = {p.k}, {p.n_sites} sites (N_s = {', '.join(map(str, p.sizes))}), "
          f"{result.runs} run(s), seed {result.seed}; {result.scenario.neighbouring} neighbours, "
          f"{result.scenario.calibration} calibration, eps split {result.settings.eps_split:g}")
    print(f"path: {result.path.path} ({result.path.reason})")
    reference = ("true components" if result.reference == "truth" else
                 "the non-private result (no ground truth: q_comp is the distance to it)")
    print(f"q_comp and weight error against {reference}")
    rows = []
    for alg in result.algorithms:
        q, w = result.summary(alg, "q_comp"), result.summary(alg, "weight_error")
        rows.append([ALGORITHMS[alg].title, fmt(q.mean), fmt(q.std), fmt(w.mean), fmt(w.std), q.runs, q.failed])
    print(table(["algorithm", "q_comp", "std", "weight error", "std", "runs", "failed"], rows))
    for alg, message in result.failures.items():
        print(f"{ALGORITHMS[alg].title}: {message}", file=sys.stderr)
    return 0
