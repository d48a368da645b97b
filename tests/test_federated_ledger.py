"""Issue 31: a site's ledger fails closed inside a real round (in memory: the aggregator's round driver, the helper and
three sites exchanging payloads; the file-level checks are tests/test_hostile_ledger.py). For a deleted ledger, a
wrong path, a truncated file, a rollback to an earlier copy, an edited entry, a read-only disk and a huge value, the
round is refused or the damage detected, naming the check, and the damaged site's data are never released: no
release of it reaches the aggregator and no other site spends anything for the round."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
from capefed.app import dp
from capefed.app.rounds import run_round, settings_from_run_config
from capefed.ops.demo import fresh_ledgers, prepare_demo
from capefed.ops.ledger import main as ledger_main
from capefed.ops.memory import InMemoryTransport, party_node
from conftest import ROOT
from federated_views import site_ledger, spent_stages

DAMAGED = "north"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return prepare_demo(tmp_path_factory.mktemp("ledger-rounds") / "data", noise="helper-free", dropouts=0,
                        ledger_rounds=20)


def _nodes(demo, tmp_path):
    return fresh_ledgers(demo, tmp_path / "ledgers")


def _round(demo, nodes, round_id, run=0):
    transport = InMemoryTransport([party_node(n) for n in nodes])
    settings = settings_from_run_config(demo.run_config | {"run": run}, "capePCA", round_id)
    return run_round(transport, settings)


def _site(nodes, name=DAMAGED):
    return next(n for n in nodes if n.get("name") == name)


def _released_nothing(outcome, nodes, round_id, words):
    """The round stopped naming ``words``; no release of the damaged site reached the aggregator (no masked release,
    no unmasked one) and no site spent anything for it."""
    assert outcome.status == "stopped", outcome.reason
    assert words in outcome.reason, outcome.reason
    assert outcome.aggregates == {} and outcome.outputs == {}
    assert not [e for e in outcome.log if e.receiver == "everyone"]
    assert not [e for e in outcome.log if e.sender == f"site {DAMAGED}" and e.content.startswith(("A_", "masked"))]
    for node in nodes:
        if node.get("role") == "site" and os.path.exists(node["ledger"]) and node["name"] != DAMAGED:
            assert spent_stages(site_ledger(node), round_id) == {}, node["name"]


def test_a_deleted_ledger_or_a_wrong_path_is_a_refusal_not_a_fresh_budget(demo, tmp_path):
    nodes = _nodes(demo, tmp_path)
    north = _site(nodes)
    os.unlink(north["ledger"])
    outcome = _round(demo, nodes, "ledger/deleted")
    _released_nothing(outcome, nodes, "ledger/deleted", f"site {DAMAGED}")
    assert "does not exist" in outcome.reason and not os.path.exists(north["ledger"])  # nothing made in its place
    north["ledger"] = str(tmp_path / "ledgers" / "nort-ledger.json")  # a typo in the path
    outcome = _round(demo, nodes, "ledger/typo")
    _released_nothing(outcome, nodes, "ledger/typo", "nort-ledger.json does not exist")
    assert not os.path.exists(north["ledger"])


@pytest.mark.parametrize("damage, words", [
    ("cut-in-an-event", "ledger"),  # a file cut in the middle: not a ledger any more
    ("edited-entry", "event 3"),  # a reservation's cost changed without the key: its MAC fails
    ("removed-entry", "event 3"),  # an event taken out: the next one's link fails
    ("other-key", "event 1"),  # a ledger remade with another key and put in its place
])
def test_a_damaged_ledger_is_refused_naming_what_and_releases_nothing(demo, tmp_path, damage, words):
    nodes = _nodes(demo, tmp_path)
    north = _site(nodes)
    path = north["ledger"]
    first = _round(demo, nodes, f"ledger/{damage}/first")
    assert first.status == "released", first.reason
    if damage == "cut-in-an-event":
        text = open(path, "rb").read()
        open(path, "wb").write(text[: len(text) * 2 // 3])
    elif damage == "other-key":
        north["ledger-key"] = str(tmp_path / "other.key")
        (tmp_path / "other.key").write_text(os.urandom(32).hex() + "\n")
    else:
        doc = json.loads(open(path).read())
        if damage == "edited-entry":
            doc["events"][2]["stages"][0]["mu"] /= 100  # the first round's cost made smaller
        else:
            del doc["events"][2]  # the first round's reservation
        open(path, "w").write(json.dumps(doc))
    before = open(path, "rb").read()
    outcome = _round(demo, nodes, f"ledger/{damage}", run=1)
    _released_nothing(outcome, nodes, f"ledger/{damage}", f"site {DAMAGED}")
    assert words in outcome.reason, outcome.reason
    assert open(path, "rb").read() == before


def _cut(path, events: int) -> None:
    """The ledger at ``path`` without its last ``events`` events (cut at an event's boundary: a valid chain)."""
    doc = json.loads(open(path).read())
    doc["events"] = doc["events"][:-events]
    open(path, "w").write(json.dumps(doc))


@pytest.mark.parametrize("how", ["rollback", "cut-back-to-the-reservation"])
def test_a_ledger_rolled_back_or_cut_after_a_round_is_detected_by_the_other_sites(demo, tmp_path, how):
    """A valid prefix passes the chain; the other sites saw north's head in its signed reservation of the first round
    and refuse the next round, naming north's ledger; north's release never leaves it."""
    nodes = _nodes(demo, tmp_path)
    north = _site(nodes)
    copy = tmp_path / "north-before.json"
    shutil.copy(north["ledger"], copy)
    first = _round(demo, nodes, "ledger/first")
    assert first.status == "released", first.reason
    assert spent_stages(site_ledger(north), "ledger/first")
    if how == "rollback":
        shutil.copy(copy, north["ledger"])
    else:  # the reservation, the spend and the settlement of the first round cut off
        _cut(north["ledger"], 3)
    assert site_ledger(north).head.count == 2  # the chain alone accepts the shorter ledger
    second = _round(demo, nodes, "ledger/second", run=1)
    _released_nothing(second, nodes, "ledger/second", "its ledger was cut or rolled back to an earlier copy")
    assert f"site {DAMAGED}'s ledger holds 2 events, fewer than the 3" in second.reason


def test_a_ledger_cut_after_its_last_report_gives_no_budget_back(demo, tmp_path):
    """The events written after the site last reported its head (the first round's spend and settlement) can be cut
    unseen; the round's reservation is left, which counts in full, and so does the settlement a stale round gets."""
    nodes = _nodes(demo, tmp_path)
    north = _site(nodes)
    first = _round(demo, nodes, "ledger/first")
    assert first.status == "released", first.reason
    spent = dp.budget(site_ledger(north))
    _cut(north["ledger"], 2)
    cut = site_ledger(north)
    assert dp.round_accounts(cut)["ledger/first"].spent == () and dp.budget(cut).counted_mu == spent.counted_mu
    key = dp.read_ledger_key(north["ledger-key"])
    dp.update_ledger(north["ledger"], key, DAMAGED, lambda ledger: dp.stale_rounds(ledger, time.time() + 1e6, 600))
    settled = site_ledger(north)
    (account,) = dp.round_accounts(settled).values()
    assert account.settled and account.void == () and "counted in full" in account.reason
    assert dp.budget(settled).spent_eps == spent.spent_eps and dp.budget(settled).counted_mu == spent.counted_mu


READ_ONLY = textwrap.dedent("""
    import json, sys
    sys.path[:0] = [sys.argv[1] + "/tests", sys.argv[1] + "/federated", sys.argv[1]]
    from test_federated_ledger import _round
    from capefed.ops.demo import Demo
    nodes, run_config = json.loads(open(sys.argv[2]).read())
    class D:
        pass
    demo = D()
    demo.run_config = run_config
    outcome = _round(demo, nodes, "ledger/read-only")
    print(json.dumps({"status": outcome.status, "reason": outcome.reason, "outputs": len(outcome.outputs),
                      "log": [[e.sender, e.receiver, e.content] for e in outcome.log]}))
""")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="a read-only bind mount needs root and unshare (the write failure itself: "
                           "tests/test_hostile_ledger.py)")
def test_a_read_only_disk_refuses_at_the_reservation_before_any_site_releases(demo, tmp_path):
    """north's ledger folder mounted read-only (a mount namespace of its own): north refuses when it reserves the
    round, which every site does before any site releases, so no site has spent anything and nothing is released."""
    nodes = _nodes(demo, tmp_path)
    north = _site(nodes)
    folder = tmp_path / "north-disk"
    folder.mkdir()
    for key in ("ledger", "ledger-key"):
        moved = folder / os.path.basename(north[key])
        shutil.move(north[key], moved)
        north[key] = str(moved)
    before = {n["name"]: open(n["ledger"], "rb").read() for n in nodes if n.get("role") == "site"}
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps([nodes, demo.run_config]))
    script = (f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && "
              f'exec "{sys.executable}" -c "$0" {ROOT} {spec}')
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script,
                           READ_ONLY], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == "stopped" and result["outputs"] == 0, result
    assert f"site {DAMAGED}" in result["reason"] and "Read-only file system" in result["reason"], result["reason"]
    assert not [e for e in result["log"] if e[1] == "everyone" or e[0] == f"site {DAMAGED}" and "A_" in e[2]]
    for node in nodes:
        if node.get("role") == "site" and node["name"] != DAMAGED:
            assert spent_stages(site_ledger(node), "ledger/read-only") == {}, node["name"]
    assert open(north["ledger"], "rb").read() == before[DAMAGED]


@pytest.mark.parametrize("args, words", [
    (["--eps", "1e400", "--delta", "1e-4"], "eps"), (["--eps", "1e300", "--delta", "1e-4"], "eps"),
    (["--eps", "nan", "--delta", "1e-4"], "eps"), (["--eps", "4", "--delta", "2"], "delta")])
def test_a_huge_or_impossible_budget_is_refused_when_the_ledger_is_made(tmp_path, capsys, args, words):
    ledger, key = tmp_path / "ledger.json", tmp_path / "ledger.key"
    me = pwd.getpwuid(os.geteuid()).pw_name
    code = ledger_main(["create", "--ledger", str(ledger), "--key", str(key), "--site", "north", "--owner", me, *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and words in err[0], err
    assert not ledger.exists() and not key.exists()


@pytest.mark.parametrize("missing", ["ledger", "key"])
def test_a_ledger_is_never_left_without_its_key_nor_a_key_without_its_ledger(tmp_path, capsys, missing):
    """``create`` whose ledger or key cannot be written (its directory does not exist) leaves neither file: a ledger
    without its key could never be read nor made again."""
    ledger, key = tmp_path / "ledger.json", tmp_path / "ledger.key"
    if missing == "ledger":
        ledger = tmp_path / "absent" / "ledger.json"
    else:
        key = tmp_path / "absent" / "ledger.key"
    me = pwd.getpwuid(os.geteuid()).pw_name
    code = ledger_main(["create", "--ledger", str(ledger), "--key", str(key), "--site", "north", "--owner", me,
                        "--eps", "4", "--delta", "1e-5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "absent" in err[0], err
    assert sorted(p.name for p in tmp_path.rglob("*")) == [], sorted(tmp_path.rglob("*"))
