"""coop-UCB2's driver: the reference's consensus weights."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.coop.agent import consensus_weights
from mamab.algorithms.coop.kernel import coop_chunk
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import REWARD_BITS


def run(run: FastRun) -> RunResult:
    """One coop-UCB2 run with the reference's consensus weights."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    problem, n, k = instance.problem, config.agents, config.arms
    rec = run.record()
    graph = instance.topology
    weights = [
        consensus_weights(int(d), graph.max_degree, run.params.consensus_kappa)
        for d in graph.degrees
    ]
    weight = np.array([w for w, _ in weights])
    self_weight = np.array([s for _, s in weights])
    counts, sums, own_counts, own_sums, prev_counts, prev_sums = (
        np.zeros((n, k)) for _ in range(6)
    )
    indptr, indices = graph.csr()
    late_edge = np.zeros(indices.size, dtype=np.bool_)  # the edge's last message is held
    for noise in run.noise():
        coop_chunk(noise, rec.pos, grid, rec.recorded, rec.recorded_bits, rec.regret, rec.counters, counts, sums, own_counts,
                   own_sums, weight, self_weight, indptr, indices, n, problem.means, problem.gaps,
                   config.reward == "bernoulli", float(config.sigma), run.params.alpha,
                   2 * k * REWARD_BITS, trace, rec.trace_out, rec.loss, rec.delay, rec.fault_key, rec.crash,
                   rec.back, late_edge, prev_counts, prev_sums)  # fmt: skip
    return rec.result(instance, trace)
