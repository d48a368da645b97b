"""The privacy guarantees of a result (dpcore.cape.guarantee), drawn the same way on every computing page: one line
per algorithm and view, '(ε, δ)-DP' only where the audit certifies it, and the collusion-robust design offered where
CAPE's aggregator or a coalition learns more than promised."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import streamlit as st

from dpcore.cape.guarantee import Guarantee
from dpcore.notation import symbolic

__all__ = ["guarantee_table", "robust_controls", "show_guarantee_table", "show_guarantees"]


def guarantee_table(guarantees: Mapping[str, Sequence[Guarantee]], titles: Mapping[str, str]) -> pd.DataFrame:
    """One row per algorithm and view: the exact ε and δ composed over every stage, the promise, certified or not."""
    rows = []
    for name, views in guarantees.items():
        for g in views:
            rows.append({"algorithm": titles.get(name, name), "view": g.name,
                         "ε (exact)": "-" if g.eps is None else f"{g.eps:.3g}",
                         "δ at promised ε": "-" if g.delta is None else f"{g.delta:.2g}",
                         "promised": "-" if g.promised_eps is None else f"({g.promised_eps:g}, {g.promised_delta:g})",
                         "certified": "yes" if g.certified else "NO", "why": symbolic(g.why)})
    return pd.DataFrame(rows)


def show_guarantees(guarantees: Mapping[str, Sequence[Guarantee]], titles: Mapping[str, str], *,
                    cape: str = "cape", robust_key: str | None = None) -> None:
    """The CAPE algorithm's guarantee in a line per view (what the screenshots show) and a warning that offers the
    collusion-robust design (checkbox ``robust_key``) when one of its views is not certified; every algorithm's
    guarantees are :func:`show_guarantee_table`, further down the page."""
    mine = guarantees.get(cape, ())
    lines = [f"{':green[:material/verified_user:]' if g.certified else ':orange[:material/gpp_maybe:]'} "
             f"{titles.get(cape, cape)} - {symbolic(g.label())}" for g in mine]
    # one element for the heading and every line (each element is a render and a layout of the page in the browser)
    st.markdown("  \n".join(["**Privacy guarantees** (computed by the audit for each view, every stage composed "
                             "exactly)", *lines]))
    failing = [g for g in mine if not g.certified and g.eps is not None]
    if failing:
        names = sorted({g.name for g in failing})
        where = " and ".join(names) + (" views learn" if len(names) > 1 else " view learns")
        hint = (" Tick **Collusion-robust design** above to keep every promise, at some cost in accuracy."
                if robust_key else " The collusion-robust design (Noise design page) keeps every promise, at some "
                "cost in gain.")
        st.warning(symbolic(f"{titles.get(cape, cape)}: the {where} more than each site promised "
                            f"(every release keeps its promise on its own, the releases together do not).{hint}"),
                   icon=":material/gpp_bad:")


def show_guarantee_table(guarantees: Mapping[str, Sequence[Guarantee]], titles: Mapping[str, str]) -> None:
    """Every algorithm's guarantee, per view, in an expander."""
    with st.expander("Every algorithm's privacy guarantee, per view"):
        st.dataframe(guarantee_table(guarantees, titles), hide_index=True, width="stretch")


def robust_controls(key: str, n_sites: int, default_c: int, help_text: str) -> int | None:
    """A checkbox for the collusion-robust design and, when ticked, the number of colluders c it resists (0..S-1);
    the chosen c, or None for the plain design."""
    c1, c2 = st.columns([2, 1])
    robust = c1.checkbox("Collusion-robust design", key=key, help=help_text, disabled=n_sites < 2)
    if not robust or n_sites < 2:
        return None
    st.session_state.setdefault(f"{key}_c", min(max(default_c, 1), n_sites - 1))
    if st.session_state[f"{key}_c"] > n_sites - 1:
        st.session_state[f"{key}_c"] = n_sites - 1
    return int(c2.number_input("against c colluders", 0, max(n_sites - 1, 0), key=f"{key}_c",
                               help="The design keeps σ_eff ≥ τ_s in every view of the aggregator with up to c "
                               "colluding sites: gain S - c for equal sites."))
