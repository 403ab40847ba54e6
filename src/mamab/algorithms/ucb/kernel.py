"""numba kernel of the UCB baselines: no-communication and full-communication.

Mirrors ``mamab.algorithms.ucb.agent`` operation for operation: each agent runs UCB1 on all K
arms (untried arms first in index order, then the first maximum of
mean + sqrt(alpha·log t)·(1/sqrt n), t = 1 + samples seen), learns its own sample, and, with
full communication, every neighbour's (arm, reward) of the step by increasing sender id, after
the samples held since the last exchange (delay). The argmax is exact: agents alone scan every
arm in the processor's vector lanes, eight agents at once (:mod:`mamab.engine.lanes`); agents
that talk keep grouped bounds and scan lazily (:mod:`mamab.engine.ucb_kernels`).

Kernel API 1 (``mamab.engine.kernel_api``): the noise block, the run's arms (``Rewards``) and
recording (``Out``), the UCB state of agents that talk
(:class:`~mamab.engine.ucb_kernels.GroupedUCB`) or of agents alone
(:class:`~mamab.engine.lanes.LaneUCB`; the other is empty), who talks to whom (:class:`Links`)
and the faults (``Faults``). Agent n is dead during steps
crash[n] .. back[n] - 1: it plays and sends nothing, a sample sent to it is lost; at back[n] it
restarts with a fresh UCB.

The entry kernel is compiled three times from one source (:func:`_chunk_kernel`), for the
faults a run can meet: ``ucb_chunk_faultless`` for runs without crashes, loss or delay (the
paper's panels), ``ucb_chunk_lossy`` for runs whose only fault is message loss (the loss
figure), ``ucb_chunk`` for any; a kernel's loops carry no code of the faults it cannot meet (the
driver picks). The first two take about 0.8 and 0.9 times the time of the third on those runs.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mamab.engine.kernel_api import (
    BITS,
    BITS_LOST,
    BITS_RECV,
    GRID,
    LOST,
    RECV,
    ROUNDS,
    SENT,
    STEP,
    arrive,
    record,
    reward_from,
    reward_of,
    route,
)
from mamab.engine.lanes import (
    BLOCKS_FROM,
    LANES,
    lane_argmax,
    lane_argmax_blocks,
    lane_argmax_blocks_down,
    lane_argmax_down,
    lane_learn,
    learn_lane,
    restart_lane,
)
from mamab.engine.ucb_kernels import (
    add_sample,
    block_width,
    choose_after,
    choose_grouped,
    first_group,
    group_best,
    hear_two,
    learn_grouped,
    open_block,
    restart_grouped,
    settle_grouped,
    store_played,
    ucb_width,
)
from mamab.faults import (
    DELIVER,
    LOSE,
    fate,
    receiver_bits_nb,
    round_hash_nb,
    sender_hash_nb,
)
from mamab.kernel_cache import njit, njit_as


class Links(NamedTuple):
    """Full communication's wiring: the graph (CSR, undirected, rows sorted), the bits of a
    sample, and the samples held for the next exchange (``Recording``'s late buffer)."""

    talk: bool  # False: no-communication (nothing below is used)
    lockstep: bool  # every agent holds the same table: ``ucb`` has one row for all
    indptr: np.ndarray  # (agents + 1,)
    indices: np.ndarray  # neighbours of each agent, increasing (uint64: see kernel_api)
    receiver: np.ndarray  # each edge's receiver, the row of ``indices`` it is in (uint64)
    bits: int  # bits of one (arm, reward) message
    late: np.ndarray  # (capacity, 4) sender, receiver, bits, arm
    late_reward: np.ndarray  # (capacity,)
    late_n: np.ndarray  # [held messages]


FAULTLESS, LOSSY, ANY_FAULTS = 0, 1, 2  # the faults a compiled kernel meets


@njit(cache=True)
def _open(ucb, n, alpha, seen):
    """Agent n opens a block of choices at ``seen`` samples (cold path)."""
    end, wide = block_width(alpha, seen, ucb.pace[n])
    ucb.block_end[n] = end
    ucb.wide[n] = wide
    open_block(ucb.mean, ucb.inv_sqrt, ucb.top, n, wide)


@njit(cache=True)
def _count_steps(counters, indptr, bits, steps):
    """The messages of ``steps`` exchanges without faults: every agent sends its sample to each
    neighbour and hears each neighbour's (counted at grid points and at the end of a block, not
    at every step: the counts are the same)."""
    for n in range(indptr.size - 1):
        degree = indptr[n + 1] - indptr[n]
        if degree > 0:
            counters[SENT, n] += steps * degree
            counters[BITS, n] += steps * degree * bits
            counters[ROUNDS, n] += steps
            counters[RECV, n] += steps * degree
            counters[BITS_RECV, n] += steps * degree * bits


@njit(cache=True)
def _take_off_lost(counters, indices, receiver, bits, missed):
    """Take the lost messages off what :func:`_count_steps` counted as delivered (at the block's
    end): ``missed[e]`` messages of edge e (from its sender ``indices[e]`` to its
    ``receiver[e]``) never arrived; then ``missed`` starts again from 0."""
    for e in range(indices.size):
        lost = missed[e]
        if lost:
            sender, v = indices[e], receiver[e]
            counters[LOST, sender] += lost
            counters[BITS_LOST, sender] += lost * bits
            counters[RECV, v] -= lost
            counters[BITS_RECV, v] -= lost * bits
            missed[e] = 0


def _chunk_kernel(name: str, kind: int):
    """The entry kernel for runs that meet the faults of ``kind``: none (the paper's panels),
    message loss alone (the loss figure) or any (crashes, loss, delay); its loops hold no code
    of the faults it cannot meet. One source, three kernels: ``kind`` is a constant of each (a
    closure variable).

    A step takes passes over the agents before the exchange: every agent chooses, then every
    agent learns its own sample. An agent's choice, reward and learning form one long chain of
    dependent operations; agents' tables are apart, so in passes the processor overlaps one
    agent's choice with the next one's, and their learnings likewise (0.94-0.96 times the time
    of one pass at (150,250), (100,500) and G(20, 0.3) with loss). The choice itself takes three
    passes (the untried arms, the block and the first group to evaluate
    (:func:`~mamab.engine.ucb_kernels.first_group`); that group's best slot; the other groups
    that reach its index (:func:`~mamab.engine.ucb_kernels.choose_after`)), and the learning
    two (the played slot's new numbers; their stores and its group's bound): 0.93-0.97 times
    the time of one pass each on the sparse panels (within noise under loss at K = 100).

    The exchange, written into the step loop: held samples arrive, then every alive agent's
    sample of the step reaches its neighbours.

    Receivers are visited one by one, each hearing its neighbours by increasing id: the
    reference's order for each receiver (receivers do not interact), with its rows in cache.
    A receiver adds each sample to its arm's count and sum in that order and settles the arm at
    once (its mean, 1/sqrt n and group bound: UCB.update's numbers). Settling each arm heard
    once, after its last sample of the exchange, did fewer divisions (on a sparse graph 7.5
    arms for 9.5 samples per agent-step) but cost more in noting which arms were heard: 0.92-0.97
    times the time on the paper's sparse panels without it, 0.98 on a complete graph with loss.
    Without faults a receiver hears its neighbours two by two: both samples added, then both
    arms settled by one square root and one division (:func:`~mamab.engine.ucb_kernels.hear_two`;
    the divider's time of one settle; 0.93-0.96 times the time at (100,250) and (150,250),
    1.00-1.02 at (100,500)), its neighbours' indices unsigned as elsewhere (0.95-0.98 again).
    With loss every sample is settled one by one (packing the arrivals and settling them in
    pairs was tried: 0.92 at loss 0.9 but 1.06 at 0.1; not kept).

    With loss and no delay a message arrives now or never: that verdict (the hash of
    :func:`~mamab.faults.fate`, its round's part made once per exchange) is used as a number,
    not branched on, since it is a coin flip. The verdicts come first, as integers (the
    uniform's 53 bits against ceil(loss·2^53): :func:`~mamab.faults.receiver_bits_nb`, the same
    verdicts; 0.94–0.99 times the time of deciding each in the receipt's loop), every message's
    in one loop over the edges, each edge's sender and receiver from arrays (0.91–0.95 times the
    time of a loop per receiver before its receipts). Each message hashes its sender's part
    again rather than reading it from a table made per exchange: the loop then holds no
    indirect load, and LLVM runs it eight messages to a vector instruction (0.90–0.92 times the
    time at G(20, 0.3), K = 100, loss 0.1–0.9, and (100,250), loss 0.3). A lost message adds 0
    to its arm's count and 0·reward to its sum, which leaves both as they are (a sum is never
    -0).

    Without crashes and delay (:data:`FAULTLESS`, :data:`LOSSY`) every agent is alive and nothing
    is held, and without loss (:data:`FAULTLESS`) every message arrives: those kernels carry no
    code for it. Without faults the message counters grow by each agent's degree at every
    exchange, so they are added at the grid points that record bits and at the end of the block
    (:func:`_count_steps`), not at every exchange (0.97-0.99 times the time). Under loss alone
    (:data:`LOSSY`) they are added so too, and the messages lost, which the verdicts' loop counts
    by edge, are taken off at the block's end (:func:`_take_off_lost`): no counter of a sender is
    read and written again for every message it sends (0.91-0.93 times the time at G(20, 0.3),
    K = 100, loss 0.1-0.9).

    It is not a helper: numba counts a reference for every array a helper takes out of a tuple,
    once per step (11-15% of the time at N = 20), where the kernel binds them once per block.
    """

    def ucb_chunk(noise, rewards, out, ucb, lanes, links, faults, alpha):
        """Simulate ``noise.shape[0]`` steps of every agent of one run (slot s is arm s).

        Agents alone run in tiles of LANES (:func:`_alone`); agents that talk run step by step, or
        in lockstep where they provably hold one table (:func:`_lockstep`).
        """
        if not links.talk:
            _alone(noise, rewards, out, lanes, faults, alpha)
            return
        if links.lockstep:
            _lockstep(noise, rewards, out, ucb, links, alpha)
            return
        tally, mean, inv_sqrt = ucb.tally, ucb.mean, ucb.inv_sqrt
        top, samples, untried = ucb.top, ucb.samples, ucb.untried
        block_end, wide, k = ucb.block_end, ucb.wide, ucb.arms
        # the width cached by pace: without faults agents of one degree have seen as many
        # samples (not only when two agents in a row have, as on a graph whose degrees vary);
        # otherwise agents of one pace often have (each cached width is checked against the
        # samples it was computed for)
        pace = ucb.pace
        paces = pace.max() + 1
        known = np.full(paces, -1, dtype=np.int64)  # samples seen at the last width
        widths = np.zeros(paces)  # that width, by pace
        crash, back, gaps = faults.crash, faults.back, rewards.gaps
        pos, grid, regret, counters = out.pos, out.grid, out.regret, out.counters
        first, rows, n_agents = pos[STEP], noise.shape[0], noise.shape[1]
        chosen = np.zeros(n_agents, dtype=np.uint64)  # unsigned, as every index loaded;
        to_choose = np.uint64(k)  # its mark: chosen by the later passes (a dead agent's stays
        # below it)
        first_groups = np.empty(n_agents, dtype=np.int64)  # the group each choice evaluates first
        choice_width = np.empty(n_agents)  # the choice's width
        best_slot = np.empty(n_agents, dtype=np.int64)  # that group's best slot
        best_index = np.empty(n_agents)  # and its index
        played_mean = np.empty(n_agents)  # the played slot's new mean
        played_inv = np.empty(n_agents)  # and 1/sqrt n
        got = np.empty(n_agents)
        alive = np.ones(n_agents, dtype=np.bool_)
        late, late_reward, late_n = links.late, links.late_reward, links.late_n
        indptr, indices, bits = links.indptr, links.indices, links.bits
        loss, delay, key = faults.loss, faults.delay, faults.key
        cut = np.uint64(math.ceil(min(max(loss, 0.0), 1.0) * 2.0**53))  # arrives: bits >= cut
        faulty = kind == ANY_FAULTS  # crashes and delays possible
        plain = loss <= 0.0 and delay <= 0.0  # every message to a live agent arrives
        lossy = kind == LOSSY or (faulty and loss > 0.0 and delay <= 0.0)  # now or never
        edges, receiver = indices.size if lossy else 0, links.receiver
        arriving = np.empty(edges, dtype=np.uint64)  # each message's verdict (lossy)
        missed = np.zeros(edges if kind == LOSSY else 0, dtype=np.int64)  # lost since counted
        owed = 0  # exchanges whose messages are not counted yet (FAULTLESS, LOSSY)
        for row in range(rows):
            step = first + row + 1
            for n in range(n_agents):  # every agent chooses, in passes (_chunk_kernel's
                # docstring): untried arms, block, width and the first group
                if kind == ANY_FAULTS:
                    if step == back[n]:
                        restart_grouped(ucb, n)
                    alive[n] = step < crash[n] or step >= back[n]
                    if not alive[n]:
                        continue
                s = untried[n]
                while s < k and tally[n, s, 1] > 0:
                    s += 1
                untried[n] = s
                if s == k:
                    seen = samples[n]
                    if seen > block_end[n]:
                        _open(ucb, n, alpha, seen)
                    p = pace[n]
                    if known[p] != seen:
                        known[p] = seen
                        widths[p] = ucb_width(alpha, seen)
                    choice_width[n] = widths[p]
                    first_groups[n] = first_group(top, n)
                chosen[n] = np.uint64(s)  # unsigned: no wraparound code (kernel_api)
            for n in range(n_agents):  # the best slot of each one's first group
                if chosen[n] == to_choose:
                    best_slot[n], best_index[n] = group_best(
                        mean, inv_sqrt, n, first_groups[n], choice_width[n]
                    )
            for n in range(n_agents):  # the other groups that reach its index
                if chosen[n] == to_choose:
                    g, w = first_groups[n], choice_width[n]
                    s = choose_after(top, mean, inv_sqrt, n, w, g, best_slot[n], best_index[n])
                    chosen[n] = np.uint64(s)
            for n in range(n_agents):  # every agent learns its own sample: its numbers,
                if kind == ANY_FAULTS and not alive[n]:
                    continue
                arm = chosen[n]
                reward = reward_of(rewards, noise[row, n], arm)
                played_mean[n], played_inv[n] = add_sample(tally, n, arm, reward)
                samples[n] += 1
                regret[n] += gaps[arm]
                if out.trace:
                    out.trace_out[step - 1, n] = arm
                got[n] = reward
            for n in range(n_agents):  # then their stores and the played group's bound
                if kind == ANY_FAULTS and not alive[n]:
                    continue
                m, r = played_mean[n], played_inv[n]
                store_played(mean, inv_sqrt, top, n, chosen[n], m, r, wide[n])
            # the exchange (_chunk_kernel's docstring)
            for i in range(late_n[0] if faulty else 0):  # samples held, in the order sent
                if arrive(late, i, counters, alive):
                    v = late[i, 1]
                    learn_grouped(
                        tally, mean, inv_sqrt, top, v, late[i, 3], late_reward[i], wide[v]
                    )
                    samples[v] += 1
            late_n[0] = 0
            if kind != ANY_FAULTS:  # counted at grid points and the block's end (_count_steps;
                owed += 1  # the lost ones taken off at the block's end: _take_off_lost)
            else:
                for sender in range(n_agents):
                    degree = indptr[sender + 1] - indptr[sender]
                    if degree > 0 and alive[sender]:
                        counters[SENT, sender] += degree
                        counters[BITS, sender] += degree * bits
                        counters[ROUNDS, sender] += 1
            if lossy:  # the coordinates messages share, hashed once per exchange; every
                round_hash = round_hash_nb(key, step, 0)  # message's verdict, edge by edge
                for e in range(edges):
                    sent = sender_hash_nb(round_hash, indices[e])
                    arrives = receiver_bits_nb(sent, receiver[e]) >= cut
                    arriving[e] = arrives
                    if kind == LOSSY:
                        missed[e] += not arrives
            for v in range(n_agents):
                heard = 0
                w = wide[v]
                if lossy:  # whether a message arrives is used as a number, not branched on
                    listening = alive[v]
                    lo, hi = np.uint64(indptr[v]), np.uint64(indptr[v + 1])
                    for e in range(lo, hi):
                        sender = indices[e]
                        if faulty and not alive[sender]:
                            continue
                        slot = chosen[sender]
                        arrives = listening & (arriving[e] != 0)
                        tally[v, slot, 0] += arrives * got[sender]
                        tally[v, slot, 1] += arrives
                        if tally[v, slot, 1] > 0:  # a loss to an arm never heard: no numbers
                            # to settle (after a restart alone; a branch predicted)
                            settle_grouped(tally, mean, inv_sqrt, top, v, slot, w)
                        heard += arrives
                        if kind != LOSSY:  # (LOSSY: counted by edge, _take_off_lost)
                            counters[LOST, sender] += not arrives
                            counters[BITS_LOST, sender] += (not arrives) * bits
                elif kind == FAULTLESS:  # every neighbour's sample, two by two
                    lo, hi = np.uint64(indptr[v]), np.uint64(indptr[v + 1])
                    heard = np.int64(hi - lo)
                    one_more = np.uint64(1)
                    for e in range(lo, hi - (hi - lo) % np.uint64(2), 2):
                        one, two = indices[e], indices[e + one_more]
                        hear_two(tally, mean, inv_sqrt, top, v, chosen, got, one, two, w)
                    if heard % 2:
                        last = indices[hi - one_more]
                        learn_grouped(tally, mean, inv_sqrt, top, v, chosen[last], got[last], w)
                else:
                    for e in range(np.uint64(indptr[v]), np.uint64(indptr[v + 1])):
                        sender = indices[e]
                        if faulty and not alive[sender]:
                            continue
                        slot, reward = chosen[sender], got[sender]
                        f = (
                            DELIVER
                            if plain or not faulty
                            else fate(loss, delay, key, step, 0, sender, v)
                        )
                        # array helpers only off the plain path
                        if faulty and (f != DELIVER or not alive[v]):
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
                        tally[v, slot, 0] += reward
                        tally[v, slot, 1] += 1.0
                        settle_grouped(tally, mean, inv_sqrt, top, v, slot, w)
                        heard += 1
                samples[v] += heard
                if kind == ANY_FAULTS:
                    counters[RECV, v] += heard
                    counters[BITS_RECV, v] += heard * bits
            if pos[GRID] < grid.size and step == grid[pos[GRID]]:
                if kind != ANY_FAULTS:  # (the grid records bits sent: the lost wait)
                    _count_steps(counters, indptr, bits, owed)
                    owed = 0
                record(out)  # regret and bits sent at the grid point (cold: not inlined)
        if kind != ANY_FAULTS:
            _count_steps(counters, indptr, bits, owed)
        if kind == LOSSY:
            _take_off_lost(counters, indices, receiver, bits, missed)
        pos[STEP] = first + rows

    return njit_as(name, ucb_chunk, nogil=True)


#: Every run of the UCB baselines.
ucb_chunk = _chunk_kernel("ucb_chunk", kind=ANY_FAULTS)
#: Runs without crashes, loss or delay.
ucb_chunk_faultless = _chunk_kernel("ucb_chunk_faultless", kind=FAULTLESS)
#: Runs whose only fault is message loss (no crash, no delay).
ucb_chunk_lossy = _chunk_kernel("ucb_chunk_lossy", kind=LOSSY)


@njit(cache=True)
def _alone(noise, rewards, out, lanes, faults, alpha):
    """Agents that learn only their own samples (no-communication), LANES at a time: a tile's
    agents play the whole block before the next tile's, scanning their arms together, up and
    down by turns (:func:`~mamab.engine.lanes.lane_argmax`, ``lane_argmax_down``: the tile's
    last slots are still in cache; by blocks once settled on BLOCKS_FROM arms or more,
    ``lane_argmax_blocks``), and, once settled, learning together
    (:func:`~mamab.engine.lanes.lane_learn`); regret is recorded per tile at the grid points.
    Agent n is tile n // LANES, lane n % LANES."""
    count, total, mean, inv_sqrt = lanes.count, lanes.total, lanes.mean, lanes.inv_sqrt
    samples, untried, k = lanes.samples, lanes.untried, lanes.arms
    crash, back, gaps = faults.crash, faults.back, rewards.gaps
    means, bernoulli, sigma = rewards.means, rewards.bernoulli, rewards.sigma
    pos, grid, regret, trace, trace_out = out.pos, out.grid, out.regret, out.trace, out.trace_out
    first, rows, n_agents = pos[STEP], noise.shape[0], noise.shape[1]
    widths = np.empty(rows)  # an agent alive since the start has seen step - 1 samples
    for row in range(rows):
        widths[row] = ucb_width(alpha, first + row)
    draws = np.empty((rows, LANES))  # the tile's columns of the noise block, side by side
    width = np.zeros(LANES)  # each lane's width this step (not settled)
    best = np.zeros(LANES, dtype=np.int64)  # each lane's first maximum
    pick = np.zeros(LANES, dtype=np.int64)  # each lane's untried arm, k if none
    live = np.zeros(LANES, dtype=np.bool_)
    point = pos[GRID]
    for tile in range(count.shape[0]):
        lo = tile * LANES
        hi = min(lo + LANES, n_agents)
        c, tot, m, r = count[tile], total[tile], mean[tile], inv_sqrt[tile]
        state = (c, tot, m, r)
        for row in range(rows):  # gathered in one tight loop, whose cache misses overlap; read
            for j in range(hi - lo):  # row by row after each scan, each would wait for memory
                draws[row, j] = noise[row, lo + j]
        point = pos[GRID]
        settled = True  # every agent of the tile alive since the start, through this block,
        for n in range(lo, hi):  # and done with its untried arms: all have one width
            settled &= samples[n] == first and untried[n] == k and crash[n] > first + rows
        for row in range(rows):
            step = first + row + 1
            if settled:
                if k >= BLOCKS_FROM:  # by blocks: no index is NaN, all arms sampled
                    if row & 1:
                        lane_argmax_blocks_down(m, r, k, widths[row], best)
                    else:
                        lane_argmax_blocks(m, r, k, widths[row], best)
                elif row & 1:  # up and down by turns (lane_argmax_down); one width, a float
                    lane_argmax_down(m, r, k, widths[row], best)
                else:
                    lane_argmax(m, r, k, widths[row], best)
                lane_learn(draws, row, hi - lo, best, state, rewards, regret, lo)
                if trace:
                    for n in range(lo, hi):
                        trace_out[step - 1, n] = best[n - lo]
            else:
                scan = False
                for n in range(lo, hi):
                    j = n - lo
                    if step == back[n]:
                        restart_lane(c, tot, m, r, k, j)
                        samples[n] = 0
                        untried[n] = 0
                    live[j] = step < crash[n] or step >= back[n]
                    if not live[j]:
                        continue
                    s = untried[n]
                    while s < k and c[s * LANES + j] > 0:
                        s += 1
                    untried[n] = s
                    pick[j] = s
                    if s == k:
                        scan = True
                        seen = samples[n]
                        width[j] = (
                            widths[seen - first]
                            if first <= seen < first + rows
                            else ucb_width(alpha, seen)
                        )
                if scan and row & 1:
                    lane_argmax_down(m, r, k, width, best)
                elif scan:
                    lane_argmax(m, r, k, width, best)
                for n in range(lo, hi):
                    j = n - lo
                    if not live[j]:
                        continue
                    s = pick[j] if pick[j] < k else best[j]
                    reward = reward_from(means, bernoulli, sigma, draws[row, j], s)
                    learn_lane(c, tot, m, r, s * LANES + j, reward)
                    samples[n] += 1
                    regret[n] += gaps[s]
                    if trace:
                        trace_out[step - 1, n] = s
            if point < grid.size and step == grid[point]:
                for n in range(lo, hi):
                    out.recorded[n, point] = regret[n]
                point += 1
        if settled:
            for n in range(lo, hi):
                samples[n] += rows
    pos[STEP] = first + rows
    pos[GRID] = point


@njit(cache=True)
def _lockstep(noise, rewards, out, ucb, links, alpha):
    """Full communication on a complete graph with Bernoulli rewards and no faults, where every
    agent ends each exchange with the same counts and sums (its own sample and its N - 1
    neighbours': sums of 0s and 1s, exact in any order), so every agent makes the same choice:
    ``ucb`` has one row, standing for all, which learns the N samples of the arm they all
    chose (``links.lockstep``). The same numbers as the per-agent loop of :func:`ucb_chunk`, once
    per step instead of N times."""
    tally, mean, inv_sqrt = ucb.tally, ucb.mean, ucb.inv_sqrt
    top, samples, untried = ucb.top, ucb.samples, ucb.untried
    block_end, wide, gaps, k = ucb.block_end, ucb.wide, rewards.gaps, ucb.arms
    pos, grid, regret, counters = out.pos, out.grid, out.regret, out.counters
    trace, trace_out = out.trace, out.trace_out
    first, rows, n_agents = pos[STEP], noise.shape[0], noise.shape[1]
    heard = n_agents - 1  # messages each agent sends and receives per step
    bits = heard * links.bits  # and their bits
    for row in range(rows):
        step = first + row + 1
        s = untried[0]
        while s < k and tally[0, s, 1] > 0:
            s += 1
        untried[0] = s
        if s == k:
            seen = samples[0]
            if seen > block_end[0]:
                _open(ucb, 0, alpha, seen)
            s = choose_grouped(top, mean, inv_sqrt, 0, ucb_width(alpha, seen))
        wins = 0.0  # a sum of 0s and 1s: exact in any order
        for n in range(n_agents):
            wins += reward_of(rewards, noise[row, n], s)
        c = tally[0, s, 1] + n_agents
        tally[0, s, 1] = c
        tally[0, s, 0] += wins
        m = tally[0, s, 0] / c  # scalar: here the settle's vector division is on the chain
        r = 1.0 / math.sqrt(c)  # from step to step (1.08 times the time)
        store_played(mean, inv_sqrt, top, 0, s, m, r, wide[0])
        samples[0] += n_agents
        for n in range(n_agents):
            regret[n] += gaps[s]
            counters[SENT, n] += heard
            counters[BITS, n] += bits
            counters[ROUNDS, n] += 1
            counters[RECV, n] += heard
            counters[BITS_RECV, n] += bits
            if trace:
                trace_out[step - 1, n] = s
        if pos[GRID] < grid.size and step == grid[pos[GRID]]:
            record(out)  # regret and bits sent at the grid point (cold: not inlined)
    pos[STEP] = first + rows
