"""capePCA and capeAGN with every party in its own process, on Flower (issue 14).

Two subpackages, and nothing under ``app`` imports ``ops`` (``tools/check_layout.py`` checks it):

* :mod:`capefed.app`: the Flower app, what runs inside Flower (the code package every party reviewed): the
  ServerApp (``server_app``, the aggregator's round ``rounds`` with its steps ``agg_*``), the ClientApp
  (``client_app``, ``node``: the helper and the sites, ``helper`` and ``site*``), the secret sharing and its byte
  layout (``shares``), the messages (``messages``, ``wire``), the trust between the parties (``trust``, ``sealing``,
  ``studyfile``) and ``dp``, the one place that imports dpcore.
* :mod:`capefed.ops`: the operator's tools around it: the commands of a deployment (``certificates``, ``keys``,
  ``roster``, ``nodes``, ``ledger``, ``study``, ``runner``), the processes a host runs (``supernode``, ``worker``,
  ``gateway``), the loopback federation and its demonstration (``launch``, ``loopback``, ``federation``, ``demo``,
  ``memory``: an in-process transport) and the drop-out demonstration's failing site (``dropout``).
"""
