"""Weighted sums of rows, LANES entries at a time, as intrinsics (coop-UCB2's consensus), and a
cache line asked for ahead.

A loop such as ``dst[i] = dst[i] + w * src[j + i]`` over numba arrays is vectorized by LLVM only
behind a run-time check that the arrays do not overlap, made before every loop: with rows of
100 arms, those checks held 12-25% of coop-UCB2's samples (15% in the twenty-first round's
profile, benchmarks/README.md). These intrinsics write one vector of LANES entries each, with
the arithmetic of the scalar expression written out (an IEEE product, then a sum, in the
expression's order, never fused), and touch nothing beyond ``count`` entries: a caller's loop
over a row in steps of LANES needs no such check. Offsets are entries of flat (1-d C) float64
arrays.

:func:`prefetch_line` asks for a cache line ahead of its use (the LCC family's ready tiles copy
their noise columns with it).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core.errors import TypingError
from numba.extending import intrinsic

from mamab.engine.lanes import LANES, call_intrinsic, flat_float_array, masked_memory, splat


def _typing(name, dst, at, src, offsets, weight, count):
    """Refuse arguments of the wrong kinds, naming the intrinsic."""
    if not (
        flat_float_array(dst)
        and flat_float_array(src)
        and isinstance(at, types.Integer)
        and all(isinstance(o, types.Integer) for o in offsets)
        and isinstance(weight, types.Float)
        and isinstance(count, types.Integer)
    ):
        sources = ", ".join(["a", "b"][: len(offsets)])
        raise TypingError(
            f"{name}(dst, at, src, {sources}, weight, count): 1-d float64 C arrays, int offsets,"
            " a float weight, an int count"
        )


def _codegen(accumulate: bool):
    """Code for dst[at + i] = [dst[at + i] +] w·src[o1 + i] [+ w·src[o2 + i]], i < min(count,
    LANES): masked loads and store, one product then one sum per term, in order."""

    def codegen(context, builder, sig, args):
        dst_ty, _, src_ty, *rest = sig.args
        dst_v, at_v, src_v, *values = args
        offsets, (weight_v, count_v) = values[:-2], values[-2:]
        vec = ir.VectorType(ir.DoubleType(), LANES)
        lanes = ir.VectorType(ir.IntType(64), LANES)
        count = context.cast(builder, count_v, rest[-1], types.int64)
        mask = builder.icmp_signed(
            "<", ir.Constant(lanes, list(range(LANES))), splat(builder, count, lanes)
        )
        weight = splat(builder, context.cast(builder, weight_v, rest[-2], types.float64), vec)

        def pointer(ty, array, offset_v, offset_ty):
            data = context.make_array(ty)(context, builder, array).data
            offset = context.cast(builder, offset_v, offset_ty, types.int64)
            return builder.bitcast(builder.gep(data, [offset]), vec.as_pointer())

        target = pointer(dst_ty, dst_v, at_v, sig.args[1])
        total = masked_memory(builder, target, mask) if accumulate else None
        for offset_v, offset_ty in zip(offsets, rest[:-2], strict=True):
            term = builder.fmul(
                weight, masked_memory(builder, pointer(src_ty, src_v, offset_v, offset_ty), mask)
            )
            total = term if total is None else builder.fadd(total, term)
        masked_memory(builder, target, mask, store=total)
        return context.get_dummy_value()

    return codegen


@intrinsic
def scaled_row(typingctx, dst, at, src, a, weight, count):
    """dst[at + i] = weight·src[a + i] for i < min(count, LANES)."""
    _typing("scaled_row", dst, at, src, (a,), weight, count)
    return types.void(dst, at, src, a, weight, count), _codegen(accumulate=False)


@intrinsic
def add_scaled_row(typingctx, dst, at, src, a, weight, count):
    """dst[at + i] = dst[at + i] + weight·src[a + i] for i < min(count, LANES)."""
    _typing("add_scaled_row", dst, at, src, (a,), weight, count)
    return types.void(dst, at, src, a, weight, count), _codegen(accumulate=True)


@intrinsic
def add_two_scaled_rows(typingctx, dst, at, src, a, b, weight, count):
    """dst[at + i] = (dst[at + i] + weight·src[a + i]) + weight·src[b + i] for
    i < min(count, LANES): two senders' terms added in order, as the scalar expression."""
    _typing("add_two_scaled_rows", dst, at, src, (a, b), weight, count)
    return types.void(dst, at, src, a, b, weight, count), _codegen(accumulate=True)


@intrinsic
def prefetch_line(typingctx, src, a):
    """Ask the processor to bring the cache line of src[a] into its second-level cache, to be
    read later (a hint: nothing is read now, and an address past the array never faults)."""
    if not (flat_float_array(src) and isinstance(a, types.Integer)):
        raise TypingError("prefetch_line(src, a): a 1-d float64 C array, an int offset")

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        offset = context.cast(builder, args[1], sig.args[1], types.int64)
        pointer = builder.bitcast(builder.gep(data, [offset]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)  # read, locality 2 (the second-level cache), data
        call_intrinsic(
            builder, "llvm.prefetch.p0i8", ir.VoidType(), [pointer, i32(0), i32(2), i32(1)]
        )
        return context.get_dummy_value()

    return types.void(src, a), codegen
