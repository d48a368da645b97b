"""What changed between two scenarios, in words (the dashboard's before-and-after panel)."""

from __future__ import annotations

from .model import Scenario, Site

__all__ = ["scenario_edits"]

_SITE_FIELDS = (("n", "N_s"), ("eps", "eps"), ("delta", "delta"), ("weight", "weight mu_s"))


def _value(value: float | None) -> str:
    if value is None:
        return "N_s/N"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _tau_c(value: float | None) -> str:
    return "the DP floor" if value is None else f"{value:.4g}"


def _site_changes(before: Site, after: Site) -> list[str]:
    out = []
    for field, label in _SITE_FIELDS:
        old, new = getattr(before, field), getattr(after, field)
        if old != new:
            out.append(f"{label} {_value(old)} → {_value(new)}")
    return out


def scenario_edits(before: Scenario, after: Scenario, limit: int = 8) -> list[str]:
    """One line per change from ``before`` to ``after``: sites added, removed or renamed, site fields, settings.

    Sites are matched by name; a site whose name changed at the same place in the table is reported as renamed.
    At most ``limit`` lines; the rest are counted in a last line."""
    lines: list[str] = []
    old = {s.name: s for s in before.sites}
    new = {s.name: s for s in after.sites}
    renamed: dict[str, str] = {}
    for i, site in enumerate(after.sites):
        if site.name not in old and i < before.n_sites and before.sites[i].name not in new:
            renamed[before.sites[i].name] = site.name
    for name, site in old.items():
        if name in renamed:
            target = new[renamed[name]]
            changes = _site_changes(site, target)
            lines.append(f"site {name} renamed {renamed[name]}" + (f": {', '.join(changes)}" if changes else ""))
        elif name not in new:
            lines.append(f"site {name} removed")
        else:
            changes = _site_changes(site, new[name])
            if changes:
                lines.append(f"site {name}: {', '.join(changes)}")
    for name, site in new.items():
        if name not in old and name not in renamed.values():
            lines.append(f"site {name} added (N_s = {site.n:,}, eps = {site.eps:g}, delta = {site.delta:g})")
    if before.neighbouring != after.neighbouring:
        lines.append(f"neighbouring relation {before.neighbouring} → {after.neighbouring}")
    if before.calibration != after.calibration:
        lines.append(f"calibration {before.calibration} → {after.calibration}")
    if before.tau_c != after.tau_c:
        lines.append(f"tau_c {_tau_c(before.tau_c)} → {_tau_c(after.tau_c)}")
    if before.seed != after.seed:
        lines.append(f"seed {before.seed} → {after.seed}")
    if not lines and before.names != after.names:
        lines.append("sites reordered: " + ", ".join(after.names))
    if len(lines) > limit:
        lines = lines[: limit - 1] + [f"and {len(lines) - limit + 1} more changes"]
    return lines
