"""The LCC kernel's driver: one run of an LCC-family algorithm or a UCB baseline.

The spec's settings say which: ``mode`` (:mod:`.variants`) and ``sub_epochs`` (LCC-UCB-GRAPH).
"""

from __future__ import annotations

import numpy as np

from mamab.algorithms.lcc import kernel as kernels
from mamab.algorithms.lcc.agent import lcc_shape
from mamab.engine.aligned import aligned_zeros
from mamab.engine.lanes import LANES
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import (
    agent_bits,
    base_length,
    block_size,
    index_bits,
    initial_block,
    phase_lengths,
)


def run(run: FastRun) -> RunResult:
    """One run of an LCC-family algorithm (one kernel; the spec's ``mode``)."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    graph = instance.topology
    n, k, horizon = config.agents, config.arms, config.horizon
    indptr, indices = graph.csr()
    mode, sub_epochs = run.settings["mode"], run.settings.get("sub_epochs", False)
    rounds = max(1, graph.diameter) if mode == kernels.RELAY else 1
    rec = run.record(late_capacity=rounds * indices.size)
    relay_rounds, message_bits = 0, index_bits(k)
    kp, sub = lcc_shape(mode, sub_epochs, graph, k, run.params)
    phases = phase_lengths(horizon, base_length(kp), sub)
    block = np.array([initial_block(i, k, n) for i in range(n)], dtype=np.int64)
    slots = block_size(k, n) + (n - 1 if mode == kernels.RELAY else graph.max_degree)
    slot_arm = np.zeros((n, slots), dtype=np.int64)
    slot_arm[:, : block.shape[1]] = block
    size = np.full(n, block.shape[1], dtype=np.int64)
    if mode == kernels.RELAY:
        relay_rounds, message_bits = rounds, agent_bits(n) + index_bits(k)
    flood = (n, n) if mode == kernels.RELAY else (1, 1)
    robust = mode == kernels.ROBUST  # per CSR edge: offences, blocks, taken; the reverse edge
    exchange = kernels.Exchange(
        known=np.zeros(flood, dtype=np.bool_),
        fresh=np.zeros(flood, dtype=np.bool_),
        nxt=np.zeros(flood, dtype=np.bool_),
        late_pair=np.full(flood, -1, dtype=np.int64),  # relay pairs held for the next exchange
        heard=np.zeros(flood, dtype=np.int64),  # relay: the arm each agent first heard per origin
        trust=robust_state(indices.size if robust else 1),
    )
    plan = kernels.Plan(
        mode=mode,
        alpha=run.params.alpha,
        phase_len=phases,
        block=block,
        indptr=indptr,
        indices=indices,
        reverse=reverse_edges(indptr, indices) if robust else np.zeros(1, dtype=np.int64),
        relay_rounds=relay_rounds,
        message_bits=message_bits,
        inv_root=kernels.inv_root_table(config.horizon),
    )
    ucb = kernels.Ucb(
        slot_arm=slot_arm,
        size=size,
        count=np.zeros((n, slots), dtype=np.int64),
        total=np.zeros((n, slots)),
        mean=np.zeros((n, slots)),
        inv_sqrt=np.zeros((n, slots)),
        untried=np.zeros(n, dtype=np.int64),
        samples=np.zeros(n, dtype=np.int64),
        **lane_copy(size, slots),
        cand=np.zeros((n, slots), dtype=np.int64),
        in_cand=np.zeros((n, slots), dtype=np.bool_),
        n_cand=np.zeros(n, dtype=np.int64),
        block_end=np.full(n, -1, dtype=np.int64),
        bound=np.zeros(n),
        block_width=np.zeros(n),
    )
    out, rewards, faults = rec.out(grid, trace), run.rewards(), rec.faults()
    held, attack = rec.held(), rec.attacks()
    run.feed(kernels.run_chunk, rewards, out, faults, held, attack, ucb, plan, exchange)
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


def lane_copy(size: np.ndarray, slots: int) -> dict[str, np.ndarray]:
    """The UCB's copy in vector lanes, fresh: slot s of agent n at [n // LANES, s·LANES + n %
    LANES], mean 0 up to its size and -inf past it (lanes past the last agent: all -inf)."""
    agents = size.size
    tiles = -(-agents // LANES)
    mean = np.full((tiles * LANES, slots), -np.inf)
    mean[:agents][np.arange(slots) < size[:, None]] = 0.0
    lane_mean = aligned_zeros((tiles, slots * LANES))  # on cache lines: a slot, one load
    lane_mean[:] = mean.reshape(tiles, LANES, slots).transpose(0, 2, 1).reshape(tiles, -1)
    return {
        "lane_mean": lane_mean,
        "lane_inv": aligned_zeros((tiles, slots * LANES)),
        "lane_best": aligned_zeros((tiles, LANES), dtype=np.int64),  # one vector store a scan
        "scanned": np.full(tiles, -1, dtype=np.int64),
        # a ready tile's arms, counts and sums in lanes, as its means (kernel._to_lanes)
        "tile_arm": aligned_zeros(slots * LANES, dtype=np.uint64),
        "tile_count": aligned_zeros(slots * LANES, dtype=np.int64),
        "tile_total": aligned_zeros(slots * LANES),
        "tile_arm_mean": aligned_zeros(slots * LANES),  # the mean of each slot's arm
        "tile_arm_gap": aligned_zeros(slots * LANES),  # ... and its gap
    }
