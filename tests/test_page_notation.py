"""One notation in all visible text: the scenario pages show τ_c, ε, δ, σ_eff, μ_s, Δ_s, never their ASCII spelling.

Every page (and the states that show dpcore's explanations, warnings and errors) is rendered with AppTest; every
text a user can read is collected from the element tree: titles, markdown, captions, alerts, widget labels, options
and help texts, metric labels and help, table and chart texts (trace names, axis titles, annotations). LaTeX
sources and code spans (file names, commands, JSON field names) are exempt."""

from __future__ import annotations

import json
import re

import pytest
from conftest import app_test

from dpcore.scenario import preset_scenario

ASCII_NOTATION = re.compile(r"\btau_|\btau\b|\bsigma_eff\b|\bmu_s\b|\beps\b|\beps_|\bdelta_s\b|\bDelta_s\b|\bsqrt\("
                            r"|\bsum_s\b|\^2\b|\bPhi\b")
CODE = re.compile(r"`[^`]*`")
TEXT_FIELDS = {"body", "label", "help", "placeholder", "options", "caption", "text"}
CHART_TEXT_KEYS = {"name", "text", "title"}


def _chart_texts(spec: str) -> list[str]:
    """Trace names, titles and annotations of a plotly spec; the labels of a graphviz (DOT) source."""
    try:
        figure = json.loads(spec)
    except json.JSONDecodeError:
        return re.findall(r'label="([^"]*)"', spec)
    out: list[str] = []

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key in CHART_TEXT_KEYS:
            out.append(value)

    walk(figure)
    return out


def visible_texts(at) -> list[str]:
    """Every text of the page a user can read (module docstring)."""
    texts: list[str] = []

    def collect(node) -> None:
        proto = getattr(node, "proto", None)
        kind = type(node).__name__
        if proto is not None and kind != "Latex" and not (hasattr(proto, "element_type") and
                                                          getattr(proto, "element_type", 0) == 2):
            for field, value in proto.ListFields():
                if field.name == "spec" and isinstance(value, str):
                    texts.extend(_chart_texts(value))
                elif field.name in TEXT_FIELDS:
                    if isinstance(value, str):
                        texts.append(value)
                    elif not hasattr(value, "ListFields"):
                        texts.extend(str(v) for v in value)
        value = getattr(node, "value", None) if kind in ("Dataframe", "Table") else None
        if value is not None:
            config = json.loads(proto.columns) if getattr(proto, "columns", "") else {}
            for column in value.columns:  # the header shown is the column's label when it has one
                texts.append(str(config.get(str(column), {}).get("label", column)))
                texts.append(str(config.get(str(column), {}).get("help") or ""))
            texts.extend(str(v) for v in value.index)
            for column in value.columns:
                if value[column].dtype == object:
                    texts.extend(str(v) for v in value[column])
        for child in getattr(node, "children", {}).values():
            collect(child)

    collect(at.main)
    collect(at.sidebar)
    return texts


def ascii_notation(at) -> list[str]:
    return [text for text in visible_texts(at) if ASCII_NOTATION.search(CODE.sub("", text))]


def _page(path: str, scenario=None):
    at = app_test()
    if scenario is not None:
        at.session_state["scenario"] = scenario
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("path", ["pages/home.py", "pages/sites.py", "pages/noise_design.py", "pages/gain.py",
                                  "pages/epsilon.py", "pages/protocol.py", "pages/glossary.py"])
def test_default_pages_use_the_symbols(path):
    at = _page(path)
    assert len(visible_texts(at)) > 5
    assert ascii_notation(at) == []


def test_noise_design_states_with_dpcore_texts_use_the_symbols():
    at = _page("pages/noise_design.py", preset_scenario("equal"))
    at.radio(key="nd_solver").set_value("closed-form").run()  # the infeasible closed form, explained by dpcore
    assert at.error and ascii_notation(at) == []
    at.radio(key="nd_solver").set_value("collusion-robust").run()
    assert ascii_notation(at) == []
    at.radio(key="nd_solver").set_value("general").run()
    at.toggle(key="nd_at_floor").set_value(False).run()
    at.number_input(key="nd_tau_c").set_value(1e-4).run()  # below the floor: warnings from dpcore
    assert at.warning and ascii_notation(at) == []
    at.number_input(key="nd_e_scale").set_value(0.5).run()
    assert at.error and ascii_notation(at) == []


def test_protocol_and_sites_states_use_the_symbols():
    at = _page("pages/protocol.py")
    for algorithm in ("capePCA", "capeAGN"):
        at.radio(key="pr_algorithm").set_value(algorithm).run()
        assert ascii_notation(at) == []
    at = _page("pages/sites.py", preset_scenario("default").with_sites(eps=1.5))  # classic caveat at eps >= 1
    assert at.warning and ascii_notation(at) == []


def test_the_check_finds_ascii_notation():
    """The collector and the pattern are not blind: a page text with the ASCII spelling is caught."""
    at = _page("pages/glossary.py")
    texts = visible_texts(at)
    assert any("τ_c" in t for t in texts)
    for bad in ("tau_c = 0.1", "eps = 0.5", "sqrt(2)", "sigma_eff", "mu_s tau_s", "x^2 + 1"):
        assert ASCII_NOTATION.search(bad), bad
    for fine in ("`tau_c`", "epsilon", "deltas", "taught"):
        assert not ASCII_NOTATION.search(CODE.sub("", fine)), fine
