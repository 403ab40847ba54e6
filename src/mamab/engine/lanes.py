"""UCB1 for agents alone, LANES agents at a time in the processor's vector lanes (issue 23).

An agent that learns only its own samples chooses the first arm of largest
mean + width·(1/sqrt n) over all K arms at every step. Scanning K arms for one agent is a chain
of dependent compares; scanning them for LANES agents at once is the same work in vector
registers, with no branch to mispredict. So the arrays of a tile of LANES agents are
interleaved: slot s of lane j is entry ``s * LANES + j``, and :func:`lane_argmax` computes every
lane's index of slot s with one vector multiply and add, keeping each lane's first maximum with a
compare and two selects. The arithmetic is the reference's, lane by lane (an IEEE product, then
a sum, never fused), and a later slot replaces the best only when strictly larger, so each lane's
result is exactly the first maximum of a plain scan.

numba vectorizes a loop across an array, not a reduction held across lanes, so the scan is an
intrinsic: LLVM IR written once here, compiled for whatever vector width the processor has.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic

from mamab.kernel_cache import njit

#: agents scanned together (8 float64: one 512-bit vector)
LANES = 8


def _flat_float_array(ty) -> bool:
    return (
        isinstance(ty, types.Array)
        and ty.ndim == 1
        and ty.layout == "C"
        and ty.dtype == types.float64
    )


@intrinsic
def lane_argmax(typingctx, mean, inv_sqrt, slots, widths, best):
    """``best[j]`` = the first slot s < ``slots`` of largest
    ``mean[s*LANES + j] + widths[j] * inv_sqrt[s*LANES + j]``, for each lane j.

    ``mean``, ``inv_sqrt``: a tile's interleaved arrays (float64, C, at least slots·LANES long);
    ``widths``: LANES float64; ``best``: LANES int64, written. Lanes never mix. An index that is
    NaN never wins (the reference's ``>`` alike); slots must be at least 1.
    """
    if not (
        _flat_float_array(mean)
        and _flat_float_array(inv_sqrt)
        and _flat_float_array(widths)
        and isinstance(slots, types.Integer)
        and isinstance(best, types.Array)
        and best.ndim == 1
        and best.layout == "C"
        and best.dtype == types.int64
    ):
        raise TypingError(
            "lane_argmax(mean, inv_sqrt, slots, widths, best): float64 C arrays, an int, an int64 C array"
        )
    signature = types.void(mean, inv_sqrt, slots, widths, best)

    def codegen(context, builder, sig, args):
        mean_v, inv_v, slots_v, widths_v, best_v = args
        arrays = [
            context.make_array(ty)(context, builder, value)
            for ty, value in (
                (sig.args[0], mean_v),
                (sig.args[1], inv_v),
                (sig.args[3], widths_v),
                (sig.args[4], best_v),
            )
        ]
        vec_f = ir.VectorType(ir.DoubleType(), LANES)
        vec_i = ir.VectorType(ir.IntType(64), LANES)
        mean_p, inv_p, widths_p = (builder.bitcast(a.data, vec_f.as_pointer()) for a in arrays[:3])
        best_p = builder.bitcast(arrays[3].data, vec_i.as_pointer())
        width = builder.load(widths_p, align=8)
        top = cgutils.alloca_once_value(builder, ir.Constant(vec_f, [float("-inf")] * LANES))
        where = cgutils.alloca_once_value(builder, ir.Constant(vec_i, [0] * LANES))
        count = context.cast(builder, slots_v, sig.args[2], types.int64)
        counter = cgutils.alloca_once_value(builder, ir.Constant(vec_i, [0] * LANES))
        with cgutils.for_range(builder, count) as loop:
            s = loop.index
            index = builder.fadd(
                builder.load(builder.gep(mean_p, [s]), align=8),
                builder.fmul(width, builder.load(builder.gep(inv_p, [s]), align=8)),
            )
            high = builder.load(top)
            larger = builder.fcmp_ordered(">", index, high)
            builder.store(builder.select(larger, index, high), top)
            slot = builder.load(counter)  # s in every lane (a vector add, not a broadcast)
            builder.store(builder.select(larger, slot, builder.load(where)), where)
            builder.store(builder.add(slot, ir.Constant(vec_i, [1] * LANES)), counter)
        builder.store(builder.load(where), best_p, align=8)
        return context.get_dummy_value()

    return signature, codegen


class LaneUCB(NamedTuple):
    """UCB1 state of agents alone, tiled: tile t holds agents t·LANES .. t·LANES + LANES - 1,
    slot s of lane j at ``[t, s * LANES + j]`` (lanes past the last agent are never played)."""

    count: np.ndarray  # (tiles, arms * LANES) samples of each arm
    total: np.ndarray  # (tiles, arms * LANES) their sum
    mean: np.ndarray  # (tiles, arms * LANES)
    inv_sqrt: np.ndarray  # (tiles, arms * LANES) 1 / sqrt(count), 0 before the first sample
    samples: np.ndarray  # (agents,) samples seen
    untried: np.ndarray  # (agents,) the lowest arm maybe never sampled
    arms: int


def lane_ucb(agents: int, arms: int) -> LaneUCB:
    """Fresh state of ``agents`` agents alone on ``arms`` arms (no agents: empty arrays)."""
    tiles = -(-agents // LANES)
    shape = (tiles, arms * LANES)
    return LaneUCB(
        count=np.zeros(shape, dtype=np.int64),
        total=np.zeros(shape),
        mean=np.zeros(shape),
        inv_sqrt=np.zeros(shape),
        samples=np.zeros(agents, dtype=np.int64),
        untried=np.zeros(agents, dtype=np.int64),
        arms=arms,
    )


@njit(cache=True, inline="always")
def restart_lane(count, total, mean, inv_sqrt, arms, j):
    """Lane j of a tile starts a fresh UCB (its agent back from a crash): cold path."""
    for s in range(arms):
        e = s * LANES + j
        count[e] = 0
        total[e] = 0.0
        mean[e] = 0.0
        inv_sqrt[e] = 0.0


@njit(cache=True, inline="always")
def learn_lane(count, total, mean, inv_sqrt, e, reward):
    """Entry e (slot s, lane j: s·LANES + j) of a tile learns one sample: UCB.update, expression
    for expression (the caller counts the sample)."""
    c = count[e] + 1
    count[e] = c
    total[e] += reward
    mean[e] = total[e] / c
    inv_sqrt[e] = 1.0 / math.sqrt(c)
