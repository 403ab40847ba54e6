"""What every fast driver shares: one run's inputs (:class:`FastRun`) and what its kernels fill
(:class:`Recording`: regret and bits on the grid, counters, faults, liars).

This is the fast engine's public kernel API (version :data:`mamab.algorithms.spec.KERNEL_API`,
docs/extending.md): a spec's driver receives a :class:`FastRun`, starts a :class:`Recording`,
feeds the noise blocks of :meth:`FastRun.noise` to its chunk kernel with the recording's arrays,
and returns :meth:`Recording.result`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from mamab.algorithms.params import AlgorithmParams
from mamab.attacks import attack_plan, draw_liars
from mamab.config import Config
from mamab.faults import crash_steps, fault_seed, recovery_steps
from mamab.instance import Instance
from mamab.problem import CHUNK, noise_chunks
from mamab.result import COUNTERS, RunResult


class Rewards(NamedTuple):
    """The run's arms as a kernel reads them (:func:`mamab.engine.kernel_api.reward_of`)."""

    means: np.ndarray  # (arms,)
    gaps: np.ndarray  # (arms,) mu* - mu[a]: the regret of a pull
    bernoulli: bool  # Bernoulli rewards (else Gaussian, mean + sigma * draw)
    sigma: float


class Faults(NamedTuple):
    """The run's faults as a kernel reads them (``mamab.faults``; :func:`~mamab.engine.kernel_api.fate_to`)."""

    loss: float  # probability a message is lost
    delay: float  # probability a message is held to the next exchange
    key: int  # the run's fault hash key
    crash: np.ndarray  # (agents,) the step from which each agent is dead
    back: np.ndarray  # (agents,) the step from which a crashed agent is back, fresh


class Held(NamedTuple):
    """Messages a delay holds for the next exchange, as a kernel keeps them
    (:func:`~mamab.engine.kernel_api.route`, :func:`~mamab.engine.kernel_api.arrive`)."""

    late: np.ndarray  # (capacity, 4) sender, receiver, bits, arm
    late_reward: np.ndarray  # (capacity,) the reward a held sample carries
    late_n: np.ndarray  # [number of held messages]


class Attack(NamedTuple):
    """The run's liars and their attack, as a kernel reads them
    (:func:`~mamab.engine.attack_kernel.forged_by`)."""

    liar: np.ndarray  # (agents,) True for a malicious agent
    attack: int  # mamab.attacks.TRUTHFUL, FIXED or RANDOM: how a liar picks its arm
    attack_arm: int  # the arm of a FIXED attack
    attack_pool: np.ndarray  # the arms a RANDOM attack draws from
    attack_key: int


class Out(NamedTuple):
    """What every chunk kernel updates, one run's :class:`Recording` as a numba-friendly tuple
    (:mod:`mamab.engine.kernel_api`)."""

    pos: np.ndarray  # [step, phase, step in phase, next grid point]
    grid: np.ndarray  # the steps at which regret and bits are recorded
    regret: np.ndarray  # (agents,) running regret
    recorded: np.ndarray  # (agents, grid)
    recorded_bits: np.ndarray  # (agents, grid)
    counters: np.ndarray  # (len(COUNTERS), agents)
    trace: bool  # keep each agent's arm of every step in ``trace_out``
    trace_out: np.ndarray  # (horizon, agents) or a (1, 1) placeholder


@dataclass(frozen=True)
class FastRun:
    """One run as a driver sees it: the configuration, the run's instance, the recording grid,
    whether to trace arms, the parameters in force (defaults resolved), the spec's settings and
    the steps of its noise blocks (:func:`mamab.problem.block_steps`)."""

    config: Config
    instance: Instance
    grid: np.ndarray
    trace: bool
    params: AlgorithmParams
    settings: Mapping[str, Any]
    steps: int = CHUNK

    def record(self, late_capacity: int = 1) -> Recording:
        """A fresh :class:`Recording`; ``late_capacity``: the most messages one exchange can send
        (all may be delayed)."""
        return Recording.start(self.config, self.instance, self.grid, self.trace, late_capacity)

    def rewards(self) -> Rewards:
        """The run's arms (means, gaps, reward model), for the kernel."""
        problem, c = self.instance.problem, self.config
        return Rewards(problem.means, problem.gaps, c.reward == "bernoulli", float(c.sigma))

    def feed(self, kernel: Callable, *args: Any) -> None:
        """Call ``kernel(noise, *args)`` for each noise block of the run (:meth:`noise`).

        From the second block on, the call goes to the kernel's compiled entry point for these
        argument types (:func:`entry_point`): numba's dispatcher types a named tuple field by
        field at every call (about 70 µs for the LCC kernel's, against 16 µs for the entry point
        and 8.5 µs for 55 plain arrays, measured under load), a cost a short block notices.
        Looked up at the second block, after the first call: a run of one block needs none."""
        call = kernel
        for i, noise in enumerate(self.noise(reuse=True)):
            if i == 1:
                call = entry_point(kernel, noise, *args, called=True)
            call(noise, *args)

    def noise(self, reuse: bool = False) -> Iterator[np.ndarray]:
        """The run's noise, block by block ((steps, agents), at most ``self.steps`` steps a
        block, the same numbers whatever the blocks; progress reported per block); ``reuse``: one
        buffer for every block, each valid until the next is drawn."""
        c = self.config
        return noise_chunks(
            self.instance.noise_rng(c.seed),
            c.reward,
            c.agents,
            c.horizon,
            self.steps,
            self.instance.progress,
            reuse,
        )


def entry_point(kernel: Callable, *args: Any, called: bool = False) -> Callable:
    """``kernel``'s compiled entry point for the types of ``args``, when the dispatcher already
    holds one (it compiled or loaded it for a call with these arguments); else ``kernel``.

    ``called``: the dispatcher has been called with ``args``, so it holds their overload; when
    that is its only one, it is taken without typing ``args`` (0.24-0.33 ms a run for the
    kernels' named tuples, a third of a short LCC-UCB run's cost outside its kernel)."""
    overloads = getattr(kernel, "overloads", None)
    if overloads is None:  # not a numba dispatcher (a plain function, a mock)
        return kernel
    compiled = list(overloads.values())  # a snapshot: another thread may compile meanwhile
    if called and len(compiled) == 1:
        return compiled[0].entry_point
    from numba import typeof  # only a driver that runs a kernel gets here: numba is loaded

    found = overloads.get(tuple(typeof(a) for a in args))
    return kernel if found is None else found.entry_point


@dataclass
class Recording:
    """What every kernel fills for one run: regret and bits on the grid, counters, position."""

    regret: np.ndarray  # (agents,) running regret
    recorded: np.ndarray  # (agents, grid)
    recorded_bits: np.ndarray  # (agents, grid)
    counters: np.ndarray  # (len(COUNTERS), agents)
    pos: np.ndarray  # [step, phase, step in phase, next grid point]
    trace_out: np.ndarray  # (horizon, agents) or a (1, 1) placeholder
    crash: np.ndarray  # (agents,) step from which each agent is dead
    back: np.ndarray  # (agents,) step from which a crashed agent is back with fresh state
    fault_key: int
    loss: float
    delay: float
    late: (
        np.ndarray
    )  # (capacity, 4) messages held for the next exchange: sender, receiver, bits, arm
    late_reward: np.ndarray  # (capacity,) the reward a held sample carries
    late_n: np.ndarray  # [number of held messages]
    liar: np.ndarray  # (agents,) True for a malicious agent
    attack: int  # mamab.attacks.TRUTHFUL, FIXED or RANDOM: how a liar picks its arm
    attack_arm: int  # the arm of a FIXED attack
    attack_pool: np.ndarray  # the arms a RANDOM attack draws from
    attack_key: int

    @classmethod
    def start(
        cls,
        config: Config,
        instance: Instance,
        grid: np.ndarray,
        trace: bool,
        late_capacity: int = 1,
    ) -> Recording:
        """``late_capacity``: the most messages one exchange can send (all may be delayed)."""
        n, horizon = config.agents, config.horizon
        crash = crash_steps(
            config.seed, instance.run, n, horizon, config.crash_rate, config.crash_at
        )
        liar, key = draw_liars(config.seed, instance.run, n, config.malicious)
        plan = attack_plan(config.attack, instance.problem.means, key)
        return cls(
            regret=np.zeros(n),
            recorded=np.zeros((n, grid.size)),
            recorded_bits=np.zeros((n, grid.size), dtype=np.int64),
            counters=np.zeros((len(COUNTERS), n), dtype=np.int64),
            pos=np.zeros(4, dtype=np.int64),
            trace_out=np.zeros((horizon, n) if trace else (1, 1), dtype=np.int64),
            crash=crash,
            back=recovery_steps(crash, horizon, config.recover_after),
            fault_key=fault_seed(config.seed, instance.run),
            loss=float(config.loss),
            delay=float(config.delay),
            late=np.zeros((max(1, late_capacity), 4), dtype=np.int64),
            late_reward=np.zeros(max(1, late_capacity)),
            late_n=np.zeros(1, dtype=np.int64),
            liar=liar,
            attack=plan.code,
            attack_arm=plan.fixed,
            attack_pool=plan.pool,
            attack_key=plan.key,
        )

    def out(self, grid: np.ndarray, trace: bool) -> Out:
        """The arrays a chunk kernel updates, as one named tuple (the same arrays, not copies)."""
        return Out(
            self.pos,
            grid,
            self.regret,
            self.recorded,
            self.recorded_bits,
            self.counters,
            trace,
            self.trace_out,
        )

    def faults(self) -> Faults:
        """The run's loss, delay and crashes, for the kernel."""
        return Faults(self.loss, self.delay, self.fault_key, self.crash, self.back)

    def held(self) -> Held:
        """The buffer of delayed messages, for the kernel (the same arrays, not copies)."""
        return Held(self.late, self.late_reward, self.late_n)

    def attacks(self) -> Attack:
        """The run's liars and attack plan, for the kernel."""
        return Attack(self.liar, self.attack, self.attack_arm, self.attack_pool, self.attack_key)

    def result(self, instance: Instance, trace: bool) -> RunResult:
        topology = instance.topology
        return RunResult(
            run=instance.run,
            regret=self.recorded,
            bits=self.recorded_bits,
            counts={name: self.counters[i] for i, name in enumerate(COUNTERS)},
            means=instance.problem.means,
            diameter=topology.diameter if topology.is_connected else -1,
            max_degree=topology.max_degree,
            arms=self.trace_out if trace else None,
            crash=self.crash,
            malicious=self.liar,
        )
