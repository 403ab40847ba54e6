"""The paper's two reference points: no communication and full communication every step."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.base import Agent, Message
from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.ucb_index import UCB
from mamab.errors import InvalidMessage
from mamab.schedule import REWARD_BITS, index_bits
from mamab.topology import Topology


class NoCommunicationAgent(Agent):
    """UCB on all K arms for the whole horizon, never restarted, never talking."""

    def __init__(
        self,
        agent_id: int,
        n_arms: int,
        horizon: int,
        neighbours: tuple[int, ...] = (),
        alpha: float = 2.0,
    ):
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.ucb = UCB(range(n_arms), alpha)

    def select_arm(self) -> int:
        return self._chose(self.ucb.select())

    def rounds_after(self, step: int) -> int:
        return 0

    def reset(self, done_steps: int) -> None:
        self.ucb = UCB(range(self.n_arms), self.ucb.alpha)
        self._rejoin(done_steps)

    def observe(self, arm: int, reward: float) -> None:
        self._learn_own(*self._accept_observation(arm, reward))

    def _learn_own(self, arm: int, reward: float) -> None:
        """This step's own sample, checked."""
        self.ucb.update(arm, reward)
        self.clock += 1


class FullCommunicationAgent(NoCommunicationAgent):
    """Sends (arm, reward) to every neighbour each step and learns from all samples it sees.

    The UCB log term counts every sample seen (own and neighbours'). Own sample first, then the
    neighbours' in the order they arrive (the reference host delivers by increasing sender id).
    A sample delayed in transit is learned from when it arrives: a sample is a sample. A second
    sample with one (sender, stamp) in one exchange is refused.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._bits = index_bits(self.n_arms) + REWARD_BITS

    def rounds_after(self, step: int) -> int:
        return 1

    def _learn_own(self, arm: int, reward: float) -> None:
        super()._learn_own(arm, reward)
        self._outbox = [self._message(v, (arm, reward), self._bits) for v in self.neighbours]

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        payload = message.payload
        if not (isinstance(payload, tuple) and len(payload) == 2):
            raise InvalidMessage(
                f"agent {self.agent_id}: full-communication payload must be (arm, reward)"
            )
        arm = self._check_arm(payload[0])
        reward = self._check_reward(payload[1])
        self._heard.add(self._check_first_copy(message))
        self.ucb.update(arm, reward)


def make_no_communication(
    topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams, rng: np.random.Generator
) -> list[Agent]:
    alpha = params.alpha
    return [
        NoCommunicationAgent(i, n_arms, horizon, topology.neighbours[i], alpha)
        for i in range(topology.n_agents)
    ]


def make_full_communication(
    topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams, rng: np.random.Generator
) -> list[Agent]:
    alpha = params.alpha
    return [
        FullCommunicationAgent(i, n_arms, horizon, topology.neighbours[i], alpha)
        for i in range(topology.n_agents)
    ]
