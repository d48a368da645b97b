"""A capePCA comparison (the capePCA page's result) as a :class:`~dpcore.reports.Report`: the one report of a
comparison (:func:`dpcore.reports.comparison.family_report`: rows, every view's guarantee, the bits per value, the bar
chart) of the contract's :class:`~dpcore.family.Comparison` (:func:`dpcore.pca.contract.pca_comparison`), with
capePCA's own parts - the settings that reproduce it, its story sentence, and a script that repeats
:func:`dpcore.pca.prepare_pca` and :func:`dpcore.pca.compare_pca` with the same data (bundled, synthetic or an
uploaded file), scenario and seed."""

from __future__ import annotations

from typing import Any

from ..pca import PcaComparison, PcaSetup
from ..pca.contract import pca_comparison
from ..pca.story import story_sentence
from .common import Report, script_text
from .comparison import family_report

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
    return family_report(pca_comparison(setup, comparison, seed), kind="capePCA comparison",
                         title=f"capePCA on {setup.dataset.name}", settings=settings,
                         story=[s for s in (story_sentence(comparison),) if s],
                         closing=f"Data: {setup.dataset.name}, D = {setup.problem.dim}, K = {setup.problem.k}; "
                         f"{scenario.n_sites} sites, N = {scenario.total_n:,}; {runs} runs, seed {seed}.",
                         script=script)
