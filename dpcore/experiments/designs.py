"""The CAPE design of every grid point and its gain G = sum_s mu_s^2 tau_s^2 / tau_c^2 (docs/experiments.md):
the plain design (general solver, tau_c at the DP floor), or along c the collusion-robust one."""

from __future__ import annotations

import pandas as pd

from ..cape import NoiseDesign, scenario_budgets, solve_collusion_robust, solve_general, stage_taus
from ..scenario import Scenario
from ..validation import InputError
from .spec import LdaData, OtdData, SweepSpec, scenario_at

__all__ = ["GAIN_COLUMNS", "otd_designs", "pca_design", "sweep_gains"]

GAIN_COLUMNS = ("parameter", "value", "design", "gain", "tau_c", "tau_conv")


def _design(spec: SweepSpec, scenario: Scenario, tau, value: float | int) -> NoiseDesign:
    budgets = scenario_budgets(scenario, tau)
    return solve_collusion_robust(budgets, int(value)) if spec.parameter == "c" else solve_general(budgets)


def pca_design(spec: SweepSpec, scenario: Scenario, value: float | int) -> NoiseDesign:
    """capePCA's design at one grid point; an InputError when it is infeasible."""
    design = _design(spec, scenario, scenario.taus("pca"), value)
    if not design.feasible:
        raise InputError(f"no feasible CAPE noise design at {spec.label} = {value:g}: {design.reason}", "grid")
    return design


def otd_designs(spec: SweepSpec, scenario: Scenario, value: float | int) -> dict[str, NoiseDesign]:
    """capeAGN's (or capeLDA's) designs of both stages at one grid point; an InputError when one is infeasible."""
    data: OtdData | LdaData = spec.data
    if isinstance(data, LdaData):
        taus = stage_taus(scenario, "lda", data.eps_split, dim=data.dim, alpha0=data.alpha0)
    else:
        sigma2 = data.scaled_sigma2 if data.model == "mog" else None
        taus = stage_taus(scenario, data.model, data.eps_split, dim=data.dim, sigma2=sigma2)
    out = {}
    for stage, tau in zip(("M2 stage", "M3 stage"), taus, strict=True):
        design = _design(spec, scenario, tau, value)
        if not design.feasible:
            raise InputError(f"no feasible CAPE noise design for the {stage} at {spec.label} = {value:g}: "
                             f"{design.reason}", "grid")
        out[stage] = design
    return out


def sweep_gains(spec: SweepSpec) -> pd.DataFrame:
    """The generalized gain G = sum mu_s^2 tau_s^2 / tau_c^2 of the CAPE design used at every grid point
    (collusion-robust along c, the plain design otherwise), with its tau_c and the conventional std tau_conv
    (:data:`GAIN_COLUMNS`; OTD and LDA: one row per stage). Needs no data."""
    rows = []
    for value in spec.grid:
        scenario = scenario_at(spec, value)
        designs = ({"capePCA": pca_design(spec, scenario, value)} if spec.family == "pca"
                   else otd_designs(spec, scenario, value))
        for name, design in designs.items():
            rows.append({"parameter": spec.parameter, "value": float(value), "design": name, "gain": design.gain,
                         "tau_c": float(design.tau_c), "tau_conv": design.tau_conv})
    return pd.DataFrame(rows, columns=list(GAIN_COLUMNS))
