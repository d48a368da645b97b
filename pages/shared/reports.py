"""The four downloads of a result that stands on its own (docs/reports.md): JSON and CSV with the settings, seed,
version and every view's guarantee, a one-file HTML report, and a Python script that reproduces it."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from dpcore.reports import Report, report_csv, report_html, report_json

__all__ = ["report_downloads"]


def report_downloads(make: Callable[[], Report], stem: str, key: str, *, argument: str | None = None) -> None:
    """Four download buttons for the report ``make()`` builds (built once per page run, when first asked for);
    ``argument``: what the script needs on its command line (an uploaded file), said under the buttons."""
    cache: dict[str, Report] = {}

    def report() -> Report:
        if "r" not in cache:
            cache["r"] = make()
        return cache["r"]

    a, b, c, d = st.columns(4)
    a.download_button("Download JSON", lambda: report_json(report()), f"{stem}.json", "application/json",
                      key=f"{key}_json", on_click="ignore", width="stretch",
                      help="Settings, seed, dpcore's version, results and the guarantee of every view.")
    b.download_button("Download CSV", lambda: report_csv(report()), f"{stem}.csv", "text/csv", key=f"{key}_csv",
                      on_click="ignore", width="stretch", help="The same facts, one value per row.")
    c.download_button("Download HTML report", lambda: report_html(report()), f"{stem}.html", "text/html",
                      key=f"{key}_html", on_click="ignore", width="stretch",
                      help="One file with the figures and a summary from the numbers; opens offline.")
    d.download_button("Download Python script", lambda: report().script, f"{stem}.py", "text/x-python",
                      key=f"{key}_script", on_click="ignore", width="stretch",
                      help="Reproduces the run with dpcore and prints the same numbers.")
    st.caption("The script reproduces the run with dpcore" + (f"; give it {argument}." if argument else "."))
