"""``python -m dpcore plan``: what do we need? The samples per site, the eps or the number of sites at which CAPE, and
the conventional scheme, reach a target on the family's headline metric (docs/planner.md).

Examples::

    python -m dpcore plan --algorithm pca --dataset synthetic --sites 5 --eps 1 --delta 1e-5 --target 0.8 \\
        --solve n --json
    python -m dpcore plan --algorithm pca --csv mydata.csv --sites 4 --target 0.9 --solve eps --check
    python -m dpcore plan --algorithm pca --csv mydata.csv --use-my-data --sites 4 --target 0.9 --solve eps
    python -m dpcore plan --algorithm otd --scenario sites.json --solve n --site B --target 0.5
    python -m dpcore plan --algorithm otd --data samples.csv --k 3 --sites 4 --solve n --target 0.3 --json
    python -m dpcore plan --algorithm otd --model stm --data docs.txt --d 50 --k 3 --solve eps --target 0.5
    python -m dpcore plan --algorithm lda --solve sites --ns 20000 --eps 5 --target 0.3
    python -m dpcore plan --algorithm lda --corpus python-docs --k 5 --sites 3 --eps 10000 --solve n --target 0.8

``--json`` prints ``{"cape": {"answer", "probability", "interval": [lo, hi], "reach", "bits_per_value", ...},
"cape-discrete": {...}, "conv": {...}, "schemes", "sentence", "forward", ...}`` (one entry per scheme the planner
answers for: the family's algorithms with a ``planner``); an unreachable target is ``"answer": null`` with a
``"reason"``. The answer is where a
share ``--probability`` (default 0.9) of fresh studies (new data of the answer's size, new noise) meets the target.

A file of yours (``--csv``, ``--data``, ``--text``) is planned on a public proxy of its shape by default, as the Planner
page does: the family's synthetic source with the file's D, of which the file gives only its size N and dimension D
(it is parsed to find them); ``--use-my-data`` plans on its values instead (their norms and their curve: reading them
is not differentially private, and the answer's limits say so). The JSON's ``data`` and ``settings.read`` say which.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data import VOCABULARY_RULES, parse_vocabulary
from ..experiments import FAMILIES, PLANNED
from ..family import DataLoader, PlannerData
from ..limits import MAX_RUNS, MAX_TEXT_BYTES, MAX_UPLOAD_BYTES, MAX_VOCABULARY_BYTES
from ..optional import plotly_objects
from ..outfiles import check_outputs, write_atomic
from ..pca.sweep import registered_upload
from ..planner import CURVE_RUNS, KNOBS, check_plan, plan_target, prepare_data, question, scheme_words
from ..planner.check import CHECK_RUNS
from ..planner.design import DESIGNS
from ..planner.export import plan_csv, plan_html, plan_json, plan_script
from ..planner.report import guarantee_lines
from ..planner.solve import PROBABILITY, PROBABILITY_RANGE
from ..planner.sources import READS, planner_sources, proxy_data, read_bundled, read_upload
from ..privacy import CALIBRATIONS, NEIGHBOURING
from ..scenario import Scenario, equal_sites_scenario, load_scenario
from ..textio import load_json, read_file
from ..validation import InputError
from . import print_json, say
from .options import DELTA, EPS, NORM_BOUND, SEED, SITE_SIZE, SITES, WORKERS, integer, real
from .sweep import add_data_flags, family_data

DEFAULT_SITE_SIZE = 1000
DEFAULT_EPS = 1.0
DEFAULT_DELTA = 1e-5
TARGET = real(0.0, 1e6, low_open=True)


DEFAULT_FAMILY = "pca"


def _family_help() -> str:
    """"pca (capePCA, default), otd (capeAGN) or lda (capeLDA)": every family the planner answers for, from PLANNED."""
    words = [f"{name} ({family.cape}{', default' if name == DEFAULT_FAMILY else ''})"
             for name, family in PLANNED.items()]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _target_words(share: str, other: str) -> str:
    """"pca: the share of the non-private captured energy{share}; otd: the component error q_comp{other}; ...": the
    headline metric of every family the planner answers for, from its planner's ``target_words`` (``share`` after a
    target that is a share of the non-private result, ``other`` after the others)."""
    return "; ".join(f"{name}: the {family.planner.target_words}{share if family.planner.percent else other}"
                     for name, family in PLANNED.items() if family.planner is not None)


def register(sub: argparse._SubParsersAction) -> None:  # long: one add_argument per option, in help order
    p = sub.add_parser(
        "plan", help="what do we need? N_s, eps or sites for a target, CAPE, discrete CAPE and conventional side by "
        "side",
        description="Answers, for CAPE, discrete CAPE on the integers (where the family has it) and the conventional "
        "scheme side by side, how many samples per site (all sites or --site), what eps (all sites or --site) or how "
        "many equal sites a target on the family's headline metric "
        f"needs ({_target_words(', e.g. 0.8', '')}) so that a share --probability of fresh studies (new data of "
        "that size, new noise) meets it, and what the scenario as it stands gets, by a curve of simulated studies "
        "(docs/planner.md).",
    )
    p.add_argument("--algorithm", choices=tuple(PLANNED), default=DEFAULT_FAMILY, help=_family_help())
    p.add_argument("--solve", choices=tuple(KNOBS), required=True,
                   help="what to solve for: " + "; ".join(f"{k}: {v}" for k, v in KNOBS.items()))
    p.add_argument("--target", type=TARGET, required=True,
                   help=f"the target: {_target_words(', in (0, 1]', ', > 0')}")
    p.add_argument("--probability", type=real(*PROBABILITY_RANGE), default=PROBABILITY,
                   help=f"share of fresh studies that must meet the target at the answer (default {PROBABILITY:g}; "
                   f"{PROBABILITY_RANGE[0]:g} to {PROBABILITY_RANGE[1]:g})")
    p.add_argument("--design", choices=tuple(DESIGNS), default=next(iter(DESIGNS)),
                   help="; ".join(f"{k}: {v}" for k, v in DESIGNS.items()) + " (default papers)")
    p.add_argument("--use-my-data", action="store_true", help="with --csv, --data or --text: plan on the file's own "
                   "values (their norms and their curve; reading them is not differentially private) instead of the "
                   "default, a public proxy of the file's shape (the family's synthetic source with its D, of which "
                   "the file gives only N and D)")
    p.add_argument("--site", metavar="NAME|POS", help="with --solve n or eps: move only this site (name or 1..S)")
    p.add_argument("--scenario", metavar="FILE", help="scenario JSON (unequal sites, weights, calibration, ...)")
    p.add_argument("--sites", type=SITES, help="number of equal sites without --scenario (default: the family's)")
    p.add_argument("--ns", "--site-size", dest="ns", type=SITE_SIZE, metavar="N_S",
                   help=f"samples per site without --scenario (default {DEFAULT_SITE_SIZE})")
    p.add_argument("--eps", type=EPS, help=f"eps of every site (default {DEFAULT_EPS:g}; overrides the scenario's)")
    p.add_argument("--delta", type=DELTA, help=f"delta of every site (default {DEFAULT_DELTA:g}; overrides the "
                   "scenario's)")
    p.add_argument("--calibration", choices=CALIBRATIONS, help="Gaussian calibration (default classic)")
    p.add_argument("--neighbouring", choices=NEIGHBOURING, help="neighbouring relation (default replace-one)")
    add_data_flags(p)
    for action in p._actions:  # the planner standardises a CSV's features, as its page does
        if action.dest == "features":
            action.help = ("feature scaling before the norm bound: centre (default for the synthetic and bundled "
                           "sets), standardise (default for --csv, as the Planner page) or none")
        elif action.dest == "csv":
            action.help = ("pca: your own numeric CSV, one sample per row (gzip accepted; header and label column "
                           "detected as the Planner page and `dpcore pca --csv` detect them, unless --header / "
                           "--label-column say; features standardised unless --features says); planned on a public "
                           "proxy of its shape (only its N and D are used) unless --use-my-data")
    uploads = p.add_argument_group("otd and lda on your data, read as the otd and lda commands read them")
    uploads.add_argument("--data", "--text", dest="data", metavar="FILE", help="otd: your samples, a numeric CSV one "
                         "per row (--model mog, with --sigma2 / --norm-bound), or your documents, text one per line "
                         "or a .csv count table (--model stm, with --d or --vocabulary, --estimator); lda: your "
                         "documents, text one per line (--vocab-rule, --d or --vocabulary); planned on a public "
                         "proxy of its shape (only its N and D are used) unless --use-my-data")
    uploads.add_argument("--corpus", choices=("python-docs",), help="lda: the bundled Python-docs corpus")
    uploads.add_argument("--vocab-rule", choices=tuple(VOCABULARY_RULES),
                         help="lda --data vocabulary: " + "; ".join(f"{k}: {v}" for k, v in VOCABULARY_RULES.items()))
    uploads.add_argument("--vocabulary", metavar="FILE",
                         help="stm --data: a public vocabulary file (one word per line)")
    uploads.add_argument("--norm-bound", type=NORM_BOUND, help="mog --data: public bound on sample norms (default: "
                         "the largest norm, not private)")
    p.add_argument("--runs", type=integer(3, MAX_RUNS), default=CURVE_RUNS,
                   help=f"simulated studies of the curve (default {CURVE_RUNS})")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the data and the noise (default 0)")
    p.add_argument("--workers", type=WORKERS, metavar="W", help="worker processes for the curve (same numbers for any)")
    p.add_argument("--check", action="store_true", help="also run fresh studies of the algorithm at the answer and "
                   "just short of it, and say whether the share that meets the target is consistent with --probability")
    p.add_argument("--check-runs", type=integer(2, MAX_RUNS), default=CHECK_RUNS,
                   help=f"fresh studies per point of the check (default {CHECK_RUNS})")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--out-json", metavar="FILE", help="write the JSON (settings, seed, version, guarantees) here")
    p.add_argument("--out-csv", metavar="FILE", help="write the CSV here")
    p.add_argument("--html", metavar="FILE", help="write a one-file HTML report (figure and summary) here")
    p.add_argument("--script", metavar="FILE", help="write a Python script that repeats the check with dpcore")
    p.set_defaults(func=run)


def _scenario(args: argparse.Namespace, family: str) -> Scenario:
    if args.scenario:
        extra = [f"--{n}" for n in ("sites", "ns") if getattr(args, n) is not None]
        if extra:
            raise InputError(f"{', '.join(extra)} do(es) not apply with --scenario: the file sets the sites")
        scenario = load_scenario(args.scenario)
        changes = {k: v for k, v in (("eps", args.eps), ("delta", args.delta)) if v is not None}
        scenario = scenario.with_sites(**changes) if changes else scenario
    else:
        n_sites = FAMILIES[family].sweep_sites if args.sites is None else args.sites
        scenario = equal_sites_scenario(n_sites, DEFAULT_SITE_SIZE if args.ns is None else args.ns,
                                        DEFAULT_EPS if args.eps is None else args.eps,
                                        DEFAULT_DELTA if args.delta is None else args.delta, seed=args.seed)
    changes = {k: v for k, v in (("calibration", args.calibration), ("neighbouring", args.neighbouring)) if v}
    return scenario.replace(**changes) if changes else scenario


def _data_flags(args: argparse.Namespace, family: str) -> None:
    options = {name: set(f.sweep.data.OPTIONS) for name, f in PLANNED.items()}
    given = {n for names in options.values() for n in names if getattr(args, n, None) is not None}
    wrong = sorted(given - options[family])
    if args.csv and "upload" not in FAMILIES[family].sweep.data.__dataclass_fields__:
        wrong.append("csv")
    if wrong:
        raise InputError(f"{', '.join('--' + n.replace('_', '-') for n in wrong)} do(es) not apply to "
                         f"--algorithm {family}")


CSV_SOURCE = "upload"
"""The planner source (``FamilyPlanner.sources``) of a ``--csv`` file."""
LOADER_FLAGS = {"sigma2": "sigma2", "norm_bound": "norm_bound", "vocab_size": "d", "estimator": "estimator",
                "rule": "vocab_rule"}
"""The command line flag of each loader option (DataSource.options; ``vocabulary``: --vocabulary FILE)."""


def _upload(args: argparse.Namespace, family: str, settings: object) -> tuple[str, object, DataLoader]:
    """``--data`` read by the family's upload source whose fixed fields the data settings have (otd: --model)."""
    sources = planner_sources(family)
    uploads = [name for name, src in sources.items() if src.upload]
    matching = [name for name in uploads
                if all(getattr(settings, f, None) == v for f, v in sources[name].fields.items())]
    if not matching:
        wants = "; ".join(", ".join(f"--{f.replace('_', '-')} {v}" for f, v in sources[n].fields.items())
                          for n in uploads)
        raise InputError(f"--data does not apply to --algorithm {family} with these settings"
                         + (f"; its uploads need {wants}" if uploads else ""))
    source = matching[0]
    src = sources[source]
    options = {name: getattr(args, LOADER_FLAGS[name]) for name in src.options if name in LOADER_FLAGS}
    if "vocabulary" in src.options and args.vocabulary:
        if args.d is not None:
            raise InputError("--d does not apply with --vocabulary: the vocabulary file sets D")
        options["vocabulary"] = parse_vocabulary(read_file(args.vocabulary, MAX_VOCABULARY_BYTES, "vocabulary file"))
    elif args.vocabulary:
        raise InputError(f"--vocabulary does not apply to {src.label}")
    if args.norm_bound is not None and "norm_bound" not in src.options:
        raise InputError(f"--norm-bound does not apply to {src.label}")
    content = read_file(args.data, max(MAX_UPLOAD_BYTES, MAX_TEXT_BYTES), "data file")
    dataset, loader = read_upload(family, source, content, Path(args.data).name, **options)
    return source, dataset, loader


def _plan_data(args: argparse.Namespace, family: str, settings: object) -> tuple[PlannerData, str | None]:
    """The data the plan reads and what of a file of the user's it read (a key of READS, None without a file): a
    public proxy of the file's shape unless --use-my-data, the bundled corpus, or the settings' own data."""
    dataset = registered_upload(settings.upload) if getattr(settings, "upload", None) else None
    loader, source_name = None, None
    if args.data:
        source_name, dataset, loader = _upload(args, family, settings)
    elif args.corpus:
        if args.corpus not in planner_sources(family) or planner_sources(family)[args.corpus].bundled is None:
            raise InputError(f"--corpus does not apply to --algorithm {family}")
        dataset, loader = read_bundled(family, args.corpus)
    mine = bool(args.csv or args.data)
    source = source_name if args.data else CSV_SOURCE
    if mine and not args.use_my_data:
        return proxy_data(family, source, dataset, getattr(settings, "k", None), args.seed), "proxy"
    if args.csv:  # read by the sweep's --csv flags; the loader names the file (the answer's limits, the script)
        load = planner_sources(family)[source].load
        loader = DataLoader(module=load.__module__, function=load.__name__, file=Path(args.csv).name)
    return prepare_data(family, settings, dataset, args.seed, loader), "mine" if mine else None


def run(args: argparse.Namespace) -> int:
    family = args.algorithm
    _data_flags(args, family)
    if args.data is None and (args.vocabulary or args.norm_bound is not None or args.vocab_rule):
        raise InputError("--vocabulary, --vocab-rule and --norm-bound apply to --data only")
    if args.data and args.corpus:
        raise InputError("give --data or --corpus, not both")
    if args.use_my_data and not (args.csv or args.data):
        raise InputError("--use-my-data applies to a file of yours (--csv, --data or --text)")
    outputs = {k: v for k, v in (("--out-json", args.out_json), ("--out-csv", args.out_csv), ("--html", args.html),
                                 ("--script", args.script)) if v is not None}  # an empty name is refused, not ignored
    check_outputs(outputs, inputs={k: v for k, v in (("--scenario", args.scenario), ("--csv", args.csv),
                                                     ("--data", args.data), ("--vocabulary", args.vocabulary)) if v})
    if args.html:
        plotly_objects()  # the figures extra, checked before any work
    scenario = _scenario(args, family)
    q = question(args.solve, args.target, scenario, args.site)
    settings = family_data(args, family)
    data, read = _plan_data(args, family, settings)
    result = plan_target(family, data, scenario, q, seed=args.seed, runs=args.runs, workers=args.workers,
                         probability=args.probability, design=args.design,
                         settings={"algorithm": family, "data": vars(settings), "csv": args.csv, "data_file": args.data,
                                   "read": read, "curve_runs": args.runs, "solve": args.solve, "site": args.site,
                                   "probability": args.probability, "design": args.design})
    check = check_plan(result, runs=args.check_runs, workers=args.workers) if args.check else None
    texts = {"--out-json": lambda: plan_json(result, check), "--out-csv": lambda: plan_csv(result, check),
             "--html": lambda: plan_html(result, check),
             "--script": lambda: plan_script(result, args.check_runs)}
    for flag, path in outputs.items():
        write_atomic(path, texts[flag]())
    if args.json:
        print_json(load_json(plan_json(result, check), "plan"))
        return 0
    _print(result, check)
    return 0


def _print(result, check) -> None:
    """The answer in words: the data read, the forward answer, the sentence, each scheme's answer, the guarantees, the
    limits, the check."""
    read = result.settings.get("read")
    print(f"Data: {result.data.description}" + (f" (read: {READS[read]})." if read else "."))
    print(result.forward_sentence)
    print(result.sentence)
    for scheme, a in result.answers.items():
        label = scheme_words(result.family, scheme)
        if a.answer is None:
            print(f"  {label}: unreachable: {a.reason}")
            continue
        interval = ", ".join("none" if v is None else f"{v:g}" for v in a.interval)
        print(f"  {label}: {a.answer:g} ({a.probability:.0%} of fresh studies meet the target; half of them at "
              f"{interval.split(', ')[0]}, {(1 + a.probability) / 2:.1%} at {interval.split(', ')[1]}); there they "
              f"average {a.predicted:.4g}" + ("" if a.bits is None else f"; integers, {a.bits} bits per value"))
        for note in a.notes:
            print(f"    note: {note}")
    for line in guarantee_lines(result):
        print(f"  privacy: {line}")
    for limit in result.limits:
        say(f"limit: {limit}")
    if check is not None:
        print(check.sentence)
