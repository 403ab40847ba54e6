"""The steps at which regret is recorded: about ``points`` steps, always with T.

``"log"`` (the default) spaces them logarithmically, which is dense early and sparse late (about
12 of 200 points in [T/2, T]); ``"mixed"`` puts half of them log-spaced and half evenly spaced,
so that late changes of slope (LCC-UCB's epoch starts) show on a linear time axis too.
"""

from __future__ import annotations

import numpy as np

GRID_STYLES = ("log", "mixed")


def time_grid(horizon: int, points: int = 200, style: str = "log") -> np.ndarray:
    """Sorted unique steps in 1..T (1-indexed: 'after t steps'), ending at T."""
    if horizon < 1 or points < 1:
        raise ValueError("horizon and points must be positive")
    if style not in GRID_STYLES:
        raise ValueError(f"grid style must be one of {', '.join(GRID_STYLES)}, got {style!r}")
    n_log = points if style == "log" else (points + 1) // 2
    steps = np.rint(np.geomspace(1, horizon, num=min(n_log, horizon))).astype(np.int64)
    n_linear = points - n_log
    if n_linear:
        linear = np.rint(np.linspace(horizon / n_linear, horizon, num=n_linear)).astype(np.int64)
        steps = np.concatenate([steps, np.clip(linear, 1, horizon)])
    return np.union1d(np.unique(steps), [horizon])
