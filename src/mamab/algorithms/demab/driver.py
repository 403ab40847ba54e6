"""DEMAB's driver: the same allocation draw and schedule as the reference agents."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.demab.agent import count_bits
from mamab.algorithms.demab.kernel import demab_chunk
from mamab.algorithms.demab.schedule import (
    draw_permutation,
    initial_split,
    phase_ends,
    stage_one_length,
)
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import block_size, index_bits


def run(run: FastRun) -> RunResult:
    """One DEMAB run: the same allocation draw and schedule as the reference agents."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    problem, n, k, horizon = instance.problem, config.agents, config.arms, config.horizon
    rec = run.record(late_capacity=6 * n)  # 6 rounds
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
    for noise in run.noise():
        demab_chunk(
            noise,
            rec.pos,
            grid,
            rec.recorded,
            rec.recorded_bits,
            rec.regret,
            rec.counters,
            active,
            size,
            count,
            total,
            pointer,
            state,
            ends,
            stage_one_length(horizon, n, k),
            horizon,
            problem.means,
            problem.gaps,
            config.reward == "bernoulli",
            float(config.sigma),
            run.params.demab_radius,
            index_bits(k),
            count_bits(k),
            trace,
            rec.trace_out,
            rec.loss,
            rec.delay,
            rec.fault_key,
            rec.crash,
            rec.back,
            initial,
            initial_size,
            rec.late,
            rec.late_reward,
            rec.late_n,
            share_best,
        )
    return rec.result(instance, trace)
