"""Each party's log in words (capefed.app.partylog): what it received, checked, released and refused, one line each,
for every request of an in-memory round; a refusal quotes the failed check; nothing the aggregator sent can break a
line."""

from __future__ import annotations

import logging

from capefed.app.messages import Payload
from capefed.app.node import answer
from capefed.app.partylog import describe
from capefed.ops.demo import prepare_demo, run_in_memory


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "capefed.party"]


def test_every_party_says_what_it_received_checked_and_released(tmp_path, caplog):
    demo = prepare_demo(tmp_path)
    with caplog.at_level(logging.INFO, logger="capefed.party"):
        (outcome,) = run_in_memory(demo, ("capePCA",))
    assert outcome.status == "released"
    lines = _lines(caplog)
    for site in ("north", "east", "south"):
        mine = [line for line in lines if line.startswith(f"site {site}: ")]
        # hello, set-up, release, confirm (the survivor set), reveal: three lines each; the round's end: three and
        # what it says of the result, of the stage it released, of this round's cost and of its ledger
        assert [line.split(": ", 1)[1].split(" ")[0] for line in mine] == [
            "received", "checked", "answered", "received", "checked", "sent", "received", "checked", "released",
            "received", "checked", "signed", "received", "checked", "revealed",
            "received", "checked", "received", "round", "released", "this", "its"]
        assert "reserved the round's worst-case cost in its ledger" in mine[4]
        assert f"site {site}: received a release request (capePCA, round memory/capePCA, stage A)" in mine[6]
        assert "signed by the helper the roster pins" in mine[7] and "every site of the plan reserved" in mine[7]
        assert mine[8].startswith(f"site {site}: released its stage A statistic with its noise: 2,080 numbers, masked")
        assert "recorded the stage as spent in its ledger before signing" in mine[10]
        assert mine[11] == f"site {site}: signed the survivor set of stage A: east, north, south"
        assert mine[14].startswith(f"site {site}: revealed 3 self-mask share(s) (sites in the set) and 0 noise")
        assert "ended: released; published: eigenvalues (5), components (64 x 5)" in mine[18]
        assert mine[19].startswith(f"site {site}: released stage A (its release unmasked by the survivor set it "
                                   "signed: east, north, south): mu = ")
        assert mine[20].startswith(f"site {site}: this round spent eps = ")
        assert mine[21].startswith(f"site {site}: its ledger: eps = ") and mine[21].endswith(
            "what remains allows 6 more round(s) like this one; the study allows 4 more of capePCA")
    helper = [line for line in lines if line.startswith("helper: ")]
    assert any("sent 3 sealed, signed shares e_s" in line for line in helper)
    assert not any("REFUSED" in line for line in lines)


def test_a_refusal_quotes_the_failed_check_and_is_a_warning(tmp_path, caplog):
    demo = prepare_demo(tmp_path)
    north = next(n for n in demo.nodes if n["name"] == "north")
    with caplog.at_level(logging.INFO, logger="capefed.party"):
        reply = answer("release", north, Payload({"round": "r1", "stage": "A"}), {})
    assert reply.config["status"] == "refused"
    (received, refused) = [r for r in caplog.records if r.name == "capefed.party"]
    assert received.levelno == logging.INFO and refused.levelno == logging.WARNING
    assert refused.getMessage() == f"site north: REFUSED: {reply.config['reason']}"


def test_what_the_aggregator_sent_stays_on_one_bounded_line():
    request = Payload({"round": "r\n1\x1b[31m" + "x" * 500, "algorithm": "capePCA\r\nsite north: released"})
    refusal = Payload({"status": "refused", "reason": "the field 'stage' is 'A\nsite north: released'"})
    lines = describe("site", "north", "hello\nforged", request, refusal)
    assert len(lines) == 2 and all("\n" not in line and "\r" not in line and "\x1b" not in line for line in lines)
    assert len(lines[0]) < 300
