"""The online agent interface: a tiny synchronous protocol a host system can drive.

Each step the host calls, for every agent, ``select_arm()``, plays the arm, then
``observe(arm, reward)``. Then it runs communication rounds: it collects ``outgoing()`` from
every agent, delivers each message to its receiver with ``receive(message)``, and repeats until
a round in which no agent has anything to send. Messages travel only along the graph's edges.
Nodes that do not play (DEMAB's server) get ``tick()`` instead, once a step, to keep their clock.

Every message is stamped with its sender's clock: the number of steps played when it was sent.
An agent takes late messages (an older stamp) by its algorithm's rule and refuses messages from
its future (a newer stamp than its own clock), which no honest network can deliver.

Refusals leave the agent unchanged: ``receive()`` raises :class:`InvalidMessage` (also for a
second copy of a message within one exchange, the messages after one step), ``observe()``
raises :class:`InvalidObservation` (an arm other than the one ``select_arm()`` just returned,
or a reward that is not a finite real number). Both are ``ValueError`` subclasses.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from mamab.errors import InvalidMessage, InvalidObservation

_isfinite = math.isfinite  # bound once: the observation check runs every agent-step


@dataclass(frozen=True)
class Message:
    """One point-to-point message, its exact size on the wire and when it was sent.

    ``stamp`` is transport metadata (the sender's clock), not counted in ``bits``: in a
    synchronous network the receiver knows the round a message belongs to.
    """

    sender: int
    receiver: int
    payload: Any
    bits: int
    stamp: int


class Agent(ABC):
    """One agent of the network; subclasses implement one algorithm."""

    plays = True  # False for nodes that only relay or coordinate (DEMAB's server)

    def __init__(self, agent_id: int, n_arms: int, horizon: int, neighbours: tuple[int, ...]):
        self.agent_id = agent_id
        self.n_arms = n_arms
        self.horizon = horizon
        self.neighbours = tuple(neighbours)
        self._neighbour_set = frozenset(self.neighbours)
        self._outbox: list[Message] = []  # what outgoing() hands over next
        self.clock = 0  # steps played so far (by everyone: the protocol clock is global)
        self._selected: int | None = None  # the arm select_arm() returned, until it is observed
        self._heard: set[Hashable] = set()  # keys of the messages taken in the current exchange

    @abstractmethod
    def select_arm(self) -> int:
        """The arm to play this step (implementations return ``self._chose(arm)``)."""

    @abstractmethod
    def observe(self, arm: int, reward: float) -> None:
        """Learn from this step's own reward (implementations start with ``_accept_observation``)."""

    def rounds_after(self, step: int) -> int:
        """The most communication rounds the exchange after ``step`` (1-indexed) can take.

        0 when the algorithm never talks after that step. It is a property of the protocol, the
        same for every node of a run, so nodes on a real network know when to wait for their
        neighbours (``mamab.live``). The default, one round after every step, is always safe
        for one-round protocols; an algorithm that talks less often should say so.
        """
        return 1

    def tick(self) -> None:
        """A step passes without this node playing (nodes with ``plays = False`` only)."""
        self.clock += 1
        self._heard.clear()

    def reset(self, done_steps: int) -> None:
        """Restart with fresh state after a crash; ``done_steps`` steps have passed for everyone.

        The protocol clock (epoch, phase) is global, so the agent rejoins at the right place.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot recover from a crash")

    def _rejoin(self, done_steps: int) -> None:
        """The protocol part of ``reset()``: the global clock; nothing selected, heard or queued."""
        self.clock = done_steps
        self._selected = None
        self._heard.clear()
        self._outbox = []

    def outgoing(self) -> list[Message]:
        """Messages to send in the current communication round (empty when silent)."""
        out, self._outbox = self._outbox, []
        return out

    def receive(self, message: Message) -> None:
        """Accept one message; raise :class:`InvalidMessage` (state unchanged) if it is refused."""
        self._check_envelope(message)
        raise InvalidMessage(f"agent {self.agent_id} takes no messages")

    # -- checks shared by the algorithms; they run before any state changes --

    def _chose(self, arm: int) -> int:
        """Remember the arm ``select_arm()`` returns: ``observe()`` takes that arm only."""
        self._selected = arm
        return arm

    def _accept_observation(self, arm: Any, reward: Any) -> tuple[int, float]:
        """Check ``observe(arm, reward)`` before any state changes, then start the step's exchange.

        ``arm`` must be the integer ``select_arm()`` just returned (once: a second ``observe()``
        needs a new selection) and ``reward`` a finite real number; anything else raises
        :class:`InvalidObservation`. Fast path first: this runs once per agent and step.
        """
        if type(arm) is not int or arm != self._selected:
            arm = self._observed_arm(arm)
        if type(reward) is not float or not _isfinite(reward):
            reward = self._observed_reward(reward)
        self._selected = None
        if self._heard:
            self._heard.clear()
        return arm, reward

    def _observed_arm(self, arm: Any) -> int:
        if isinstance(arm, bool) or not isinstance(arm, numbers.Integral):
            raise InvalidObservation(f"agent {self.agent_id}: arm {arm!r} is not an integer")
        if self._selected is None:
            raise InvalidObservation(f"agent {self.agent_id}: observe() without select_arm()")
        if arm != self._selected:
            raise InvalidObservation(
                f"agent {self.agent_id}: observed arm {arm!r}, but select_arm() returned "
                f"{self._selected}"
            )
        return int(arm)

    def _observed_reward(self, reward: Any) -> float:
        value = finite_real(reward)
        if value is None:
            raise InvalidObservation(
                f"agent {self.agent_id}: reward {reward!r} is not a finite real number"
            )
        return value

    def _check_envelope(self, message: Message) -> None:
        if not isinstance(message, Message):
            raise InvalidMessage(
                f"agent {self.agent_id}: expected a Message, got {type(message).__name__}"
            )
        if (
            type(message.sender) is not int
            or type(message.receiver) is not int
            or type(message.stamp) is not int
            or type(message.bits) is not int
        ):
            self._check_header_types(message)
        if message.bits < 0:
            raise InvalidMessage(f"agent {self.agent_id}: negative bits {message.bits!r}")
        if message.receiver != self.agent_id:
            raise InvalidMessage(
                f"agent {self.agent_id}: message addressed to agent {message.receiver}"
            )
        if message.sender not in self._neighbour_set:
            raise InvalidMessage(
                f"agent {self.agent_id}: sender {message.sender} is not a neighbour"
            )
        stamp = message.stamp
        if stamp < 0:
            raise InvalidMessage(f"agent {self.agent_id}: bad stamp {stamp!r}")
        if stamp > self.clock:
            raise InvalidMessage(
                f"agent {self.agent_id}: message stamped {stamp} comes from the future "
                f"(clock {self.clock})"
            )

    def _check_header_types(self, message: Message) -> None:
        """Sender, receiver, stamp and bits are integers (numpy's too): comparing them is safe."""
        self._check_integer("sender", message.sender)
        self._check_integer("receiver", message.receiver)
        self._check_integer("bits", message.bits)
        if isinstance(message.stamp, bool) or not isinstance(message.stamp, numbers.Integral):
            raise InvalidMessage(f"agent {self.agent_id}: bad stamp {message.stamp!r}")

    def _check_integer(self, field: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise InvalidMessage(f"agent {self.agent_id}: {field} {value!r} is not an integer")

    def _check_first_copy(self, message: Message, kind: Hashable = None) -> Hashable:
        """Refuse a second message of ``kind`` from one sender with one stamp in one exchange.

        Returns the message's key; the caller adds it to ``_heard`` once it takes the message.
        """
        key = (message.sender, message.stamp, kind)
        if key in self._heard:
            what = "" if kind is None else f" ({kind})"
            raise InvalidMessage(
                f"agent {self.agent_id}: a second message{what} from {message.sender} stamped "
                f"{message.stamp} in one exchange"
            )
        return key

    def _payload_kind(self, payload: Any, lengths: Mapping[str, int]) -> str:
        """The tag of a payload ``(tag, ...)`` whose tag is in ``lengths`` with that length."""
        if (
            isinstance(payload, tuple)
            and payload
            and isinstance(payload[0], str)
            and lengths.get(payload[0]) == len(payload)
        ):
            return payload[0]
        raise InvalidMessage(f"agent {self.agent_id}: unexpected message {payload!r}")

    def _is_late(self, message: Message) -> bool:
        """Sent before the current exchange and delayed in transit (after the envelope check)."""
        return message.stamp < self.clock

    def _message(self, receiver: int, payload: Any, bits: int) -> Message:
        """A message from this agent, stamped with its clock."""
        return Message(self.agent_id, receiver, payload, bits, self.clock)

    def _check_arm(self, arm: Any) -> int:
        if type(arm) is int and 0 <= arm < self.n_arms:
            return arm
        if (
            isinstance(arm, bool)
            or not isinstance(arm, numbers.Integral)
            or not 0 <= arm < self.n_arms
        ):
            raise InvalidMessage(f"agent {self.agent_id}: arm {arm!r} outside 0..{self.n_arms - 1}")
        return int(arm)

    def _check_reward(self, reward: Any) -> float:
        if type(reward) is float and _isfinite(reward):
            return reward
        value = finite_real(reward)
        if value is None:
            raise InvalidMessage(f"agent {self.agent_id}: reward {reward!r} is not a finite number")
        return value


def finite_real(value: Any) -> float | None:
    """``value`` as a finite float if it is a real number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        value = float(value)
    except (OverflowError, TypeError, ValueError):  # an int beyond float range, an odd Real
        return None
    return value if math.isfinite(value) else None
