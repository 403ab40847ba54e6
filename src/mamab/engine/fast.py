"""The fast engine: the numba kernels driven over the same noise table as the reference."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from mamab.agents import lcc_shape
from mamab.config import Config
from mamab.engine import kernels
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
    if config.algorithm == "demab":
        return run_demab(config, instance, grid, trace)
    problem, graph = instance.problem, instance.topology
    n, k, horizon = config.agents, config.arms, config.horizon
    indptr, indices = graph.csr()
    mode = MODES[config.algorithm]
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
            relay_rounds, message_bits = max(1, graph.diameter), agent_bits(n) + index_bits(k)
    flood = (n, n) if mode == kernels.RELAY else (1, 1)
    known, fresh, nxt = (np.zeros(flood, dtype=np.bool_) for _ in range(3))
    count = np.zeros((n, slots), dtype=np.int64)
    total, mean, inv_sqrt = (np.zeros((n, slots)) for _ in range(3))
    cand = np.zeros((n, slots), dtype=np.int64)
    in_cand = np.zeros((n, slots), dtype=np.bool_)
    untried, samples, n_cand = (np.zeros(n, dtype=np.int64) for _ in range(3))
    block_end = np.full(n, -1, dtype=np.int64)
    bound, block_width = np.zeros(n), np.zeros(n)
    regret = np.zeros(n)
    recorded = np.zeros((n, grid.size))
    recorded_bits = np.zeros((n, grid.size), dtype=np.int64)
    counters = np.zeros((len(COUNTERS), n), dtype=np.int64)
    pos = np.zeros(4, dtype=np.int64)
    trace_out = np.zeros((horizon, n) if trace else (1, 1), dtype=np.int64)
    for noise in noise_chunks(instance.noise_rng(config.seed), config.reward, n, horizon, CHUNK):
        kernels.run_chunk(
            mode, noise, pos, grid, recorded, recorded_bits, regret, counters,
            count, total, mean, inv_sqrt, cand, in_cand,
            untried, samples, n_cand, block_end, bound, block_width,
            slot_arm, size, problem.means, problem.gaps, config.reward == "bernoulli",
            float(config.sigma), float(config.params.alpha),
            phases, block, indptr, indices, relay_rounds, message_bits,
            known, fresh, nxt, trace, trace_out,
        )  # fmt: skip
    return RunResult(
        run=instance.run,
        regret=recorded,
        bits=recorded_bits,
        counts={name: counters[i] for i, name in enumerate(COUNTERS)},
        means=problem.means,
        diameter=graph.diameter if graph.is_connected else -1,
        max_degree=graph.max_degree,
        arms=trace_out if trace else None,
    )


def run_demab(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """One DEMAB run: the same allocation draw and schedule as the reference agents."""
    from mamab.agents.demab import count_bits
    from mamab.demab_schedule import draw_permutation, initial_split, phase_ends, stage_one_length
    from mamab.engine.demab_kernel import demab_chunk

    problem, n, k, horizon = instance.problem, config.agents, config.arms, config.horizon
    split = initial_split(draw_permutation(instance.algorithm_rng(config.seed), k), n)
    width = block_size(k, n)
    active = np.zeros((n, width), dtype=np.int64)
    size = np.array([len(arms) for arms in split], dtype=np.int64)
    for i, arms in enumerate(split):
        active[i, : len(arms)] = arms
    count = np.zeros((n, width), dtype=np.int64)
    total = np.zeros((n, width))
    pointer = np.zeros(n, dtype=np.int64)
    state = np.array([-1, 0], dtype=np.int64)
    regret = np.zeros(n)
    recorded = np.zeros((n, grid.size))
    recorded_bits = np.zeros((n, grid.size), dtype=np.int64)
    counters = np.zeros((len(COUNTERS), n), dtype=np.int64)
    pos = np.zeros(4, dtype=np.int64)
    trace_out = np.zeros((horizon, n) if trace else (1, 1), dtype=np.int64)
    ends = phase_ends(horizon, n, k)
    for noise in noise_chunks(instance.noise_rng(config.seed), config.reward, n, horizon, CHUNK):
        demab_chunk(noise, pos, grid, recorded, recorded_bits, regret, counters, active, size, count,
                    total, pointer, state, ends, stage_one_length(horizon, n, k), horizon, problem.means,
                    problem.gaps, config.reward == "bernoulli", float(config.sigma),
                    float(config.params.alpha), index_bits(k), count_bits(k), trace, trace_out)  # fmt: skip
    topology = instance.topology
    return RunResult(
        run=instance.run,
        regret=recorded,
        bits=recorded_bits,
        counts={name: counters[i] for i, name in enumerate(COUNTERS)},
        means=problem.means,
        diameter=topology.diameter if topology.is_connected else -1,
        max_degree=topology.max_degree,
        arms=trace_out if trace else None,
    )
