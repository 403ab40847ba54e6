"""The link layer of live nodes: sessions, sequence numbers, acknowledgements, hellos.

Every message between two live nodes is an **envelope**: a 28-byte header, then a body.

- **data**: the body is one wire-format frame (``mamab.wire``). Frames on the link sender →
  receiver are numbered 1, 2, ... (``seq``); the receiver takes them in order, drops a
  duplicate (``seq`` it already took) and asks for a resend at a gap.
- **hello**: sent to every neighbour when a node (or a new incarnation of it) starts. Its body
  holds the sender and receiver ids, ``want`` (the receiver's frames the sender has taken: send
  me the ones after), a flag asking for a hello in return, the SHA-256 digest of the run's
  configuration record (mamab.live.agreement) and the record itself, so that a node whose
  record differs can name the field.
- **ack**: a resend request (sender, receiver, ``want``) and the sender's acknowledgement.

Every envelope carries the sender's ``session`` (high 32 bits: its incarnation, 1 at a fresh
start and one more at each ``--resume``; low 32 bits: random, so two processes started as
the same incarnation never share one) and ``ack``: the receiver's frames the sender has taken
*and checkpointed*, which the receiver may forget. docs/wire.md has the byte layout.
"""

from __future__ import annotations

import json
import secrets
import struct
from dataclasses import dataclass

from mamab.errors import InvalidMessage

MAGIC = b"ML"
VERSION = 1
DATA, HELLO, ACK = 0, 1, 2
_HEADER = struct.Struct(">2sBBQQQ")  # magic, version, kind, session, seq, ack
_CONTROL = struct.Struct(">IIQB")  # sender, receiver, want, flags
HEADER_BYTES = _HEADER.size  # 28
DIGEST_BYTES = 32
MAX_RECORD_BYTES = 1 << 16
ANSWER = 1  # hello flag: answer with your hello
_U64 = 2**64 - 1


def new_session(incarnation: int) -> int:
    """A fresh session number of ``incarnation`` (>= 1): the incarnation, then 32 random bits."""
    if not 1 <= incarnation < 2**32:
        raise ValueError(f"incarnation {incarnation} outside 1..2^32-1")
    return (incarnation << 32) | secrets.randbits(32)


def incarnation(session: int) -> int:
    return session >> 32


@dataclass(frozen=True)
class Envelope:
    kind: int
    session: int
    seq: int  # data: the frame's number on its link (from 1); control: 0
    ack: int
    body: bytes


@dataclass(frozen=True)
class Control:
    """The body of a hello or an ack envelope."""

    sender: int
    receiver: int
    want: int  # resend the receiver's frames after this one
    answer: bool = False  # hello: answer with your hello
    digest: bytes = b""  # hello: the run's configuration digest
    record: dict | None = None  # hello: the run's configuration record


def encode(kind: int, session: int, seq: int, ack: int, body: bytes) -> bytes:
    return _HEADER.pack(MAGIC, VERSION, kind, session, seq, ack) + body


def encode_control(kind: int, session: int, ack: int, control: Control) -> bytes:
    flags = ANSWER if control.answer else 0
    body = _CONTROL.pack(control.sender, control.receiver, control.want, flags)
    if kind == HELLO:
        record = json.dumps(control.record, sort_keys=True, separators=(",", ":")).encode()
        body += control.digest + record
    return encode(kind, session, 0, ack, body)


def decode(data: bytes) -> Envelope:
    """The envelope in ``data``; InvalidMessage (and nothing else) for anything else."""
    if len(data) < HEADER_BYTES:
        raise InvalidMessage(f"truncated envelope: {len(data)} bytes")
    magic, version, kind, session, seq, ack = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise InvalidMessage("not a mamab link envelope")
    if version != VERSION:
        raise InvalidMessage(f"link version {version}, this node reads {VERSION}")
    if kind not in (DATA, HELLO, ACK):
        raise InvalidMessage(f"unknown envelope kind {kind}")
    if incarnation(session) < 1:
        raise InvalidMessage("session of incarnation 0")
    if (kind == DATA) != (seq > 0):
        raise InvalidMessage(f"sequence number {seq} in an envelope of kind {kind}")
    return Envelope(kind, session, seq, ack, bytes(data[HEADER_BYTES:]))


def decode_control(envelope: Envelope) -> Control:
    """The hello or ack in ``envelope``; InvalidMessage for anything else."""
    body = envelope.body
    if len(body) < _CONTROL.size:
        raise InvalidMessage("truncated control body")
    sender, receiver, want, flags = _CONTROL.unpack_from(body)
    if flags & ~ANSWER:
        raise InvalidMessage(f"unknown control flags {flags}")
    rest = body[_CONTROL.size :]
    if envelope.kind == ACK:
        if rest or flags:
            raise InvalidMessage("an ack carries no flags and nothing after its want")
        return Control(sender, receiver, want)
    if len(rest) < DIGEST_BYTES or len(rest) - DIGEST_BYTES > MAX_RECORD_BYTES:
        raise InvalidMessage("a hello's digest or record is cut or too long")
    try:
        record = json.loads(rest[DIGEST_BYTES:].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InvalidMessage("a hello's record is not JSON") from None
    if not isinstance(record, dict):
        raise InvalidMessage("a hello's record is not a JSON object")
    return Control(sender, receiver, want, bool(flags & ANSWER), rest[:DIGEST_BYTES], record)


__all__ = [
    "ACK",
    "DATA",
    "HEADER_BYTES",
    "HELLO",
    "Control",
    "Envelope",
    "decode",
    "decode_control",
    "encode",
    "encode_control",
    "incarnation",
    "new_session",
]
