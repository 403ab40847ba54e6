"""GosInE's driver: the same partner draws and initial sets as the reference agents."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.gosine.kernel import gosine_chunk
from mamab.algorithms.gosine.schedule import block_ends, draw_partners, initial_sets, phase_ends
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import index_bits


def run(run: FastRun) -> RunResult:
    """One GosInE run (with blocking when the spec's ``robust`` is set): the same partner draws and initial sets as the reference
    agents; gosine-robust's blocks are kept per CSR edge."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    problem, n, k, horizon = instance.problem, config.agents, config.arms, config.horizon
    rec = run.record(late_capacity=2 * n)
    ends = phase_ends(horizon, run.params.gossip_exponent)
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
    robust = bool(run.settings["robust"])
    blocks = block_ends(len(ends), run.params.block_exponent)
    blocked_until = np.zeros(indices.size, dtype=np.int64)  # per CSR edge: phase its block ends
    rec_edge = np.full(n, -1, dtype=np.int64)  # the last recommendation: its edge and arm
    rec_arm = np.zeros(n, dtype=np.int64)
    for noise in run.noise():
        gosine_chunk(
            noise,
            rec.pos,
            grid,
            rec.recorded,
            rec.recorded_bits,
            rec.regret,
            rec.counters,
            count,
            total,
            mean,
            inv_sqrt,
            played,
            active,
            size,
            sticky,
            non_sticky,
            n_non_sticky,
            state,
            ends,
            draws,
            indptr,
            indices,
            problem.means,
            problem.gaps,
            config.reward == "bernoulli",
            float(config.sigma),
            run.params.alpha,
            index_bits(k),
            trace,
            rec.trace_out,
            rec.loss,
            rec.delay,
            rec.fault_key,
            rec.crash,
            rec.back,
            initial_non_sticky,
            rec.late,
            rec.late_reward,
            rec.late_n,
            rec.liar,
            rec.attack,
            rec.attack_arm,
            rec.attack_pool,
            rec.attack_key,
            robust,
            blocks,
            blocked_until,
            rec_edge,
            rec_arm,
        )
    return rec.result(instance, trace)
