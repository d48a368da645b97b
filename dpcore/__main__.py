"""``python -m dpcore``: see :mod:`dpcore.cli`."""

from .cli import main

raise SystemExit(main())
