"""The Flower app: the ServerApp (:mod:`capefed.app.server_app`), the ClientApp (:mod:`capefed.app.client_app`) and
everything they run. It never imports :mod:`capefed.ops` (the operator's tools)."""
