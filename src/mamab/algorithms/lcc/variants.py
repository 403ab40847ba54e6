"""The variants one LCC kernel and one set of agents serve: plain data, no numba, no numpy.

``mode`` selects the kernel's branch (the UCB baselines have their own kernel,
:mod:`mamab.algorithms.ucb.kernel`); a spec's :class:`~mamab.algorithms.spec.FastEngine` settings carry it, so no code branches on an
algorithm's name.
"""

from __future__ import annotations

LCC, RELAY, ROBUST = 2, 3, 4  # 0 and 1 were the UCB baselines' modes
