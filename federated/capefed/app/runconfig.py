"""The aggregator's settings of one round, read from the run configuration (``federated/pyproject.toml``,
``[tool.flwr.app.config]``) with every key checked: its type, finite numbers, time limits in (0, MAX_TIMEOUT], counts
bounded; ``study`` names the approved study (``capefed-signed-study-v1``) every request carries, ``mode`` "real" or
"dry-run"."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from . import dp
from .studyfile import read_signed_study
from .trust import MODES

__all__ = ["DEFAULT_GRACE", "MAX_TIMEOUT", "AggregatorSettings", "check_run_config", "settings_from_run_config",
           "study_algorithms"]

DEFAULT_GRACE = 3.0
"""Seconds the aggregator waits for the last releases of a stage once enough sites for the round to survive have
answered (and at least as long again as that took): a release later than that is a drop-out, never unmasked."""


@dataclass(frozen=True, kw_only=True)
class AggregatorSettings:
    """The aggregator's run: the round's public settings, its own seed (None: a fresh 256-bit secret), how many
    sites must take part, D for capeAGN's single topic model (the vocabulary), the time limits (``timeout``: the
    aggregator's deadline for each step; ``grace``: :data:`DEFAULT_GRACE`), the round's id (binds every sealed message
    and signature) and the roster file of the pinned parties."""

    round: dp.RoundSettings
    sites: int
    seed: int | str | None = None
    dim: int | None = None
    timeout: float = 120.0
    connect_timeout: float = 120.0
    round_id: str = "round"
    roster: str | None = None
    grace: float = DEFAULT_GRACE
    study: str | None = None
    approvals: tuple[bytes, ...] = ()
    mode: str = "real"

    def study_fields(self) -> dict[str, Any]:
        """What every request carries about the study: its text, every site's approval (sites sorted by name) and
        the round's mode ("real" or "dry-run")."""
        return {"study": self.study or "", "approvals": list(self.approvals), "mode": self.mode}

    def public(self) -> dict[str, Any]:
        """What every site needs to read its data for this round: the algorithm, the round id and capeAGN's model
        (with D for the single topic model, sigma^2 and the norm bound for the Gaussian mixture), and the study."""
        r = self.round
        out: dict[str, Any] = {"algorithm": r.algorithm, "round": self.round_id, **self.study_fields()}
        entry = dp.federated_algorithm(r.algorithm)
        if entry.public_model:
            out["model"] = r.model
            if entry.fixed_dim(r):
                out["dim"] = int(self.dim)
            else:
                out.update(sigma2=float(r.sigma2), norm_bound=float(r.norm_bound))
        return out


def _optional(run_config: Mapping[str, Any], key: str) -> float | None:
    value = float(run_config.get(key, -1.0))
    return None if value < 0 else value


def _law(run_config: Mapping[str, Any]) -> dict[str, str]:
    """The third-moment noise law of the run configuration ("" or absent: dpcore's default)."""
    law = str(run_config.get("m3-noise", ""))
    return {"m3_noise": law} if law else {}


_RUN_TYPES: dict[str, tuple[type, ...]] = {
    "pca-k": (int,), "agn-k": (int,), "sites": (int,), "run": (int,), "seed": (int, str), "collusion": (int,),
    "dropouts": (int,), "agn-dim": (int,), "split": (int, float), "timeout": (int, float),
    "connect-timeout": (int, float), "agn-sigma2": (int, float), "agn-norm-bound": (int, float),
    "neighbouring": (str,), "calibration": (str,), "solver": (str,), "agn-model": (str,), "agn-path": (str,),
    "m3-noise": (str,), "noise": (str,), "roster": (str,), "algorithms": (str,), "out": (str,), "poll": (int, float),
    "grace": (int, float), "study": (str,), "mode": (str,)}
MAX_TIMEOUT = 86_400.0


def check_run_config(run_config: Mapping[str, Any]) -> None:
    """Every key of the run configuration the aggregator reads: the right type, finite numbers, time limits in
    (0, MAX_TIMEOUT], counts bounded; raises ValueError naming the key and what is allowed."""
    for key, kinds in _RUN_TYPES.items():
        if key not in run_config:
            continue
        value = run_config[key]
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise ValueError(f"run configuration {key} must be {' or '.join(k.__name__ for k in kinds)} "
                             f"(got {value!r:.40})")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"run configuration {key} must be finite (got {value!r})")
        if isinstance(value, str) and len(value) > 4096:
            raise ValueError(f"run configuration {key} is longer than 4096 characters")
    for key in ("timeout", "connect-timeout", "poll", "grace"):
        if key in run_config and not 0 < float(run_config[key]) <= MAX_TIMEOUT:
            raise ValueError(f"run configuration {key} must be in (0, {MAX_TIMEOUT:g}] seconds")
    for key, top in (("sites", dp.MAX_SITES), ("pca-k", dp.MAX_FEDERATED_MATRIX_DIM),
                     ("agn-k", dp.MAX_FEDERATED_MATRIX_DIM), ("agn-dim", dp.MAX_FEDERATED_MATRIX_DIM),
                     ("dropouts", dp.MAX_SITES), ("collusion", dp.MAX_SITES)):
        if key in run_config and not -1 <= int(run_config[key]) <= top:
            raise ValueError(f"run configuration {key} must be at most {top}")


def _round_settings(run_config: Mapping[str, Any], algorithm: str) -> tuple[dp.RoundSettings, int, int | None]:
    """A round's settings, the number of sites and capeAGN's vocabulary D from the run configuration's own keys."""
    entry = dp.federated_algorithm(algorithm)
    k = int(run_config[f"{entry.key}-k"])
    collusion = run_config.get("collusion", -1)
    model = str(run_config.get("agn-model", "stm"))
    settings = dp.RoundSettings(algorithm=algorithm, k=k, neighbouring=str(run_config["neighbouring"]),
                                calibration=str(run_config["calibration"]), solver=str(run_config["solver"]),
                                collusion=None if int(collusion) < 0 else int(collusion),
                                split=float(run_config["split"]), run=int(run_config["run"]), model=model,
                                sigma2=_optional(run_config, "agn-sigma2"),
                                norm_bound=_optional(run_config, "agn-norm-bound"),
                                path=str(run_config.get("agn-path", "dense")),
                                noise=str(run_config.get("noise", "helper")),
                                dropouts=max(int(run_config.get("dropouts", 0)), 0),
                                **_law(run_config))
    dim = int(run_config["agn-dim"]) if entry.fixed_dim(settings) else None
    return settings, int(run_config["sites"]), dim


def study_algorithms(run_config: Mapping[str, Any]) -> list[str]:
    """The rounds a run configuration asks for (``algorithms``); with a study, those of them the study runs."""
    asked = [a.strip() for a in str(run_config.get("algorithms", "")).split(",") if a.strip()]
    if not run_config.get("study"):
        return asked
    study = read_signed_study(str(run_config["study"])).study
    chosen = [a for a in asked if a in study.algorithms]
    if not chosen:
        raise ValueError(f"the run configuration asks for {', '.join(asked) or 'no algorithm'}; the study runs "
                         f"{', '.join(study.algorithms)}")
    return chosen


def settings_from_run_config(run_config: Mapping[str, Any], algorithm: str, round_id: str) -> AggregatorSettings:
    """The aggregator's settings for one algorithm from the run configuration (keys as in the app's pyproject),
    every value checked (:func:`check_run_config`). With ``study`` (the approved study) every round setting, the
    number of sites and D come from the study (the run number, seeds, time limits and files from the run
    configuration): the sites answer only rounds within the study they signed."""
    check_run_config(run_config)
    seed = run_config.get("seed", -1)
    roster = str(run_config.get("roster", "")) or None
    study, approvals = None, ()
    if run_config.get("study"):
        signed = read_signed_study(str(run_config["study"]))
        entry = signed.study.algorithms.get(algorithm)
        if entry is None:
            raise ValueError(f"the study runs {', '.join(signed.study.algorithms)}, not {algorithm}")
        settings = replace(entry.settings, run=int(run_config.get("run", 0)))
        sites = len(signed.study.sites)
        dim = entry.dim if dp.federated_algorithm(algorithm).fixed_dim(settings) else None
        study, approvals = signed.study.text, tuple(signed.signatures)
    else:
        settings, sites, dim = _round_settings(run_config, algorithm)
    mode = str(run_config.get("mode", "real"))
    if mode not in MODES:
        raise ValueError(f"run configuration mode must be one of {', '.join(MODES)} (got {mode[:40]!r})")
    return AggregatorSettings(round=settings, sites=sites, seed=None if isinstance(seed, int) and seed < 0 else seed,
                              dim=dim, timeout=float(run_config["timeout"]),
                              connect_timeout=float(run_config["connect-timeout"]), round_id=round_id, roster=roster,
                              grace=float(run_config.get("grace", DEFAULT_GRACE)), study=study, approvals=approvals,
                              mode=mode)
