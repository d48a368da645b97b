"""Issue 29, cause 1: JSON parsed without a bound (a stranger's 4 KB nested hello raised RecursionError out of the
aggregator's handler). The class: every JSON input of the project reads through the one bounded reader
(dpcore.textio.load_json; tools/check_layout.py fails on any other JSON parse), and every reader gives a value or its
own refusal for any input: nested, huge, binary, not UTF-8, lone surrogates, long numbers. The readers are a table
(READERS); each is fed the same generated inputs."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from capefed.app.messages import Payload
from capefed.app.partylog import _noise
from capefed.app.requests import RequestError, round_context
from capefed.app.trust import TrustError, make_identity, read_roster, signed_statement, verify_statement, write_roster
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore import limits
from dpcore.experiments import spec_from_json
from dpcore.federation import parse_message_log, read_ledger
from dpcore.scenario import load_scenario, scenario_from_json
from dpcore.scenario.settings_link import Setting, settings_from_query
from dpcore.textio import load_json
from dpcore.validation import InputError

NESTED_HELLO = "[" * 2048 + "]" * 2048  # 4 KB: the stranger's hello of the issue


def _text(data: str | bytes) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", "surrogateescape")


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """A roster with one site ("north") and its identity key."""
    folder = tmp_path_factory.mktemp("keys")
    public = make_identity(folder / "north.key")
    write_roster(folder / "roster.json", {"north": ("site", public)})
    return folder


def _file_reader(read: Callable[[str], object], refusal: tuple[type[Exception], ...], name: str):
    def reader(data: str | bytes, folder) -> None:
        path = folder / name
        path.write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
        try:
            read(str(path))
        except refusal:
            pass
    return reader


def _refused_or_read(call: Callable[[], object], refusal: tuple[type[Exception], ...]) -> None:
    try:
        call()
    except refusal:
        pass


SETTINGS = {"p_count": Setting(default=3, label="count", low=0, high=9),
            "p_name": Setting(default="a", label="name", choices=("a", "b"))}

# name -> reader(data, folder): returns when the input is read or refused by the reader's own refusal; anything else
# raised (RecursionError, UnicodeError, OverflowError, TypeError, ...) fails the test.
READERS: dict[str, Callable] = {
    "load_json": lambda d, f: _refused_or_read(lambda: load_json(d), (InputError,)),
    "scenario text": lambda d, f: _refused_or_read(lambda: scenario_from_json(_text(d)), (InputError,)),
    "scenario file": _file_reader(load_scenario, (InputError,), "scenario.json"),
    "sweep specification": lambda d, f: _refused_or_read(lambda: spec_from_json(_text(d)), (InputError,)),
    "message log": lambda d, f: _refused_or_read(lambda: parse_message_log(d), (InputError,)),
    "ledger": _file_reader(lambda p: read_ledger(p, bytes(32), "north"), (InputError,), "north-ledger.json"),
    "roster": _file_reader(read_roster, (TrustError,), "roster.json"),
    "site statement": lambda d, f: _refused_or_read(
        lambda: verify_statement(read_roster(f.parent / "roster.json"), _text(d), b"\0" * 64, "r"), (TrustError,)),
    "round settings": lambda d, f: _refused_or_read(
        lambda: round_context({"round": "r", "settings": _text(d), "statements": [], "signatures": []},
                              read_roster(f.parent / "roster.json")), (RequestError,)),
    "page settings link": lambda d, f: settings_from_query(_text(d), SETTINGS),
    "a party's log of a request": lambda d, f: _noise(Payload(config={"settings": _text(d)})),
}


@pytest.fixture
def folder(keys, tmp_path):
    work = keys / "work"
    work.mkdir(exist_ok=True)
    return work


def _nested(depth: int, opener: str) -> str:
    closer = {"[": "]", "{": "}"}[opener]
    if opener == "{":
        return '{"a":' * depth + "1" + "}" * depth
    return opener * depth + closer * depth


@pytest.mark.parametrize("reader", list(READERS))
def test_a_strangers_nested_hello_and_deeper_nesting_are_refused_by_every_reader(reader, folder):
    for data in (NESTED_HELLO, _nested(100_000, "["), _nested(5_000, "{"), "[" * 300_000, NESTED_HELLO.encode()):
        READERS[reader](data, folder)
    with pytest.raises(InputError, match="nested 2,048 levels deep; at most 32 are allowed"):
        load_json(NESTED_HELLO)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30)


@st.composite
def hostile_json(draw) -> str | bytes:
    """Nested, huge-number, binary, not-UTF-8, lone-surrogate or valid JSON (as text or bytes)."""
    kind = draw(st.sampled_from(["nested", "number", "binary", "encoding", "surrogate", "valid", "brackets in text"]))
    if kind == "nested":
        depth = draw(st.integers(1, 50_000))
        text = _nested(depth, draw(st.sampled_from("[{")))
        cut = draw(st.integers(0, len(text)))
        return text[:cut] if draw(st.booleans()) else text
    if kind == "number":
        digits = draw(st.integers(1, 20_000))
        return draw(st.sampled_from(["[{}]", '{{"mu": {}}}', "{}"])).format(
            draw(st.sampled_from(["9", "1.5e", "-0.", "1" + "0" * 10])) + "9" * digits)
    if kind == "binary":
        return draw(st.binary(max_size=4096))
    if kind == "encoding":
        text = json.dumps(draw(json_values))
        return text.encode(draw(st.sampled_from(["utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252"])),
                           errors="replace")
    if kind == "surrogate":
        return json.dumps({draw(st.sampled_from(["\ud800", "k"])): draw(st.sampled_from(["\udfff", "\ud83d", "v"]))})
    if kind == "brackets in text":
        return json.dumps({"text": "[" * draw(st.integers(0, 5000))})
    return json.dumps(draw(json_values))


@settings(max_examples=60)
@given(data=hostile_json(), reader=st.sampled_from(sorted(READERS)))
def test_any_input_is_read_or_refused_by_every_json_reader(data, reader, keys):
    READERS[reader](data, keys / "work")


@given(hostile_json())
def test_the_one_reader_returns_bounded_values_or_refuses(data):
    try:
        value = load_json(data)
    except InputError as exc:
        assert exc.field == "json" and str(exc)
        return
    stack, depth = [(value, 0)], 0
    while stack:
        item, level = stack.pop()
        depth = max(depth, level)
        children = list(item.values()) + list(item) if isinstance(item, dict) else item if isinstance(
            item, list) else []
        stack.extend((c, level + 1) for c in children)
        if isinstance(item, str):
            item.encode("utf-8")  # no lone surrogate reaches a caller
        if isinstance(item, int) and not isinstance(item, bool):
            assert len(str(abs(item))) <= limits.MAX_NUMBER_CHARS
    assert depth <= limits.MAX_JSON_DEPTH


def test_size_is_bounded_before_the_text_is_scanned():
    big = " " * (limits.MAX_JSON_BYTES + 1)
    with pytest.raises(InputError, match="more than the 8,000,000 allowed"):
        load_json(big)
    with pytest.raises(InputError, match="more than the 100 allowed"):
        load_json("[" + "1," * 60 + "1]", max_bytes=100)
    with pytest.raises(InputError, match="at most 8 are allowed"):
        load_json("[" * 9 + "]" * 9, max_depth=8)
    assert load_json("[" * 8 + "]" * 8, max_depth=8) == [[[[[[[[]]]]]]]]
    with pytest.raises(InputError, match="at most 32 are allowed"):  # a caller cannot raise the bound
        load_json("[" * 33 + "]" * 33, max_depth=10_000)


def test_a_strangers_nested_hello_is_ignored_by_the_aggregator_and_the_round_goes_on(tmp_path):
    """In a real round (in memory): a fourth node, unknown to the roster, answers the hello with a 4 KB nested
    statement; the aggregator lists it as ignored, naming the check, and the three sites' round is released."""
    from capefed.app.rounds import run_round, settings_from_run_config
    from capefed.ops.demo import fresh_ledgers, prepare_demo
    from capefed.ops.memory import party_node
    from test_federated_rounds import Intercepting

    demo = prepare_demo(tmp_path / "data", noise="helper")
    nodes = fresh_ledgers(demo, tmp_path / "ledgers")
    stranger = dict(next(n for n in nodes if n.get("name") == "east"), name="stranger")
    nodes.append(stranger)
    stranger_node = len(nodes)

    def nested_hello(action, node, payload):
        if action == "hello" and node == stranger_node:  # the stranger's own answer: a well-formed hello but for it
            return Payload(config={"status": "ok", "role": "site", "name": "stranger", "n": 100, "eps": 1.0,
                                   "delta": 1e-5, "dim": 4, "public_key": b"\1" * 32, "statement": NESTED_HELLO,
                                   "signature": b"\0" * 64})
        return payload

    transport = Intercepting([party_node(n) for n in nodes], reply=nested_hello)
    outcome = run_round(transport, settings_from_run_config(demo.run_config, "capePCA", "nested/hello"))
    assert outcome.status == "released", outcome.reason
    assert outcome.took_part == ("east", "north", "south")
    assert any(f"node {stranger_node}" in line and "nested 2,048 levels deep" in line
               for line in outcome.ignored), outcome.ignored


def test_nested_round_settings_are_refused_by_the_parties_not_raised(tmp_path):
    """The aggregator sends every party round settings nested 2,048 deep: each refuses, naming the field; nothing is
    released and no exception leaves a handler."""
    from capefed.app.rounds import run_round, settings_from_run_config
    from capefed.ops.demo import fresh_ledgers, prepare_demo
    from capefed.ops.memory import party_node
    from test_federated_rounds import Intercepting

    demo = prepare_demo(tmp_path / "data", noise="helper")
    nodes = fresh_ledgers(demo, tmp_path / "ledgers")

    def nested_settings(action, node, payload):
        if "settings" in payload.config:
            payload.config["settings"] = NESTED_HELLO
        return payload

    transport = Intercepting([party_node(n) for n in nodes], request=nested_settings)
    outcome = run_round(transport, settings_from_run_config(demo.run_config, "capePCA", "nested/settings"))
    assert outcome.status == "stopped" and outcome.aggregates == {}
    assert "request field 'settings' is nested 2,048 levels deep" in outcome.reason


def test_a_nested_roster_stops_the_round_with_the_reason(tmp_path):
    from capefed.app.rounds import run_round, settings_from_run_config
    from capefed.ops.demo import prepare_demo
    from capefed.ops.memory import InMemoryTransport, party_node

    demo = prepare_demo(tmp_path / "data", noise="helper")
    roster = tmp_path / "nested-roster.json"
    roster.write_text(NESTED_HELLO)
    config = dict(demo.run_config, roster=str(roster))
    outcome = run_round(InMemoryTransport([party_node(n) for n in demo.nodes]),
                        settings_from_run_config(config, "capePCA", "nested/roster"))
    assert outcome.status == "stopped" and "the aggregator's roster" in outcome.reason
    assert "nested 2,048 levels deep" in outcome.reason


def test_a_statement_signed_by_a_pinned_key_is_still_read(keys):
    """The bound refuses nothing a party writes: a real statement verifies."""
    from capefed.app.trust import load_identity

    text, signature = signed_statement(load_identity(keys / "north.key"), "r", "north",
                                       {"name": "north", "n": 10, "eps": 1.0, "delta": 1e-5, "dim": 4}, b"\1" * 32)
    assert verify_statement(read_roster(keys / "roster.json"), text, signature, "r").name == "north"
