"""Layout check for dpcore: import layering, import cycles, module and function sizes.

Run: ``python tools/check_layout.py`` (``make lint`` does; ``tests/test_layout.py`` runs the same checks).

Fails (exit status 1) on
* an import from a lower layer to a higher one, or between two packages of the same layer (``LAYERS`` below;
  docs/architecture.md draws it);
* an import cycle between modules (every import counts, also those inside functions, which is where the cycles
  of the flat layout hid);
* a dpcore module importing streamlit or flwr (the library stays UI- and framework-free);
* a module of dpcore over ``MAX_MODULE_LINES`` lines, or a function over ``MAX_FUNCTION_LINES`` lines without a
  reason comment ``# long: <why>`` on its ``def`` line or on the line above it;
* a family-specific branch outside that family's package (docs/architecture.md, "The family contract"): a
  comparison of a family expression (a name or attribute called ``family``, ``spec.family``, ...) with a family's
  name (``family == "pca"``, ``spec.family in ("otd", "lda")``, ``match family``), or an inline table indexed by one
  (``{"pca": ..., "otd": ...}[family]``), anywhere in dpcore, the pages, app.py or the Flower app. The families are
  the subpackages of dpcore with a ``family.py`` (the module that defines ``FAMILY``); everything that differs
  between them is a field of their ``Family``;
* a table-like constant defined twice: two module-level literals (a dict with string keys, or a tuple, list or set
  of strings, of at least ``MIN_TABLE_KEYS`` names) with the same entries, or a dict whose entries are all entries
  of another (a partial copy, like a page's own labels of a family's metrics), in dpcore, the pages, app.py or the
  Flower app. A table is defined once; everything else reads or derives it. Parallel tables (dicts over the same
  names with different values: several tables of one kind of thing) are reported, not failed;
* a JSON parse outside the one bounded reader (``JSON_READER``, :func:`dpcore.textio.load_json`) in dpcore, the pages,
  app.py or the Flower app: a call of ``json.loads``, ``json.load``, ``json.JSONDecoder`` (or its ``decode`` and
  ``raw_decode``), or of one of them imported by name. Text that only mentions ``json.loads`` (the code a report or
  a planner export writes) is not a call and passes.

* a module over ``MAX_MODULE_LINES`` lines or a class over ``MAX_CLASS_LINES`` lines anywhere in dpcore, the pages,
  app.py or the Flower app (``federated/``);
* a branch on an algorithm's title or a noise variant's name outside its own module (issue 33): a comparison with (or
  a ``match`` case of) a family's CAPE title (the ``cape=`` of its ``family.py``: ``== "capePCA"``) outside that
  family's package, or of a noise expression (a name or attribute containing ``noise`` or ``variant``) with a noise
  variant's name (the ``name=`` of a ``NoiseVariant`` in ``dpcore/cape/variants/``: ``noise == "helper"``) outside the
  module that defines that variant. What differs is a field of the family or of the variant's table entry;
* an import of the operator's tools (``capefed.ops``) from the Flower app (``federated/capefed/app``; also inside a
  function): the app is what runs inside Flower and every party reviews; the tools around it import it, never back.

Functions over ``MAX_FUNCTION_LINES`` lines in the pages and app.py are reported, not failed: they are scripts, read top
to bottom. ``ALLOWED`` names the offenders that another task removes (each with its reason); they are reported, and
an entry that no longer matches anything is reported as stale.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the rules beside this file, however it is loaded
from layout_rules import (  # noqa: E402
    FLOWER_APP,
    JSON_READER,
    PACKAGE,
    ROOT,
    app_imports_ops,
    duplicate_tables,
    families,
    family_branches,
    family_names,
    json_parses,
    title_variant_branches,
    walk_file,
)

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_CLASS_LINES = 150
REASON_MARK = "# long:"
FORBIDDEN = ("streamlit", "flwr")
"""The one module that may call the JSON parser (every other JSON input reads through its ``load_json``)."""

ALLOWED: dict[str, str] = {
    # (path, kind of problem) -> reason, for an offender another task is removing (then delete the line). Empty: the
    # federated round was made generic (dpcore.federation.FEDERATED_ALGORITHMS, NoiseVariant fields).
}
"""Known offenders outside this task's files, by "path: kind" (kinds: title branch, variant branch, module size,
class size); reported, not failed. An entry nothing matches any more is reported as stale."""

# Bottom to top. A module may import its own package and any package of a lower layer; nothing else of dpcore.
# "bottom" holds the top-level modules (validation, limits, linalg, seeding, summary); "root" the package's
# __init__ and __main__ (the command's entry point).
LAYERS: list[tuple[str, ...]] = [
    ("bottom",),
    ("privacy",),
    ("data",),
    ("scenario",),
    ("cape",),
    ("tensor", "family"),
    ("pca", "agn", "lda"),
    ("experiments", "federation"),
    ("planner", "reports"),
    ("cli",),
    ("root", "otd"),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
FAMILY_LAYER = "pca"
"""A package with a ``family.py`` (a family) sits at this package's layer, listed in LAYERS or not: a new family is
its package and nothing else (docs/adding-a-family.md)."""


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. dpcore.pca.table
    path: Path
    is_package: bool

    @property
    def package(self) -> str:
        """The layer unit: the subpackage (pca, agn, ...), "bottom" for top-level modules, "root" for dpcore's
        own __init__ and __main__."""
        parts = self.name.split(".")
        if len(parts) == 1 or parts[1] == "__main__":
            return "root"
        if len(parts) == 2 and not self.is_package:
            return "bottom"
        return parts[1]


def discover(root: Path = ROOT) -> dict[str, Module]:
    """Every module of the package under ``root``."""
    modules = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        name = ".".join(parts)
        modules[name] = Module(name, path, is_package)
    return modules


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module named by a (possibly relative) ``from X import ...``."""
    if node.level == 0:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: Module, modules: dict[str, Module]) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the file, at any depth, resolved to a module of the package
    when it names one (``from . import x`` names the submodule x); other imports are kept as written."""
    found = []
    for node in walk_file(module.path):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in modules else target, node.lineno))
    return found


def layer_ranks(root: Path = ROOT) -> dict[str, int]:
    """Every package's layer: :data:`RANK`, and every family's package at the families' layer."""
    return {**RANK, **{name: RANK[FAMILY_LAYER] for name in families(root)}}


def layering_problems(modules: dict[str, Module], root: Path = ROOT) -> list[str]:
    """Upward or sideways imports between layers, and imports of UI frameworks."""
    problems = []
    ranks = layer_ranks(root)
    for module in modules.values():
        where = module.path.relative_to(root)
        for target, line in imports_of(module, modules):
            top = target.split(".")[0]
            if top in FORBIDDEN:
                problems.append(f"{where}:{line}: dpcore must not import {top}")
            if target not in modules:
                continue
            source, dest = module.package, modules[target].package
            if source == dest:
                continue
            if dest not in ranks or source not in ranks:
                problems.append(f"{where}:{line}: package {dest or source} has no layer")
            elif ranks[dest] >= ranks[source]:
                kind = "sideways" if ranks[dest] == ranks[source] else "upward"
                problems.append(f"{where}:{line}: {kind} import of {target} "
                                f"({source} may import only layers below it)")
    return problems


def cycles(modules: dict[str, Module]) -> list[list[str]]:
    """Strongly connected components with more than one module (or a module importing itself): Tarjan."""
    graph = {name: sorted({t for t, _ in imports_of(m, modules) if t in modules}) for name, m in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def size_problems(paths: list[Path], root: Path = ROOT, *, functions: bool = True,
                  modules: bool = True) -> list[str]:
    """Modules over MAX_MODULE_LINES lines and classes over MAX_CLASS_LINES lines (``modules``), and functions over
    MAX_FUNCTION_LINES lines without a reason comment (``functions``)."""
    problems = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        where = path.relative_to(root)
        if modules and len(lines) > MAX_MODULE_LINES:
            problems.append(f"{where}: {len(lines)} lines (more than {MAX_MODULE_LINES})")
        for node in walk_file(path):
            if modules and isinstance(node, ast.ClassDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_CLASS_LINES:
                    problems.append(f"{where}:{node.lineno}: class {node.name} has {length} lines (more than "
                                    f"{MAX_CLASS_LINES})")
            if not functions or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = node.end_lineno - node.lineno + 1
            if length <= MAX_FUNCTION_LINES:
                continue
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            nearby = lines[max(first - 2, 0): node.lineno]
            if not any(REASON_MARK in line for line in nearby):
                problems.append(f"{where}:{node.lineno}: function {node.name} has {length} lines (more than "
                                f"{MAX_FUNCTION_LINES}) and no `{REASON_MARK} <reason>` comment")
    return problems


def _allowed_key(line: str) -> str | None:
    """The :data:`ALLOWED` key a problem line falls under, or None."""
    path = line.split(":", 1)[0]
    for kind, mark in (("title branch", ": title branch"), ("variant branch", ": variant branch"),
                       ("class size", " lines (more than " + str(MAX_CLASS_LINES)),
                       ("module size", " lines (more than " + str(MAX_MODULE_LINES))):
        if mark in line and (kind != "class size" or ": class " in line):
            key = f"{path}: {kind}"
            return key if key in ALLOWED else None
    return None


def check(root: Path = ROOT) -> tuple[list[str], list[str], dict[str, Module]]:
    """(failures, report lines, modules) for the project under ``root`` (the walked files are let go at the end)."""
    try:
        return _check(root)
    finally:
        walk_file.cache_clear()


def _check(root: Path) -> tuple[list[str], list[str], dict[str, Module]]:
    modules = discover(root)
    failures = layering_problems(modules, root)
    failures += [f"import cycle: {' -> '.join(c)}" for c in cycles(modules)]
    failures += size_problems([m.path for m in modules.values()], root)
    failures += family_branches(root)
    failures += json_parses(root)
    twice, parallel = duplicate_tables(root)
    failures += twice
    scripts = sorted((root / "pages").rglob("*.py")) + [p for p in [root / "app.py"] if p.exists()]
    flower = sorted((root / "federated").rglob("*.py"))
    failures += size_problems(scripts + flower, root, functions=False)
    failures += title_variant_branches(root)
    failures += app_imports_ops(root)
    allowed = [line for line in failures if _allowed_key(line) is not None]
    used = {_allowed_key(line) for line in allowed}
    failures = [line for line in failures if _allowed_key(line) is None]
    report = size_problems(scripts, root, modules=False) + parallel
    report += [f"allowed ({ALLOWED[_allowed_key(line)]}): {line}" for line in allowed]
    report += [f"stale entry of ALLOWED (nothing matches it; delete it): {key}" for key in ALLOWED if key not in used]
    return failures, report, modules


def main() -> int:
    try:
        failures, report, modules = _check(ROOT)
        n_edges = sum(len(imports_of(m, modules)) for m in modules.values())
    finally:
        walk_file.cache_clear()
    for line in report:
        print(f"report: {line}")
    for line in failures:
        print(f"error: {line}")
    branches = sum("family-specific branch" in line for line in failures)
    tables = sum("a table defined twice" in line for line in failures)
    parses = sum("a JSON parse outside" in line for line in failures)
    titles = sum(": title branch" in line for line in failures)
    variants = sum(": variant branch" in line for line in failures)
    sizes = sum("lines (more than" in line for line in failures)
    allowed = sum(line.startswith("allowed (") for line in report)
    app_ops = sum("the Flower app imports the operator's tools" in line for line in failures)
    print(f"check_layout: families {', '.join(sorted(family_names()))}: {branches} family-specific branch(es) outside "
          f"their package, {tables} table(s) defined twice, {parses} JSON parse(s) outside {JSON_READER}")
    print(f"check_layout: dpcore, pages, app.py, federated: {titles} title branch(es), {variants} variant branch(es) "
          f"outside their module, {sizes} module(s) over {MAX_MODULE_LINES} lines, class(es) over "
          f"{MAX_CLASS_LINES} lines or unmarked long function(s); {allowed} allowed; {app_ops} import(s) of "
          f"capefed.ops from {FLOWER_APP}")
    print(f"check_layout: {len(modules)} dpcore modules, {n_edges} imports, layers "
          f"{' < '.join('/'.join(names) for names in LAYERS)}: "
          + ("OK" if not failures else f"{len(failures)} problem(s)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
