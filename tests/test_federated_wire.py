"""Hostile input at the boundary of a federated run (issue 29, causes 2 and 3; issue 30): the one guarded decoder of
every Flower record (capefed.app.wire), round keys of small order (capefed.app.sealing), the secret-sharing layout
(capefed.app.shares) and the range of a release (dpcore.federation.masking). Written from the class of input, with
Hypothesis where it applies: every record is a payload or a WireError naming what is wrong, before anything is
allocated; no party's handler raises for any of them."""

from __future__ import annotations

import io
import itertools
import json
import math
import tracemalloc

import numpy as np
import pytest
from capefed.app import shares
from capefed.app.client_app import handle
from capefed.app.messages import Payload, bundle
from capefed.app.rounds import run_rounds, settings_from_run_config
from capefed.app.sealing import SealError, check_public_key, new_key_pair, pair_key, seal_bytes
from capefed.app.server_app import FlowerTransport
from capefed.app.wire import WireError, decode_array, from_records, to_records
from capefed.ops.demo import prepare_demo
from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib import format as npy
from test_federated_flower_objects import LocalGrid, task_identity  # noqa: F401  (the fixture)

from dpcore.federation import (
    RELEASE_TAIL,
    RoundSettings,
    SiteBudget,
    plan_round,
    quantised_release,
    release_bound,
    release_encoding,
)
from dpcore.limits import MAX_WIRE_ARRAY_NUMBERS
from dpcore.privacy.symmetric import unique_entries_matrix, unique_entries_tensor
from dpcore.scenario import Site
from dpcore.tensor.moments import mog_sites, stm_site_from_words

_RUNS = itertools.count()


def _npy(header: dict, body: bytes = b"", version: tuple[int, int] = (1, 0)) -> bytes:
    out = io.BytesIO()
    (npy.write_array_header_1_0 if version == (1, 0) else npy.write_array_header_2_0)(out, header)
    return out.getvalue() + body


def _record(array: Array) -> RecordDict:
    return RecordDict({"config": ConfigRecord({"status": "ok"}), "arrays": ArrayRecord({"x": array})})


def test_payloads_travel_unchanged():
    payload = Payload({"n": 3, "x": 0.5, "s": "north", "b": b"\x00\xff", "l": [b"a", b"b"], "t": ["x"]},
                      {"f": np.arange(6.0), "m": np.arange(4, dtype=np.uint64), "w": np.ones((3, 2))})
    back = from_records(to_records(payload))
    assert back.config == payload.config
    for key, values in payload.arrays.items():
        assert back.arrays[key].dtype == values.dtype and np.array_equal(back.arrays[key], values)


@pytest.mark.parametrize("array, words", [
    (Array(dtype="float64", shape=(10**9,), stype="numpy.ndarray",
           data=_npy({"descr": "<f8", "fortran_order": False, "shape": (10**9,)}, b"\0" * 8)),
     "declares 1,000,000,000"),
    (Array(dtype="float64", shape=(3,), stype="numpy.ndarray",
           data=_npy({"descr": "<f8", "fortran_order": False, "shape": (10**9,)}, b"\0" * 24)), "differs"),
    (Array(dtype="float64", shape=(3,), stype="numpy.ndarray",
           data=_npy({"descr": "<f8", "fortran_order": False, "shape": (3,)}, b"\0" * 16)), "carries 16 bytes"),
    (Array(dtype="float64", shape=(3,), stype="numpy.ndarray",
           data=_npy({"descr": "<f8", "fortran_order": False, "shape": (3,)}, b"\0" * 32)), "carries 32 bytes"),
    (Array(dtype="float64", shape=(2, 2), stype="numpy.ndarray",
           data=_npy({"descr": "<f8", "fortran_order": True, "shape": (2, 2)}, b"\0" * 32)), "differs"),
    (Array(dtype="object", shape=(1,), stype="numpy.ndarray",
           data=_npy({"descr": "|O", "fortran_order": False, "shape": (1,)}, b"\0" * 8)), "float64 or uint64"),
    (Array(dtype="float64", shape=(1,), stype="torch.tensor", data=b""), "float64 or uint64"),
    (Array(dtype="float64", shape=(1,), stype="numpy.ndarray", data=b"not an npy header"), "no valid .npy header"),
    (Array(dtype="float64", shape=(1, 1, 1, 1), stype="numpy.ndarray", data=b""), "invalid shape"),
    (Array(dtype="float64", shape=(1,), stype="numpy.ndarray",
           data=b"\x93NUMPY\x03\x00" + b"\0" * 40), "no valid .npy header"),
    (Array(dtype="float64", shape=(1,), stype="numpy.ndarray",
           data=b"\x93NUMPY\x01\x00\xff\xff" + b" " * 65535), "no valid .npy header"),
])
def test_a_malformed_array_is_refused_before_anything_is_allocated(array, words, settled):
    tracemalloc.start()
    try:
        with pytest.raises(WireError, match=words):
            from_records(_record(array))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # nothing the size of what was claimed


def test_other_records_and_values_are_refused():
    with pytest.raises(WireError, match="unexpected records"):
        from_records(RecordDict({"config": ConfigRecord({}), "metrics": MetricRecord({"a": 1.0})}))
    with pytest.raises(WireError, match="not finite"):
        from_records(RecordDict({"config": ConfigRecord({"x": float("nan")})}))
    with pytest.raises(WireError, match="not a RecordDict"):
        from_records({"config": {}})


_HEADER = st.fixed_dictionaries({
    "descr": st.sampled_from(["<f8", "<u8", ">f8", "<f4", "|O", "<i8", "|b1"]),
    "fortran_order": st.booleans(),
    "shape": st.lists(st.integers(0, 2**40), max_size=4).map(tuple)})


@settings(max_examples=300, deadline=None)
@given(header=_HEADER, body=st.binary(max_size=256), dtype=st.sampled_from(["float64", "uint64", "int64", "bogus"]),
       shape=st.lists(st.integers(-2, 2**40), max_size=4).map(tuple), cut=st.integers(0, 400))
def test_any_array_record_is_a_payload_or_a_refusal(header, body, dtype, shape, cut):
    try:
        data = _npy(header, body)
    except ValueError:
        data = body
    array = Array(dtype=dtype, shape=tuple(int(d) for d in shape), stype="numpy.ndarray", data=data[:cut] + data[cut:])
    try:
        payload = from_records(_record(array))
    except WireError as exc:
        assert str(exc)
        return
    x = payload.arrays["x"]
    assert x.dtype in (np.float64, np.uint64) and x.size <= MAX_WIRE_ARRAY_NUMBERS


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=300), st.integers(0, 200), st.integers(0, 255))
def test_any_corruption_of_real_npy_bytes_is_a_payload_or_a_refusal(extra, position, value):
    good = Array(np.arange(20.0))
    data = bytearray(good.data)
    data[min(position, len(data) - 1)] = value
    for candidate in (bytes(data), good.data + extra, good.data[: position % len(good.data)]):
        try:
            x = decode_array("x", Array(dtype="float64", shape=(20,), stype="numpy.ndarray", data=candidate))
        except WireError:
            continue
        assert x.shape == (20,) and x.dtype == np.float64


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return prepare_demo(tmp_path_factory.mktemp("wire") / "data", noise="helper-free", ledger_rounds=10_000)


def _settings(demo):
    run = next(_RUNS)
    return [settings_from_run_config(dict(demo.run_config, timeout=5.0), "capePCA", f"7/wire/{run}")]


def test_a_malformed_reply_is_a_refusal_of_that_party_never_an_exception(demo):
    """A site whose Flower reply claims 10^9 numbers in 100 bytes: the round stops naming it; nothing raised."""
    grid = LocalGrid(demo.nodes)
    original = grid.push_messages
    claim = Array(dtype="float64", shape=(10**9,), stype="numpy.ndarray",
                  data=_npy({"descr": "<f8", "fortran_order": False, "shape": (10**9,)}, b"\0" * 8))

    def hostile(messages):
        ids = original(messages)
        for message_id, message in zip(ids, messages, strict=True):
            releases = message.content["config"].get("bundle:actions") == ["release"]
            if releases and message.metadata.dst_node_id == 3 and message_id in grid.replies:
                reply = grid.replies[message_id]
                reply.content["arrays"] = ArrayRecord({"x": claim})
        return ids

    grid.push_messages = hostile
    (outcome,) = run_rounds(FlowerTransport(grid, poll=0.01), _settings(demo))
    name = demo.nodes[2]["name"]
    assert outcome.status == "stopped" and name in outcome.sites
    assert "sent a malformed message" in outcome.reason and "1,000,000,000" in outcome.reason


def test_a_node_refuses_a_malformed_request_never_raises(demo):
    config = dict(demo.nodes[1])
    context = Context(run_id=7, node_id=2, node_config=config, state=RecordDict(), run_config={})
    claim = Array(dtype="uint64", shape=(10**9,), stype="numpy.ndarray",
                  data=_npy({"descr": "<u8", "fortran_order": False, "shape": (10**9,)}, b"\0" * 8))
    content = to_records(bundle([("0", "hello", Payload({"round": "r", "algorithm": "capePCA"}))]))
    content["arrays"] = ArrayRecord({"0#x": claim})
    message = Message(content, 2, "query.bundle")
    reply = from_records(handle(message, context).content)
    assert reply.config["status"] == "refused" and "1,000,000,000" in reply.config["reason"]


# -- round keys of small order (RFC 7748) --------------------------------------------------------------------------

_P = 2**255 - 19


def _x25519(scalar: bytes, u: bytes) -> int:
    """RFC 7748's X25519, written out (the check of the library's refusal)."""
    k = bytearray(scalar)
    k[0] &= 248
    k[31] &= 127
    k[31] |= 64
    k_int, x1 = int.from_bytes(k, "little"), (int.from_bytes(u, "little") & ((1 << 255) - 1)) % _P
    x2, z2, x3, z3, swap = 1, 0, x1, 1, 0
    for t in reversed(range(255)):
        bit = (k_int >> t) & 1
        swap ^= bit
        if swap:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b = (x2 + z2) % _P, (x2 - z2) % _P
        aa, bb = a * a % _P, b * b % _P
        e = (aa - bb) % _P
        c, d = (x3 + z3) % _P, (x3 - z3) % _P
        da, cb = d * a % _P, c * b % _P
        x3, z3 = (da + cb) ** 2 % _P, x1 * (da - cb) ** 2 % _P
        x2, z2 = aa * bb % _P, e * (aa + 121665 * e) % _P
    if swap:
        x2, z2 = x3, z3
    return x2 * pow(z2, _P - 2, _P) % _P


def _small_order_points() -> list[bytes]:
    """Every encoding of a point of order 1, 2, 4 or 8: u = 0, 1, p - 1, the two u of order 8, each also + p when
    that fits in 255 bits, and each with the (ignored) top bit set."""
    order8 = [int.from_bytes(bytes.fromhex(h), "little") for h in (
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157")]
    values = [0, 1, _P - 1, *order8]
    values += [u + _P for u in values if u + _P < 2**255]
    values += [u | (1 << 255) for u in values]
    return [u.to_bytes(32, "little") for u in values]


def test_round_keys_of_small_order_are_refused_at_the_boundary():
    points = _small_order_points()
    assert len(points) >= 12
    for point in points:
        assert _x25519(new_key_pair()[0], point) == 0  # a known shared secret, whatever the private key
        with pytest.raises(SealError, match="small order"):
            check_public_key(point)
        with pytest.raises(SealError):
            seal_bytes(b"x", point, b"context")
        with pytest.raises(SealError):
            pair_key(new_key_pair()[0], point, b"context")
    for _ in range(20):
        key = new_key_pair()[1]
        check_public_key(key)
        assert _x25519(new_key_pair()[0], key) != 0
    for bad in (b"", b"\x01" * 31, "text", None):
        with pytest.raises(SealError):
            check_public_key(bad)


def test_a_statement_with_a_small_order_key_is_ignored_by_the_aggregator_and_refused_by_the_helper(demo, tmp_path):
    from capefed.app.messages import unbundle
    from capefed.app.node import answer
    from capefed.app.trust import load_identity, signed_statement
    from capefed.ops.memory import InMemoryTransport, party_node

    east = next(n for n in demo.nodes if n["name"] == "east")
    identity = load_identity(east["identity"])
    state: dict[str, bytes] = {}

    def forge(action, request):
        """east's hello, signed by east, with the all-zero round key."""
        items = unbundle(answer(action, east, request, state))
        for _, inner, payload in items:
            if inner == "hello":
                round_id = unbundle(request)[0][2].config["round"]
                budget = json.loads(payload.config["statement"])["budget"]
                statement, signature = signed_statement(identity, round_id, "east", budget, bytes(32))
                payload.config.update(statement=statement, signature=signature, public_key=bytes(32))
        return bundle(items)

    nodes = [party_node(n) if n["name"] != "east" else forge for n in demo.nodes]
    (outcome,) = run_rounds(InMemoryTransport(nodes), _settings(demo))
    assert outcome.status == "stopped" and "small order" in " ".join(outcome.ignored)
    assert "expects 3 sites; 2 answered" in outcome.reason


# -- the shares' byte layout ---------------------------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))), st.randoms())
def test_any_threshold_many_shares_rebuild_the_seed_and_fewer_do_not(n_t, rnd):
    n, t = n_t
    seed = shares.new_seed()
    parts = shares.split(seed, t, n)
    assert [p[0] for p in parts] == list(range(1, n + 1)) and {len(p) for p in parts} == {shares.SHARE_BYTES}
    chosen = rnd.sample(parts, t)
    assert shares.combine(chosen, t) == seed
    if t > 1:
        with pytest.raises(shares.ShareError):
            shares.combine(chosen[:-1], t)
        with pytest.raises(shares.ShareError):
            shares.combine(chosen[:-1] + chosen[:1], t)  # a share twice counts once


def test_the_set_up_message_layout():
    seed = shares.new_seed()
    noise, mask = shares.split(seed, 2, 3)[1], shares.split(seed, 2, 3)[2]
    w = np.arange(5, dtype=np.uint64)
    plain = shares.pack_setup(w, noise, mask)
    assert len(plain) == shares.setup_bytes(5, True) == 8 * 5 + 2 * shares.SHARE_BYTES
    back = shares.parse_setup(plain, 5, True)
    assert np.array_equal(back[0], w) and back[1:] == (noise, mask)
    assert shares.parse_setup(mask, 5, False) == (None, None, mask)
    for bad in (plain[:-1], plain + b"\0", bytes(len(plain))):
        with pytest.raises(shares.ShareError):
            shares.parse_setup(bad, 5, True)
    ring = np.array([1, 2**64 - 1], dtype=np.uint64)
    assert np.array_equal(shares.unmask(shares.mask(ring, seed), seed), ring)
    assert shares.commitment("mask", "r", "A", "north", seed) != shares.commitment("noise", "r", "A", "north", seed)


def test_the_held_shares_layout():
    """What a site keeps from its set-up to its reveal: per plan site (noise-seed share or zeros | mask-seed share)."""
    seeds = [shares.new_seed() for _ in range(3)]
    noise = [shares.split(s, 2, 3) for s in seeds]
    mask = [shares.split(s, 2, 3) for s in reversed(seeds)]
    pairs = [shares.held_pair(noise[i][0], mask[i][0]) for i in range(2)] + [shares.held_pair(None, mask[2][0])]
    held = shares.pack_held(pairs)
    assert len(held) == 3 * shares.HELD_BYTES == 3 * 2 * shares.SHARE_BYTES
    assert shares.unpack_held(held, 3) == [(noise[0][0], mask[0][0]), (noise[1][0], mask[1][0]),
                                           (bytes(shares.SHARE_BYTES), mask[2][0])]
    assert all(shares.held_by(m[1], 1) and not shares.held_by(m[1], 0) for m in mask)
    assert not shares.held_by(mask[0][1][:-1], 1) and not shares.held_by("not bytes", 1)
    for bad in (held[:-1], held + b"\0"):
        with pytest.raises(shares.ShareError):
            shares.unpack_held(bad, 3)
    with pytest.raises(shares.ShareError):
        shares.held_pair(noise[0][0][:-1], mask[0][0])
    with pytest.raises(shares.ShareError):
        shares.pack_held(pairs[:2] + [pairs[2][:-1]])


# -- the range of a release ----------------------------------------------------------------------------------------

def _plan(algorithm="capePCA", **more):
    budgets = [SiteBudget(site=Site(name=n, n=s, eps=e, delta=1e-5, weight=None), dim=6)
               for n, s, e in (("a", 600, 0.5), ("b", 800, 1.0), ("c", 400, 1.0))]
    return plan_round(budgets, RoundSettings(algorithm=algorithm, k=2, dropouts=1, **more))


def test_the_range_is_the_statistic_bound_plus_a_gaussian_tail_at_release_tail():
    plan = _plan()
    stage = plan.stage("A")
    for i in range(3):
        d = stage.design
        sigma = math.sqrt(d.var_e[i] + d.var_f[i] + d.var_g[i])
        z = (release_bound(plan, stage, i) - 1.0) / sigma
        from scipy.stats import norm
        assert math.isclose(2 * stage.unique * norm.sf(z), RELEASE_TAIL, rel_tol=1e-6)
        encoding = release_encoding(plan, stage, i)
        assert encoding.bound * 2.0**encoding.bits < 2.0**62 <= 2 * encoding.bound * 2.0**encoding.bits


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_every_statistic_lies_within_its_bound(seed):
    """Random data within the public norm bound and a random W: the statistic part of the range holds (A, M2, M3 of
    both models), and quantising a release changes it by at most the ring's step."""
    rng = np.random.default_rng(seed)
    dim, k = 6, 2
    x = rng.standard_normal((dim, 50))
    x /= np.maximum(np.linalg.norm(x, axis=0), 1.0) * rng.uniform(1.0, 3.0)
    w = rng.standard_normal((dim, k)) * rng.uniform(0.1, 10.0)
    cube = float(np.max(np.linalg.norm(w, axis=0))) ** 3
    assert np.max(np.abs(x @ x.T / 50)) <= 1.0
    words = rng.integers(0, dim, (40, 3))
    stm = stm_site_from_words(words, dim)
    assert np.max(np.abs(stm.m2())) <= 1.0 and np.max(np.abs(stm.m3_projected(w))) <= cube * (1 + 1e-12)
    sigma2 = float(rng.uniform(0, 0.5))
    (mog,), s2, _ = mog_sites([x.T * 3], sigma2, 1.0)
    assert np.max(np.abs(mog.m2())) <= 1 + s2
    assert np.max(np.abs(mog.m3_projected(w))) <= (1 + 3 * s2) * cube * (1 + 1e-12)
    plan = _plan()
    stage = plan.stage("A")
    encoding = release_encoding(plan, stage, 0)
    value = unique_entries_matrix(x @ x.T / 50)
    assert np.max(np.abs(quantised_release(value, encoding) - value)) <= 2.0**-encoding.bits
    assert unique_entries_tensor(np.zeros((k, k, k))).size == k * (k + 1) * (k + 2) // 6
