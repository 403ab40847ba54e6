"""numba kernel for DDUCB: one arm per stage of C steps, C rounds of Chebyshev gossip per batch.

Mirrors ``mamab.algorithms.dducb.agent`` operation for operation (same expressions, own share first, then
neighbours by increasing id); the equality test holds it to that. Every agent follows the same
schedule (no faults: the configuration refuses them for DDUCB), so the stage position and s are
shared. The reference mixes a round lazily at the next ``select_arm()``; mixing it at the end
of the step gives the same numbers.

Arrays of shape (agents, arms): ``new_*`` the pulls of the running stage (γ), ``est_*`` the
estimates of the index, ``mixed_*`` δ, ``z_*`` the iterate being mixed, ``zb_*`` the one of the
round before, ``nz_*`` scratch for the next one. ``state[0]`` holds s.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from mamab.engine.kernel_api import BITS, BITS_RECV, GRID, RECV, ROUNDS, SENT, STEP


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
def _start_stage(t, new_c, new_s, est_c, est_s, mixed_c, mixed_s, z_c, z_s, arm, state, rounds,
                 alpha, local):  # fmt: skip
    """Fold the mixed batch into δ, start mixing the last stage's pulls, pick every arm (one
    arm per stage: ``local`` False)."""
    n_agents, n_arms = new_c.shape
    first = t == n_arms + 1
    if not first:
        state[0] = float((t - 1 - rounds) * n_agents)
    for n in range(n_agents):
        for i in range(n_arms):
            if first:
                est_c[n, i] = new_c[n, i] / n_agents
                est_s[n, i] = new_s[n, i] / n_agents
            else:
                mixed_c[n, i] = mixed_c[n, i] + z_c[n, i]
                mixed_s[n, i] = mixed_s[n, i] + z_s[n, i]
                est_c[n, i] = mixed_c[n, i]
                est_s[n, i] = mixed_s[n, i]
            z_c[n, i] = new_c[n, i]
            z_s[n, i] = new_s[n, i]
            new_c[n, i] = 0.0
            new_s[n, i] = 0.0
    if not local:
        log_s = math.log(state[0])
        for n in range(n_agents):
            arm[n] = _best_arm(est_c, est_s, n, log_s, alpha, n_agents)


@njit(cache=True, nogil=True)
def _mix_round(r, z_c, z_s, zb_c, zb_s, nz_c, nz_s, weight, self_weight, gains, lags, indptr,
               indices):  # fmt: skip
    """One Chebyshev round for every agent: z_{r+1} from z_r and z_{r−1}."""
    n_agents, n_arms = z_c.shape
    for n in range(n_agents):
        for i in range(n_arms):
            vc = self_weight[n] * z_c[n, i]
            vs = self_weight[n] * z_s[n, i]
            for e in range(indptr[n], indptr[n + 1]):
                j = indices[e]
                vc = vc + weight * z_c[j, i]
                vs = vs + weight * z_s[j, i]
            if r > 0:
                vc = gains[r] * vc - lags[r] * zb_c[n, i]
                vs = gains[r] * vs - lags[r] * zb_s[n, i]
            nz_c[n, i] = vc
            nz_s[n, i] = vs
    zb_c[:, :] = z_c
    zb_s[:, :] = z_s
    z_c[:, :] = nz_c
    z_s[:, :] = nz_s


@njit(cache=True, nogil=True)
def dducb_chunk(noise, pos, grid, recorded, recorded_bits, regret, counters, new_c, new_s, est_c,
                est_s, mixed_c, mixed_s, z_c, z_s, zb_c, zb_s, nz_c, nz_s, arm, state, rounds, gains,
                lags, weight, self_weight, indptr, indices, means, gaps, bernoulli, sigma, alpha,
                local, message_bits, trace, trace_out):  # fmt: skip
    """Simulate ``noise.shape[0]`` steps of DDUCB for every agent of one run."""
    n_agents, n_arms = new_c.shape
    for row in range(noise.shape[0]):
        t = pos[STEP] + 1
        talks = t > n_arms
        r = (t - n_arms - 1) % rounds if talks else 0
        if talks and r == 0:
            _start_stage(t, new_c, new_s, est_c, est_s, mixed_c, mixed_s, z_c, z_s, arm, state,
                         rounds, alpha, local)  # fmt: skip
        if talks and local:  # the index every step, s counting the network's pulls of the stage
            log_s = math.log(state[0] + r * n_agents)
            for n in range(n_agents):
                arm[n] = _best_arm(est_c, est_s, n, log_s, alpha, n_agents)
        for n in range(n_agents):
            a = arm[n] if talks else t - 1
            if bernoulli:
                reward = np.float64(noise[row, n] < means[a])
            else:
                reward = means[a] + sigma * noise[row, n]
            regret[n] += gaps[a]
            if trace:
                trace_out[pos[STEP], n] = a
            new_c[n, a] += 1.0
            new_s[n, a] += reward
            if talks and local:
                est_c[n, a] += 1.0 / n_agents
                est_s[n, a] += reward / n_agents
        if talks:
            for n in range(n_agents):
                degree = indptr[n + 1] - indptr[n]
                if degree > 0:
                    counters[SENT, n] += degree
                    counters[BITS, n] += degree * message_bits
                    counters[RECV, n] += degree
                    counters[BITS_RECV, n] += degree * message_bits
                    counters[ROUNDS, n] += 1
            _mix_round(r, z_c, z_s, zb_c, zb_s, nz_c, nz_s, weight, self_weight, gains, lags,
                       indptr, indices)  # fmt: skip
        pos[STEP] += 1
        if pos[GRID] < grid.size and pos[STEP] == grid[pos[GRID]]:
            recorded[:, pos[GRID]] = regret
            recorded_bits[:, pos[GRID]] = counters[BITS]
            pos[GRID] += 1
