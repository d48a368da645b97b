"""capeAGN's hooks of the one run command (``python -m dpcore otd``; :func:`dpcore.cli.family_command.run_family`):
its data forms - a synthetic model, or uploaded samples or documents (with a vocabulary file), the sites from
``--sites``/``--ns``/``--eps``/``--delta`` or a scenario file - and how it shows a result (:data:`VIEW`: the story
lines with the third-moment path, the table, the JSON record).

Example: ``python -m dpcore otd --model stm --d 10 --k 5 --sites 5 --ns 1000 --eps 1 --delta 0.01 --runs 10``.
``--json`` prints ``{"results": [{"algorithm", "metric", "mean", "std", "runs", "failed"}, ...], "path": ...}``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..cape.guarantee import run_guarantee_records
from ..data import parse_numeric_csv, parse_uploaded_documents, parse_vocabulary
from ..family import CommandJob, CommandView, Comparison
from ..family.flags import algorithm_names
from ..family.summary_table import fmt
from ..limits import MAX_TEXT_BYTES, MAX_UPLOAD_BYTES, MAX_VOCABULARY_BYTES
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..tensor.power import check_power_work
from ..textio import read_file, values_text
from ..validation import InputError
from ..workers import worker_count
from .command import COMMAND
from .compare import OtdComparison
from .contract import OtdRunData, OtdRunUpload
from .evaluation import METRICS
from .models import DEFAULT_SIGMA2
from .table import ALGORITHMS

__all__ = ["RUN_COMMAND", "VIEW", "prepare"]


def _scenario(args: Any) -> Scenario:
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


def _upload(args: Any) -> tuple[OtdRunUpload, int]:
    """The uploaded data and their dimension D."""
    content = read_file(args.data, MAX_UPLOAD_BYTES if args.model == "mog" else MAX_TEXT_BYTES, "data file")
    if args.model == "mog":
        values = parse_numeric_csv(content).values
        return OtdRunUpload(values=values, sigma2=args.sigma2, norm_bound=args.norm_bound), int(values.shape[1])
    vocabulary = (parse_vocabulary(read_file(args.vocabulary, MAX_VOCABULARY_BYTES, "vocabulary file"))
                  if args.vocabulary else None)
    if vocabulary is None and args.d is None:
        raise InputError("stm --data needs --d (vocabulary size: the D most frequent words) or --vocabulary FILE")
    corpus = parse_uploaded_documents(content, args.data, vocab_size=args.d, vocabulary=vocabulary)
    return OtdRunUpload(values=corpus, estimator=args.estimator), len(corpus.vocabulary)


def prepare(args: Any) -> CommandJob:
    """The job of ``dpcore otd``: the scenario, the algorithms, the data settings (:class:`OtdRunData`: the model,
    or the uploaded data read here) and the workers, every one checked before any work."""
    scenario = _scenario(args)
    seed = scenario.seed if args.seed is None else args.seed
    names, unknown = algorithm_names(args.algorithms, ALGORITHMS)
    if unknown:
        raise InputError(f"unknown algorithm(s) {', '.join(unknown)}; choose from {', '.join(ALGORITHMS)}")
    if args.data is None and args.vocabulary:
        raise InputError("--vocabulary applies to --data (uploaded documents) only")
    if args.collusion is not None and args.collusion > scenario.n_sites - 1:
        raise InputError(f"--collusion must be at most S - 1 = {scenario.n_sites - 1} (got {args.collusion})")
    if args.vocabulary and args.d is not None:
        raise InputError("--d does not apply with --vocabulary: the vocabulary file sets D (its number of words); "
                         "drop --d, or drop --vocabulary to keep the D most frequent words")
    if args.model == "mog" and args.vocabulary:
        raise InputError("--vocabulary applies to --model stm only")
    if args.data and args.truth != "ours":
        raise InputError("--truth applies to synthetic data only (uploaded data have no ground truth)")
    k = 5 if args.k is None else args.k
    workers = worker_count(args.runs, args.workers)  # checked before anything runs
    check_power_work(k, args.restarts, args.iterations)  # K x L x N, before any data
    upload, dim = _upload(args) if args.data else (None, 10 if args.d is None else args.d)
    # D of uploaded data is the upload's (known once it is read): K is checked against it, never against a default
    data = OtdRunData(model=args.model, dim=dim, k=k,
                      sigma2=DEFAULT_SIGMA2 if args.sigma2 is None else args.sigma2, doc_length=args.doc_length,
                      estimator=args.estimator or "first", truth=args.truth, eps_split=args.split,
                      n_restarts=args.restarts, n_iter=args.iterations, path=args.path, m3_noise=args.m3_noise,
                      memory_budget=int(args.memory_budget * 2**20), upload=upload)
    return CommandJob(scenarios=(scenario,), data=data, algorithms=tuple(names), runs=args.runs, seed=seed,
                      collusion=args.collusion, workers=workers)


def _detail(comparison: Comparison) -> OtdComparison:
    return comparison.detail


def _record(job: CommandJob, comparisons: tuple[Comparison, ...]) -> dict[str, Any]:
    comparison = comparisons[0]
    return {**_detail(comparison).to_dict(), "collusion": job.collusion,
            "guarantees": run_guarantee_records(comparison.guarantees)}


def _header(job: CommandJob, comparisons: tuple[Comparison, ...]) -> list[str]:
    result = _detail(comparisons[0])
    p = result.problem
    reference = ("true components" if result.reference == "truth" else
                 "the non-private result (no ground truth: q_comp is the distance to it)")
    return [f"{p.kind.upper()}, D = {p.dim}, K = {p.k}, {p.n_sites} sites (N_s = {values_text(p.sizes)}), "
            f"{result.runs} run(s), seed {result.seed}; {result.scenario.neighbouring} neighbours, "
            f"{result.scenario.calibration} calibration, eps split {result.settings.eps_split:g}",
            f"path: {result.path.path} ({result.path.reason})",
            f"q_comp (ours), q_comp of unit-length components (the paper's) and weight error against {reference}"]


def _table(job: CommandJob, comparison: Comparison) -> tuple[list[str], list[list[Any]]]:
    rows = []
    for name in comparison.algorithms:
        summaries = [comparison.summary(name, m) for m in METRICS]
        rows.append([ALGORITHMS[name].title, *(fmt(v) for s in summaries for v in (s.mean, s.std)),
                     summaries[0].runs, summaries[0].failed])
    return ["algorithm", *(t for m in METRICS.values() for t in (m.column, "std")), "runs", "failed"], rows


VIEW = CommandView(header=_header, table=_table, record=_record, robust_hint=True)
"""How ``dpcore otd`` shows a result: one column for each metric's mean and one for its std; the privacy lines say
when ``--collusion`` would make capeAGN's aggregator view certified."""

RUN_COMMAND = replace(COMMAND, prepare=prepare, view=VIEW)
"""capeAGN's command: its argument table (:data:`dpcore.agn.command.COMMAND`) with these hooks."""
