"""A study, from proposal to the approved file the aggregator runs (docs/federated.md, "A study every site approves"):

    python -m capefed.ops.study propose study.toml --out study.json          # the aggregator's operator
    python -m capefed.ops.study review study.json [--site north]              # anyone: the study in words, its audit
    python -m capefed.ops.study approve study.json --out north.approval.json  # a site's operator: review, check, sign
    python -m capefed.ops.study collect study.json *.approval.json --roster /etc/capefed/roster.json --out approved.json

``propose`` reads a TOML proposal (title, proposer, rounds, total-delta, per algorithm its data description, D and
round settings, per site eps, delta, optional weight and N per algorithm), computes every site's total, plans every
round (a study whose design is refused is refused) and writes the study. ``approve`` prints the study in words with
the audit of every view of the site's releases, checks it against the site's own configuration (``--node-env``:
its eps, delta and weight, its data's N and D, its limits on colluders and drop-outs) and its ledger (the whole study
must fit what remains), asks for ``yes`` (or ``--yes``), then signs the study's digest with the site's identity key,
records the approval in its ledger and writes the approval for the aggregator. ``collect`` checks every site's
approval against the roster and writes the approved study (``study=`` in the run configuration).
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import Any

from ..app import dp
from ..app.site import SiteConfig, SiteConfigError, agn_model, load_site
from ..app.studyfile import read_approval, read_study, write_approval, write_signed_study
from ..app.trust import TrustError, approval_signature, load_identity, read_roster, verify_approvals
from .opsfiles import CommandError, node_config, run_command

__all__ = ["check_site", "main", "study_from_proposal"]

MAX_PROPOSAL_BYTES = 64 * 1024
_STUDY_KEYS = {"title", "proposer", "rounds", "total-delta", "algorithms", "sites"}
_SETTINGS = tuple(f for f in dp.RoundSettings.__dataclass_fields__ if f not in ("algorithm", "run"))


def _settings(name: str, raw: dict[str, Any]) -> tuple[dp.RoundSettings, int, str]:
    fields = {k.replace("-", "_"): v for k, v in raw.items() if k not in ("dim", "data")}
    unknown = sorted(set(fields) - set(_SETTINGS))
    if unknown:
        raise CommandError(f"[algorithms.{name}]: unknown setting(s) {', '.join(unknown)} (allowed: "
                           f"{', '.join(_SETTINGS)}, dim, data)")
    try:
        settings = dp.RoundSettings(algorithm=name, **fields).validated()
    except (TypeError, ValueError) as exc:
        raise CommandError(f"[algorithms.{name}]: {exc}") from None
    return settings, raw.get("dim"), raw.get("data")


def study_from_proposal(text: str) -> str:
    """The study's canonical text from a TOML proposal (module docstring)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CommandError(f"the proposal is not TOML: {exc}") from None
    if set(doc) != _STUDY_KEYS or not isinstance(doc["algorithms"], dict) or not isinstance(doc["sites"], list):
        raise CommandError(f"a proposal holds exactly {', '.join(sorted(_STUDY_KEYS))} ([algorithms.NAME] tables "
                           "and [[sites]])")
    algorithms = {name: _settings(name, raw) for name, raw in doc["algorithms"].items() if isinstance(raw, dict)}
    sites, counts = [], {}
    for raw in doc["sites"]:
        if not isinstance(raw, dict) or not set(raw) <= {"name", "eps", "delta", "weight", "n"} or not isinstance(
                raw.get("n"), dict):
            raise CommandError("every [[sites]] entry holds name, eps, delta, n = {ALGORITHM = N, ...} and an "
                               "optional weight")
        sites.append(dp.Site(name=raw.get("name"), n=1, eps=raw.get("eps"), delta=raw.get("delta"),
                             weight=raw.get("weight")))
        counts[raw.get("name")] = raw["n"]
    try:
        return dp.study_text(title=doc["title"], proposer=doc["proposer"], rounds=doc["rounds"],
                             total_delta=doc["total-delta"], algorithms=algorithms, sites=sites, counts=counts)
    except (KeyError, TypeError) as exc:
        raise CommandError(f"the proposal: {exc!r}") from None


def check_site(study: dp.Study, config: SiteConfig) -> None:
    """The study against the site's own configuration: its eps, delta and weight, the N and D of its data files, its
    limits on colluders and drop-outs. CommandError naming the first difference."""
    site = next((s for s in study.sites if s.name == config.name), None)
    if site is None:
        raise CommandError(f"the study has no site {config.name} (its sites: {', '.join(study.names)})")
    for what, mine, theirs in (("eps", config.eps, site.eps), ("delta", config.delta, site.delta),
                               ("weight", config.weight, site.weight)):
        if mine != theirs:
            raise CommandError(f"the study gives {config.name} {what} = {theirs} per round; its configuration says "
                               f"{mine}")
    for algorithm, entry in study.algorithms.items():
        s = entry.settings
        agn = agn_model(algorithm, s, entry.dim)
        try:
            _, budget = load_site(config, algorithm, agn)
        except SiteConfigError as exc:
            raise CommandError(f"{algorithm}: {exc}") from None
        expected = study.counts[config.name][algorithm]
        if (budget.site.n, budget.dim) != (expected, entry.dim):
            raise CommandError(f"{algorithm}: its data have N = {budget.site.n}, D = {budget.dim}; the study says "
                               f"N = {expected}, D = {entry.dim}")
        plan = study.plans[algorithm]
        required = config.collusion if config.collusion is not None else dp.default_collusion(len(study.names))
        if plan.collusion < required or s.dropouts > config.dropouts:
            raise CommandError(f"{algorithm}: the study protects against {plan.collusion} colluder(s) and survives "
                               f"{s.dropouts} drop-out(s); this site requires at least {required} and tolerates at "
                               f"most {config.dropouts} (collusion=, dropouts= in its node configuration)")


def _review(study: dp.Study, names: list[str]) -> None:
    print("\n".join(dp.describe_study(study)))
    for name in names:
        print("\n".join(dp.describe_exposure(study, dp.site_exposure(study, name))))


def _approve(args: argparse.Namespace, study: dp.Study) -> int:
    config = SiteConfig.from_mapping(node_config(args.node_env))
    _review(study, [config.name])
    check_site(study, config)
    key = dp.read_ledger_key(config.ledger_key)
    ledger = dp.read_ledger(config.ledger, key, config.name)
    event = dp.approve_event(ledger, study.digest, study.title, study.rounds, study.total_mu(config.name))
    print(f"Checked against {args.node_env}: the study's values for {config.name} are its own, its data have the "
          f"study's N and D, the study keeps its limits, and the whole study fits its ledger.")
    if not args.yes:
        print(f"Sign study {study.digest[:16]}... for site {config.name}? Type yes: ", end="", flush=True)
        if sys.stdin.readline().strip() != "yes":
            raise CommandError("not signed")
    signature = approval_signature(load_identity(config.identity), study.digest, config.name)
    dp.update_ledger(config.ledger, key, config.name, lambda _: [event])
    write_approval(args.out, study, config.name, signature)
    print(f"signed: {args.out} (send it to the aggregator's operator); the approval is recorded in {config.ledger}")
    return 0


def _collect(args: argparse.Namespace, study: dp.Study) -> int:
    approvals = {}
    for path in args.approvals:
        digest, site, signature = read_approval(path)
        if digest != study.digest:
            raise CommandError(f"{path} approves study {digest[:16]}..., not this one ({study.digest[:16]}...)")
        approvals[site] = signature
    missing = sorted(set(study.names) - set(approvals))
    if missing:
        raise CommandError(f"no approval of site(s) {', '.join(missing)}: every site of the study signs it")
    try:
        verify_approvals(read_roster(args.roster), study.digest, sorted(study.names),
                         [approvals[n] for n in sorted(study.names)])
    except TrustError as exc:
        raise CommandError(str(exc)) from None
    write_signed_study(args.out, study, approvals)
    print(f"approved by {', '.join(sorted(approvals))}: {args.out} (study={args.out} in the run configuration)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.study", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("propose", "review", "approve", "collect"))
    parser.add_argument("file", help="the proposal (propose) or the study (the others)")
    parser.add_argument("approvals", nargs="*", help="collect: every site's approval file")
    parser.add_argument("--out", help="propose, approve, collect: the file to write")
    parser.add_argument("--site", action="append", default=[], help="review: the site(s) whose exposure to show")
    parser.add_argument("--node-env", default="/etc/capefed/node.env", help="approve: the site's environment file")
    parser.add_argument("--roster", help="collect: the consortium's roster")
    parser.add_argument("--yes", action="store_true", help="approve: sign without asking")
    args = parser.parse_args(argv)

    def run() -> int:
        if args.command in ("propose", "approve", "collect") and not args.out:
            raise CommandError(f"{args.command} needs --out")
        if args.command == "propose":
            text = study_from_proposal(dp.decode_text(dp.read_file(args.file, MAX_PROPOSAL_BYTES, "the proposal")))
            if Path(args.out).exists():
                raise CommandError(f"{args.out} exists already")
            Path(args.out).write_text(text + "\n")
            _review(dp.parse_study(text), [])
            print(f"wrote {args.out}")
            return 0
        study = read_study(args.file)
        if args.command == "review":
            _review(study, args.site or list(study.names))
            return 0
        if args.command == "approve":
            return _approve(args, study)
        if not args.roster:
            raise CommandError("collect needs --roster")
        return _collect(args, study)

    return run_command("capefed.ops.study", run)


if __name__ == "__main__":
    raise SystemExit(main())
