"""docs/federated.md's threat model matches the tests: every row names an attack, its defence and tests that exist,
and every attack issue 30 lists has a row."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = ("false drop-out claim after a release", "false claim before a release", "slow site", "held back",
           "one claim per site", "two survivor sets", "capeAGN equivocation", "1e300", "small order",
           "malformed or oversized Flower record", "code package", "worker killed", "never answers")


def _defined_tests() -> set[str]:
    names = set()
    for path in (ROOT / "tests").glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return names


def _rows() -> list[list[str]]:
    text = (ROOT / "docs" / "federated.md").read_text()
    table = text[text.index("## Threat model"): text.index("## Failure behaviour")]
    lines = [line for line in table.splitlines() if line.startswith("| ")][2:]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_every_row_of_the_threat_model_names_tests_that_exist():
    defined = _defined_tests()
    rows = _rows()
    assert len(rows) >= len(ATTACKS)
    for attack, defence, tests in rows:
        assert attack and defence, attack
        named = re.findall(r"\b(test_[a-z0-9_]+)\b", tests)
        files = re.findall(r"\b(test_[a-z0-9_]+)\.py\b", tests)
        assert named or files, attack
        for name in named:
            if name not in files:
                assert name in defined, (attack, name)
        for name in files:
            assert (ROOT / "tests" / f"{name}.py").exists(), (attack, name)
    for attack in ATTACKS:
        assert any(attack in row[0] for row in rows), attack
