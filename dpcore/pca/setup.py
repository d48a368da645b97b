"""From a data set and a scenario to a ready PCA comparison: preprocessing, the split into the scenario's sites,
the problem and the privacy set-up (docs/math/capepca.md, docs/data.md)."""

from __future__ import annotations

from dataclasses import dataclass

from ..cape import NoiseDesign
from ..data import Dataset, Preprocessed, SiteSplit, preprocess, split_sites
from ..scenario import Scenario
from ..seeding import PCA_SPLIT_STREAM, stream_rng
from ..validation import check_rank
from .metrics import noise_spectral_norm
from .problem import PcaPrivacy, PcaProblem, pca_privacy, pca_problem

__all__ = ["PcaSetup", "noise_dominance_note", "prepare_pca"]


def noise_dominance_note(problem: PcaProblem, privacy: PcaPrivacy) -> str | None:
    """A warning when the CAPE (= pooled) noise is expected to swamp the K-th eigenvalue of A, i.e.
    2 sqrt(D) tau_c > lambda_K(A): then even capePCA recovers little, and the baselines less."""
    edge = noise_spectral_norm(problem.dim, privacy.design.output_std)
    lambda_k = float(problem.eigenvalues[problem.k - 1])
    if edge <= lambda_k:
        return None
    return (f"the aggregate's noise has spectral norm about 2 sqrt(D) tau_c = {edge:.3g}, more than the K-th "
            f"eigenvalue of A ({lambda_k:.3g}): at this budget the private top-{problem.k} directions are mostly "
            "noise for every algorithm. Raise eps or N_s, lower K, or use fewer features.")


@dataclass(frozen=True, kw_only=True)
class PcaSetup:
    """What :func:`prepare_pca` did: preprocessing, the split into the scenario's sites, problem and privacy."""

    dataset: Dataset
    preprocessed: Preprocessed
    split: SiteSplit
    problem: PcaProblem
    privacy: PcaPrivacy
    notes: tuple[str, ...]


def prepare_pca(dataset: Dataset, scenario: Scenario, k: int, *, preprocessing: str = "max-norm", scale: float = 1.0,
                by_label: bool = False, allow_replacement: bool = False, seed: int = 0,
                features: str = "centre",
                design: NoiseDesign | None = None, solver_dtype: str = "float32") -> PcaSetup:
    """Preprocess ``dataset`` (``features``: none, centre or standardise; then max-norm or clip; not private), deal its
    samples to the scenario's sites (sizes N_s; shuffled with ``stream_rng(seed, PCA_SPLIT_STREAM)``; more samples
    than the data set has only with ``allow_replacement``, flagged with its privacy consequence), and build
    the :class:`PcaProblem` (eigensolves of the noisy matrices in ``solver_dtype``) and :class:`PcaPrivacy`."""
    k = check_rank(k, dataset.dim)
    prepared = preprocess(dataset.x, preprocessing, scale=scale, features=features)
    split = split_sites(prepared.x, scenario.sizes, stream_rng(seed, PCA_SPLIT_STREAM), labels=dataset.labels,
                        by_label=by_label, allow_replacement=allow_replacement)
    problem = pca_problem(split.sites, k, solver_dtype=solver_dtype)
    privacy = pca_privacy(scenario, design, dim=problem.dim)
    notes = [f"preprocessing: {prepared.note}"]
    if split.message:
        notes.append(split.message)
    crowded = noise_dominance_note(problem, privacy)
    if crowded:
        notes.append(crowded)
    return PcaSetup(dataset=dataset, preprocessed=prepared, split=split, problem=problem, privacy=privacy,
                    notes=tuple(notes) + privacy.notes)
