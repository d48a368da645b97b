"""``python -m dpcore otd``: capeAGN and its baselines on a synthetic model or uploaded data.

Example: ``python -m dpcore otd --model stm --d 10 --k 5 --sites 5 --ns 1000 --eps 1 --delta 0.01 --runs 10``.
``--json`` prints ``{"results": [{"algorithm", "metric", "mean", "std", "runs", "failed"}, ...], "path": ...}``.
"""

from __future__ import annotations

import argparse

from ..agn import (
    ALGORITHMS,
    DEFAULT_SIGMA2,
    FAMILY,
    METRICS,
    OtdSettings,
    SyntheticSpec,
    compare_algorithms,
    upload_problem,
)
from ..agn.guarantees import comparison_guarantees
from ..cape.guarantee import run_guarantee_records
from ..data import parse_numeric_csv, parse_uploaded_documents, parse_vocabulary
from ..limits import MAX_TEXT_BYTES, MAX_UPLOAD_BYTES, MAX_VOCABULARY_BYTES
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..tensor.power import check_power_work
from ..textio import read_file, values_text
from ..validation import InputError
from ..workers import worker_count
from . import print_guarantees, print_json, print_rings, say
from .family_command import register_family
from .options import algorithm_names
from .table import fmt, table


def register(sub: argparse._SubParsersAction) -> None:
    """``dpcore otd``, its parser built from capeAGN's argument table (``FAMILY.command``,
    :mod:`dpcore.agn.command`)."""
    register_family(sub, FAMILY, run)


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
