"""DEMAB's driver: the same allocation draw and schedule as the reference agents."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.demab.kernel import Arms, Schedule, demab_chunk
from mamab.algorithms.demab.schedule import (
    draw_permutation,
    initial_split,
    phase_ends,
    stage_one_length,
)
from mamab.bits import count_bits
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import block_size, index_bits


def run(run: FastRun) -> RunResult:
    """One DEMAB run: the same allocation draw and schedule as the reference agents."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    n, k, horizon = config.agents, config.arms, config.horizon
    rec = run.record(late_capacity=6 * n)  # 6 rounds
    split = initial_split(draw_permutation(instance.algorithm_rng(config.seed), k), n)
    width = block_size(k, n)
    active = np.zeros((n, width), dtype=np.int64)
    size = np.array([len(own) for own in split], dtype=np.int64)
    for i, own in enumerate(split):
        active[i, : len(own)] = own
    share_best = config.params.demab_best_arm == "shared"
    state = np.full(2 + n, -1, dtype=np.int64)
    state[1] = 0
    if not share_best:
        state[2:] = active[:, 0]  # an agent's own best arm before it reports: its lowest arm
    arms = Arms(
        active=active,
        size=size,
        count=np.zeros((n, width), dtype=np.int64),
        total=np.zeros((n, width)),
        pointer=np.zeros(n, dtype=np.int64),
        initial=active.copy(),  # what a recovering agent gets back
        initial_size=size.copy(),
    )
    plan = Schedule(
        horizon=horizon,
        alpha=run.params.demab_radius,
        ends=phase_ends(horizon, n, k),
        stage_one=stage_one_length(horizon, n, k),
        index_bits=index_bits(k),
        count_bits=count_bits(k),
        share_best=share_best,
        state=state,
    )
    out, rewards, faults, held = rec.out(grid, trace), run.rewards(), rec.faults(), rec.held()
    run.feed(demab_chunk, rewards, out, faults, held, arms, plan)
    return rec.result(instance, trace)
