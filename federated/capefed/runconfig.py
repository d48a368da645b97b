"""The aggregator's settings of one round, read from the run configuration (``federated/pyproject.toml``,
``[tool.flwr.app.config]``) with every key checked: its type, finite numbers, time limits in (0, MAX_TIMEOUT], counts
bounded."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import dp

__all__ = ["DEFAULT_GRACE", "MAX_TIMEOUT", "AggregatorSettings", "check_run_config", "settings_from_run_config"]

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

    def public(self) -> dict[str, Any]:
        """What every site needs to read its data for this round: the algorithm, the round id and capeAGN's model
        (with D for the single topic model, sigma^2 and the norm bound for the Gaussian mixture)."""
        r = self.round
        out: dict[str, Any] = {"algorithm": r.algorithm, "round": self.round_id}
        if r.algorithm == "capeAGN":
            out["model"] = r.model
            if r.model == "stm":
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
    "checkpoint": (str,), "grace": (int, float)}
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


def settings_from_run_config(run_config: Mapping[str, Any], algorithm: str, round_id: str) -> AggregatorSettings:
    """The aggregator's settings for one algorithm from the run configuration (keys as in the app's pyproject),
    every value checked (:func:`check_run_config`)."""
    check_run_config(run_config)
    k = int(run_config["pca-k"] if algorithm == "capePCA" else run_config["agn-k"])
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
    seed = run_config.get("seed", -1)
    roster = str(run_config.get("roster", "")) or None
    return AggregatorSettings(round=settings, sites=int(run_config["sites"]),
                              seed=None if isinstance(seed, int) and seed < 0 else seed,
                              dim=int(run_config["agn-dim"]) if algorithm == "capeAGN" and model == "stm" else None,
                              timeout=float(run_config["timeout"]),
                              connect_timeout=float(run_config["connect-timeout"]), round_id=round_id, roster=roster,
                              grace=float(run_config.get("grace", DEFAULT_GRACE)))


