"""``python -m dpcore lda``: private topic models - paper 004's four configurations, capeLDA and its baselines - on a
synthetic LDA corpus, the bundled Python-docs corpus or a text file (docs/cli.md, "lda"; docs/math/lda.md).

Example: ``python -m dpcore lda --configuration cape conv local 1 2 --docs 20000 --eps 30 --runs 10``.
``--json`` prints ``{"results": [{"algorithm", "mean", "standard_error", "runs", "usable", "reason", "guarantee",
...}, ...], ...}``; with several ``--eps`` values one such block per value under ``"curves"``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ..cape.guarantee import guarantee_records, guarantee_summary, run_guarantee_records
from ..data import load_bundled_corpus, parse_text_corpus, parse_vocabulary, top_words
from ..lda import ALGORITHMS, FAMILY, METRICS, LdaSettings, LdaSpec, corpus_lda_problem
from ..lda.command import DEFAULTS
from ..lda.curves import LdaCurve, eps_curve
from ..lda.guarantees import curve_guarantees
from ..limits import MAX_GRID_POINTS, MAX_LDA_WORDS, MAX_TEXT_BYTES, MAX_VOCABULARY_BYTES
from ..scenario import Scenario, equal_sites_scenario
from ..seeding import UPLOAD_SPLIT_STREAM, stream_rng
from ..textio import read_file, values_text
from ..validation import InputError
from . import print_guarantees, print_json
from .family_command import register_family
from .options import algorithm_names
from .table import fmt, table


def register(sub: argparse._SubParsersAction) -> None:
    """``dpcore lda``, its parser built from capeLDA's argument table (``FAMILY.command``,
    :mod:`dpcore.lda.command`)."""
    register_family(sub, FAMILY, run)


def _settings(args: argparse.Namespace) -> list[str]:
    """The algorithms and the number of eps values (every number was typed by argparse): checked before any work."""
    algorithms, unknown = algorithm_names(args.configuration, ALGORITHMS)
    if unknown or not algorithms:
        raise InputError(f"unknown --configuration {', '.join(unknown) or '(none)'}; choose from "
                         f"{', '.join(ALGORITHMS)}")
    if len(set(args.eps)) > MAX_GRID_POINTS:
        raise InputError(f"--eps takes at most {MAX_GRID_POINTS} values (got {len(set(args.eps))})")
    return algorithms


def _synthetic(args: argparse.Namespace) -> tuple[LdaSpec, Scenario]:
    docs = DEFAULTS["docs"] if args.docs is None else args.docs
    if docs < 3 * args.sites:
        raise InputError(f"--docs {docs:,} is too few for {args.sites} sites: each site needs at least 3 documents")
    spec = LdaSpec(dim=DEFAULTS["vocab"] if args.vocab is None else args.vocab, k=args.topics, alpha0=args.alpha0,
                   alpha_shape=args.alpha_shape or "symmetric",
                   doc_length=DEFAULTS["doc_length"] if args.doc_length is None else args.doc_length)
    if docs * spec.doc_length > MAX_LDA_WORDS:
        raise InputError(f"--docs x --doc-length = {docs * spec.doc_length:,} words is more than the limit of "
                         f"{MAX_LDA_WORDS:,}")
    scenario = equal_sites_scenario(args.sites, docs // args.sites, args.eps[0], args.delta,
                                    calibration=args.calibration, name_prefix="site")
    extra = docs - args.sites * (docs // args.sites)
    if extra:
        scenario = scenario.with_sizes([docs // args.sites + (i < extra) for i in range(args.sites)])
    return spec, scenario


def _text_corpus(args: argparse.Namespace):
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


def _compute(args: argparse.Namespace) -> LdaCurve:
    algorithms = _settings(args)
    grid = tuple(args.eps)
    if args.collusion is not None and args.collusion > args.sites - 1:
        raise InputError(f"--collusion must be at most S - 1 = {args.sites - 1} (got {args.collusion})")
    settings = LdaSettings(eps_split=args.split, collusion=args.collusion)
    if args.text or args.corpus:
        for flag in ("docs", "doc_length", "alpha_shape"):
            if getattr(args, flag) is not None:
                raise InputError(f"--{flag.replace('_', '-')} applies to synthetic corpora only")
        corpus = _text_corpus(args)
        problem = corpus_lda_problem(corpus, args.topics, args.alpha0, np.full(args.sites, 1.0 / args.sites),
                                     stream_rng(args.seed, UPLOAD_SPLIT_STREAM))
        scenario = equal_sites_scenario(args.sites, 3, grid[0], args.delta, calibration=args.calibration,
                                        name_prefix="site")
        return eps_curve(scenario, algorithms, grid, problem=problem, runs=args.runs, seed=args.seed,
                         settings=settings)
    spec, scenario = _synthetic(args)
    return eps_curve(scenario, algorithms, grid, spec=spec, runs=args.runs, seed=args.seed, settings=settings)


def _rows(curve: LdaCurve, eps: float) -> list[dict]:
    out = []
    guarantees = curve_guarantees(curve, eps)
    for name in curve.algorithms:
        for metric in METRICS:
            r = curve.at(name, eps, metric)
            usable = r["runs"] > 0
            out.append({"algorithm": name, "metric": metric, "mean": r["mean"] if usable else None,
                        "standard_error": r["se"] if r["runs"] > 1 else None, "runs": int(r["runs"]),
                        "unusable": int(r["unusable"]), "whitening_failed": int(r["whitening_failed"]),
                        "usable": usable, "reason": None if usable else curve.reasons.get(name),
                        "privacy": guarantee_summary(guarantees[name]),
                        "guarantees": guarantee_records(guarantees[name])})
    return out


def _header(curve: LdaCurve) -> dict:
    p = curve.problem
    return {"reference": curve.reference, "dim": p.dim, "k": p.k, "alpha0": p.alpha0, "sites": p.n_sites,
            "sizes": p.sizes.tolist(), "runs": curve.runs, "seed": curve.seed, "notes": list(curve.notes),
            "calibration": curve.scenario.calibration, "delta": float(curve.scenario.delta[0]),
            "eps_split": curve.settings.eps_split, "collusion": curve.settings.collusion}


def _print_table(curve: LdaCurve, eps: float) -> None:
    rows = []
    records = _rows(curve, eps)
    for name in curve.algorithms:
        mine = {r["metric"]: r for r in records if r["algorithm"] == name}
        r = next(iter(mine.values()))
        values = [f"{fmt(m['mean'])} ± {fmt(m['standard_error'], 2)}" if r["usable"] else "-" for m in mine.values()]
        status = "yes" if r["usable"] else "UNUSABLE" if r["unusable"] else "whitening failed"
        rows.append([ALGORITHMS[name].title, *values, r["runs"], status])
    print(f"eps = {eps:g}")
    print(table(["algorithm", *(f"{m.words} ± se" for m in METRICS.values()), "runs", "usable"], rows))
    print_guarantees({ALGORITHMS[name].title: gs for name, gs in curve_guarantees(curve, eps).items()},
                     robust_hint="capeLDA" if "cape" in curve.algorithms and curve.settings.collusion is None else None)


def run(args: argparse.Namespace) -> int:
    curve = _compute(args)
    if args.json:
        data = _header(curve)
        if len(curve.grid) == 1:
            data.update(eps=curve.grid[0], results=_rows(curve, curve.grid[0]),
                        guarantees=run_guarantee_records(curve_guarantees(curve, curve.grid[0])))
        else:
            data["curves"] = [{"eps": e, "results": _rows(curve, e)} for e in curve.grid]
        print_json(data)
        return 0
    for note in curve.notes:
        print(f"note: {note}", file=sys.stderr)
    p = curve.problem
    print(f"LDA: D = {p.dim}, K = {p.k}, alpha_0 = {p.alpha0:g}, {p.n_sites} sites (N_s = "
          f"{values_text(p.sizes)}), {curve.runs} run(s), seed {curve.seed}; "
          f"{', '.join(m.phrase() for m in METRICS.values())} against "
          f"{'the true topics' if curve.reference == 'truth' else 'the non-private topics'}")
    for eps in curve.grid:
        _print_table(curve, eps)
    for name, reason in curve.reasons.items():
        print(f"{ALGORITHMS[name].title}: {reason}", file=sys.stderr)
    if args.top_words and p.vocabulary:
        for name in ("nonpriv", "cape"):
            example = curve.examples.get((name, curve.grid[-1]))
            if example is not None:
                print(f"top words, {ALGORITHMS[name].title} (eps = {curve.grid[-1]:g}):")
                for i, words in enumerate(top_words(example.topics, p.vocabulary, args.top_words)):
                    print(f"  topic {i + 1}: {' '.join(w for w, _ in words)}")
    return 0
