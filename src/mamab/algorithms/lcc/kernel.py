"""The numba kernel: advance every agent of one run through a chunk of steps.

One kernel serves every algorithm of the LCC family (``mode``: LCC-UCB and LCC-UCB-GRAPH,
relay, robust), so the hot loop (choose, play, learn) is written
once and without helper calls: numba charges reference counting for every array a helper
touches, which would dominate a loop this tight. Helpers run only on cold paths (phase ends,
floods).

Within a phase agents learn only their own samples, so an agent holding at most LANE_SET arms
(beyond, the lazy candidates of :mod:`mamab.engine.ucb_kernels`) chooses by a scan of its tile
of LANES agents in vector lanes (:func:`mamab.engine.lanes.lane_argmax`), on an interleaved copy
of the means and 1/sqrt n (``lane_mean``, ``lane_inv``) that every write of theirs keeps equal.
Its arms change only at a phase's end (:func:`_insert`), when a late recommendation arrives
(:func:`_join`) and when it restarts after a crash; each copies the agent's row again
(:func:`_mirror`). A tile is scanned once per step, when its first agent that needs the scan
chooses: the agents after it in the tile have not played yet, so the scan sees their state as
their own turn will. Sets of a few arms scan in lanes too: a plain scan of each agent's set (a
chain of compares, one per arm) took 1.0–1.6 times the time on the paper's panels (LCC-UCB at
(10,200) 1.6, the relay 1.1–1.25; benchmarks/README.md, fourteenth round).

Steps run in windows (:func:`_quiet_rows`): the steps up to the phase's end (or the chunk's) in
which no agent crashes or comes back and no held message arrives. Within one every agent learns
only its own samples, so the window is played tile by tile, each tile's steps one after the
other with its lanes in the first-level cache (the relay's phase of 126 arms at N = 150: 0.75
times the time per step). A window's steps then end in order: exchanges, regret and bits at
grid points. Once every agent of a tile has tried its arms and has seen as many samples as the
others, it stays so until the window ends: the tile then takes one width and one scan a step,
with no check per agent (the relay 0.93 times the time), and learns in its lanes alone, as
agents alone do (:func:`_to_lanes` copies its arms, counts and sums there; its rows, which a
phase's end and a late recommendation read, catch up when the window ends: :func:`_from_lanes`;
the relay 0.84-0.90 times the time again), its agents' samples seen counted then too (the
family 0.94-0.98). The widths of a window's steps are computed once for
every tile whose agents have seen as many samples as agent 0 (each tile's scan waited on its
own: 0.91-0.95), and a ready tile's 1/sqrt n is read from a table of the run's counts
(``Plan.inv_root``: LCC-UCB-GRAPH 0.88). A ready tile of at most SMALL_SET slots (16 where
numba compiles for AVX-512, else none) plays each step in vectors, slot by slot
(:func:`mamab.engine.lanes.small_tile_step`: its arms' means and gaps in lanes too, its draws
copied out of the noise block when it becomes ready): the scalar learning wrote single
entries that the next step's vector scan had to wait for (LCC-UCB-GRAPH 0.79-0.89 times the
time on the sparse panels, the relay 0.90-0.98, LCC-UCB (20,100) 0.85-0.89, the other complete
panels 0.96-1.01).

The kernel takes few named arguments (kernel API, ``mamab.engine.kernel_api``): the noise block,
the run's arms (``Rewards``), recording (``Out``: ``pos`` holds [step, phase, step in phase, next
grid point]), faults (``Faults``), held messages (``Held``) and liars (``Attack``), and the
family's own tuples: every agent's UCB over its slots (:class:`Ucb`), the run's constants
(:class:`Plan`) and what the exchanges keep between them (:class:`Exchange`). State lives in
arrays owned by the driver and persists from chunk to chunk. The entry kernel binds the fields
it reads in its hot loop to locals once per block.

Messages delayed by the fault hash wait in the ``Held`` buffer (rows: sender, receiver, bits,
arm; a parallel array holds rewards) and arrive at the next step's exchange, before its own
messages, as the reference host delivers them.

Malicious agents (``liar``) of the LCC family forge every recommendation they send, per receiver,
with :func:`mamab.engine.attack_kernel.forged_by`; a relay forges its own (origin, arm) pair and
forwards the others as received, so the flood keeps the arm each agent first heard per origin
(``heard``). LCC-UCB-ROBUST (mode ``ROBUST``) keeps, per directed CSR edge (receiver n's e-th
neighbour as sender, e in indptr[n]..indptr[n+1]), the offences, the phase a block lasts until and
the recommendation taken for the running phase (``trust``): O(E) memory, not O(N²). A message from
n to its neighbour v = indices[e] is judged on v's edge ``reverse[e]``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mamab.algorithms.lcc.variants import LCC, RELAY, ROBUST
from mamab.engine.attack_kernel import forged_by
from mamab.engine.kernel_api import (
    BITS,
    GRID,
    IN_PHASE,
    PHASE,
    ROUNDS,
    SENT,
    STEP,
    arrive,
    count_sent,
    fate_to,
    pulled,
    reward_from,
    route,
    step_ended,
)
from mamab.engine.lanes import LANES, SMALL_SET, lane_argmax, small_tile_step
from mamab.engine.ucb_kernels import (
    certified_candidate,
    most_played,
    rebuild_candidates,
    ucb_update,
    ucb_width,
)
from mamab.engine.vector_rows import prefetch_line
from mamab.faults import DELAY
from mamab.kernel_cache import njit, njit_as

__all__ = [
    "LCC",
    "RELAY",
    "ROBUST",
    "Exchange",
    "Plan",
    "Ucb",
    "inv_root_table",
    "run_chunk",
]
OFFENCES, BLOCKED, TAKEN = 0, 1, 2  # rows of the robust agents' ``trust`` (3, CSR edges)
LANE_SET = 256  # sets up to this many scan in vector lanes; beyond, lazy candidates (measured:
# equal at 500 slots)


class Ucb(NamedTuple):
    """Every agent's UCB over its slots (agents, slots), sorted by arm, its copy in vector lanes
    (agent n = tile n // LANES, lane n % LANES; :mod:`mamab.engine.lanes`) and the lazy argmax's
    candidates (:mod:`mamab.engine.ucb_kernels`), for sets beyond LANE_SET."""

    slot_arm: np.ndarray  # (agents, slots) the arm in each slot
    size: np.ndarray  # (agents,) slots in use
    count: np.ndarray  # (agents, slots) samples of each slot's arm
    total: np.ndarray  # ... their sum
    mean: np.ndarray
    inv_sqrt: np.ndarray  # 1 / sqrt(count)
    untried: np.ndarray  # (agents,) the lowest slot maybe never sampled
    samples: np.ndarray  # (agents,) samples seen (own and neighbours')
    lane_mean: np.ndarray  # (tiles, slots * LANES) mean of slot s of lane j at s·LANES + j,
    # -inf past the agent's size (and for lanes past the last agent): never the maximum
    lane_inv: np.ndarray  # (tiles, slots * LANES) its 1 / sqrt(count) (0 past the size)
    lane_best: np.ndarray  # (tiles, LANES) each lane's first maximum at the tile's last scan
    scanned: np.ndarray  # (tiles,) the step of that scan
    tile_arm: np.ndarray  # (slots * LANES,) a ready tile's arms in lanes (_to_lanes)
    tile_count: np.ndarray  # ... their counts
    tile_total: np.ndarray  # ... their sums
    tile_arm_mean: np.ndarray  # ... their arms' means (small sets: small_tile_step)
    tile_arm_gap: np.ndarray  # ... and gaps
    cand: np.ndarray  # (agents, slots) the candidate slots of the running block
    in_cand: np.ndarray  # (agents, slots) the slot is a candidate
    n_cand: np.ndarray  # (agents,) candidates in use
    block_end: np.ndarray  # (agents,) the sample count at which the block ends (-1: none)
    bound: np.ndarray  # (agents,) the largest index bound of the skipped slots
    block_width: np.ndarray  # (agents,) the block's width bound


class Plan(NamedTuple):
    """The run's constants: the variant, the index, the phases, the graph and message sizes."""

    mode: int  # mamab.algorithms.lcc.variants: LCC, RELAY or ROBUST
    alpha: float
    phase_len: np.ndarray  # steps of each phase (the LCC family)
    block: np.ndarray  # (agents, block size) each agent's own arms S_n
    indptr: np.ndarray  # the graph, CSR
    indices: np.ndarray
    reverse: np.ndarray  # (CSR edges,) the edge's opposite (lcc-ucb-robust), else a placeholder
    relay_rounds: int  # rounds of a relay flood
    message_bits: int
    inv_root: np.ndarray  # 1 / sqrt(c) for the counts c below its size (:func:`inv_root_table`)


#: Counts below this have their 1 / sqrt(count) in ``Plan.inv_root`` (512 KB at most).
ROOT_TABLE = 1 << 16


def inv_root_table(horizon: int) -> np.ndarray:
    """1 / sqrt(c) for c = 0 .. min(horizon, ROOT_TABLE - 1) (0 at c = 0): IEEE square root and
    division, each correctly rounded, so every entry is the kernel's ``1.0 / math.sqrt(c)``.
    Computed in place: each temporary of 512 KB costs its page faults, every run (0.86 ms a
    run at T = 10^5 with two of them, 0.10 ms without)."""
    table = np.arange(min(horizon, ROOT_TABLE - 1) + 1, dtype=np.float64)
    np.sqrt(table[1:], out=table[1:])
    np.divide(1.0, table[1:], out=table[1:])
    return table


class Exchange(NamedTuple):
    """What the exchanges keep between them: the relay's flood and its held pairs, and the robust
    agents' trust per CSR edge ((1, 1)/(3, 1) placeholders for the other variants)."""

    known: np.ndarray  # (agents, agents) the relay: n knows origin o's recommendation
    fresh: np.ndarray  # (agents, agents) ... learned the round before (to forward)
    nxt: np.ndarray  # (agents, agents) ... learned this round
    late_pair: np.ndarray  # (agents, agents) the arm of a held pair for (receiver, origin), or -1
    heard: np.ndarray  # (agents, agents) the arm n first heard for origin o
    trust: np.ndarray  # (3, CSR edges) rows OFFENCES, BLOCKED, TAKEN


@njit(cache=True)
def _join(ucb, n, arm):
    """Agent n's UCB takes ``arm`` (unless it has it) in its sorted slots, with no samples."""
    slot_arm, count, total, mean, inv_sqrt = (
        ucb.slot_arm,
        ucb.count,
        ucb.total,
        ucb.mean,
        ucb.inv_sqrt,
    )
    m = ucb.size[n]
    at = _insert(slot_arm, ucb.size, n, arm)
    if at < 0:
        return
    for s in range(m, at, -1):  # the samples follow their arms
        count[n, s] = count[n, s - 1]
        total[n, s] = total[n, s - 1]
        mean[n, s] = mean[n, s - 1]
        inv_sqrt[n, s] = inv_sqrt[n, s - 1]
    count[n, at] = 0
    total[n, at] = 0.0
    mean[n, at] = 0.0
    inv_sqrt[n, at] = 0.0
    ucb.untried[n] = 0  # the new arm is tried first; then the candidates are rebuilt
    ucb.block_end[n] = -1
    _mirror(ucb, n)


@njit(cache=True, inline="always")
def _insert(slot_arm, size, n, arm):
    """Agent n's sorted slots take ``arm`` unless they hold it, the slots after it moving up one;
    returns its slot, or -1 if it was held. Only the arms move: enough on a UCB just restarted,
    whose every slot has no samples (:func:`_join` moves the samples too)."""
    m = size[n]
    at = _place(slot_arm, m, n, arm)
    if at < m and slot_arm[n, at] == arm:
        return -1
    for s in range(m, at, -1):
        slot_arm[n, s] = slot_arm[n, s - 1]
    slot_arm[n, at] = arm
    size[n] = m + 1
    return at


@njit(cache=True, inline="always")
def _place(slot_arm, m, n, arm):
    """Where ``arm`` is, or belongs, among agent n's first m slots (sorted by arm)."""
    at = 0
    while at < m and slot_arm[n, at] < arm:
        at += 1
    return at


@njit(cache=True)
def _mirror(ucb, n):
    """Agent n's lane of its tile copies its slots again (cold path: its slots moved)."""
    tile, lane = n // LANES, n % LANES
    lane_mean, lane_inv, size = ucb.lane_mean[tile], ucb.lane_inv[tile], ucb.size[n]
    for s in range(ucb.mean.shape[1]):
        e = s * LANES + lane
        lane_mean[e] = ucb.mean[n, s] if s < size else -math.inf
        lane_inv[e] = ucb.inv_sqrt[n, s] if s < size else 0.0


@njit(cache=True)
def _to_lanes(ucb, tile, hi, means, gaps):
    """The agents of a tile (up to ``hi``) copy their arms, counts and sums, and their arms'
    means and gaps, to lanes (slot s of lane j at s·LANES + j), where a ready tile learns until
    its window ends."""
    for n in range(tile * LANES, hi):
        j = n - tile * LANES
        for s in range(ucb.size[n]):
            e = s * LANES + j
            arm = ucb.slot_arm[n, s]
            ucb.tile_arm[e] = arm
            ucb.tile_count[e] = ucb.count[n, s]
            ucb.tile_total[e] = ucb.total[n, s]
            ucb.tile_arm_mean[e] = means[arm]
            ucb.tile_arm_gap[e] = gaps[arm]


@njit(cache=True)
def _from_lanes(ucb, tile, hi, tile_count, tile_total):
    """The agents of a tile (up to ``hi``) take back their counts, sums, means and 1/sqrt n from
    lanes (:func:`_to_lanes`)."""
    for n in range(tile * LANES, hi):
        j = n - tile * LANES
        for s in range(ucb.size[n]):
            e = s * LANES + j
            ucb.count[n, s] = tile_count[e]
            ucb.total[n, s] = tile_total[e]
            ucb.mean[n, s] = ucb.lane_mean[tile, e]
            ucb.inv_sqrt[n, s] = ucb.lane_inv[tile, e]


@njit(cache=True)
def _flood(plan, counters, ex, held, faults, attack, step, alive, recs):
    """Relay: ``plan.relay_rounds`` rounds of forwarding the (origin, arm) pairs first learned
    the round before.

    ``heard[n, o]`` is the arm agent n first learned for origin o (its own: its recommendation);
    a liar's own pair is forged per receiver. A delayed batch is held; its pairs wait in
    ``late_pair[receiver, origin]`` (the arm of the first batch sent, or -1).
    """
    indptr, indices, pair_bits = plan.indptr, plan.indices, plan.message_bits
    known, fresh, nxt, heard, late_pair = ex.known, ex.fresh, ex.nxt, ex.heard, ex.late_pair
    n_agents = known.shape[0]
    known[:] = False
    fresh[:] = False
    for n in range(n_agents):
        known[n, n] = True
        fresh[n, n] = True
        heard[n, n] = recs[n]
    origins = np.empty(n_agents, dtype=np.int64)
    for round_ in range(plan.relay_rounds):
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
                count_sent(counters, n, pairs * pair_bits)
                f = fate_to(alive, faults.loss, faults.delay, faults.key, step, round_, n, v)
                if f == DELAY:
                    for i in range(pairs):
                        o = origins[i]
                        if late_pair[v, o] < 0:  # held batches arrive in the order sent
                            late_pair[v, o] = _relayed(heard, attack, step, n, v, o)
                if not route(
                    counters,
                    f,
                    n,
                    v,
                    pairs * pair_bits,
                    -1,
                    0.0,
                    held.late,
                    held.late_reward,
                    held.late_n,
                ):
                    continue
                for i in range(pairs):
                    o = origins[i]
                    if not known[v, o]:
                        known[v, o] = True
                        nxt[v, o] = True
                        heard[v, o] = _relayed(heard, attack, step, n, v, o)
        fresh, nxt = nxt, fresh


@njit(cache=True, inline="always")
def _relayed(heard, attack, step, sender, receiver, o):
    """The arm ``sender`` relays to ``receiver`` for origin ``o``: what it first heard, or, for a
    liar's own pair, the attack's arm."""
    arm = heard[sender, o]
    if o == sender:
        return forged_by(attack, step, sender, receiver, arm)
    return arm


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
def _quiet_rows(crash, back, first, most):
    """How many rows from step ``first`` on (at most ``most``) no agent crashes or comes back in
    after the first: agents then play those rows tile by tile, a tile's state in cache, since
    within a phase each learns only its own samples; 1 if only the first."""
    span = most
    for n in range(crash.size):
        if crash[n] > first:
            span = min(span, crash[n] - first)
        elif back[n] > first:
            span = min(span, back[n] - first)
    return max(span, 1)


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
def _restart_ucb(ucb, block, first, last):
    """Agents first .. last - 1 start a fresh UCB on their blocks S_n (what they had heard is
    forgotten): every slot without samples. The lane copy is left to the caller
    (:func:`_mirror`, once the agent's arms are final)."""
    slot_arm, count, total = ucb.slot_arm, ucb.count, ucb.total
    mean, inv_sqrt, in_cand = ucb.mean, ucb.inv_sqrt, ucb.in_cand
    for n in range(first, last):
        ucb.size[n] = block.shape[1]
        for s in range(block.shape[1]):
            slot_arm[n, s] = block[n, s]
        for s in range(slot_arm.shape[1]):
            count[n, s] = 0
            total[n, s] = 0.0
            mean[n, s] = 0.0
            inv_sqrt[n, s] = 0.0
            in_cand[n, s] = False
        ucb.untried[n] = 0
        ucb.samples[n] = 0
        ucb.block_end[n] = -1


@njit(cache=True)
def _end_phase(out, ucb, plan, ex, held, faults, attack, recs, alive):
    """Recommend the most-played arm, exchange, and start every agent's next UCB on S_n ∪ R."""
    pos, counters, mode = out.pos, out.counters, plan.mode
    indptr, indices, message_bits = plan.indptr, plan.indices, plan.message_bits
    n_agents = ucb.slot_arm.shape[0]
    step = pos[STEP] + 1
    for n in range(n_agents):
        recs[n] = ucb.slot_arm[n, most_played(n, ucb.size[n], ucb.count)]
    if mode == ROBUST:
        _judge(ex.trust, recs, indptr, pos[PHASE])
    pos[PHASE] += 1
    pos[IN_PHASE] = 0
    more = pos[PHASE] < plan.phase_len.size  # after the last phase, messages are sent but unused
    # every UCB restarts before the arms heard join it (_insert), then its lanes copy it once
    slot_arm, size = ucb.slot_arm, ucb.size
    if more:
        _restart_ucb(ucb, plan.block, 0, n_agents)
    if mode == RELAY:
        _flood(plan, counters, ex, held, faults, attack, step, alive, recs)
        if more:
            known, heard = ex.known, ex.heard
            for n in range(n_agents):
                for o in range(n_agents):
                    if o != n and known[n, o]:
                        _insert(slot_arm, size, n, heard[n, o])
                _mirror(ucb, n)
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
            arm = forged_by(attack, step, n, v, recs[n])
            f = fate_to(alive, faults.loss, faults.delay, faults.key, step, 0, n, v)
            if (
                route(
                    counters,
                    f,
                    n,
                    v,
                    message_bits,
                    arm,
                    0.0,
                    held.late,
                    held.late_reward,
                    held.late_n,
                )
                and more
                and (mode != ROBUST or _takes(ex.trust, plan.reverse[e], arm, pos[PHASE]))
            ):
                _insert(slot_arm, size, v, arm)
    if more:
        for n in range(n_agents):
            _mirror(ucb, n)


@njit(cache=True)
def _late_recommendations(plan, held, ex, ucb, counters, alive, ended, phase):
    """Recommendations held since the last exchange arrive: if the phase they were meant for is
    still running (not ``ended`` with this step), the receiver's UCB takes their arms."""
    late, late_n, mode = held.late, held.late_n, plan.mode
    for i in range(late_n[0]):
        if not arrive(late, i, counters, alive) or ended or mode == RELAY:
            continue
        sender, receiver, arm = late[i, 0], late[i, 1], late[i, 3]
        if mode == ROBUST:
            edge = _edge_of(plan.indptr, plan.indices, receiver, sender)
            if not _takes(ex.trust, edge, arm, phase):
                continue
        _join(ucb, receiver, arm)
    late_n[0] = 0
    if mode != RELAY:
        return
    late_pair, known = ex.late_pair, ex.known
    n_agents = ucb.slot_arm.shape[0]
    for v in range(n_agents):
        for o in range(n_agents):
            arm = late_pair[v, o]
            if arm < 0:
                continue
            late_pair[v, o] = -1
            if alive[v] and not ended and o != v and not known[v, o]:
                known[v, o] = True  # late, after the flood: used, not forwarded
                ex.heard[v, o] = arm
                _join(ucb, v, arm)


def _run_chunk(noise, rewards, out, faults, held, attack, ucb, plan, ex):
    """Simulate ``noise.shape[0]`` steps of every agent of one run, in windows (module
    docstring): a tile's regret at a grid point is recorded when the tile reaches it, the bits
    sent when the step ends (no message is sent within a window).

    Agent n is dead during steps crash[n] .. back[n] - 1 and restarts with fresh state at back[n].
    """
    # the hot loop's arrays, bound once (a tuple's field re-read in the loop can cost)
    count, total, mean, inv_sqrt = ucb.count, ucb.total, ucb.mean, ucb.inv_sqrt
    untried, samples, slot_arm, size = ucb.untried, ucb.samples, ucb.slot_arm, ucb.size
    cand, in_cand, n_cand, bound = ucb.cand, ucb.in_cand, ucb.n_cand, ucb.bound
    block_end, block_width = ucb.block_end, ucb.block_width
    lane_mean, lane_inv = ucb.lane_mean, ucb.lane_inv
    lane_best, scanned = ucb.lane_best, ucb.scanned
    mode, alpha, indptr, phase_len = plan.mode, plan.alpha, plan.indptr, plan.phase_len
    pos, counters, crash, back = out.pos, out.counters, faults.crash, faults.back
    late_n = held.late_n
    means, gaps = rewards.means, rewards.gaps
    bernoulli, sigma = rewards.bernoulli, rewards.sigma
    regret, trace, trace_out, grid = out.regret, out.trace, out.trace_out, out.grid
    n_agents = slot_arm.shape[0]
    recs = np.empty(n_agents, dtype=np.int64)
    alive = np.ones(n_agents, dtype=np.bool_)
    lane_width = np.zeros(LANES)
    tile_arm, tile_count, tile_total = ucb.tile_arm, ucb.tile_count, ucb.tile_total
    inv_root, roots = plan.inv_root, plan.inv_root.size
    arm_mean, arm_gap = ucb.tile_arm_mean, ucb.tile_arm_gap
    small = (lane_mean, lane_inv, tile_count, tile_total, arm_mean, arm_gap, inv_root)
    rows, row = noise.shape[0], 0
    draws = np.empty((rows if SMALL_SET else 0, LANES))  # a small ready tile's noise columns
    noise_flat = noise.reshape(noise.size)  # for prefetch_line
    step_width = np.zeros(rows)  # the width k steps into a window, at agent 0's samples
    while row < rows:
        first = pos[STEP] + 1  # the window's first step
        for n in range(n_agents):
            alive[n] = first < crash[n] or first >= back[n]
            if first == back[n]:  # back from a crash: a fresh UCB (on S_n for the LCC family)
                _restart_ucb(ucb, plan.block, n, n + 1)
                _mirror(ucb, n)
                if mode == ROBUST:
                    _forget_trust(ex.trust, indptr, n)
        span = 1  # rows of the window; tile by tile if more (_quiet_rows)
        if late_n[0] == 0:
            most = min(rows - row, phase_len[pos[PHASE]] - pos[IN_PHASE])
            span = _quiet_rows(crash, back, first, most)
        band = n_agents  # agents that play the window's rows together
        if span > 1:
            band = LANES  # a tile: its lanes stay in cache
            for k in range(span):  # once for every tile whose agents have seen as many samples
                step_width[k] = ucb_width(alpha, samples[0] + k)
        seen0 = samples[0]
        for part in range(-(-n_agents // band)):
            lo = part * band
            hi = min(lo + band, n_agents)
            point = pos[GRID]
            ready, longest = False, 0  # a tile whose agents all play alike (below)
            ready_at, base = row, 0
            for r in range(row, row + span):
                step = first + r - row
                width, cached = 0.0, -1
                if band == LANES and not ready:  # once so, so until the window's end
                    ready = True
                    for n in range(lo, hi):
                        ready &= alive[n] and untried[n] == size[n] and samples[n] == samples[lo]
                        ready &= size[n] <= LANE_SET
                        longest = max(longest, size[n])
                    if ready:  # its counts, sums and arms in lanes too, till the window ends
                        _to_lanes(ucb, part, hi, means, gaps)
                        ready_at, base = r, samples[lo]  # its agents' samples seen, alike
                        if longest <= SMALL_SET and not trace:  # gathered in one tight loop,
                            for q in range(r, row + span):  # whose cache misses overlap; the
                                for j in range(hi - lo):  # next tile's asked for meanwhile
                                    draws[q, j] = noise[q, lo + j]
                                # (prefetch_line: its lines in the second-level cache when it
                                # copies them, not the third's: LCC-UCB-GRAPH (150,250)
                                # 0.86-0.90 times the time, elsewhere within noise)
                                prefetch_line(noise_flat, q * n_agents + lo + LANES)
                                prefetch_line(noise_flat, q * n_agents + lo + 2 * LANES - 1)
                if ready:  # one width, one scan, no check per agent (the same choices),
                    # learning in lanes alone
                    k = r - row
                    seen = base + r - ready_at  # counted in samples when the window ends
                    width = step_width[k] if seen == seen0 + k else ucb_width(alpha, seen)
                    if longest <= SMALL_SET and not trace:  # in vectors, slot by slot
                        small_tile_step(
                            draws, r, lo, hi - lo, longest, width, part, small, rewards, regret
                        )
                    else:
                        lane_argmax(
                            lane_mean[part], lane_inv[part], longest, width, lane_best[part]
                        )
                        for n in range(lo, hi):
                            j = n - lo
                            e = np.uint64(lane_best[part, j] * LANES + j)
                            arm = tile_arm[e]
                            reward = reward_from(means, bernoulli, sigma, noise[r, n], arm)
                            c = tile_count[e] + 1
                            tile_count[e] = c
                            tile_total[e] += reward
                            lane_mean[part, e] = tile_total[e] / c
                            # a table's entry, not a square root and a division on the chain
                            # to the next scan (LCC-UCB-GRAPH 0.87-0.90 times the time)
                            lane_inv[part, e] = inv_root[c] if c < roots else 1.0 / math.sqrt(c)
                            pulled(regret, gaps, trace, trace_out, step - 1, n, arm)
                else:
                    for n in range(lo, hi):
                        if not alive[n]:
                            continue  # crashed: plays nothing
                        # choose: untried slots first, in order; then the UCB argmax
                        slot = untried[n]
                        while slot < size[n] and count[n, slot] > 0:
                            slot += 1
                        untried[n] = slot
                        if slot == size[n]:
                            seen = samples[n]
                            if seen != cached:
                                cached = seen
                                width = ucb_width(alpha, seen)
                            if size[n] <= LANE_SET:  # the tile's scan in vector lanes,
                                # once per step, for its agents not played yet (this one
                                # and the next)
                                tile_n = n // LANES
                                if scanned[tile_n] != step:
                                    scanned[tile_n] = step
                                    # agents alike have seen as many samples; a larger
                                    # set's lane than LANE_SET is not read
                                    longest = 0
                                    for m in range(n, min(tile_n * LANES + LANES, n_agents)):
                                        if samples[m] != cached:
                                            cached = samples[m]
                                            width = ucb_width(alpha, cached)
                                        lane_width[m % LANES] = width
                                        if size[m] <= LANE_SET:
                                            longest = max(longest, size[m])
                                    lane_argmax(
                                        lane_mean[tile_n],
                                        lane_inv[tile_n],
                                        longest,
                                        lane_width,
                                        lane_best[tile_n],
                                    )
                                slot = lane_best[tile_n, n % LANES]
                            else:  # many arms: the certified lazy argmax
                                slot = -1
                                if seen <= block_end[n]:
                                    slot = certified_candidate(
                                        cand, n_cand, bound, mean, inv_sqrt, n, width
                                    )
                                if slot < 0:
                                    slot, n_cand[n], bound[n], block_end[n], block_width[n] = (
                                        rebuild_candidates(
                                            n,
                                            size[n],
                                            mean,
                                            inv_sqrt,
                                            cand,
                                            in_cand,
                                            width,
                                            alpha,
                                            seen,
                                        )
                                    )
                        # play and learn; unsigned indices (kernel_api: no wraparound code)
                        played = np.uint64(slot)
                        arm = np.uint64(slot_arm[n, played])
                        reward = reward_from(means, bernoulli, sigma, noise[r, n], arm)
                        ucb_update(count, total, mean, inv_sqrt, n, played, reward)
                        # a skipped arm changed: keep its bound
                        if size[n] > LANE_SET and not in_cand[n, played]:
                            bound[n] = max(
                                bound[n], mean[n, played] + block_width[n] * inv_sqrt[n, played]
                            )
                        # the lane copy, which the tile's scan reads (_mirror when sets change)
                        if size[n] <= LANE_SET:
                            e = played * LANES + n % LANES
                            lane_mean[n // LANES, e] = mean[n, played]
                            lane_inv[n // LANES, e] = inv_sqrt[n, played]
                        samples[n] += 1
                        pulled(regret, gaps, trace, trace_out, step - 1, n, arm)
                if point < grid.size and step == grid[point]:  # these agents' regret
                    for n in range(lo, hi):
                        out.recorded[n, point] = regret[n]
                    point += 1
            if ready:  # the rows catch up with the lanes
                _from_lanes(ucb, part, hi, tile_count, tile_total)
                for n in range(lo, hi):  # and so do their samples seen
                    samples[n] += row + span - ready_at
        for _ in range(span):  # the window's steps end in order (exchanges, bits sent)
            pos[IN_PHASE] += 1
            ended = pos[IN_PHASE] == phase_len[pos[PHASE]]
            if late_n[0] > 0:
                _late_recommendations(plan, held, ex, ucb, counters, alive, ended, pos[PHASE])
            if ended:
                _end_phase(out, ucb, plan, ex, held, faults, attack, recs, alive)
            if step_ended(pos, grid):
                out.recorded_bits[:, pos[GRID]] = counters[BITS]
                pos[GRID] += 1
        row += span


#: Every run of the family.
run_chunk = njit_as("run_chunk", _run_chunk, nogil=True)
