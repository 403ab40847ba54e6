"""A live node: one agent on a real network, driven by its host at the host's own pace.

The host calls ``select_arm()`` and ``observe()`` (or ``tick()`` for a node that does not play)
as requests come; after each step the node runs the exchange the agent's protocol asks for
(:meth:`Agent.rounds_after`). Messages travel as frames of the wire format (``mamab.wire``): in
each round a node sends one frame to each neighbour it has messages for.

Two modes:

- **sync**: in each round a node also sends an empty frame to every other neighbour and waits
  (up to ``timeout`` seconds) for one frame from each neighbour. Nodes then see exactly what the
  simulator's synchronous rounds deliver, so results equal the simulator's. A neighbour that
  stays silent past the timeout is marked silent from that step on and no longer waited for;
  while a neighbour is silent the node still takes (without waiting) whatever has arrived at
  every step. Its frames stamped in the past are late ones; once a frame from it is for this
  node's last round or later, it is back in step and waited for again. A node that waits for
  no neighbour at all (all silent) waits again for one as soon as a new frame from it arrives,
  even behind: else, running as fast as it, the neighbour would never catch up.
- **async** (default): a node never waits. Frames stamped in its future (a faster neighbour)
  are held until its clock gets there; frames from its past follow the algorithm's late-message
  rule (docs/faults.md).

What a neighbour may have held at a node is bounded (``hold_frames`` frames and ``hold_bytes``
frame bytes per neighbour): a roster member flooding a node with frames for distinct future
rounds cannot exhaust its memory; the excess is dropped and counted (``NodeCounts.over_window``).
Held frames wait in a heap keyed by (stamp, round, sender), so a step's delivery costs
O(log held) per frame delivered, whatever else is held.

Links (mamab.live.link): every frame to a neighbour is numbered and kept in that neighbour's
outbox until it acknowledges it; a node takes a neighbour's frames in order, drops duplicates
(never counted twice), asks for a resend at a gap and, in sync mode, when a wait makes no
progress for ``probe`` seconds (ZeroMQ drops frames in flight at a connection reset). At its
start a node sends every neighbour a hello: its session, what it has taken from it, and the
run's configuration record; a neighbour whose record differs is refused (``Disagreement``).
With checkpoints (mamab.live.checkpoint) a node acknowledges only what its last checkpoint
holds, so a node killed and resumed from its checkpoint (a new incarnation, frames of the
earlier one refused) gets again from its neighbours' outboxes everything it had taken since.
"""

from __future__ import annotations

import heapq
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from mamab.algorithms.base import Agent, Message
from mamab.errors import ConfigError, InvalidMessage
from mamab.live import link
from mamab.live.agreement import digest, refuse
from mamab.live.transport import Transport
from mamab.wire import Frame, WireSpec, decode_frame, encode_frame

#: The round number of the frame a node sends its neighbours when it has finished its run.
BYE_ROUND = 0xFFFF
#: Default bound on what one neighbour may have held at a node: frames, and their frame bytes.
#: A sync neighbour that waits for this node is at most one round ahead (one frame held); one
#: that gave up on it may run ahead, and an async neighbour may be any number of steps ahead.
HOLD_FRAMES = 4096
HOLD_BYTES = 1 << 20
#: Default bounds on what is kept for one neighbour until it acknowledges it: frames, and
#: their frame bytes (a neighbour that never comes back must not exhaust this node).
OUTBOX_FRAMES = 1 << 16
OUTBOX_BYTES = 16 << 20


@dataclass
class NodeCounts:
    """What one node sent, received and refused; the simulator's counters plus the network's."""

    messages_sent: int = 0
    bits_sent: int = 0
    messages_received: int = 0
    bits_received: int = 0
    rounds: int = 0  # rounds in which this node sent at least one message
    refused_messages: int = 0  # frames or messages refused: undecodable, spoofed, or by the agent
    waits: int = 0  # sync rounds in which the node waited for its neighbours
    wait_seconds: float = 0.0
    silent: dict[int, int] = field(default_factory=dict)  # neighbour -> step it stopped answering
    over_window: int = 0  # frames dropped: their sender already had its bound held here
    duplicates: int = 0  # frames dropped: their sequence number was taken already
    out_of_order: int = 0  # frames dropped at a gap in the sequence (a resend was asked)
    stale_frames: int = 0  # frames of an earlier (or unknown) incarnation of their sender
    resent: int = 0  # frames this node sent again: asked after a reset or by a resumed peer
    outbox_dropped: int = 0  # unacknowledged frames forgotten: the outbox bound was reached


@dataclass
class Link:
    """This node's end of its link with one neighbour."""

    next_seq: int = 1  # the number of the next frame this node sends it
    outbox: deque = field(default_factory=deque)  # (seq, Frame, bytes) not acknowledged
    outbox_bytes: int = 0
    session: int | None = None  # its session, once its hello came
    taken: int = 0  # its frames this node has taken, in order
    saved: int = 0  # ... as of this node's last checkpoint: what this node acknowledges
    asked: int = -1  # the last resend this node asked of it (taken then)
    asked_hello: int | None = None  # the unknown session this node last asked a hello of


class LiveNode:
    """One agent on a network of :class:`Transport` links (see the module docstring).

    Not thread-safe: one host thread drives it (and its transport).
    """

    def __init__(
        self,
        agent: Agent,
        transport: Transport,
        spec: WireSpec,
        *,
        sync: bool = False,
        timeout: float = 30.0,
        liars: Callable[[Message], Message] | None = None,
        hold_frames: int = HOLD_FRAMES,
        hold_bytes: int = HOLD_BYTES,
        record: dict | None = None,
        incarnation: int = 1,
        probe: float | None = None,
        outbox_frames: int = OUTBOX_FRAMES,
        outbox_bytes: int = OUTBOX_BYTES,
        checkpointing: bool = False,
    ):
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if hold_frames < 1 or hold_bytes < 1:
            raise ValueError(
                f"hold_frames and hold_bytes must be positive, got {hold_frames}, {hold_bytes}"
            )
        self.agent = agent
        self.transport = transport
        self.spec = spec
        self.sync = sync
        self.timeout = timeout
        self.counts = NodeCounts()
        self.liars = liars  # rewrites what a malicious node sends (mamab.attacks.Liars)
        self._neighbours = frozenset(agent.neighbours)
        self._waiting_for = set(agent.neighbours)  # neighbours a sync round waits for
        self._finished: set[int] = set()  # neighbours that said goodbye
        self.hold_frames = hold_frames  # per neighbour
        self.hold_bytes = hold_bytes  # per neighbour
        self._pending: dict[tuple[int, int, int], tuple[Frame, int]] = {}  # key -> (frame, bytes)
        self._due: list[tuple[int, int, int]] = []  # heap of pending keys (stale ones skipped)
        self._held = {v: [0, 0] for v in self._neighbours}  # neighbour -> [frames, bytes] held
        self._newest = 0  # the newest stamp ever held
        self._silent_since: dict[int, tuple[int, float]] = {}  # neighbour -> (step, monotonic)
        self._last_round = (0, 0)  # (step, round) of the last sync round this node ran
        self._alone = False  # at its last exchange it waited for no neighbour (all silent)
        self._silences: list[tuple[int, int, int, float]] = []  # (who, from, back at, seconds)
        self._closed = False
        self.record = record or {}  # the run's configuration record (mamab.live.agreement)
        self.digest = digest(self.record)
        self.session = link.new_session(incarnation)
        self.probe = probe if probe is not None else max(0.05, min(1.0, timeout / 4))
        self.outbox_frames = outbox_frames  # per neighbour
        self.outbox_bytes = outbox_bytes  # per neighbour
        self.checkpointing = checkpointing  # acknowledge only what a checkpoint holds
        self._links = {v: Link() for v in self._neighbours}
        self._started = False
        self.last_rounds = 0  # rounds of the last step's exchange

    @property
    def clock(self) -> int:
        return self.agent.clock

    # -- what the host calls --

    def start(self) -> None:
        """Say hello to every neighbour (idempotent; the first step does it otherwise)."""
        if self._started:
            return
        self._started = True
        for v in sorted(self._neighbours):
            self._hello(v, answer=self.incarnation > 1)  # resumed: tell me what you took

    def greet(self, timeout: float) -> set[int]:
        """Start, and wait up to ``timeout`` s for every neighbour's hello (Disagreement if one
        runs another configuration); the neighbours not heard from."""
        self.start()
        deadline = time.monotonic() + timeout
        while unheard := {v for v, lk in self._links.items() if lk.session is None}:
            arrived, frame, size = self._receive(max(0.0, deadline - time.monotonic()))
            if not arrived:
                return unheard
            if frame is not None:
                self._hold(frame, size)
        return set()

    @property
    def incarnation(self) -> int:
        return link.incarnation(self.session)

    def select_arm(self) -> int:
        """The arm to play now; an async node first takes what has arrived."""
        self._started or self.start()
        if not self.sync:
            self._take_arrived()
            self._deliver_due(self.clock)
        return self.agent.select_arm()

    def observe(self, arm: int, reward: float) -> None:
        """Learn from the step's reward, then run the exchange that follows the step."""
        self._started or self.start()
        self.agent.observe(arm, reward)
        self._exchange(self.clock)

    def tick(self) -> None:
        """A step passes for a node that does not play (sync mode: DEMAB's server)."""
        self._started or self.start()
        self.agent.tick()
        self._exchange(self.clock)

    def serve(self, idle_timeout: float | None = None) -> None:
        """Async loop of a node that does not play: wake on frames until every neighbour is done.

        Its clock follows the newest stamp it has heard, so it answers in the senders' step. It
        gives up after ``idle_timeout`` seconds of silence (default: ``timeout`` once its clock
        reached the horizon, 100 × ``timeout`` before: protocols may be quiet for long phases).
        """
        self.start()
        while self._finished < self._neighbours:
            idle = idle_timeout or self.timeout * (1 if self.clock >= self.agent.horizon else 100)
            if not self._take_arrived(wait=idle):
                break  # nobody spoke for ``idle`` seconds
            while self.clock < self._newest:
                self.agent.tick()
            self._deliver_due(self.clock)
            for round_ in range(max(1, self.agent.rounds_after(self.clock))):
                if not self._send_round(self.clock, round_, self._outgoing(), markers=False):
                    break

    def close(self) -> None:
        """Tell the neighbours this node is done, then close the transport (idempotent).
        In sync mode, first wait for the neighbours still answering to be done too."""
        if self._closed:
            return
        self._closed = True
        for v in sorted(self._neighbours):
            self._send_frame(Frame(self.agent.agent_id, v, self.clock, BYE_ROUND, ()))
        if self.sync:
            self._linger()
        self.transport.close()

    def _linger(self) -> None:
        """Sync: wait (up to ``timeout``) until every neighbour still answering has said
        goodbye, answering its resend requests meanwhile: one that was killed after this
        node's last wait for it, and resumed, still needs this node's frames."""
        deadline = time.monotonic() + self.timeout
        while self._waiting_for - self._finished:
            left = deadline - time.monotonic()
            if left <= 0 or not self._receive(left)[0]:
                return

    # -- the exchange --

    def _exchange(self, step: int) -> None:
        rounds = self.last_rounds = self.agent.rounds_after(step)
        if not self.sync:
            self._take_arrived()
            self._deliver_due(step)
            for round_ in range(max(1, rounds)):  # replies to late messages go out too
                self._send_round(step, round_, self._outgoing(), markers=False)
                self._take_arrived()
                self._deliver_due(step)
            return
        self._alone = not self._waiting_for - self._finished  # it waits for nobody
        if self._neighbours - self._waiting_for - self._finished:
            self._take_arrived()  # listen to silent neighbours without waiting: are they back?
        self._deliver_due(step - 1)  # frames of silent neighbours that came back: late
        for round_ in range(rounds):
            self._send_round(step, round_, self._outgoing(), markers=True)
            frames = self._await_round(step, round_)
            self._last_round = (step, round_)
            for sender in sorted(frames):
                self._deliver(frames[sender])

    def _outgoing(self) -> list[Message]:
        """The agent's messages of this round, as this node sends them (forged if it lies)."""
        out = self.agent.outgoing()
        return out if self.liars is None else [self.liars(m) for m in out]

    def _send_round(self, step: int, round_: int, out: list[Message], markers: bool) -> bool:
        """Send this round's messages, one frame per neighbour and stamp; True if there were any.

        With ``markers`` every neighbour without a message gets an empty frame of the round.
        (A message stamped before ``step`` was written in answer to a late one: its own frame.)
        """
        frames: dict[tuple[int, int], list[Message]] = defaultdict(list)
        for message in out:
            frames[message.receiver, message.stamp].append(message)
            self.counts.messages_sent += 1
            self.counts.bits_sent += message.bits
        if out:
            self.counts.rounds += 1
        if markers:
            for v in self._neighbours:
                frames.setdefault((v, step), [])
        me = self.agent.agent_id
        for (v, stamp), messages in sorted(frames.items()):
            if v not in self._finished:  # a neighbour that said goodbye hears nothing more
                self._send_frame(Frame(me, v, stamp, round_, tuple(messages)))
        return bool(out)

    def _send_frame(self, frame: Frame) -> None:
        """Number ``frame`` on its link, keep it until acknowledged, send it."""
        lk = self._links[frame.receiver]
        seq = lk.next_seq
        lk.next_seq += 1
        body = encode_frame(frame, self.spec)
        lk.outbox.append((seq, frame, len(body)))
        lk.outbox_bytes += len(body)
        while len(lk.outbox) > self.outbox_frames or lk.outbox_bytes > self.outbox_bytes:
            lk.outbox_bytes -= lk.outbox.popleft()[2]
            self.counts.outbox_dropped += 1
        self._transmit(seq, frame, body)

    def _transmit(self, seq: int, frame: Frame, body: bytes | None = None) -> None:
        lk = self._links[frame.receiver]
        body = encode_frame(frame, self.spec) if body is None else body
        self.transport.send(
            frame.receiver, link.encode(link.DATA, self.session, seq, self._ack(lk), body)
        )

    def _ack(self, lk: Link) -> int:
        return lk.saved if self.checkpointing else lk.taken

    def _hello(self, v: int, answer: bool) -> None:
        lk = self._links[v]
        control = link.Control(self.agent.agent_id, v, lk.taken, answer, self.digest, self.record)
        self.transport.send(
            v, link.encode_control(link.HELLO, self.session, self._ack(lk), control)
        )
        lk.asked = lk.taken

    def _ask_resend(self, v: int, again: bool = False) -> None:
        """Ask ``v`` for its frames after the last one taken (once per gap unless ``again``)."""
        lk = self._links[v]
        if lk.session is None:
            if again:  # its hello, or ours, may have been lost
                self._hello(v, answer=True)
            return
        if lk.asked == lk.taken and not again:
            return
        lk.asked = lk.taken
        control = link.Control(self.agent.agent_id, v, lk.taken)
        self.transport.send(v, link.encode_control(link.ACK, self.session, self._ack(lk), control))

    def _acknowledged(self, lk: Link, ack: int) -> None:
        while lk.outbox and lk.outbox[0][0] <= ack:
            lk.outbox_bytes -= lk.outbox.popleft()[2]

    def _resend(self, v: int, after: int) -> None:
        """Send ``v`` again every frame of its outbox numbered after ``after``."""
        for seq, frame, _ in list(self._links[v].outbox):
            if seq > after:
                self.counts.resent += 1
                self._transmit(seq, frame)

    def saved(self) -> None:
        """A checkpoint now holds everything taken so far: acknowledge it from now on."""
        for lk in self._links.values():
            lk.saved = lk.taken

    def state(self) -> dict:
        """What a checkpoint keeps of this node (everything but its transport and settings)."""
        return {name: getattr(self, name) for name in _STATE}

    def restore(self, state: dict, incarnation: int) -> None:
        """Continue from a checkpoint's ``state`` as incarnation ``incarnation`` (a new
        session: frames of the earlier ones are refused by the neighbours)."""
        for name in _STATE:
            setattr(self, name, state[name])
        self.session = link.new_session(incarnation)
        self._started = False
        for lk in self._links.values():
            lk.asked, lk.asked_hello = -1, None

    def _await_round(self, step: int, round_: int) -> dict[int, Frame]:
        """One frame of (step, round) from each neighbour still answering, or the timeout."""
        got = {
            s: frame
            for s in self._waiting_for
            if (frame := self._take((step, round_, s))) is not None
        }
        missing = self._waiting_for - got.keys() - self._finished
        if not missing:
            return got
        self.counts.waits += 1
        start = time.monotonic()
        deadline = start + self.timeout
        probe = start + self.probe
        seen = {v: self._links[v].taken for v in missing}  # taken from each at the last probe
        late_reads = self.hold_frames * len(self._neighbours)  # a flood cannot keep us here
        while missing:
            left = deadline - time.monotonic()
            late_reads -= left <= 0
            # Past the deadline, what has arrived still counts (this node may have been the one
            # stopped, e.g. SIGSTOP: its neighbours' frames wait in the queue); then give up.
            now = time.monotonic()
            if now >= probe and left > 0:  # no progress: a reset may have lost frames
                for v in sorted(missing):
                    if self._links[v].taken == seen[v]:  # (frames still coming: no need)
                        self._ask_resend(v, again=True)
                    seen[v] = self._links[v].taken
                probe = now + self.probe
            arrived, frame, size = (
                (False, None, 0)
                if late_reads < 0
                else self._receive(max(0.0, min(left, probe - time.monotonic())))
            )
            if not arrived and time.monotonic() < deadline and late_reads >= 0:
                continue  # a probe is due: the deadline is not
            if not arrived:
                self._mark_silent(missing, step, since=start)
                break
            if frame is None:
                missing -= self._finished
                continue
            if (frame.stamp, frame.round) != (step, round_):
                self._hold(frame, size)
            elif frame.sender in got:
                self._refuse()  # a second frame for this round: the first one stands
            else:
                got[frame.sender] = frame
                missing.discard(frame.sender)
            missing -= self._finished
        self.counts.wait_seconds += time.monotonic() - start
        return got

    def _mark_silent(self, missing: set[int], step: int, since: float) -> None:
        """Stop waiting for ``missing``: silent from ``step`` (until a frame from them comes);
        ``since``: when this node began waiting for them (monotonic seconds)."""
        for s in missing:
            self.counts.silent.setdefault(s, step)
            self._silent_since[s] = (step, since)
        self._waiting_for -= missing

    def _back(self, sender: int) -> None:
        """A frame from ``sender``: if it was silent, that silence ends now."""
        since = self._silent_since.pop(sender, None)
        if since is not None:
            self._silences.append((sender, since[0], self.clock, time.monotonic() - since[1]))

    def silences(self) -> list[dict]:
        """Every time a neighbour stopped answering: who, from which step, back at which step
        (None: never, as far as this node saw) and for how many seconds (so far, if never)."""
        now = time.monotonic()
        still = [(v, step, None, now - t) for v, (step, t) in self._silent_since.items()]
        return [
            {"node": v, "from_step": a, "back_at_step": b, "seconds": round(sec, 3)}
            for v, a, b, sec in sorted(self._silences + still, key=lambda x: (x[1], x[0]))
        ]

    # -- receiving --

    def _receive(self, timeout: float) -> tuple[bool, Frame | None, int]:
        """(whether anything arrived within ``timeout`` s, the frame if it is one to act on,
        its size in bytes)."""
        item = self.transport.recv(timeout)
        if item is None:
            return False, None, 0
        authenticated, data = item
        try:
            envelope = link.decode(data)
        except InvalidMessage:
            self._refuse()
            return True, None, 0
        if authenticated not in self._neighbours:
            self._refuse()  # a member may only speak along an edge
            return True, None, 0
        if envelope.kind != link.DATA:
            self._control(authenticated, envelope)
            return True, None, 0
        lk = self._links[authenticated]
        if envelope.session != lk.session:
            self._stranger(authenticated, envelope.session)
            return True, None, 0
        self._acknowledged(lk, envelope.ack)
        if envelope.seq <= lk.taken:
            self.counts.duplicates += 1  # sent again after a reset, or replayed: taken already
            return True, None, 0
        if envelope.seq > lk.taken + 1:
            self.counts.out_of_order += 1  # frames before it were lost: ask for them again
            self._ask_resend(authenticated)
            return True, None, 0
        lk.taken = envelope.seq
        try:
            frame = decode_frame(envelope.body, self.spec)
        except InvalidMessage:
            self._refuse()
            return True, None, 0
        if (
            frame.sender != authenticated
            or frame.receiver != self.agent.agent_id
            or frame.stamp > self.agent.horizon
        ):
            self._refuse()  # a member may only speak as itself, to us, in time
            return True, None, 0
        if frame.round == BYE_ROUND:
            self._back(frame.sender)
            self._finished.add(frame.sender)
            return True, None, 0
        if (
            self.sync
            and frame.sender not in self._waiting_for
            and (self._alone or (frame.stamp, frame.round) >= self._last_round)
        ):
            # A silent neighbour is back in step: wait for it again. One behind catches up
            # meanwhile (this node's frames are there for it, so it runs without waiting,
            # faster than nodes in step), without making this node and those waiting for it
            # time out in turn. But a node that waits for nobody runs as fast as it: then it
            # waits for it again at once, even behind (after nodes gave up on each other at
            # once, the one ahead used to run on alone for good, their frames in its past).
            self._back(frame.sender)
            self._waiting_for.add(frame.sender)
        return True, frame, len(envelope.body)

    def _stranger(self, v: int, session: int) -> None:
        """A data frame of a session of ``v`` this node does not know: refused. If it is newer
        than the one known (its hello was lost), ask ``v`` for its hello, once per session."""
        self.counts.stale_frames += 1
        known = self._links[v].session
        lk = self._links[v]
        if (known is None or link.incarnation(session) > link.incarnation(known)) and (
            lk.asked_hello != session
        ):
            lk.asked_hello = session
            self._hello(v, answer=True)

    def _control(self, v: int, envelope: link.Envelope) -> None:
        """A hello or an ack from neighbour ``v``."""
        try:
            control = link.decode_control(envelope)
        except InvalidMessage:
            self._refuse()
            return
        me = self.agent.agent_id
        if control.sender != v or control.receiver != me:
            self._refuse()
            return
        lk = self._links[v]
        if envelope.kind == link.ACK:
            if envelope.session != lk.session:
                self.counts.stale_frames += 1
                return
            self._acknowledged(lk, envelope.ack)
            self._resend(v, control.want)
            return
        if control.digest != self.digest:
            raise refuse(me, v, self.record, control.record or {})
        known = lk.session
        if (
            known is not None
            and envelope.session != known
            and (link.incarnation(envelope.session) <= link.incarnation(known))
        ):
            self.counts.stale_frames += 1  # an earlier incarnation, or a second process as one
            self._hello(v, answer=False)  # it learns what this node took from its run
            return
        if self.incarnation == 1 and control.want >= lk.next_seq:
            raise ConfigError(
                f"node {v} has already taken {control.want} frames of this run from node {me}, "
                f"which sent {lk.next_seq - 1}: node {me} was started again without --resume"
            )
        lk.session = envelope.session
        self._acknowledged(lk, envelope.ack)
        if control.answer or known is not None:  # a resumed neighbour, or this node resumed:
            self._resend(v, control.want)  # (a first hello's frames in flight need no resend)
        if control.answer:
            self._hello(v, answer=False)

    def _refuse(self) -> None:
        self.counts.refused_messages += 1
        self.transport.refuse()

    def _hold(self, frame: Frame, size: int) -> None:
        """Keep ``frame`` until its round, within its sender's bound (else drop and count it)."""
        key = (frame.stamp, frame.round, frame.sender)
        if key in self._pending:
            self._refuse()  # a second frame for the same round: the first one stands
            return
        held = self._held[frame.sender]
        if held[0] >= self.hold_frames or held[1] + size > self.hold_bytes:
            self.counts.over_window += 1  # the sender has enough held here already
            return
        held[0] += 1
        held[1] += size
        self._pending[key] = (frame, size)
        heapq.heappush(self._due, key)
        self._newest = max(self._newest, frame.stamp)

    def _take(self, key: tuple[int, int, int]) -> Frame | None:
        """The held frame of ``key`` (removed, its sender's bound freed), or None."""
        item = self._pending.pop(key, None)
        if item is None:
            return None
        frame, size = item
        held = self._held[frame.sender]
        held[0] -= 1
        held[1] -= size
        return frame

    def _take_arrived(self, wait: float = 0.0) -> bool:
        """Hold every frame that has arrived, first waiting up to ``wait`` s for one; True if any."""
        deadline = time.monotonic() + wait
        took = False
        while True:
            arrived, frame, size = self._receive(
                0.0 if took else max(0.0, deadline - time.monotonic())
            )
            if not arrived:
                return took
            if frame is not None:
                self._hold(frame, size)
            took = True

    def _deliver_due(self, up_to: int) -> None:
        """Deliver held frames stamped up to ``up_to``, oldest first, by round, then sender."""
        due = self._due
        while due and due[0][0] <= up_to:
            frame = self._take(heapq.heappop(due))
            if frame is not None:  # None: taken by its round already (a stale heap entry)
                self._deliver(frame)

    def _deliver(self, frame: Frame) -> None:
        for message in frame.messages:
            try:
                self.agent.receive(message)
            except InvalidMessage:
                self._refuse()
                continue
            self.counts.messages_received += 1
            self.counts.bits_received += message.bits


#: The fields of a LiveNode a checkpoint keeps.
_STATE = (
    "agent",
    "counts",
    "_waiting_for",
    "_finished",
    "_pending",
    "_due",
    "_held",
    "_newest",
    "_silent_since",
    "_last_round",
    "_alone",
    "_silences",
    "_links",
    "last_rounds",
)
