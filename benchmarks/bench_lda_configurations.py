"""Topic error of paper 004's four noise configurations against eps on the synthetic corpus of issue 13.

Run: ``.venv/bin/python benchmarks/bench_lda_configurations.py [--runs 5] [--eps 1 3 10 30 100 1000]
[--alpha-shape symmetric|dirichlet] [--docs 20000] [--calibration analytic]``.

Corpus: K = 5 topics over D = 100 words (topics ~ Dirichlet(0.1)), alpha_0 = 1 (symmetric by default), 20,000
documents of 50 words, drawn once (seed 2026). delta = 1e-6 (below 1/N). For each eps and configuration, ``runs``
independent noise draws (``numpy.random.default_rng([run, configuration, eps index])``); the table shows the mean
topic error (mean L1 per topic after optimal matching, in [0, 2]) with its standard error, and how many runs were
unusable (a Table 3 condition failed: no output) or failed to whiten. Configuration "1s" is configuration 1 with
one M2 release shared by e4 and e8; "2ptr" is configuration 2 made (eps, delta)-DP by propose-test-release
(budget split equally over the test, e6 and e8). Not a test: it prints a table (a few minutes on one core).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore.lda.configurations import run_configuration, summarize_data  # noqa: E402
from dpcore.lda.corpus import ISSUE_CORPUS, make_lda_model, sample_lda_corpus  # noqa: E402
from dpcore.lda.recovery import fit_lda, topic_error  # noqa: E402
from dpcore.tensor import WhiteningError  # noqa: E402

CONFIGS = (("1", 1, False, "local"), ("1s", 1, True, "local"), ("2", 2, False, "local"), ("2ptr", 2, False, "ptr"),
           ("3", 3, False, "local"), ("4", 4, False, "local"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--eps", type=float, nargs="+", default=[1, 3, 10, 30, 100, 1000])
    parser.add_argument("--alpha-shape", default="symmetric", choices=("symmetric", "dirichlet"))
    parser.add_argument("--docs", type=int, default=ISSUE_CORPUS["n_docs"])
    parser.add_argument("--calibration", default="analytic", choices=("analytic", "classic"))
    args = parser.parse_args()
    spec = ISSUE_CORPUS
    model = make_lda_model(spec["dim"], spec["k"], np.random.default_rng(2026), alpha0=spec["alpha0"],
                           alpha_shape=args.alpha_shape)
    counts = sample_lda_corpus(model, args.docs, np.random.default_rng(2027), doc_length=spec["doc_length"])
    start = time.perf_counter()
    data = summarize_data(counts, spec["k"], spec["alpha0"])
    nonpriv = topic_error(fit_lda(counts, spec["k"], spec["alpha0"], np.random.default_rng(0)).topics, model.topics)
    print(f"K = {spec['k']}, D = {spec['dim']}, alpha_0 = {spec['alpha0']} ({args.alpha_shape}), N = {args.docs}, "
          f"{spec['doc_length']} words/document, delta = 1e-6, {args.calibration} calibration, {args.runs} runs")
    prior = np.random.default_rng(1).dirichlet(np.full(spec["dim"], 0.1), size=(20, spec["k"]))
    chance = np.mean([topic_error(draw, model.topics) for draw in prior])
    print(f"random topics from the prior (reference): topic error {chance:.3f}")
    print(f"non-private topic error {nonpriv:.4f}; Delta2 = {data.delta2:.3g}, Delta3 = {data.delta3:.3g}; "
          f"top eigenvalues of M2_hat {np.array2string(data.top_eigenvalues, precision=4)}")
    print(f"{'eps':>8} " + " ".join(f"{'conf ' + name:>20}" for name, _, _, _ in CONFIGS))
    reasons: dict[str, str] = {}
    for i, eps in enumerate(args.eps):
        cells = []
        for name, number, share, privacy in CONFIGS:
            errors, unusable, failed = [], 0, 0
            for run in range(args.runs):
                try:
                    res = run_configuration(number, data, eps, 1e-6, np.random.default_rng([run, number, i]),
                                            calibration=args.calibration, share_m2=share,
                                            privacy=privacy)
                except WhiteningError:
                    failed += 1
                    continue
                if not res.usable:
                    unusable += 1
                    reasons[name] = res.reason  # the last (largest eps) is kept
                    continue
                errors.append(topic_error(res.topics, model.topics))
            if errors:
                se = np.std(errors, ddof=1) / np.sqrt(len(errors)) if len(errors) > 1 else 0.0
                cell = f"{np.mean(errors):.3f}+-{se:.3f}"
            else:
                cell = "-"
            if unusable or failed:
                cell += f" ({unusable}u{failed}w)"
            cells.append(f"{cell:>20}")
        print(f"{eps:>8g} " + " ".join(cells), flush=True)
    print("(Nu: N runs unusable - a Table 3 condition failed; Nw: N runs whose noisy M2 could not be whitened)")
    for name, reason in reasons.items():
        print(f"conf {name}: {reason}")
    print(f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
