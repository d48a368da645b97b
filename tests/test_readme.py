"""README.md against what it describes: its lesson against the one list of steps Home shows (pages.shared.catalog.
LESSON), the pages it says show the headline against the pages that draw it, and what it says a real run protects
against against docs/federated.md's threat model (quoted by tools/readme_threats.py)."""

from __future__ import annotations

import importlib.util
import re

import pytest
from conftest import ROOT

from pages.shared.catalog import LESSON, PAGES

README = (ROOT / "README.md").read_text(encoding="utf-8")
TITLES = {p.title: p.path for p in PAGES}


def _tool():
    spec = importlib.util.spec_from_file_location("readme_threats", ROOT / "tools" / "readme_threats.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(text: str) -> str:
    """One line, the README's math for eps as the app writes it."""
    return " ".join(text.replace("$\\varepsilon$", "ε").split())


def lesson_steps(readme: str = README) -> list[tuple[str, str]]:
    """(title, text) of every numbered step of the README's lesson ('**N. Title.** text ...')."""
    lesson = readme.split("## A five-minute lesson with the dashboard", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^\*\*(\d+)\. (.+?)\.\*\*", lesson, flags=re.M)
    steps = []
    for i in range(1, len(parts), 3):
        assert int(parts[i]) == len(steps) + 1, f"README step {parts[i]} out of order"
        steps.append((_plain(parts[i + 1]), _plain(parts[i + 2])))
    return steps


def test_the_readme_lesson_has_the_steps_home_shows():
    """Issue 36: Home's lesson listed five pages and left out Topic models, Privacy-utility and the Planner. Both are
    now the one list LESSON: the same titles in the same order, and each step of the README names (as *Title*) every
    page the step visits."""
    steps = lesson_steps()
    assert [title for title, _ in steps] == [step.title for step in LESSON]
    for (title, text), step in zip(steps, LESSON, strict=True):
        for path in step.pages:
            page = next(p.title for p in PAGES if p.path == path)
            assert f"*{page}*" in text, (title, page)
    visited = {path for step in LESSON for path in step.pages}
    reference = {"pages/protocol.py", "pages/glossary.py", "pages/families.py"}  # reference pages, not lesson steps
    assert visited >= {p.path for p in PAGES} - reference, "a page no step visits"


def test_the_home_page_draws_the_lesson_from_the_same_list():
    from conftest import app_test

    at = app_test()
    lesson = next(m.value for m in at.markdown if "Press the buttons above" in m.value)
    for i, step in enumerate(LESSON, 1):
        assert f"{i}. **{step.title}**" in lesson
    assert f"{len(LESSON) + 1}. " not in lesson


def test_the_pages_the_readme_says_show_the_headline_are_those_that_draw_it():
    """Issue 36: README step 1 said the headline is the same "on every page"; four pages draw it."""
    clause = _plain(README).split("One sentence, the same on ", 1)[1].split(", says what", 1)[0]
    named = {TITLES[t] for t in re.findall(r"\*([^*]+)\*", clause)}
    drawing = {p.path for p in PAGES if "headline(scenario)" in (ROOT / p.path).read_text(encoding="utf-8")}
    assert named == drawing
    dashboard = _plain((ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8"))
    said = dashboard.split("**One headline.** ", 1)[1].split(" show the same sentence", 1)[0]
    short = {"Sites": "pages/sites.py", "Gain": "pages/gain.py", "Home": "pages/home.py",
             "Noise design": "pages/noise_design.py"}
    assert {short[n] for n in re.split(r", | and ", said)} == drawing


def test_what_the_readme_says_a_real_run_protects_against_is_the_threat_model_of_the_federated_docs():
    """Issue 36: README's "Before you trust a number" said the helper must be trusted and that a drop-out leaves the
    conventional scheme's accuracy, against docs/federated.md and `make federated NOISE=helper-free DROP=east`. The
    README now quotes docs/federated.md's threat model; when that section changes, run
    `python tools/readme_threats.py --write`."""
    tool = _tool()
    assert tool.current() == tool.render(), ("README.md's threat model differs from docs/federated.md's: run "
                                             "python tools/readme_threats.py --write")
    federated = (ROOT / "docs" / "federated.md").read_text(encoding="utf-8")
    rows = tool.table(federated)
    quoted = tool.current()
    assert len(rows) >= 2 and all(f"| {row[0]} |" in quoted or row[0] == "" for row in rows)
    outside = README.replace(quoted, "")
    table_text = " ".join(" ".join(row) for row in rows).lower()
    # every kind of real run the README names elsewhere has its place in the threat model it quotes
    for kind, in_table in (("helper-free", "helper-free"), ("DROP=", "drop-out")):
        if kind in outside:
            assert in_table in table_text, (kind, table_text)
    for claim in ("helper must be trusted", "falls back to the conventional scheme"):  # what the issue found
        assert claim not in _plain(outside)


def test_the_quote_is_refused_without_a_threat_model_table_and_follows_a_changed_one():
    tool = _tool()
    with pytest.raises(tool.ThreatModelError, match="no section"):
        tool.render("# Flower\n\nnothing here\n")
    with pytest.raises(tool.ThreatModelError, match="no table"):
        tool.render("## Threat model\n\nThe aggregator is honest.\n\n## Next\n")
    changed = ("## Threat model\n\n| threat | protected |\n| --- | --- |\n| a lying aggregator | yes, see "
               "[audit](math/audit.md) |\n\nNot covered: traffic analysis.\n\n## Failure behaviour\n")
    text = tool.render(changed)
    assert "> | a lying aggregator | yes, see [audit](docs/math/audit.md) |" in text
    assert "> Not covered: traffic analysis." in text and "Failure behaviour" not in text
    assert tool.table(changed) == [["threat", "protected"], ["a lying aggregator", "yes, see [audit](math/audit.md)"]]
