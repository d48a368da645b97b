"""The loopback demonstration (``make federated``, ``python -m capefed.ops.launch``): the demonstration's files, a
:class:`capefed.ops.federation.Federation` on 127.0.0.1, one run of the app, every process stopped, the in-process
simulation of the same rounds beside the real ones, and the printout."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..app.dp import MAX_JSON_BYTES, InputError, federated_variant, federated_variants, load_json, read_file
from ..app.messages import message_log_round, write_log
from ..app.rounds import settings_from_run_config
from .certificates import make_security_files
from .demo import DEMO_SITES, Demo, identical, prepare_demo, print_report, simulate
from .federation import DEFAULT_RUN_TIMEOUT, Federation, FederationError
from .procgroup import TASK_POLL_SECONDS

__all__ = ["LoopbackRun", "main", "report", "run_loopback"]


@dataclass(frozen=True, kw_only=True)
class LoopbackRun:
    """What :func:`run_loopback` did: the outcomes of the real run (JSON dicts), the in-process simulations,
    timings and where the logs are."""

    demo: Demo
    rounds: list[dict[str, Any]]
    simulated: dict[str, Any]
    seconds: dict[str, float]
    log_path: Path
    leftover: list[int]
    tag: str
    run_status: str = ""


def run_loopback(workdir: str | Path, *, run_config: Mapping[str, Any] | None = None,
                 timeout: float = DEFAULT_RUN_TIMEOUT, tag: str | None = None, reap_all: bool = False,
                 secure: bool = False, task_poll: float = TASK_POLL_SECONDS, agn_path: str = "dense",
                 noise: str = "helper", drop: str | None = None, extra_nodes: Sequence[Mapping[str, Any]] = (),
                 demo: Demo | None = None, workers: bool = True, short_waits: bool = True) -> LoopbackRun:
    """Prepare the demonstration, start the federation, run the app, stop everything, simulate the same rounds.
    Writes ``outcome.json`` (the aggregator's), ``simulation.json`` (the in-process run's aggregates and outputs),
    ``message-log.json`` and ``summary.json`` (configurations, timings, processes left) into ``workdir``.
    ``reap_all``: this process does nothing else (the command line), so it adopts and reaps every process below it.
    ``secure``: TLS with a throw-away CA and SuperNode authentication with registered keys (``certificates``).
    ``noise``: "helper" or "helper-free"; ``drop``: a site killed after the noise was set up and before it releases;
    ``extra_nodes``: more SuperNodes (e.g. a stranger's); ``demo``: files prepared already (several runs);
    ``workers``: one long-running ClientApp process per node (``capefed.ops.worker``), or Flower's one per message;
    ``short_waits``: SuperNodes as ``capefed.ops.supernode`` (shorter idle wait and heartbeat), or
    ``flower-supernode``."""
    workdir = Path(workdir)
    if drop and not workers:
        raise FederationError(f"--drop {drop}: the failing site is a worker (capefed.ops.dropout); it needs workers")
    demo = demo or prepare_demo(workdir / "data", agn_path=agn_path, noise=noise)
    config = dict(demo.run_config)
    config.update(run_config or {})
    out = workdir / "outcome.json"
    out.unlink(missing_ok=True)
    config["out"] = str(out)
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    nodes = [*demo.nodes, *extra_nodes]
    security = make_security_files(workdir / "security", [str(n["name"]) for n in nodes]) if secure else None
    federation = Federation(workdir, nodes, reap_all=reap_all, security=security, task_poll=task_poll, drop=drop,
                            workers=workers, short_waits=short_waits)
    if tag:
        federation.tag = tag
    try:
        federation.start()
        seconds["start"] = time.perf_counter() - start
        run_started = time.time()
        federation.run_app(config, timeout)
        seconds["run"] = time.perf_counter() - start - seconds["start"]
        if out.exists():  # from the start of the run to the aggregator's output file (before the status check)
            seconds["to_output"] = out.stat().st_mtime - run_started
    finally:
        cpu = federation.cpu_seconds()
        stop_start = time.perf_counter()
        leftover = federation.stop()
        seconds["stop"] = time.perf_counter() - stop_start
        (workdir / "summary.json").write_text(json.dumps(
            {"nodes": list(demo.nodes), "run_config": config, "truth": demo.truth, "seconds": seconds,
             "run_status": federation.run_status,
             "cpu_seconds_alive_at_stop": cpu, "leftover": leftover, "tag": federation.tag}, indent=1))
    if not out.exists():
        raise FederationError(f"the aggregator wrote no outcome to {out}; see {workdir / 'logs'}")
    rounds = load_json(read_file(out, MAX_JSON_BYTES, "the aggregator's outcome"), "aggregator's outcome")["rounds"]
    simulated = {}
    simulate_start = time.perf_counter()
    for outcome in rounds:
        if outcome["status"] == "released":
            settings = settings_from_run_config(config, outcome["algorithm"], "simulation")
            simulated[outcome["algorithm"]] = simulate(demo.nodes, settings, outcome.get("dropped", ()))
    seconds["simulate"] = time.perf_counter() - simulate_start
    (workdir / "simulation.json").write_text(json.dumps(
        {name: {"aggregates": {k: v.tolist() for k, v in sim.aggregates.items()},
                "outputs": {k: np.asarray(v).tolist() for k, v in sim.outputs.items()}}
         for name, sim in simulated.items()}))
    log_path = workdir / "message-log.json"
    write_log(log_path, [message_log_round(r) for r in rounds])
    return LoopbackRun(demo=demo, rounds=rounds, simulated=simulated, seconds=seconds, log_path=log_path,
                       leftover=leftover, tag=federation.tag, run_status=federation.run_status)


def _on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def report(result: LoopbackRun, out=sys.stdout) -> bool:
    """Print timings, every round's message log and result beside the in-process run; True when all released."""
    print(f"federation up in {result.seconds['start']:.1f} s, rounds done in {result.seconds['run']:.1f} s, "
          f"stopped in {result.seconds['stop']:.1f} s" + (f"; STILL RUNNING: {result.leftover}"
                                                         if result.leftover else "; no process left")
          + f"; the SuperLink reports the run {result.run_status or 'unknown'}", file=out)
    sites = [n for n in result.demo.nodes if n["role"] == "site"]
    pooled = np.hstack([np.loadtxt(n["pca-data"], delimiter=",", ndmin=2).T for n in sites])
    ok = not result.leftover
    for outcome in result.rounds:
        simulated = result.simulated.get(outcome["algorithm"])
        print_report(outcome, simulated, result.demo.truth, pooled, out=out)
        ok &= outcome["status"] == "released" and identical(outcome, simulated)
    print(f"\nmessage log (JSON): {result.log_path}", file=out)
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.launch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="federated-run",
                        help="where the data files, logs and the message log go (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_RUN_TIMEOUT, help="seconds the whole run may take")
    parser.add_argument("--tag", help="the token every started process carries in CAPEFED_RUN_TAG (default: random)")
    parser.add_argument("--secure", action="store_true",
                        help="TLS (a throw-away CA) and SuperNode authentication (registered keys) instead of insecure "
                             "mode")
    parser.add_argument("--noise", default="helper", metavar="{" + ",".join(federated_variants()) + "}",
                        help="who makes the zero-sum noise: a helper node, or the sites by a secure sum; the variants "
                             "of dpcore's noise-variant table that the Flower round runs (default: %(default)s)")
    parser.add_argument("--drop", choices=[s["name"] for s in DEMO_SITES], default=None,
                        help="kill this site's process after the noise was set up and before it releases; the round "
                             "completes with the survivors")
    parser.add_argument("--algorithms", default="capePCA,capeAGN",
                        help="the rounds to run, comma-separated (default: %(default)s)")
    parser.add_argument("--agn-path", choices=("dense", "projected"), default="dense",
                        help="capeAGN's third-moment path: dense (D x D x D noise) or projected (K x K x K noise, W "
                             "sent to the helper; one exchange more) (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        federated_variant(args.noise, "--noise")
    except InputError as exc:  # one line, before any process starts
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # Ctrl-C, kill and a closed terminal all end in the same clean-up (SIGINT explicitly: a shell may have started
    # this process with it ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_sigterm)
    workdir = Path(args.workdir).resolve()
    mode = "TLS and SuperNode authentication" if args.secure else "insecure mode"
    print(f"starting a SuperLink, a helper and three sites on 127.0.0.1, {mode}, {args.noise} noise"
          + (f", site {args.drop} killed after the noise set-up" if args.drop else "") + f" (files in {workdir})",
          flush=True)
    try:
        result = run_loopback(workdir, timeout=args.timeout, tag=args.tag, reap_all=True, secure=args.secure,
                              agn_path=args.agn_path, noise=args.noise, drop=args.drop,
                              run_config={"algorithms": args.algorithms})
    except FederationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; every process was stopped", file=sys.stderr)
        return 130
    return 0 if report(result) else 1
