"""The wire format: real agents' messages survive encode/decode exactly, the codec's payload bits
are the simulator's counted bits, and no byte string makes the decoder raise anything but
InvalidMessage."""

from __future__ import annotations

import pickle
import re
import struct
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mamab import topology as topo
from mamab.agents import ALGORITHMS, AlgorithmParams, make_agents, network
from mamab.algorithms.base import Message
from mamab.errors import ConfigError, InvalidMessage
from mamab.schedule import agent_bits, index_bits
from mamab.wire import (
    ALGORITHM_IDS,
    FRAME_HEADER_BYTES,
    KINDS,
    MESSAGE_HEADER_BYTES,
    Frame,
    WireSpec,
    decode_frame,
    decode_message,
    encode_frame,
    encode_message,
    message_bytes,
    payload_bits,
)

# -- helpers -------------------------------------------------------------------------------


def same(p, q) -> bool:
    """Exact equality of payloads: same types, same values, arrays equal bit for bit."""
    if isinstance(p, np.ndarray):
        return (
            isinstance(q, np.ndarray)
            and p.dtype == q.dtype
            and p.shape == q.shape
            and p.tobytes() == q.tobytes()
        )
    if isinstance(p, tuple):
        return isinstance(q, tuple) and len(p) == len(q) and all(map(same, p, q))
    if isinstance(p, float):
        return type(q) is float and struct.pack(">d", p) == struct.pack(">d", q)
    return type(p) is type(q) and p == q


def same_message(m: Message, n: Message) -> bool:
    return (m.sender, m.receiver, m.bits, m.stamp) == (n.sender, n.receiver, n.bits, n.stamp) and (
        same(m.payload, n.payload)
    )


def same_frame(f: Frame, g: Frame) -> bool:
    envelope = (f.sender, f.receiver, f.stamp, f.round, len(f.messages))
    return envelope == (g.sender, g.receiver, g.stamp, g.round, len(g.messages)) and all(
        map(same_message, f.messages, g.messages)
    )


def kind_code(message: Message, spec: WireSpec) -> int:
    """The code of the message's kind (through its encoding's message header)."""
    return encode_message(message, spec)[FRAME_HEADER_BYTES]


def frames_of(batch: list[Message], round_: int) -> list[Frame]:
    """One frame per (sender, receiver), in order of first appearance; per receiver, messages
    keep the order of the batch (a sender's messages are contiguous in it)."""
    grouped: dict[tuple[int, int], list[Message]] = {}
    for m in batch:
        grouped.setdefault((m.sender, m.receiver), []).append(m)
    return [Frame(s, r, ms[0].stamp, round_, tuple(ms)) for (s, r), ms in grouped.items()]


def drive(
    algorithm: str,
    graph: topo.Topology,
    n_arms: int,
    horizon: int,
    seed: int,
    params: AlgorithmParams | None = None,
    means: list[float] | None = None,
) -> Counter:
    """Run two copies of a fleet in lockstep, like the reference engine's host loop: copy A gets
    the agents' own messages, copy B only what decode(encode(frame)) gives back. Checks every
    frame round-trips exactly, payload bits equal counted bits, and both copies stay in the same
    state (pickles) and send the same bytes. Returns how many messages of each kind were seen."""
    spec = WireSpec(algorithm, n_arms, graph.n_agents)
    a = make_agents(algorithm, graph, n_arms, horizon, params, np.random.default_rng(seed))
    b = make_agents(algorithm, graph, n_arms, horizon, params, np.random.default_rng(seed))
    links = network(algorithm, graph)
    rewards = np.random.default_rng(seed + 1)
    means = rewards.random(n_arms) if means is None else np.array(means)
    seen: Counter = Counter()
    for _ in range(horizon):
        for x, y in zip(a, b, strict=True):
            if not x.plays:
                x.tick()
                y.tick()
                continue
            arm = x.select_arm()
            assert y.select_arm() == arm
            reward = float(rewards.random() < means[arm])
            x.observe(arm, reward)
            y.observe(arm, reward)
        round_ = 0
        while True:
            batch_a = [m for agent in a for m in agent.outgoing()]
            batch_b = [m for agent in b for m in agent.outgoing()]
            assert len(batch_a) == len(batch_b)
            if not batch_a:
                break
            for fa, fb in zip(frames_of(batch_a, round_), frames_of(batch_b, round_), strict=True):
                assert links.are_neighbours(fa.sender, fa.receiver)
                data = encode_frame(fa, spec)
                assert encode_frame(fb, spec) == data  # both copies say the same thing
                decoded = decode_frame(data, spec)
                assert same_frame(decoded, fa)
                assert len(data) == FRAME_HEADER_BYTES + sum(
                    message_bytes(m, spec) for m in fa.messages
                )
                for original, copy in zip(fa.messages, decoded.messages, strict=True):
                    assert payload_bits(original, spec) == original.bits
                    seen[kind_code(original, spec), _size(original.payload)] += 1
                    a[original.receiver].receive(original)
                    b[copy.receiver].receive(copy)
            round_ += 1
        for x, y in zip(a, b, strict=True):
            assert pickle.dumps(x) == pickle.dumps(y)
    return seen


def _size(payload) -> str:
    """'empty' for an empty list payload, else 'full' (to check edge cases were met)."""
    lists = [p for p in (payload if isinstance(payload, tuple) else ()) if isinstance(p, tuple)]
    return "empty" if lists and not lists[0] else "full"


def demab_means(graph: topo.Topology, n_arms: int, horizon: int, seed: int) -> list[float]:
    """Means under which agent 0's arms are all near-best and every other arm is poor: the
    others eliminate everything, the split becomes unbalanced, and the server re-divides."""
    agents = make_agents("demab", graph, n_arms, horizon, None, np.random.default_rng(seed))
    means = [0.1] * n_arms
    for i, arm in enumerate(agents[0].initial_arms):
        means[arm] = 0.9 - 0.01 * i
    return means


# -- round trips driven by real agents -----------------------------------------------------

ALL = "all kinds"
REAL = [  # algorithm, graph, K, T, kinds that must be seen (ALL: every kind of the algorithm)
    ("lcc-ucb", topo.complete(1), 1, 50, ()),  # K = 1, N = 1: nobody to talk to
    ("lcc-ucb", topo.complete(2), 2, 400, ALL),  # 1-bit arm indices
    ("lcc-ucb", topo.complete(3), 8, 600, ALL),  # K = 2^3: 3 bits
    ("lcc-ucb", topo.complete(3), 9, 600, ALL),  # K = 2^3 + 1: 4 bits
    ("lcc-ucb-graph", topo.ring(4), 16, 1500, ALL),
    ("lcc-ucb-graph", topo.line(3), 17, 1500, ALL),
    ("lcc-ucb-relay", topo.line(2), 5, 400, ALL),  # relay pairs with N = 2: 1-bit origins
    ("lcc-ucb-relay", topo.ring(5), 8, 1500, ALL),
    ("lcc-ucb-relay", topo.star(4), 4, 800, ALL),
    ("lcc-ucb-robust", topo.ring(4), 16, 1500, ALL),
    ("no-communication", topo.complete(3), 4, 100, ()),
    ("full-communication", topo.complete(2), 1, 60, ALL),  # K = 1: one-bit arm index
    ("full-communication", topo.ring(4), 2, 150, ALL),
    ("full-communication", topo.star(3), 9, 150, ALL),
    ("coop-ucb2", topo.complete(2), 1, 60, ALL),
    ("coop-ucb2", topo.ring(4), 3, 150, ALL),
    ("coop-ucb2", topo.star(5), 16, 100, ALL),
    ("dducb", topo.complete(2), 1, 60, ALL),  # K = 1: gossip from step 2
    ("dducb", topo.ring(4), 3, 150, ALL),
    ("dducb", topo.star(5), 16, 100, ALL),
    ("ucb-network", topo.complete(2), 1, 60, ALL),  # K = 1: 1-bit arms, 65-bit samples
    ("ucb-network", topo.ring(5), 3, 150, ALL),  # leaders 0 and 2 are neighbours of 1
    ("ucb-network", topo.star(5), 16, 100, ALL),
    ("gosine", topo.ring(2), 2, 400, ALL),
    ("gosine", topo.complete(3), 8, 1000, ALL),
    ("gosine", topo.star(4), 32, 1000, ALL),
    ("gosine-robust", topo.complete(3), 8, 1000, ALL),
    ("demab", topo.complete(1), 1, 200, ()),  # N = 1, K = 1: stage one covers the horizon
    ("demab", topo.complete(3), 9, 2000, (0, 1, 3)),  # report, count, best
]


@pytest.mark.parametrize(
    ("algorithm", "graph", "n_arms", "horizon", "expected"),
    REAL,
    ids=[f"{r[0]}-{r[1].name}{r[1].n_agents}-K{r[2]}" for r in REAL],
)
def test_real_messages_round_trip(algorithm, graph, n_arms, horizon, expected):
    seen = drive(algorithm, graph, n_arms, horizon, seed=7)
    codes = {code for code, _ in seen}
    if expected == ALL:
        expected = {kind.code for kind in KINDS[algorithm]}
    assert codes >= set(expected), f"kinds seen: {sorted(seen.items())}"
    if not expected:
        assert not seen


@pytest.mark.parametrize(("n_agents", "n_arms", "horizon"), [(4, 12, 6000), (2, 8, 4000)])
def test_demab_every_kind_round_trips(n_agents, n_arms, horizon):
    """Reports, counts, lists, announcements, send requests and (re)assignments, an empty
    assignment (3 arms left for 4 agents) included, all from real DEMAB agents and server."""
    graph = topo.complete(n_agents)
    seen = drive(
        "demab", graph, n_arms, horizon, seed=3, means=demab_means(graph, n_arms, horizon, seed=3)
    )
    assert {code for code, _ in seen} == {kind.code for kind in KINDS["demab"]}
    if n_agents > 3:
        assert seen[5, "empty"] >= 1  # ("assign", ()) costs 1 bit


def test_every_algorithm_has_a_wire_id_and_kinds():
    assert set(ALGORITHM_IDS) == set(ALGORITHMS) == set(KINDS)
    assert (
        len(set(ALGORITHM_IDS.values())) == len(ALGORITHM_IDS) and 0 not in ALGORITHM_IDS.values()
    )
    for kinds in KINDS.values():
        assert [kind.code for kind in kinds] == list(range(len(kinds)))


# -- layout --------------------------------------------------------------------------------


def test_worked_example_lcc_ucb_recommendation_at_k100():
    """docs/wire.md's example, byte for byte: 7 counted bits, 40 bytes on the wire."""
    spec = WireSpec("lcc-ucb", 100, 4)
    message = Message(sender=2, receiver=0, payload=37, bits=7, stamp=1290)
    data = encode_message(message, spec, round=0)
    expected = (
        b"MB"
        + bytes([1, 1])
        + (100).to_bytes(4, "big")
        + (4).to_bytes(4, "big")
        + (2).to_bytes(4, "big")
        + (0).to_bytes(4, "big")
        + (1290).to_bytes(8, "big")
        + (0).to_bytes(4, "big")
        + (1).to_bytes(2, "big")
        + bytes([0])
        + (0).to_bytes(4, "big")
        + bytes([37 << 1])  # 0100101 then one padding bit
    )
    assert data == expected
    assert len(data) == FRAME_HEADER_BYTES + MESSAGE_HEADER_BYTES + 1 == 40
    assert payload_bits(message, spec) == 7 and message_bytes(message, spec) == 6
    assert decode_message(data, spec) == message


def test_payloads_are_bit_packed_msb_first():
    spec = WireSpec("lcc-ucb-relay", 8, 3)  # 2-bit origins, 3-bit arms: 5 bits a pair
    message = Message(0, 1, ((2, 5), (1, 7), (0, 1)), 15, 9)
    data = encode_message(message, spec)
    assert data[-2:] == bytes([0b10101_011, 0b11_00001_0])
    spec = WireSpec("full-communication", 4, 2)
    data = encode_message(Message(0, 1, (3, 1.0), 66, 1), spec)
    assert data[-9:] == ((3 << 64 | 0x3FF0_0000_0000_0000) << 6).to_bytes(9, "big")
    spec = WireSpec("coop-ucb2", 2, 2)
    estimates = (np.array([1.0, 2.0]), np.array([0.5, -0.0]))
    data = encode_message(Message(1, 0, estimates, 256, 3), spec)
    assert data[-32:] == struct.pack(">4d", 1.0, 2.0, 0.5, -0.0)


def test_one_bit_payloads_and_empty_lists():
    gosine = WireSpec("gosine", 4, 2)
    assert encode_message(Message(0, 1, ("pull",), 1, 2), gosine)[-1] == 0x80  # the bit 1
    demab = WireSpec("demab", 4, 2)
    assert encode_message(Message(2, 0, ("send",), 1, 2), demab)[-1] == 0x80
    for payload in (("assign", ()), ("arms", ())):
        sender, receiver = (2, 1) if payload[0] == "assign" else (1, 2)
        data = encode_message(Message(sender, receiver, payload, 1, 2), demab)
        assert data[FRAME_HEADER_BYTES + 1 :] == bytes(5)  # item count 0, then the bit 0
        assert decode_message(data, demab).payload == payload


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_empty_frames_round_trip(algorithm):
    n_agents = 3
    spec = WireSpec(algorithm, 5, n_agents)
    receiver = n_agents if algorithm == "demab" else 1
    frame = Frame(0, receiver, 2**64 - 1, 2**32 - 1, ())
    data = encode_frame(frame, spec)
    assert len(data) == FRAME_HEADER_BYTES
    assert decode_frame(data, spec) == frame
    assert decode_frame(bytearray(data), spec) == decode_frame(memoryview(data), spec) == frame


def test_decoded_types_are_what_agents_accept():
    spec = WireSpec("coop-ucb2", 3, 2)
    counts, sums = decode_message(
        encode_message(Message(0, 1, (np.ones(3), np.zeros(3)), 384, 1), spec), spec
    ).payload
    for values in (counts, sums):
        assert values.dtype == np.float64 and values.dtype.isnative and values.flags.writeable
    spec = WireSpec("demab", 4, 2)
    count = decode_message(encode_message(Message(0, 2, ("count", 4), 3, 1), spec), spec)
    assert type(count.payload[1]) is int


def test_non_finite_floats_pass_and_agents_refuse_them():
    spec = WireSpec("full-communication", 4, 2)
    agents = make_agents("full-communication", topo.complete(2), 4, 10)
    agents[1].observe(agents[1].select_arm(), 1.0)
    for reward in (float("nan"), float("inf"), -float("inf")):
        message = decode_message(encode_message(Message(0, 1, (2, reward), 66, 0), spec), spec)
        assert same(message.payload[1], reward)
        with pytest.raises(InvalidMessage, match="not a finite number"):
            agents[1].receive(message)


def test_spec_validation():
    with pytest.raises(ConfigError, match="unknown algorithm"):
        WireSpec("lcc", 4, 2)
    for k, n in ((0, 1), (4, 0), (True, 1), (4.0, 2), (2**32, 1)):
        with pytest.raises(ConfigError):
            WireSpec("full-communication", k, n)
    with pytest.raises(ConfigError, match="K >= N"):
        WireSpec("lcc-ucb", 2, 3)
    assert WireSpec("demab", 4, 2).nodes == 3 and WireSpec("gosine", 4, 2).nodes == 2
    spec = WireSpec("lcc-ucb", np.int64(4), np.int32(2))
    assert spec == WireSpec("lcc-ucb", 4, 2) and type(spec.n_arms) is int


# -- refusals ------------------------------------------------------------------------------

LCC = WireSpec("lcc-ucb", 100, 4)
DEMAB = WireSpec("demab", 6, 3)  # agents 0..2, server 3
RELAY = WireSpec("lcc-ucb-relay", 8, 3)
COOP = WireSpec("coop-ucb2", 2, 2)
GOSINE = WireSpec("gosine", 4, 2)
H = FRAME_HEADER_BYTES


def framed(spec: WireSpec, sender: int, receiver: int, payload) -> bytes:
    """A valid one-message frame (bits from the codec), to be garbled."""
    bits = payload_bits(Message(sender, receiver, payload, 0, 0), spec)
    return encode_message(Message(sender, receiver, payload, bits, 4), spec)


def patched(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new) :]


LCC_FRAME = framed(LCC, 2, 0, 37)
RELAY_FRAME = framed(RELAY, 0, 1, ((2, 5),))  # 2-bit origin, 3-bit arm
COUNT_FRAME = framed(DEMAB, 0, 3, ("count", 6))  # count_bits(6) = 3 bits: 110
ARMS_FRAME = framed(DEMAB, 0, 3, ("arms", (1, 5)))
BEST_FRAME = framed(DEMAB, 3, 0, ("best", 2, 0.5))
SEND_FRAME = framed(DEMAB, 3, 1, ("send",))
COOP_FRAME = framed(COOP, 0, 1, (np.ones(2), np.ones(2)))
LCC_SMALL = framed(WireSpec("lcc-ucb", 3, 2), 0, 1, 1)
U32_MAX = b"\xff\xff\xff\xff"
REFUSED = [  # (spec, bytes, words of the error)
    (LCC, b"", "truncated"),
    (LCC, LCC_FRAME[:-1], "truncated"),
    (LCC, LCC_FRAME[:H], "truncated"),  # the header promises one message
    (LCC, LCC_FRAME + b"\x00", "trailing"),
    (LCC, patched(LCC_FRAME, 0, b"JS"), "not a mamab frame"),
    (LCC, patched(LCC_FRAME, 2, b"\x02"), "version 2"),
    (LCC, patched(LCC_FRAME, 3, b"\x02"), "algorithm id 2"),
    (WireSpec("lcc-ucb", 101, 4), LCC_FRAME, "K=100"),
    (WireSpec("lcc-ucb", 100, 5), LCC_FRAME, "N=4"),
    (LCC, patched(LCC_FRAME, 12, (4).to_bytes(4, "big")), "outside"),  # sender 4 of 0..3
    (LCC, patched(LCC_FRAME, 16, (2).to_bytes(4, "big")), "to itself"),
    (LCC, patched(LCC_FRAME, H - 2, b"\x00\x02"), "truncated"),  # claims two messages
    (LCC, patched(LCC_FRAME, H, b"\x01"), "no message kind 1"),
    (LCC, patched(LCC_FRAME, H + 1, (1).to_bytes(4, "big")), "item count"),
    (LCC, patched(LCC_FRAME, H + 5, bytes([37 << 1 | 1])), "padding"),
    (LCC, patched(LCC_FRAME, H + 5, bytes([100 << 1])), "arm 100"),
    (LCC, patched(LCC_FRAME, H + 5, bytes([127 << 1])), "arm 127"),
    (RELAY, patched(RELAY_FRAME, H + 5, bytes([0b11101 << 3])), "origin 3"),
    (RELAY, patched(RELAY_FRAME, H + 1, bytes(4)), "0 pairs"),
    (RELAY, patched(RELAY_FRAME, H + 1, (4).to_bytes(4, "big")), "4 pairs"),  # N = 3
    (DEMAB, patched(COUNT_FRAME, H + 5, bytes([0b111 << 5])), "count 7"),
    (DEMAB, patched(COUNT_FRAME, 12, (3).to_bytes(4, "big")), "itself"),  # 3 -> 3
    (DEMAB, patched(COUNT_FRAME, 16, (1).to_bytes(4, "big")), "the server and an agent"),
    (DEMAB, patched(BEST_FRAME, H, b"\x00"), "goes to the server"),  # a report, from the server
    (DEMAB, patched(COUNT_FRAME, H, b"\x03"), "comes from the server"),  # a best, from agent 0
    (DEMAB, patched(ARMS_FRAME, H + 1, U32_MAX), "more than K"),
    (DEMAB, patched(ARMS_FRAME, H + 1, (6).to_bytes(4, "big")), "truncated"),
    (DEMAB, patched(ARMS_FRAME, H + 1, bytes(4)), "the bit 0"),
    (DEMAB, patched(SEND_FRAME, H + 5, b"\x00"), "the bit 1"),
    (DEMAB, patched(SEND_FRAME, H, b"\x09"), "no message kind"),
    (COOP, patched(COOP_FRAME, H + 1, (3).to_bytes(4, "big")), "estimates of 3 arms"),
    (COOP, patched(COOP_FRAME, H + 1, U32_MAX), "estimates of 4294967295 arms"),
    (WireSpec("no-communication", 3, 2), patched(LCC_SMALL, 3, b"\x04"), "no message kind 0"),
]


@pytest.mark.parametrize(("spec", "data", "words"), REFUSED, ids=[r[2] or "x" for r in REFUSED])
def test_decoder_refuses_foreign_and_garbled_frames(spec, data, words):
    with pytest.raises(InvalidMessage, match=words):
        decode_frame(data, spec)


@pytest.mark.parametrize("junk", ["MB", None, 7, [0, 1], bytearray(b"MB\x01")])
def test_decoder_refuses_what_is_not_a_frame(junk):
    with pytest.raises(InvalidMessage):
        decode_frame(junk, LCC)


def test_decode_message_wants_exactly_one():
    with pytest.raises(InvalidMessage, match="holds 0"):
        decode_message(encode_frame(Frame(0, 1, 5, 0, ()), LCC), LCC)


ENCODE_REFUSED = [  # (spec, frame, words)
    (LCC, Frame(0, 1, 5, 0, (Message(0, 2, 3, 7, 5),)), "does not belong"),
    (LCC, Frame(0, 1, 5, 0, (Message(1, 0, 3, 7, 5),)), "does not belong"),
    (LCC, Frame(0, 1, 5, 0, (Message(0, 1, 3, 7, 4),)), "does not belong"),
    (LCC, Frame(0, 1, 5, 0, (Message(0, 1, 3, 8, 5),)), "counts 8 bits"),
    (LCC, Frame(0, 1, 5, 0, (Message(0, 1, 100, 7, 5),)), "arm 100"),
    (LCC, Frame(0, 1, 5, 0, (Message(0, 1, True, 7, 5),)), "arm True"),
    (LCC, Frame(0, 1, 5, 0, (Message(0, 1, 1.0, 7, 5),)), "arm 1.0"),
    (LCC, Frame(0, 1, 5, 0, ((0, 1, 3, 7, 5),)), "expected a Message"),
    (LCC, Frame(0, 0, 5, 0, ()), "itself"),
    (LCC, Frame(0, 4, 5, 0, ()), "outside"),
    (LCC, Frame(0, 1, -1, 0, ()), "stamp"),
    (LCC, Frame(0, 1, 2**64, 0, ()), "stamp"),
    (LCC, Frame(0, 1, 5, 2**32, ()), "round"),
    (LCC, Frame(0, 1, 5, 0, (Message(0, 1, 3, 7, 5),) * 65536), "at most 65535"),
    (RELAY, Frame(0, 1, 5, 0, (Message(0, 1, [(0, 1)], 5, 5),)), "must be a tuple"),
    (RELAY, Frame(0, 1, 5, 0, (Message(0, 1, (), 0, 5),)), "1..3 pairs"),
    (RELAY, Frame(0, 1, 5, 0, (Message(0, 1, ((3, 1),), 5, 5),)), "origin 3"),
    (RELAY, Frame(0, 1, 5, 0, (Message(0, 1, ((0, 1, 2),), 5, 5),)), "not an .origin, arm. pair"),
    (COOP, Frame(0, 1, 5, 0, (Message(0, 1, (np.ones(2, "f4"), np.ones(2)), 256, 5),)), "float64"),
    (COOP, Frame(0, 1, 5, 0, (Message(0, 1, (np.ones(3), np.ones(3)), 384, 5),)), "shape"),
    (COOP, Frame(0, 1, 5, 0, (Message(0, 1, (np.ones(2),), 128, 5),)), "tuple of 2"),
    (GOSINE, Frame(0, 1, 5, 0, (Message(0, 1, ("push",), 1, 5),)), "no gosine message"),
    (GOSINE, Frame(0, 1, 5, 0, (Message(0, 1, ("arm", 1, 2), 2, 5),)), "tuple of 2"),
    (GOSINE, Frame(0, 1, 5, 0, (Message(0, 1, (np.ones(2),), 2, 5),)), "no gosine message"),
    (DEMAB, Frame(0, 3, 5, 0, (Message(0, 3, ("count", 7), 3, 5),)), "count 7"),
    (DEMAB, Frame(0, 3, 5, 0, (Message(0, 3, ("arms", [1]), 3, 5),)), "must be a tuple"),
    (DEMAB, Frame(0, 3, 5, 0, (Message(0, 3, ("arms", (1,) * 7), 21, 5),)), "more than K"),
    (DEMAB, Frame(0, 3, 5, 0, (Message(0, 3, ("best", 1, 0.5), 67, 5),)), "from the server"),
    (DEMAB, Frame(3, 0, 5, 0, (Message(3, 0, ("report", 1, 0.5), 67, 5),)), "to the server"),
    (DEMAB, Frame(3, 0, 5, 0, (Message(3, 0, ("best", 1, "x"), 67, 5),)), "real number"),
    (DEMAB, Frame(0, 1, 5, 0, ()), "the server and an agent"),
    (WireSpec("no-communication", 3, 2), Frame(0, 1, 5, 0, (Message(0, 1, 1, 2, 5),)), "sends no"),
]


@pytest.mark.parametrize(
    ("spec", "frame", "words"), ENCODE_REFUSED, ids=[r[2] for r in ENCODE_REFUSED]
)
def test_encoder_refuses_messages_that_do_not_belong(spec, frame, words):
    with pytest.raises(ValueError, match=words):
        encode_frame(frame, spec)


# -- properties ----------------------------------------------------------------------------

SPLITS = {
    "lcc-ucb",
    "lcc-ucb-graph",
    "lcc-ucb-relay",
    "lcc-ucb-robust",
    "demab",
    "gosine",
    "gosine-robust",
}  # K >= N
FORMS = {  # (algorithm, kind code): (tag, form, direction), straight from the simulator's counts
    ("lcc-ucb", 0): (None, "arm", None),
    ("lcc-ucb-graph", 0): (None, "arm", None),
    ("lcc-ucb-relay", 0): (None, "pairs", None),
    ("lcc-ucb-robust", 0): (None, "arm", None),
    ("full-communication", 0): (None, "sample", None),
    ("coop-ucb2", 0): (None, "estimates", None),
    ("dducb", 0): (None, "estimates", None),
    ("ucb-network", 0): ("sample", "sample", None),
    ("ucb-network", 1): ("arm", "arm", None),
    ("gosine", 0): ("pull", "signal", None),
    ("gosine", 1): ("arm", "arm", None),
    ("gosine-robust", 0): ("pull", "signal", None),
    ("gosine-robust", 1): ("arm", "arm", None),
    ("demab", 0): ("report", "sample", "up"),
    ("demab", 1): ("count", "count", "up"),
    ("demab", 2): ("arms", "arm list", "up"),
    ("demab", 3): ("best", "sample", "down"),
    ("demab", 4): ("send", "signal", "down"),
    ("demab", 5): ("assign", "arm list", "down"),
}


@st.composite
def payloads(draw, form: str, spec: WireSpec, max_list: int):
    """(fields, counted bits) of a random payload of ``form``: the simulator's formulas."""
    k, n = spec.n_arms, spec.n_agents
    arms = st.integers(0, k - 1)
    if form == "arm":
        return (draw(arms),), index_bits(k)
    if form == "sample":
        return (draw(arms), draw(st.floats())), index_bits(k) + 64
    if form == "signal":
        return (), 1
    if form == "count":
        return (draw(st.integers(0, k)),), max(1, k.bit_length())
    if form == "arm list":
        listed = tuple(draw(st.lists(arms, max_size=min(k, max_list))))
        return (listed,), max(1, len(listed) * index_bits(k))
    if form == "pairs":
        pair = st.tuples(st.integers(0, n - 1), arms)
        pairs = tuple(draw(st.lists(pair, min_size=1, max_size=min(n, max_list))))
        return (pairs,), len(pairs) * (agent_bits(n) + index_bits(k))
    floats = st.lists(st.floats(), min_size=k, max_size=k).map(lambda v: np.array(v, dtype=float))
    return (draw(floats), draw(floats)), 2 * k * 64


@st.composite
def frames(
    draw, max_arms: int = 70, max_agents: int = 9, max_messages: int = 3, max_list: int = 12
) -> tuple[WireSpec, Frame]:
    """A spec and a valid frame of random messages of its algorithm (any kind, any size)."""
    algorithm = draw(st.sampled_from(ALGORITHMS))
    n = draw(st.integers(1 if algorithm == "demab" else 2, max_agents))
    spec = WireSpec(algorithm, draw(st.integers(n if algorithm in SPLITS else 1, max_arms)), n)
    if algorithm == "demab":
        agent, up = draw(st.integers(0, n - 1)), draw(st.booleans())
        sender, receiver = (agent, n) if up else (n, agent)
    else:
        sender, receiver = draw(
            st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True)
        )
    stamp = draw(st.integers(0, 2**64 - 1))
    forms = [
        form
        for (name, _), form in FORMS.items()
        if name == algorithm and form[2] in (None, "up" if receiver == n else "down")
    ]
    messages = []
    for _ in range(draw(st.integers(0, max_messages)) if forms else 0):
        tag, form, _ = draw(st.sampled_from(forms))
        fields, bits = draw(payloads(form, spec, max_list))
        untagged = fields[0] if len(fields) == 1 else fields
        payload = untagged if tag is None else (tag, *fields)
        messages.append(Message(sender, receiver, payload, bits, stamp))
    return spec, Frame(sender, receiver, stamp, draw(st.integers(0, 2**32 - 1)), tuple(messages))


@settings(max_examples=300, deadline=None)
@given(case=frames())
def test_random_payloads_of_every_kind_round_trip(case):
    spec, frame = case
    data = encode_frame(frame, spec)
    assert same_frame(decode_frame(data, spec), frame)
    assert all(payload_bits(m, spec) == m.bits for m in frame.messages)
    assert len(data) == FRAME_HEADER_BYTES + sum(
        MESSAGE_HEADER_BYTES + (m.bits + 7) // 8 for m in frame.messages
    )


def decodes_or_refuses(data: bytes, spec: WireSpec) -> bool:
    """True if ``data`` decodes, False if refused with InvalidMessage; anything else fails."""
    try:
        decode_frame(data, spec)
    except InvalidMessage:
        return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=frames(max_arms=16, max_agents=6, max_messages=2, max_list=6))
def test_every_truncation_and_bit_flip_is_refused_or_decoded(case):
    spec, frame = case
    data = encode_frame(frame, spec)
    for end in range(len(data)):
        assert not decodes_or_refuses(data[:end], spec)  # a cut frame is always refused
    flipped = bytearray(data)
    for bit in range(8 * len(data)):
        flipped[bit // 8] ^= 0x80 >> (bit % 8)
        decodes_or_refuses(bytes(flipped), spec)
        flipped[bit // 8] ^= 0x80 >> (bit % 8)


@settings(max_examples=300, deadline=None)
@given(case=frames(max_messages=1), junk=st.binary(max_size=200), keep=st.integers(0, 60))
def test_random_bytes_are_refused_or_decoded(case, junk, keep):
    """Junk alone, and junk after the first ``keep`` bytes of a valid frame (so the decoder
    gets past the header and parses junk messages)."""
    spec, frame = case
    decodes_or_refuses(junk, spec)
    decodes_or_refuses(encode_frame(frame, spec)[:keep] + junk, spec)


@pytest.mark.parametrize("length", [255, 256, 257, 1501])  # both packing paths and the switch
def test_long_lists_pack_bit_for_bit(length):
    """Long DEMAB lists and relay batches: the payload is the concatenation of the entries'
    binary digits (built here with format()), zero-padded to whole bytes."""
    spec = WireSpec("demab", 4000, 2)
    arms = tuple(range(1, 2 * length, 2))
    message = Message(2, 1, ("assign", arms), 12 * length, 8)
    digits = "".join(format(arm, "012b") for arm in arms)
    digits += "0" * (-len(digits) % 8)
    data = encode_message(message, spec)
    start = FRAME_HEADER_BYTES + MESSAGE_HEADER_BYTES
    assert data[start:] == int(digits, 2).to_bytes(len(digits) // 8, "big")
    assert decode_message(data, spec) == message
    with pytest.raises(InvalidMessage, match="arm 4095"):
        decode_frame(patched(data, start, b"\xff\xf0"), spec)
    if length % 2:  # 12 bits an arm: four padding bits at the end
        with pytest.raises(InvalidMessage, match="padding"):
            decode_frame(data[:-1] + bytes([data[-1] | 1]), spec)
    relay = WireSpec("lcc-ucb-relay", length, length)
    pairs = tuple((origin, (7 * origin) % length) for origin in range(length))
    width = agent_bits(length) + index_bits(length)
    message = Message(0, 1, pairs, length * width, 8)
    assert decode_message(encode_message(message, relay), relay) == message


def test_docs_example_runs():
    """docs/wire.md's Python example, as written."""
    text = (Path(__file__).parents[1] / "docs" / "wire.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/wire.md", "exec"), {})
