"""The variants one LCC kernel and one set of agents serve: plain data, no numba, no numpy.

``mode`` selects the kernel's branch (the UCB baselines share the kernel: modes below ``LCC``);
a spec's :class:`~mamab.algorithms.spec.FastEngine` settings carry it, so no code branches on an
algorithm's name.
"""

from __future__ import annotations

NO_COMMUNICATION, FULL_COMMUNICATION, LCC, RELAY, ROBUST = 0, 1, 2, 3, 4  # LCC family: >= LCC
