"""The wire format: a versioned binary encoding of every message of every algorithm.

The unit on the network is a **frame**: everything one node sends to one neighbour in one
communication round, zero or more messages (an empty frame says "nothing from me this round").
A frame is a fixed header followed by the messages; each message is a small header (kind, item
count) followed by its payload, bit-packed most significant bit first, in exactly the bits the
simulator counts (``Message.bits``): an arm index takes ceil(log2 K) bits, an agent id
ceil(log2 N), a reward or statistic 64 (IEEE float64). Headers and the padding of a payload to
whole bytes are transport overhead, not counted. docs/wire.md has the byte layout.

Decoding never trusts its input: truncated, garbled or foreign bytes raise
:class:`~mamab.errors.InvalidMessage` and nothing else; decoded payloads have the exact Python
types the agents' ``receive()`` accepts. Encoding refuses (``ValueError``) a message that does not
belong in the frame or whose payload is not of its algorithm's form.
"""

from __future__ import annotations

import numbers
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from mamab.algorithms.base import Message
from mamab.algorithms.registry import builtin_names, check_algorithm, lookup, require_wire
from mamab.bits import REWARD_BITS, SIGNAL_BITS, agent_bits, count_bits, index_bits
from mamab.errors import ConfigError, InvalidMessage
from mamab.suggest import unknown

__all__ = [
    "ALGORITHM_IDS",
    "FRAME_HEADER_BYTES",
    "KINDS",
    "MAGIC",
    "MESSAGE_HEADER_BYTES",
    "VERSION",
    "Frame",
    "Kind",
    "WireSpec",
    "decode_frame",
    "decode_message",
    "encode_frame",
    "encode_message",
    "message_bytes",
    "payload_bits",
]

MAGIC = b"MB"
VERSION = 1
"""Format version; a decoder refuses frames of any other version."""

# magic, version, algorithm id, K, N, sender, receiver, stamp, round, message count
_FRAME_HEADER = struct.Struct(">2sBBIIIIQIH")
# kind, item count
_MESSAGE_HEADER = struct.Struct(">BI")
FRAME_HEADER_BYTES = _FRAME_HEADER.size  # 34
MESSAGE_HEADER_BYTES = _MESSAGE_HEADER.size  # 5

_U16, _U32, _U64 = 2**16 - 1, 2**32 - 1, 2**64 - 1
_FLOAT = struct.Struct(">d")
_FLOAT_BITS = struct.Struct(">Q")


@dataclass(frozen=True)
class WireSpec:
    """What both ends of a link must agree on: the algorithm and the fleet's K and N.

    N counts the agents; DEMAB's server is node N, so DEMAB frames use node ids 0..N.
    """

    algorithm: str
    n_arms: int
    n_agents: int

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHM_IDS:
            if isinstance(self.algorithm, str):
                require_wire(self.algorithm)  # a plugin: "has no wire codec", in one line
            raise ConfigError(unknown("algorithm", self.algorithm, builtin_names()))
        for name in ("n_arms", "n_agents"):
            value = getattr(self, name)
            if not _is_int(value) or not 1 <= value < _U32:
                raise ConfigError(f"{name} must be an integer in 1..{_U32 - 1}, got {value!r}")
            object.__setattr__(self, name, int(value))  # numpy ints become ints: specs compare
        check_algorithm(self.algorithm, self.n_agents, self.n_arms)

    @property
    def algorithm_id(self) -> int:
        return ALGORITHM_IDS[self.algorithm]

    @property
    def nodes(self) -> int:
        """Node ids on the wire: the agents, plus a central server (node N; DEMAB's)."""
        return self.n_agents + lookup(self.algorithm).central_server

    @property
    def server(self) -> int | None:
        """The central server's node (DEMAB's), else None."""
        return self.n_agents if lookup(self.algorithm).central_server else None


@dataclass(frozen=True)
class Frame:
    """Everything ``sender`` sends to ``receiver`` in communication round ``round``.

    ``stamp`` is the sender's clock, shared by all its messages of the round.
    """

    sender: int
    receiver: int
    stamp: int
    round: int
    messages: tuple[Message, ...] = ()


# -- bit packing ---------------------------------------------------------------------------


def _pack_int(value: int, bits: int) -> bytes:
    """``value`` in ``bits`` bits, MSB first, zero-padded at the end to whole bytes."""
    size = (bits + 7) // 8
    return (value << (8 * size - bits)).to_bytes(size, "big")


def _unpack_int(chunk: bytes, bits: int) -> int:
    """The ``bits``-bit value at the start of ``chunk``; the padding bits must be zero."""
    value = int.from_bytes(chunk, "big")
    pad = 8 * len(chunk) - bits
    if value & ((1 << pad) - 1):
        raise InvalidMessage("non-zero padding bits")
    return value >> pad


_SMALL = 256  # lists up to this length are packed with Python ints, longer ones with numpy


def _pack_records(values: list[int], width: int) -> bytes:
    """Unsigned ints of ``width`` (<= 64) bits each, concatenated MSB first, zero-padded."""
    if len(values) <= _SMALL:
        packed = 0
        for value in values:
            packed = (packed << width) | value
        return _pack_int(packed, len(values) * width)
    array = np.array(values, dtype=np.uint64)
    shifts = np.arange(width - 1, -1, -1, dtype=np.uint64)
    bits = ((array[:, None] >> shifts) & np.uint64(1)).astype(np.uint8)
    return np.packbits(bits.ravel()).tobytes()


def _unpack_records(chunk: bytes, count: int, width: int) -> list[int]:
    """``count`` unsigned ints of ``width`` (<= 64) bits from ``chunk``; padding must be zero."""
    if count <= _SMALL:
        packed, mask = _unpack_int(chunk, count * width), (1 << width) - 1
        return [(packed >> (width * (count - 1 - i))) & mask for i in range(count)]
    bits = np.unpackbits(np.frombuffer(chunk, dtype=np.uint8))
    used = count * width
    if bits[used:].any():
        raise InvalidMessage("non-zero padding bits")
    rows = bits[:used].reshape(count, width)
    values = np.zeros(count, dtype=np.uint64)
    for column in range(width):  # MSB first; one column at a time keeps memory at 8 B/item
        values = (values << np.uint64(1)) | rows[:, column]
    return values.tolist()


def _float_to_bits(value: float) -> int:
    return _FLOAT_BITS.unpack(_FLOAT.pack(value))[0]


def _bits_to_float(value: int) -> float:
    return _FLOAT.unpack(_FLOAT_BITS.pack(value))[0]


# -- field checks (encoding side: ValueError) -----------------------------------------------


def _is_int(value: Any) -> bool:
    """An integer, not a bool (the fast path for plain ints matters in long lists)."""
    return type(value) is int or (
        isinstance(value, numbers.Integral) and not isinstance(value, bool)
    )


def _arm(value: Any, spec: WireSpec) -> int:
    if not _is_int(value) or not 0 <= value < spec.n_arms:
        raise ValueError(f"arm {value!r} is not an integer in 0..{spec.n_arms - 1}")
    return int(value)


def _real(value: Any) -> float:
    if type(value) is not float and (
        not isinstance(value, numbers.Real) or isinstance(value, bool)
    ):
        raise ValueError(f"{value!r} is not a real number")
    return float(value)


def _tuple(value: Any, what: str) -> tuple:
    if not isinstance(value, tuple):
        raise ValueError(f"{what} must be a tuple, got {type(value).__name__}")
    return value


def _checked_arm(value: int, spec: WireSpec) -> int:
    """A decoded arm index (decoding side: InvalidMessage)."""
    if value >= spec.n_arms:
        raise InvalidMessage(f"arm {value} outside 0..{spec.n_arms - 1}")
    return value


# -- payload layouts -----------------------------------------------------------------------


class _Layout:
    """How one kind of payload's fields become bits. ``fields`` is always a tuple.

    ``items`` is the item count written in the message header: the number of entries of the
    payload's list part (arms, pairs, floats per array), 0 for payloads without one.
    """

    arity = 1  # number of fields

    def items(self, fields: tuple, spec: WireSpec) -> int:
        """Validate ``fields`` (ValueError) and return the item count."""
        raise NotImplementedError

    def expected_items(self, items: int, spec: WireSpec) -> None:
        """Refuse (InvalidMessage) an item count this layout cannot have."""
        if items != 0:
            raise InvalidMessage(f"item count {items} for a fixed-size payload")

    def bits(self, items: int, spec: WireSpec) -> int:
        raise NotImplementedError

    def pack(self, fields: tuple, items: int, spec: WireSpec) -> bytes:
        raise NotImplementedError

    def unpack(self, chunk: bytes, items: int, spec: WireSpec) -> tuple:
        raise NotImplementedError


class _ArmLayout(_Layout):
    """One arm index: ceil(log2 K) bits."""

    def items(self, fields, spec):
        _arm(fields[0], spec)
        return 0

    def bits(self, items, spec):
        return index_bits(spec.n_arms)

    def pack(self, fields, items, spec):
        return _pack_int(int(fields[0]), self.bits(0, spec))

    def unpack(self, chunk, items, spec):
        return (_checked_arm(_unpack_int(chunk, self.bits(0, spec)), spec),)


class _SampleLayout(_Layout):
    """An arm index then a float64: (arm, reward), DEMAB's (arm, lcb) and (arm, bound).

    Non-finite floats pass through both ways: the receiving agent refuses them itself.
    """

    arity = 2

    def items(self, fields, spec):
        _arm(fields[0], spec)
        _real(fields[1])
        return 0

    def bits(self, items, spec):
        return index_bits(spec.n_arms) + REWARD_BITS

    def pack(self, fields, items, spec):
        value = (int(fields[0]) << REWARD_BITS) | _float_to_bits(float(fields[1]))
        return _pack_int(value, self.bits(0, spec))

    def unpack(self, chunk, items, spec):
        value = _unpack_int(chunk, self.bits(0, spec))
        arm = _checked_arm(value >> REWARD_BITS, spec)
        return arm, _bits_to_float(value & ((1 << REWARD_BITS) - 1))


class _SignalLayout(_Layout):
    """A one-bit signal (GosInE's pull request, DEMAB's send): the bit 1."""

    arity = 0

    def items(self, fields, spec):
        return 0

    def bits(self, items, spec):
        return SIGNAL_BITS

    def pack(self, fields, items, spec):
        return _pack_int(1, SIGNAL_BITS)

    def unpack(self, chunk, items, spec):
        if _unpack_int(chunk, SIGNAL_BITS) != 1:
            raise InvalidMessage("a signal must carry the bit 1")
        return ()


class _CountLayout(_Layout):
    """A number of arms in 0..K: count_bits(K) bits (DEMAB's count)."""

    def items(self, fields, spec):
        value = fields[0]
        if not _is_int(value) or not 0 <= value <= spec.n_arms:
            raise ValueError(f"count {value!r} is not an integer in 0..{spec.n_arms}")
        return 0

    def bits(self, items, spec):
        return count_bits(spec.n_arms)

    def pack(self, fields, items, spec):
        return _pack_int(int(fields[0]), self.bits(0, spec))

    def unpack(self, chunk, items, spec):
        value = _unpack_int(chunk, self.bits(0, spec))
        if value > spec.n_arms:
            raise InvalidMessage(f"count {value} exceeds K = {spec.n_arms}")
        return (value,)


class _ArmListLayout(_Layout):
    """A tuple of arm indices (DEMAB's arms and assign); an empty one is the single bit 0."""

    def items(self, fields, spec):
        arms = _tuple(fields[0], "an arm list")
        if len(arms) > spec.n_arms:
            raise ValueError(f"an arm list of {len(arms)} arms, more than K = {spec.n_arms}")
        for arm in arms:
            _arm(arm, spec)
        return len(arms)

    def expected_items(self, items, spec):
        if items > spec.n_arms:  # a DEMAB list holds distinct arms
            raise InvalidMessage(f"an arm list of {items} arms, more than K = {spec.n_arms}")

    def bits(self, items, spec):
        return max(1, items * index_bits(spec.n_arms))

    def pack(self, fields, items, spec):
        if not items:
            return _pack_int(0, 1)
        return _pack_records([int(a) for a in fields[0]], index_bits(spec.n_arms))

    def unpack(self, chunk, items, spec):
        if not items:
            if chunk != b"\x00":
                raise InvalidMessage("an empty arm list must carry the bit 0")
            return ((),)
        arms = _unpack_records(chunk, items, index_bits(spec.n_arms))
        return (tuple(_checked_arm(a, spec) for a in arms),)


class _PairsLayout(_Layout):
    """A non-empty tuple of (origin, arm) pairs: ceil(log2 N) + ceil(log2 K) bits each."""

    def items(self, fields, spec):
        pairs = _tuple(fields[0], "a relay payload")
        if not 0 < len(pairs) <= spec.n_agents:
            raise ValueError(f"a relay payload holds 1..{spec.n_agents} pairs, got {len(pairs)}")
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise ValueError(f"relay entry {pair!r} is not an (origin, arm) pair")
            origin, arm = pair
            if not _is_int(origin) or not 0 <= origin < spec.n_agents:
                raise ValueError(f"origin {origin!r} is not an agent id in 0..{spec.n_agents - 1}")
            _arm(arm, spec)
        return len(pairs)

    def expected_items(self, items, spec):
        if not 0 < items <= spec.n_agents:  # one pair per origin, each forwarded once
            raise InvalidMessage(f"a relay message of {items} pairs, not 1..{spec.n_agents}")

    def bits(self, items, spec):
        return items * (agent_bits(spec.n_agents) + index_bits(spec.n_arms))

    def pack(self, fields, items, spec):
        shift = index_bits(spec.n_arms)
        records = [(int(origin) << shift) | int(arm) for origin, arm in fields[0]]
        return _pack_records(records, agent_bits(spec.n_agents) + shift)

    def unpack(self, chunk, items, spec):
        shift = index_bits(spec.n_arms)
        records = _unpack_records(chunk, items, agent_bits(spec.n_agents) + shift)
        pairs = []
        for record in records:
            origin, arm = record >> shift, record & ((1 << shift) - 1)
            if origin >= spec.n_agents:
                raise InvalidMessage(f"origin {origin} outside 0..{spec.n_agents - 1}")
            pairs.append((origin, _checked_arm(arm, spec)))
        return (tuple(pairs),)


class _EstimatesLayout(_Layout):
    """(counts, sums): two float64 arrays of shape (K,), 2·K·64 bits (coop-UCB2's estimates,
    DDUCB's gossip iterates)."""

    arity = 2

    def __init__(self, what: str = "coop-UCB2 estimates") -> None:
        self.what = what

    def items(self, fields, spec):
        for values in fields:
            if not (
                isinstance(values, np.ndarray)
                and values.dtype == np.float64
                and values.shape == (spec.n_arms,)
            ):
                raise ValueError(f"{self.what} must be float64 arrays of shape ({spec.n_arms},)")
        return spec.n_arms

    def expected_items(self, items, spec):
        if items != spec.n_arms:
            raise InvalidMessage(f"{self.what} of {items} arms, expected {spec.n_arms}")

    def bits(self, items, spec):
        return 2 * items * REWARD_BITS

    def pack(self, fields, items, spec):
        return b"".join(np.ascontiguousarray(values, dtype=">f8").tobytes() for values in fields)

    def unpack(self, chunk, items, spec):
        values = np.frombuffer(chunk, dtype=">f8")
        return values[:items].astype(np.float64), values[items:].astype(np.float64)


@dataclass(frozen=True)
class Kind:
    """One kind of message of an algorithm: its code on the wire, its tag and its direction.

    ``tag`` is the payload's first element for algorithms with several kinds (DEMAB, GosInE),
    None when the payload is untagged. ``direction`` is "any", "to-server" or "from-server".
    """

    code: int
    tag: str | None
    layout: _Layout
    direction: str = "any"

    def fields(self, payload: Any) -> tuple:
        """The payload's fields (ValueError if its shape is wrong)."""
        if self.tag is not None:
            if not (isinstance(payload, tuple) and len(payload) == 1 + self.layout.arity):
                raise ValueError(f"{self.tag} payload must be a tuple of {1 + self.layout.arity}")
            return payload[1:]
        if self.layout.arity == 1:
            return (payload,)
        if not (isinstance(payload, tuple) and len(payload) == self.layout.arity):
            raise ValueError(f"payload must be a tuple of {self.layout.arity}")
        return payload

    def payload(self, fields: tuple) -> Any:
        """The payload the agents accept, from decoded fields."""
        if self.tag is not None:
            return (self.tag, *fields)
        return fields[0] if self.layout.arity == 1 else tuple(fields)


_ARM, _SAMPLE, _SIGNAL, _COUNT = _ArmLayout(), _SampleLayout(), _SignalLayout(), _CountLayout()
_ARM_LIST, _PAIRS, _ESTIMATES = _ArmListLayout(), _PairsLayout(), _EstimatesLayout()
_ITERATES = _EstimatesLayout("DDUCB iterates")

#: The layouts a spec's message kinds name (:class:`mamab.algorithms.spec.MessageKind`).
LAYOUTS: dict[str, _Layout] = {
    "arm": _ARM,
    "sample": _SAMPLE,
    "signal": _SIGNAL,
    "count": _COUNT,
    "arm_list": _ARM_LIST,
    "pairs": _PAIRS,
    "estimates": _ESTIMATES,
    "iterates": _ITERATES,
}


def _codec_tables() -> tuple[dict[str, int], dict[str, tuple[Kind, ...]]]:
    """The built-ins' wire ids and message kinds, from their specs' wire formats."""
    ids: dict[str, int] = {}
    kinds: dict[str, tuple[Kind, ...]] = {}
    for name in builtin_names():
        wire = lookup(name).wire
        if wire is not None:
            ids[name] = wire.id
            kinds[name] = tuple(
                Kind(code, k.tag, LAYOUTS[k.layout], k.direction)
                for code, k in enumerate(wire.kinds)
            )
    return ids, kinds


ALGORITHM_IDS, KINDS = _codec_tables()
"""Fixed ids of the algorithms on the wire (never renumbered; 0 is reserved)."""
"""The message kinds of each algorithm, by code."""


def _kind_of(payload: Any, spec: WireSpec) -> Kind:
    """The kind of ``payload`` in ``spec``'s algorithm (ValueError if it has none)."""
    kinds = KINDS[spec.algorithm]
    if not kinds:
        raise ValueError(f"{spec.algorithm} sends no messages")
    if kinds[0].tag is None:
        return kinds[0]
    tag = payload[0] if isinstance(payload, tuple) and payload else None
    for kind in kinds if isinstance(tag, str) else ():
        if kind.tag == tag:
            return kind
    raise ValueError(f"{payload!r} is no {spec.algorithm} message")


def _direction_problem(kind: Kind, sender: int, receiver: int, spec: WireSpec) -> str | None:
    if kind.direction == "to-server" and receiver != spec.server:
        return f"a {kind.tag} message goes to the server"
    if kind.direction == "from-server" and sender != spec.server:
        return f"a {kind.tag} message comes from the server"
    return None


def _link_problem(sender: int, receiver: int, spec: WireSpec) -> str | None:
    """Why (sender, receiver) cannot be a link of ``spec``'s fleet, or None."""
    if not (0 <= sender < spec.nodes and 0 <= receiver < spec.nodes):
        return f"nodes {sender} -> {receiver} outside 0..{spec.nodes - 1}"
    if sender == receiver:
        return f"node {sender} sends to itself"
    if spec.server is not None and (sender == spec.server) == (receiver == spec.server):
        return f"DEMAB links join the server and an agent, not {sender} -> {receiver}"
    return None


# -- public interface ----------------------------------------------------------------------


def payload_bits(message: Message, spec: WireSpec) -> int:
    """The bits the encoding uses for ``message``'s payload (no padding): the simulator's count.

    Raises ValueError for a payload that is not of ``spec``'s algorithm's form.
    """
    if not isinstance(message, Message):
        raise ValueError(f"expected a Message, got {type(message).__name__}")
    kind = _kind_of(message.payload, spec)
    layout = kind.layout
    return layout.bits(layout.items(kind.fields(message.payload), spec), spec)


def message_bytes(message: Message, spec: WireSpec) -> int:
    """Bytes ``message`` takes inside a frame: its header and its padded payload."""
    return MESSAGE_HEADER_BYTES + (payload_bits(message, spec) + 7) // 8


def _check_int(name: str, value: Any, top: int) -> int:
    if not _is_int(value) or not 0 <= value <= top:
        raise ValueError(f"frame {name} {value!r} is not an integer in 0..{top}")
    return int(value)


def encode_frame(frame: Frame, spec: WireSpec) -> bytes:
    """The bytes of ``frame``; ValueError if a message does not belong in it or to ``spec``."""
    sender = _check_int("sender", frame.sender, _U32)
    receiver = _check_int("receiver", frame.receiver, _U32)
    stamp = _check_int("stamp", frame.stamp, _U64)
    round_ = _check_int("round", frame.round, _U32)
    if problem := _link_problem(sender, receiver, spec):
        raise ValueError(problem)
    messages = tuple(frame.messages)
    if len(messages) > _U16:
        raise ValueError(f"a frame holds at most {_U16} messages, got {len(messages)}")
    parts = [
        _FRAME_HEADER.pack(
            MAGIC,
            VERSION,
            spec.algorithm_id,
            spec.n_arms,
            spec.n_agents,
            sender,
            receiver,
            stamp,
            round_,
            len(messages),
        )
    ]
    for message in messages:
        parts += _encode_message(message, frame, spec)
    return b"".join(parts)


def _encode_message(message: Message, frame: Frame, spec: WireSpec) -> list[bytes]:
    if not isinstance(message, Message):
        raise ValueError(f"expected a Message, got {type(message).__name__}")
    if (message.sender, message.receiver, message.stamp) != (
        frame.sender,
        frame.receiver,
        frame.stamp,
    ):
        raise ValueError(
            f"message {message.sender} -> {message.receiver} stamped {message.stamp} does not "
            f"belong in frame {frame.sender} -> {frame.receiver} stamped {frame.stamp}"
        )
    kind = _kind_of(message.payload, spec)
    if problem := _direction_problem(kind, message.sender, message.receiver, spec):
        raise ValueError(problem)
    fields = kind.fields(message.payload)
    items = kind.layout.items(fields, spec)
    bits = kind.layout.bits(items, spec)
    if message.bits != bits:
        raise ValueError(f"message counts {message.bits!r} bits but its payload takes {bits}")
    return [_MESSAGE_HEADER.pack(kind.code, items), kind.layout.pack(fields, items, spec)]


def decode_frame(data: bytes, spec: WireSpec) -> Frame:
    """The frame in ``data``; InvalidMessage (and no other exception) for anything else."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidMessage(f"a frame is bytes, not {type(data).__name__}")
    try:
        data = bytes(data)
    except (TypeError, ValueError, BufferError) as error:
        raise InvalidMessage(f"unreadable frame buffer: {error}") from None
    if len(data) < FRAME_HEADER_BYTES:
        raise InvalidMessage(
            f"truncated frame: {len(data)} bytes, the header takes {FRAME_HEADER_BYTES}"
        )
    magic, version, algorithm, k, n, sender, receiver, stamp, round_, count = (
        _FRAME_HEADER.unpack_from(data)
    )
    if magic != MAGIC:
        raise InvalidMessage("not a mamab frame")
    if version != VERSION:
        raise InvalidMessage(f"wire format version {version}, this decoder reads {VERSION}")
    if algorithm != spec.algorithm_id:
        raise InvalidMessage(
            f"algorithm id {algorithm}, expected {spec.algorithm_id} ({spec.algorithm})"
        )
    if (k, n) != (spec.n_arms, spec.n_agents):
        raise InvalidMessage(
            f"a frame for K={k}, N={n}, expected K={spec.n_arms}, N={spec.n_agents}"
        )
    if problem := _link_problem(sender, receiver, spec):
        raise InvalidMessage(problem)
    offset, messages = FRAME_HEADER_BYTES, []
    for _ in range(count):
        message, offset = _decode_message(data, offset, (sender, receiver, stamp), spec)
        messages.append(message)
    if offset != len(data):
        raise InvalidMessage(f"{len(data) - offset} trailing bytes after the frame")
    return Frame(sender, receiver, stamp, round_, tuple(messages))


def _decode_message(
    data: bytes, offset: int, envelope: tuple[int, int, int], spec: WireSpec
) -> tuple[Message, int]:
    """The message at ``offset`` and the offset after it."""
    if len(data) - offset < MESSAGE_HEADER_BYTES:
        raise InvalidMessage("truncated frame: a message header is cut")
    code, items = _MESSAGE_HEADER.unpack_from(data, offset)
    offset += MESSAGE_HEADER_BYTES
    kinds = KINDS[spec.algorithm]
    if code >= len(kinds):
        raise InvalidMessage(f"no message kind {code} in {spec.algorithm}")
    kind = kinds[code]
    sender, receiver, stamp = envelope
    if problem := _direction_problem(kind, sender, receiver, spec):
        raise InvalidMessage(problem)
    kind.layout.expected_items(items, spec)
    left = len(data) - offset
    if items > 8 * left:  # every item takes at least one bit: no big numbers from junk
        raise InvalidMessage(f"truncated frame: {items} items in {left} bytes")
    bits = kind.layout.bits(items, spec)
    size = (bits + 7) // 8
    if size > left:
        raise InvalidMessage(f"truncated frame: a payload of {size} bytes in {left}")
    fields = kind.layout.unpack(data[offset : offset + size], items, spec)
    return Message(sender, receiver, kind.payload(fields), bits, stamp), offset + size


def encode_message(message: Message, spec: WireSpec, round: int = 0) -> bytes:
    """A frame holding ``message`` alone."""
    if not isinstance(message, Message):
        raise ValueError(f"expected a Message, got {type(message).__name__}")
    frame = Frame(message.sender, message.receiver, message.stamp, round, (message,))
    return encode_frame(frame, spec)


def decode_message(data: bytes, spec: WireSpec) -> Message:
    """The one message of a frame made by :func:`encode_message`."""
    frame = decode_frame(data, spec)
    if len(frame.messages) != 1:
        raise InvalidMessage(f"expected one message, the frame holds {len(frame.messages)}")
    return frame.messages[0]
