"""Weighted row sums in vectors (mamab.engine.vector_rows): the scalar expressions' numbers, and
nothing written past the count."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.core.errors import TypingError

from mamab.engine.lanes import LANES
from mamab.engine.vector_rows import add_scaled_row, add_two_scaled_rows, prefetch_line, scaled_row
from mamab.kernel_cache import njit


@njit
def _rows(dst, at, src, a, b, weight, count, terms):
    """Every intrinsic over ``count`` entries in steps of LANES, as a kernel calls them."""
    for i in range(0, count, LANES):
        if terms == 0:
            scaled_row(dst, at + i, src, a + i, weight, count - i)
        elif terms == 1:
            add_scaled_row(dst, at + i, src, a + i, weight, count - i)
        else:
            add_two_scaled_rows(dst, at + i, src, a + i, b + i, weight, count - i)


def _expected(dst, at, src, a, b, weight, count, terms):
    out = dst.copy()
    for i in range(count):
        if terms == 0:
            out[at + i] = weight * src[a + i]
        elif terms == 1:
            out[at + i] = out[at + i] + weight * src[a + i]
        else:
            out[at + i] = out[at + i] + weight * src[a + i] + weight * src[b + i]
    return out


@settings(max_examples=200, deadline=None)
@given(
    count=st.integers(1, 3 * LANES + 3),
    terms=st.sampled_from([0, 1, 2]),
    seed=st.integers(0, 2**32 - 1),
    weight=st.sampled_from([1.0, 1 / 3, 0.1, 7.25]),
)
def test_each_entry_is_the_scalar_expression_and_nothing_past_the_count_changes(
    count, terms, seed, weight
):
    rng = np.random.default_rng(seed)
    size = 4 * count + 2 * LANES
    # sums of thirds and tenths: (d + w·a) + w·b and d + (w·a + w·b) round differently
    dst = rng.integers(0, 1000, size) / 3.0
    src = rng.integers(0, 1000, size) / 10.0
    at, a, b = rng.integers(0, size - count - LANES, 3)
    got = dst.copy()
    _rows(got, at, src, a, b, weight, count, terms)
    expected = _expected(dst, at, src, a, b, weight, count, terms)
    assert np.array_equal(got, expected)  # bit for bit, and every other entry as it was


def test_the_terms_are_added_in_the_expressions_order():
    # (1 + 2^-53) + 2^-53 is 1 in IEEE arithmetic, 1 + (2^-53 + 2^-53) is not
    dst, src = np.ones(LANES), np.full(2 * LANES, 2.0**-53)
    _rows(dst, 0, src, 0, LANES, 1.0, LANES, 2)
    assert np.all(dst == 1.0)


def test_a_row_of_the_wrong_kind_is_refused_by_name():
    @njit
    def wrong(dst, src):
        add_two_scaled_rows(dst, 0, src, 0, 1, 1.0, 4)

    with pytest.raises(TypingError, match="add_two_scaled_rows"):
        wrong(np.zeros((2, 4)), np.zeros(8))


@njit
def _ask(src, offsets):
    for a in offsets:
        prefetch_line(src, a)
    return src.sum()


def test_a_prefetch_reads_and_writes_nothing_even_past_the_array():
    src = np.arange(16.0)
    assert _ask(src, np.array([0, 15, 16, 1 << 20, -(1 << 20)])) == np.arange(16.0).sum()
    assert np.array_equal(src, np.arange(16.0))
    with pytest.raises(TypingError, match="prefetch_line"):
        _ask(np.zeros((2, 2)), np.array([0]))
