"""numba twin of :meth:`mamab.attacks.AttackPlan.arm`, for the kernels' liars."""

from __future__ import annotations

import numpy as np

from mamab.attacks import ATTACK_SALT, FIXED, TRUTHFUL
from mamab.faults import uniform_nb
from mamab.kernel_cache import njit


@njit(cache=True)
def forged(code, fixed, pool, key, step, sender, receiver, truth):
    """numba twin of :meth:`AttackPlan.arm`."""
    if code == TRUTHFUL:
        return truth
    if code == FIXED:
        return fixed
    u = uniform_nb(np.uint64(key) ^ np.uint64(ATTACK_SALT), step, 0, sender, receiver)
    return pool[min(int(u * pool.size), pool.size - 1)]


@njit(cache=True, inline="always")
def forged_by(attack, step, sender, receiver, truth):
    """The arm ``sender`` sends ``receiver`` for ``truth`` under the run's ``attack``
    (:class:`~mamab.engine.recording.Attack`): ``truth`` unless the sender lies."""
    if not attack.liar[sender]:
        return truth
    return forged(
        attack.attack,
        attack.attack_arm,
        attack.attack_pool,
        attack.attack_key,
        step,
        sender,
        receiver,
        truth,
    )
