"""LCC-UCB (Alg. 1+2), LCC-UCB-GRAPH (Alg. 3) and LCC-UCB with relaying, as online agents.

An agent runs a fresh UCB on A = S_n ∪ R in every phase (an epoch, or a sub-epoch for
LCC-UCB-GRAPH), then sends its most-played arm; R becomes the set of arms received in that
communication window (older recommendations are dropped, as in the paper). A recommendation
delayed in transit that arrives during the phase it was meant for joins that phase's UCB as a
fresh arm; one that arrives after that phase ended is dropped. A second recommendation from one
sender for one phase is refused (a relayed origin: a second one from one sender in one exchange).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from mamab.algorithms.base import Agent, Message
from mamab.algorithms.lcc.variants import RELAY, ROBUST
from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.ucb_index import UCB
from mamab.errors import InvalidMessage
from mamab.schedule import (
    agent_bits,
    base_length,
    index_bits,
    initial_block,
    is_listed,
    k_prime,
    phase_lengths,
)
from mamab.topology import Topology


class LccUcbAgent(Agent):
    """LCC-UCB on any graph: recommendations go to neighbours only.

    ``sub_epochs=1`` is LCC-UCB (on a non-complete graph, the paper's Corollary 1 variant);
    ``sub_epochs=D`` is LCC-UCB-GRAPH. ``k_prime`` fixes the epoch length K'(K'+1)·2^j.
    """

    def __init__(
        self,
        agent_id: int,
        n_arms: int,
        horizon: int,
        neighbours: tuple[int, ...],
        initial_arms: tuple[int, ...],
        k_prime: int,
        sub_epochs: int = 1,
        alpha: float = 2.0,
    ):
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.initial_arms = tuple(initial_arms)
        self.alpha = alpha
        self.phases = phase_lengths(horizon, base_length(k_prime), sub_epochs)
        self._phase_ends = tuple(np.cumsum(self.phases).tolist())
        self.phase = 0
        self.step_in_phase = 0
        self.recommendations: frozenset[int] = frozenset()
        self.ucb = UCB(self.initial_arms, alpha)
        self.listening = False  # True between the end of a phase and the next select_arm
        self._received: dict[int, int] = {}

    def select_arm(self) -> int:
        if self.phase >= len(self.phases):
            raise RuntimeError(f"agent {self.agent_id}: the horizon {self.horizon} is over")
        if self.listening:
            self._start_phase()
        return self._chose(self.ucb.select())

    def observe(self, arm: int, reward: float) -> None:
        arm, reward = self._accept_observation(arm, reward)
        self.ucb.update(arm, reward)
        self.clock += 1
        self.step_in_phase += 1
        if self.step_in_phase == self.phases[self.phase]:
            self._end_phase(self.ucb.most_played())

    def rounds_after(self, step: int) -> int:
        """One round (the recommendations) after each phase."""
        return 1 if is_listed(self._phase_ends, step) else 0

    def reset(self, done_steps: int) -> None:
        """A fresh UCB on S_n alone, for the rest of the phase the others are in."""
        ends = np.cumsum(self.phases)
        self.phase = int(np.searchsorted(ends, done_steps, side="right"))
        self.step_in_phase = done_steps - (int(ends[self.phase - 1]) if self.phase else 0)
        self._rejoin(done_steps)
        self.recommendations = frozenset()
        self.ucb = UCB(self.initial_arms, self.alpha)
        self.listening = False
        self._received = {}

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        arm = self._check_arm(message.payload)
        if self._is_stale(message):
            self._heard.add(self._check_first_copy(message))
            return
        if message.sender in self._received:
            raise InvalidMessage(
                f"agent {self.agent_id}: second recommendation from {message.sender}"
            )
        self._received[int(message.sender)] = arm
        if self._takes(int(message.sender), arm) and not self.listening:
            self._join(arm)

    def _takes(self, sender: int, arm: int) -> bool:
        """Whether the recommendation ``arm`` from ``sender`` joins the phase it is meant for."""
        return True

    def _is_stale(self, message: Message) -> bool:
        """True for a late message meant for a phase that is over; False for one sent at the end
        of the phase before the current (or coming) one; any other stamp is refused."""
        start = self.clock - self.step_in_phase  # the step the current (or coming) phase starts at
        if message.stamp < start:
            return True
        if message.stamp > start or (self.phase == 0 and not self.listening):
            raise InvalidMessage(
                f"agent {self.agent_id}: message from {message.sender} stamped {message.stamp} "
                "is outside a communication window"
            )
        return False

    def _join(self, arm: int) -> None:
        """A late recommendation for the running phase: its UCB takes the arm from now on."""
        self.recommendations = self.recommendations | {arm}
        self.ucb.add(arm)

    def _end_phase(self, best: int) -> None:
        bits = index_bits(self.n_arms)
        self._outbox = [self._message(v, best, bits) for v in self.neighbours]
        self._received = {}
        self.listening = True
        self.phase += 1
        self.step_in_phase = 0

    def _next_recommendations(self) -> frozenset[int]:
        return frozenset(self._received.values())

    def _start_phase(self) -> None:
        self.recommendations = self._next_recommendations()
        self.ucb = UCB(set(self.initial_arms) | self.recommendations, self.alpha)
        self.listening = False


class RelayAgent(LccUcbAgent):
    """LCC-UCB epochs on a graph with flooding, so every agent hears all N recommendations.

    Flooding runs ``relay_rounds`` (= D) rounds after each epoch: in round 1 an agent sends its
    own (origin, arm) pair to its neighbours; in round r it forwards the pairs it first learned in
    round r-1. A pair costs ceil(log2 N) + ceil(log2 K) bits, so forwarding is paid for hop by hop.
    """

    def __init__(self, *args, relay_rounds: int, n_agents: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.relay_rounds = relay_rounds
        self.n_agents = n_agents
        self.known: dict[int, int] = {}
        self._fresh: list[tuple[int, int]] = []
        self._round = 0
        self._pair_bits = agent_bits(n_agents) + index_bits(self.n_arms)

    def rounds_after(self, step: int) -> int:
        """The flood: ``relay_rounds`` (= D) rounds after each epoch."""
        return self.relay_rounds if is_listed(self._phase_ends, step) else 0

    def outgoing(self) -> list[Message]:
        if not self.listening or self._round >= self.relay_rounds:
            return []
        self._round += 1
        fresh, self._fresh = tuple(self._fresh), []
        if not fresh or not self.neighbours:
            return []
        bits = self._pair_bits * len(fresh)
        return [self._message(v, fresh, bits) for v in self.neighbours]

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        pairs = message.payload
        if not isinstance(pairs, tuple) or not pairs:
            raise InvalidMessage(
                f"agent {self.agent_id}: relay payload must be a non-empty tuple of pairs"
            )
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise InvalidMessage(
                    f"agent {self.agent_id}: relay entry {pair!r} is not an (origin, arm) pair"
                )
            origin, arm = pair
            if (
                isinstance(origin, bool)
                or not isinstance(origin, numbers.Integral)
                or not 0 <= origin < self.n_agents
            ):
                raise InvalidMessage(f"agent {self.agent_id}: bad origin {origin!r}")
            self._check_arm(arm)
        pairs = tuple((int(origin), int(arm)) for origin, arm in pairs)
        if len({origin for origin, _ in pairs}) < len(pairs):
            raise InvalidMessage(f"agent {self.agent_id}: an origin twice in one relay message")
        # a sender forwards each origin once per window: a repeat is a copy
        keys = [self._check_first_copy(message, f"origin {origin}") for origin, _ in pairs]
        stale = self._is_stale(message)
        self._heard.update(keys)
        if stale:
            return
        for origin, arm in pairs:
            if origin not in self.known:
                self.known[origin] = arm
                if self.listening:
                    self._fresh.append((origin, arm))
                elif origin != self.agent_id:
                    self._join(arm)  # late, after the flood: used, not forwarded

    def reset(self, done_steps: int) -> None:
        super().reset(done_steps)
        self.known, self._fresh, self._round = {}, [], 0

    def _end_phase(self, best: int) -> None:
        super()._end_phase(best)
        self._outbox = []
        self.known = {self.agent_id: best}
        self._fresh = [(self.agent_id, best)]
        self._round = 0

    def _next_recommendations(self) -> frozenset[int]:
        return frozenset(arm for origin, arm in self.known.items() if origin != self.agent_id)


class LccUcbRobustAgent(LccUcbAgent):
    """LCC-UCB that blocks neighbours whose recommendations do not prove out (after Vial,
    Shakkottai, Srikant, "Robust Multi-Agent Multi-Armed Bandits", MobiHoc 2021).

    A recommendation taken for phase p is checked at the end of phase p: if it is not the
    agent's most-played arm of p, its sender has offended once more and its recommendations for
    the next ``offences`` phases are discarded (received and counted, not joined). Phases are
    0-indexed; blocking is on the receiving side only, so the messages sent are LCC-UCB's.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fresh_trust()

    def _fresh_trust(self) -> None:
        """No offences, no blocks, nothing taken: a fresh agent's (and a recovered one's) state."""
        self.offences = dict.fromkeys(self.neighbours, 0)
        self.blocked_until = dict.fromkeys(self.neighbours, 0)  # first phase v is heard again
        self.taken: dict[int, int] = {}  # sender -> recommendation joined for the running phase

    def reset(self, done_steps: int) -> None:
        super().reset(done_steps)
        self._fresh_trust()

    def _takes(self, sender: int, arm: int) -> bool:
        """A recommendation for phase ``self.phase`` joins unless its sender is blocked then."""
        if self.phase < self.blocked_until[sender]:
            return False
        self.taken[sender] = arm
        return True

    def _next_recommendations(self) -> frozenset[int]:
        return frozenset(self.taken.values())

    def _end_phase(self, best: int) -> None:
        """Judge the recommendations taken for the phase just over, then send as LCC-UCB."""
        for sender, arm in self.taken.items():
            if arm != best:
                self.offences[sender] += 1
                self.blocked_until[sender] = self.phase + 1 + self.offences[sender]
        self.taken = {}
        super()._end_phase(best)


def lcc_shape(
    mode: int, sub_epochs: bool, topology: Topology, n_arms: int, params: AlgorithmParams
) -> tuple[int, int]:
    """(K', phases per epoch) of an LCC-family variant on ``topology``, paper defaults unless set.

    LCC-UCB and LCC-UCB-GRAPH use K' = ceil(K/N) + K_G (Thm 1, Cor. 1, Thm 3). Relaying hears all
    N-1 others: K' = ceil(K/N) + N - 1 by default, or ceil(K/N) + K_G with
    ``relay_k_prime="degree"`` (the paper does not say). With ``sub_epochs`` (LCC-UCB-GRAPH),
    D = max(1, diameter) sub-epochs.
    """
    n = topology.n_agents
    relay_hears_all = mode == RELAY and params.relay_k_prime == "agents"
    degree = n - 1 if relay_hears_all else topology.max_degree
    kp = params.k_prime or k_prime(n_arms, n, degree)
    sub = 1
    if sub_epochs:
        sub = params.sub_epochs or max(1, topology.diameter)
    return kp, sub


def make_lcc_agents(
    mode: int,
    sub_epochs: bool,
    topology: Topology,
    n_arms: int,
    horizon: int,
    params: AlgorithmParams,
) -> list[Agent]:
    """The agents of an LCC-family variant (they differ in K', D, relaying and blocking);
    ``params`` holds the values in force (alpha resolved)."""
    n = topology.n_agents
    kp, sub = lcc_shape(mode, sub_epochs, topology, n_arms, params)
    agents: list[Agent] = []
    for i in range(n):
        common = dict(
            agent_id=i,
            n_arms=n_arms,
            horizon=horizon,
            neighbours=topology.neighbours[i],
            initial_arms=initial_block(i, n_arms, n),
            k_prime=kp,
            sub_epochs=sub,
            alpha=params.alpha,
        )
        if mode == RELAY:
            relay = max(1, topology.diameter)
            agents.append(RelayAgent(**common, relay_rounds=relay, n_agents=n))
        elif mode == ROBUST:
            agents.append(LccUcbRobustAgent(**common))
        else:
            agents.append(LccUcbAgent(**common))
    return agents
