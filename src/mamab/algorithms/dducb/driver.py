"""DDUCB's driver: the reference's mixing plan (weights, C, Chebyshev gains)."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.dducb.agent import mixing_plan
from mamab.algorithms.dducb.kernel import dducb_chunk
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import REWARD_BITS


def run(run: FastRun) -> RunResult:
    """One DDUCB run with the reference's mixing plan (weights, C, Chebyshev gains)."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    problem, n, k = instance.problem, config.agents, config.arms
    rec = run.record()
    graph = instance.topology
    plan = mixing_plan(graph, run.params.dducb_epsilon)
    self_weight = np.array([plan.self_weight(int(d)) for d in graph.degrees])
    arrays = [np.zeros((n, k)) for _ in range(12)]  # new, est, mixed, z, z before, next: (c, s)
    arm = np.zeros(n, dtype=np.int64)
    state = np.array([float(k)])  # s
    indptr, indices = graph.csr()
    for noise in run.noise():
        dducb_chunk(noise, rec.pos, grid, rec.recorded, rec.recorded_bits, rec.regret, rec.counters, *arrays, arm,
                    state, plan.rounds, np.array(plan.gains), np.array(plan.lags), plan.weight, self_weight,
                    indptr, indices, problem.means, problem.gaps, config.reward == "bernoulli",
                    float(config.sigma), run.params.alpha, run.params.dducb_index == "every-step",
                    2 * k * REWARD_BITS, trace,
                    rec.trace_out)  # fmt: skip
    return rec.result(instance, trace)
