"""dpcore: distributed differentially private PCA and tensor decomposition with correlated noise (CAPE).

The front door (docs/python-api.md has examples of each): a scenario (``dpcore.Scenario``,
``dpcore.scenario_from_dict``), its noise design and audit (``dpcore.plan_scenario``), each family in one call with
its guarantee per view (``dpcore.capepca``, ``dpcore.capeagn``, ``dpcore.capelda``), bundled and your own data
(``dpcore.load_bundled``, ``dpcore.dataset_from_array``). The names are listed once, in ``dpcore/__init__.pyi``
(also the type checkers' stub); each is imported from its module on first use, so ``import dpcore`` imports
nothing else.

Subpackages follow the papers (docs/architecture.md has the map; docs/math/ the mathematics), import strictly
downward, and are attributes too (``dpcore.pca``): :mod:`~dpcore.privacy` (calibration, sensitivities, noise),
:mod:`~dpcore.data` (uploads, bundled and synthetic data, corpora), :mod:`~dpcore.scenario` (the shared input),
:mod:`~dpcore.cape` (noise designs, gains, the audit, plans), :mod:`~dpcore.tensor` (the tensor toolkit),
:mod:`~dpcore.family` (the family contract), :mod:`~dpcore.pca`, :mod:`~dpcore.agn`, :mod:`~dpcore.lda` (capePCA,
capeAGN, capeLDA and their baselines), :mod:`~dpcore.experiments` (sweeps, presets, figures),
:mod:`~dpcore.federation` (one round party by party), :mod:`~dpcore.cli` (``python -m dpcore``).

Every function that draws noise takes a ``numpy.random.Generator`` (or a seed at the front door).
"""

import os as _os

__version__ = "0.1.0"


def _public_names() -> dict[str, str]:
    """Every public name and the module it comes from, read from the stub's ``from .module import name as name``
    lines (plain string handling: ``import dpcore`` imports no parser)."""
    names = {}
    with open(_os.path.join(_os.path.dirname(__file__), "__init__.pyi"), encoding="utf-8") as stub:
        for line in stub:
            if line.startswith("from ."):
                words = line.split()
                if len(words) != 6 or words[2] != "import" or words[4] != "as" or words[3] != words[5]:
                    raise ImportError(f"dpcore/__init__.pyi: {line.strip()!r} is not 'from .module import name as "
                                      "name'")
                names[words[5]] = __name__ + words[1]
    return names


_PUBLIC = _public_names()
__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (then kept), or a subpackage or module of dpcore. A
    public function is handed out through the front door's one entry (:func:`dpcore.arguments.front_door`): every
    argument checked by type and range before it runs, a bad one an InputError naming it."""
    import importlib
    import importlib.util

    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        if callable(value) and not isinstance(value, type):
            from .arguments import front_door

            value = front_door(value, name)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_DEPRECATED = {"otd": "agn"}
"""Deprecated subpackage names -> their package (importable for what users already hold, not listed by ``dir``)."""


def _subpackages() -> list[str]:
    """dpcore's subpackages (``dpcore.pca``, ...), attributes of the package too; not the deprecated names."""
    here = _os.path.dirname(__file__)
    return [entry.name for entry in _os.scandir(here)
            if not entry.name.startswith("_") and entry.name not in _DEPRECATED
            and _os.path.isfile(_os.path.join(entry.path, "__init__.py"))]


def __dir__() -> list[str]:
    """The public API only (``__all__``: the stub's names and ``__version__``) and the subpackages; never a helper
    or a module this file imports."""
    return sorted({*__all__, *_subpackages()})
