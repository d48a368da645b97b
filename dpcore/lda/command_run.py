"""capeLDA's hooks of the one run command (``python -m dpcore lda``; :func:`dpcore.cli.family_command.run_family`):
its data forms - a synthetic LDA corpus, the bundled Python-docs corpus or a text file, at one or several eps (one
comparison per eps, the same documents and normals at each: docs/math/lda.md) - and how it shows a result
(:data:`VIEW`: the story line, one table per eps with the standard errors and whether each configuration was usable,
the JSON record, and the top words of an example; docs/cli.md, "lda").

Example: ``python -m dpcore lda --configuration cape conv local 1 2 --docs 20000 --eps 30 --runs 10``.
``--json`` prints ``{"results": [{"algorithm", "mean", "standard_error", "runs", "usable", "reason", "guarantee",
...}, ...], ...}``; with several ``--eps`` values one such block per value under ``"curves"``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..cape.guarantee import guarantee_records, guarantee_summary, run_guarantee_records
from ..data import load_bundled_corpus, parse_text_corpus, parse_vocabulary, top_words
from ..family import CommandJob, CommandView, Comparison
from ..family.flags import algorithm_names
from ..family.summary_table import fmt
from ..limits import MAX_GRID_POINTS, MAX_LDA_WORDS, MAX_TEXT_BYTES, MAX_VOCABULARY_BYTES
from ..scenario import Scenario, equal_sites_scenario
from ..seeding import UPLOAD_SPLIT_STREAM, stream_rng
from ..textio import read_file, values_text
from ..validation import InputError
from .command import COMMAND, DEFAULTS
from .compare import LdaComparison
from .contract import LdaRunData
from .problem import corpus_lda_problem
from .recovery import METRICS
from .table import ALGORITHMS

__all__ = ["RUN_COMMAND", "VIEW", "prepare"]

EXAMPLES = ("nonpriv", "cape")
"""The algorithms whose example topics ``--top-words`` prints (the non-private reference and capeLDA)."""


def _synthetic(args: Any) -> tuple[LdaRunData, Scenario]:
    docs = DEFAULTS["docs"] if args.docs is None else args.docs
    if docs < 3 * args.sites:
        raise InputError(f"--docs {docs:,} is too few for {args.sites} sites: each site needs at least 3 documents")
    data = LdaRunData(dim=DEFAULTS["vocab"] if args.vocab is None else args.vocab, k=args.topics, alpha0=args.alpha0,
                      alpha_shape=args.alpha_shape or "symmetric",
                      doc_length=DEFAULTS["doc_length"] if args.doc_length is None else args.doc_length,
                      eps_split=args.split)
    if docs * data.doc_length > MAX_LDA_WORDS:
        raise InputError(f"--docs x --doc-length = {docs * data.doc_length:,} words is more than the limit of "
                         f"{MAX_LDA_WORDS:,}")
    scenario = equal_sites_scenario(args.sites, docs // args.sites, args.eps[0], args.delta,
                                    calibration=args.calibration, name_prefix="site")
    extra = docs - args.sites * (docs // args.sites)
    if extra:
        scenario = scenario.with_sizes([docs // args.sites + (i < extra) for i in range(args.sites)])
    return data, scenario


def _text_corpus(args: Any):
    if args.corpus:
        for flag in ("vocab_rule", "vocabulary", "vocab"):
            if getattr(args, flag) is not None:
                raise InputError(f"--{flag.replace('_', '-')} does not apply to --corpus (it has its public "
                                 "vocabulary)")
        return load_bundled_corpus(args.corpus)
    rule = args.vocab_rule or ("file" if args.vocabulary else "frequent")
    if rule == "frequent" and args.vocab is None:
        raise InputError("--text with the 'frequent' vocabulary rule needs --vocab D (or give --vocabulary FILE or "
                         "--vocab-rule bundled)")
    vocabulary = (parse_vocabulary(read_file(args.vocabulary, MAX_VOCABULARY_BYTES, "vocabulary file"))
                  if args.vocabulary else None)
    return parse_text_corpus(read_file(args.text, MAX_TEXT_BYTES, "text file"), rule=rule, vocab_size=args.vocab,
                             vocabulary=vocabulary)


def prepare(args: Any) -> CommandJob:
    """The job of ``dpcore lda``: the configurations, the corpus (:class:`LdaRunData`: the synthetic model, or the
    documents of a text corpus dealt to the sites here), and one scenario per eps value (sorted, each once), every
    one checked before any work."""
    algorithms, unknown = algorithm_names(args.configuration, ALGORITHMS)
    if unknown or not algorithms:
        raise InputError(f"unknown --configuration {', '.join(unknown) or '(none)'}; choose from "
                         f"{', '.join(ALGORITHMS)}")
    if len(set(args.eps)) > MAX_GRID_POINTS:
        raise InputError(f"--eps takes at most {MAX_GRID_POINTS} values (got {len(set(args.eps))})")
    if args.collusion is not None and args.collusion > args.sites - 1:
        raise InputError(f"--collusion must be at most S - 1 = {args.sites - 1} (got {args.collusion})")
    if args.text or args.corpus:
        for flag in ("docs", "doc_length", "alpha_shape"):
            if getattr(args, flag) is not None:
                raise InputError(f"--{flag.replace('_', '-')} applies to synthetic corpora only")
        corpus = corpus_lda_problem(_text_corpus(args), args.topics, args.alpha0,
                                    np.full(args.sites, 1.0 / args.sites), stream_rng(args.seed, UPLOAD_SPLIT_STREAM))
        data = LdaRunData(dim=corpus.dim, k=args.topics, alpha0=args.alpha0, eps_split=args.split, corpus=corpus)
        scenario = equal_sites_scenario(args.sites, 3, args.eps[0], args.delta, calibration=args.calibration,
                                        name_prefix="site")
    else:
        data, scenario = _synthetic(args)
    scenarios = tuple(scenario.with_sites(eps=float(eps)) for eps in sorted(set(args.eps)))
    return CommandJob(scenarios=scenarios, data=data, algorithms=tuple(algorithms), runs=args.runs, seed=args.seed,
                      collusion=args.collusion, context=args)


def _detail(comparison: Comparison) -> LdaComparison:
    return comparison.detail


def _eps(comparison: Comparison) -> float:
    return float(comparison.scenario.eps[0])


def _reasons(comparisons: tuple[Comparison, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for comparison in comparisons:
        for name, reason in _detail(comparison).reasons.items():
            out.setdefault(name, reason)
    return out


def _rows(comparison: Comparison, reasons: dict[str, str]) -> list[dict[str, Any]]:
    result = _detail(comparison)
    out = []
    for name in result.algorithms:
        for metric in METRICS:
            s = result.summary(name, metric)
            usable = s.runs > 0
            out.append({"algorithm": name, "metric": metric, "mean": s.mean if usable else None,
                        "standard_error": result.standard_error(name, metric), "runs": int(s.runs),
                        "unusable": result.count(name, "unusable"),
                        "whitening_failed": result.count(name, "whitening failed"), "usable": usable,
                        "reason": None if usable else reasons.get(name),
                        "privacy": guarantee_summary(comparison.guarantees[name]),
                        "guarantees": guarantee_records(comparison.guarantees[name])})
    return out


def _record(job: CommandJob, comparisons: tuple[Comparison, ...]) -> dict[str, Any]:
    last = _detail(comparisons[-1])
    p = last.problem
    reasons = _reasons(comparisons)
    data: dict[str, Any] = {
        "reference": last.reference, "dim": p.dim, "k": p.k, "alpha0": p.alpha0, "sites": p.n_sites,
        "sizes": p.sizes.tolist(), "runs": last.runs, "seed": last.seed,
        "notes": list(dict.fromkeys(n for c in comparisons for n in c.notes)),
        "calibration": last.scenario.calibration, "delta": float(last.scenario.delta[0]),
        "eps_split": last.settings.eps_split, "collusion": last.settings.collusion}
    if len(comparisons) == 1:
        data.update(eps=_eps(comparisons[0]), results=_rows(comparisons[0], reasons),
                    guarantees=run_guarantee_records(comparisons[0].guarantees))
    else:
        data["curves"] = [{"eps": _eps(c), "results": _rows(c, reasons)} for c in comparisons]
    return data


def _header(job: CommandJob, comparisons: tuple[Comparison, ...]) -> list[str]:
    result = _detail(comparisons[-1])
    p = result.problem
    return [f"LDA: D = {p.dim}, K = {p.k}, alpha_0 = {p.alpha0:g}, {p.n_sites} sites (N_s = "
            f"{values_text(p.sizes)}), {result.runs} run(s), seed {result.seed}; "
            f"{', '.join(m.phrase() for m in METRICS.values())} against "
            f"{'the true topics' if result.reference == 'truth' else 'the non-private topics'}"]


def _table(job: CommandJob, comparison: Comparison) -> tuple[list[str], list[list[Any]]]:
    result = _detail(comparison)
    rows = []
    for name in result.algorithms:
        usable = result.usable(name)
        values = [f"{fmt(result.summary(name, m).mean)} ± {fmt(result.standard_error(name, m), 2)}" if usable
                  else "-" for m in METRICS]
        status = "yes" if usable else "UNUSABLE" if result.count(name, "unusable") else "whitening failed"
        rows.append([ALGORITHMS[name].title, *values, result.summary(name).runs, status])
    return ["algorithm", *(f"{m.words} ± se" for m in METRICS.values()), "runs", "usable"], rows


def _after(job: CommandJob, comparisons: tuple[Comparison, ...]) -> list[str]:
    """The top words of each topic of the examples at the largest eps (``--top-words`` N, a vocabulary)."""
    last = _detail(comparisons[-1])
    count, vocabulary = job.context.top_words, last.problem.vocabulary
    lines: list[str] = []
    for name in EXAMPLES if count and vocabulary else ():
        example = last.examples.get(name)
        if example is not None:
            lines.append(f"top words, {ALGORITHMS[name].title} (eps = {_eps(comparisons[-1]):g}):")
            lines += [f"  topic {i + 1}: {' '.join(w for w, _ in words)}"
                      for i, words in enumerate(top_words(example.topics, vocabulary, count))]
    return lines


VIEW = CommandView(header=_header, table=_table, record=_record, budget=lambda c: f"eps = {_eps(c):g}", after=_after,
                   robust_hint=True)
"""How ``dpcore lda`` shows a result: one table per eps with the standard error of each mean and whether the
configuration was usable, then the example topics."""

RUN_COMMAND = replace(COMMAND, prepare=prepare, view=VIEW)
"""capeLDA's command: its argument table (:data:`dpcore.lda.command.COMMAND`) with these hooks."""
