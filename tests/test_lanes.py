"""The vector-lane argmax of agents alone (mamab.engine.lanes): every lane's first maximum."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.core.errors import TypingError

from mamab.engine.lanes import LANES, lane_argmax, lane_ucb
from mamab.kernel_cache import njit


@njit(cache=False)
def _scan(mean, inv_sqrt, slots, widths):
    best = np.zeros(LANES, dtype=np.int64)
    lane_argmax(mean, inv_sqrt, slots, widths, best)
    return best


def _first_max(mean, inv_sqrt, slots, widths, lane):
    """A plain scan of one lane, as the reference agent chooses: the first strict maximum."""
    best, value = 0, -math.inf
    for s in range(slots):
        index = mean[s * LANES + lane] + widths[lane] * inv_sqrt[s * LANES + lane]
        if index > value:
            best, value = s, index
    return best


# Few distinct values, so that exact ties (equal counts and sums) are common, as with Bernoulli
# rewards; -inf stands for an arm no index can reach.
values = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1 / 3, 2 / 3, -math.inf, 0.1 + 0.2])
inverse_roots = st.sampled_from([0.0, 1.0, 1 / math.sqrt(2), 1 / math.sqrt(3), 0.5, 1e-3])


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    slots=st.integers(1, 70),
    widths=st.lists(st.floats(0.0, 10.0), min_size=LANES, max_size=LANES),
)
def test_each_lane_gets_its_first_maximum(data, slots, widths):
    mean = np.array(data.draw(st.lists(values, min_size=slots * LANES, max_size=slots * LANES)))
    inv_sqrt = np.array(
        data.draw(st.lists(inverse_roots, min_size=slots * LANES, max_size=slots * LANES))
    )
    widths = np.array(widths)
    best = _scan(mean, inv_sqrt, slots, widths)
    assert list(best) == [_first_max(mean, inv_sqrt, slots, widths, j) for j in range(LANES)]


def test_lanes_do_not_mix_and_later_slots_are_not_read():
    # Lane j's maximum sits at slot j; slots past ``slots`` hold larger values that must be ignored.
    slots = LANES + 2
    mean = np.zeros((slots + 2) * LANES)
    for j in range(LANES):
        mean[j * LANES + j] = 1.0 + j
    mean[slots * LANES :] = 100.0
    best = _scan(mean, np.zeros_like(mean), slots, np.ones(LANES))
    assert list(best) == list(range(LANES))


def test_the_state_interleaves_lanes_by_tile():
    state = lane_ucb(agents=LANES + 1, arms=7)
    assert state.mean.shape == (2, 7 * LANES)  # a second tile for the fifth agent
    assert state.samples.shape == (LANES + 1,)
    empty = lane_ucb(agents=0, arms=7)
    assert empty.mean.shape == (0, 7 * LANES)


def test_wrong_arrays_are_refused_when_compiling():
    @njit(cache=False)
    def scan_float32(mean, widths):
        best = np.zeros(LANES, dtype=np.int64)
        lane_argmax(mean, mean, 3, widths, best)
        return best

    with pytest.raises(TypingError, match="lane_argmax"):
        scan_float32(np.zeros(3 * LANES, dtype=np.float32), np.ones(LANES))
