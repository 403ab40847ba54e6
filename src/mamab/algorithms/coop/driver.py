"""coop-UCB2's driver: the reference's consensus weights."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.coop.agent import consensus_weights
from mamab.algorithms.coop.kernel import Consensus, Estimates, coop_chunk
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import REWARD_BITS


def run(run: FastRun) -> RunResult:
    """One coop-UCB2 run with the reference's consensus weights."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    n, k = config.agents, config.arms
    rec = run.record()
    graph = instance.topology
    weights = [
        consensus_weights(int(d), graph.max_degree, run.params.consensus_kappa)
        for d in graph.degrees
    ]
    weight = np.array([w for w, _ in weights])
    self_weight = np.array([s for _, s in weights])
    indptr, indices = graph.csr()
    est = Estimates(
        np.zeros((n, k)),
        np.zeros((n, k)),
        np.zeros((2, n, k)),
        np.zeros((2, n, k)),
        late_edge=np.zeros(indices.size, dtype=np.bool_),
    )
    plan = Consensus(weight, self_weight, indptr, indices, n, run.params.alpha, 2 * k * REWARD_BITS)
    out, rewards, faults = rec.out(grid, trace), run.rewards(), rec.faults()
    run.feed(coop_chunk, rewards, out, faults, est, plan)
    return rec.result(instance, trace)
