"""The rows of the federated-algorithm table (:mod:`dpcore.federation.algorithms`), one module per family, each
defining ``ENTRIES``: capePCA (:mod:`.pca`) and capeAGN (:mod:`.agn`)."""
