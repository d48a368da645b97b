"""A planner answer that stands on its own (docs/planner.md, "Exports"): JSON and CSV with the full settings, seed,
version and guarantees; a one-file HTML report with the curve and a plain-language summary derived from the numbers;
and a Python script that repeats the check with dpcore and prints the same numbers."""

from __future__ import annotations

import html
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..experiments.families import FAMILIES
from ..family import DataLoader
from ..optional import plotly_objects
from ..pca.planning import upload_dataset
from ..textio import json_ready, long_csv, printable
from .answer import PlanResult
from .check import CheckResult, check_points
from .design import DESIGNS
from .schemes import scheme_words, sentence_start

if TYPE_CHECKING:  # plotly is dpcore's figures extra: imported where a figure is drawn
    import plotly.graph_objects as go

__all__ = ["ANSWER_LINE_TOLERANCE", "GUARANTEE_FIELDS", "GUARANTEE_HEADER", "SCRIPT_MARK", "answer_lines",
           "curve_figure", "guarantee_rows", "plan_csv", "plan_html", "plan_json", "plan_records", "plan_script",
           "upload_dataset"]

ANSWER_LINE_TOLERANCE = 0.02
"""Relative difference of two answers' noise below which the curve figure draws them as one line (2 %: one line
width on the log axis)."""

SCRIPT_MARK = "PLANNER-CHECK "
"""The exported script prints one line starting with this, then the JSON of its numbers."""


def plan_records(result: PlanResult, check: CheckResult | None = None) -> dict[str, Any]:
    """Everything of the answer (:meth:`PlanResult.to_dict`) and of its check, with ``kind``."""
    out = {"kind": "dpcore planner answer", **result.to_dict()}
    out["check"] = None if check is None else check.to_dict()
    return out


def plan_json(result: PlanResult, check: CheckResult | None = None) -> str:
    """The JSON download (non-finite numbers as null)."""
    return json.dumps(json_ready(plan_records(result, check)), indent=2)


GUARANTEE_FIELDS = ("site", "view", "colluders", "eps", "delta", "certified", "promised_eps", "promised_delta",
                    "exact", "why")
"""The named fields of a guarantee row of the CSV (one value each: no JSON)."""


def _cell(value: Any) -> Any:
    """A CSV value: lists of numbers joined by '; ', anything else structured as JSON (settings only)."""
    if isinstance(value, list) and all(isinstance(v, (int, float)) or v is None for v in value):
        return "; ".join("" if v is None else str(v) for v in value)
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def plan_csv(result: PlanResult, check: CheckResult | None = None) -> str:
    """The CSV download, one value per row: section, name, field, value (settings, question, forward, answers, the
    scenarios' sites, check, curve, and the guarantee of every view as named fields: site, view, colluders, eps,
    delta, certified, ...), so it carries the same facts as the JSON."""
    rec = json_ready(plan_records(result, check))
    rows: list[tuple] = [("meta", "dpcore", "version", rec["version"]), ("meta", "planner", "seed", rec["seed"]),
                         ("meta", "planner", "sentence", rec["sentence"]),
                         ("meta", "planner", "forward_sentence", rec["forward_sentence"]),
                         ("meta", "data", "description", rec["data"])]
    rows += [("question", "question", k, _cell(v)) for k, v in rec["question"].items()]
    rows += [("settings", "settings", k, _cell(v)) for k, v in rec["settings"].items()]
    rows += _scenario_rows("scenario", rec["scenario"])
    for scheme, f in (rec["forward"] or {}).items():
        rows += [("forward", scheme, k, _cell(v)) for k, v in f.items()]
    for scheme in result.answers:
        for k, v in rec[scheme].items():
            if k in ("scenario", "noise_scenario"):
                rows += _scenario_rows(f"{scheme} {k}", v) if v else []
            else:
                rows.append(("answer", scheme, k, _cell(v)))
    for i, limit in enumerate(rec["limits"] + rec["caveats"]):
        rows.append(("limits", str(i + 1), "text", limit))
    for j, point in enumerate(rec["curve"]):
        for k, v in point.items():
            rows.append(("curve", str(j), k, v))
    for scheme, views in rec["guarantees"].items():
        for g in views:
            name = f"{scheme} {g['view']}" + (f" of {g['colluders']}" if g["view"] == "coalition" else "")
            rows += [("guarantee", name, k, g.get(k)) for k in GUARANTEE_FIELDS]
    if rec["check"] is not None:
        for p in rec["check"]["points"]:
            for k, v in p.items():
                rows.append(("check", f"{p['scheme']}@{p['where']}", k, _cell(v)))
    return long_csv(rows)


def _scenario_rows(section: str, scenario: dict) -> list[tuple]:
    """A scenario as rows: its settings, then each site's n, eps, delta (named by the site)."""
    rows = [(section, "scenario", k, v) for k, v in scenario.items() if k != "sites"]
    for site in scenario["sites"]:
        rows += [(section, f"site {site['name']}", k, v) for k, v in site.items() if k != "name"]
    return rows


def _noise_axis_title(family: str) -> str:
    """The x axis's words: one aggregate term (PCA) or a common scale s of a fixed stage profile (two stages)."""
    stages = FAMILIES[family].planner.stage_names
    if len(stages) == 1:
        return "std of the noise on the aggregate (log scale)"
    return f"common scale s of the stages' noise std ({', '.join(stages)}: s times a fixed profile; log scale)"


def answer_lines(result: PlanResult) -> list[tuple[float, str, str]]:
    """The vertical lines of the curve figure: (noise scale, label, colour) of each reachable answer, schemes whose
    answers need the same noise (the same curve read at the same target, up to :data:`ANSWER_LINE_TOLERANCE`: the
    answers are whole numbers of samples or sites, so their noise differs a little) merged into one line."""
    fam = FAMILIES[result.family]
    lines: list[tuple[float, list[str], str]] = []
    for scheme, answer in result.answers.items():
        if answer.scale is None:
            continue
        for scale, names, _ in lines:
            if math.isclose(scale, answer.scale, rel_tol=ANSWER_LINE_TOLERANCE):
                names.append(scheme_words(result.family, scheme))
                break
        else:
            lines.append((answer.scale, [scheme_words(result.family, scheme)], fam.algorithms[scheme].colour))
    return [(s, "noise at the answer: " + " and ".join(names), colour if len(names) == 1 else "#555555")
            for s, names, colour in lines]


def curve_figure(result: PlanResult, check: CheckResult | None = None) -> go.Figure:
    """The curve (mean and the band where 95 % of single runs fall) against the aggregate noise, the target, and the
    noise each scheme needs at its answer (plotly: dpcore's figures extra)."""
    go = plotly_objects()
    curve = result.curve
    fam = FAMILIES[result.family]
    metric = fam.metrics[curve.metric]
    lo, hi = curve.band(1.96), curve.band(-1.96)
    shown = np.isfinite(lo) & np.isfinite(hi)  # a point where too many runs failed has no band (module curve)
    fig = go.Figure()
    x = curve.scales[shown].tolist()
    fig.add_trace(go.Scatter(x=x + x[::-1], y=lo[shown].tolist() + hi[shown].tolist()[::-1], fill="toself",
                             line={"width": 0},
                             fillcolor="rgba(120,120,120,0.25)", name="95 % of single runs", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=curve.scales.tolist(), y=curve.mean.tolist(), mode="lines+markers",
                             name="mean of the runs",
                             line={"color": "#333333"}))
    fig.add_hline(y=result.question.target, line_dash="dash", line_color="#000000",
                  annotation_text=f"target {result.question.target:g}", annotation_position="top left")
    span = np.log10(curve.scales[[0, -1]])
    for i, (scale, label, colour) in enumerate(answer_lines(result)):
        fig.add_vline(x=scale, line_color=colour, line_dash="dot")
        # a label per line inside the frame, one row each, away from the title and the curve: on the side of the
        # line with more room, at the bottom where the curve is high (it falls to the right of the answer when
        # higher is better, so stays high on the left) and at the top where it is low
        right = (math.log10(scale) - span[0]) > 0.6 * (span[1] - span[0])
        low = curve.higher_is_better
        fig.add_annotation(x=math.log10(scale), xref="x", y=(0.03 + 0.08 * i) if low else (0.97 - 0.08 * i),
                           yref="paper", yanchor="bottom" if low else "top", text=label,
                           showarrow=False, xanchor="right" if right else "left", xshift=-4 if right else 4,
                           font={"color": colour, "size": 12},
                           bgcolor="rgba(255,255,255,0.8)")
    fig.update_xaxes(type="log", title=_noise_axis_title(result.family))
    fig.update_yaxes(title=metric.label)
    fig.update_layout(title={"text": f"{fam.cape}: {metric.words} against the aggregate noise", "y": 0.97,
                             "yanchor": "top"}, height=460, margin={"t": 70},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def _summary_lines(result: PlanResult, check: CheckResult | None) -> list[str]:
    lines = [result.forward_sentence, result.sentence]
    for scheme, a in result.answers.items():
        name = sentence_start(scheme_words(result.family, scheme))
        if a.answer is not None and a.predicted is not None:
            lines.append(f"{name}: at the answer the studies average {a.predicted:.3g}, a share {a.probability:.0%} "
                         f"of them reach {a.reach:.3g} (95 % of them between {a.predicted_range[0]:.3g} and "
                         f"{a.predicted_range[1]:.3g})" + ("" if a.bits is None else
                                                           f"; its values travel as integers, {a.bits} bits each")
                         + ".")
        for note in a.notes:
            lines.append(f"{name}: {note}.")
    if check is not None:
        lines.append(f"Check ({check.runs} runs per point, seed {check.seed}): {check.sentence}")
    return lines


def plan_html(result: PlanResult, check: CheckResult | None = None) -> str:
    """A one-file HTML report: the summary (computed sentences), the question and data, the curve (plotly.js embedded,
    opens offline), the limits, the guarantees of every view and the check."""
    rec = json_ready(plan_records(result, check))
    esc = html.escape
    parts = [f"<h1>{esc(FAMILIES[result.family].cape)}: what do we need?</h1>",
             "<h2>Summary</h2><ul>" + "".join(f"<li>{esc(printable(t))}</li>" for t in _summary_lines(result, check))
             + "</ul>",
             f"<p>Data: {esc(rec['data'])}. Scenario: {result.scenario.n_sites} sites, "
             f"{esc(result.scenario.calibration)} calibration, {esc(result.scenario.neighbouring)} neighbours. "
             f"Seed {rec['seed']}, dpcore {esc(rec['version'])}.</p>",
             curve_figure(result, check).to_html(include_plotlyjs=True, full_html=False),
             "<h2>Limits of the method here</h2><ul>" + "".join(f"<li>{esc(t)}</li>" for t in rec["limits"]
                                                                + rec["caveats"])
             + "</ul>", f"<h2>Privacy at the answers (every view; design: {esc(DESIGNS[result.design])})</h2>"
             "<table border='1' cellpadding='4'><tr>" + "".join(f"<th>{esc(h)}</th>" for h in GUARANTEE_HEADER)
             + "</tr>"]
    for row in guarantee_rows(result):
        parts.append("<tr>" + "".join(f"<td>{esc(str(row[h]))}</td>" for h in GUARANTEE_HEADER) + "</tr>")
    parts.append("</table>")
    if check is not None:
        parts.append("<h2>Check</h2><table border='1' cellpadding='4'><tr><th>scheme</th><th>where</th>"
                     "<th>value</th><th>studies that met the target</th><th>95 % CI</th><th>against p</th></tr>")
        for p in check.points:
            parts.append(f"<tr><td>{esc(scheme_words(result.family, p.scheme))}</td><td>{p.where}</td>"
                         f"<td>{p.value:g}</td>"
                         f"<td>{p.met_count} of {len(p.values)} ({p.share:.0%})</td><td>{p.lo:.0%} to {p.hi:.0%}</td>"
                         f"<td>{'met' if p.met else 'missed'}</td></tr>")
        parts.append("</table>")
    body = "\n".join(parts)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>dpcore planner report</title></head>"
            f"<body style='font-family: sans-serif; max-width: 60em; margin: auto'>{body}</body></html>")


GUARANTEE_HEADER = ("scheme", "site", "view", "colluders", "eps", "delta", "promised", "certified")
"""The columns of the guarantee table (page and HTML report)."""


def guarantee_rows(result: PlanResult) -> list[dict[str, Any]]:
    """One row per scheme and view at the answers: the site the view is worst for, the audit's exact eps at the
    promised delta and its delta at the promised eps, the promise, and whether every site keeps it."""
    rows = []
    for scheme, views in json_ready(result.guarantees()).items():
        for g in views:
            rows.append({"scheme": scheme_words(result.family, scheme), "site": g.get("site") or "",
                         "view": g["view"],
                         "colluders": g["colluders"], "eps": _short(g.get("eps")), "delta": _short(g.get("delta")),
                         "promised": f"({_short(g.get('promised_eps'))}, {_short(g.get('promised_delta'))})",
                         "certified": "certified" if g["certified"] else "NOT certified"})
    return rows


def _short(x: Any) -> str:
    if x is None:
        return "unbounded"
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


def _literal(value: Any) -> str:
    """Python source that evaluates to ``value`` (JSON data): ``json.loads(<repr of its JSON>)``, so no text of the
    user's (a site's or a file's name) is ever pasted into the code (issue 29: escape by construction)."""
    return f"json.loads({json.dumps(value)!r})"


def _data_lines(loader: DataLoader | None, upload_name: str | None) -> list[str]:
    """The script's head that defines ``dataset``: the file read again by the data's loader (its first argument, or
    the file's name beside the script), a bundled set loaded by name, or None (the settings' own data)."""
    if loader is None and upload_name:
        loader = DataLoader(module=upload_dataset.__module__, function=upload_dataset.__name__, file=upload_name)
    if loader is None:
        return ["", "dataset = None"]
    if not (loader.module.isidentifier() or all(p.isidentifier() for p in loader.module.split("."))) \
            or not loader.function.isidentifier():
        raise ValueError(f"not a loader: {loader.module}.{loader.function}")
    lines = [f"from {loader.module} import {loader.function}", ""]
    if loader.file is None:
        return lines + [f"dataset = {loader.function}(**{_literal(loader.options)})"]
    name = Path(upload_name or loader.file).name or "data"
    return lines + [f"DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / {name!r}",
                    "if not DATA.is_file():",
                    "    sys.exit(f'the data file {DATA} is not there: give its path as the first argument')",
                    f"dataset = {loader.function}(DATA.read_bytes(), DATA.name, **{_literal(loader.options)})"]


FIND_DPCORE = """try:
    import dpcore  # noqa: F401
except ModuleNotFoundError:
    for folder in (HERE, *HERE.parents, Path(GENERATED_IN)):
        if (folder / "dpcore" / "__init__.py").is_file():
            sys.path.insert(0, str(folder))
            break
    else:
        sys.exit("dpcore is not installed: run 'pip install .' in the CAPE project's folder (or this script with its "
                 ".venv/bin/python), then run this script again")"""
"""The script's head: dpcore as installed, else from a folder above the script or the project it was written from,
else one line saying how to install it."""


def plan_script(result: PlanResult, check_runs: int, upload_name: str | None = None) -> str:
    """A Python script that repeats the check's fresh studies (each scheme at its answer and just short of it) with
    dpcore and prints ``PLANNER-CHECK`` and their values as JSON: the same numbers as
    :func:`dpcore.planner.check_plan` with ``check_runs`` studies. It runs from any folder (it finds dpcore, or says
    in one line how to install it). The data are read again by the data's :class:`~dpcore.family.DataLoader` (an
    upload: from the script's first argument, or the file's name beside it; ``upload_name`` overrides that name, and
    without a loader names a CSV read as :func:`dpcore.pca.planning.upload_dataset` reads it). Every value the script
    holds (settings, scenarios, names) is embedded as a literal of its JSON (:func:`_literal`)."""
    hooks = FAMILIES[result.family].planner
    points = {key: [scheme, run.to_dict()] for key, (scheme, _, _, _, run) in check_points(result).items()}
    code, settings = hooks.script(result.data)
    header = (f"Repeats a dpcore planner check: {printable(result.sentence)}\n\nGenerated by dpcore "
              f"{result.to_dict()['version']}; seed {result.seed}. Run: python this_file.py"
              + (" [path to the data file]" if (upload_name or (result.data.loader and result.data.loader.file))
                 else "") + "\nIt prints " + SCRIPT_MARK.strip() + " and the value of every fresh study as JSON.")
    lines = [repr(header), "import json", "import math", "import sys", "from pathlib import Path", "",
             "HERE = Path(__file__).resolve().parent", f"GENERATED_IN = {str(_project_folder())!r}", FIND_DPCORE, "",
             "from dpcore.scenario import scenario_from_dict  # noqa: E402",
             "from dpcore.seeding import PLANNER_CHECK_STREAM, study_seed  # noqa: E402"]
    lines += [f"{line}  # noqa: E402" for line in hooks.imports.rstrip("\n").split("\n")]
    lines += _data_lines(result.data.loader, upload_name)
    lines += ["", f"SETTINGS = {_literal(settings)}", f"POINTS = {_literal(points)}", f"SEED = {int(result.seed)}",
              f"DATA_SEED = {int(result.data.seed)}",
              f"RUNS = {int(check_runs)}", "results = {}", "for key, (scheme, scenario_dict) in POINTS.items():",
              "    scenario = scenario_from_dict(scenario_dict)", "    values = []", "    for r in range(RUNS):",
              "        seed = study_seed(SEED, PLANNER_CHECK_STREAM, r)"]
    lines += ["        " + line for line in code.rstrip("\n").split("\n")]
    lines += ["        values.append(None if value is None or not math.isfinite(value) else float(value))",
              "    results[key] = values", "print(" + repr(SCRIPT_MARK) + " + json.dumps(results))", ""]
    return "\n".join(lines)


def _project_folder() -> Path:
    """The folder that holds the dpcore package this process runs (the exported script looks there)."""
    return Path(sys.modules[__name__.split(".")[0]].__file__).resolve().parents[1]
