"""The online agent interface: a tiny synchronous protocol a host system can drive.

Each step the host calls, for every agent, ``select_arm()``, plays the arm, then
``observe(arm, reward)``. Then it runs communication rounds: it collects ``outgoing()`` from
every agent, delivers each message to its receiver with ``receive(message)``, and repeats until
a round in which no agent has anything to send. Messages travel only along the graph's edges.
Nodes that do not play (DEMAB's server) get ``tick()`` instead, once a step, to keep their clock.

Every message is stamped with its sender's clock: the number of steps played when it was sent.
An agent takes late messages (an older stamp) by its algorithm's rule and refuses messages from
its future (a newer stamp than its own clock), which no honest network can deliver.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from mamab.errors import InvalidMessage


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

    @abstractmethod
    def select_arm(self) -> int:
        """The arm to play this step."""

    @abstractmethod
    def observe(self, arm: int, reward: float) -> None:
        """Learn from this step's own reward."""

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

    def reset(self, done_steps: int) -> None:
        """Restart with fresh state after a crash; ``done_steps`` steps have passed for everyone.

        The protocol clock (epoch, phase) is global, so the agent rejoins at the right place.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot recover from a crash")

    def outgoing(self) -> list[Message]:
        """Messages to send in the current communication round (empty when silent)."""
        out, self._outbox = self._outbox, []
        return out

    def receive(self, message: Message) -> None:
        """Accept one message; raise :class:`InvalidMessage` (state unchanged) if it is refused."""
        self._check_envelope(message)
        raise InvalidMessage(f"agent {self.agent_id} takes no messages")

    # -- checks shared by the algorithms; they run before any state changes --

    def _check_envelope(self, message: Message) -> None:
        if not isinstance(message, Message):
            raise InvalidMessage(
                f"agent {self.agent_id}: expected a Message, got {type(message).__name__}"
            )
        if message.receiver != self.agent_id:
            raise InvalidMessage(
                f"agent {self.agent_id}: message addressed to agent {message.receiver}"
            )
        if message.sender not in self._neighbour_set:
            raise InvalidMessage(
                f"agent {self.agent_id}: sender {message.sender} is not a neighbour"
            )
        stamp = message.stamp
        if isinstance(stamp, bool) or not isinstance(stamp, numbers.Integral) or stamp < 0:
            raise InvalidMessage(f"agent {self.agent_id}: bad stamp {stamp!r}")
        if stamp > self.clock:
            raise InvalidMessage(
                f"agent {self.agent_id}: message stamped {stamp} comes from the future "
                f"(clock {self.clock})"
            )

    def _is_late(self, message: Message) -> bool:
        """Sent before the current exchange and delayed in transit (after the envelope check)."""
        return message.stamp < self.clock

    def _message(self, receiver: int, payload: Any, bits: int) -> Message:
        """A message from this agent, stamped with its clock."""
        return Message(self.agent_id, receiver, payload, bits, self.clock)

    def _check_arm(self, arm: Any) -> int:
        if (
            isinstance(arm, bool)
            or not isinstance(arm, numbers.Integral)
            or not 0 <= arm < self.n_arms
        ):
            raise InvalidMessage(f"agent {self.agent_id}: arm {arm!r} outside 0..{self.n_arms - 1}")
        return int(arm)

    def _check_reward(self, reward: Any) -> float:
        if (
            isinstance(reward, bool)
            or not isinstance(reward, numbers.Real)
            or not math.isfinite(reward)
        ):
            raise InvalidMessage(f"agent {self.agent_id}: reward {reward!r} is not a finite number")
        return float(reward)
