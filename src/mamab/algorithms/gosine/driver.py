"""GosInE's driver: the same partner draws and initial sets as the reference agents."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.gosine.kernel import Gossip, Sets, gosine_chunk
from mamab.algorithms.gosine.schedule import block_ends, draw_partners, initial_sets, phase_ends
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import index_bits


def run(run: FastRun) -> RunResult:
    """One GosInE run (with blocking when the spec's ``robust`` is set): the same partner draws
    and initial sets as the reference agents; gosine-robust's blocks are kept per CSR edge."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    n, k, horizon = config.agents, config.arms, config.horizon
    rec = run.record(late_capacity=2 * n)
    ends = phase_ends(horizon, run.params.gossip_exponent)
    draws = draw_partners(instance.algorithm_rng(config.seed), len(ends), n)
    initial = [initial_sets(i, k, n) for i in range(n)]
    sticky = np.array([s for s, _ in initial], dtype=np.int64)
    non_sticky = np.zeros((n, 2), dtype=np.int64)
    n_non_sticky = np.array([len(ns) for _, ns in initial], dtype=np.int64)
    for i, (_, ns) in enumerate(initial):
        non_sticky[i, : len(ns)] = ns
    active = np.zeros((n, sticky.shape[1] + 2), dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    for i, (s, ns) in enumerate(initial):
        arms = sorted((*s, *ns))
        active[i, : len(arms)] = arms
        size[i] = len(arms)
    sets = Sets(
        count=np.zeros((n, k), dtype=np.int64),
        total=np.zeros((n, k)),
        mean=np.zeros((n, k)),
        inv_sqrt=np.zeros((n, k)),
        pulls=np.zeros((n, k), dtype=np.int64),
        active=active,
        size=size,
        untried=np.zeros(n, dtype=np.int64),
        sticky=sticky,
        non_sticky=non_sticky,
        n_non_sticky=n_non_sticky,
        initial_non_sticky=non_sticky.copy(),  # what a recovering agent gets back
    )
    indptr, indices = instance.topology.csr()
    plan = Gossip(
        alpha=run.params.alpha,
        index_bits=index_bits(k),
        ends=ends,
        draws=draws,
        indptr=indptr,
        indices=indices,
        robust=bool(run.settings["robust"]),
        block_ends=block_ends(len(ends), run.params.block_exponent),
        state=np.zeros(1, dtype=np.int64),
        blocked_until=np.zeros(indices.size, dtype=np.int64),  # per CSR edge: its block's end
        rec_edge=np.full(n, -1, dtype=np.int64),  # the last recommendation: its edge and arm
        rec_arm=np.zeros(n, dtype=np.int64),
    )
    out, rewards, faults = rec.out(grid, trace), run.rewards(), rec.faults()
    held, attack = rec.held(), rec.attacks()
    run.feed(gosine_chunk, rewards, out, faults, held, attack, sets, plan)
    return rec.result(instance, trace)
