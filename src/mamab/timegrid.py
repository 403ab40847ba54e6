"""The steps at which regret is recorded: about ``points`` log-spaced steps, always with T."""

from __future__ import annotations

import numpy as np


def time_grid(horizon: int, points: int = 200) -> np.ndarray:
    """Sorted unique steps in 1..T (1-indexed: 'after t steps'), log-spaced, ending at T."""
    if horizon < 1 or points < 1:
        raise ValueError("horizon and points must be positive")
    steps = np.unique(np.rint(np.geomspace(1, horizon, num=min(points, horizon))).astype(np.int64))
    return np.union1d(steps, [horizon])
