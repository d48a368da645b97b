"""The rules of the layout check that read the project's source (tools/check_layout.py runs them): the families and
their names, branches on a family's name, an algorithm's title or a noise variant's name outside their own module, the
Flower app importing the operator's tools, JSON parses outside the one reader, and tables defined twice."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "dpcore"
MIN_TABLE_KEYS = 3
"""Table-like constants with fewer names are too small to call a table (two models, two charts, ...)."""
FAMILY_MODULE = "family.py"
"""A subpackage of dpcore with this module is an algorithm family."""
JSON_READER = Path(PACKAGE) / "textio.py"
FLOWER_APP = Path("federated") / "capefed" / "app"
"""The Flower app (what runs inside Flower); the operator's tools beside it are ``capefed/ops``."""
JSON_PARSERS = ("loads", "load", "JSONDecoder")
VARIANTS_DIR = Path(PACKAGE) / "cape" / "variants"
"""The noise-variant table's modules: each defines its variants (``NoiseVariant(name=...)``)."""
NOISE_WORDS = ("noise", "variant")
"""A name or attribute holding a noise variant's name contains one of these (``noise``, ``settings.noise``, ...)."""
MAX_CACHED_FILES = 2048
"""Files whose walked syntax trees are kept (:func:`walk_file`); the check reads about 340 (dpcore, the pages, app.py,
federated)."""


@functools.lru_cache(maxsize=MAX_CACHED_FILES)
def _walked(text: str, name: str) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(ast.parse(text, name)))


def walk_file(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the file's syntax tree in :func:`ast.walk`'s order (the module first). Each rule reads every
    file: a text is parsed and walked once, not once per rule (the nodes are shared: no rule changes them);
    ``walk_file.cache_clear()`` lets them go."""
    return _walked(path.read_text(encoding="utf-8"), str(path))


walk_file.cache_clear = _walked.cache_clear  # type: ignore[attr-defined]


def families(root: Path = ROOT) -> tuple[str, ...]:
    """The algorithm families' packages: the subpackages of dpcore with a ``family.py``."""
    return tuple(sorted(p.parent.name for p in (root / PACKAGE).glob(f"*/{FAMILY_MODULE}")))


def family_names(root: Path = ROOT) -> dict[str, str]:
    """Each family's name (the ``name=`` of its ``Family`` in ``family.py``, what a branch would compare with; the
    package's name when it gives none) -> its package (capeAGN: "otd" -> "agn")."""
    out = {}
    for package in families(root):
        names = _keyword_strings(root / PACKAGE / package / FAMILY_MODULE, "Family", "name") or {package}
        out.update(dict.fromkeys(names, package))
    return out


def project_files(root: Path = ROOT) -> list[Path]:
    """Every Python file the table and branch checks read: dpcore, the pages, app.py and the Flower app."""
    found = sorted((root / PACKAGE).rglob("*.py")) + sorted((root / "pages").rglob("*.py"))
    found += [p for p in [root / "app.py"] if p.exists()] + sorted((root / "federated").rglob("*.py"))
    return found


def _is_family_expression(node: ast.AST) -> bool:
    """A name or attribute that holds a family's name: ``family``, ``spec.family``, ``self.family``, ..."""
    if isinstance(node, ast.Name):
        return "family" in node.id.lower()
    if isinstance(node, ast.Attribute):
        return "family" in node.attr.lower()
    return False


def _strings(node: ast.AST) -> set[str]:
    """The string constants of a constant or of a tuple, list or set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _branch_families(node: ast.AST, names: set[str]) -> set[str]:
    """The families a node branches on: a comparison of a family expression with family names, an inline table
    of family names indexed by a family expression, or a ``match`` on a family expression with family cases."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        if any(_is_family_expression(o) for o in operands):
            return set().union(*(_strings(o) for o in operands)) & names
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Dict) and _is_family_expression(node.slice):
        return set().union(*(_strings(k) for k in node.value.keys if k is not None)) & names
    elif isinstance(node, ast.Match) and _is_family_expression(node.subject):
        found: set[str] = set()
        for case in node.cases:
            for sub in ast.walk(case.pattern):
                if isinstance(sub, ast.MatchValue):
                    found |= _strings(sub.value)
        return found & names
    return set()


def family_branches(root: Path = ROOT, files: list[Path] | None = None) -> list[str]:
    """Every family-specific branch outside that family's own package (module docstring)."""
    packages = family_names(root)
    names = set(packages)
    problems = []
    for path in project_files(root) if files is None else files:
        rel = path.relative_to(root)
        own = rel.parts[1] if len(rel.parts) > 2 and rel.parts[0] == PACKAGE else None
        for node in walk_file(path):
            found = {name for name in _branch_families(node, names) if packages[name] != own}
            if found:
                problems.append(f"{rel}:{node.lineno}: family-specific branch on {', '.join(sorted(found))} outside "
                                "that family's package (make it a field of the family's Family or table entry)")
    return problems


def _keyword_strings(path: Path, call: str, keyword: str) -> set[str]:
    """The string constants given as ``keyword=`` to calls of ``call`` in one file."""
    found = set()
    for node in walk_file(path):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == call:
            found |= {k.value.value for k in node.keywords if k.arg == keyword and isinstance(k.value, ast.Constant)
                      and isinstance(k.value.value, str)}
    return found


def cape_titles(root: Path = ROOT) -> dict[str, str]:
    """Each family's CAPE title (the ``cape=`` of its ``Family`` in ``family.py``) -> the family's package path."""
    return {title: f"{PACKAGE}/{family}/" for family in families(root)
            for title in _keyword_strings(root / PACKAGE / family / FAMILY_MODULE, "Family", "cape")}


def variant_names(root: Path = ROOT) -> dict[str, str]:
    """Each noise variant's name (the ``name=`` of a ``NoiseVariant`` in :data:`VARIANTS_DIR`) -> its module path."""
    return {name: str(path.relative_to(root)) for path in sorted((root / VARIANTS_DIR).glob("*.py"))
            for name in _keyword_strings(path, "NoiseVariant", "name")}


def _is_noise_expression(node: ast.AST) -> bool:
    word = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return any(w in word.lower() for w in NOISE_WORDS)


def _compared_strings(node: ast.AST, noise_only: bool) -> set[str]:
    """The strings a comparison or ``match`` compares with (for ``noise_only``: only when the other side is a noise
    expression)."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        if noise_only and not any(_is_noise_expression(o) for o in operands):
            return set()
        return set().union(*(_strings(o) for o in operands))
    if isinstance(node, ast.Match) and (not noise_only or _is_noise_expression(node.subject)):
        return {v for case in node.cases for sub in ast.walk(case.pattern) if isinstance(sub, ast.MatchValue)
                for v in _strings(sub.value)}
    return set()


def title_variant_branches(root: Path = ROOT, files: list[Path] | None = None) -> list[str]:
    """Every branch on a CAPE title outside its family's package and on a noise variant's name outside the module
    that defines it (module docstring)."""
    titles, variants = cape_titles(root), variant_names(root)
    problems = []
    for path in project_files(root) if files is None else files:
        rel = str(path.relative_to(root))
        for node in walk_file(path):
            for title in sorted(_compared_strings(node, False) & set(titles)):
                if not rel.startswith(titles[title]):
                    problems.append(f"{rel}:{node.lineno}: title branch on {title!r} outside {titles[title]} "
                                    "(make it a field or hook of the family)")
            for name in sorted(_compared_strings(node, True) & set(variants)):
                if rel != variants[name]:
                    problems.append(f"{rel}:{node.lineno}: variant branch on {name!r} outside {variants[name]} "
                                    "(read the variant's table entry, dpcore.cape.noise_variant)")
    return problems


def app_imports_ops(root: Path = ROOT) -> list[str]:
    """Imports of ``capefed.ops`` (absolute or relative) from a module under ``FLOWER_APP`` (module docstring)."""
    out = []
    for path in sorted((root / FLOWER_APP).rglob("*.py")):
        package = list(path.relative_to(root / FLOWER_APP.parent.parent).with_suffix("").parts[:-1])
        for node in walk_file(path):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                targets = [module] + [f"{module}.{a.name}" for a in node.names]
            else:
                continue
            if any(t == "capefed.ops" or t.startswith("capefed.ops.") for t in targets):
                out.append(f"{path.relative_to(root)}:{node.lineno}: the Flower app imports the operator's tools "
                           "(capefed.ops); capefed/app never imports capefed/ops")
    return out


def _json_parser_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Names bound to a parser of the json module (``from json import loads``, ``import json as j``: ``j``) among a
    file's nodes."""
    names = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module == "json":
            names |= {a.asname or a.name for a in node.names if a.name in JSON_PARSERS}
        elif isinstance(node, ast.Import):
            names |= {f"{a.asname}." for a in node.names if a.name == "json" and a.asname}
    return names


def json_parses(root: Path = ROOT, files: list[Path] | None = None) -> list[str]:
    """Every call of the JSON parser outside :data:`JSON_READER` (module docstring)."""
    problems = []
    for path in project_files(root) if files is None else files:
        rel = path.relative_to(root)
        if rel == JSON_READER:
            continue
        nodes = walk_file(path)
        aliases = _json_parser_names(nodes)
        modules = {"json"} | {a[:-1] for a in aliases if a.endswith(".")}
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("decode", "raw_decode"):
                func = func.value.func if isinstance(func.value, ast.Call) else func.value
            parses = (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                      and func.value.id in modules and func.attr in JSON_PARSERS) or (
                isinstance(func, ast.Name) and func.id in aliases)
            if parses:
                problems.append(f"{rel}:{node.lineno}: a JSON parse outside the one bounded reader; read JSON with "
                                "dpcore.textio.load_json (size, depth, numbers and strings bounded before parsing)")
    return problems


def _table_items(value: ast.AST) -> tuple[str, dict[str, str]] | None:
    """("dict" or "sequence", {name: the value's source form}) of a table-like literal, or None."""
    if isinstance(value, ast.Dict) and value.keys and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                         for k in value.keys):
        return "dict", {k.value: ast.dump(v) for k, v in zip(value.keys, value.values, strict=True)}
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)) and value.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return "sequence", {e.value: "" for e in value.elts}
    return None


def table_constants(path: Path, root: Path = ROOT) -> list[tuple[str, str, dict[str, str]]]:
    """(where, kind, items) of every module-level table-like constant of one file (``__all__`` is not a table)."""
    out = []
    for node in walk_file(path)[0].body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(target, ast.Name) or target.id == "__all__" or value is None:
            continue
        found = _table_items(value)
        if found is not None and len(found[1]) >= MIN_TABLE_KEYS:
            out.append((f"{path.relative_to(root)}:{node.lineno} {target.id}", found[0], found[1]))
    return out


def duplicate_tables(root: Path = ROOT, files: list[Path] | None = None) -> tuple[list[str], list[str]]:
    """(tables defined twice, parallel tables) among the project's table-like constants (module docstring).

    Defined twice: two literals of the same kind with the same names and, for dicts, the same values, or a dict whose
    entries are all entries of another (a partial copy). Parallel: dicts over the same names (or a part of them)
    with different values - several tables of one kind of thing; reported, not failed."""
    tables = [t for path in (project_files(root) if files is None else files) for t in table_constants(path, root)]
    twice, parallel = [], []
    for i, (where, kind, items) in enumerate(tables):
        for other_where, other_kind, other_items in tables[i + 1:]:
            keys, other_keys = set(items), set(other_items)
            if kind != other_kind or not (keys <= other_keys or other_keys <= keys):
                continue
            shared = sorted(keys & other_keys)
            if kind == "sequence" and keys != other_keys:
                continue
            if all(items[k] == other_items[k] for k in shared):
                how = "the same entries" if keys == other_keys else "a part of the same entries"
                twice.append(f"{where} and {other_where}: a table defined twice ({how}: {', '.join(shared)}); "
                             "define it once and read it")
            else:
                parallel.append(f"{where} and {other_where}: parallel tables over {', '.join(shared)}")
    return twice, parallel
