"""DDUCB (Martínez-Rubio, Kanade, Rebeschini, NeurIPS 2019): UCB on delayed, accelerated gossip.

Every agent first pulls each arm once (steps 1..K, silent). Then time runs in *stages* of C
steps. At a stage's start the agent picks one arm by a UCB index on its estimates and plays it
for the whole stage; meanwhile it gossips β, the (counts, sums) it gathered during the previous
stage, for C rounds of Chebyshev-accelerated mixing, one round (2K float64 values to every
neighbour) after every step. At the stage's end the mixed β (≈ the network's average batch) is
added for good to δ, the estimates become δ, and the pulls of the stage just ended are the next
β: the paper's delayed-mixing rule, in which every batch is mixed exactly once, C rounds long.

Mixing uses P = I − L/(d_max + 1) (L the graph Laplacian: weight 1/(d_max + 1) on every
neighbour and the rest on oneself), λ = the second largest eigenvalue of P in absolute value,
C = ⌈ln(2N/ε) / sqrt(2 ln(1/λ))⌉, and after C rounds the iterate is T_C(P/λ)·β / T_C(1/λ) (T_C
the Chebyshev polynomial), computed in the normalised three-term form whose values stay of the
order of β. Index of arm k: α_k/a_k + sqrt(alpha·ln s / (N·a_k)), with alpha = 2ησ² (4 by
default: η = 2, σ = 1) and s = (steps done − C)·N, set at each stage's start (K at first).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mamab.algorithms.base import Agent, Message
from mamab.algorithms.params import DDUCB_EPSILON as DEFAULT_EPSILON
from mamab.algorithms.params import AlgorithmParams
from mamab.errors import ConfigError, InvalidMessage
from mamab.schedule import REWARD_BITS
from mamab.topology import Topology

DEFAULT_ALPHA = 4.0  # 2·η·σ² with the paper's η = 2 and σ = 1


@dataclass(frozen=True)
class MixingPlan:
    """What every agent of a run knows about the gossip: the same for all of them.

    ``weight`` is P's weight on each neighbour; ``gains[r]`` (r = 1..C−1) the Chebyshev
    coefficient of round r: z_{r+1} = gains[r]·P z_r − (gains[r] − 1)·z_{r−1}; z_1 = P z_0.
    """

    weight: float
    second_eigenvalue: float
    rounds: int
    gains: tuple[float, ...]  # gains[0] unused (round 0 is a plain step)
    lags: tuple[float, ...]  # lags[r] = gains[r] − 1

    def self_weight(self, degree: int) -> float:
        """P's diagonal entry of an agent with ``degree`` neighbours."""
        return 1.0 - degree * self.weight


def mixing_matrix(topology: Topology) -> np.ndarray:
    """P = I − L/(d_max + 1): symmetric, doubly stochastic, positive diagonal."""
    n = topology.n_agents
    weight = 1.0 / (topology.max_degree + 1)
    p = np.zeros((n, n))
    for i, neighbours in enumerate(topology.neighbours):
        p[i, list(neighbours)] = weight
        p[i, i] = 1.0 - len(neighbours) * weight
    return p


def second_eigenvalue(topology: Topology) -> float:
    """|λ2| of P: its largest eigenvalue in absolute value after the 1 of the constant vector."""
    if topology.n_agents == 1:
        return 0.0
    values = np.sort(np.abs(np.linalg.eigvalsh(mixing_matrix(topology))))
    # Rounded to 12 decimals: nodes of a live fleet compute it apart, perhaps with another LAPACK
    # thread count; the last bits must not change C or the gains between them.
    return round(float(min(max(values[-2], 0.0), 1.0)), 12)


def mixing_rounds(n_agents: int, lam: float, epsilon: float) -> int:
    """C = ⌈ln(2N/ε) / sqrt(2 ln(1/λ))⌉, at least 1 (one plain round is exact when λ = 0)."""
    if lam <= 0.0:
        return 1
    return max(1, math.ceil(math.log(2 * n_agents / epsilon) / math.sqrt(2 * math.log(1 / lam))))


def chebyshev_gains(lam: float, rounds: int) -> tuple[float, ...]:
    """gains[r] = 2/(2 − λ q_r) with q_1 = λ, q_{r+1} = λ/(2 − λ q_r): ratios of T_r(1/λ)."""
    gains, q = [1.0], lam
    for _ in range(1, rounds):
        gains.append(2.0 / (2.0 - lam * q))
        q = lam / (2.0 - lam * q)
    return tuple(gains)


def mixing_plan(topology: Topology, epsilon: float = DEFAULT_EPSILON) -> MixingPlan:
    """The run's gossip constants; a disconnected graph never mixes, so it is refused."""
    if not topology.is_connected:
        raise ConfigError(f"dducb needs a connected graph; the {topology.name} graph is not")
    lam = second_eigenvalue(topology)
    rounds = mixing_rounds(topology.n_agents, lam, epsilon)
    gains = chebyshev_gains(lam, rounds)
    return MixingPlan(
        1.0 / (topology.max_degree + 1), lam, rounds, gains, tuple(g - 1.0 for g in gains)
    )


Pair = tuple[np.ndarray, np.ndarray]  # (counts, sums), float64 arrays of shape (K,)


class DducbAgent(Agent):
    """One DDUCB agent; ``plan`` comes from :func:`mixing_plan` on the run's graph."""

    def __init__(
        self,
        agent_id: int,
        n_arms: int,
        horizon: int,
        neighbours: tuple[int, ...],
        n_agents: int,
        plan: MixingPlan,
        alpha: float = DEFAULT_ALPHA,
        local: bool = True,
    ):
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.n_agents = n_agents
        self.plan = plan
        self.alpha = alpha
        self.local = local  # the authors' code: index every step, own pulls in at weight 1/N
        self.self_weight = plan.self_weight(len(self.neighbours))
        zeros = np.zeros(n_arms)
        self._estimates: Pair = (zeros, zeros)  # (a, α): what the index uses
        self._mixed: Pair = (zeros, zeros)  # (d, δ): every batch mixed so far
        self._new: Pair = (zeros.copy(), zeros.copy())  # (c, γ): pulls of the running stage
        self._z: Pair = (zeros, zeros)  # the batch being mixed, at the current round
        self._z_before: Pair = (zeros, zeros)  # ... and at the round before
        self._s = float(n_arms)
        self._arm = 0
        self._pending = False  # a round was sent after the last step and is not yet mixed
        self._inbox: dict[int, Pair] = {}  # sender: its iterate of the pending round

    def rounds_after(self, step: int) -> int:
        """One gossip round after every step but the K initial pulls."""
        return 1 if step > self.n_arms else 0

    def select_arm(self) -> int:
        step = self.clock + 1
        if step <= self.n_arms:
            return self._chose(step - 1)  # the initial pull of every arm, in order
        if self._pending:
            self._mix()
        r = (step - self.n_arms - 1) % self.plan.rounds
        if r == 0:
            self._start_stage(step)
        if self.local:
            self._arm = self._best_arm(self._s + r * self.n_agents)
        return self._chose(self._arm)

    def observe(self, arm: int, reward: float) -> None:
        arm, reward = self._accept_observation(arm, reward)
        self._new[0][arm] += 1.0
        self._new[1][arm] += reward
        self.clock += 1
        if self.clock <= self.n_arms:
            return
        if self.local:  # own pull counts at once, as 1/N of a network pull
            self._estimates[0][arm] += 1.0 / self.n_agents
            self._estimates[1][arm] += reward / self.n_agents
        self._pending, self._inbox = True, {}
        bits = 2 * self.n_arms * REWARD_BITS
        self._outbox = [self._message(v, self._z, bits) for v in self.neighbours]

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        counts, sums = self._checked_pair(message.payload)
        key = self._check_first_copy(message)
        if message.stamp <= self.n_arms:
            raise InvalidMessage(
                f"agent {self.agent_id}: DDUCB is silent during its first {self.n_arms} steps "
                f"(message stamped {message.stamp})"
            )
        if self._is_late(message):  # its round is over: dropped
            self._heard.add(key)
            return
        if not self._pending:
            raise InvalidMessage(
                f"agent {self.agent_id}: iterate from {message.sender} after its round closed"
            )
        self._heard.add(key)
        self._inbox[message.sender] = (counts, sums)

    def _checked_pair(self, payload: object) -> Pair:
        if not (isinstance(payload, tuple) and len(payload) == 2):
            raise InvalidMessage(f"agent {self.agent_id}: DDUCB payload must be (counts, sums)")
        for values in payload:
            if not (
                isinstance(values, np.ndarray)
                and values.dtype == np.float64
                and values.shape == (self.n_arms,)
                and np.all(np.isfinite(values))
            ):
                raise InvalidMessage(
                    f"agent {self.agent_id}: DDUCB iterates must be {self.n_arms} finite float64s"
                )
        return payload[0], payload[1]

    def _mix(self) -> None:
        """One Chebyshev round: own share, then each neighbour by increasing id (a missing
        neighbour's share is one's own iterate)."""
        r = (self.clock - self.n_arms - 1) % self.plan.rounds
        mixed = []
        for part in range(2):
            own = self._z[part]
            value = self.self_weight * own
            for j in sorted(self.neighbours):
                heard = self._inbox.get(j)
                value = value + self.plan.weight * (own if heard is None else heard[part])
            if r > 0:
                value = self.plan.gains[r] * value - self.plan.lags[r] * self._z_before[part]
            mixed.append(value)
        self._z_before, self._z = self._z, (mixed[0], mixed[1])
        self._pending, self._inbox = False, {}

    def _start_stage(self, step: int) -> None:
        """Fold the batch just mixed into δ (none before the first stage), start mixing the
        last stage's pulls, and pick this stage's arm."""
        if step == self.n_arms + 1:
            n = self.n_agents
            self._estimates = (self._new[0] / n, self._new[1] / n)
        else:
            self._mixed = (self._mixed[0] + self._z[0], self._mixed[1] + self._z[1])
            self._estimates = (self._mixed[0].copy(), self._mixed[1].copy())
            self._s = float((step - 1 - self.plan.rounds) * self.n_agents)
        self._z = self._new
        self._new = (np.zeros(self.n_arms), np.zeros(self.n_arms))
        if not self.local:
            self._arm = self._best_arm(self._s)

    def _best_arm(self, s: float) -> int:
        """argmax of the index, lowest arm on ties; an arm whose count is not positive first."""
        counts, sums = self._estimates
        log_s = math.log(s)
        best, best_index = 0, -math.inf
        for arm in range(self.n_arms):
            n = float(counts[arm])
            if not n > 0.0:
                return arm
            index = float(sums[arm]) / n + math.sqrt(self.alpha * log_s / (self.n_agents * n))
            if index > best_index:
                best, best_index = arm, index
        return best


def make_dducb(
    topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams, rng: np.random.Generator
) -> list[Agent]:
    n = topology.n_agents
    plan = mixing_plan(topology, params.dducb_epsilon)
    alpha = params.alpha
    return [
        DducbAgent(
            i,
            n_arms,
            horizon,
            topology.neighbours[i],
            n,
            plan,
            alpha,
            params.dducb_index == "every-step",
        )
        for i in range(n)
    ]
