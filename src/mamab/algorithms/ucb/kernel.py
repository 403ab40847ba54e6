"""numba kernel of the UCB baselines: no-communication and full-communication.

Mirrors ``mamab.algorithms.ucb.agent`` operation for operation: each agent runs UCB1 on all K
arms (untried arms first in index order, then the first maximum of
mean + sqrt(alpha·log t)·(1/sqrt n), t = 1 + samples seen), learns its own sample, and, with
full communication, every neighbour's (arm, reward) of the step by increasing sender id, after
the samples held since the last exchange (delay). The argmax is exact but lazy: grouped bounds
(:mod:`mamab.engine.ucb_kernels`).

Kernel API 1 (``mamab.engine.kernel_api``): the noise block, the run's arms (``Rewards``) and
recording (``Out``), the agents' UCB state (:class:`~mamab.engine.ucb_kernels.GroupedUCB`),
who talks to whom (:class:`Links`) and the faults (``Faults``). Agent n is dead during steps
crash[n] .. back[n] - 1: it plays and sends nothing, a sample sent to it is lost; at back[n] it
restarts with a fresh UCB.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mamab.engine.kernel_api import (
    BITS,
    BITS_RECV,
    RECV,
    ROUNDS,
    SENT,
    STEP,
    arrive,
    end_step,
    played,
    reward_of,
    route,
)
from mamab.engine.ucb_kernels import (
    choose_grouped,
    learn_grouped,
    open_block,
    rebound_group,
    restart_grouped,
    ucb_width,
)
from mamab.faults import DELIVER, LOSE, fate
from mamab.kernel_cache import njit


class Links(NamedTuple):
    """Full communication's wiring: the graph (CSR, undirected, rows sorted), the bits of a
    sample, and the samples held for the next exchange (``Recording``'s late buffer)."""

    talk: bool  # False: no-communication (nothing below is used)
    indptr: np.ndarray  # (agents + 1,)
    indices: np.ndarray  # neighbours of each agent, increasing
    bits: int  # bits of one (arm, reward) message
    late: np.ndarray  # (capacity, 4) sender, receiver, bits, arm
    late_reward: np.ndarray  # (capacity,)
    late_n: np.ndarray  # [held messages]


@njit(cache=True, inline="always")
def _exchange(ucb, links, faults, counters, chosen, got, alive, step):
    """Held samples arrive, then every alive agent's sample of the step reaches its neighbours.

    Receivers are visited one by one, each hearing its neighbours by increasing id: the
    reference's order for each receiver (receivers do not interact), with its rows in cache.
    """
    late, late_reward, late_n = links.late, links.late_reward, links.late_n
    for i in range(late_n[0]):  # samples held since the last exchange, in the order sent
        if arrive(late, i, counters, alive):
            learn_grouped(ucb, late[i, 1], late[i, 3], late_reward[i])
    late_n[0] = 0
    indptr, indices, bits = links.indptr, links.indices, links.bits
    n_agents = alive.shape[0]
    for sender in range(n_agents):
        degree = indptr[sender + 1] - indptr[sender]
        if degree > 0 and alive[sender]:
            counters[SENT, sender] += degree
            counters[BITS, sender] += degree * bits
            counters[ROUNDS, sender] += 1
    loss, delay, key = faults.loss, faults.delay, faults.key
    for v in range(n_agents):
        heard = 0
        for e in range(indptr[v], indptr[v + 1]):
            sender = indices[e]
            if not alive[sender]:
                continue
            slot, reward = chosen[sender], got[sender]
            f = fate(loss, delay, key, step, 0, sender, v)
            if f != DELIVER or not alive[v]:  # array helpers only off the plain path
                route(
                    counters,
                    LOSE if f == DELIVER else f,
                    sender,
                    v,
                    bits,
                    slot,
                    reward,
                    late,
                    late_reward,
                    late_n,
                )
                continue
            learn_grouped(ucb, v, slot, reward)
            heard += 1
        counters[RECV, v] += heard
        counters[BITS_RECV, v] += heard * bits


@njit(cache=True, nogil=True)
def ucb_chunk(noise, rewards, out, ucb, links, faults, alpha):
    """Simulate ``noise.shape[0]`` steps of every agent of one run (slot s is arm s)."""
    n_agents = noise.shape[1]
    k = ucb.arms
    chosen = np.empty(n_agents, dtype=np.int64)
    got = np.empty(n_agents)
    alive = np.ones(n_agents, dtype=np.bool_)
    count, samples, untried = ucb.count, ucb.samples, ucb.untried
    for row in range(noise.shape[0]):
        step = out.pos[STEP] + 1
        for n in range(n_agents):
            alive[n] = step < faults.crash[n] or step >= faults.back[n]
            if step == faults.back[n]:
                restart_grouped(ucb, n)
        width, cached = 0.0, -1
        for n in range(n_agents):
            if not alive[n]:
                continue
            s = untried[n]
            while s < k and count[n, s] > 0:
                s += 1
            untried[n] = s
            if s == k:
                seen = samples[n]
                if seen != cached:
                    cached = seen
                    width = ucb_width(alpha, seen)
                if seen > ucb.block_end[n]:
                    open_block(ucb, n, alpha, seen)
                s = choose_grouped(ucb, n, width)
            reward = reward_of(rewards, noise[row, n], s)
            learn_grouped(ucb, n, s, reward)
            rebound_group(ucb, n, s)
            played(out, rewards, n, s)
            chosen[n] = s
            got[n] = reward
        if links.talk:
            _exchange(ucb, links, faults, out.counters, chosen, got, alive, step)
        end_step(out)
