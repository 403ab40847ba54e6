"""DDUCB's driver: the reference's mixing plan (weights, C, Chebyshev gains)."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.dducb.agent import mixing_plan
from mamab.algorithms.dducb.kernel import Plan, State, dducb_chunk
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import REWARD_BITS


def run(run: FastRun) -> RunResult:
    """One DDUCB run with the reference's mixing plan (weights, C, Chebyshev gains)."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    n, k = config.agents, config.arms
    rec = run.record()
    graph = instance.topology
    plan = mixing_plan(graph, run.params.dducb_epsilon)
    self_weight = np.array([plan.self_weight(int(d)) for d in graph.degrees])
    sums = [np.zeros((n, k)) for _ in range(12)]  # new, est, mixed, z, z before, next: (c, s)
    state = State(*sums, arm=np.zeros(n, dtype=np.int64), s=np.array([float(k)]))
    indptr, indices = graph.csr()
    plan_ = Plan(
        rounds=plan.rounds,
        gains=np.array(plan.gains),
        lags=np.array(plan.lags),
        weight=plan.weight,
        self_weight=self_weight,
        indptr=indptr,
        indices=indices,
        alpha=run.params.alpha,
        local=run.params.dducb_index == "every-step",
        message_bits=2 * k * REWARD_BITS,
    )
    out, rewards = rec.out(grid, trace), run.rewards()
    run.feed(dducb_chunk, rewards, out, state, plan_)
    return rec.result(instance, trace)
