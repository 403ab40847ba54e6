"""The fast engine's kernel API (version ``mamab.KERNEL_API``): what a chunk kernel shares.

A chunk kernel is a numba function ``@njit(cache=True, nogil=True)`` that a spec's driver calls
once per noise block. It receives the block (``noise``: (steps, agents), uniforms in [0, 1) for
Bernoulli rewards, standard normals for Gaussian ones; column n is agent n's draws, independent of
the arm it plays), the run's arms (``rewards``: :class:`~mamab.engine.recording.Rewards`), what
it records (``out``: :class:`~mamab.engine.recording.Out`, from ``Recording.out``) and its own
state (arrays the driver allocates, best as a named tuple, kept from block to block). For every
agent-step it must, in this order: choose an arm, take its reward (:func:`reward_of` on the
agent's draw), learn, and count the pull (:func:`played`); at the end of each step, after any
messages, call :func:`end_step`. Updated in place:

- ``out.pos``: [step, phase, step in phase, next grid point]; ``pos[STEP]`` counts steps played;
- ``out.regret`` (agents,): each agent's pseudo-regret so far (``+= gaps[arm]`` per pull);
- ``out.recorded``/``out.recorded_bits`` (agents, grid points): regret and bits sent when
  ``pos[STEP]`` reaches ``grid[pos[GRID]]``;
- ``out.counters`` (7, agents), rows :data:`SENT` .. :data:`BITS_LOST` (``mamab.result.COUNTERS``):
  messages and bits sent, received and lost, and communication rounds (:func:`count_sent`,
  :func:`route`);
- ``out.trace_out`` (horizon, agents): the arm each agent played, when ``out.trace``.

The helpers here are written once for every kernel: the reward of a draw, a pull, the end of a
step, and the counting and routing of a message under loss and delay (``mamab.faults``). Every
built-in kernel takes a few named tuples of arrays, none more than 10 arguments: the shared
``Rewards``, ``Out``, ``Faults`` (``Recording.faults()``: loss, delay and crashes), ``Held``
(``Recording.held()``: the messages a delay holds for the next exchange, for :func:`route` and
:func:`arrive`) and ``Attack`` (``Recording.attacks()``: the liars and their attack, for
:func:`mamab.engine.attack_kernel.forged_by`), and its own state and constants, grouped by
meaning (``mamab/algorithms/<family>/kernel.py``).

Indices: numba lets a negative index count from the end, so every access through a signed index
it cannot prove non-negative (one loaded from an array: an agent's arm, a neighbour) carries a
sign test and an add. Cast such an index to ``np.uint64`` once (``np.uint64(slot)``, or
``range(np.uint64(lo), np.uint64(hi))`` over an edge list) and its accesses carry none; keep it
apart from signed arithmetic, which numba types as float64 when it mixes the two. The built-in
kernels do so on their hot paths: full communication's exchange took about 0.8 times the time
(benchmarks/README.md).

Speed: a hot loop that reads a named tuple's field at every agent-step pays for it (about 12%
for the LCC kernel and 40% for DEMAB's, measured under load), so the fastest kernels bind the fields they read to
locals once per block and call :func:`reward_from` and :func:`pulled`, the same arithmetic as
:func:`reward_of` and :func:`played` on those locals, and :func:`step_ended` (then
:func:`record`) for :func:`end_step`. A driver feeds its blocks with
:meth:`mamab.engine.recording.FastRun.feed`, which calls the kernel's compiled entry point
after the first block (numba's dispatcher types a named tuple's every field at every call).

References: numba counts a reference, an atomic operation, each time a loop takes an array out
of a tuple or passes one to a helper that loops or calls (inlined or not: the count is pruned
only around straight code), so a helper that takes arrays is best called once per step, not
once per agent. coop-UCB2 spent two fifths of its time counting references before its
consensus ran once per step (benchmarks/kernel_profile.py prints the share).
"""

from __future__ import annotations

import numpy as np

from mamab.faults import DELAY, DELIVER, LOSE, fate
from mamab.kernel_cache import njit

#: Rows of ``counters``: messages sent, bits sent, messages received, bits received, rounds,
#: messages lost, bits lost.
SENT, BITS, RECV, BITS_RECV, ROUNDS, LOST, BITS_LOST = 0, 1, 2, 3, 4, 5, 6
#: Entries of ``pos``: steps played, phase, step within the phase, next grid point.
STEP, PHASE, IN_PHASE, GRID = 0, 1, 2, 3


@njit(cache=True, inline="always")
def reward_of(rewards, draw, arm):
    """The reward of ``arm`` for this agent-step's ``draw`` (its entry of the noise block)."""
    return reward_from(rewards.means, rewards.bernoulli, rewards.sigma, draw, arm)


@njit(cache=True, inline="always")
def reward_from(means, bernoulli, sigma, draw, arm):
    """:func:`reward_of` on the fields of ``Rewards``, bound to locals by a hot loop."""
    if bernoulli:
        return np.float64(draw < means[arm])
    return means[arm] + sigma * draw


@njit(cache=True, inline="always")
def played(out, rewards, agent, arm):
    """``agent`` pulled ``arm`` this step: its regret grows by the arm's gap; traced if asked."""
    pulled(out.regret, rewards.gaps, out.trace, out.trace_out, out.pos[STEP], agent, arm)


@njit(cache=True, inline="always")
def pulled(regret, gaps, trace, trace_out, step, agent, arm):
    """:func:`played` on the fields of ``Out`` and ``Rewards``, bound to locals by a hot loop
    (``step``: ``out.pos[STEP]``, the steps played before this one)."""
    regret[agent] += gaps[arm]
    if trace:
        trace_out[step, agent] = arm


@njit(cache=True, inline="always")
def end_step(out):
    """A step is over: count it, and record regret and bits sent at a grid point."""
    if step_ended(out.pos, out.grid):
        record(out)


@njit(cache=True, inline="always")
def step_ended(pos, grid):
    """:func:`end_step` on ``out.pos`` and ``out.grid`` bound to locals: count the step; True
    when it reaches the next grid point, where the caller calls :func:`record`."""
    pos[STEP] += 1
    return pos[GRID] < grid.size and pos[STEP] == grid[pos[GRID]]


@njit(cache=True)
def record(out):
    """Record regret and bits sent at the grid point the step reached (a cold path: not inlined)."""
    g = out.pos[GRID]
    out.recorded[:, g] = out.regret
    out.recorded_bits[:, g] = out.counters[BITS]
    out.pos[GRID] = g + 1


@njit(cache=True, inline="always")
def count_sent(counters, sender, bits):
    """``sender`` paid for one message of ``bits`` bits."""
    counters[SENT, sender] += 1
    counters[BITS, sender] += bits


@njit(cache=True, inline="always")
def _count_lost(counters, sender, bits):
    if sender < counters.shape[1]:  # a server's own counters are not kept
        counters[LOST, sender] += 1
        counters[BITS_LOST, sender] += bits


@njit(cache=True, inline="always")
def _count_received(counters, receiver, bits):
    if receiver < counters.shape[1]:
        counters[RECV, receiver] += 1
        counters[BITS_RECV, receiver] += bits


@njit(cache=True, inline="always")
def route(counters, f, sender, receiver, bits, arm, reward, late, late_reward, late_n):
    """Settle a paid-for message of fate ``f``: count it lost, hold it, or count it received.

    True when it arrives now; a held one arrives at the next exchange (see :func:`arrive`).
    """
    if f == LOSE:
        _count_lost(counters, sender, bits)
        return False
    if f == DELAY:
        i = late_n[0]
        late[i, 0] = sender
        late[i, 1] = receiver
        late[i, 2] = bits
        late[i, 3] = arm
        late_reward[i] = reward
        late_n[0] = i + 1
        return False
    _count_received(counters, receiver, bits)
    return True


@njit(cache=True, inline="always")
def arrive(late, i, counters, alive):
    """Held message i reaches its receiver now (True), or is lost: the receiver is dead."""
    sender, receiver, bits = late[i, 0], late[i, 1], late[i, 2]
    if receiver < alive.shape[0] and not alive[receiver]:  # a server never crashes
        _count_lost(counters, sender, bits)
        return False
    _count_received(counters, receiver, bits)
    return True


@njit(cache=True)
def drop_late(late, late_n, counters, alive):
    """Held messages arrive (or meet a dead receiver) and are dropped: their round is over."""
    for i in range(late_n[0]):
        arrive(late, i, counters, alive)
    late_n[0] = 0


@njit(cache=True, inline="always")
def fate_to(alive, loss, delay, key, step, round_, sender, receiver):
    """A message's fate; one that would arrive now at a dead agent is lost (a delayed one meets
    its receiver's state at the next exchange)."""
    f = fate(loss, delay, key, step, round_, sender, receiver)
    if f == DELIVER and not alive[receiver]:
        return LOSE
    return f
