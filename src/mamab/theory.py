"""The paper's bounds as functions, to draw beside measured curves.

Regret bounds are the explicit expressions at the end of the proofs of Theorem 1 and Theorem 3
(constants included); Corollary 1 is an order of growth (constant 1, logs dropped). Bit counts
are exact for a fault-free run. log is natural, log2 is base 2, as in the paper.
"""

from __future__ import annotations

import numpy as np

from mamab.schedule import base_length, block_size, index_bits, n_epochs


def _k_prime(n_agents: int, n_arms: int, degree: int) -> int:
    return block_size(n_arms, n_agents) + degree


def lcc_ucb_regret_bound(
    t: np.ndarray | float, n_agents: int, n_arms: int, degree: int | None = None
) -> np.ndarray:
    """Theorem 1: 12·sqrt(K'T·log2(2T+1)·log T) + 16K' + 2K'·log2(2T+1) + K'(K'+1)."""
    kp = _k_prime(n_agents, n_arms, n_agents - 1 if degree is None else degree)
    t = np.asarray(t, dtype=np.float64)
    l2 = np.log2(2 * t + 1)
    return 12 * np.sqrt(kp * t * l2 * np.log(t)) + 16 * kp + 2 * kp * l2 + kp * (kp + 1)


def lcc_ucb_graph_regret_bound(
    t: np.ndarray | float, n_agents: int, n_arms: int, diameter: int, max_degree: int
) -> np.ndarray:
    """Theorem 3: 4(2D+1)·sqrt(K'DT·log2(2T+1)·log T) + 16D²K' + 2K'D·log2(2T+1) + DK'(K'+1)."""
    kp = _k_prime(n_agents, n_arms, max_degree)
    d = max(1, diameter)
    t = np.asarray(t, dtype=np.float64)
    l2 = np.log2(2 * t + 1)
    return (
        4 * (2 * d + 1) * np.sqrt(kp * d * t * l2 * np.log(t))
        + 16 * d**2 * kp
        + 2 * kp * d * l2
        + d * kp * (kp + 1)
    )


def corollary1_regret_order(
    t: np.ndarray | float, n_agents: int, n_arms: int, diameter: int, max_degree: int
) -> np.ndarray:
    """Corollary 1 (LCC-UCB on a graph, no relay), as an order: 2^D·K'² + sqrt(D·2^D·K'·T)."""
    kp = _k_prime(n_agents, n_arms, max_degree)
    t = np.asarray(t, dtype=np.float64)
    return 2.0**diameter * kp**2 + np.sqrt(diameter * 2.0**diameter * kp * t)


def lcc_ucb_bits_sent(horizon: int, n_agents: int, n_arms: int, degree: int | None = None) -> int:
    """Theorem 2, exactly: J epochs × (N-1) neighbours × ceil(log2 K) bits (K_G for a graph)."""
    degree = n_agents - 1 if degree is None else degree
    kp = _k_prime(n_agents, n_arms, degree)
    return n_epochs(horizon, base_length(kp)) * degree * index_bits(n_arms)


def lcc_ucb_graph_bits_bound(
    horizon: int, n_agents: int, n_arms: int, diameter: int, max_degree: int
) -> int:
    """Theorem 4: at most D sub-epochs × J epochs × K_G neighbours × ceil(log2 K) bits."""
    kp = _k_prime(n_agents, n_arms, max_degree)
    d = max(1, diameter)
    return d * n_epochs(horizon, base_length(kp), d) * max_degree * index_bits(n_arms)
