"""Full communication's grouped bounds (mamab.engine.ucb_kernels): the lazy argmax is exact."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mamab.engine.ucb_kernels import (
    GROUP,
    add_sample,
    choose_after,
    choose_grouped,
    first_group,
    group_best,
    grouped_ucb,
    hear_two,
    learn_grouped,
    rebound_group,
    store_played,
)
from mamab.kernel_cache import njit


@njit(cache=False)
def _choose(top, mean, inv_sqrt, n, width):
    return choose_grouped(top, mean, inv_sqrt, n, width)


@njit(cache=False)
def _first_group(top, n):
    return first_group(top, n)


@njit(cache=False)
def _choose_from(top, mean, inv_sqrt, n, width, first):
    best, value = group_best(mean, inv_sqrt, n, first, width)
    return choose_after(top, mean, inv_sqrt, n, width, first, best, value)


# Few distinct values, so that exact ties (equal counts and sums) are common, as with Bernoulli
# rewards; an untried slot has mean and 1/sqrt n 0.
MEANS = np.array([0.0, 0.25, 0.5, 1.0, 1 / 3, 2 / 3, 0.1 + 0.2])
INVERSE_ROOTS = np.array([0.0, 1.0, 1 / math.sqrt(2), 1 / math.sqrt(3), 0.5, 1e-3])


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),  # the slots' values, drawn by numpy: any number of groups
    # both sides of VECTOR_GROUPS (16: the first group by row_max from there) and of REACH (64)
    groups=st.one_of(st.integers(1, 6), st.integers(14, 18), st.integers(62, 70)),
    width=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
    widen=st.sampled_from([1.0, 1.0 + 1e-12, 1.5]),
)
def test_the_grouped_choice_is_the_first_largest_index(seed, groups, width, widen):
    """Any group bounds at or above the group's indices (a block's bounds, raised by samples
    since) give the plain scan's choice: the first slot of largest mean + width/sqrt n, and so
    does evaluating any group first (the kernel's passes: group_best, then choose_after)."""
    rng = np.random.default_rng(seed)
    slots = groups * GROUP
    mean, inv_sqrt = rng.choice(MEANS, (2, slots)), rng.choice(INVERSE_ROOTS, (2, slots))
    n = int(rng.integers(0, 2))
    raised = rng.choice([0.0, 0.0, 0.01, 1.0], groups)
    wide = width * widen
    bounds = (mean + wide * inv_sqrt).reshape(2, groups, GROUP).max(axis=2)
    top = bounds + raised
    indices = mean[n] + width * inv_sqrt[n]
    best = 0
    for s in range(slots):
        if indices[s] > indices[best]:
            best = s
    assert _choose(top, mean, inv_sqrt, n, width) == best
    first = int(rng.integers(0, groups))
    assert _choose_from(top, mean, inv_sqrt, n, width, first) == best


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    groups=st.one_of(st.integers(1, 6), st.integers(14, 18), st.integers(62, 70)),
    ties=st.booleans(),
)
def test_the_first_group_is_the_first_of_largest_bound(seed, groups, ties):
    """A choice starts from the first group of largest bound (by vector compares from
    VECTOR_GROUPS groups on, by a scan below and beyond REACH): the group that brings in the
    fewest others. Bounds all distinct (the largest anywhere), or few values (ties common)."""
    rng = np.random.default_rng(seed)
    if ties:
        top = rng.choice([-np.inf, 0.0, 0.5, 1.25, 2.0], (2, groups))
    else:
        top = rng.permutation(2 * groups).reshape(2, groups) / 7.0
    n = int(rng.integers(0, 2))
    assert _first_group(top, n) == int(np.argmax(top[n]))


@pytest.mark.parametrize("groups", [3, 66])  # reaching's bit mask, and the loop beyond 64 groups
def test_a_tie_in_an_earlier_group_wins_over_the_group_of_largest_bound(groups):
    """The group of largest bound (raised by samples) holds the value; an earlier group whose
    bound only reaches it holds an equal index at a lower slot, which the scan would choose."""
    mean = np.zeros((1, groups * GROUP))
    mean[0, 5] = mean[0, 2 * GROUP + 1] = 1.0
    top = np.zeros((1, groups))
    top[0, 0], top[0, 2] = 1.0, 2.0
    assert _choose(top, mean, np.zeros_like(mean), 0, 0.0) == 5


@njit(cache=False)
def _hear_one_by_one(ucb, n, chosen, got, senders, wide):
    for sender in senders:
        learn_grouped(
            ucb.tally, ucb.mean, ucb.inv_sqrt, ucb.top, n, chosen[sender], got[sender], wide
        )


@njit(cache=False)
def _hear_two_by_two(ucb, n, chosen, got, senders, wide):
    for i in range(0, senders.size, 2):
        hear_two(
            ucb.tally,
            ucb.mean,
            ucb.inv_sqrt,
            ucb.top,
            n,
            chosen,
            got,
            senders[i],
            senders[i + 1],
            wide,
        )


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    arms=st.integers(1, 40),  # one group or several, padding included
    pairs=st.integers(1, 12),
    wide=st.sampled_from([0.0, 0.7, 2.5]),
)
def test_samples_heard_two_by_two_settle_as_one_by_one(seed, arms, pairs, wide):
    """Samples settled in pairs (one square root and one division for two; a pair on one slot
    included) leave the counts, sums, means and 1/sqrt n of samples settled one by one, and
    group bounds that still bound every slot heard, no higher than one by one's."""
    rng = np.random.default_rng(seed)
    agents = 3
    chosen = rng.integers(0, min(arms, 3) if seed % 2 else arms, agents * 4).astype(np.uint64)
    got = rng.choice([0.0, 1.0, 0.25], agents * 4)
    senders = rng.integers(0, agents * 4, 2 * pairs).astype(np.uint64)
    n = int(rng.integers(0, agents))
    one, two = grouped_ucb(agents, arms), grouped_ucb(agents, arms)
    _hear_one_by_one(one, n, chosen, got, senders, wide)
    _hear_two_by_two(two, n, chosen, got, senders, wide)
    for field in ("tally", "mean", "inv_sqrt"):
        np.testing.assert_array_equal(getattr(two, field), getattr(one, field))
    heard = two.tally[n, :, 1] > 0  # (fresh: no block open, untried slots unbounded)
    bounds = np.where(heard, two.mean[n] + wide * two.inv_sqrt[n], -np.inf)
    for g in range(two.top.shape[1]):
        assert two.top[n, g] >= bounds[g * GROUP : (g + 1) * GROUP].max()
    assert (two.top <= one.top).all()


@njit(cache=False)
def _learn_then_rebound(ucb, n, slots, rewards, wide):
    for i in range(slots.size):
        s = slots[i]
        learn_grouped(ucb.tally, ucb.mean, ucb.inv_sqrt, ucb.top, n, s, rewards[i], wide)
        rebound_group(ucb.mean, ucb.inv_sqrt, ucb.top, n, s, wide)


@njit(cache=False)
def _learn_played(ucb, n, slots, rewards, wide):
    for i in range(slots.size):
        s = slots[i]
        m, r = add_sample(ucb.tally, n, s, rewards[i])
        store_played(ucb.mean, ucb.inv_sqrt, ucb.top, n, s, m, r, wide)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    arms=st.integers(1, 40),
    plays=st.integers(1, 30),
    wide=st.sampled_from([0.0, 0.7, 2.5]),
    unsigned=st.booleans(),
)
def test_a_played_sample_learns_and_rebounds_as_the_two_steps(seed, arms, plays, wide, unsigned):
    """add_sample then store_played (the group's bound computed before the slot's numbers are
    stored) leave the state learn_grouped then rebound_group leave, bit for bit, bounds
    included."""
    rng = np.random.default_rng(seed)
    slots = rng.integers(0, arms, plays).astype(np.uint64 if unsigned else np.int64)
    rewards = rng.choice([0.0, 1.0, 0.25, -1.5], plays)
    n = int(rng.integers(0, 2))
    one, two = grouped_ucb(2, arms), grouped_ucb(2, arms)
    _learn_then_rebound(one, n, slots, rewards, wide)
    _learn_played(two, n, slots, rewards, wide)
    for field in ("tally", "mean", "inv_sqrt", "top"):
        np.testing.assert_array_equal(getattr(two, field), getattr(one, field))


def test_blocks_are_paced_by_the_samples_that_arrive():
    """Full communication sizes its blocks by the samples an agent can expect per step: its own
    and its neighbours' less the share lost (at least its own)."""
    from mamab.algorithms.ucb.driver import _pace

    degrees = np.array([0, 1, 6, 10])
    np.testing.assert_array_equal(_pace(degrees, 0.0), [1, 2, 7, 11])
    np.testing.assert_array_equal(_pace(degrees, 0.5), [1, 1, 4, 6])  # rint: half to even
    np.testing.assert_array_equal(_pace(degrees, 0.9), [1, 1, 2, 2])
    np.testing.assert_array_equal(_pace(degrees, 1.0), [1, 1, 1, 1])
