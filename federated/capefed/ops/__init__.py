"""The operator's tools around the Flower app (:mod:`capefed.app`): the commands of a deployment, the processes a
host runs, the loopback federation and its demonstrations."""
