"""GosInE (Chawla, Sankararaman, Ganesh, Shakkottai, AISTATS 2020), gossip insert-eliminate.

An agent plays UCB (alpha = 4, global t, statistics of every arm kept for the whole run) over
its sticky arms S_n plus two non-sticky slots. Phase j ends at t = ceil(j^3); then it asks one
uniformly random neighbour for the arm that neighbour played most in the phase, and if that arm
is new to it, the arm replaces its less-played non-sticky arm of the phase. A request or reply
delayed in transit has missed its phase's exchange and is dropped on arrival. A reply from a
neighbour it did not ask, or a second request or reply from one sender, is refused.
"""

from __future__ import annotations

import numpy as np

from mamab.algorithms.base import Agent, Message
from mamab.algorithms.gosine.schedule import (
    block_ends,
    draw_partners,
    initial_sets,
    partner,
    phase_ends,
)
from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.ucb_index import UCB
from mamab.bits import SIGNAL_BITS
from mamab.errors import InvalidMessage
from mamab.schedule import index_bits, is_listed
from mamab.topology import Topology

REQUEST_BITS = SIGNAL_BITS  # a pull request is a one-bit signal
KINDS = {"pull": 1, "arm": 2}  # the payloads: ("pull",), a request; ("arm", a), a reply


class GosineAgent(Agent):
    def __init__(
        self,
        agent_id: int,
        n_arms: int,
        horizon: int,
        neighbours: tuple[int, ...],
        sticky: tuple[int, ...],
        non_sticky: tuple[int, ...],
        draws,
        alpha: float = 4.0,
        exponent: float = 3.0,
    ):
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.sticky = tuple(sticky)
        self.initial_non_sticky = tuple(non_sticky)
        self.non_sticky = list(non_sticky)
        self.ucb = UCB(range(n_arms), alpha)
        self.ends = tuple(phase_ends(horizon, exponent).tolist())
        self.draws = [float(u) for u in draws]  # one uniform per phase, from the run's stream
        self.phase = 0
        self.played: dict[int, int] = {}
        self.listening = False
        self._asked: int | None = None  # the neighbour asked at the last phase end
        self._requests: list[int] = []

    def reset(self, done_steps: int) -> None:
        """Fresh statistics and initial sets; t stays global (GosInE's UCB clock is never reset)."""
        self.ucb = UCB(range(self.n_arms), self.ucb.alpha)
        self.ucb.samples = done_steps
        self.non_sticky = list(self.initial_non_sticky)
        self._rejoin(done_steps)
        self.phase = sum(1 for end in self.ends if end <= done_steps)
        self.played = {}
        self.listening = False
        self._asked = None
        self._requests = []

    def rounds_after(self, step: int) -> int:
        """Two rounds after each phase: the pull request, then the reply."""
        return 2 if is_listed(self.ends, step) else 0

    @property
    def active(self) -> tuple[int, ...]:
        return tuple(sorted({*self.sticky, *self.non_sticky}))

    def select_arm(self) -> int:
        if self.listening:
            self.listening = False
            self.played = {}
        return self._chose(self.ucb.select(self.active))

    def observe(self, arm: int, reward: float) -> None:
        arm, reward = self._accept_observation(arm, reward)
        self.ucb.update(arm, reward)
        self.played[arm] = self.played.get(arm, 0) + 1
        self.clock += 1
        if self.phase < len(self.ends) and self.clock == self.ends[self.phase]:
            self.listening = True
            self._asked = None
            self._end_phase()
            self.phase += 1

    def _end_phase(self) -> None:
        """Ask a neighbour drawn uniformly among those :meth:`_askable` for its best arm."""
        choices = self._askable()
        if choices:
            asked = choices[partner(self.draws[self.phase], len(choices))]
            self._outbox = [self._message(asked, ("pull",), REQUEST_BITS)]
            self._asked = asked

    def _askable(self) -> tuple[int, ...]:
        """The neighbours it may ask at this phase end: all of them."""
        return self.neighbours

    def most_played(self) -> int:
        """This phase's most-played arm; the lowest index on ties."""
        return max(self.active, key=lambda a: (self.played.get(a, 0), -a))

    def outgoing(self) -> list[Message]:
        out = super().outgoing()
        if self._requests:
            best = self.most_played()
            out += [
                self._message(v, ("arm", best), index_bits(self.n_arms)) for v in self._requests
            ]
            self._requests = []
        return out

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        kind = self._payload_kind(message.payload, KINDS)
        arm = self._check_arm(message.payload[1]) if kind == "arm" else None
        key = self._check_first_copy(message, kind)
        if self._is_late(message):
            self._heard.add(key)
            return  # its phase's exchange is over
        if not self.listening:
            raise InvalidMessage(f"agent {self.agent_id}: message outside a communication window")
        if kind == "arm" and message.sender != self._asked:
            raise InvalidMessage(
                f"agent {self.agent_id}: reply from {message.sender}, which it did not ask"
            )
        self._heard.add(key)
        if kind == "pull":
            self._requests.append(int(message.sender))
        else:
            self._take_reply(int(message.sender), arm)

    def _take_reply(self, sender: int, arm: int) -> None:
        """The asked neighbour's recommendation, on time: insert it."""
        self._insert(arm)

    def _insert(self, arm: int) -> None:
        """Replace the less-played non-sticky arm of the phase (the higher index on ties)."""
        if arm in self.active or not self.non_sticky:
            return
        out = max(self.non_sticky, key=lambda a: (-self.played.get(a, 0), a))
        self.non_sticky[self.non_sticky.index(out)] = arm


class GosineRobustAgent(GosineAgent):
    """GosInE with Vial, Shakkottai and Srikant's blocking (MobiHoc 2021): gosine-robust.

    At the end of phase j the agent first judges the neighbour whose reply arrived at the end of
    phase j - 1: if the arm it recommended is not the agent's most-played arm of phase j, that
    neighbour is blocked until phase ceil(j^block_exponent) (blocked while j < that phase). Then
    it asks a neighbour drawn with GosInE's per-phase uniform among the unblocked ones (nobody
    when all are blocked). The reply is inserted by GosInE's rule and remembered to be judged
    at the next phase end, even when its arm was already in the set.
    """

    def __init__(
        self,
        agent_id: int,
        n_arms: int,
        horizon: int,
        neighbours: tuple[int, ...],
        sticky: tuple[int, ...],
        non_sticky: tuple[int, ...],
        draws,
        alpha: float = 4.0,
        exponent: float = 3.0,
        block_exponent: float = 2.0,
    ):
        super().__init__(
            agent_id, n_arms, horizon, neighbours, sticky, non_sticky, draws, alpha, exponent
        )
        self.block_exponent = block_exponent
        self.block_ends = tuple(block_ends(len(self.ends), block_exponent).tolist())
        self.blocked_until: dict[int, int] = {}  # neighbour -> the phase its block ends
        self.recommendation: tuple[int, int] | None = None  # (neighbour, arm) to judge

    def reset(self, done_steps: int) -> None:
        """GosInE's reset, and no blocks, no recommendation to judge."""
        super().reset(done_steps)
        self.blocked_until = {}
        self.recommendation = None

    def blocked(self, neighbour: int, phase: int) -> bool:
        """Whether ``neighbour`` is blocked at the end of phase ``phase`` (1-based)."""
        return phase < self.blocked_until.get(neighbour, 0)

    def _end_phase(self) -> None:
        """Judge the last recommendation, then ask an unblocked neighbour."""
        j = self.phase + 1  # the phase just ended
        if self.recommendation is not None:
            sender, arm = self.recommendation
            if self.most_played() != arm:
                until = max(self.blocked_until.get(sender, 0), self.block_ends[j - 1])
                self.blocked_until[sender] = until
        self.recommendation = None
        super()._end_phase()

    def _askable(self) -> tuple[int, ...]:
        """The neighbours not blocked at this phase end, in neighbour order."""
        return tuple(v for v in self.neighbours if not self.blocked(v, self.phase + 1))

    def _take_reply(self, sender: int, arm: int) -> None:
        """Insert it (GosInE) and remember who recommended what, to judge it next phase end."""
        self._insert(arm)
        self.recommendation = (sender, arm)


def make_gosine(
    topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams, rng: np.random.Generator
) -> list[Agent]:
    n = topology.n_agents
    ends = phase_ends(horizon, params.gossip_exponent)
    draws = draw_partners(rng, len(ends), n)
    alpha = params.alpha
    return [
        GosineAgent(
            i,
            n_arms,
            horizon,
            topology.neighbours[i],
            *initial_sets(i, n_arms, n),
            draws[:, i],
            alpha,
            params.gossip_exponent,
        )
        for i in range(n)
    ]


def make_gosine_robust(
    topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams, rng: np.random.Generator
) -> list[Agent]:
    """GosInE's agents with blocking: the same partner draws and initial sets as gosine."""
    n = topology.n_agents
    draws = draw_partners(rng, len(phase_ends(horizon, params.gossip_exponent)), n)
    alpha = params.alpha
    return [
        GosineRobustAgent(
            i,
            n_arms,
            horizon,
            topology.neighbours[i],
            *initial_sets(i, n_arms, n),
            draws[:, i],
            alpha,
            params.gossip_exponent,
            params.block_exponent,
        )
        for i in range(n)
    ]
