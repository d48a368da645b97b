"""The one report type every result becomes (:class:`Report`) and its four forms: JSON, CSV (one value per row:
section, name, field, value), one-file HTML (plotly.js embedded, opens offline) and the reproducing script."""

from __future__ import annotations

import html
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from ..optional import plotly_objects
from ..textio import json_ready, long_csv, printable

__all__ = ["NUMBERS_MARK", "Report", "plotly_objects", "report_csv", "report_html", "report_json",
           "script_text", "version"]

NUMBERS_MARK = "DPCORE-NUMBERS "
"""A reproducing script prints one line starting with this, then the JSON of its numbers."""


def version() -> str:
    """dpcore's version (``dpcore.__version__``; the package is imported whenever this module is)."""
    return str(sys.modules[__name__.split(".")[0]].__version__)


@dataclass(frozen=True, eq=False, kw_only=True)
class Report:
    """A result that stands on its own: ``kind`` and ``title``; ``summary`` (sentences computed from the numbers);
    ``settings`` (everything needed to run it again) and ``seed``; ``scenario`` (its JSON form, or None);
    ``results`` (tidy rows); ``numbers`` (what the script prints, by key); ``guarantees`` (one record per algorithm
    and view, from the audit); ``figures`` (functions that draw its plotly figures, called only for the HTML report:
    plotly is dpcore's figures extra); ``notes``; ``script`` (Python source that reproduces
    ``numbers``)."""

    kind: str
    title: str
    summary: tuple[str, ...]
    settings: dict[str, Any]
    seed: int
    results: list[dict[str, Any]]
    numbers: dict[str, Any]
    guarantees: list[dict[str, Any]]
    scenario: dict[str, Any] | None = None
    figures: tuple[Any, ...] = ()
    notes: tuple[str, ...] = ()
    script: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return json_ready({"kind": self.kind, "title": self.title, "version": version(), "seed": self.seed,
                      "settings": self.settings, "scenario": self.scenario, "summary": list(self.summary),
                      "results": self.results, "numbers": self.numbers, "guarantees": self.guarantees,
                      "notes": list(self.notes), **self.extra})


def report_json(report: Report) -> str:
    """The JSON download."""
    return json.dumps(report.to_dict(), indent=2)


def _cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def report_csv(report: Report) -> str:
    """The CSV download: one value per row (section, name, field, value) - meta (kind, version, seed, summary),
    settings, scenario, results, guarantees, notes - so it carries the same facts as the JSON."""
    rec = report.to_dict()
    rows: list[tuple] = [("meta", "dpcore", "version", rec["version"]), ("meta", report.kind, "seed", rec["seed"]),
                         ("meta", report.kind, "title", rec["title"])]
    rows += [("summary", str(i + 1), "text", line) for i, line in enumerate(rec["summary"])]
    rows += [("settings", "settings", k, _cell(v)) for k, v in rec["settings"].items()]
    if rec["scenario"] is not None:
        rows.append(("scenario", "scenario", "json", json.dumps(rec["scenario"])))
    for i, row in enumerate(rec["results"]):
        rows += [("result", str(i), k, _cell(v)) for k, v in row.items()]
    for g in rec["guarantees"]:
        rows.append(("guarantee", str(g.get("algorithm", "")), str(g.get("view", "")), json.dumps(g)))
    rows += [("note", str(i + 1), "text", n) for i, n in enumerate(rec["notes"])]
    return long_csv(rows)


def report_html(report: Report) -> str:
    """A one-file HTML report: title, the summary sentences, the settings, every figure (plotly.js embedded once),
    the results table, the guarantee of every view, the notes, and how to run it again."""
    esc = html.escape
    rec = report.to_dict()
    parts = [f"<h1>{esc(printable(report.title))}</h1>", "<h2>Summary</h2><ul>"
             + "".join(f"<li>{esc(printable(s))}</li>" for s in report.summary) + "</ul>",
             f"<p>dpcore {esc(rec['version'])}, seed {rec['seed']}.</p>"]
    plotly_objects()  # refused with the extra to install before anything is drawn
    for i, draw in enumerate(report.figures):
        parts.append(draw().to_html(include_plotlyjs=i == 0, full_html=False))
    if report.results:
        keys = list(dict.fromkeys(k for row in report.results for k in row))
        parts.append("<h2>Results</h2><table border='1' cellpadding='4'><tr>"
                     + "".join(f"<th>{esc(k)}</th>" for k in keys) + "</tr>")
        for row in rec["results"]:
            parts.append("<tr>" + "".join(f"<td>{esc(_shown(row.get(k)))}</td>" for k in keys) + "</tr>")
        parts.append("</table>")
    if report.guarantees:
        parts.append("<h2>Privacy of every view (computed by the audit)</h2><table border='1' cellpadding='4'>"
                     "<tr><th>algorithm</th><th>view</th><th>guarantee</th></tr>")
        for g in rec["guarantees"]:
            parts.append(f"<tr><td>{esc(str(g.get('algorithm', '')))}</td><td>{esc(str(g.get('view', '')))}</td>"
                         f"<td>{esc(str(g.get('label', '')))}</td></tr>")
        parts.append("</table>")
    parts.append("<h2>Settings</h2><pre>" + esc(json.dumps(rec["settings"], indent=1)) + "</pre>")
    if rec["scenario"] is not None:
        parts.append("<h2>Scenario</h2><pre>" + esc(json.dumps(rec["scenario"], indent=1)) + "</pre>")
    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(printable(n))}</li>" for n in report.notes) + "</ul>")
    body = "\n".join(parts)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{esc(printable(report.title))}</title></head>"
            f"<body style='font-family: sans-serif; max-width: 64em; margin: auto'>{body}</body></html>")


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def script_text(report_title: str, imports: str, body: str, *, argument: str | None = None) -> str:
    """A reproducing script: a docstring, the imports, ``body`` (which leaves its numbers in ``numbers``) and the
    line that prints them after :data:`NUMBERS_MARK`. ``argument``: what its first command-line argument is (an
    uploaded file)."""
    usage = f"python this_file.py {argument}" if argument else "python this_file.py"
    head = (f'"""Reproduces with dpcore {version()}: {printable(report_title).replace(chr(34) * 3, "")}.\n\n'
            f"Run: {usage}. Prints {NUMBERS_MARK.strip()} and the numbers as JSON.\n\"\"\"\n")
    return (head + "import json\nimport sys\n\n" + imports.rstrip("\n") + "\n\n" + body.rstrip("\n") + "\n"
            f"print({NUMBERS_MARK!r} + json.dumps(numbers))\n")
