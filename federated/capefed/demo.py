"""The demonstration of ``make federated``: three sites, their data files and configurations, the in-process
simulation of the same round, and the printout of what each party sent and received.

Data: the bundled digits (D = 64) for capePCA, centred and divided by the largest sample norm over the whole
set (the papers' preprocessing; it reads the data, so it is not private: a real consortium agrees on a public
norm bound and every site clips to it), split 800 / 600 / 397; for capeAGN a synthetic single-topic-model
corpus (D = 10 words, K = 3 topics, 3-word documents) sampled per site, 20,000 / 15,000 / 10,000 documents.

``python -m capefed.demo`` runs both rounds with the in-process transport (no Flower, no network).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import dp
from .memory import InMemoryTransport, party_node
from .messages import message_log_round
from .rounds import AggregatorSettings, RoundOutcome, run_rounds, settings_from_run_config
from .site import AgnModel, SiteConfig, load_site
from .trust import make_identity, write_roster

__all__ = ["DEMO_SITES", "Demo", "identical", "message_log_round", "prepare_demo", "print_report", "run_in_memory",
           "simulate"]

DEMO_SITES = (
    {"name": "north", "eps": 1.0, "delta": 1e-5, "pca-n": 800, "agn-n": 20_000},
    {"name": "east", "eps": 0.5, "delta": 1e-5, "pca-n": 600, "agn-n": 15_000},
    {"name": "south", "eps": 1.0, "delta": 1e-5, "pca-n": 397, "agn-n": 10_000},
)
DEMO_SEEDS = {"aggregator": 100, "helper": 101, "north": 200, "east": 201, "south": 202}
PCA_K = 5
AGN_DIM, AGN_K, AGN_DOC_LENGTH = 10, 3, 3
MOG_SIGMA2 = 0.05
DATA_SEED = 2024
LEDGER_ROUNDS = 5
"""A demonstration site's ledger allows about this many rounds of its per-round budget (budget-eps = 5 eps_s)."""
LEDGER_DELTA = 1e-4


@dataclass(frozen=True, kw_only=True)
class Demo:
    """Files and settings of the demonstration: one node configuration per party and the run configuration."""

    workdir: Path
    nodes: tuple[dict[str, Any], ...]  # helper first, then the sites
    run_config: dict[str, Any]
    truth: dict[str, Any]


def _agn_files(workdir: Path, sites: Sequence[Mapping[str, Any]], model_kind: str, rng: np.random.Generator
               ) -> tuple[list[Path], dict[str, Any], Any]:
    """Every site's capeAGN data file, the run configuration's capeAGN keys and the true model."""
    model = dp.make_model(model_kind, AGN_DIM, AGN_K, rng, doc_length=AGN_DOC_LENGTH, sigma2=MOG_SIGMA2)
    paths = []
    for site in sites:
        if model_kind == "stm":
            path = workdir / f"{site['name']}-documents.csv"
            np.savetxt(path, dp.sample_stm(model, site["agn-n"], rng), fmt="%d", delimiter=",")
        else:
            path = workdir / f"{site['name']}-mixture.csv"
            np.savetxt(path, dp.sample_mog(model, site["agn-n"], rng), fmt="%.17g", delimiter=",")
        paths.append(path)
    config: dict[str, Any] = {"agn-model": model_kind, "agn-dim": AGN_DIM}
    if model_kind == "mog":  # the public norm bound 1 + sigma (sqrt(D) + 4) of dpcore's synthetic MOG data
        config.update({"agn-sigma2": MOG_SIGMA2, "agn-norm-bound": dp.mog_norm_bound(AGN_DIM, MOG_SIGMA2)})
    return paths, config, model


def _keys(workdir: Path, names: Sequence[str]) -> tuple[Path, dict[str, Path]]:
    """Identity keys of the helper and every site and the roster that pins them (registration, done once)."""
    keys = workdir / "keys"
    keys.mkdir(parents=True, exist_ok=True)
    paths = {name: keys / f"{name}.key" for name in ["helper", *names]}
    parties = {name: ("helper" if name == "helper" else "site", make_identity(path)) for name, path in paths.items()}
    roster = keys / "roster.json"
    write_roster(roster, parties)
    return roster, paths


def prepare_demo(workdir: str | Path, *, sites: Sequence[Mapping[str, Any]] = DEMO_SITES, agn_model: str = "stm",
                 agn_path: str = "dense", noise: str = "helper", dropouts: int = 1,
                 ledger_rounds: int = LEDGER_ROUNDS) -> Demo:
    """Write every site's data files, the parties' identity keys and roster into ``workdir`` (fresh ledgers in
    ``workdir/ledgers``) and return the node and run configurations. ``agn_model``: "stm" (documents) or "mog"
    (Gaussian-mixture samples); ``agn_path``: capeAGN's third-moment path; ``noise``: "helper" or "helper-free";
    ``dropouts``: sites the round survives losing after the noise was set up; ``ledger_rounds``: each site's ledger
    allows this many times its per-round eps."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    roster, identities = _keys(workdir, [s["name"] for s in sites])
    ledgers = workdir / "ledgers"
    ledgers.mkdir(exist_ok=True)
    for old in ledgers.glob("*.json"):
        old.unlink()
    rng = np.random.default_rng(DATA_SEED)
    digits = dp.load_bundled("digits")
    prepared = dp.preprocess(digits.x, "max-norm")
    split = dp.split_sites(prepared.x, [s["pca-n"] for s in sites], rng, allow_replacement=False)
    agn_paths, agn_config, model = _agn_files(workdir, sites, agn_model, rng)
    nodes: list[dict[str, Any]] = [{"role": "helper", "name": "helper", "seed": DEMO_SEEDS["helper"],
                                    "identity": str(identities["helper"]), "roster": str(roster)}]
    for site, x, agn_path_file in zip(sites, split.sites, agn_paths, strict=True):
        name = site["name"]
        pca_path = workdir / f"{name}-digits.csv"
        np.savetxt(pca_path, x.T, fmt="%.17g", delimiter=",")
        node = {"role": "site", "name": name, "eps": site["eps"], "delta": site["delta"],
                "seed": DEMO_SEEDS.get(name, 0), "pca-data": str(pca_path), "pca-n": site["pca-n"],
                "agn-data": str(agn_path_file), "agn-n": site["agn-n"], "identity": str(identities[name]),
                "roster": str(roster), "ledger": str(ledgers / f"{name}.json"),
                "budget-eps": ledger_rounds * site["eps"], "budget-delta": LEDGER_DELTA, "dropouts": dropouts}
        if "weight" in site:
            node["weight"] = site["weight"]
        nodes.append(node)
    run_config = {"algorithms": "capePCA,capeAGN", "sites": len(sites), "pca-k": PCA_K, "agn-k": AGN_K,
                  "seed": DEMO_SEEDS["aggregator"], "run": 0, "solver": "collusion-robust",
                  "calibration": "analytic", "neighbouring": "replace-one", "split": 0.5, "timeout": 120.0,
                  "connect-timeout": 120.0, "agn-path": agn_path, "noise": noise, "dropouts": dropouts,
                  "roster": str(roster), **agn_config}
    truth = {"pca_preprocessing": prepared.note, "agn_model": agn_model,
             "agn_components": model.components.tolist(), "agn_weights": model.weights.tolist()}
    (workdir / "truth.json").write_text(json.dumps(truth))
    return Demo(workdir=workdir, nodes=tuple(nodes), run_config=run_config, truth=truth)


def simulate(demo_nodes: Sequence[Mapping[str, Any]], settings: AggregatorSettings, dropped: Sequence[str] = ()
             ) -> dp.SimulatedRound:
    """The in-process run of the same round (``dpcore.federation.simulate_round``) from the same files and seeds,
    with the generator of a real run (ChaCha20) and the sites that dropped out."""
    algorithm = settings.round.algorithm
    agn = AgnModel.from_request(settings.public()) if algorithm == "capeAGN" else None
    budgets, data, seeds = [], {}, {dp.AGGREGATOR: settings.seed}
    for node in demo_nodes:
        if node["role"] == "helper":
            seeds[dp.HELPER] = node["seed"]
            continue
        site = SiteConfig.from_mapping(node)
        data[site.name], budget = load_site(site, algorithm, agn)
        budgets.append(budget)
        seeds[site.name] = site.seed
    budgets.sort(key=lambda b: b.name)
    return dp.simulate_round(settings.round, budgets, data, seeds, generator="secure", dropped=tuple(dropped))


def run_in_memory(demo: Demo, algorithms: tuple[str, ...] = ("capePCA", "capeAGN")) -> list[RoundOutcome]:
    """The rounds with the in-process transport (the nodes as function calls)."""
    transport = InMemoryTransport([party_node(node) for node in demo.nodes])
    return run_rounds(transport, [settings_from_run_config(demo.run_config, a, f"memory/{a}") for a in algorithms])


# ----------------------------------------------------------------------------------------------
# Printing
# ----------------------------------------------------------------------------------------------

def _shape(shape: Sequence[int]) -> str:
    return " x ".join(map(str, shape)) if shape else "-"


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def log_table(entries: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for e in entries:
        route = " -> ".join(e["route"])
        rows.append([str(e["step"]), e["stage"], route, e["content"] if len(e["content"]) < 60 else
                     e["content"][:57] + "...", _shape(e["shape"]), f"{e['unique']:,}" if e["unique"] else "-",
                     f"{e['bytes']:,}", "yes" if e["protocol"] else "control"])
    return _table(rows, ["step", "stage", "sender -> receiver", "what", "shape", "unique", "bytes", "protocol"])


def party_totals(entries: Sequence[Mapping[str, Any]]) -> str:
    totals: dict[str, list[int]] = {}
    for e in entries:
        if e["receiver"] == "everyone":
            continue
        for party, column in ((e["sender"], 0), (e["receiver"], 2)):
            row = totals.setdefault(party, [0, 0, 0, 0])
            row[column] += 1
            row[column + 1] += e["bytes"]
    rows = [[p, str(v[0]), f"{v[1]:,}", str(v[2]), f"{v[3]:,}"] for p, v in sorted(totals.items())]
    return _table(rows, ["party", "sent", "bytes sent", "received", "bytes received"])


def audit_table(audit: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """Per stage and site, the view with the largest eps_eff: its coalition, eps_eff against the promise."""
    rows = []
    for stage, records in audit.items():
        worst: dict[str, Mapping[str, Any]] = {}
        for r in records:
            eps_eff = r["eps_eff"] if r["eps_eff"] is not None else float("inf")
            if r["site"] not in worst or eps_eff > (worst[r["site"]]["eps_eff"] or float("inf")):
                worst[r["site"]] = r
        for site, r in sorted(worst.items()):
            eps_eff = "inf" if r["eps_eff"] is None else f"{r['eps_eff']:.4g}"
            rows.append([stage, site, r["view"], ", ".join(r["coalition"]) or "-", eps_eff, f"{r['eps']:.4g}",
                         "kept" if r["ok"] else "BROKEN"])
    return _table(rows, ["stage", "site", "worst view", "coalition", "eps_eff", "promised eps", "promise"])


def identical(outcome: Mapping[str, Any], simulated: dp.SimulatedRound | None) -> bool:
    """Every aggregate and output of a released round equals the in-process run's exactly."""
    if simulated is None or set(outcome["aggregates"]) != set(simulated.aggregates):
        return False
    same = [np.array_equal(np.asarray(v), simulated.aggregates[k]) for k, v in outcome["aggregates"].items()]
    same += [np.array_equal(np.asarray(outcome["outputs"].get(k)), v) for k, v in simulated.outputs.items()]
    return all(same)


def comparison(outcome: Mapping[str, Any], simulated: dp.SimulatedRound | None) -> list[str]:
    lines = []
    if outcome["status"] != "released":
        lines.append(f"{outcome['algorithm']}: {outcome['status']}: {outcome['reason']}")
        return lines
    if simulated is None:
        return lines
    for stage, values in outcome["aggregates"].items():
        real = np.asarray(values)
        same = np.array_equal(real, simulated.aggregates[stage])
        lines.append(f"stage {stage} aggregate ({real.size:,} unique entries): "
                     + ("identical to the in-process run" if same else
                        f"DIFFERS from the in-process run (max |diff| = "
                        f"{np.max(np.abs(real - simulated.aggregates[stage])):.3g})"))
    for key, values in outcome["outputs"].items():
        same = np.array_equal(np.asarray(values), simulated.outputs[key])
        lines.append(f"output {key}: " + ("identical" if same else "DIFFERS"))
    return lines


def print_report(outcome: Mapping[str, Any], simulated: dp.SimulatedRound | None, truth: Mapping[str, Any] | None,
                 pooled_data: Any = None, out=sys.stdout) -> None:
    """The message log, what each party sent and received, and the result beside the in-process run."""
    algorithm = outcome["algorithm"]
    print(f"\n=== {algorithm}: {outcome['status']} in {outcome['seconds']:.1f} s ===", file=out)
    if outcome.get("reason"):
        print(f"reason: {outcome['reason']}", file=out)
    plan = outcome.get("plan")
    if plan:
        settings = plan["settings"]
        print(f"noise: {settings.get('noise', 'helper')}, survives {settings.get('dropouts', 0)} drop-out(s)", file=out)
    print("sites that took part: " + (", ".join(outcome.get("took_part", [])) or "none (nothing was released)")
          + ("; dropped out (terms recovered): " + ", ".join(outcome["dropped"]) if outcome.get("dropped") else ""),
          file=out)
    for line in outcome.get("ignored", []):
        print(f"ignored node: {line}", file=out)
    for line in outcome.get("notes", []):
        print(f"note: {line}", file=out)
    if plan:
        for stage in plan["stages"]:
            d = stage["design"]
            print(f"stage {stage['stage']} ({stage['statistic']}): {d['method']} design, tau_c = {d['tau_c']:.4g}, "
                  f"gain over conventional {d['gain']:.3g}, helper noise scale {d['e_scale']:g}", file=out)
    entries = outcome["log"]
    if entries:
        print("\nmessage log (every message passes the SuperLink; sealed shares pass the aggregator as ciphertext):",
              file=out)
        print(log_table(entries), file=out)
        print("\nper party:", file=out)
        print(party_totals(entries), file=out)
    if outcome.get("audit"):
        print("\naudit of what was released (worst view per site and stage; every dropped site counted as a "
              "colluder):", file=out)
        print(audit_table(outcome["audit"]), file=out)
    print("\nresult:", file=out)
    for line in comparison(outcome, simulated):
        print("  " + line, file=out)
    if outcome["status"] == "released" and algorithm == "capePCA":
        print("  top eigenvalues of the private aggregate: "
              + ", ".join(f"{v:.4f}" for v in outcome["outputs"]["eigenvalues"]), file=out)
        if pooled_data is not None:
            v = np.asarray(outcome["outputs"]["components"])
            pooled = pooled_data @ pooled_data.T / pooled_data.shape[1]
            best = np.sort(np.linalg.eigvalsh(pooled))[::-1][: v.shape[1]].sum()
            print(f"  captured energy tr(V^T A V) / optimum = {dp.captured_energy(pooled, v) / best:.3f}", file=out)
    if outcome["status"] == "released" and algorithm == "capeAGN" and truth is not None:
        q, werr = dp.evaluate(np.asarray(outcome["outputs"]["components"]), np.asarray(outcome["outputs"]["weights"]),
                              np.asarray(truth["agn_components"]), np.asarray(truth["agn_weights"]))
        what = "topics" if truth.get("agn_model", "stm") == "stm" else "mixture components"
        print(f"  recovered {what} vs the true ones: q_comp = {q:.4f}, weight error = {werr:.4f}", file=out)


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.demo",
                                     description="both rounds with the in-process transport (no Flower, no network)")
    parser.add_argument("--workdir", default="federated-run", help="where the data files go")
    args = parser.parse_args(argv)
    demo = prepare_demo(args.workdir)
    for outcome in run_in_memory(demo):
        settings = settings_from_run_config(demo.run_config, outcome.algorithm, "simulation")
        simulated = simulate(demo.nodes, settings) if outcome.status == "released" else None
        print_report(outcome.to_dict(), simulated, demo.truth)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())

