"""Issue 33: one run body for every family's command (``dpcore.cli.family_command.run_family``). The commands of
capePCA, capeAGN and capeLDA are that body with their family's hooks (``FamilyCommand.prepare`` and ``view``); a
family that gives the hooks gets a command that runs ``Family.compare`` and prints the notes, its story lines, its
table, the guarantee of every view and why an algorithm has no metrics - with no code of its own in dpcore.cli; the data
settings of one run (``PcaRunData``, ``OtdRunData``, ``LdaRunData``) carry what a sweep cannot (uploads, the split's
options, the memory budget, a text corpus) and keep the family's numbers."""

from __future__ import annotations

import argparse
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace

import numpy as np
import pytest

from dpcore.agn.contract import OtdRunData, OtdRunUpload
from dpcore.cli import build_parser, family_command, main
from dpcore.cli.family_command import register_family, run_family
from dpcore.family import CommandJob, CommandView, FamilyCommand, Flag, families
from dpcore.pca.contract import PcaRunData
from dpcore.pca.sweep import PcaData
from dpcore.scenario import equal_sites_scenario

SCENARIO = equal_sites_scenario(3, 200, 1.0, 1e-5)


@pytest.mark.parametrize("name", ["pca", "otd", "lda"])
def test_every_familys_command_is_the_one_run_body_with_the_familys_hooks(name, monkeypatch):
    family = families()[name]
    assert family.command.prepare is not None and family.command.view is not None
    parser = build_parser(name)
    args = parser.parse_args([name, *_minimal(name)])
    monkeypatch.setattr(family_command, "run_family", lambda fam, a: ("run_family", fam.name))
    assert args.func(args) == ("run_family", name)
    job = family.command.prepare(args)
    assert isinstance(job, CommandJob) and isinstance(job.data, family.sweep.data) and job.scenarios


def _minimal(name: str) -> list[str]:
    return {"pca": ["--dim", "6", "--k", "2"], "otd": ["--model", "mog"], "lda": []}[name]


def _toy_command() -> FamilyCommand:
    """A command of the capeAGN family's numbers under another view: nothing in dpcore.cli knows it."""

    def prepare(args):
        return CommandJob(scenarios=(SCENARIO,), data=families()["otd"].sweep.data(model="mog", dim=5, k=2),
                          algorithms=("cape", "nonpriv"), runs=1, seed=args.seed, workers=1)

    def table(job, comparison):
        return ["who", "q"], [[n, comparison.summary(n, "q_comp").runs] for n in comparison.algorithms]

    view = CommandView(header=lambda job, cs: [f"toy: {len(cs)} comparison(s)"], table=table,
                       record=lambda job, cs: {"algorithms": list(cs[0].algorithms), "seed": job.seed},
                       after=lambda job, cs: ["the end"])
    return FamilyCommand(help="toy", description="toy", arguments=(
        Flag(name="--seed", integer=(0, 9), default=0, help="seed"), Flag(name="--json", action="store_true",
                                                                           help="JSON")),
        prepare=prepare, view=view)


def test_a_new_familys_hooks_are_enough_for_a_command(capsys):
    family = replace(families()["otd"], name="toy", command=_toy_command())
    parser = argparse.ArgumentParser()
    register_family(parser.add_subparsers(dest="command"), family)
    args = parser.parse_args(["toy", "--seed", "2"])
    assert args.func(args) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "toy: 1 comparison(s)" and lines[-1] == "the end"
    assert any(line.startswith("cape ") and line.rstrip().endswith("1") for line in lines)  # the toy's own cells
    assert "privacy (exact, every stage composed" in out and "capeAGN" in out  # guarantees, by the family's titles
    assert "note: " in err  # the comparison's notes, on stderr
    assert run_family(family, parser.parse_args(["toy", "--json"])) == 0
    assert json.loads(capsys.readouterr().out) == {"algorithms": ["cape", "nonpriv"], "seed": 0}


def test_a_command_without_hooks_is_refused_where_it_is_registered():
    family = replace(families()["otd"], command=FamilyCommand(help="x", description="x", arguments=()))
    with pytest.raises(TypeError, match="prepare and view"):
        register_family(argparse.ArgumentParser().add_subparsers(), family)


def test_the_run_data_of_one_comparison_keep_the_sweeps_data_and_numbers():
    pca = families()["pca"]
    plain = pca.compare(SCENARIO, PcaData(dim=6, k=2), ("cape", "nonpriv"), runs=2, seed=4, workers=1)
    same = pca.compare(SCENARIO, PcaRunData(dim=6, k=2), ("cape", "nonpriv"), runs=2, seed=4, workers=1)
    assert [s.mean for s in plain.summaries] == [s.mean for s in same.summaries]
    scaled = pca.compare(SCENARIO, PcaRunData(dim=6, k=2, preprocessing="clip", scale=50.0), ("nonpriv",), runs=1,
                         seed=4, workers=1)
    assert scaled.detail.setup.problem.k == 2
    with pytest.raises(Exception, match="scale"):
        PcaRunData(dim=6, k=2, scale=-1.0)


def test_uploaded_samples_and_the_memory_budget_reach_capeagns_comparison():
    otd = families()["otd"]
    values = np.random.default_rng(5).normal(size=(600, 4))
    data = OtdRunData(model="mog", dim=4, k=2, upload=OtdRunUpload(values=values), memory_budget=2**25,
                      path="auto")
    result = otd.compare(SCENARIO, data, ("cape", "nonpriv"), runs=1, seed=1, workers=1)
    assert result.detail.reference != "truth"  # uploaded data: measured against the non-private result
    assert result.detail.settings.memory_budget == 2**25
    assert result.detail.problem.dim == 4


def test_several_eps_are_one_comparison_each_with_the_same_documents():
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["lda", "--docs", "300", "--sites", "3", "--vocab", "20", "--topics", "3", "--doc-length", "20",
                     "--runs", "1", "--eps", "100", "10", "--configuration", "nonpriv", "--json"])
    assert code == 0, err.getvalue()
    curves = json.loads(out.getvalue())["curves"]
    assert [c["eps"] for c in curves] == [10.0, 100.0]
    # the non-private topics do not depend on eps: the same documents at both budgets give the same error
    assert curves[0]["results"][0]["mean"] == curves[1]["results"][0]["mean"]


def test_the_pages_reports_are_the_one_report_builder_of_a_comparison():
    """pca_report and otd_report are the contract's Comparison through family_report: the same rows, guarantees and
    scenario as the Any family report of that Comparison; only the settings, story and script are the family's."""
    from dpcore.reports import comparison_report, otd_report, pca_report

    pca = families()["pca"]
    data = PcaRunData(dim=6, k=2)
    result = pca.compare(SCENARIO, data, ("cape", "nonpriv"), runs=2, seed=4, workers=1)
    setup = result.detail.setup
    page = pca_report(setup, result.detail.comparison, source={"kind": "synthetic", "dim": 6, "spectrum": "power",
                                                               "decay": 1.0}, k=2, features="centre",
                      preprocessing="max-norm", scale=1.0, by_label=False, allow_replacement=False, seed=4,
                      algorithms=["cape", "nonpriv"], runs=2, rank=None)
    generic = comparison_report(result, data)
    assert page.results == generic.results and page.guarantees == generic.guarantees
    assert page.scenario == generic.scenario and page.numbers == generic.numbers
    assert "prepare_pca" in page.script and "dpcore import compare" in generic.script
    otd = families()["otd"].compare(SCENARIO, families()["otd"].sweep.data(model="mog", dim=5, k=2),
                                    ("cape", "nonpriv"), runs=1, seed=2, workers=1)
    page = otd_report(otd.detail, spec=None, source="synthetic MOG")
    assert page.results == comparison_report(otd, families()["otd"].sweep.data(model="mog", dim=5, k=2)).results


def test_a_new_familys_command_is_registered_from_the_family_table(monkeypatch, capsys):
    toy = replace(families()["otd"], name="toy", position=99, command=_toy_command())
    table = {**families(), "toy": toy}
    monkeypatch.setattr(family_command, "families", lambda: table)
    assert main(["toy", "--seed", "1"]) == 0
    assert capsys.readouterr().out.startswith("toy: 1 comparison(s)")
    assert main(["--help"]) == 0
    assert "    toy " in capsys.readouterr().out
