"""What a federated run reads from outside: its message log read back (dpcore.federation.parse_message_log, every
field and size checked), its comparison with the protocol's round, a site's node configuration
(capefed.app.site.SiteConfig) and the key=value text the launcher hands to Flower
(capefed.ops.federation.node_config_text, read back by Flower's own parser). Property-based tests (Hypothesis) for each
parser."""

from __future__ import annotations

import copy
import json
import math
import re

import numpy as np
import pytest
from capefed.app.site import SiteConfig, SiteConfigError
from capefed.ops.demo import message_log_round, prepare_demo, run_in_memory
from capefed.ops.federation import FederationError, node_config_text
from flwr.common.config import parse_config_args
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore.federation import (
    LOG_FORMAT,
    compare_with_protocol,
    parse_message_log,
    protocol_differences,
    round_protocol,
)
from dpcore.limits import MAX_MESSAGE_LOG_BYTES, MAX_MESSAGE_LOG_DEPTH, MAX_MESSAGE_LOG_ENTRIES, MAX_MESSAGE_LOG_ROUNDS
from dpcore.validation import InputError


@pytest.fixture(scope="module")
def log_document(tmp_path_factory):
    """The message log of an in-memory run of both rounds (capeAGN on the projected path), as the launcher writes
    it, and the outcomes."""
    demo = prepare_demo(tmp_path_factory.mktemp("log") / "data", agn_path="projected")
    outcomes = run_in_memory(demo)
    assert [o.status for o in outcomes] == ["released", "released"]
    return {"format": LOG_FORMAT, "rounds": [message_log_round(o.to_dict()) for o in outcomes]}, outcomes


def _text(document) -> str:
    return json.dumps(document)


def test_a_written_log_reads_back_and_matches_the_protocol(log_document):
    document, outcomes = log_document
    log = parse_message_log(_text(document))
    assert [r.algorithm for r in log.rounds] == ["capePCA", "capeAGN"]
    for logged, outcome in zip(log.rounds, outcomes, strict=True):
        assert list(logged.entries) == outcome.log
        assert logged.settings == outcome.plan.settings and logged.budgets == outcome.plan.budgets
        rows = compare_with_protocol(logged.entries, round_protocol(logged))
        assert rows and {r.status for r in rows} == {"same"}
        assert sum(r.run_count for r in rows) == sum(1 for e in logged.entries if e.protocol)
        assert protocol_differences(logged.entries, outcome.plan) == []
    agn = compare_with_protocol(log.rounds[1].entries, round_protocol(log.rounds[1]))
    w_to_helper = [r for r in agn if r.receiver == "helper"]
    assert [(r.content, r.run_shape, r.protocol_shape) for r in w_to_helper] == [("W (whitening)", (10, 3), (10, 3))]


def test_differences_are_named(log_document):
    document, _ = log_document
    changed = copy.deepcopy(document)
    entries = changed["rounds"][0]["entries"]
    release = next(e for e in entries if e["content"] == "Ahat_east")
    release["shape"], release["unique"] = [64, 63], 2016
    dropped = next(e for e in entries if e["content"] == "f_north")
    entries.remove(dropped)
    entries.append(dict(dropped, content="extra", step=9))
    logged = parse_message_log(_text(changed)).rounds[0]
    rows = {r.content: r for r in compare_with_protocol(logged.entries, round_protocol(logged))}
    assert rows["Ahat_east"].status == "different" and rows["Ahat_east"].run_shape == (64, 63)
    assert rows["f_north"].status == "only in the protocol" and rows["f_north"].run_count == 0
    assert rows["extra"].status == "only in the run" and rows["extra"].protocol_count == 0
    assert sum(r.status == "same" for r in rows.values()) == len(rows) - 3


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.update(rounds=[]), "no list of rounds"),
    (lambda d: d["rounds"][0].update(algorithm="capeX"), "algorithm must be one of"),
    (lambda d: d["rounds"][0].update(status="done"), "status must be one of"),
    (lambda d: d["rounds"][0]["entries"][0].pop("sender"), "'sender' is missing"),
    (lambda d: d["rounds"][0]["entries"][0].update(step="1"), "step must be int"),
    (lambda d: d["rounds"][0]["entries"][0].update(step=True), "step must be int"),
    (lambda d: d["rounds"][0]["entries"][0].update(shape=[1, 2, 3, 4]), "shape must be a list of at most 3"),
    (lambda d: d["rounds"][0]["entries"][0].update(channel="pigeon"), "channel must be one of"),
    (lambda d: d["rounds"][0]["entries"][0].update(content="x" * 301), "longer than 300"),
    (lambda d: d["rounds"][0]["entries"][0].update(bytes=-1), "between 0 and 10^15"),
    (lambda d: d["rounds"][0]["plan"]["settings"].update(k="five"), "plan settings"),
    (lambda d: d["rounds"][0]["plan"]["settings"].update(algorithm="capeAGN"), "the plan is for capeAGN"),
    (lambda d: d["rounds"][0]["plan"]["sites"][0].update(eps=float("nan")),
     "plan site 1 (east), eps: must be a number from 1e-06 to 10000 (got nan)"),  # the scenario's rule and message
])
def test_a_malformed_log_is_refused_with_the_field(log_document, change, words):
    document = copy.deepcopy(log_document[0])
    change(document)
    with pytest.raises(InputError, match=re.escape(words)):
        parse_message_log(json.dumps(document))


def test_every_limit_is_checked(log_document):
    document = log_document[0]
    with pytest.raises(InputError, match="bytes, more than"):
        parse_message_log(b" " * (MAX_MESSAGE_LOG_BYTES + 1))
    with pytest.raises(InputError, match=f"levels deep; at most {MAX_MESSAGE_LOG_DEPTH} are allowed"):
        parse_message_log("[" * (MAX_MESSAGE_LOG_DEPTH + 1) + "]" * (MAX_MESSAGE_LOG_DEPTH + 1))
    with pytest.raises(InputError, match="nested 100,000 levels deep"):
        parse_message_log("[" * 100_000)  # deeper than the JSON parser's own recursion limit
    with pytest.raises(InputError, match="rounds, more than"):
        parse_message_log(json.dumps(dict(document, rounds=document["rounds"] * (MAX_MESSAGE_LOG_ROUNDS // 2 + 1))))
    many = copy.deepcopy(document)
    small = {"algorithm": "capePCA", "stage": "A", "step": 0, "sender": "a", "receiver": "b", "content": "",
             "shape": [], "numbers": 0, "unique": 0, "bytes": 0, "channel": "control", "route": [], "protocol": False}
    many["rounds"][0]["entries"] = [small] * (MAX_MESSAGE_LOG_ENTRIES + 1)
    with pytest.raises(InputError, match=f"more than {MAX_MESSAGE_LOG_ENTRIES:,} messages"):
        parse_message_log(json.dumps(many, separators=(",", ":")))
    with pytest.raises(InputError, match="not valid UTF-16"):
        parse_message_log(b"\xff\xfe{")


def test_a_round_without_a_plan_says_there_is_nothing_to_compare(log_document):
    document = copy.deepcopy(log_document[0])
    document["rounds"][1]["plan"] = None
    logged = parse_message_log(json.dumps(document)).rounds[1]
    with pytest.raises(InputError, match="has no plan"):
        round_protocol(logged)


_json = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False)
                     | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                                   max_size=4),
                     max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | _json.map(json.dumps))
def test_any_input_is_a_log_or_a_clear_refusal(content):
    try:
        parse_message_log(content)
    except InputError as exc:
        assert str(exc)


_ENTRY_KEYS = ("algorithm", "stage", "step", "sender", "receiver", "content", "shape", "numbers", "unique", "bytes",
               "channel", "route", "protocol", "site")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_change_of_one_field_is_read_or_refused_never_crashes(log_document, data):
    """One field of one message, round or plan replaced by an arbitrary JSON value: the log is read (and compared
    with the protocol) or refused with an InputError; nothing else."""
    document = copy.deepcopy(log_document[0])
    r = data.draw(st.integers(0, 1))
    target = data.draw(st.sampled_from(["entry", "round", "plan-settings", "plan-site"]))
    if target == "entry":
        holder = document["rounds"][r]["entries"][data.draw(st.integers(0, len(document["rounds"][r]["entries"]) - 1))]
        key = data.draw(st.sampled_from(_ENTRY_KEYS))
    elif target == "round":
        holder, key = document["rounds"][r], data.draw(st.sampled_from(["algorithm", "status", "reason", "seconds",
                                                                         "entries", "plan"]))
    elif target == "plan-settings":
        holder = document["rounds"][r]["plan"]["settings"]
        key = data.draw(st.sampled_from(sorted(holder)))
    else:
        holder = document["rounds"][r]["plan"]["sites"][0]
        key = data.draw(st.sampled_from(sorted(holder)))
    holder[key] = data.draw(_json)
    try:
        log = parse_message_log(json.dumps(document))
    except InputError:
        return
    for logged in log.rounds:
        try:
            compare_with_protocol(logged.entries, round_protocol(logged))
        except InputError:
            pass


# --- node configuration ----------------------------------------------------------------------------------------

_KEYS = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,12}", fullmatch=True)
_VALUES = (st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=20))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=6))
def test_node_config_text_is_read_back_by_flower_as_the_same_mapping(config):
    """What the launcher passes as --node-config / --run-config is either refused by it (white space, quotes,
    backslashes, control characters) or parsed by Flower into exactly the same mapping."""
    try:
        text = node_config_text(config)
    except FederationError as exc:
        assert "cannot hold" in str(exc)
        return
    parsed = parse_config_args([text]) if text else {}
    assert parsed.keys() == config.keys()
    for key, value in config.items():
        assert type(parsed[key]) is type(value), key
        assert parsed[key] == value or (isinstance(value, float) and math.isclose(parsed[key], value)), key


@pytest.mark.parametrize("config, words", [
    ({"a b": 1}, "configuration key"), ({"x": float("inf")}, "finite"), ({"x": 2**64}, "64 bits"),
    ({"x": [1]}, "boolean, an integer"), ({"x": 'a"b'}, "quotes"), ({"x": "a\tb"}, "white space"),
])
def test_node_config_text_refuses_what_flower_cannot_carry(config, words):
    with pytest.raises(FederationError, match=words):
        node_config_text(config)


_SITE_VALUES = st.none() | _VALUES | st.lists(st.integers(), max_size=2)


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional={k: _SITE_VALUES for k in (
    "role", "name", "eps", "delta", "weight", "seed", "pca-data", "pca-n", "agn-data", "agn-n")}))
def test_any_site_configuration_is_read_or_refused_with_a_reason(config):
    try:
        site = SiteConfig.from_mapping(config)
    except SiteConfigError as exc:
        assert str(exc)
        return
    assert site.eps > 0 and 0 < site.delta < 1 and site.name and len(site.name) <= 64
    assert site.weight is None or site.weight >= 0
    assert all(n >= 1 for _, n in site.data.values())
    assert np.isfinite(site.eps)


@pytest.mark.parametrize("agn_path", ["dense", "projected"])
def test_a_helper_free_log_matches_the_helper_free_protocol(tmp_path, agn_path):
    """dpcore.cape.protocol knows both noise variants: in a helper-free round the sites send each e_s (the secure
    sum) and no W goes to a helper on the projected path, and every message of the run is the protocol's."""
    demo = prepare_demo(tmp_path / "data", agn_path=agn_path, noise="helper-free")
    outcomes = run_in_memory(demo)
    assert [o.status for o in outcomes] == ["released", "released"]
    for outcome in outcomes:
        logged = parse_message_log(_text({"format": LOG_FORMAT, "rounds": [message_log_round(outcome.to_dict())]}))
        rows = compare_with_protocol(logged.rounds[0].entries, round_protocol(logged.rounds[0]))
        assert rows and {r.status for r in rows} == {"same"}, [r for r in rows if r.status != "same"]
        assert {r.sender for r in rows if r.content.startswith(("e_", "E"))} == {"sites"}
        assert not [r for r in rows if r.receiver == "helper" or r.sender == "helper"]
