"""The fast engine: the numba kernels driven over the same noise table as the reference."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from mamab.agents import alpha_of, lcc_shape
from mamab.agents.registry import has_fast_kernel
from mamab.attacks import attack_plan, draw_malicious
from mamab.config import Config
from mamab.engine import kernels
from mamab.errors import ConfigError
from mamab.faults import crash_steps, fault_seed, recovery_steps
from mamab.instance import Instance
from mamab.problem import noise_chunks
from mamab.result import COUNTERS, RunResult
from mamab.schedule import (
    REWARD_BITS,
    agent_bits,
    base_length,
    block_size,
    index_bits,
    initial_block,
    phase_lengths,
)

CHUNK = 4096
MODES = {
    "no-communication": kernels.NO_COMMUNICATION,
    "full-communication": kernels.FULL_COMMUNICATION,
    "lcc-ucb": kernels.LCC,
    "lcc-ucb-graph": kernels.LCC,
    "lcc-ucb-relay": kernels.RELAY,
    "lcc-ucb-robust": kernels.ROBUST,
}


def run_fast(
    config: Config,
    instances: list[Instance],
    grid: np.ndarray,
    trace: bool = False,
    jobs: int | None = None,
) -> list[RunResult]:
    """Simulate each instance; runs go to ``jobs`` threads (the kernels release the GIL)."""
    workers = max(1, min(jobs or os.cpu_count() or 1, len(instances)))
    if workers == 1:
        return [run_one(config, inst, grid, trace) for inst in instances]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda inst: run_one(config, inst, grid, trace), instances))


def run_one(config: Config, instance: Instance, grid: np.ndarray, trace: bool = False) -> RunResult:
    """One run of ``config`` on ``instance`` with the numba kernels."""
    if not has_fast_kernel(config.algorithm):  # simulate() falls back before getting here
        raise ConfigError(f"{config.algorithm} has no fast kernel; use the reference engine")
    return RUNNERS[config.algorithm](config, instance, grid, trace)


def run_ucb_family(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """One run of an LCC-family algorithm or a UCB baseline (one kernel, several modes)."""
    problem, graph = instance.problem, instance.topology
    n, k, horizon = config.agents, config.arms, config.horizon
    indptr, indices = graph.csr()
    mode = MODES[config.algorithm]
    rounds = max(1, graph.diameter) if mode == kernels.RELAY else 1
    rec = Recording.start(config, instance, grid, trace, late_capacity=rounds * indices.size)
    phases = np.zeros(1, dtype=np.int64)
    block = np.zeros((n, 1), dtype=np.int64)
    relay_rounds, message_bits = 0, index_bits(k)
    if mode in (kernels.NO_COMMUNICATION, kernels.FULL_COMMUNICATION):
        slots = k
        slot_arm = np.tile(np.arange(k, dtype=np.int64), (n, 1))
        size = np.full(n, k, dtype=np.int64)
        message_bits += REWARD_BITS
    else:
        kp, sub = lcc_shape(config.algorithm, graph, k, config.params)
        phases = phase_lengths(horizon, base_length(kp), sub)
        block = np.array([initial_block(i, k, n) for i in range(n)], dtype=np.int64)
        slots = block_size(k, n) + (n - 1 if mode == kernels.RELAY else graph.max_degree)
        slot_arm = np.zeros((n, slots), dtype=np.int64)
        slot_arm[:, : block.shape[1]] = block
        size = np.full(n, block.shape[1], dtype=np.int64)
        if mode == kernels.RELAY:
            relay_rounds, message_bits = rounds, agent_bits(n) + index_bits(k)
    flood = (n, n) if mode == kernels.RELAY else (1, 1)
    known, fresh, nxt = (np.zeros(flood, dtype=np.bool_) for _ in range(3))
    late_pair = np.full(flood, -1, dtype=np.int64)  # relay pairs held for the next exchange
    heard = np.zeros(flood, dtype=np.int64)  # relay: the arm each agent first heard per origin
    robust = mode == kernels.ROBUST  # per CSR edge: offences, blocks, taken; the reverse edge
    trust = robust_state(indices.size if robust else 1)
    reverse = reverse_edges(indptr, indices) if robust else np.zeros(1, dtype=np.int64)
    count = np.zeros((n, slots), dtype=np.int64)
    total, mean, inv_sqrt = (np.zeros((n, slots)) for _ in range(3))
    cand = np.zeros((n, slots), dtype=np.int64)
    in_cand = np.zeros((n, slots), dtype=np.bool_)
    untried, samples, n_cand = (np.zeros(n, dtype=np.int64) for _ in range(3))
    block_end = np.full(n, -1, dtype=np.int64)
    bound, block_width = np.zeros(n), np.zeros(n)
    for noise in noise_chunks(
        instance.noise_rng(config.seed), config.reward, n, horizon, CHUNK, instance.progress
    ):
        kernels.run_chunk(
            mode, noise, rec.pos, grid, rec.recorded, rec.recorded_bits, rec.regret, rec.counters,
            count, total, mean, inv_sqrt, cand, in_cand,
            untried, samples, n_cand, block_end, bound, block_width,
            slot_arm, size, problem.means, problem.gaps, config.reward == "bernoulli",
            float(config.sigma), alpha_of(config.algorithm, config.params),
            phases, block, indptr, indices, relay_rounds, message_bits,
            known, fresh, nxt, trace, rec.trace_out, rec.loss, rec.delay, rec.fault_key, rec.crash,
            rec.back, rec.late, rec.late_reward, rec.late_n, late_pair, heard, rec.liar,
            rec.attack, rec.attack_arm, rec.attack_pool, rec.attack_key, trust, reverse,
        )  # fmt: skip
    return rec.result(instance, trace)


def robust_state(edges: int) -> np.ndarray:
    """LCC-UCB-ROBUST's offences, blocked-until phase and recommendation taken for the running
    phase (-1: none) per directed CSR edge (3, edges), as fresh agents have them: O(E), not O(N²)."""
    trust = np.zeros((3, edges), dtype=np.int64)
    trust[kernels.TAKEN] = -1
    return trust


def reverse_edges(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """For each directed CSR edge e = (u -> v), the index of (v -> u): once per run, vectorised.

    The graph is undirected and each row sorted, so the keys u·N + v of the edges ascend and
    each reversed key is found by binary search.
    """
    n = indptr.size - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    return np.searchsorted(rows * n + indices, indices * n + rows).astype(np.int64, copy=False)


def run_demab(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """One DEMAB run: the same allocation draw and schedule as the reference agents."""
    from mamab.agents.demab import count_bits
    from mamab.demab_schedule import draw_permutation, initial_split, phase_ends, stage_one_length
    from mamab.engine.demab_kernel import demab_chunk

    problem, n, k, horizon = instance.problem, config.agents, config.arms, config.horizon
    rec = Recording.start(config, instance, grid, trace, late_capacity=6 * n)  # 6 rounds
    split = initial_split(draw_permutation(instance.algorithm_rng(config.seed), k), n)
    width = block_size(k, n)
    active = np.zeros((n, width), dtype=np.int64)
    size = np.array([len(arms) for arms in split], dtype=np.int64)
    for i, arms in enumerate(split):
        active[i, : len(arms)] = arms
    count = np.zeros((n, width), dtype=np.int64)
    total = np.zeros((n, width))
    pointer = np.zeros(n, dtype=np.int64)
    share_best = config.params.demab_best_arm == "shared"
    state = np.full(2 + n, -1, dtype=np.int64)
    state[1] = 0
    if not share_best:
        state[2:] = active[:, 0]  # an agent's own best arm before it reports: its lowest arm
    ends = phase_ends(horizon, n, k)
    initial, initial_size = active.copy(), size.copy()  # what a recovering agent gets back
    for noise in noise_chunks(
        instance.noise_rng(config.seed), config.reward, n, horizon, CHUNK, instance.progress
    ):
        demab_chunk(noise, rec.pos, grid, rec.recorded, rec.recorded_bits, rec.regret, rec.counters, active, size, count,
                    total, pointer, state, ends, stage_one_length(horizon, n, k), horizon, problem.means,
                    problem.gaps, config.reward == "bernoulli", float(config.sigma),
                    alpha_of("demab", config.params), index_bits(k), count_bits(k), trace, rec.trace_out,
                    rec.loss, rec.delay, rec.fault_key, rec.crash, rec.back, initial, initial_size, rec.late,
                    rec.late_reward, rec.late_n, share_best)  # fmt: skip
    return rec.result(instance, trace)


def run_gosine(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """One GosInE or gosine-robust run: the same partner draws and initial sets as the reference
    agents; gosine-robust's blocks are kept per CSR edge."""
    from mamab.engine.gosine_kernel import gosine_chunk
    from mamab.gosine_schedule import block_ends, draw_partners, initial_sets, phase_ends

    problem, n, k, horizon = instance.problem, config.agents, config.arms, config.horizon
    rec = Recording.start(config, instance, grid, trace, late_capacity=2 * n)
    ends = phase_ends(horizon, config.params.gossip_exponent)
    draws = draw_partners(instance.algorithm_rng(config.seed), len(ends), n)
    sets = [initial_sets(i, k, n) for i in range(n)]
    sticky = np.array([s for s, _ in sets], dtype=np.int64)
    non_sticky = np.zeros((n, 2), dtype=np.int64)
    n_non_sticky = np.array([len(ns) for _, ns in sets], dtype=np.int64)
    for i, (_, ns) in enumerate(sets):
        non_sticky[i, : len(ns)] = ns
    active = np.zeros((n, sticky.shape[1] + 2), dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    for i, (s, ns) in enumerate(sets):
        arms = sorted((*s, *ns))
        active[i, : len(arms)] = arms
        size[i] = len(arms)
    count, played = np.zeros((n, k), dtype=np.int64), np.zeros((n, k), dtype=np.int64)
    total, mean, inv_sqrt = (np.zeros((n, k)) for _ in range(3))
    state = np.zeros(1, dtype=np.int64)
    indptr, indices = instance.topology.csr()
    initial_non_sticky = non_sticky.copy()  # what a recovering agent gets back
    robust = config.algorithm == "gosine-robust"
    blocks = block_ends(len(ends), config.params.block_exponent)
    blocked_until = np.zeros(indices.size, dtype=np.int64)  # per CSR edge: phase its block ends
    rec_edge = np.full(n, -1, dtype=np.int64)  # the last recommendation: its edge and arm
    rec_arm = np.zeros(n, dtype=np.int64)
    for noise in noise_chunks(
        instance.noise_rng(config.seed), config.reward, n, horizon, CHUNK, instance.progress
    ):
        gosine_chunk(noise, rec.pos, grid, rec.recorded, rec.recorded_bits, rec.regret, rec.counters, count, total, mean,
                     inv_sqrt, played, active, size, sticky, non_sticky, n_non_sticky, state, ends, draws,
                     indptr, indices, problem.means, problem.gaps, config.reward == "bernoulli",
                     float(config.sigma), alpha_of(config.algorithm, config.params), index_bits(k), trace,
                     rec.trace_out, rec.loss, rec.delay, rec.fault_key, rec.crash, rec.back, initial_non_sticky,
                     rec.late, rec.late_reward, rec.late_n, rec.liar, rec.attack, rec.attack_arm, rec.attack_pool,
                     rec.attack_key, robust, blocks, blocked_until, rec_edge, rec_arm)  # fmt: skip
    return rec.result(instance, trace)


def run_coop(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """One coop-UCB2 run with the reference's consensus weights."""
    from mamab.agents.coop import consensus_weights
    from mamab.engine.coop_kernel import coop_chunk

    problem, n, k, horizon = instance.problem, config.agents, config.arms, config.horizon
    rec = Recording.start(config, instance, grid, trace)
    graph = instance.topology
    weights = [
        consensus_weights(int(d), graph.max_degree, config.params.consensus_kappa)
        for d in graph.degrees
    ]
    weight = np.array([w for w, _ in weights])
    self_weight = np.array([s for _, s in weights])
    counts, sums, own_counts, own_sums, prev_counts, prev_sums = (
        np.zeros((n, k)) for _ in range(6)
    )
    indptr, indices = graph.csr()
    late_edge = np.zeros(indices.size, dtype=np.bool_)  # the edge's last message is held
    for noise in noise_chunks(
        instance.noise_rng(config.seed), config.reward, n, horizon, CHUNK, instance.progress
    ):
        coop_chunk(noise, rec.pos, grid, rec.recorded, rec.recorded_bits, rec.regret, rec.counters, counts, sums, own_counts,
                   own_sums, weight, self_weight, indptr, indices, n, problem.means, problem.gaps,
                   config.reward == "bernoulli", float(config.sigma), alpha_of("coop-ucb2", config.params),
                   2 * k * REWARD_BITS, trace, rec.trace_out, rec.loss, rec.delay, rec.fault_key, rec.crash,
                   rec.back, late_edge, prev_counts, prev_sums)  # fmt: skip
    return rec.result(instance, trace)


def run_dducb(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """One DDUCB run with the reference's mixing plan (weights, C, Chebyshev gains)."""
    from mamab.agents.dducb import mixing_plan
    from mamab.engine.dducb_kernel import dducb_chunk

    problem, n, k, horizon = instance.problem, config.agents, config.arms, config.horizon
    rec = Recording.start(config, instance, grid, trace)
    graph = instance.topology
    plan = mixing_plan(graph, config.params.dducb_epsilon)
    self_weight = np.array([plan.self_weight(int(d)) for d in graph.degrees])
    arrays = [np.zeros((n, k)) for _ in range(12)]  # new, est, mixed, z, z before, next: (c, s)
    arm = np.zeros(n, dtype=np.int64)
    state = np.array([float(k)])  # s
    indptr, indices = graph.csr()
    for noise in noise_chunks(instance.noise_rng(config.seed), config.reward, n, horizon, CHUNK,
                              instance.progress):  # fmt: skip
        dducb_chunk(noise, rec.pos, grid, rec.recorded, rec.recorded_bits, rec.regret, rec.counters, *arrays, arm,
                    state, plan.rounds, np.array(plan.gains), np.array(plan.lags), plan.weight, self_weight,
                    indptr, indices, problem.means, problem.gaps, config.reward == "bernoulli",
                    float(config.sigma), alpha_of("dducb", config.params), config.params.dducb_index == "every-step",
                    2 * k * REWARD_BITS, trace,
                    rec.trace_out)  # fmt: skip
    return rec.result(instance, trace)


def run_ucb_network(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """One UCB-Network (FYL) run with the reference's roles (greedy dominating set)."""
    from mamab.agents.ucb_network import leader_of
    from mamab.engine.ucb_network_kernel import ucb_network_chunk

    problem, n, k = instance.problem, config.agents, config.arms
    rec = Recording.start(config, instance, grid, trace)
    neighbours = instance.topology.neighbours
    leader = np.array(leader_of(neighbours), dtype=np.int64)
    is_leader = leader == np.arange(n)
    rank = np.where(is_leader, np.cumsum(is_leader) - 1, -1).astype(np.int64)
    sample_to = [[v for v in neighbours[u] if is_leader[v]] for u in range(n)]
    sample_ptr = np.zeros(n + 1, dtype=np.int64)
    sample_ptr[1:] = np.cumsum([len(to) for to in sample_to])
    rows = int(is_leader.sum())
    count = np.zeros((rows, k), dtype=np.int64)
    total, mean, inv_sqrt = (np.zeros((rows, k)) for _ in range(3))
    samples, untried = np.zeros(rows, dtype=np.int64), np.zeros(rows, dtype=np.int64)
    next_arm = np.zeros(n, dtype=np.int64)
    flat_to = np.array([v for to in sample_to for v in to], dtype=np.int64)
    per_step = fyl_counts_per_step(leader, sample_to, k)
    for noise in noise_chunks(instance.noise_rng(config.seed), config.reward, n, config.horizon,
                              CHUNK, instance.progress):  # fmt: skip
        ucb_network_chunk(noise, rec.pos, grid, rec.recorded, rec.recorded_bits, rec.regret,
                          rec.counters, count, total, mean, inv_sqrt, samples, untried, next_arm,
                          rank, leader, sample_ptr, flat_to, per_step, problem.means, problem.gaps,
                          config.reward == "bernoulli", float(config.sigma),
                          alpha_of("ucb-network", config.params), trace, rec.trace_out)  # fmt: skip
    return rec.result(instance, trace)


def fyl_counts_per_step(leader: np.ndarray, sample_to: list[list[int]], n_arms: int) -> np.ndarray:
    """What each FYL agent sends, receives and the rounds it talks in, every step (no faults).

    Rows: messages sent, bits sent, messages received, bits received, rounds (``COUNTERS``'s
    first five). A sample costs ceil(log2 K) + 64 bits, a leader's arm ceil(log2 K).
    """
    n = leader.size
    sample_bits, arm_bits = index_bits(n_arms) + REWARD_BITS, index_bits(n_arms)
    followers = np.bincount(leader[leader != np.arange(n)], minlength=n)
    samples_out = np.array([len(to) for to in sample_to], dtype=np.int64)
    samples_in = np.bincount([v for to in sample_to for v in to], minlength=n).astype(np.int64)
    arms_in = (leader != np.arange(n)).astype(np.int64)
    sent = samples_out + followers
    return np.array([
        sent,
        samples_out * sample_bits + followers * arm_bits,
        samples_in + arms_in,
        samples_in * sample_bits + arms_in * arm_bits,
        (sent > 0).astype(np.int64),
    ], dtype=np.int64)  # fmt: skip


#: The kernel driver of each algorithm with a fast kernel (``registry.FAST_KERNELS`` names them).
RUNNERS = {
    **dict.fromkeys(MODES, run_ucb_family),
    "demab": run_demab,
    "gosine": run_gosine,
    "coop-ucb2": run_coop,
    "dducb": run_dducb,
    "ucb-network": run_ucb_network,
    "gosine-robust": run_gosine,
}


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
    def start(cls, config: Config, instance: Instance, grid: np.ndarray, trace: bool,
              late_capacity: int = 1) -> Recording:  # fmt: skip
        """``late_capacity``: the most messages one exchange can send (all may be delayed)."""
        n, horizon = config.agents, config.horizon
        crash = crash_steps(
            config.seed, instance.run, n, horizon, config.crash_rate, config.crash_at
        )
        liar, key = draw_malicious(config.seed, instance.run, n, config.malicious)
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
