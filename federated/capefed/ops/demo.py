"""The demonstration of ``make federated``: three sites, their data files and configurations, the in-process
simulation of the same round, and the printout of what each party sent and received.

Data: the bundled digits (D = 64) for capePCA, centred and divided by the largest sample norm over the whole
set (the papers' preprocessing; it reads the data, so it is not private: a real consortium agrees on a public
norm bound and every site clips to it), split 800 / 600 / 397; for capeAGN a synthetic single-topic-model
corpus (D = 10 words, K = 3 topics, 3-word documents) sampled per site, 20,000 / 15,000 / 10,000 documents.

``python -m capefed.ops.demo`` runs both rounds with the in-process transport (no Flower, no network).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..app import dp
from ..app.messages import message_log_round
from ..app.rounds import AggregatorSettings, RoundOutcome, run_rounds, settings_from_run_config
from ..app.site import AgnModel, SiteConfig, data_keys, load_site
from ..app.studyfile import write_signed_study
from ..app.trust import approval_signature, load_identity, make_identity, write_roster
from .memory import InMemoryTransport, party_node
from .opsfiles import write_private

__all__ = ["DEMO_SITES", "Demo", "another_study", "enrol_ledger", "fresh_ledgers", "identical", "message_log_round",
           "prepare_demo", "print_report", "run_in_memory", "simulate"]

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
"""The demonstration's study allows this many rounds of each algorithm, and every site's ledger exactly their cost: the
exact composition of that many rounds at LEDGER_DELTA (``dpcore.federation.rounds_budget``), so the next round is
refused by the study and by the ledger. (Its total was once 5 eps_s: Gaussian rounds compose like sqrt(k), and at a
delta 10 times the per-round one that allowed 22 rounds.)"""
LEDGER_DELTA = 1e-4


@dataclass(frozen=True, kw_only=True)
class Demo:
    """Files and settings of the demonstration: one node configuration per party and the run configuration."""

    workdir: Path
    nodes: tuple[dict[str, Any], ...]  # helper first, then the sites
    run_config: dict[str, Any]
    truth: dict[str, Any]
    study: dp.Study | None = None


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


def _study(workdir: Path, nodes: Sequence[Mapping[str, Any]], run_config: Mapping[str, Any], rounds: int,
           name: str = "study") -> dp.Study:
    """The demonstration's study: both algorithms with the run configuration's settings, every site's budget and
    N_s, ``rounds`` rounds (written to ``<name>.json``)."""
    algorithms = {}
    for algorithm in dp.ROUND_STAGES:
        settings = settings_from_run_config(run_config, algorithm, "study")
        algorithms[algorithm] = (settings.round, DEMO_DATA[algorithm].dim, DEMO_DATA[algorithm].description)
    sites = [dp.Site(name=n["name"], n=1, eps=n["eps"], delta=n["delta"], weight=n.get("weight"))
             for n in nodes if n["role"] == "site"]
    counts = {n["name"]: {a: n[data_keys(a)[1]] for a in dp.ROUND_STAGES} for n in nodes if n["role"] == "site"}
    text = dp.study_text(title="capefed demonstration: digits (capePCA) and a topic model (capeAGN)",
                         proposer="the demonstration's aggregator", rounds=rounds, total_delta=LEDGER_DELTA,
                         algorithms=algorithms, sites=sites, counts=counts)
    (workdir / f"{name}.json").write_text(text + "\n")
    return dp.parse_study(text)


def enrol_ledger(node: dict[str, Any], study: dp.Study) -> None:
    """A site's enrolment in the demonstration: its ledger (at ``node["ledger"]``, which must not exist, with the
    key at ``node["ledger-key"]``, made when missing) for exactly the study's rounds, and its approval of the study
    recorded in it."""
    name, key_path = node["name"], Path(node["ledger-key"])
    if key_path.exists():
        key = dp.read_ledger_key(key_path)
    else:
        key = dp.new_ledger_key()
        write_private(key_path, (key.hex() + "\n").encode(), None)
    total = study.totals[name] * (1 + 1e-9)
    node.update({"budget-eps": total, "budget-delta": LEDGER_DELTA})
    dp.create_ledger(node["ledger"], key, name, total, LEDGER_DELTA)
    dp.update_ledger(node["ledger"], key, name, lambda ledger: [
        dp.approve_event(ledger, study.digest, study.title, study.rounds, study.total_mu(name))])


def another_study(demo: Demo, name: str, rounds: int, **changes: Any) -> dict[str, Any]:
    """A further study of the demonstration's sites whose round settings are the run configuration's with
    ``changes`` (run-configuration keys, e.g. ``noise="helper"``), approved by every site in the ledger it was enrolled
    with (``dpcore.federation.approve_event``: refused unless the whole study fits what remains) and signed; returns
    the run configuration that runs it (a study fixes every round setting: a run configuration's own are not read)."""
    run_config = {k: v for k, v in demo.run_config.items() if k != "study"} | changes  # settings of its own keys
    study = _study(demo.workdir, demo.nodes, run_config, rounds, name)
    approvals = {}
    for node in demo.nodes:
        if node["role"] != "site":
            continue
        site = node["name"]
        dp.update_ledger(node["ledger"], dp.read_ledger_key(node["ledger-key"]), site, lambda ledger, site=site: [
            dp.approve_event(ledger, study.digest, study.title, study.rounds, study.total_mu(site))])
        approvals[site] = approval_signature(load_identity(node["identity"]), study.digest, site)
    path = demo.workdir / f"{name}-approved.json"
    write_signed_study(path, study, approvals)
    return dict(run_config, study=str(path))


def fresh_ledgers(demo: Demo, folder: str | Path) -> list[dict[str, Any]]:
    """The demonstration's nodes with new ledgers of their own in ``folder`` (enrolled in the demonstration's study):
    a test that spends its own budget."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    nodes = [dict(n) for n in demo.nodes]
    for node in nodes:
        if node["role"] == "site":
            node["ledger"] = str(folder / f"{node['name']}-ledger.json")
            enrol_ledger(node, demo.study)
    return nodes


def _enrol(workdir: Path, study: dp.Study, nodes: list[dict[str, Any]]) -> Path:
    """Every site's ledger key and ledger, made for exactly the study's rounds, its approval of the study (signed and
    recorded in its ledger), and the approved study the aggregator runs."""
    approvals = {}
    for node in nodes:
        if node["role"] != "site":
            continue
        enrol_ledger(node, study)
        approvals[node["name"]] = approval_signature(load_identity(node["identity"]), study.digest, node["name"])
    path = workdir / "study-approved.json"
    write_signed_study(path, study, approvals)
    return path


def prepare_demo(workdir: str | Path, *, sites: Sequence[Mapping[str, Any]] = DEMO_SITES, agn_model: str = "stm",
                 agn_path: str = "dense", noise: str = "helper", dropouts: int = 1,
                 ledger_rounds: int = LEDGER_ROUNDS) -> Demo:
    """Write every site's data files, the parties' identity keys and roster into ``workdir`` (fresh ledgers in
    ``workdir/ledgers``) and return the node and run configurations. ``agn_model``: "stm" (documents) or "mog"
    (Gaussian-mixture samples); ``agn_path``: capeAGN's third-moment path; ``noise``: "helper" or "helper-free";
    ``dropouts``: sites the round survives losing after the noise was set up; ``ledger_rounds``: the study's rounds of
    each algorithm, and every site's ledger made for exactly their cost (the demonstration's enrolment: ledgers,
    ledger keys, the study and every site's approval of it, ``study.json`` and ``study-approved.json``)."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    roster, identities = _keys(workdir, [s["name"] for s in sites])
    ledgers = workdir / "ledgers"
    ledgers.mkdir(exist_ok=True)
    for old in [*ledgers.glob("*.json"), *ledgers.glob("*.key"), *ledgers.glob("*.lock")]:
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
                "ledger-key": str(ledgers / f"{name}.key"), "dropouts": dropouts}
        if "weight" in site:
            node["weight"] = site["weight"]
        nodes.append(node)
    run_config = {"algorithms": "capePCA,capeAGN", "sites": len(sites), "pca-k": PCA_K, "agn-k": AGN_K,
                  "seed": DEMO_SEEDS["aggregator"], "run": 0, "solver": "collusion-robust",
                  "calibration": "analytic", "neighbouring": "replace-one", "split": 0.5, "timeout": 120.0,
                  "connect-timeout": 120.0, "agn-path": agn_path, "noise": noise, "dropouts": dropouts,
                  "roster": str(roster), **agn_config}
    study = _study(workdir, nodes, run_config, ledger_rounds)
    run_config["study"] = str(_enrol(workdir, study, nodes))
    truth = {"pca_preprocessing": prepared.note, "agn_model": agn_model,
             "agn_components": model.components.tolist(), "agn_weights": model.weights.tolist()}
    (workdir / "truth.json").write_text(json.dumps(truth))
    return Demo(workdir=workdir, nodes=tuple(nodes), run_config=run_config, truth=truth, study=study)


def simulate(demo_nodes: Sequence[Mapping[str, Any]], settings: AggregatorSettings, dropped: Sequence[str] = ()
             ) -> dp.SimulatedRound:
    """The in-process run of the same round (``dpcore.federation.simulate_round``) from the same files and seeds,
    with the generator of a real run (ChaCha20) and the sites that dropped out."""
    algorithm = settings.round.algorithm
    agn = AgnModel.from_request(settings.public()) if dp.federated_algorithm(algorithm).public_model else None
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
    if outcome["status"] == "released":
        DEMO_DATA[algorithm].report(outcome["outputs"], truth, pooled_data, out)


def _pca_report(outputs: Mapping[str, Any], truth: Mapping[str, Any] | None, pooled_data: Any, out) -> None:
    """capePCA's result against the pooled data: the top eigenvalues and the captured energy."""
    print("  top eigenvalues of the private aggregate: "
          + ", ".join(f"{v:.4f}" for v in outputs["eigenvalues"]), file=out)
    if pooled_data is not None:
        v = np.asarray(outputs["components"])
        pooled = pooled_data @ pooled_data.T / pooled_data.shape[1]
        best = np.sort(np.linalg.eigvalsh(pooled))[::-1][: v.shape[1]].sum()
        print(f"  captured energy tr(V^T A V) / optimum = {dp.captured_energy(pooled, v) / best:.3f}", file=out)


def _agn_report(outputs: Mapping[str, Any], truth: Mapping[str, Any] | None, pooled_data: Any, out) -> None:
    """capeAGN's result against the true model: q_comp and the weight error."""
    if truth is not None:
        q, werr = dp.evaluate(np.asarray(outputs["components"]), np.asarray(outputs["weights"]),
                              np.asarray(truth["agn_components"]), np.asarray(truth["agn_weights"]))
        what = "topics" if truth.get("agn_model", "stm") == "stm" else "mixture components"
        print(f"  recovered {what} vs the true ones: q_comp = {q:.4f}, weight error = {werr:.4f}", file=out)


@dataclass(frozen=True, kw_only=True)
class DemoData:
    """The demonstration's data for one algorithm: D, the study's description and how its result is reported."""

    dim: int
    description: str
    report: Callable[[Mapping[str, Any], Mapping[str, Any] | None, Any, Any], None]


DEMO_DATA = {
    "capePCA": DemoData(dim=64, report=_pca_report,
                        description="the bundled digits: 64 pixel values per image, centred and divided by the largest "
                                    "norm of the whole set (every sample has norm <= 1)"),
    "capeAGN": DemoData(dim=AGN_DIM, report=_agn_report,
                        description="synthetic: a single topic model's 3-word documents over D = 10 words (or "
                                    "Gaussian-mixture samples in D = 10 dimensions, divided by the public norm bound)"),
}
"""The demonstration's data set of each algorithm of the federated table (a demonstration's choice, not the
algorithm's)."""


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.demo",
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

