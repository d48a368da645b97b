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


# --- the deployment guide and tests/test_federated_consortium.py cannot drift apart ---

def _guide() -> str:
    text = (ROOT / "docs" / "federated.md").read_text()
    return text[text.index("## Deploying it"):text.index("## One round, message by message")]


def test_every_fenced_block_of_the_guide_is_one_the_consortium_test_runs():
    """Every fenced block of the deployment guide is a step tests/test_federated_consortium.py runs (its info string
    says where: tests/consortium_hosts.guide_blocks reads exactly those), in the guide's order; a block without one
    would be a step no test runs."""
    from consortium_hosts import guide_blocks  # noqa: PLC0415

    fences = re.findall(r"^```(.*)$", _guide(), re.M)
    opening = fences[0::2]
    assert all(f == "" for f in fences[1::2]), fences
    wheres = re.compile(r"(sh (on-aggregator|on-each-site|on-every-host)|text copy)")
    assert all(wheres.fullmatch(f) for f in opening), [f for f in opening if not wheres.fullmatch(f)]
    blocks = guide_blocks(ROOT / "docs" / "federated.md")
    assert len(blocks) == len(opening) >= 12
    consortium = (ROOT / "tests" / "test_federated_consortium.py").read_text()
    assert "guide_blocks(DOC)" in consortium and "for block in blocks:" in consortium


def test_every_command_of_the_guide_exists_and_every_unit_it_starts_is_installed():
    """Each ``python -m capefed.ops.X`` of the guide's blocks names a module with a ``main``; each ``systemctl enable
    --now`` names units of federated/deploy/systemd; each copy line is ``host:path -> host:path``."""
    import importlib  # noqa: PLC0415

    from consortium_hosts import guide_blocks  # noqa: PLC0415

    units = {p.stem for p in (ROOT / "federated" / "deploy" / "systemd").glob("*.service")}
    modules, started = set(), set()
    for block in guide_blocks(ROOT / "docs" / "federated.md"):
        if block.where == "copy":
            for line in filter(None, map(str.strip, block.text.splitlines())):
                assert re.fullmatch(r"(aggregator|north):/[\w./-]+ -> (aggregator|north):/[\w./-]+", line), line
            continue
        modules |= set(re.findall(r"python -m (capefed(?:\.\w+)+)", block.text))
        for line in re.findall(r"^systemctl enable --now (.*)$", block.text, re.M):
            started |= set(line.split())
    assert started == units
    assert {"capefed.ops.certificates", "capefed.ops.keys", "capefed.ops.roster", "capefed.ops.nodes",
            "capefed.ops.ledger", "capefed.ops.study", "capefed.ops.runner"} <= modules
    for name in modules:
        assert callable(getattr(importlib.import_module(name), "main", None)), name


def _shown(block: str) -> list[str]:
    return block.replace("\\\n", " ").split()


def test_the_unit_commands_the_guide_shows_are_the_units_own():
    """The indented commands steps 3 and 5 show (what each unit runs) are each unit's ExecStart, word for word (the
    environment's bin folder and systemd's ${...} aside)."""
    from consortium_hosts import parse_unit  # noqa: PLC0415

    shown = [_shown(b) for b in re.findall(r"^((?:    (?:flower-superlink|python -m capefed\.ops\.(?:gateway|supernode|"
                                            r"worker)).*\n(?:        .*\n)*))", _guide(), re.M)]
    assert len(shown) == 4, shown
    for path in sorted((ROOT / "federated" / "deploy" / "systemd").glob("*.service")):
        (exec_start,) = parse_unit(path)["ExecStart"]
        words = exec_start.replace("/opt/capefed/venv/bin/", "").replace("${", "\"$").replace("}", "\"").split()
        assert words in shown, (path.name, words)
