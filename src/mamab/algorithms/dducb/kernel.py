"""numba kernel for DDUCB: one arm per stage of C steps, C rounds of Chebyshev gossip per batch.

Mirrors ``mamab.algorithms.dducb.agent`` operation for operation (same expressions, own share first, then
neighbours by increasing id); the equality test holds it to that. Every agent follows the same
schedule (no faults: the configuration refuses them for DDUCB), so the stage position and s are
shared. The reference mixes a round lazily at the next ``select_arm()``; mixing it at the end
of the step gives the same numbers.

The kernel takes few named arguments (kernel API 1, ``mamab.engine.kernel_api``): the noise
block, the run's arms (``Rewards``) and recording (``Out``), the agents' state (:class:`State`)
and the run's constants (:class:`Plan`). State arrays of shape (agents, arms), counts ``*_c``
and sums ``*_s``: ``new_*`` the pulls of the running stage (γ), ``est_*`` the estimates of the
index, ``mixed_*`` δ, ``z_*`` the iterate being mixed, ``zb_*`` the one of the round before,
``nz_*`` scratch for the next one; ``s[0]`` holds s.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mamab.engine.kernel_api import (
    BITS,
    BITS_RECV,
    RECV,
    ROUNDS,
    SENT,
    STEP,
    end_step,
    played,
    reward_of,
)
from mamab.kernel_cache import njit


class State(NamedTuple):
    """Every agent's DDUCB state (see the module's docstring)."""

    new_c: np.ndarray
    new_s: np.ndarray
    est_c: np.ndarray
    est_s: np.ndarray
    mixed_c: np.ndarray
    mixed_s: np.ndarray
    z_c: np.ndarray
    z_s: np.ndarray
    zb_c: np.ndarray
    zb_s: np.ndarray
    nz_c: np.ndarray
    nz_s: np.ndarray
    arm: np.ndarray  # (agents,) the arm of the running stage
    s: np.ndarray  # [s]


class Plan(NamedTuple):
    """The run's constants: mixing plan, graph, index and message size."""

    rounds: int  # C
    gains: np.ndarray  # Chebyshev gains per round
    lags: np.ndarray
    weight: float  # an edge's mixing weight
    self_weight: np.ndarray  # (agents,)
    indptr: np.ndarray  # the graph, CSR
    indices: np.ndarray
    alpha: float
    local: bool  # the index every step ("every-step"), else once per stage
    message_bits: int


@njit(cache=True, nogil=True)
def _best_arm(est_c, est_s, n, log_s, alpha, n_agents):
    """argmax of the index, lowest arm on ties; an arm whose count is not positive first."""
    best, best_index = 0, -math.inf
    for arm in range(est_c.shape[1]):
        c = est_c[n, arm]
        if not c > 0.0:
            return arm
        index = est_s[n, arm] / c + math.sqrt(alpha * log_s / (n_agents * c))
        if index > best_index:
            best, best_index = arm, index
    return best


@njit(cache=True, nogil=True)
def _start_stage(t, st, plan):
    """Fold the mixed batch into δ, start mixing the last stage's pulls, pick every arm (one
    arm per stage: ``plan.local`` False)."""
    n_agents, n_arms = st.new_c.shape
    first = t == n_arms + 1
    if not first:
        st.s[0] = float((t - 1 - plan.rounds) * n_agents)
    for n in range(n_agents):
        for i in range(n_arms):
            if first:
                st.est_c[n, i] = st.new_c[n, i] / n_agents
                st.est_s[n, i] = st.new_s[n, i] / n_agents
            else:
                st.mixed_c[n, i] = st.mixed_c[n, i] + st.z_c[n, i]
                st.mixed_s[n, i] = st.mixed_s[n, i] + st.z_s[n, i]
                st.est_c[n, i] = st.mixed_c[n, i]
                st.est_s[n, i] = st.mixed_s[n, i]
            st.z_c[n, i] = st.new_c[n, i]
            st.z_s[n, i] = st.new_s[n, i]
            st.new_c[n, i] = 0.0
            st.new_s[n, i] = 0.0
    if not plan.local:
        log_s = math.log(st.s[0])
        for n in range(n_agents):
            st.arm[n] = _best_arm(st.est_c, st.est_s, n, log_s, plan.alpha, n_agents)


@njit(cache=True, nogil=True)
def _mix_round(r, st, plan):
    """One Chebyshev round for every agent: z_{r+1} from z_r and z_{r−1}."""
    z_c, z_s, indptr, indices = st.z_c, st.z_s, plan.indptr, plan.indices
    n_agents, n_arms = z_c.shape
    for n in range(n_agents):
        for i in range(n_arms):
            vc = plan.self_weight[n] * z_c[n, i]
            vs = plan.self_weight[n] * z_s[n, i]
            for e in range(indptr[n], indptr[n + 1]):
                j = indices[e]
                vc = vc + plan.weight * z_c[j, i]
                vs = vs + plan.weight * z_s[j, i]
            if r > 0:
                vc = plan.gains[r] * vc - plan.lags[r] * st.zb_c[n, i]
                vs = plan.gains[r] * vs - plan.lags[r] * st.zb_s[n, i]
            st.nz_c[n, i] = vc
            st.nz_s[n, i] = vs
    st.zb_c[:, :] = z_c
    st.zb_s[:, :] = z_s
    z_c[:, :] = st.nz_c
    z_s[:, :] = st.nz_s


@njit(cache=True, nogil=True)
def dducb_chunk(noise, rewards, out, st, plan):
    """Simulate ``noise.shape[0]`` steps of DDUCB for every agent of one run."""
    n_agents, n_arms = st.new_c.shape
    counters, indptr, local = out.counters, plan.indptr, plan.local
    for row in range(noise.shape[0]):
        t = out.pos[STEP] + 1
        talks = t > n_arms
        r = (t - n_arms - 1) % plan.rounds if talks else 0
        if talks and r == 0:
            _start_stage(t, st, plan)
        if talks and local:  # the index every step, s counting the network's pulls of the stage
            log_s = math.log(st.s[0] + r * n_agents)
            for n in range(n_agents):
                st.arm[n] = _best_arm(st.est_c, st.est_s, n, log_s, plan.alpha, n_agents)
        for n in range(n_agents):
            a = st.arm[n] if talks else t - 1
            reward = reward_of(rewards, noise[row, n], a)
            played(out, rewards, n, a)
            st.new_c[n, a] += 1.0
            st.new_s[n, a] += reward
            if talks and local:
                st.est_c[n, a] += 1.0 / n_agents
                st.est_s[n, a] += reward / n_agents
        if talks:
            for n in range(n_agents):
                degree = indptr[n + 1] - indptr[n]
                if degree > 0:
                    counters[SENT, n] += degree
                    counters[BITS, n] += degree * plan.message_bits
                    counters[RECV, n] += degree
                    counters[BITS_RECV, n] += degree * plan.message_bits
                    counters[ROUNDS, n] += 1
            _mix_round(r, st, plan)
        end_step(out)
