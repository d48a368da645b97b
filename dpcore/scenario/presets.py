"""Named starting scenarios: the dashboard's presets and equal sites (docs/dashboard.md, docs/math/setting.md)."""

from __future__ import annotations

from typing import Any

from ..validation import InputError, check_positive_int
from .model import Scenario, scenario_from_dict

__all__ = ["PRESETS", "default_scenario", "equal_sites_scenario", "preset_scenario"]


def _sites(rows: list[tuple[str, int, float, float]]) -> list[dict[str, Any]]:
    return [{"name": n, "n": size, "eps": eps, "delta": delta} for n, size, eps, delta in rows]


PRESETS: dict[str, str] = {
    "default": "five sites of different sizes and budgets (the dashboard's starting point)",
    "equal": "five equal sites, 1,000 samples each, eps = 0.5, delta = 1e-5",
    "one-large": "one large site (5,000 samples) and four small ones (250 each), eps = 0.5",
    "one-strict": "five equal sites, one of which asks for eps = 0.1 instead of 0.5",
}


def preset_scenario(name: str) -> Scenario:
    """A named starting scenario (see :data:`PRESETS`)."""
    if name == "default":
        rows = [("A", 1000, 0.5, 1e-5), ("B", 800, 0.5, 1e-5), ("C", 1200, 0.3, 1e-5), ("D", 500, 0.8, 1e-5),
                ("E", 1500, 0.5, 1e-5)]
    elif name == "equal":
        rows = [(chr(65 + i), 1000, 0.5, 1e-5) for i in range(5)]
    elif name == "one-large":
        rows = [("A", 5000, 0.5, 1e-5)] + [(chr(66 + i), 250, 0.5, 1e-5) for i in range(4)]
    elif name == "one-strict":
        rows = [(chr(65 + i), 1000, 0.1 if i == 2 else 0.5, 1e-5) for i in range(5)]
    else:
        raise InputError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return scenario_from_dict({"sites": _sites(rows), "neighbouring": "replace-one", "calibration": "classic",
                               "tau_c": None, "seed": 7})


def default_scenario() -> Scenario:
    """The embedded scenario the dashboard starts from."""
    return preset_scenario("default")


def equal_sites_scenario(n_sites: int, site_size: int, eps: float, delta: float, *, calibration: str = "classic",
                         neighbouring: str = "replace-one", seed: int = 0, name_prefix: str = "s") -> Scenario:
    """S equal sites named <prefix>1..<prefix>S with N_s samples and the same (eps, delta) each; tau_c at the
    DP floor. Chain :meth:`Scenario.with_sizes` for unequal sizes with equal budgets."""
    n_sites = check_positive_int(n_sites, "sites")
    site_size = check_positive_int(site_size, "site size")
    sites = [{"name": f"{name_prefix}{i + 1}", "n": site_size, "eps": eps, "delta": delta} for i in range(n_sites)]
    return scenario_from_dict({"sites": sites, "calibration": calibration, "neighbouring": neighbouring,
                               "tau_c": None, "seed": seed})
