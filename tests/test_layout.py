"""The layout check of ``make lint`` (tools/check_layout.py) passes on dpcore and catches what it is for: upward and
sideways imports between layers, import cycles (also through imports inside functions), UI imports in the library,
and over-long modules and functions."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("check_layout", ROOT / "tools" / "check_layout.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@functools.cache
def _check_of_the_tree():
    """The check of the repository itself (failures, report, modules), made once for the tests that read it (about
    8 CPU s each)."""
    return _tool().check(ROOT)


def test_dpcore_imports_strictly_downward_without_cycles():
    failures, _, modules = _check_of_the_tree()
    assert failures == []
    packages = {m.package for m in modules.values()}
    assert packages == {"bottom", "privacy", "data", "scenario", "cape", "tensor", "family", "pca", "agn", "lda",
                        "experiments", "federation", "planner", "reports", "cli", "root", "otd"}
    # otd: the deprecated name of dpcore.agn, at the top so that nothing in dpcore may import it
    assert not [m for m in modules.values() if m.package == "otd" and not m.is_package]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_check_finds_upward_sideways_and_cyclic_imports(tmp_path):
    tool = _tool()
    long_body = "".join(f"    x{i} = {i}\n" for i in range(tool.MAX_FUNCTION_LINES + 1))
    _write(tmp_path, {
        "dpcore/__init__.py": "",
        "dpcore/validation.py": "",
        "dpcore/privacy/__init__.py": "",
        "dpcore/privacy/calibration.py": "from ..cape.design import x\n",  # upward
        "dpcore/cape/__init__.py": "",
        "dpcore/cape/design.py": "x = 1\n\ndef f():\n    from .audit import y\n",  # cycle via a local import
        "dpcore/cape/audit.py": "from .design import x\ny = x\n",
        "dpcore/pca/__init__.py": "from ..agn import z\n",  # sideways
        "dpcore/agn/__init__.py": "z = 1\nimport streamlit\n",
        "dpcore/agn/long.py": "def g():\n" + long_body + "\n\ndef h():  # long: a table read top to bottom\n"
                              + long_body,
    })
    failures, _, _ = tool.check(tmp_path)
    text = "\n".join(failures)
    assert "dpcore/privacy/calibration.py:1: upward import of dpcore.cape.design" in text
    assert "dpcore/pca/__init__.py:1: sideways import of dpcore.agn" in text
    assert "import cycle: dpcore.cape.audit -> dpcore.cape.design" in text
    assert "dpcore/agn/__init__.py:2: dpcore must not import streamlit" in text
    assert "function g has" in text and "function h" not in text
    assert len(failures) == 5


def test_a_family_is_known_by_its_name_not_its_package(tmp_path):
    """capeAGN's package is dpcore/agn but its name (the key a branch would compare with) is "otd": a branch on "otd"
    outside dpcore/agn fails, inside it passes, and "agn" is no family name."""
    tool = _tool()
    _write(tmp_path, {
        "dpcore/__init__.py": "",
        "dpcore/agn/__init__.py": "",
        "dpcore/agn/family.py": "FAMILY = Family(name='otd', cape='capeAGN')\n",
        "dpcore/agn/own.py": "def f(family):\n    return family == 'otd'\n",
        "dpcore/experiments/__init__.py": "",
        "dpcore/experiments/engine.py": "def g(family):\n    return family == 'otd' or family == 'agn'\n",
    })
    assert tool.families(tmp_path) == ("agn",) and tool.family_names(tmp_path) == {"otd": "agn"}
    problems = tool.family_branches(tmp_path)
    assert [p.split(": family-specific")[0] for p in problems] == ["dpcore/experiments/engine.py:2"]
    assert "branch on otd outside" in problems[0]


def test_the_check_finds_family_specific_branches_outside_the_family(tmp_path):
    """Every form of a branch on a family's name fails outside that family's package (in dpcore, the pages and the
    Flower app); a comparison with a name that is not a family, and a family's own package, pass."""
    tool = _tool()
    _write(tmp_path, {
        "dpcore/__init__.py": "",
        "dpcore/pca/__init__.py": "",
        "dpcore/pca/family.py": "FAMILY = 1\n",
        "dpcore/pca/own.py": "def f(family):\n    return family == 'pca'\n",  # its own package: allowed
        "dpcore/otd/__init__.py": "",
        "dpcore/otd/family.py": "FAMILY = 2\n",
        "dpcore/cape/__init__.py": "",
        "dpcore/cape/gain.py": "def g(family):\n    return family == 'one-large'\n",  # not a family's name
        "dpcore/experiments/__init__.py": "",
        "dpcore/experiments/engine.py": (
            "def run(spec, family):\n"
            "    if spec.family == 'pca':\n"                      # line 2: equality
            "        return 1\n"
            "    elif spec.family in ('otd', 'lda'):\n"           # line 4: membership
            "        return {'pca': 1, 'otd': 2}[family]\n"      # line 5: inline table indexed by it
            "    match family:\n"                                 # line 6: match
            "        case 'otd':\n"
            "            return 3\n"
            "    return 'pca' != spec.family\n"                   # line 9: constant first
        ),
        "pages/page.py": "family = 'pca'\nif family == 'otd':\n    pass\n",
        "federated/app.py": "def f(family_name):\n    return family_name == 'pca'\n",
    })
    assert tool.families(tmp_path) == ("otd", "pca")
    problems = tool.family_branches(tmp_path)
    where = sorted(line.split(": family-specific")[0] for line in problems)
    assert where == ["dpcore/experiments/engine.py:2", "dpcore/experiments/engine.py:4",
                     "dpcore/experiments/engine.py:5", "dpcore/experiments/engine.py:6",
                     "dpcore/experiments/engine.py:9", "federated/app.py:2", "pages/page.py:2"]
    failures, _, _ = tool.check(tmp_path)
    assert sum("family-specific branch" in line for line in failures) == 7


def test_the_check_finds_a_table_defined_twice_and_reports_parallel_tables(tmp_path):
    """A copied table (the same entries, or a dict whose entries are all another's) fails; tables over the same
    names with other values (parallel tables) are reported; small tuples and __all__ are not tables."""
    tool = _tool()
    _write(tmp_path, {
        "dpcore/__init__.py": "",
        "dpcore/metrics.py": ("LABELS = {'energy': 'captured energy', 'ratio': 'q / q_max', 'distance': 'distance', "
                              "'error': 'q_comp'}\n"
                              "WORDS = {'energy': 'the energy', 'ratio': 'the share', 'distance': 'the distance', "
                              "'error': 'the error'}\n"
                              "NAMES = ('energy', 'ratio', 'distance')\n"
                              "__all__ = ['LABELS', 'WORDS', 'NAMES']\n"
                              "MODELS = ('mog', 'stm')\n"),
        "dpcore/other.py": "__all__ = ['LABELS', 'WORDS', 'NAMES']\nMODELS = ('mog', 'stm')\n",
        "pages/page.py": ("LABELS = {'energy': 'captured energy', 'ratio': 'q / q_max', 'distance': 'distance'}\n"
                          "ORDER = ['distance', 'energy', 'ratio']\n"),
    })
    twice, parallel = tool.duplicate_tables(tmp_path)
    assert len(twice) == 2 and len(parallel) == 2
    assert any(line.startswith("dpcore/metrics.py:1 LABELS and pages/page.py:1 LABELS: a table defined twice (a part")
               for line in twice)
    assert any(line.startswith("dpcore/metrics.py:3 NAMES and pages/page.py:2 ORDER: a table defined twice (the same")
               for line in twice)
    assert any("metrics.py:1 LABELS and dpcore/metrics.py:2 WORDS: parallel tables" in line for line in parallel)
    failures, report, _ = tool.check(tmp_path)
    assert sum("a table defined twice" in line for line in failures) == 2
    assert sum("parallel tables" in line for line in report) == 2


def test_the_check_finds_every_json_parse_outside_the_one_reader(tmp_path):
    """Issue 29: RecursionError escaped from JSON parsed without bounds in five modules. Every form of a call of the
    json module's parser outside dpcore/textio.py fails; text that only mentions json.loads (generated code) and
    json.dumps pass."""
    tool = _tool()
    _write(tmp_path, {
        "dpcore/__init__.py": "",
        "dpcore/textio.py": "import json\n\ndef load_json(t):\n    return json.loads(t)\n",  # the one reader
        "dpcore/ledger.py": "import json\nx = json.loads('1')\ny = json.load(open('f'))\nz = json.dumps(1)\n",
        "dpcore/report.py": "CODE = 'data = json.loads(text)'\n",
        "pages/page.py": "from json import loads as parse\nvalue = parse('[]')\n",
        "federated/capefed/trust.py": ("import json as j\nd = j.JSONDecoder().raw_decode('1')\n"
                                       "e = j.loads('2')\n"),
    })
    problems = tool.json_parses(tmp_path)
    where = sorted(line.split(": a JSON parse")[0] for line in problems)
    assert where == ["dpcore/ledger.py:2", "dpcore/ledger.py:3", "federated/capefed/trust.py:2",
                     "federated/capefed/trust.py:2", "federated/capefed/trust.py:3", "pages/page.py:2"], where
    failures, _, _ = tool.check(tmp_path)
    assert sum("a JSON parse outside" in line for line in failures) == 6


def test_the_check_finds_title_and_variant_branches_and_long_modules_and_classes_everywhere(tmp_path, monkeypatch):
    """Issue 33: a branch on a family's CAPE title outside its package, or on a noise variant's name (compared with a
    noise expression) outside the module that defines it, fails in dpcore, the pages and the Flower app; so does a
    module over MAX_MODULE_LINES lines or a class over MAX_CLASS_LINES lines in any of them. A party role compared
    with "helper" is not a variant branch; the family's own package and the variant's own module pass; an ALLOWED
    entry turns its offender into a report line, and an entry nothing matches is reported as stale."""
    tool = _tool()
    class_body = "".join(f"    x{i} = {i}\n" for i in range(tool.MAX_CLASS_LINES))
    _write(tmp_path, {
        "dpcore/__init__.py": "",
        "dpcore/pca/__init__.py": "",
        "dpcore/pca/family.py": "FAMILY = Family(name='pca', cape='capePCA')\n",
        "dpcore/pca/own.py": "def f(a):\n    return a == 'capePCA'\n",  # its own package
        "dpcore/cape/__init__.py": "",
        "dpcore/cape/variants/__init__.py": "",
        "dpcore/cape/variants/helper.py": ("ENTRIES = (NoiseVariant(name='helper'),)\n"
                                           "def g(noise):\n    return noise == 'helper'\n"),  # its own module
        "dpcore/experiments/__init__.py": "",
        "dpcore/experiments/figures.py": "def h(design):\n    return design in ('capePCA', 'M2 stage')\n",  # line 2
        "pages/protocol.py": ("match algorithm:\n    case 'capePCA':\n        pass\n"  # line 1
                              "role = 'helper'\nif role == 'helper':\n    pass\n"),  # a role, not a variant
        "federated/capefed/agg.py": "def k(s):\n    return s.round.noise != 'helper'\n",  # line 2
        "federated/capefed/big.py": "class Big:\n" + class_body,
        "pages/long.py": "x = 1\n" * (tool.MAX_MODULE_LINES + 1),
    })
    where = sorted(line.split(": ")[0] for line in tool.title_variant_branches(tmp_path))
    assert where == ["dpcore/experiments/figures.py:2", "federated/capefed/agg.py:2", "pages/protocol.py:1"]
    failures, report, _ = tool.check(tmp_path)
    assert sum(": title branch" in line for line in failures) == 2
    assert sum(": variant branch" in line for line in failures) == 1
    assert any(line.startswith("federated/capefed/big.py:1: class Big has") for line in failures)
    assert any(line.startswith("pages/long.py: 501 lines") for line in failures)

    monkeypatch.setattr(tool, "ALLOWED", {"federated/capefed/agg.py: variant branch": "another task",
                                          "federated/capefed/gone.py: title branch": "another task"})
    failures, report, _ = tool.check(tmp_path)
    assert not any(": variant branch" in line for line in failures)
    assert any(line.startswith("allowed (another task): federated/capefed/agg.py:2") for line in report)
    assert any("stale entry of ALLOWED" in line and "gone.py" in line for line in report)


def test_nothing_is_allowed_any_more():
    """The federated round was made generic: the allow-list is empty, and the check of the real tree allows
    nothing (an offender anywhere in dpcore, pages, app.py or federated/ fails the check)."""
    assert _tool().ALLOWED == {}
    failures, report, _ = _check_of_the_tree()
    assert failures == [] and not any(line.startswith("allowed (") for line in report)


def test_the_check_finds_the_flower_app_importing_the_operators_tools(tmp_path):
    """capefed/app never imports capefed/ops: absolute, relative and inside a function are all found; the other way
    round, and ``app`` importing itself, pass."""
    tool = _tool()
    _write(tmp_path, {
        "dpcore/__init__.py": "",
        "federated/capefed/app/__init__.py": "",
        "federated/capefed/app/fine.py": "from . import dp\nfrom .messages import Payload\nimport capefed.app.wire\n",
        "federated/capefed/app/absolute.py": "import os\nfrom capefed.ops.worker import serve\n",  # line 2
        "federated/capefed/app/relative.py": "from ..ops import demo\n",  # line 1
        "federated/capefed/app/lazy.py": "def f():\n    from ..ops.federation import Federation\n",  # line 2
        "federated/capefed/app/package.py": "from capefed import ops\nimport capefed.ops\n",  # lines 1, 2
        "federated/capefed/app/sub/__init__.py": "",
        "federated/capefed/app/sub/deep.py": "from ...ops import launch\nfrom .. import dp\n",  # line 1
        "federated/capefed/ops/__init__.py": "",
        "federated/capefed/ops/tool.py": "from ..app import dp\nfrom capefed.app.rounds import run_round\n",
    })
    where = sorted(line.split(": ")[0] for line in tool.app_imports_ops(tmp_path))
    assert where == ["federated/capefed/app/absolute.py:2", "federated/capefed/app/lazy.py:2",
                     "federated/capefed/app/package.py:1", "federated/capefed/app/package.py:2",
                     "federated/capefed/app/relative.py:1", "federated/capefed/app/sub/deep.py:1"], where
    failures, _, _ = tool.check(tmp_path)
    assert sum("the Flower app imports the operator's tools" in line for line in failures) == 6


def test_nothing_in_the_repository_uses_the_deprecated_name_dpcore_otd():
    """dpcore.otd is only the deprecated name of dpcore.agn, kept for scripts users exported before issue 33: no module,
    stub, page, test, tool, benchmark or Flower app imports it (the stub's ``from .otd.front`` once did)."""
    import re

    pattern = re.compile(r"dpcore[./]otd\b|from \.\.*otd\b|import \.otd\b")
    allowed = {Path("dpcore/otd/__init__.py"), Path("tests/test_layout.py"), Path("tests/test_python_api.py"),
               Path("dpcore/reports/__init__.py")}  # reports/__init__: `from .otd import otd_report`, its own module
    found = [path.relative_to(ROOT) for folder in ("dpcore", "pages", "federated", "tests", "tools", "benchmarks")
             for path in sorted((ROOT / folder).rglob("*.py*")) if path.suffix in (".py", ".pyi")
             and path.relative_to(ROOT) not in allowed and pattern.search(path.read_text(encoding="utf-8"))]
    found += [p.relative_to(ROOT) for p in [ROOT / "app.py"] if pattern.search(p.read_text(encoding="utf-8"))]
    assert found == []
