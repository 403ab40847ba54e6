"""numba twin of :meth:`mamab.attacks.AttackPlan.arm`, for the kernels' liars."""

from __future__ import annotations

import numpy as np
from numba import njit

from mamab.attacks import ATTACK_SALT, FIXED, TRUTHFUL
from mamab.faults import _mix_nb


@njit(cache=True)
def forged(code, fixed, pool, key, step, sender, receiver, truth):
    """numba twin of :meth:`AttackPlan.arm`."""
    if code == TRUTHFUL:
        return truth
    if code == FIXED:
        return fixed
    h = _mix_nb(np.uint64(key) ^ np.uint64(ATTACK_SALT) ^ np.uint64(step))
    h = _mix_nb(h ^ np.uint64(0))
    h = _mix_nb(h ^ np.uint64(sender))
    h = _mix_nb(h ^ np.uint64(receiver))
    u = np.float64(h >> np.uint64(11)) * 2.0**-53
    return pool[min(int(u * pool.size), pool.size - 1)]
