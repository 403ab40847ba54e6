"""The numba kernel: advance every agent of one run through a chunk of steps.

One kernel serves every algorithm (``mode``), so the hot loop (choose, play, learn) is written
once and without helper calls: numba charges reference counting for every array a helper
touches, which would dominate a loop this tight. Helpers run only on cold paths (candidate
rebuilds, phase ends, floods).

State lives in arrays owned by the caller and persists from chunk to chunk; ``pos`` holds
[step, phase, step in phase, next grid point]. Counter rows: messages sent, bits sent,
messages received, bits received, rounds.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from mamab.engine.ucb_kernels import most_played, rebuild_candidates
from mamab.faults import lost

NO_COMMUNICATION, FULL_COMMUNICATION, LCC, RELAY = 0, 1, 2, 3
SENT, BITS, RECV, BITS_RECV, ROUNDS, LOST, BITS_LOST = 0, 1, 2, 3, 4, 5, 6
STEP, PHASE, IN_PHASE, GRID = 0, 1, 2, 3
SMALL_SET = 24  # up to this many slots, scan them all; beyond, the lazy candidates pay


@njit(cache=True)
def _insert_sorted(n, arm, slot_arm, size):
    """Add ``arm`` to agent n's sorted slots unless present."""
    m = size[n]
    at = 0
    while at < m and slot_arm[n, at] < arm:
        at += 1
    if at < m and slot_arm[n, at] == arm:
        return
    for s in range(m, at, -1):
        slot_arm[n, s] = slot_arm[n, s - 1]
    slot_arm[n, at] = arm
    size[n] = m + 1


@njit(cache=True)
def _flood(
    indptr, indices, rounds, pair_bits, counters, known, fresh, nxt, loss, fault_key, step, alive
):
    """Relay: ``rounds`` rounds of forwarding the (origin, arm) pairs first learned the round before."""
    n_agents = known.shape[0]
    known[:] = False
    fresh[:] = False
    for n in range(n_agents):
        known[n, n] = True
        fresh[n, n] = True
    origins = np.empty(n_agents, dtype=np.int64)
    for round_ in range(rounds):
        nxt[:] = False
        for n in range(n_agents):
            if indptr[n + 1] == indptr[n] or not alive[n]:
                continue
            pairs = 0
            for o in range(n_agents):
                if fresh[n, o]:
                    origins[pairs] = o
                    pairs += 1
            if pairs == 0:
                continue
            counters[ROUNDS, n] += 1
            for e in range(indptr[n], indptr[n + 1]):
                v = indices[e]
                counters[SENT, n] += 1
                counters[BITS, n] += pairs * pair_bits
                if not alive[v] or lost(loss, fault_key, step, round_, n, v):
                    counters[LOST, n] += 1
                    counters[BITS_LOST, n] += pairs * pair_bits
                    continue
                counters[RECV, v] += 1
                counters[BITS_RECV, v] += pairs * pair_bits
                for i in range(pairs):
                    o = origins[i]
                    if not known[v, o]:
                        known[v, o] = True
                        nxt[v, o] = True
        fresh, nxt = nxt, fresh


@njit(cache=True)
def _restart_ucb(n, on_block, block, slot_arm, size, count, total, mean, inv_sqrt, in_cand, untried,
                 samples, block_end):  # fmt: skip
    """Agent n starts a fresh UCB: on its block S_n when ``on_block`` (LCC family), else on its slots."""
    if on_block:
        size[n] = block.shape[1]
        slot_arm[n, : block.shape[1]] = block[n]
    count[n, :] = 0
    total[n, :] = 0.0
    mean[n, :] = 0.0
    inv_sqrt[n, :] = 0.0
    in_cand[n, :] = False
    untried[n] = 0
    samples[n] = 0
    block_end[n] = -1


@njit(cache=True)
def _end_phase(mode, pos, phase_len, slot_arm, size, count, total, mean, inv_sqrt, in_cand,
               untried, samples, block_end, block, indptr, indices, relay_rounds, message_bits,
               counters, known, fresh, nxt, recs, loss, fault_key, alive):  # fmt: skip
    """Recommend the most-played arm, exchange, and start every agent's next UCB on S_n ∪ R."""
    n_agents = slot_arm.shape[0]
    step = pos[STEP] + 1
    for n in range(n_agents):
        recs[n] = slot_arm[n, most_played(n, size[n], count)]
    pos[PHASE] += 1
    pos[IN_PHASE] = 0
    more = pos[PHASE] < phase_len.size  # after the last phase, messages are sent but unused
    if more:
        for n in range(n_agents):
            _restart_ucb(n, True, block, slot_arm, size, count, total, mean, inv_sqrt, in_cand, untried,
                         samples, block_end)  # fmt: skip
    if mode == RELAY:
        _flood(
            indptr,
            indices,
            relay_rounds,
            message_bits,
            counters,
            known,
            fresh,
            nxt,
            loss,
            fault_key,
            step,
            alive,
        )
        if more:
            for n in range(n_agents):
                for o in range(n_agents):
                    if o != n and known[n, o]:
                        _insert_sorted(n, recs[o], slot_arm, size)
        return
    for n in range(n_agents):
        degree = indptr[n + 1] - indptr[n]
        if not alive[n]:
            continue  # a dead agent sends nothing
        if degree > 0:
            counters[SENT, n] += degree
            counters[BITS, n] += degree * message_bits
            counters[ROUNDS, n] += 1
        for e in range(indptr[n], indptr[n + 1]):
            v = indices[e]
            if not alive[v] or lost(loss, fault_key, step, 0, n, v):
                counters[LOST, n] += 1
                counters[BITS_LOST, n] += message_bits
                continue
            counters[RECV, v] += 1
            counters[BITS_RECV, v] += message_bits
            if more:
                _insert_sorted(v, recs[n], slot_arm, size)


@njit(cache=True, nogil=True)
def run_chunk(mode, noise, pos, grid, recorded, recorded_bits, regret, counters,
              count, total, mean, inv_sqrt, cand, in_cand,
              untried, samples, n_cand, block_end, bound, block_width,
              slot_arm, size, means, gaps, bernoulli, sigma, alpha,
              phase_len, block, indptr, indices, relay_rounds, message_bits,
              known, fresh, nxt, trace, trace_out, loss, fault_key, crash, back):  # fmt: skip
    """Simulate ``noise.shape[0]`` steps of every agent of one run.

    Agent n is dead during steps crash[n] .. back[n] - 1 and restarts with fresh state at back[n].
    """
    n_agents = slot_arm.shape[0]
    played = np.empty(n_agents, dtype=np.int64)
    rewards = np.empty(n_agents)
    recs = np.empty(n_agents, dtype=np.int64)
    alive = np.ones(n_agents, dtype=np.bool_)
    for row in range(noise.shape[0]):
        width, cached = 0.0, -1
        step = pos[STEP] + 1
        for n in range(n_agents):
            alive[n] = step < crash[n] or step >= back[n]
            if step == back[n]:  # back from a crash: a fresh UCB (on S_n for the LCC family)
                _restart_ucb(n, mode >= LCC, block, slot_arm, size, count, total, mean, inv_sqrt,
                             in_cand, untried, samples, block_end)  # fmt: skip
        for n in range(n_agents):
            if not alive[n]:
                continue  # crashed: plays nothing
            # choose: untried slots first, in order; then the certified lazy UCB argmax
            slot = untried[n]
            while slot < size[n] and count[n, slot] > 0:
                slot += 1
            untried[n] = slot
            if slot == size[n]:
                seen = samples[n]
                if seen != cached:
                    cached = seen
                    width = math.sqrt(alpha * math.log(seen + 1))
                slot = -1
                if size[n] <= SMALL_SET:  # a plain scan beats the candidate bookkeeping
                    value = -math.inf
                    for s in range(size[n]):
                        index = mean[n, s] + width * inv_sqrt[n, s]
                        if index > value:
                            slot, value = s, index
                elif seen <= block_end[n]:
                    best, value = cand[n, 0], -math.inf
                    for c in range(n_cand[n]):
                        s = cand[n, c]
                        index = mean[n, s] + width * inv_sqrt[n, s]
                        if index > value:
                            best, value = s, index
                    if value > bound[n]:
                        slot = best
                if slot < 0:
                    slot, n_cand[n], bound[n], block_end[n], block_width[n] = rebuild_candidates(
                        n, size[n], mean, inv_sqrt, cand, in_cand, width, alpha, seen
                    )
            # play and learn
            arm = slot_arm[n, slot]
            if bernoulli:
                reward = np.float64(noise[row, n] < means[arm])  # branch-free coin
            else:
                reward = means[arm] + sigma * noise[row, n]
            c = count[n, slot] + 1
            count[n, slot] = c
            total[n, slot] += reward
            mean[n, slot] = total[n, slot] / c
            inv_sqrt[n, slot] = 1.0 / math.sqrt(c)
            if (
                size[n] > SMALL_SET and not in_cand[n, slot]
            ):  # a skipped arm changed: keep the bound a bound
                bound[n] = max(bound[n], mean[n, slot] + block_width[n] * inv_sqrt[n, slot])
            samples[n] += 1
            regret[n] += gaps[arm]
            played[n] = arm
            rewards[n] = reward
            if trace:
                trace_out[pos[STEP], n] = arm
        if mode == FULL_COMMUNICATION:
            # each sender's (arm, reward) reaches its neighbours in increasing sender order
            for sender in range(n_agents):
                degree = indptr[sender + 1] - indptr[sender]
                if degree == 0 or not alive[sender]:
                    continue
                counters[SENT, sender] += degree
                counters[BITS, sender] += degree * message_bits
                counters[ROUNDS, sender] += 1
                slot, reward = played[sender], rewards[sender]  # slot s is arm s here
                for e in range(indptr[sender], indptr[sender + 1]):
                    v = indices[e]
                    if not alive[v] or lost(loss, fault_key, step, 0, sender, v):
                        counters[LOST, sender] += 1
                        counters[BITS_LOST, sender] += message_bits
                        continue
                    c = count[v, slot] + 1
                    count[v, slot] = c
                    total[v, slot] += reward
                    mean[v, slot] = total[v, slot] / c
                    inv_sqrt[v, slot] = 1.0 / math.sqrt(c)
                    if size[v] > SMALL_SET and not in_cand[v, slot]:
                        bound[v] = max(bound[v], mean[v, slot] + block_width[v] * inv_sqrt[v, slot])
                    samples[v] += 1
                    counters[RECV, v] += 1
                    counters[BITS_RECV, v] += message_bits
        elif mode >= LCC:
            pos[IN_PHASE] += 1
            if pos[IN_PHASE] == phase_len[pos[PHASE]]:
                _end_phase(mode, pos, phase_len, slot_arm, size, count, total, mean, inv_sqrt,
                           in_cand, untried, samples, block_end, block, indptr, indices,
                           relay_rounds, message_bits, counters, known, fresh, nxt, recs, loss,
                           fault_key, alive)  # fmt: skip
        pos[STEP] += 1
        if pos[GRID] < grid.size and pos[STEP] == grid[pos[GRID]]:
            recorded[:, pos[GRID]] = regret
            recorded_bits[:, pos[GRID]] = counters[BITS]
            pos[GRID] += 1
