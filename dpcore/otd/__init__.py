"""Deprecated name of :mod:`dpcore.agn`, the capeAGN family's package (renamed in issue 33; the command stays
``dpcore otd`` and the family's key ``"otd"``).

Kept only so that what users already hold keeps running: scripts exported by the capeAGN report before the rename
(``from dpcore.otd import METRICS, OtdSettings, SyntheticSpec, compare_algorithms``) and code written from the old
docs (``dpcore.otd.upload_problem``, ``from dpcore.otd.problem import OtdSettings``). Importing it warns
(DeprecationWarning) and hands out the very objects of :mod:`dpcore.agn` - its public names and every submodule
(``dpcore.otd.problem`` is ``dpcore.agn.problem``) - so nothing is loaded twice. Nothing in the repository imports it.
"""

import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys
import warnings as _warnings

from .. import agn as _agn

_warnings.warn("dpcore.otd is deprecated: the capeAGN family's package is dpcore.agn (same names)",
               DeprecationWarning, stacklevel=2)
__all__ = list(_agn.__all__)
globals().update({_name: getattr(_agn, _name) for _name in __all__})
for _info in _pkgutil.walk_packages(_agn.__path__, f"{_agn.__name__}."):
    _module = _importlib.import_module(_info.name)
    _sys.modules.setdefault(__name__ + _info.name[len(_agn.__name__):], _module)
    if "." not in _info.name[len(_agn.__name__) + 1:]:
        globals()[_info.name.rsplit(".", 1)[1]] = _module
__path__: list[str] = []
"""No files of its own: every submodule is dpcore.agn's, registered above."""
