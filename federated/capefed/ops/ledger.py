"""A site's ledger for its operator (docs/federated.md, "The ledger"):

    python -m capefed.ops.ledger create --eps 4 --delta 1e-4     # at enrolment, once
    python -m capefed.ops.ledger show                           # every event, the budget, the rounds
    python -m capefed.ops.ledger verify                          # exit 0 when the chain verifies, 1 when it does not

The site's name and the files come from its ``node.env`` (``--node-env``, default ``/etc/capefed/node.env``: the
node configuration's ``name``, ``ledger`` and ``ledger-key``), or from ``--site``, ``--ledger`` and ``--key``.
``create`` makes the ledger key (32 random bytes, readable by the service user alone) and the ledger with its total
budget; it refuses when either exists. The other commands read the ledger with its key and check every event.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..app import dp
from .opsfiles import CommandError, give, node_config, owner_for, run_command, write_private

__all__ = ["describe_ledger", "main"]

DEFAULT_ENV = "/etc/capefed/node.env"


def _where(args: argparse.Namespace) -> tuple[str, Path, Path]:
    config: dict[str, Any] = {}
    if not (args.site and args.ledger and args.key):
        if not Path(args.node_env).exists():
            raise CommandError(f"{args.node_env} does not exist: name the site, the ledger and its key (--site, "
                               "--ledger, --key) or the node's environment file (--node-env)")
        config = node_config(args.node_env)
    site, ledger, key = args.site or config.get("name"), args.ledger or config.get("ledger"), \
        args.key or config.get("ledger-key")
    if not (isinstance(site, str) and isinstance(ledger, str) and isinstance(key, str)):
        raise CommandError("the node configuration names no name, ledger and ledger-key")
    return site, Path(ledger), Path(key)


def describe_ledger(ledger: dp.Ledger) -> list[str]:
    """A verified ledger in words: its id and head, the budget, the studies approved and every round."""
    b = dp.budget(ledger)
    head = ledger.head
    lines = [f"ledger {ledger.path} of site {ledger.site}: verified ({head.count} events, every link and MAC "
             "checked)",
             f"id {head.ledger[:16]}...; head: {head.count} events, last {head.head[:16]}...",
             f"total budget: eps = {b.eps_total:g} at delta = {b.delta_total:g}",
             f"spent for good: eps = {b.spent_eps:.4g}; spent or reserved: eps = {b.counted_eps:.4g} "
             f"({b.rounds} round(s), {b.open_rounds} not settled, {b.void_stages} stage(s) void); remaining: "
             f"mu = {b.remaining_mu:.4g}"]
    for event in ledger.of_kind("approve"):
        d = event.data
        lines.append(f"approved study {d['study'][:16]}... {d['title'][:80]!r}: {d['rounds']} round(s) of each "
                     f"algorithm, at most mu = {d['mu']:.4g} in all")
    for account in dp.round_accounts(ledger).values():
        stages = "; ".join(f"stage {s.stage} " + ("spent" if s.stage in account.spent else
                                                  "void" if account.settled else "reserved")
                           + f" (mu = {s.mu:.4g}, worst view {s.view})" for s in account.stages)
        state = f"settled: {account.reason}" if account.settled else "not settled (counted in full)"
        lines.append(f"round {account.round} ({account.algorithm}, study {account.study[:16]}...): {stages}; "
                     f"{state}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.ledger", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("create", "show", "verify"))
    parser.add_argument("--node-env", default=DEFAULT_ENV, help="the node's environment file (default: %(default)s)")
    parser.add_argument("--site", help="the site's name (default: the node configuration's)")
    parser.add_argument("--ledger", help="the ledger file (default: the node configuration's ledger)")
    parser.add_argument("--key", help="the ledger key file (default: the node configuration's ledger-key)")
    parser.add_argument("--eps", type=float, help="create: the total eps the ledger allows")
    parser.add_argument("--delta", type=float, help="create: the delta at which the total is composed")
    parser.add_argument("--owner", help="create: the user the files belong to (default, run as root: capefed)")
    args = parser.parse_args(argv)

    def run() -> int:
        site, path, key_path = _where(args)
        if args.command == "create":
            if args.eps is None or args.delta is None:
                raise CommandError("create needs the total budget: --eps and --delta")
            for made in (path, key_path):
                if made.exists():
                    raise CommandError(f"{made} exists already: a site's ledger and its key are made once and never "
                                       "replaced")
            owner = owner_for(args.owner)
            key = dp.new_ledger_key()
            # the key first: a ledger is never left without its key (it could then never be read nor made again);
            # a ledger that cannot be made takes the new key with it
            write_private(key_path, (key.hex() + "\n").encode(), owner, 0o400)
            try:
                ledger = dp.create_ledger(path, key, site, args.eps, args.delta)
            except BaseException:
                key_path.unlink(missing_ok=True)
                raise
            for made in (path, path.with_name(path.name + ".lock")):
                give(made, owner, 0o600)
            print(f"made the ledger {path} of site {site}: eps = {args.eps:g} at delta = {args.delta:g}; id "
                  f"{ledger.head.ledger[:16]}...; its key {key_path} (readable by {owner or 'this user'} alone)")
            return 0
        try:
            ledger = dp.read_ledger(path, dp.read_ledger_key(key_path), site)
        except dp.InputError as exc:
            if args.command == "verify":
                print(f"capefed.ops.ledger: NOT VERIFIED: {exc}")
                return 1
            raise
        lines = describe_ledger(ledger)
        print("\n".join(lines if args.command == "show" else lines[:2]))
        return 0

    return run_command("capefed.ops.ledger", run)


if __name__ == "__main__":
    raise SystemExit(main())
