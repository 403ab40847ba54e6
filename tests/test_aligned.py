"""Arrays on cache lines (mamab.engine.aligned) and the kernels' state built on them."""

from __future__ import annotations

import numpy as np
import pytest

from mamab.engine.aligned import LINE, aligned_full, aligned_zeros


@pytest.mark.parametrize("shape", [0, 1, 7, (3, 5), (2, 0), (4, 16, 2), (19, 151 * 8)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64, np.bool_])
def test_aligned_arrays_start_on_a_cache_line(shape, dtype):
    array = aligned_full(shape, 1, dtype)
    assert array.ctypes.data % LINE == 0 or array.size == 0  # an empty view points anywhere
    assert array.shape == np.zeros(shape).shape and array.dtype == np.dtype(dtype)
    assert array.flags.c_contiguous and array.flags.writeable
    assert np.all(array == 1)
    zeros = aligned_zeros(shape, dtype)
    assert (zeros.ctypes.data % LINE == 0 or zeros.size == 0) and not np.any(zeros)


def test_aligned_full_keeps_its_value_and_buffer():
    array = aligned_full((3, 4), -np.inf)
    assert np.all(np.isneginf(array)) and array.base is not None
    array[2, 3] = 5.0  # writes go to the view's own bytes, not a neighbour's
    assert array[2, 3] == 5.0 and np.isneginf(array[2, 2])


def test_vector_scanned_state_starts_on_cache_lines():
    """The arrays the kernels load as vectors: a row of a tile or a group is one load per
    vector, not two halves (a performance property: the numbers are the same either way)."""
    from mamab.algorithms.lcc.driver import lane_copy
    from mamab.engine.lanes import lane_ucb
    from mamab.engine.ucb_kernels import grouped_ucb

    lanes = lane_ucb(150, 250)
    grouped = grouped_ucb(150, 250)
    copy = lane_copy(np.full(150, 5), 151)  # large: numpy would start it 16 bytes in
    for array in (
        lanes.mean,
        lanes.inv_sqrt,
        grouped.mean,
        grouped.inv_sqrt,
        grouped.tally,
        grouped.top,
        copy["lane_mean"],
        copy["lane_inv"],
        copy["lane_best"],
        copy["tile_count"],
        copy["tile_total"],
        copy["tile_arm_mean"],
        copy["tile_arm_gap"],
    ):
        assert array.ctypes.data % LINE == 0
