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
