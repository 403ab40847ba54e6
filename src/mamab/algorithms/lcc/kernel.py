"""The numba kernel: advance every agent of one run through a chunk of steps.

One kernel serves every algorithm (``mode``), so the hot loop (choose, play, learn) is written
once and without helper calls: numba charges reference counting for every array a helper
touches, which would dominate a loop this tight. Helpers run only on cold paths (candidate
rebuilds, phase ends, floods).

State lives in arrays owned by the caller and persists from chunk to chunk; ``pos`` holds
[step, phase, step in phase, next grid point]. Counter rows: messages sent, bits sent,
messages received, bits received, rounds, messages lost, bits lost.

Messages delayed by the fault hash wait in a buffer owned by the caller (rows: sender, receiver,
bits, arm; a parallel array holds rewards) and arrive at the next step's exchange, before its own
messages, as the reference host delivers them.

Malicious agents (``liar``) of the LCC family forge every recommendation they send, per receiver,
with :func:`mamab.engine.attack_kernel.forged`; a relay forges its own (origin, arm) pair and
forwards the others as received, so the flood keeps the arm each agent first heard per origin
(``heard``). LCC-UCB-ROBUST (mode ``ROBUST``) keeps, per directed CSR edge (receiver n's e-th
neighbour as sender, e in indptr[n]..indptr[n+1]), the offences, the phase a block lasts until and
the recommendation taken for the running phase (``trust``): O(E) memory, not O(N²). A message from
n to its neighbour v = indices[e] is judged on v's edge ``reverse[e]``.
"""

from __future__ import annotations

import math

import numpy as np

from mamab.algorithms.lcc.variants import FULL_COMMUNICATION, LCC, NO_COMMUNICATION, RELAY, ROBUST
from mamab.engine.attack_kernel import forged
from mamab.engine.kernel_api import (
    BITS,
    BITS_RECV,
    GRID,
    IN_PHASE,
    PHASE,
    RECV,
    ROUNDS,
    SENT,
    STEP,
    arrive,
    fate_to,
    route,
)
from mamab.engine.ucb_kernels import most_played, rebuild_candidates
from mamab.faults import DELAY, DELIVER, LOSE, fate
from mamab.kernel_cache import njit

__all__ = ["FULL_COMMUNICATION", "LCC", "NO_COMMUNICATION", "RELAY", "ROBUST", "run_chunk"]
OFFENCES, BLOCKED, TAKEN = 0, 1, 2  # rows of the robust agents' ``trust`` (3, CSR edges)
SMALL_SET = 24  # up to this many slots, scan them all; beyond, the lazy candidates pay


@njit(cache=True)
def _join(n, arm, slot_arm, size, count, total, mean, inv_sqrt, untried, block_end):
    """Agent n's UCB takes ``arm`` (unless it has it) in its sorted slots, with no samples."""
    m = size[n]
    at = 0
    while at < m and slot_arm[n, at] < arm:
        at += 1
    if at < m and slot_arm[n, at] == arm:
        return
    for s in range(m, at, -1):
        slot_arm[n, s] = slot_arm[n, s - 1]
        count[n, s] = count[n, s - 1]
        total[n, s] = total[n, s - 1]
        mean[n, s] = mean[n, s - 1]
        inv_sqrt[n, s] = inv_sqrt[n, s - 1]
    slot_arm[n, at] = arm
    count[n, at] = 0
    total[n, at] = 0.0
    mean[n, at] = 0.0
    inv_sqrt[n, at] = 0.0
    size[n] = m + 1
    untried[n] = 0  # the new arm is tried first; then the candidates are rebuilt
    block_end[n] = -1


@njit(cache=True)
def _flood(
    indptr,
    indices,
    rounds,
    pair_bits,
    counters,
    known,
    fresh,
    nxt,
    loss,
    delay,
    fault_key,
    step,
    alive,
    recs,
    late,
    late_reward,
    late_n,
    late_pair,
    heard,
    liar,
    attack,
    attack_arm,
    attack_pool,
    attack_key,
):
    """Relay: ``rounds`` rounds of forwarding the (origin, arm) pairs first learned the round before.

    ``heard[n, o]`` is the arm agent n first learned for origin o (its own: its recommendation);
    a liar's own pair is forged per receiver. A delayed batch is held; its pairs wait in
    ``late_pair[receiver, origin]`` (the arm of the first batch sent, or -1).
    """
    n_agents = known.shape[0]
    known[:] = False
    fresh[:] = False
    for n in range(n_agents):
        known[n, n] = True
        fresh[n, n] = True
        heard[n, n] = recs[n]
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
                f = fate_to(alive, loss, delay, fault_key, step, round_, n, v)
                if f == DELAY:
                    for i in range(pairs):
                        o = origins[i]
                        if late_pair[v, o] < 0:  # held batches arrive in the order sent
                            late_pair[v, o] = _relayed(
                                heard,
                                liar,
                                attack,
                                attack_arm,
                                attack_pool,
                                attack_key,
                                step,
                                n,
                                v,
                                o,
                            )
                if not route(
                    counters, f, n, v, pairs * pair_bits, -1, 0.0, late, late_reward, late_n
                ):
                    continue
                for i in range(pairs):
                    o = origins[i]
                    if not known[v, o]:
                        known[v, o] = True
                        nxt[v, o] = True
                        heard[v, o] = _relayed(
                            heard, liar, attack, attack_arm, attack_pool, attack_key, step, n, v, o
                        )
        fresh, nxt = nxt, fresh


@njit(cache=True, inline="always")
def _relayed(heard, liar, attack, attack_arm, attack_pool, attack_key, step, sender, receiver, o):
    """The arm ``sender`` relays to ``receiver`` for origin ``o``: what it first heard, or, for a
    liar's own pair, the attack's arm."""
    arm = heard[sender, o]
    if o == sender and liar[sender]:
        return forged(attack, attack_arm, attack_pool, attack_key, step, sender, receiver, arm)
    return arm


@njit(cache=True, inline="always")
def _sent_arm(recs, liar, attack, attack_arm, attack_pool, attack_key, step, sender, receiver):
    """The recommendation ``sender`` sends ``receiver``: its most-played arm, or a liar's forgery."""
    if liar[sender]:
        return forged(
            attack, attack_arm, attack_pool, attack_key, step, sender, receiver, recs[sender]
        )
    return recs[sender]


@njit(cache=True, inline="always")
def _takes(trust, edge, arm, phase):
    """Whether a robust receiver joins, for ``phase``, the recommendation ``arm`` arriving on its
    CSR ``edge``: not while that sender is blocked; what it takes is remembered."""
    if phase < trust[BLOCKED, edge]:
        return False
    trust[TAKEN, edge] = arm
    return True


@njit(cache=True, inline="always")
def _edge_of(indptr, indices, receiver, sender):
    """The receiver's CSR edge of ``sender`` (rows are sorted): for held messages, which do not
    carry their edge."""
    row = indices[indptr[receiver] : indptr[receiver + 1]]
    return indptr[receiver] + np.searchsorted(row, sender)


@njit(cache=True)
def _judge(trust, recs, indptr, phase):
    """Robust agents, at the end of ``phase``: a sender whose recommendation taken for it is not
    the agent's most-played arm is blocked for as many phases as it has offended; taken is cleared.

    A dead agent is judged too (the reference's does not end the phase): harmless, its state is
    wiped when it recovers (:func:`_forget_trust`) and unused if it never does."""
    for n in range(recs.shape[0]):
        for e in range(indptr[n], indptr[n + 1]):
            taken = trust[TAKEN, e]
            if taken >= 0 and taken != recs[n]:
                trust[OFFENCES, e] += 1
                trust[BLOCKED, e] = phase + 1 + trust[OFFENCES, e]
            trust[TAKEN, e] = -1


@njit(cache=True)
def _forget_trust(trust, indptr, n):
    """Robust agent n after a crash: no offences, no blocks, nothing taken on any of its edges."""
    first, last = indptr[n], indptr[n + 1]
    trust[OFFENCES, first:last] = 0
    trust[BLOCKED, first:last] = 0
    trust[TAKEN, first:last] = -1


@njit(cache=True)
def _restart_ucb(
    n,
    on_block,
    block,
    slot_arm,
    size,
    count,
    total,
    mean,
    inv_sqrt,
    in_cand,
    untried,
    samples,
    block_end,
):
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
def _end_phase(
    mode,
    pos,
    phase_len,
    slot_arm,
    size,
    count,
    total,
    mean,
    inv_sqrt,
    in_cand,
    untried,
    samples,
    block_end,
    block,
    indptr,
    indices,
    relay_rounds,
    message_bits,
    counters,
    known,
    fresh,
    nxt,
    recs,
    loss,
    delay,
    fault_key,
    alive,
    late,
    late_reward,
    late_n,
    late_pair,
    heard,
    liar,
    attack,
    attack_arm,
    attack_pool,
    attack_key,
    trust,
    reverse,
):
    """Recommend the most-played arm, exchange, and start every agent's next UCB on S_n ∪ R."""
    n_agents = slot_arm.shape[0]
    step = pos[STEP] + 1
    for n in range(n_agents):
        recs[n] = slot_arm[n, most_played(n, size[n], count)]
    if mode == ROBUST:
        _judge(trust, recs, indptr, pos[PHASE])
    pos[PHASE] += 1
    pos[IN_PHASE] = 0
    more = pos[PHASE] < phase_len.size  # after the last phase, messages are sent but unused
    if more:
        for n in range(n_agents):
            _restart_ucb(
                n,
                True,
                block,
                slot_arm,
                size,
                count,
                total,
                mean,
                inv_sqrt,
                in_cand,
                untried,
                samples,
                block_end,
            )
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
            delay,
            fault_key,
            step,
            alive,
            recs,
            late,
            late_reward,
            late_n,
            late_pair,
            heard,
            liar,
            attack,
            attack_arm,
            attack_pool,
            attack_key,
        )
        if more:
            for n in range(n_agents):
                for o in range(n_agents):
                    if o != n and known[n, o]:
                        _join(
                            n,
                            heard[n, o],
                            slot_arm,
                            size,
                            count,
                            total,
                            mean,
                            inv_sqrt,
                            untried,
                            block_end,
                        )
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
            arm = _sent_arm(recs, liar, attack, attack_arm, attack_pool, attack_key, step, n, v)
            f = fate_to(alive, loss, delay, fault_key, step, 0, n, v)
            if (
                route(counters, f, n, v, message_bits, arm, 0.0, late, late_reward, late_n)
                and more
                and (mode != ROBUST or _takes(trust, reverse[e], arm, pos[PHASE]))
            ):
                _join(v, arm, slot_arm, size, count, total, mean, inv_sqrt, untried, block_end)


@njit(cache=True)
def _late_recommendations(
    mode,
    late,
    late_n,
    late_pair,
    counters,
    alive,
    ended,
    known,
    slot_arm,
    size,
    count,
    total,
    mean,
    inv_sqrt,
    untried,
    block_end,
    heard,
    trust,
    phase,
    indptr,
    indices,
):
    """Recommendations held since the last exchange arrive: if the phase they were meant for is
    still running (not ``ended`` with this step), the receiver's UCB takes their arms."""
    for i in range(late_n[0]):
        if not arrive(late, i, counters, alive) or ended or mode == RELAY:
            continue
        sender, receiver, arm = late[i, 0], late[i, 1], late[i, 3]
        if mode == ROBUST:
            edge = _edge_of(indptr, indices, receiver, sender)
            if not _takes(trust, edge, arm, phase):
                continue
        _join(receiver, arm, slot_arm, size, count, total, mean, inv_sqrt, untried, block_end)
    late_n[0] = 0
    if mode != RELAY:
        return
    n_agents = slot_arm.shape[0]
    for v in range(n_agents):
        for o in range(n_agents):
            arm = late_pair[v, o]
            if arm < 0:
                continue
            late_pair[v, o] = -1
            if alive[v] and not ended and o != v and not known[v, o]:
                known[v, o] = True  # late, after the flood: used, not forwarded
                heard[v, o] = arm
                _join(v, arm, slot_arm, size, count, total, mean, inv_sqrt, untried, block_end)


@njit(cache=True, inline="always")
def _learn(
    n, slot, reward, count, total, mean, inv_sqrt, size, in_cand, bound, block_width, samples
):
    """Agent n learns one (own or neighbour's) sample of the arm in ``slot``."""
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


@njit(cache=True, nogil=True)
def run_chunk(
    mode,
    noise,
    pos,
    grid,
    recorded,
    recorded_bits,
    regret,
    counters,
    count,
    total,
    mean,
    inv_sqrt,
    cand,
    in_cand,
    untried,
    samples,
    n_cand,
    block_end,
    bound,
    block_width,
    slot_arm,
    size,
    means,
    gaps,
    bernoulli,
    sigma,
    alpha,
    phase_len,
    block,
    indptr,
    indices,
    relay_rounds,
    message_bits,
    known,
    fresh,
    nxt,
    trace,
    trace_out,
    loss,
    delay,
    fault_key,
    crash,
    back,
    late,
    late_reward,
    late_n,
    late_pair,
    heard,
    liar,
    attack,
    attack_arm,
    attack_pool,
    attack_key,
    trust,
    reverse,
):
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
                _restart_ucb(
                    n,
                    mode >= LCC,
                    block,
                    slot_arm,
                    size,
                    count,
                    total,
                    mean,
                    inv_sqrt,
                    in_cand,
                    untried,
                    samples,
                    block_end,
                )
                if mode == ROBUST:
                    _forget_trust(trust, indptr, n)
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
            c = count[n, slot] + 1  # as in _learn, written out: this is the hottest loop
            count[n, slot] = c
            total[n, slot] += reward
            mean[n, slot] = total[n, slot] / c
            inv_sqrt[n, slot] = 1.0 / math.sqrt(c)
            if size[n] > SMALL_SET and not in_cand[n, slot]:
                bound[n] = max(bound[n], mean[n, slot] + block_width[n] * inv_sqrt[n, slot])
            samples[n] += 1
            regret[n] += gaps[arm]
            played[n] = arm
            rewards[n] = reward
            if trace:
                trace_out[pos[STEP], n] = arm
        if mode == FULL_COMMUNICATION:
            for i in range(late_n[0]):  # samples held since the last exchange, in the order sent
                if arrive(late, i, counters, alive):
                    _learn(
                        late[i, 1],
                        late[i, 3],
                        late_reward[i],
                        count,
                        total,
                        mean,
                        inv_sqrt,
                        size,
                        in_cand,
                        bound,
                        block_width,
                        samples,
                    )
            late_n[0] = 0
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
                    f = fate(loss, delay, fault_key, step, 0, sender, v)
                    if f != DELIVER or not alive[v]:  # array helpers only off the plain path
                        route(
                            counters,
                            LOSE if f == DELIVER else f,
                            sender,
                            v,
                            message_bits,
                            slot,
                            reward,
                            late,
                            late_reward,
                            late_n,
                        )
                        continue
                    c = count[v, slot] + 1  # as in _learn, written out: once per edge and step
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
            ended = pos[IN_PHASE] == phase_len[pos[PHASE]]
            if late_n[0] > 0:
                _late_recommendations(
                    mode,
                    late,
                    late_n,
                    late_pair,
                    counters,
                    alive,
                    ended,
                    known,
                    slot_arm,
                    size,
                    count,
                    total,
                    mean,
                    inv_sqrt,
                    untried,
                    block_end,
                    heard,
                    trust,
                    pos[PHASE],
                    indptr,
                    indices,
                )
            if ended:
                _end_phase(
                    mode,
                    pos,
                    phase_len,
                    slot_arm,
                    size,
                    count,
                    total,
                    mean,
                    inv_sqrt,
                    in_cand,
                    untried,
                    samples,
                    block_end,
                    block,
                    indptr,
                    indices,
                    relay_rounds,
                    message_bits,
                    counters,
                    known,
                    fresh,
                    nxt,
                    recs,
                    loss,
                    delay,
                    fault_key,
                    alive,
                    late,
                    late_reward,
                    late_n,
                    late_pair,
                    heard,
                    liar,
                    attack,
                    attack_arm,
                    attack_pool,
                    attack_key,
                    trust,
                    reverse,
                )
        pos[STEP] += 1
        if pos[GRID] < grid.size and pos[STEP] == grid[pos[GRID]]:
            recorded[:, pos[GRID]] = regret
            recorded_bits[:, pos[GRID]] = counters[BITS]
            pos[GRID] += 1
