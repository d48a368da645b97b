"""capePCA and capeAGN with every party in its own process, on Flower (issue 14).

Modules: ``dp`` (the one place that imports dpcore), ``sealing`` (HPKE shares), ``messages`` (payloads and the
message log), ``site`` and ``helper`` (what those parties do with a message), ``rounds`` (the aggregator's round,
over any transport), ``memory`` (an in-process transport), ``wire``, ``server_app`` and ``client_app`` (Flower),
``demo`` and ``launch`` (``make federated``).
"""
