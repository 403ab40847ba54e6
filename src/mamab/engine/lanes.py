"""UCB scans in the processor's vector lanes (issue 23): agents alone, LANES at a time, and a
group of full communication's grouped bounds (SPAN slots) as one vector.

An agent that learns only its own samples chooses the first arm of largest
mean + width·(1/sqrt n) over all K arms at every step. Scanning K arms for one agent is a chain
of dependent compares; scanning them for LANES agents at once is the same work in vector
registers, with no branch to mispredict. So the arrays of a tile of LANES agents are
interleaved: slot s of lane j is entry ``s * LANES + j``, and :func:`lane_argmax` computes every
lane's index of slot s with one vector multiply and add, keeping each lane's first maximum with a
compare and two selects. The arithmetic is the reference's, lane by lane (an IEEE product, then
a sum, never fused), and a later slot replaces the best only when strictly larger, so each lane's
result is exactly the first maximum of a plain scan. The tile's agents then learn their samples
together (:func:`lane_learn`: each lane's entries gathered and scattered).

numba vectorizes a loop across an array, not a reduction held across lanes, so the scan is an
intrinsic: LLVM IR written once here, compiled for whatever vector width the processor has.
Where numba compiles for AVX-512 it keeps four running maxima per lane, over the four quarters
of the slots (four chains of compares side by side; merged with ties to the earlier quarter,
the same result): with narrower vectors their registers would spill, so one
(:func:`wide_vectors`).
:func:`lane_argmax_down` visits the slots from the last, for the same result: callers that scan
one tile step after step go up and down by turns, so that each scan starts on the lines the last
one ended on, still in cache.
Agents alone's settled tiles of BLOCKS_FROM arms or more scan by blocks instead
(:func:`lane_argmax_blocks`): a tree of maxima per block of BLOCK slots and one compare per
block, then the kept block's first slot of the largest index; fewer vector operations per slot,
the same result when no index is NaN.

Full communication (:mod:`mamab.engine.ucb_kernels`) scans a group of SPAN slots of one agent
as one vector: :func:`span_max` (the group's bound) and :func:`span_best` (its first best
slot), with the same IEEE product then sum; :func:`reaching` and :func:`lowest_bit` find the
groups whose bound reaches a value as a bit mask, :func:`row_max` the largest bound.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.core.codegen import get_host_cpu_features
from numba.core.errors import TypingError
from numba.extending import intrinsic

from mamab.engine.aligned import aligned_zeros
from mamab.kernel_cache import njit

#: agents scanned together (8 float64: one 512-bit vector)
LANES = 8


def _flat_array(ty, dtype, ndim: int = 1) -> bool:
    """Whether ``ty`` is a C-contiguous array of ``dtype`` and ``ndim`` dimensions."""
    return (
        isinstance(ty, types.Array) and ty.ndim == ndim and ty.layout == "C" and ty.dtype == dtype
    )


def flat_float_array(ty, ndim: int = 1) -> bool:
    """Whether ``ty`` is a C-contiguous float64 array of ``ndim`` dimensions."""
    return _flat_array(ty, types.float64, ndim)


def _flat_int_array(ty) -> bool:
    """Whether ``ty`` is a 1-d C-contiguous int64 array (slots, counts)."""
    return _flat_array(ty, types.int64)


def _lane_argmax_typing(mean, inv_sqrt, slots, widths, best, name):
    """Typing shared by the lane argmax intrinsics; refused with the intrinsic's name."""
    if not (
        flat_float_array(mean)
        and flat_float_array(inv_sqrt)
        and (flat_float_array(widths) or isinstance(widths, types.Float))
        and isinstance(slots, types.Integer)
        and _flat_int_array(best)
    ):
        raise TypingError(
            f"{name}(mean, inv_sqrt, slots, widths, best): float64 C arrays (widths: or a float), "
            "an int, an int64 C array"
        )
    return types.void(mean, inv_sqrt, slots, widths, best)


def _lane_argmax_ir(chains: int, downward: bool = False):
    """The lane argmax's code: one running maximum per lane over all slots, or ``chains`` (2 or
    4) over as many equal runs of consecutive slots, the last run also holding the slots left
    over: independent compare-and-select chains that run side by side, merged with ties to the
    earlier run (the same result).

    ``downward``: each chain visits its slots from the last, a slot replacing the best when at
    least as large (the value kept by the same strict maximum instruction), and a lane whose
    indices never exceed -inf gets slot 0: the first maximum again. Scanning up and down by
    turns keeps the slots the last scan ended on in the level-1 cache for the next: a tile of
    500 arms (64 KB of means and 1/sqrt n) does not fit it.

    A chain keeps the offset of its best slot from its run's start, from one counter the chains
    share, and the runs' starts are added once at the end: one vector add per turn of the loop,
    not one per chain, an eighth fewer vector operations per slot. That pays where the scan is
    limited by the vector units' throughput (benchmarks/README.md, twenty-third round).
    """

    def codegen(context, builder, sig, args):
        mean_v, inv_v, slots_v, widths_v, best_v = args
        arrays = [
            context.make_array(ty)(context, builder, value)
            for ty, value in ((sig.args[0], mean_v), (sig.args[1], inv_v), (sig.args[4], best_v))
        ]
        vec_f = ir.VectorType(ir.DoubleType(), LANES)
        vec_i = ir.VectorType(ir.IntType(64), LANES)
        i64 = ir.IntType(64)
        mean_p, inv_p = (builder.bitcast(a.data, vec_f.as_pointer()) for a in arrays[:2])
        best_p = builder.bitcast(arrays[2].data, vec_i.as_pointer())
        if isinstance(sig.args[3], types.Float):  # one width, in every lane from a register
            width = splat(
                builder, context.cast(builder, widths_v, sig.args[3], types.float64), vec_f
            )
        else:
            widths = context.make_array(sig.args[3])(context, builder, widths_v)
            width = builder.load(builder.bitcast(widths.data, vec_f.as_pointer()), align=8)
        count = context.cast(builder, slots_v, sig.args[2], types.int64)
        # chain c scans run c: slots c·run .. (c + 1)·run - 1; the last chain also the slots
        # from chains·run on, after its run going up, before it going down
        run = builder.udiv(count, ir.Constant(i64, chains))
        starts = [builder.mul(run, ir.Constant(i64, c)) for c in range(chains)]
        rest = builder.mul(run, ir.Constant(i64, chains))
        last = builder.sub(run, ir.Constant(i64, 1))  # the loop visits offsets 0 .. last
        minus_inf = ir.Constant(vec_f, [float("-inf")] * LANES)
        zeros = ir.Constant(vec_i, [0] * LANES)
        tops, wheres = [], []
        for _ in starts:
            tops.append(cgutils.alloca_once_value(builder, minus_inf))
            wheres.append(cgutils.alloca_once_value(builder, zeros))
        # the offsets of the chains' best slots, from one counter they share
        first = last if downward else ir.Constant(i64, 0)
        counter = cgutils.alloca_once_value(builder, splat(builder, first, vec_i))
        step_by = ir.Constant(vec_i, [-1 if downward else 1] * LANES)

        def step(c, s, offset):
            """Chain c takes slot s, ``offset`` (a vector) from its run's start: a later slot
            replaces its best only when strictly larger (downward: a lower slot when at least as
            large)."""
            index = _slot_index(builder, mean_p, inv_p, width, s)
            high = builder.load(tops[c])
            larger = builder.fcmp_ordered(">", index, high)
            builder.store(builder.select(larger, index, high), tops[c])
            if downward:
                larger = builder.fcmp_ordered(">=", index, high)
            builder.store(builder.select(larger, offset, builder.load(wheres[c])), wheres[c])

        def left_over():
            """The slots from chains·run on, the last chain's highest (offsets run .. on)."""
            extra = builder.sub(count, rest)
            with cgutils.for_range(builder, extra) as loop:
                offset = (
                    builder.sub(builder.sub(extra, ir.Constant(i64, 1)), loop.index)
                    if downward
                    else loop.index
                )
                s = builder.add(rest, offset)
                step(chains - 1, s, splat(builder, builder.add(run, offset), vec_i))

        if downward:
            left_over()
        with cgutils.for_range(builder, run) as loop:
            offset = builder.sub(last, loop.index) if downward else loop.index
            shared = builder.load(counter)
            for c, start in enumerate(starts):
                step(c, builder.add(start, offset), shared)
            builder.store(builder.add(shared, step_by), counter)
        if not downward:
            left_over()
        for c, start in enumerate(starts):  # offsets to slots
            if c:
                at = builder.load(wheres[c])
                builder.store(builder.add(at, splat(builder, start, vec_i)), wheres[c])
        if downward:  # no index above -inf: slot 0, which an upward scan keeps
            for c in range(chains):
                found = builder.fcmp_ordered(">", builder.load(tops[c]), minus_inf)
                builder.store(builder.select(found, builder.load(wheres[c]), zeros), wheres[c])
        high, where = builder.load(tops[0]), builder.load(wheres[0])
        for c in range(1, chains):  # a later run only when strictly larger
            later = builder.load(tops[c])
            larger = builder.fcmp_ordered(">", later, high)
            high = builder.select(larger, later, high)
            where = builder.select(larger, builder.load(wheres[c]), where)
        builder.store(where, best_p, align=8)
        return context.get_dummy_value()

    return codegen


@intrinsic
def lane_argmax_one(typingctx, mean, inv_sqrt, slots, widths, best):
    """:func:`lane_argmax` with one running maximum per lane."""
    signature = _lane_argmax_typing(mean, inv_sqrt, slots, widths, best, "lane_argmax_one")
    return signature, _lane_argmax_ir(1)


@intrinsic
def lane_argmax_four(typingctx, mean, inv_sqrt, slots, widths, best):
    """:func:`lane_argmax` with four running maxima per lane (the quarters of the slots)."""
    signature = _lane_argmax_typing(mean, inv_sqrt, slots, widths, best, "lane_argmax_four")
    return signature, _lane_argmax_ir(4)


def wide_vectors() -> bool:
    """Whether numba compiles for AVX-512 (the features it targets: ``NUMBA_CPU_FEATURES`` if
    set, else the host's), where a vector of LANES float64 is one register."""
    features = config.CPU_FEATURES
    if features is None:
        features = get_host_cpu_features()
    return "+avx512f" in features.split(",")


def _target_chains() -> int:
    """Running maxima per lane for the features numba compiles for: four with AVX-512, else one
    (:func:`lane_argmax`)."""
    return 4 if wide_vectors() else 1


@intrinsic
def lane_argmax_down(typingctx, mean, inv_sqrt, slots, widths, best):
    """:func:`lane_argmax`, the slots visited from the last: the same result."""
    signature = _lane_argmax_typing(mean, inv_sqrt, slots, widths, best, "lane_argmax_down")
    return signature, _lane_argmax_ir(_target_chains(), downward=True)


@intrinsic
def lane_argmax(typingctx, mean, inv_sqrt, slots, widths, best):
    """``best[j]`` = the first slot s < ``slots`` of largest
    ``mean[s*LANES + j] + widths[j] * inv_sqrt[s*LANES + j]``, for each lane j.

    ``mean``, ``inv_sqrt``: a tile's interleaved arrays (float64, C, at least slots·LANES long);
    ``widths``: LANES float64, or one float for every lane, which loads nothing: a vector load of
    widths just stored one by one cannot take them from the stores and waits until they reach
    the cache, and the whole scan with it (agents alone: 0.92 times the time with one float);
    ``best``: LANES int64, written. Lanes never mix. An index that is
    NaN never wins (the reference's ``>`` alike); slots must be at least 1.

    With AVX-512 four running maxima per lane, over the quarters of the slots
    (:func:`lane_argmax_four`): their registers fit, and four chains of compares run side by
    side (a tile's scan alone 0.90-0.95 times two chains' time at 126-250 slots, two chains'
    0.84-0.98 times one's); with narrower vectors one (:func:`lane_argmax_one`): two chains'
    registers would spill (1.6 times the time at 500 slots). The same result either way.
    """
    signature = _lane_argmax_typing(mean, inv_sqrt, slots, widths, best, "lane_argmax")
    return signature, _lane_argmax_ir(_target_chains())


#: slots of a group of full communication's grouped bounds, scanned as one vector
#: (:mod:`mamab.engine.ucb_kernels`)
SPAN = 16


def _span_indices(typingctx, mean, inv_sqrt, row, start, width, name):
    """Typing shared by the span intrinsics: (agents, slots) float64 C arrays, two integers, a
    float; refused with the intrinsic's name otherwise."""
    if not (
        flat_float_array(mean, 2)
        and flat_float_array(inv_sqrt, 2)
        and isinstance(row, types.Integer)
        and isinstance(start, types.Integer)
        and isinstance(width, types.Float)
    ):
        raise TypingError(
            f"{name}(mean, inv_sqrt, row, start, width): 2-d float64 C arrays, two ints, a float"
        )


def _entry_pointer(context, builder, ty, value, row, column):
    """A pointer to entry (row, column) of a 2-d C array (int64 indices, no wraparound)."""
    array = context.make_array(ty)(context, builder, value)
    return cgutils.get_item_pointer2(
        context,
        builder,
        data=array.data,
        shape=cgutils.unpack_tuple(builder, array.shape),
        strides=cgutils.unpack_tuple(builder, array.strides),
        layout="C",
        inds=[row, column],
        wraparound=False,
    )


def splat(builder, value, vec):
    """``value`` in every lane of a vector of type ``vec``."""
    lane = ir.Constant(ir.IntType(32), 0)
    one = builder.insert_element(ir.Constant(vec, ir.Undefined), value, lane)
    return builder.shuffle_vector(
        one, one, ir.Constant(ir.VectorType(ir.IntType(32), vec.count), [0] * vec.count)
    )


def ucb_index(builder, mean, inv_sqrt, width):
    """mean + width·inv_sqrt as the reference agent computes it: an IEEE product, then a sum,
    never fused (numbers or vectors of them, ``width`` of the same type): equal bits, so equal
    comparisons, in every scan of this module."""
    return builder.fadd(mean, builder.fmul(width, inv_sqrt))


def _slot_index(builder, mean_p, inv_p, width, s):
    """:func:`ucb_index` of slot s of a tile's lanes (``mean_p``, ``inv_p``: vector pointers)."""
    mean = builder.load(builder.gep(mean_p, [s]), align=8)
    return ucb_index(builder, mean, builder.load(builder.gep(inv_p, [s]), align=8), width)


def _larger(builder, a, b):
    """``b`` where strictly larger than ``a``, else ``a`` (lane by lane): a NaN ``b`` never
    replaces ``a``."""
    return builder.select(builder.fcmp_ordered(">", b, a), b, a)


def call_intrinsic(builder, name, ret, args):
    """A call of the LLVM intrinsic ``name``, declared from the arguments' types."""
    function = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ret, [a.type for a in args]), name
    )
    return builder.call(function, args)


def masked_memory(builder, pointer, mask, store=None, fill=0.0):
    """A masked load of LANES float64 from ``pointer`` (``fill`` outside ``mask``), or a masked
    store of ``store``: nothing is read or written outside the mask's lanes."""
    vec, align = ir.VectorType(ir.DoubleType(), LANES), ir.Constant(ir.IntType(32), 8)
    if store is None:
        name = f"llvm.masked.load.v{LANES}f64.p0v{LANES}f64"
        passthru = ir.Constant(vec, [fill] * LANES)
        return call_intrinsic(builder, name, vec, [pointer, align, mask, passthru])
    name = f"llvm.masked.store.v{LANES}f64.p0v{LANES}f64"
    return call_intrinsic(builder, name, ir.VoidType(), [store, pointer, align, mask])


def _span_indices_ir(context, builder, sig, args):
    """The SPAN indices mean + width·inv_sqrt of slots start .. start + SPAN - 1 of ``row``, as
    one vector: an IEEE product, then a sum, never fused (the scalar expression's bits)."""
    mean_v, inv_v, row_v, start_v, width_v = args
    vec = ir.VectorType(ir.DoubleType(), SPAN)
    row = context.cast(builder, row_v, sig.args[2], types.int64)
    start = context.cast(builder, start_v, sig.args[3], types.int64)
    pointers = [
        builder.bitcast(_entry_pointer(context, builder, ty, value, row, start), vec.as_pointer())
        for ty, value in ((sig.args[0], mean_v), (sig.args[1], inv_v))
    ]
    width = context.cast(builder, width_v, sig.args[4], types.float64)
    mean = builder.load(pointers[0], align=8)
    inv = builder.load(pointers[1], align=8)
    return ucb_index(builder, mean, inv, splat(builder, width, vec))


def _tree_max(builder, values):
    """The largest lane of a vector, halving it: the same value as a scan for numbers that are
    not NaN (-0.0 and 0.0 compare equal, so which of them is kept never changes a comparison)."""
    lanes = values.type.count
    while lanes > 1:
        lanes //= 2
        low = builder.shuffle_vector(
            values, values, ir.Constant(ir.VectorType(ir.IntType(32), lanes), list(range(lanes)))
        )
        high = builder.shuffle_vector(
            values,
            values,
            ir.Constant(ir.VectorType(ir.IntType(32), lanes), list(range(lanes, 2 * lanes))),
        )
        values = _larger(builder, low, high)
    return builder.extract_element(values, ir.Constant(ir.IntType(32), 0))


@intrinsic
def span_max(typingctx, mean, inv_sqrt, row, start, width):
    """The largest mean[row, s] + width·inv_sqrt[row, s] over the SPAN slots s from ``start``
    (a group's bound); numbers that are not NaN."""
    _span_indices(typingctx, mean, inv_sqrt, row, start, width, "span_max")

    def codegen(context, builder, sig, args):
        return _tree_max(builder, _span_indices_ir(context, builder, sig, args))

    return types.float64(mean, inv_sqrt, row, start, width), codegen


@intrinsic
def span_max_with(typingctx, mean, inv_sqrt, row, start, width, offset, new_mean, new_inv_sqrt):
    """:func:`span_max` as if slot ``start + offset`` (0 <= offset < SPAN) held ``new_mean`` and
    ``new_inv_sqrt``:
    the caller stores them after, so the span's loads do not wait on those stores (a vector
    load cannot be forwarded from a store of one entry: it waits for the store to reach the
    cache). The same value as storing first, then :func:`span_max`."""
    _span_indices(typingctx, mean, inv_sqrt, row, start, width, "span_max_with")
    if not (
        isinstance(offset, types.Integer)
        and new_mean == types.float64
        and new_inv_sqrt == types.float64
    ):
        raise TypingError(
            "span_max_with(mean, inv_sqrt, row, start, width, offset, new_mean, new_inv_sqrt):"
            " an int offset and two floats"
        )

    def codegen(context, builder, sig, args):
        values = _span_indices_ir(context, builder, sig, args[:5])
        offset = context.cast(builder, args[5], sig.args[5], types.int64)
        width = context.cast(builder, args[4], sig.args[4], types.float64)
        index = ucb_index(builder, args[6], args[7], width)
        lanes = ir.VectorType(ir.IntType(64), SPAN)  # a select, not an insert at a variable
        here = builder.icmp_unsigned(  # lane: that would go through memory again
            "==", ir.Constant(lanes, list(range(SPAN))), splat(builder, offset, lanes)
        )
        values = builder.select(here, splat(builder, index, values.type), values)
        return _tree_max(builder, values)

    signature = types.float64(mean, inv_sqrt, row, start, width, offset, new_mean, new_inv_sqrt)
    return signature, codegen


def _span_best_ir(context, builder, sig, args):
    """(offset of the first largest index of the span, that index)."""
    values = _span_indices_ir(context, builder, sig, args)
    top = _tree_max(builder, values)
    equal = builder.fcmp_ordered("==", values, splat(builder, top, values.type))
    bits = builder.bitcast(equal, ir.IntType(SPAN))
    first = call_intrinsic(
        builder, f"llvm.cttz.i{SPAN}", ir.IntType(SPAN), [bits, ir.Constant(ir.IntType(1), 0)]
    )
    none = builder.icmp_unsigned("==", bits, ir.Constant(ir.IntType(SPAN), 0))
    first = builder.select(none, ir.Constant(ir.IntType(SPAN), 0), first)
    return builder.zext(first, ir.IntType(64)), top


@intrinsic
def span_best(typingctx, mean, inv_sqrt, row, start, width):
    """(offset, index): the offset (0 .. SPAN - 1) of the first of the SPAN slots from ``start``
    whose mean + width·inv_sqrt is largest (a plain scan's choice, for numbers that are not NaN;
    0 if none compares equal to the largest), and that largest index, the scalar expression's
    value for that slot (the same IEEE product, then sum; of two equal zeros either may come
    back, which never changes a comparison). Returning the index, not recomputing it from the
    slot's mean and 1/sqrt n, takes two loads, a product and a sum off a choice's chain (full
    communication 0.94-1.00 times the time on the sparse panels)."""
    _span_indices(typingctx, mean, inv_sqrt, row, start, width, "span_best")

    def codegen(context, builder, sig, args):
        offset, top = _span_best_ir(context, builder, sig, args)
        return context.make_tuple(builder, sig.return_type, [offset, top])

    signature = types.Tuple((types.int64, types.float64))(mean, inv_sqrt, row, start, width)
    return signature, codegen


#: entries of a row :func:`reaching` compares at most (the bits of its mask)
REACH = 64


def _row_in_eights(context, builder, sig, args, take):
    """Code that visits ``values[row, :count]`` (args 0-2) eight at a time: each eight by a
    masked load that reads nothing past ``count`` (-inf there), handed to ``take(chunk, inside,
    base)`` with the lanes inside ``count`` and the eight's first column."""
    values_v, row_v, count_v = args[:3]
    i64 = ir.IntType(64)
    vec = ir.VectorType(ir.DoubleType(), 8)
    row = context.cast(builder, row_v, sig.args[1], types.int64)
    count = context.cast(builder, count_v, sig.args[2], types.int64)
    first = _entry_pointer(context, builder, sig.args[0], values_v, row, ir.Constant(i64, 0))
    lane = ir.Constant(ir.VectorType(i64, 8), list(range(8)))
    chunks = builder.udiv(builder.add(count, ir.Constant(i64, 7)), ir.Constant(i64, 8))
    with cgutils.for_range(builder, chunks) as loop:
        base = builder.mul(loop.index, ir.Constant(i64, 8))
        left = builder.sub(count, base)
        inside = builder.icmp_signed("<", lane, splat(builder, left, ir.VectorType(i64, 8)))
        pointer = builder.bitcast(builder.gep(first, [base]), vec.as_pointer())
        take(masked_memory(builder, pointer, inside, fill=float("-inf")), inside, base)


@intrinsic
def reaching(typingctx, values, row, count, level):
    """A mask whose bit g is set when ``values[row, g] >= level``, for g < ``count`` (at most
    REACH): compared eight at a time, each eight by a masked load that reads nothing past
    ``count``."""
    if not (
        flat_float_array(values, 2)
        and isinstance(row, types.Integer)
        and isinstance(count, types.Integer)
        and isinstance(level, types.Float)
    ):
        raise TypingError(
            "reaching(values, row, count, level): a 2-d float64 C array, two ints, a float"
        )

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        level = context.cast(builder, args[3], sig.args[3], types.float64)
        levels = splat(builder, level, ir.VectorType(ir.DoubleType(), 8))
        mask = cgutils.alloca_once_value(builder, ir.Constant(i64, 0))

        def take(chunk, inside, base):
            reach = builder.and_(builder.fcmp_ordered(">=", chunk, levels), inside)
            bits = builder.zext(builder.bitcast(reach, ir.IntType(8)), i64)
            builder.store(builder.or_(builder.load(mask), builder.shl(bits, base)), mask)

        _row_in_eights(context, builder, sig, args, take)
        return builder.load(mask)

    return types.uint64(values, row, count, level), codegen


@intrinsic
def row_max(typingctx, values, row, count):
    """The largest of ``values[row, :count]`` (``count`` at least 1), numbers that are not NaN:
    eight at a time, each eight by a masked load that reads nothing past ``count`` (-inf there),
    into one running vector, then halved."""
    if not (
        flat_float_array(values, 2)
        and isinstance(row, types.Integer)
        and isinstance(count, types.Integer)
    ):
        raise TypingError("row_max(values, row, count): a 2-d float64 C array, two ints")

    def codegen(context, builder, sig, args):
        vec = ir.VectorType(ir.DoubleType(), 8)
        high = cgutils.alloca_once_value(builder, ir.Constant(vec, [float("-inf")] * 8))

        def take(chunk, inside, base):
            builder.store(_larger(builder, builder.load(high), chunk), high)

        _row_in_eights(context, builder, sig, args, take)
        return _tree_max(builder, builder.load(high))

    return types.float64(values, row, count), codegen


@intrinsic
def lowest_bit(typingctx, mask):
    """The index of the lowest set bit of a uint64 mask (64 if none)."""
    if not (isinstance(mask, types.Integer) and mask.bitwidth == 64 and not mask.signed):
        raise TypingError("lowest_bit(mask): a uint64")

    def codegen(context, builder, sig, args):
        return call_intrinsic(
            builder, "llvm.cttz.i64", ir.IntType(64), [args[0], ir.Constant(ir.IntType(1), 0)]
        )

    return types.uint64(mask), codegen


def _settles_typing(name, values):
    """Typing of the settle intrinsics: (total, count) pairs, each a float64 and an integer or
    float64 (a float32 count would make the scalar expression float32: other numbers)."""
    totals, counts = values[0::2], values[1::2]
    if not all(
        total == types.float64 and (isinstance(count, types.Integer) or count == types.float64)
        for total, count in zip(totals, counts, strict=True)
    ):
        raise TypingError(f"{name}: float64 totals and integer or float64 counts")
    return types.UniTuple(types.float64, len(values))(*values)


def _settles_ir(context, builder, sig, args):
    """(total / count, 1 / sqrt(count)) of each (total, count) pair of ``args``, side by side:
    the square roots in one vector, then the quotients in one vector division (lane by lane
    the scalar expressions' IEEE results)."""
    f64 = ir.DoubleType()
    pairs = len(args) // 2
    lane = ir.IntType(32)
    totals = [
        context.cast(builder, args[2 * i], sig.args[2 * i], types.float64) for i in range(pairs)
    ]
    counts = [
        context.cast(builder, args[2 * i + 1], sig.args[2 * i + 1], types.float64)
        for i in range(pairs)
    ]
    if pairs == 1:
        roots = [call_intrinsic(builder, "llvm.sqrt.f64", f64, counts)]
    else:
        square = _vector(builder, counts)
        root = call_intrinsic(builder, f"llvm.sqrt.v{pairs}f64", square.type, [square])
        roots = [builder.extract_element(root, lane(i)) for i in range(pairs)]
    one = ir.Constant(f64, 1.0)
    top = _vector(builder, [x for total in totals for x in (total, one)])
    bottom = _vector(builder, [x for pair in zip(counts, roots, strict=True) for x in pair])
    quotient = builder.fdiv(top, bottom)
    return context.make_tuple(
        builder,
        sig.return_type,
        [builder.extract_element(quotient, lane(i)) for i in range(2 * pairs)],
    )


def _vector(builder, values):
    """A vector of the float64 ``values``, in order."""
    vector = ir.Constant(ir.VectorType(ir.DoubleType(), len(values)), ir.Undefined)
    for i, value in enumerate(values):
        vector = builder.insert_element(vector, value, ir.IntType(32)(i))
    return vector


@intrinsic
def mean_and_inv_sqrt(typingctx, total, count):
    """(total / count, 1 / sqrt(count)) with one vector division of two lanes: each lane is the
    IEEE quotient of the scalar expression, so the numbers are the same, and a settle costs the
    divider one division and a square root instead of two divisions and a square root (full
    communication's settles: 0.96 times the time on the sparse panels; not used where it did not
    pay). ``count`` at least 1."""
    return _settles_typing("mean_and_inv_sqrt(total, count)", (total, count)), _settles_ir


@intrinsic
def two_means_and_inv_sqrts(typingctx, total, count, other_total, other_count):
    """:func:`mean_and_inv_sqrt` of two (total, count) pairs at once: (mean, 1/sqrt n, other
    mean, other 1/sqrt n), from one square root of two lanes and one division of four, which
    cost the divider what one settle's do (1.6 ns per settle instead of 3.0 in a loop alone)."""
    values = (total, count, other_total, other_count)
    return _settles_typing(
        "two_means_and_inv_sqrts(total, count, total, count)", values
    ), _settles_ir


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
    return LaneUCB(  # on cache lines: a tile's slot is one vector load, not two halves
        count=aligned_zeros(shape, dtype=np.int64),
        total=aligned_zeros(shape),
        mean=aligned_zeros(shape),
        inv_sqrt=aligned_zeros(shape),
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


def _suffix(element) -> str:
    """The type suffix of an LLVM vector intrinsic's name: f64 or i64."""
    return "f64" if isinstance(element, ir.DoubleType) else "i64"


def _addresses(builder, data, index):
    """A vector of pointers to ``data[index]`` (8-byte entries) for a vector of int64 indices."""
    vec = index.type
    base = splat(builder, builder.ptrtoint(data, ir.IntType(64)), vec)
    offsets = builder.mul(index, ir.Constant(vec, [8] * vec.count))
    return builder.inttoptr(
        builder.add(base, offsets), ir.VectorType(data.type.pointee.as_pointer(), vec.count)
    )


def _gather(builder, pointers, mask):
    """The entries the vector of pointers points to, in the lanes of ``mask`` (0 elsewhere)."""
    element = pointers.type.element.pointee
    vec, name = ir.VectorType(element, mask.type.count), _suffix(element)
    return call_intrinsic(
        builder,
        f"llvm.masked.gather.v{vec.count}{name}.v{vec.count}p0{name}",
        vec,
        [pointers, ir.Constant(ir.IntType(32), 8), mask, ir.Constant(vec, None)],
    )


def _scatter(builder, values, pointers, mask):
    """Store each lane of ``values`` in the lanes of ``mask`` where its pointer points."""
    count, name = values.type.count, _suffix(values.type.element)
    call_intrinsic(
        builder,
        f"llvm.masked.scatter.v{count}{name}.v{count}p0{name}",
        ir.VoidType(),
        [values, pointers, ir.Constant(ir.IntType(32), 8), mask],
    )


#: slots of a block of :func:`lane_argmax_blocks`
BLOCK = 8


def _lane_blocks_ir(downward: bool = False, stores: bool = True):
    """The code of :func:`lane_argmax_blocks`: each lane keeps only the block of BLOCK slots
    whose largest index first exceeds all before it, then finds the block's first slot of that
    value (slot 0 where no index exceeds -inf, as the plain scan).

    Per slot: a product and a sum, then a tree of maxima over the block's BLOCK indices (one
    maximum per slot) and, per block, one compare, two selects and the block counter's add:
    about 3.4 vector operations per slot, not the plain scan's 5.25 (a compare and two selects
    per slot, a quarter of a counter's add). The block's
    maximum is compared with the running one strictly (downward: at least as large), so the
    block kept is the first holding the largest index. One running maximum suffices: it changes
    once per block, not per slot.

    The first slot of that value in the kept block, from the block's indices: ``stores``, the
    block's BLOCK index vectors stored in the lanes that keep it (masked stores, which use no
    vector arithmetic port: with AVX-512); else each lane's block gathered again after the scan
    (16 gathers: with narrower vectors, where a masked store is two). The indices are the plain
    scan's (an IEEE product then a sum, never fused): equal bits, equal comparisons.
    """

    def codegen(context, builder, sig, args):
        mean_v, inv_v, slots_v, width_v, best_v = args
        mean_d, inv_d, best_d = (
            context.make_array(sig.args[i])(context, builder, value).data
            for i, value in ((0, mean_v), (1, inv_v), (4, best_v))
        )
        vec_f = ir.VectorType(ir.DoubleType(), LANES)
        vec_i = ir.VectorType(ir.IntType(64), LANES)
        i64 = ir.IntType(64)

        def splat_i(value):
            return ir.Constant(vec_i, [value] * LANES)

        def at(i):
            return ir.Constant(i64, i)

        mean_p, inv_p = (builder.bitcast(d, vec_f.as_pointer()) for d in (mean_d, inv_d))
        width = splat(builder, context.cast(builder, width_v, sig.args[3], types.float64), vec_f)
        count = context.cast(builder, slots_v, sig.args[2], types.int64)
        blocks = builder.udiv(count, at(BLOCK))  # whole blocks; then a tail
        minus_inf = ir.Constant(vec_f, [float("-inf")] * LANES)
        top = cgutils.alloca_once_value(builder, minus_inf)
        where = cgutils.alloca_once_value(builder, splat_i(0))
        kept = cgutils.alloca_once(builder, vec_f, size=BLOCK)  # the kept blocks' indices
        tail_values = cgutils.alloca_once(builder, vec_f, size=BLOCK)

        def index(s):
            """Slot s's indices, every lane."""
            return _slot_index(builder, mean_p, inv_p, width, s)

        def take(values, number):
            """A block's BLOCK index vectors against the running maxima; ``number``: its own."""
            high = values
            while len(high) > 1:  # a tree: its levels' maxima are independent
                high = [_larger(builder, x, y) for x, y in zip(high[::2], high[1::2], strict=True)]
            old = builder.load(top)
            larger = builder.fcmp_ordered(">=" if downward else ">", high[0], old)
            builder.store(builder.select(larger, high[0], old), top)
            builder.store(builder.select(larger, number, builder.load(where)), where)
            if stores:
                for i, value in enumerate(values):
                    masked_memory(builder, builder.gep(kept, [at(i)]), larger, store=value)

        def tail():
            """The slots past the last whole block, as a block of its own (number ``blocks``,
            -inf past the last slot)."""
            start = builder.mul(blocks, at(BLOCK))
            for i in range(BLOCK):
                builder.store(minus_inf, builder.gep(tail_values, [at(i)]))
            with cgutils.for_range(builder, builder.sub(count, start)) as loop:
                value = index(builder.add(start, loop.index))
                builder.store(value, builder.gep(tail_values, [loop.index]))
            with cgutils.if_likely(builder, builder.icmp_unsigned(">", count, start)):
                values = [builder.load(builder.gep(tail_values, [at(i)])) for i in range(BLOCK)]
                take(values, splat(builder, blocks, vec_i))

        if downward:
            tail()
        first = builder.sub(blocks, at(1)) if downward else at(0)
        counter = cgutils.alloca_once_value(builder, splat(builder, first, vec_i))
        with cgutils.for_range(builder, blocks) as loop:
            block = builder.sub(first, loop.index) if downward else loop.index
            start = builder.mul(block, at(BLOCK))
            number = builder.load(counter)  # the block's number in every lane
            take([index(builder.add(start, at(i))) for i in range(BLOCK)], number)
            builder.store(builder.add(number, splat_i(-1 if downward else 1)), counter)
        if not downward:
            tail()
        high = builder.load(top)
        start = builder.mul(builder.load(where), splat_i(BLOCK))
        last = builder.sub(splat(builder, count, vec_i), splat_i(1))
        lanes = ir.Constant(vec_i, list(range(LANES)))
        found = start
        for i in reversed(range(BLOCK)):  # the kept block's first slot of that value
            slot = builder.add(start, splat_i(i))
            inside = builder.icmp_signed("<=", slot, last)
            if stores:
                value = builder.load(builder.gep(kept, [at(i)]))
            else:
                entry = builder.add(builder.mul(slot, splat_i(LANES)), lanes)
                m = _gather(builder, _addresses(builder, mean_d, entry), inside)
                r = _gather(builder, _addresses(builder, inv_d, entry), inside)
                value = ucb_index(builder, m, r, width)
            equal = builder.and_(inside, builder.fcmp_ordered("==", value, high))
            found = builder.select(equal, slot, found)
        # a lane with no index above -inf kept no block going up (its stored indices are an
        # earlier scan's): slot 0, the first maximum
        found = builder.select(builder.fcmp_ordered(">", high, minus_inf), found, splat_i(0))
        builder.store(found, builder.bitcast(best_d, vec_i.as_pointer()), align=8)
        return context.get_dummy_value()

    return codegen


#: slots from which agents alone scan by blocks (:func:`lane_argmax_blocks`): below, the work
#: after the blocks costs more than the compares saved. A tile's scan alone, against the plain
#: scan's time on the Intel host (benchmarks/lane_scan.py, runs from 14:25 to 15:31 UTC):
#: blocks stored (AVX-512) 1.02-1.11 at 32 slots, 0.96-1.03 at 48, 0.97-1.02 at 64, 0.94-0.97
#: at 80, 0.80-0.92 at 100-500; gathered (compiled for AVX2) 1.16 at 64, 0.94 at 96, 0.97 at
#: 100, 0.68-0.73 at 200-500
BLOCKS_FROM = 64 if wide_vectors() else 96


def _blocks_typing(mean, inv_sqrt, slots, width, best, name):
    """:func:`_lane_argmax_typing` with one width for every lane (a float)."""
    if not isinstance(width, types.Float):
        raise TypingError(f"{name}(mean, inv_sqrt, slots, width, best): one width, a float")
    return _lane_argmax_typing(mean, inv_sqrt, slots, width, best, name)


@intrinsic
def lane_argmax_blocks(typingctx, mean, inv_sqrt, slots, width, best):
    """:func:`lane_argmax` with one width for every lane, by blocks of BLOCK slots
    (:func:`_lane_blocks_ir`): the same result when no index is NaN, which callers must ensure
    (agents alone once every arm has a sample). From BLOCKS_FROM slots on it takes less time:
    agents alone 0.89-0.91 times the time at 200-500 arms (benchmarks/README.md,
    twenty-fourth round)."""
    signature = _blocks_typing(mean, inv_sqrt, slots, width, best, "lane_argmax_blocks")
    return signature, _lane_blocks_ir(stores=wide_vectors())


@intrinsic
def lane_argmax_blocks_down(typingctx, mean, inv_sqrt, slots, width, best):
    """:func:`lane_argmax_blocks`, the blocks visited from the last: the same result."""
    signature = _blocks_typing(mean, inv_sqrt, slots, width, best, "lane_argmax_blocks_down")
    return signature, _lane_blocks_ir(downward=True, stores=wide_vectors())


def _lane_codegen(context, builder, sig):
    """What a tile's intrinsic generates its code with: a vector of LANES float64 and of LANES
    int64, the lanes' numbers 0 .. LANES - 1, argument i as a number (``number(i, value,
    ty=int64)``) and an array argument's data pointer (``data(ty, value)``)."""
    vi = ir.VectorType(ir.IntType(64), LANES)

    def number(i, value, ty=types.int64):
        return context.cast(builder, value, sig.args[i], ty)

    def data(ty, value):
        return context.make_array(ty)(context, builder, value).data

    vf = ir.VectorType(ir.DoubleType(), LANES)
    return vf, vi, ir.Constant(vi, list(range(LANES))), number, data


def _lane_draws(context, builder, ty, draws, row, inside):
    """The lanes' draws: ``draws[row, :LANES]`` (a 2-d float64 array), nothing read outside
    ``inside``."""
    first = _entry_pointer(context, builder, ty, draws, row, ir.Constant(ir.IntType(64), 0))
    vec = ir.VectorType(ir.DoubleType(), LANES)
    return masked_memory(builder, builder.bitcast(first, vec.as_pointer()), inside)


def _lane_rewards(context, builder, fields, rewards, draw, mean_of_arm):
    """Each lane's reward (:func:`~mamab.engine.kernel_api.reward_of`'s numbers): Bernoulli
    draw < mean, else mean + sigma·draw, from ``rewards`` = (means, gaps, bernoulli, sigma) of
    types ``fields``."""
    bernoulli = context.cast(builder, builder.extract_value(rewards, 2), fields[2], types.boolean)
    sigma = context.cast(builder, builder.extract_value(rewards, 3), fields[3], types.float64)
    coin = builder.uitofp(builder.fcmp_ordered("<", draw, mean_of_arm), draw.type)
    normal = builder.fadd(mean_of_arm, builder.fmul(splat(builder, sigma, draw.type), draw))
    return builder.select(bernoulli, coin, normal)


def _grow_regret(builder, regret, first, inside, gap):
    """``regret[first + j] += gap[j]`` for the lanes j inside."""
    at = builder.bitcast(builder.gep(regret, [first]), gap.type.as_pointer())
    masked_memory(builder, at, inside, store=builder.fadd(masked_memory(builder, at, inside), gap))


def _rewards_typed(rewards) -> bool:
    """Whether ``rewards`` is typed as ``Rewards``: (means, gaps: float64 C arrays, bernoulli: a
    bool, sigma: a float)."""
    fields = getattr(rewards, "types", ())
    return (
        len(fields) == 4
        and all(flat_float_array(t) for t in fields[:2])
        and fields[2] == types.boolean
        and isinstance(fields[3], types.Float)
    )


def _lane_learn_typing(draws, row, used, best, tile, rewards, regret, first):
    """Typing of :func:`lane_learn`; refused unless the arrays and numbers are as it reads."""
    arrays_1d = (
        len(getattr(tile, "types", ())) == 4
        and _flat_int_array(tile.types[0])
        and all(flat_float_array(t) for t in tile.types[1:])
    )
    if not (
        flat_float_array(draws, 2)
        and all(isinstance(x, types.Integer) for x in (row, used, first))
        and _flat_int_array(best)
        and arrays_1d
        and _rewards_typed(rewards)
        and flat_float_array(regret)
    ):
        raise TypingError(
            "lane_learn(draws, row, used, best, tile, rewards, regret, first): a 2-d float64 "
            "C array, two ints, an int64 C array, (count, total, mean, inv_sqrt) C arrays "
            "(int64, float64...), Rewards, a float64 C array, an int"
        )
    return types.void(draws, row, used, best, tile, rewards, regret, first)


@intrinsic
def lane_learn(typingctx, draws, row, used, best, tile, rewards, regret, first):
    """Lanes j < ``used`` of a tile play their slot ``best[j]`` and learn its sample, all at
    once: :func:`learn_lane` on entry best[j]·LANES + j of ``tile`` = (count, total, mean,
    inv_sqrt) with the reward of ``draws[row, j]`` (:func:`~mamab.engine.kernel_api.reward_of`:
    Bernoulli draw < mean, else mean + sigma·draw, from ``rewards``), and ``regret[first + j]``
    grows by the arm's gap. ``best`` holds LANES slots, read whole (a scan's store of it just
    before is then forwarded to the read, where a masked read waits for the store to reach the
    cache: no-communication 0.96-0.98 times the time at (150,250), (100,500) and complete
    (10,100)); its lanes from ``used`` on are ignored.

    The numbers of the scalar code lane by lane (an IEEE sum, quotient, square root and
    quotient each, never fused); the entries are gathered and scattered (each lane's is its
    own: they never collide). Eight agents alone learning one by one cost a quarter or more of
    their step beside the scan of every arm (no-communication 0.91-0.97 times the time on the
    paper's panels). ``best`` is read whole (LANES entries); nothing else outside the lanes
    j < ``used`` is read or written."""
    signature = _lane_learn_typing(draws, row, used, best, tile, rewards, regret, first)

    def codegen(context, builder, sig, args):
        draws_v, row_v, used_v, best_v, tile_v, rewards_v, regret_v, first_v = args
        vf, vi, lane, number, data = _lane_codegen(context, builder, sig)
        inside = builder.icmp_signed("<", lane, splat(builder, number(2, used_v), vi))
        best = data(sig.args[3], best_v)  # read whole (the docstring)
        slot = builder.load(builder.bitcast(best, vi.as_pointer()), align=8)
        entry = builder.add(builder.mul(slot, ir.Constant(vi, [LANES] * LANES)), lane)
        fields = sig.args[5].types
        means, gaps = (data(fields[i], builder.extract_value(rewards_v, i)) for i in range(2))
        mean_of_arm = _gather(builder, _addresses(builder, means, slot), inside)
        draw = _lane_draws(context, builder, sig.args[0], draws_v, number(1, row_v), inside)
        reward = _lane_rewards(context, builder, fields, rewards_v, draw, mean_of_arm)
        count_p, total_p, mean_p, inv_p = (
            _addresses(builder, data(ty, builder.extract_value(tile_v, i)), entry)
            for i, ty in enumerate(sig.args[4].types)
        )
        count = builder.add(_gather(builder, count_p, inside), ir.Constant(vi, [1] * LANES))
        _scatter(builder, count, count_p, inside)
        total = builder.fadd(_gather(builder, total_p, inside), reward)
        _scatter(builder, total, total_p, inside)
        samples = builder.sitofp(count, vf)
        _scatter(builder, builder.fdiv(total, samples), mean_p, inside)
        root = call_intrinsic(builder, f"llvm.sqrt.v{LANES}f64", vf, [samples])
        _scatter(builder, builder.fdiv(ir.Constant(vf, [1.0] * LANES), root), inv_p, inside)
        gap = _gather(builder, _addresses(builder, gaps, slot), inside)
        _grow_regret(builder, data(sig.args[6], regret_v), number(7, first_v), inside, gap)
        return context.get_dummy_value()

    return signature, codegen


#: slots up to which a ready tile of the LCC family plays a step by :func:`small_tile_step`,
#: where numba compiles for AVX-512; with narrower vectors its eight lanes' integer compares and
#: conversions are split or emulated (LCC-UCB-GRAPH 1.10, LCC-UCB (20,100) 1.26 times the time
#: with AVX2 alone): none there
SMALL_SET = 16 if wide_vectors() else 0


def _small_tile_typing(draws, row, lo, used, slots, width, part, tile, rewards, regret):
    """Typing of :func:`small_tile_step`; refused unless the arrays and numbers are as it reads."""
    fields = getattr(tile, "types", ())
    tile_arrays = (
        len(fields) == 7
        and all(flat_float_array(t, 2) for t in fields[:2])
        and _flat_int_array(fields[2])
        and all(flat_float_array(t) for t in fields[3:])
    )
    if not (
        flat_float_array(draws, 2)
        and all(isinstance(x, types.Integer) for x in (row, lo, used, slots, part))
        and isinstance(width, types.Float)
        and tile_arrays
        and _rewards_typed(rewards)
        and flat_float_array(regret)
    ):
        raise TypingError(
            "small_tile_step(draws, row, lo, used, slots, width, part, tile, rewards, regret): "
            "a 2-d float64 C array, four ints, a float, an int, (lane means, lane 1/sqrt n: "
            "2-d float64; counts int64; sums, arms' means, arms' gaps, 1/sqrt table float64: "
            "C arrays), Rewards, a float64 C array"
        )
    return types.void(draws, row, lo, used, slots, width, part, tile, rewards, regret)


@intrinsic
def small_tile_step(typingctx, draws, row, lo, used, slots, width, part, tile, rewards, regret):
    """One step of a tile whose agents hold at most SMALL_SET slots and have seen as many
    samples (one ``width``): lanes j < ``used`` (agents lo + j) choose the first slot of largest
    mean + width·(1/sqrt n) among ``slots``, play its arm with the draw ``draws[row, j]`` and
    learn the sample; ``regret[lo + j]`` grows by the arm's gap.

    ``tile`` = (lane means, lane 1/sqrt n, counts, sums, arms' means, arms' gaps, 1/sqrt table):
    the first two the rows ``part`` of (tiles, slots·LANES) arrays, the next four (slots·LANES)
    of this tile (slot s of lane j at s·LANES + j), every row on a cache line; a count c below
    the table's size takes its 1/sqrt c from it (the same number). The numbers of the scalar
    code lane by lane (``rewards``: Bernoulli draw < mean, else mean + sigma·draw).

    Slot by slot, not entry by entry: the scan keeps, beside each lane's best index, that slot's
    count, sum, arm's mean and gap (selected as the slot is taken: no gathers on the way from a
    choice to its reward), and the learning writes every slot's vectors back whole (the lanes
    that chose it changed), so that the next step's vector loads take their values from these
    stores; single entries written lane by lane would make them wait until the stores reach the
    cache."""
    signature = _small_tile_typing(draws, row, lo, used, slots, width, part, tile, rewards, regret)

    def codegen(context, builder, sig, args):
        draws_v, row_v, lo_v, used_v, slots_v, width_v, part_v, tile_v, rewards_v, regret_v = args
        vf, vi, lane, number, data = _lane_codegen(context, builder, sig)
        i64 = vi.element
        fields = sig.args[7].types
        tile = [builder.extract_value(tile_v, i) for i in range(len(fields))]
        part, zero = number(6, part_v), ir.Constant(i64, 0)
        mean_p, inv_p = (
            builder.bitcast(
                _entry_pointer(context, builder, fields[i], tile[i], part, zero), vf.as_pointer()
            )
            for i in range(2)
        )
        count_p = builder.bitcast(data(fields[2], tile[2]), vi.as_pointer())
        total_p, arm_mean_p, arm_gap_p = (
            builder.bitcast(data(fields[i], tile[i]), vf.as_pointer()) for i in (3, 4, 5)
        )
        table = context.make_array(fields[6])(context, builder, tile[6])
        table_size = builder.extract_value(table.shape, 0)
        inside = builder.icmp_signed("<", lane, splat(builder, number(3, used_v), vi))
        width = splat(builder, number(5, width_v, types.float64), vf)
        count_slots = number(4, slots_v)
        # the scan: each lane's first largest index, and that slot's numbers
        # (a lane with no index above -inf keeps slot 0 and its numbers, as lane_argmax would)
        kept = [
            cgutils.alloca_once_value(builder, value)
            for value in (
                ir.Constant(vf, [float("-inf")] * LANES),
                ir.Constant(vi, [0] * LANES),
                *(builder.load(p, align=8) for p in (count_p, total_p, arm_mean_p, arm_gap_p)),
            )
        ]
        with cgutils.for_range(builder, count_slots) as loop:
            s = loop.index
            index = _slot_index(builder, mean_p, inv_p, width, s)
            larger = builder.fcmp_ordered(">", index, builder.load(kept[0]))
            news = [index, splat(builder, s, vi)] + [
                builder.load(builder.gep(p, [s]), align=8)
                for p in (count_p, total_p, arm_mean_p, arm_gap_p)
            ]
            for pointer, new in zip(kept, news, strict=True):
                builder.store(builder.select(larger, new, builder.load(pointer)), pointer)
        best, count, total, mean_of_arm, gap = (builder.load(p) for p in kept[1:])
        # the play: reward_of's numbers for the draw of each lane's agent
        draw = _lane_draws(context, builder, sig.args[0], draws_v, number(1, row_v), inside)
        reward = _lane_rewards(context, builder, sig.args[8].types, rewards_v, draw, mean_of_arm)
        # the learning: learn_lane's numbers, 1/sqrt c from the table below its size
        count = builder.add(count, ir.Constant(vi, [1] * LANES))
        total = builder.fadd(total, reward)
        mean = builder.fdiv(total, builder.sitofp(count, vf))
        listed = builder.and_(
            inside, builder.icmp_signed("<", count, splat(builder, table_size, vi))
        )
        root = cgutils.alloca_once_value(
            builder, _gather(builder, _addresses(builder, table.data, count), listed)
        )
        beyond = builder.bitcast(builder.xor(listed, inside), ir.IntType(LANES))
        with builder.if_then(builder.icmp_unsigned("!=", beyond, ir.Constant(beyond.type, 0))):
            samples = builder.sitofp(count, vf)
            exact = builder.fdiv(
                ir.Constant(vf, [1.0] * LANES),
                call_intrinsic(builder, f"llvm.sqrt.v{LANES}f64", vf, [samples]),
            )
            builder.store(builder.select(listed, builder.load(root), exact), root)
        inv = builder.load(root)
        # every slot's vectors written back whole, the lanes that chose it changed
        with cgutils.for_range(builder, count_slots) as loop:
            s = loop.index
            chose = builder.and_(inside, builder.icmp_signed("==", best, splat(builder, s, vi)))
            for pointer, new in ((count_p, count), (total_p, total), (mean_p, mean), (inv_p, inv)):
                at = builder.gep(pointer, [s])
                builder.store(builder.select(chose, new, builder.load(at, align=8)), at, align=8)
        _grow_regret(builder, data(sig.args[9], regret_v), number(2, lo_v), inside, gap)
        return context.get_dummy_value()

    return signature, codegen
