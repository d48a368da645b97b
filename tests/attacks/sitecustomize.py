"""Test-only fault injection for the real-process attack tests (tests/test_federated_attacks.py); never part of a
deployment.

Python imports ``sitecustomize`` at start-up from the first directory on its path that holds one. The attack tests
start the SuperLink (whose ServerApp processes inherit its environment) and the sites' workers with this directory
first on ``PYTHONPATH`` and ``CAPEFED_ATTACK_FILE`` naming a JSON control file; every other process, and every
deployment, has neither, and then this module does nothing. With them it installs an import hook that hands
``capefed.app.server_app`` (the aggregator) and ``capefed.app.siterelease`` / ``capefed.app.sitesetup`` (a site) to
:mod:`capefed_attacks` once they are imported, which patches them as the control file says for the current run.
"""

import os
import sys

if os.environ.get("CAPEFED_ATTACK_FILE"):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import capefed_attacks

    capefed_attacks.install_hook()
