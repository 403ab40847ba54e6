"""The UCB baselines' driver: one run of no-communication or full-communication.

The spec's settings say which: ``talk`` (send every sample to every neighbour each step).
"""

from __future__ import annotations

import numpy as np

from mamab.algorithms.ucb.kernel import Links, ucb_chunk, ucb_chunk_faultless, ucb_chunk_lossy
from mamab.bits import REWARD_BITS, index_bits
from mamab.engine.lanes import lane_ucb
from mamab.engine.recording import FastRun, Recording
from mamab.engine.ucb_kernels import grouped_ucb
from mamab.result import RunResult


def run(run: FastRun) -> RunResult:
    """One run of a UCB baseline on all K arms."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    talk = bool(run.settings["talk"])
    if talk:
        indptr, indices = instance.topology.csr()
    else:
        indptr, indices = np.zeros(config.agents + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rec = run.record(late_capacity=indices.size)
    n = config.agents
    complete = n > 1 and bool(np.all(np.diff(indptr) == n - 1))  # no self-loops in a topology
    rewards = run.rewards()
    lockstep = talk and complete and rewards.bernoulli and _faultless(rec, config.horizon)
    links = Links(
        talk,
        lockstep,
        np.asarray(indptr, dtype=np.int64),
        np.asarray(indices, dtype=np.uint64),
        np.repeat(np.arange(n, dtype=np.uint64), np.diff(indptr)),
        index_bits(config.arms) + REWARD_BITS,
        rec.late,
        rec.late_reward,
        rec.late_n,
    )
    if not talk:  # agents alone, in vector lanes (the grouped state unused: empty)
        ucb, lanes = grouped_ucb(0, config.arms), lane_ucb(n, config.arms)
    elif lockstep:  # one table stands for every agent
        ucb, lanes = grouped_ucb(1, config.arms, np.array([n])), lane_ucb(0, config.arms)
    else:
        ucb, lanes = (
            grouped_ucb(n, config.arms, _pace(np.diff(indptr), rec.loss)),
            lane_ucb(0, config.arms),
        )
    out, faults = rec.out(grid, trace), rec.faults()
    if not talk:  # agents alone run _alone, called from any of the three: the general one
        kernel = ucb_chunk
    elif _faultless(rec, config.horizon):
        kernel = ucb_chunk_faultless
    elif _lossy_only(rec, config.horizon):
        kernel = ucb_chunk_lossy
    else:
        kernel = ucb_chunk
    run.feed(kernel, rewards, out, ucb, lanes, links, faults, run.params.alpha)
    return rec.result(instance, trace)


def _pace(degrees: np.ndarray, loss: float) -> np.ndarray:
    """Samples each agent can expect per step: its own and, of its neighbours', those not lost
    (at least 1). They size the blocks of the grouped bounds, so that a block lasts about as many
    steps whatever the loss (at loss 0.9 blocks of the faultless pace lasted four times as many
    steps, their bounds looser: G(20, 0.3), K = 100, 0.89 times the time with this pace)."""
    heard = np.rint(degrees * (1.0 - min(max(loss, 0.0), 1.0)))
    return 1 + heard.astype(np.int64)


def _faultless(rec: Recording, horizon: int) -> bool:
    """No message lost or delayed, no agent crashed, no liar: every agent hears every sample."""
    return (
        rec.loss <= 0.0
        and rec.delay <= 0.0
        and bool(np.all(rec.crash > horizon))
        and not np.any(rec.liar)
    )


def _lossy_only(rec: Recording, horizon: int) -> bool:
    """Messages lost, none delayed, no agent crashed: every agent is alive and a message arrives
    now or never."""
    return rec.loss > 0.0 and rec.delay <= 0.0 and bool(np.all(rec.crash > horizon))
