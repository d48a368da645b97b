"""A capePCA comparison as a :class:`~dpcore.reports.Report` (the capePCA page's and ``python -m dpcore pca``'s
result): the settings that reproduce it, the guarantee of every view of every algorithm, the bits per value of each
(``bits_per_value`` of the results, None: float64; a summary sentence when one used a ring), a bar chart, and a script
that repeats :func:`dpcore.pca.prepare_pca` and :func:`dpcore.pca.compare_pca` with the same data, scenario and seed."""

from __future__ import annotations

from typing import Any

from ..family import guarantee_records, ring_sentence
from ..pca import ALGORITHMS, FAMILY, METRICS, PcaComparison, PcaSetup
from ..pca.guarantees import privacy_guarantees
from ..pca.story import story_sentence
from .common import Report, script_text
from .comparison import bar_figure

__all__ = ["DATA_KINDS", "pca_report"]

DATA_KINDS = ("bundled", "synthetic", "upload")
"""Where the data came from: ``source`` = {"kind": "bundled", "name"} | {"kind": "synthetic", "dim", "spectrum",
"decay"} | {"kind": "upload", "file", "header" (None/True/False), "label" (a column or None), "drop" (columns)}."""


def _dataset_code(source: dict[str, Any], seed: int) -> tuple[str, str, str | None]:
    kind = source["kind"]
    if kind == "bundled":
        return "from dpcore.data import load_bundled\n", f"dataset = load_bundled({source['name']!r})\n", None
    if kind == "synthetic":
        return ("from dpcore.data import synthetic_dataset\nfrom dpcore.seeding import PCA_SYNTHETIC_STREAM, "
                "stream_rng\n",
                f"dataset = synthetic_dataset(scenario.total_n, stream_rng({seed}, PCA_SYNTHETIC_STREAM), "
                f"dim={source['dim']}, spectrum={source['spectrum']!r}, decay={source['decay']!r})\n", None)
    return ("from pathlib import Path\n\nfrom dpcore.data import parse_numeric_csv, table_to_dataset\n",
            f"path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path({source['file']!r})\n"
            f"table = parse_numeric_csv(path.read_bytes(), header={source.get('header')!r}, "
            f"label_column={source.get('label')!r}, drop_columns={tuple(source.get('drop', ()))!r})\n"
            f"dataset = table_to_dataset(table, {source['file']!r})\n", f"[path to {source['file']}]")


def _numbers(comparison: PcaComparison) -> dict[str, list[list[float]]]:
    return {name: [[float(r.metrics[m]) for m in METRICS] for r in runs] for name, runs in comparison.results.items()}


def _figure(comparison: PcaComparison) -> Any:
    by_key = {(m.algorithm, m.metric): m for m in comparison.summary}
    metric = "captured_energy_ratio"
    return bar_figure(FAMILY, [by_key[(n, metric)] for n in comparison.results], metric)


def pca_report(setup: PcaSetup, comparison: PcaComparison, *, source: dict[str, Any], k: int, features: str,
               preprocessing: str, scale: float, by_label: bool, allow_replacement: bool, seed: int,
               algorithms: list[str], runs: int, rank: int | None) -> Report:
    """The report of one capePCA comparison run with these settings (the arguments of ``prepare_pca`` and
    ``compare_pca``; ``source``: where the data came from, :data:`DATA_KINDS`)."""
    scenario = setup.privacy.scenario
    settings = {"algorithm_family": "pca", "data": source, "k": k, "features": features,
                "preprocessing": preprocessing, "scale": scale, "by_label": by_label,
                "allow_replacement": allow_replacement, "algorithms": list(algorithms), "runs": runs, "rank": rank,
                "solver_dtype": setup.problem.solver_dtype}
    bits = comparison.bits_per_value()
    results = [{"algorithm": ALGORITHMS[m.algorithm].title, "metric": METRICS[m.metric].label, "mean": m.mean,
                "std": m.std, "runs": m.runs, "bits_per_value": bits[m.algorithm]} for m in comparison.summary]
    titles = {name: entry.title for name, entry in ALGORITHMS.items()}
    summary = [s for s in (story_sentence(comparison), ring_sentence(bits, titles)) if s]
    summary.append(f"Data: {setup.dataset.name}, D = {setup.problem.dim}, K = {setup.problem.k}; "
                   f"{scenario.n_sites} sites, N = {scenario.total_n:,}; {runs} runs, seed {seed}.")
    imports, data_code, argument = _dataset_code(source, seed)
    body = (f"scenario = scenario_from_dict(json.loads({scenario.to_json(None)!r}))\n" + data_code +
            f"setup = prepare_pca(dataset, scenario, {k}, features={features!r}, preprocessing={preprocessing!r}, "
            f"scale={scale!r}, by_label={by_label!r}, allow_replacement={allow_replacement!r}, seed={seed}, "
            f"solver_dtype={setup.problem.solver_dtype!r})\n"
            f"comparison = compare_pca(setup.problem, setup.privacy, {list(algorithms)!r}, {runs}, {seed}, "
            f"rank={rank!r}, workers=1)\n"
            "numbers = {name: [[float(r.metrics[m]) for m in METRICS] for r in results] for name, results in "
            "comparison.results.items()}\n")
    script = script_text("a capePCA comparison", imports + "from dpcore.pca import METRICS, compare_pca, "
                         "prepare_pca\nfrom dpcore.scenario import scenario_from_dict\n", body, argument=argument)
    return Report(kind="capePCA comparison", title=f"capePCA on {setup.dataset.name}", summary=tuple(summary),
                  settings=settings, seed=seed, results=results, numbers=_numbers(comparison),
                  guarantees=guarantee_records(privacy_guarantees(setup.privacy, comparison.results)),
                  scenario=scenario.to_dict(), figures=(lambda: _figure(comparison),),
                  notes=tuple(setup.notes) + tuple(n for n in comparison.notes if n not in setup.notes),
                  script=script)
