"""Full communication's grouped bounds (mamab.engine.ucb_kernels): the lazy argmax is exact."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mamab.engine.ucb_kernels import GROUP, choose_grouped
from mamab.kernel_cache import njit


@njit(cache=False)
def _choose(top, mean, inv_sqrt, n, width):
    return choose_grouped(top, mean, inv_sqrt, n, width)


# Few distinct values, so that exact ties (equal counts and sums) are common, as with Bernoulli
# rewards; an untried slot has mean and 1/sqrt n 0.
means = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1 / 3, 2 / 3, 0.1 + 0.2])
inverse_roots = st.sampled_from([0.0, 1.0, 1 / math.sqrt(2), 1 / math.sqrt(3), 0.5, 1e-3])


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    groups=st.one_of(st.integers(1, 6), st.integers(60, 70)),  # both sides of reaching's 64
    width=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
    widen=st.sampled_from([1.0, 1.0 + 1e-12, 1.5]),
)
def test_the_grouped_choice_is_the_first_largest_index(data, groups, width, widen):
    """Any group bounds at or above the group's indices (a block's bounds, raised by samples
    since) give the plain scan's choice: the first slot of largest mean + width/sqrt n."""
    slots = groups * GROUP
    mean = np.array(data.draw(st.lists(means, min_size=2 * slots, max_size=2 * slots)))
    inv_sqrt = np.array(data.draw(st.lists(inverse_roots, min_size=2 * slots, max_size=2 * slots)))
    mean, inv_sqrt = mean.reshape(2, slots), inv_sqrt.reshape(2, slots)
    n = data.draw(st.integers(0, 1))
    raised = data.draw(
        st.lists(st.sampled_from([0.0, 0.0, 0.01, 1.0]), min_size=groups, max_size=groups)
    )
    wide = width * widen
    top = np.empty((2, groups))
    for g in range(groups):
        span = slice(g * GROUP, (g + 1) * GROUP)
        top[:, g] = (mean[:, span] + wide * inv_sqrt[:, span]).max(axis=1) + raised[g]
    indices = mean[n] + width * inv_sqrt[n]
    best = 0
    for s in range(slots):
        if indices[s] > indices[best]:
            best = s
    assert _choose(top, mean, inv_sqrt, n, width) == best


@pytest.mark.parametrize("groups", [3, 66])  # reaching's bit mask, and the loop beyond 64 groups
def test_a_tie_in_an_earlier_group_wins_over_the_group_of_largest_bound(groups):
    """The group of largest bound (raised by samples) holds the value; an earlier group whose
    bound only reaches it holds an equal index at a lower slot, which the scan would choose."""
    mean = np.zeros((1, groups * GROUP))
    mean[0, 5] = mean[0, 2 * GROUP + 1] = 1.0
    top = np.zeros((1, groups))
    top[0, 0], top[0, 2] = 1.0, 2.0
    assert _choose(top, mean, np.zeros_like(mean), 0, 0.0) == 5
