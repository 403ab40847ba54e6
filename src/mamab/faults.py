"""Faults: message loss and delay, crashes and recoveries, as pure functions of the run's seed.

Whether a message is lost, or delayed by one exchange, is decided by a counter-based hash
(SplitMix64 finaliser) of (run's fault seed, step, round, sender, receiver), not by a stateful
generator, so every engine reaches the same verdict for the same message whatever order it
enumerates messages in. The delay verdict hashes the same coordinates under a salted key, so it
is independent of the loss verdict. ``loss = 0`` and ``delay = 0`` change nothing: results are
those of a plain run.
"""

from __future__ import annotations

import numpy as np

from mamab.kernel_cache import njit
from mamab.seeding import rng

MASK = (1 << 64) - 1
GOLDEN, MUL1, MUL2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
DELAY_SALT = 0xD1B54A32D192ED03  # the delay verdict's key is the fault seed XOR this
DELIVER, LOSE, DELAY = 0, 1, 2  # a message's fate


def crash_steps(
    seed: int, run: int, n_agents: int, horizon: int, rate: float, at: tuple[int, ...] | None = None
) -> np.ndarray:
    """Step from which each agent is dead (T + 1: never), from the run's 'crashes' stream.

    With ``rate`` r each agent crashes at a geometric step (probability r per step); ``at`` gives
    the steps explicitly (0: never). An agent dead from step c plays no step >= c and takes part
    in no exchange after them.
    """
    never = horizon + 1
    if at is not None:
        return np.array([a if 0 < a <= horizon else never for a in at], dtype=np.int64)
    if rate <= 0:
        return np.full(n_agents, never, dtype=np.int64)
    steps = rng(seed, run, "crashes").geometric(rate, size=n_agents)
    return np.minimum(steps, never).astype(np.int64)


def recovery_steps(crash: np.ndarray, horizon: int, recover_after: int) -> np.ndarray:
    """Step from which each crashed agent is back with fresh state (T + 2: never)."""
    never = horizon + 2
    if recover_after <= 0:
        return np.full(crash.shape, never, dtype=np.int64)
    # any delay beyond T + 2 means "never back"; clamping first keeps the sum inside int64
    back = np.minimum(crash, never) + min(recover_after, never)
    return np.where(crash <= horizon, np.minimum(back, never), never).astype(np.int64)


def fault_seed(seed: int, run: int) -> int:
    """The run's 63-bit fault seed, from its own 'faults' stream."""
    return int(rng(seed, run, "faults").integers(1 << 63))


def _mix(z: int) -> int:
    z = (z + GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * MUL1) & MASK
    z = ((z ^ (z >> 27)) * MUL2) & MASK
    return z ^ (z >> 31)


def message_uniform(key: int, step: int, round_: int, sender: int, receiver: int) -> float:
    """A uniform in [0, 1) for one message (53 bits, exactly representable)."""
    h = _mix(key ^ step)
    h = _mix(h ^ round_)
    h = _mix(h ^ sender)
    h = _mix(h ^ receiver)
    return (h >> 11) * 2.0**-53


def is_lost(loss: float, key: int, step: int, round_: int, sender: int, receiver: int) -> bool:
    return loss > 0.0 and message_uniform(key, step, round_, sender, receiver) < loss


def message_fate(
    loss: float, delay: float, key: int, step: int, round_: int, sender: int, receiver: int
) -> int:
    """DELIVER, LOSE (probability ``loss``) or DELAY (probability ``delay`` among the rest)."""
    if is_lost(loss, key, step, round_, sender, receiver):
        return LOSE
    if is_lost(delay, key ^ DELAY_SALT, step, round_, sender, receiver):
        return DELAY
    return DELIVER


@njit(cache=True, inline="always")
def _mix_nb(z):
    z = z + np.uint64(GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(MUL1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(MUL2)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def round_hash_nb(key, step, round_):
    """The hash of a round's coordinates, which all its messages share (see :func:`uniform_nb`):
    a kernel deciding many messages of one round hashes it once."""
    return _mix_nb(_mix_nb(np.uint64(key) ^ np.uint64(step)) ^ np.uint64(round_))


@njit(cache=True, inline="always")
def sender_hash_nb(round_hash, sender):
    """... and of a sender's messages in the round."""
    return _mix_nb(round_hash ^ np.uint64(sender))


@njit(cache=True, inline="always")
def receiver_bits_nb(sender_hash, receiver):
    """The message's uniform as its 53 bits: the uniform is bits·2^-53, so uniform >= p exactly
    when bits >= ceil(p·2^53)."""
    return _mix_nb(sender_hash ^ np.uint64(receiver)) >> np.uint64(11)


@njit(cache=True, inline="always")
def receiver_uniform_nb(sender_hash, receiver):
    """The message's uniform, from its sender's hash (:func:`sender_hash_nb`)."""
    return np.float64(receiver_bits_nb(sender_hash, receiver)) * 2.0**-53


@njit(cache=True, inline="always")
def uniform_nb(key, step, round_, sender, receiver):
    """numba twin of :func:`message_uniform` (uint64 arithmetic wraps like the masked ints)."""
    return receiver_uniform_nb(sender_hash_nb(round_hash_nb(key, step, round_), sender), receiver)


@njit(cache=True)
def lost(loss, key, step, round_, sender, receiver):
    """numba twin of :func:`is_lost`."""
    if loss <= 0.0:
        return False
    return uniform_nb(key, step, round_, sender, receiver) < loss


@njit(cache=True)
def fate(loss, delay, key, step, round_, sender, receiver):
    """numba twin of :func:`message_fate`."""
    if lost(loss, key, step, round_, sender, receiver):
        return LOSE
    if lost(delay, np.uint64(key) ^ np.uint64(DELAY_SALT), step, round_, sender, receiver):
        return DELAY
    return DELIVER
