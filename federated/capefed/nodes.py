"""The registered SuperNodes with their names, for the aggregator's operator (docs/federated.md, "Deploying it",
step 4):

    python -m capefed.nodes consortium

``flwr supernode register KEY consortium --name north`` stores the name with the node, but Flower 1.41's ``flwr
supernode list`` shows only node ids and the owner. This command asks the SuperLink's Control API the same question
(``ListNodes``, through the operator's connection in ``$FLWR_HOME/config.toml``) and prints every node's id, name,
status and when its status last changed: which site is online is then visible by name.
"""

from __future__ import annotations

import argparse

from .opsfiles import run_command

__all__ = ["list_nodes", "main"]


def list_nodes(connection: str) -> list[tuple[int, str, str, str]]:
    """(node id, name, status, since) of every node the SuperLink knows (pinned Flower's Control API)."""
    from flwr.cli.flower_config import read_superlink_connection  # noqa: PLC0415
    from flwr.cli.utils import init_http_client_from_connection  # noqa: PLC0415
    from flwr.proto.control_pb2 import ListNodesRequest  # noqa: PLC0415

    client = init_http_client_from_connection(read_superlink_connection(connection))
    try:
        nodes = client.ListNodes(ListNodesRequest()).nodes_info
    finally:
        client.close()
    return [(n.node_id, n.name or "(no name)", n.status,
             n.last_activated_at if n.status == "online" else n.last_deactivated_at or n.registered_at)
            for n in nodes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.nodes", description=__doc__.split("\n\n")[0])
    parser.add_argument("connection", help="the SuperLink connection of the operator's flwr configuration")
    args = parser.parse_args(argv)

    def run() -> int:
        rows = list_nodes(args.connection)
        for node_id, name, status, since in sorted(rows, key=lambda r: r[1]):
            print(f"{name:<16} {status:<12} node {node_id} (since {since or 'registration'})")
        return 0

    return run_command("capefed.nodes", run)


if __name__ == "__main__":
    raise SystemExit(main())
