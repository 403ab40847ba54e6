"""Exact graph diameter with numba: bounded eccentricities, then bit-parallel BFS on every core.

:func:`diameter` is the one entry point: ``diameter(indptr, indices)`` over a CSR adjacency
(neighbours of v are ``indices[indptr[v]:indptr[v + 1]]``, both directions listed) returns the
largest eccentricity, 0 for at most one node, -1 for a disconnected graph.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np

from mamab.kernel_cache import njit

#: BFS from single sources first (bounds), before the bit-parallel pass over what is left.
BOUND_SOURCES = 24
#: 64-bit words of sources per bit-parallel batch (64 * WORDS sources share one pass over edges).
WORDS = 4


@njit(cache=True)
def bfs(indptr, indices, source, dist, queue):
    """Distances from ``source`` into ``dist`` (-1: unreached); returns the farthest node."""
    dist[:] = -1
    dist[source] = 0
    queue[0] = source
    head, tail, far = 0, 1, source
    while head < tail:
        v = queue[head]
        head += 1
        far = v
        for w in indices[indptr[v] : indptr[v + 1]]:
            if dist[w] < 0:
                dist[w] = dist[v] + 1
                queue[tail] = w
                tail += 1
    return far


@njit(cache=True)
def _bounds(indptr, indices, budget):
    """(lower bound of the diameter, upper bounds of every eccentricity, connected?).

    Each BFS from v gives, for every node w at distance d, max(d, ecc(v) - d) <= ecc(w) <=
    ecc(v) + d (Takes & Kosters 2011). Sources alternate between the node with the largest
    upper bound (a far node: raises the lower bound, as a double sweep does) and the one with
    the smallest lower bound (a central node: its BFS caps the eccentricities of a wide ball).
    """
    n = indptr.size - 1
    dist, queue = np.empty(n, np.int64), np.empty(n, np.int64)
    low, high = np.zeros(n, np.int64), np.full(n, n, np.int64)
    degrees = indptr[1:] - indptr[:-1]
    v, pick_high, lower = int(np.argmax(degrees)), True, 0
    for _ in range(budget):
        far = bfs(indptr, indices, v, dist, queue)
        if dist.min() < 0:
            return -1, high, False
        ecc = dist[far]
        for w in range(n):
            low[w] = max(low[w], dist[w], ecc - dist[w])
            high[w] = min(high[w], ecc + dist[w])
        lower = max(lower, low.max())
        if lower >= high.max():
            break
        best = -1
        for w in range(n):  # next source: not yet exact, extreme bound, then highest degree
            if low[w] == high[w]:
                continue
            if best < 0:
                best = w
            elif pick_high:
                if (high[w], degrees[w]) > (high[best], degrees[best]):
                    best = w
            elif (low[w], -degrees[w]) < (low[best], -degrees[best]):
                best = w
        if best < 0:
            break
        v, pick_high = best, not pick_high
    return lower, high, True


@njit(cache=True, nogil=True)
def _batch_eccentricities(indptr, indices, sources, out):
    """Eccentricities of up to 64·WORDS ``sources`` into ``out``, by one BFS over bitsets.

    Bit s of ``seen[v]`` says source s has reached v; each level pulls, for every node, the
    frontier bits of its neighbours. A source's eccentricity is the last level it grew.
    """
    n, count = indptr.size - 1, sources.size
    seen = np.zeros((n, WORDS), np.uint64)
    front = np.zeros((n, WORDS), np.uint64)
    nxt = np.zeros((n, WORDS), np.uint64)
    full = np.zeros(WORDS, np.uint64)
    one = np.uint64(1)
    for s in range(count):
        word, bit = s // 64, np.uint64(s % 64)
        seen[sources[s], word] |= one << bit
        front[sources[s], word] |= one << bit
        full[word] |= one << bit
        out[s] = 0
    acc = np.zeros(WORDS, np.uint64)
    grew = np.zeros(WORDS, np.uint64)
    level = 0
    while True:
        level += 1
        grew[:] = 0
        for v in range(n):
            done = True
            for k in range(WORDS):
                if seen[v, k] != full[k]:
                    done = False
            if done:
                for k in range(WORDS):
                    nxt[v, k] = 0
                continue
            acc[:] = 0
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                for k in range(WORDS):
                    acc[k] |= front[u, k]
            for k in range(WORDS):
                new = acc[k] & ~seen[v, k]
                nxt[v, k] = new
                seen[v, k] |= new
                grew[k] |= new
        any_new = False
        for k in range(WORDS):
            if grew[k] != 0:
                any_new = True
                for b in range(64):
                    if (grew[k] >> np.uint64(b)) & one:
                        out[k * 64 + b] = level
        if not any_new:
            return
        front, nxt = nxt, front


def _eccentricities(indptr, indices, nodes, pool: ThreadPoolExecutor | None) -> np.ndarray:
    """Eccentricity of each of ``nodes``: batches of 64·WORDS sources, spread over ``pool``'s
    threads (the kernel releases the GIL; plain threads, not numba's threading layer, so runs
    on several threads may each compute a diameter at once)."""
    size = 64 * WORDS
    out = np.zeros(nodes.size, np.int64)
    spans = [(first, min(nodes.size, first + size)) for first in range(0, nodes.size, size)]

    def one(span: tuple[int, int]) -> None:
        _batch_eccentricities(indptr, indices, nodes[span[0] : span[1]], out[span[0] : span[1]])

    if pool is None or len(spans) == 1:
        for span in spans:
            one(span)
    else:
        list(pool.map(one, spans))
    return out


@njit(cache=True)
def _certify(indptr, indices, sources, radii, certified, dist, queue):
    """Mark every node within ``radii[i]`` of ``sources[i]``: its eccentricity is at most
    ecc(source) + distance <= the lower bound, so it cannot hold a larger one."""
    for i in range(sources.size):
        if radii[i] <= 0:
            continue
        dist[sources[i]] = 0
        queue[0] = sources[i]
        head, tail = 0, 1
        while head < tail:
            v = queue[head]
            head += 1
            certified[v] = True
            if dist[v] == radii[i]:
                continue
            for w in indices[indptr[v] : indptr[v + 1]]:
                if dist[w] < 0:
                    dist[w] = dist[v] + 1
                    queue[tail] = w
                    tail += 1
        for j in range(tail):  # reset only what was touched
            dist[queue[j]] = -1


def diameter(indptr: np.ndarray, indices: np.ndarray) -> int:
    """Exact diameter of the graph in CSR form: 0 for at most one node, -1 if disconnected.

    A few single-source BFS give a lower bound L (an eccentricity found) and upper bounds on
    every eccentricity; a node whose upper bound is at most L cannot hold a larger one
    (certified). Then, round by round, the eccentricities of the uncertified nodes of highest
    degree (central ones: wide balls) are computed exactly, 256 sources per pass over the edges
    and one pass per core (threads); each raises L if larger, and certifies the ball of radius L - ecc
    around it. The diameter is L once every node is certified.
    """
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    n = indptr.size - 1
    if n <= 1:
        return 0
    lower, high, connected = _bounds(indptr, indices, BOUND_SOURCES)
    if not connected:
        return -1
    certified = high <= lower
    order = np.argsort(-(indptr[1:] - indptr[:-1]), kind="stable")
    dist, queue = np.full(n, -1, np.int64), np.empty(n, np.int64)
    workers = _cores()
    with ThreadPoolExecutor(workers) if workers > 1 else nullcontext() as pool:
        while True:
            todo = order[~certified[order]]
            if todo.size == 0:
                return int(lower)
            batch = np.ascontiguousarray(todo[: workers * 64 * WORDS])
            ecc = _eccentricities(indptr, indices, batch, pool)
            lower = max(lower, int(ecc.max()))
            certified[batch] = True
            _certify(indptr, indices, batch, lower - ecc, certified, dist, queue)


def warm() -> int:
    """Compile (or load from the cache) every kernel of :func:`diameter`, with the types it
    passes them: a 60-node cycle, whose single-source bounds leave nodes for the exact pass;
    returns its diameter (30)."""
    n = 60
    nodes = np.arange(n, dtype=np.int64)
    indptr = np.arange(0, 2 * n + 1, 2, dtype=np.int64)
    indices = np.sort(np.stack([(nodes - 1) % n, (nodes + 1) % n], axis=1), axis=1).ravel()
    return diameter(indptr, indices)


def _cores() -> int:
    """Cores this process may run on (as :func:`mamab.resources.cores`, without its imports)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
