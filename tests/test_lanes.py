"""The vector-lane argmax of agents alone (mamab.engine.lanes): every lane's first maximum."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.core.errors import TypingError
from numba.extending import intrinsic

from mamab.algorithms.lcc.kernel import inv_root_table
from mamab.engine.lanes import (
    LANES,
    REACH,
    SPAN,
    _blocks_typing,
    _lane_argmax_ir,
    _lane_argmax_typing,
    _lane_blocks_ir,
    lane_argmax,
    lane_argmax_blocks,
    lane_argmax_blocks_down,
    lane_argmax_down,
    lane_argmax_four,
    lane_argmax_one,
    lane_learn,
    lane_ucb,
    learn_lane,
    lowest_bit,
    mean_and_inv_sqrt,
    reaching,
    row_max,
    small_tile_step,
    span_best,
    span_max,
    span_max_with,
    two_means_and_inv_sqrts,
    wide_vectors,
)
from mamab.kernel_cache import njit


def _scanner(argmax):
    """A jitted call of the lane argmax intrinsic ``argmax``: each lane's slot."""

    @njit(cache=False)
    def scan(mean, inv_sqrt, slots, widths):
        best = np.zeros(LANES, dtype=np.int64)
        argmax(mean, inv_sqrt, slots, widths, best)
        return best

    return scan


def _chained(chains, downward=False):
    """The lane argmax with ``chains`` running maxima, up or down, whatever the target."""

    @intrinsic
    def scan(typingctx, mean, inv_sqrt, slots, widths, best):
        signature = _lane_argmax_typing(mean, inv_sqrt, slots, widths, best, "scan")
        return signature, _lane_argmax_ir(chains, downward=downward)

    return scan


SCANS = {
    "target's": _scanner(lane_argmax),
    "one chain": _scanner(lane_argmax_one),
    "two chains": _scanner(_chained(2)),
    "four chains": _scanner(lane_argmax_four),
    "target's, downward": _scanner(lane_argmax_down),
    "one chain, downward": _scanner(_chained(1, downward=True)),
    "two chains, downward": _scanner(_chained(2, downward=True)),
    "four chains, downward": _scanner(_chained(4, downward=True)),
}


def _first_max(mean, inv_sqrt, slots, widths, lane):
    """A plain scan of one lane, as the reference agent chooses: the first strict maximum."""
    best, value = 0, -math.inf
    for s in range(slots):
        index = mean[s * LANES + lane] + widths[lane] * inv_sqrt[s * LANES + lane]
        if index > value:
            best, value = s, index
    return best


# Few distinct values, so that exact ties (equal counts and sums) are common, as with Bernoulli
# rewards; -inf stands for an arm no index can reach. In a lane scan NaN never wins (the spans
# take numbers that are not NaN).
NUMBERS = [0.0, 0.25, 0.5, 1.0, 1 / 3, 2 / 3, -math.inf, 0.1 + 0.2]
values = st.sampled_from(NUMBERS)
lane_values = st.sampled_from([*NUMBERS, math.nan])
inverse_roots = st.sampled_from([0.0, 1.0, 1 / math.sqrt(2), 1 / math.sqrt(3), 0.5, 1e-3])


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    slots=st.integers(1, 70),
    widths=st.lists(st.floats(0.0, 10.0), min_size=LANES, max_size=LANES),
)
def test_each_lane_gets_its_first_maximum(data, slots, widths):
    # every form of the scan: the target's and both chain forms whatever the target, up and down
    mean = np.array(
        data.draw(st.lists(lane_values, min_size=slots * LANES, max_size=slots * LANES))
    )
    inv_sqrt = np.array(
        data.draw(st.lists(inverse_roots, min_size=slots * LANES, max_size=slots * LANES))
    )
    widths = np.array(widths)
    expected = [_first_max(mean, inv_sqrt, slots, widths, j) for j in range(LANES)]
    # one width for every lane, given as a float (the form that loads nothing for it)
    alike = [_first_max(mean, inv_sqrt, slots, np.full(LANES, widths[0]), j) for j in range(LANES)]
    for name, scan in SCANS.items():
        assert list(scan(mean, inv_sqrt, slots, widths)) == expected, name
        assert list(scan(mean, inv_sqrt, slots, float(widths[0]))) == alike, f"{name}, one width"


@pytest.mark.parametrize("slots", [1, 2, 3, 5, 7, 8, 9, 13])
@pytest.mark.parametrize("scan", SCANS.values(), ids=SCANS.keys())
def test_a_tie_across_the_runs_goes_to_the_first(slots, scan):
    # equal indices in every slot, or only in two slots (in one chain's run or two, the slots
    # left over included): the first of them wins; with all -inf (padding), slot 0 as well
    for fill in (0.5, -math.inf):
        mean = np.full(slots * LANES, fill)
        assert list(scan(mean, np.zeros_like(mean), slots, np.ones(LANES))) == [0] * LANES
    for first in range(slots):
        for second in range(first + 1, slots):
            mean = np.zeros(slots * LANES)
            mean[first * LANES : (first + 1) * LANES] = 1.0
            mean[second * LANES : (second + 1) * LANES] = 1.0
            got = scan(mean, np.zeros_like(mean), slots, np.ones(LANES))
            assert list(got) == [first] * LANES, (first, second)


@pytest.mark.parametrize("slots", [1, 2, 3, 8, 9])
@pytest.mark.parametrize("scan", SCANS.values(), ids=SCANS.keys())
def test_no_index_above_minus_infinity_gives_slot_0(slots, scan):
    # NaN in slot 0, -inf after it: nothing beats -inf, so slot 0 as a plain scan keeps (a
    # downward scan would otherwise end on the lowest -inf slot, 1)
    mean = np.full(slots * LANES, -math.inf)
    mean[:LANES] = math.nan
    assert list(scan(mean, np.zeros_like(mean), slots, np.ones(LANES))) == [0] * LANES


@pytest.mark.parametrize("scan", SCANS.values(), ids=SCANS.keys())
def test_lanes_do_not_mix_and_later_slots_are_not_read(scan):
    # Lane j's maximum sits at slot j; slots past ``slots`` hold larger values that must be ignored.
    slots = LANES + 3
    mean = np.zeros((slots + 2) * LANES)
    for j in range(LANES):
        mean[j * LANES + j] = 1.0 + j
    mean[slots * LANES :] = 100.0
    best = scan(mean, np.zeros_like(mean), slots, np.ones(LANES))
    assert list(best) == list(range(LANES))


def _by_blocks(downward, stores):
    """The scan by blocks, up or down, the kept blocks stored or gathered, whatever the target."""

    @intrinsic
    def scan(typingctx, mean, inv_sqrt, slots, width, best):
        signature = _blocks_typing(mean, inv_sqrt, slots, width, best, "scan")
        return signature, _lane_blocks_ir(downward=downward, stores=stores)

    return scan


BLOCK_SCANS = {
    "by blocks": _scanner(lane_argmax_blocks),
    "by blocks, downward": _scanner(lane_argmax_blocks_down),
    **{
        f"by blocks{', downward' if down else ''}, {'stored' if stores else 'gathered'}": (
            _scanner(_by_blocks(down, stores))
        )
        for down in (False, True)
        for stores in (False, True)
    },
}


#: the block scans' values: as NUMBERS, with negative numbers and -0.0 too (no NaN)
block_values = st.sampled_from([*NUMBERS, -0.0, -0.5, -2.0, -1 / 3])


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    slots=st.integers(1, 70),
    width=st.one_of(st.just(0.0), st.floats(0.0, 10.0)),
)
def test_a_scan_by_blocks_is_the_first_maximum_when_no_index_is_nan(data, slots, width):
    # whole blocks and the slots past them, up and down; ties common, -inf and negative
    # indices among the values (width 0: lanes whose every index is negative)
    size = slots * LANES
    mean = np.array(data.draw(st.lists(block_values, min_size=size, max_size=size)))
    inv_sqrt = np.array(data.draw(st.lists(inverse_roots, min_size=size, max_size=size)))
    widths = np.full(LANES, width)
    expected = [_first_max(mean, inv_sqrt, slots, widths, j) for j in range(LANES)]
    for name, scan in BLOCK_SCANS.items():
        assert list(scan(mean, inv_sqrt, slots, width)) == expected, name


@pytest.mark.parametrize("slots", [1, 7, 8, 9, 16, 17, 23, 24, 25])
@pytest.mark.parametrize("scan", BLOCK_SCANS.values(), ids=BLOCK_SCANS.keys())
def test_a_tie_across_blocks_goes_to_the_first(slots, scan):
    # equal largest indices in two slots (one block or two, the tail included) or in all, -inf
    # in all: the first of them; lane j's pair shifted by j, so that lanes keep other blocks
    for fill in (0.5, -math.inf):
        mean = np.full(slots * LANES, fill)
        assert list(scan(mean, np.zeros_like(mean), slots, 1.0)) == [0] * LANES
    for first in range(slots):
        for second in range(first + 1, slots):
            mean = np.zeros(slots * LANES)
            expected = []
            for j in range(LANES):
                a, b = (first + j) % slots, (second + j) % slots
                mean[[a * LANES + j, b * LANES + j]] = 1.0
                expected.append(min(a, b))
            assert list(scan(mean, np.zeros_like(mean), slots, 1.0)) == expected, (first, second)


def _scans_in_a_row(argmax):
    """Scans by ``argmax`` of each row of ``means`` in one compiled loop (its buffers reused,
    as in a kernel): the slots of each."""

    @njit(cache=False)
    def scans(means, inv_sqrt, slots):
        best = np.zeros(LANES, dtype=np.int64)
        chosen = np.zeros((means.shape[0], LANES), dtype=np.int64)
        for k in range(means.shape[0]):  # one call site: its buffers are the same
            argmax(means[k], inv_sqrt, slots, 1.0, best)
            chosen[k] = best
        return chosen

    return scans


@pytest.mark.parametrize("slots", [3, 8, 13, 50])
@pytest.mark.parametrize("down", [False, True])
@pytest.mark.parametrize("stores", [False, True])
def test_a_lane_of_minus_infinity_gets_slot_0_after_another_scan(slots, down, stores):
    # a lane whose indices are all -inf keeps no block going up; what an earlier scan of the
    # same loop left in the kept block's buffer must not decide its slot
    scans = _scans_in_a_row(_by_blocks(down, stores))
    means = np.full((2, slots * LANES), -math.inf)
    means[0, :LANES] = 5.0  # the first scan keeps block 0, slot 0 at 5 and the rest -inf
    chosen = scans(means, np.zeros(slots * LANES), slots)
    assert chosen.tolist() == [[0] * LANES, [0] * LANES]


@pytest.mark.parametrize("scan", BLOCK_SCANS.values(), ids=BLOCK_SCANS.keys())
def test_a_scan_by_blocks_keeps_lanes_apart_and_reads_no_later_slot(scan):
    slots = 3 * LANES + 3  # three blocks and a tail
    mean = np.zeros((slots + 2) * LANES)
    for j in range(LANES):
        mean[(3 * j + 2) * LANES + j] = 1.0 + j
    mean[slots * LANES :] = 100.0
    best = scan(mean, np.zeros_like(mean), slots, 1.0)
    assert list(best) == [3 * j + 2 for j in range(LANES)]


def test_two_chains_where_the_target_has_avx512(monkeypatch):
    # the form follows the features numba compiles for (NUMBA_CPU_FEATURES, else the host's)
    from numba.core import config

    monkeypatch.setattr(config, "CPU_FEATURES", "+avx2,+avx512f,+fma")
    assert wide_vectors()
    monkeypatch.setattr(config, "CPU_FEATURES", "+avx2,-avx512f,+fma")
    assert not wide_vectors()
    monkeypatch.setattr(config, "CPU_FEATURES", "+neon")
    assert not wide_vectors()


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

    @njit(cache=False)
    def blocks_with_widths(mean, widths):
        best = np.zeros(LANES, dtype=np.int64)
        lane_argmax_blocks(mean, mean, 3, widths, best)
        return best

    with pytest.raises(TypingError, match=r"lane_argmax_blocks.*one width, a float"):
        blocks_with_widths(np.zeros(3 * LANES), np.ones(LANES))


# --- full communication's groups in one vector (span_max, span_best, reaching) --------------


@njit(cache=False)
def _span(mean, inv_sqrt, row, start, width):
    return span_max(mean, inv_sqrt, row, start, width), span_best(mean, inv_sqrt, row, start, width)


#: a span's cases: where it starts, the width, the start's type
SPAN_CASES = {
    "data": st.data(),
    "start": st.integers(0, 2 * SPAN),
    "width": st.sampled_from([0.0, 1e-9, 1.0, 2.5, 7.0]),
    "unsigned": st.booleans(),
}


def _span_rows(data, start, rows):
    """``rows`` rows of means and of 1/sqrt n holding the span from ``start``, and a few slots
    past it."""
    cols = start + SPAN + data.draw(st.integers(0, 3))
    size = rows * cols
    mean = np.array(data.draw(st.lists(values, min_size=size, max_size=size)))
    inv_sqrt = np.array(data.draw(st.lists(inverse_roots, min_size=size, max_size=size)))
    return mean.reshape(rows, cols), inv_sqrt.reshape(rows, cols)


@settings(max_examples=300, deadline=None)
@given(**SPAN_CASES)
def test_a_span_gives_the_scan_s_largest_index_and_its_first_slot(data, start, width, unsigned):
    mean, inv_sqrt = _span_rows(data, start, 3)
    row = data.draw(st.integers(0, 2))
    high, (first, largest) = _span(
        mean, inv_sqrt, row, np.uint64(start) if unsigned else start, width
    )
    indices = [mean[row, s] + width * inv_sqrt[row, s] for s in range(start, start + SPAN)]
    assert high == max(indices)
    best, value = 0, -math.inf
    for s, index in enumerate(indices):  # the reference's scan: a later slot wins if larger
        if index > value:
            best, value = s, index
    assert first == best
    assert largest == indices[best]  # the slot's own index (of two equal zeros, either)


@njit(cache=False)
def _span_with(mean, inv_sqrt, row, start, width, offset, new_mean, new_inv_sqrt):
    return span_max_with(mean, inv_sqrt, row, start, width, offset, new_mean, new_inv_sqrt)


@settings(max_examples=300, deadline=None)
@given(**SPAN_CASES)
def test_a_span_with_one_slot_replaced_is_the_span_after_storing_it(data, start, width, unsigned):
    mean, inv_sqrt = _span_rows(data, start, 2)
    row, offset = data.draw(st.integers(0, 1)), data.draw(st.integers(0, SPAN - 1))
    new_mean, new_inv_sqrt = data.draw(values), data.draw(inverse_roots)
    typed = np.uint64 if unsigned else np.int64
    before = (mean.copy(), inv_sqrt.copy())
    replaced = _span_with(
        mean, inv_sqrt, row, typed(start), width, typed(offset), new_mean, new_inv_sqrt
    )
    np.testing.assert_array_equal(mean, before[0])  # nothing stored: the caller stores after
    np.testing.assert_array_equal(inv_sqrt, before[1])
    mean[row, start + offset], inv_sqrt[row, start + offset] = new_mean, new_inv_sqrt
    assert replaced == _span(mean, inv_sqrt, row, start, width)[0]
    assert replaced == max(
        mean[row, s] + width * inv_sqrt[row, s] for s in range(start, start + SPAN)
    )


@njit(cache=False)
def _reaching(values, row, count, level):
    return reaching(values, row, count, level)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), cols=st.integers(1, 80), level=values)
def test_reaching_marks_the_entries_at_or_above_a_level(data, cols, level):
    row_values = st.lists(values, min_size=cols, max_size=cols)
    rows = np.array([data.draw(row_values) for _ in range(2)])
    row = data.draw(st.integers(0, 1))
    count = data.draw(st.integers(0, min(cols, REACH)))
    mask = int(_reaching(rows, row, count, level))
    assert mask == sum(1 << g for g in range(count) if rows[row, g] >= level)


@njit(cache=False)
def _row_max(values, row, count):
    return row_max(values, row, count)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), cols=st.integers(1, 80))
def test_row_max_is_the_largest_entry_before_the_count(data, cols):
    # the entries past ``count`` (drawn from the same values) must not be read
    rows = np.array([data.draw(st.lists(values, min_size=cols, max_size=cols)) for _ in range(2)])
    row = data.draw(st.integers(0, 1))
    count = data.draw(st.integers(1, cols))
    assert _row_max(rows, row, count) == max(rows[row, :count])


def test_lowest_bit_counts_trailing_zeros():
    lowest = njit(cache=False)(lambda mask: lowest_bit(mask))
    assert [lowest(np.uint64(m)) for m in (1, 8, 12, 1 << 63, 0)] == [0, 3, 2, 63, 64]


def test_span_reaching_and_row_max_refuse_wrong_arrays_when_compiling():
    @njit(cache=False)
    def on_rows(values):
        return span_max(values, values, 0, 0, 1.0)

    with pytest.raises(TypingError, match="span_max"):
        on_rows(np.zeros(SPAN))
    with pytest.raises(TypingError, match="span_max_with"):
        _span_with(np.zeros((1, SPAN)), np.zeros((1, SPAN)), 0, 0, 1.0, 0, 1, 0.5)
    with pytest.raises(TypingError, match="reaching"):
        _reaching(np.zeros((1, 4), dtype=np.float32), 0, 4, 0.0)
    with pytest.raises(TypingError, match="row_max"):
        _row_max(np.zeros(4), 0, 4)


@njit(cache=False)
def _settle_numbers(total, count):
    return mean_and_inv_sqrt(total, count)


@settings(max_examples=300, deadline=None)
@given(
    total=st.floats(-1e6, 1e6, allow_nan=False) | st.integers(0, 10**6).map(float),
    count=st.integers(1, 2**40),
)
def test_mean_and_inv_sqrt_are_the_scalar_expressions_bit_for_bit(total, count):
    mean, inv_sqrt = _settle_numbers(total, count)
    assert mean == total / count and math.copysign(1.0, mean) == math.copysign(1.0, total / count)
    assert inv_sqrt == 1.0 / math.sqrt(count)


def test_mean_and_inv_sqrt_refuse_what_would_change_the_numbers():
    # a float32 count makes the scalar expression float32; the vector division is float64
    @njit(cache=False)
    def settle32(total, count):
        return mean_and_inv_sqrt(total, count)

    with pytest.raises(TypingError, match="mean_and_inv_sqrt"):
        settle32(1.0, np.float32(3.0))
    with pytest.raises(TypingError, match="mean_and_inv_sqrt"):
        settle32(np.float32(1.0), 3)


@njit(cache=False)
def _two_settles(total, count, other_total, other_count):
    return two_means_and_inv_sqrts(total, count, other_total, other_count)


@settings(max_examples=300, deadline=None)
@given(
    totals=st.lists(
        st.floats(-1e6, 1e6, allow_nan=False) | st.integers(0, 10**6).map(float),
        min_size=2,
        max_size=2,
    ),
    counts=st.lists(st.integers(1, 2**40), min_size=2, max_size=2),
    as_float=st.booleans(),  # a count held as a float64, as full communication's tally does
)
def test_two_settles_at_once_are_the_scalar_expressions_bit_for_bit(totals, counts, as_float):
    given_counts = [float(c) for c in counts] if as_float else counts
    numbers = _two_settles(totals[0], given_counts[0], totals[1], given_counts[1])
    expected = []
    for total, count in zip(totals, counts, strict=True):
        expected += [total / count, 1.0 / math.sqrt(count)]
    assert numbers == tuple(expected)
    signs = [math.copysign(1.0, x) for x in numbers]
    assert signs == [math.copysign(1.0, x) for x in expected]  # -0.0 stays -0.0


def test_two_settles_refuse_what_would_change_the_numbers():
    @njit(cache=False)
    def settle32(total, count):
        return two_means_and_inv_sqrts(1.0, 2, total, count)

    with pytest.raises(TypingError, match="two_means_and_inv_sqrts"):
        settle32(1.0, np.float32(3.0))
    with pytest.raises(TypingError, match="two_means_and_inv_sqrts"):
        settle32(np.float32(1.0), 3)


# --- a tile's lanes learning at once (lane_learn) ------------------------------------------------


@njit(cache=False)
def _learn_together(draws, row, used, best, tile, rewards, regret, first):
    lane_learn(draws, row, used, best, tile, rewards, regret, first)


@njit(cache=False)
def _learn_one_by_one(draws, row, used, best, tile, rewards, regret, first):
    count, total, mean, inv_sqrt = tile
    means, gaps, bernoulli, sigma = rewards
    for j in range(used):
        s = best[j]
        draw = draws[row, j]
        reward = np.float64(draw < means[s]) if bernoulli else means[s] + sigma * draw
        learn_lane(count, total, mean, inv_sqrt, s * LANES + j, reward)
        regret[first + j] += gaps[s]


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    arms=st.integers(1, 40),
    used=st.integers(1, LANES),
    bernoulli=st.booleans(),
    sigma=st.sampled_from([0.1, 1.0, 3.0]),
    first=st.integers(0, 5),
)
def test_lanes_learn_together_as_one_by_one(seed, arms, used, bernoulli, sigma, first):
    # the scalar learn's numbers bit for bit, the gaps added to the lanes' regret; lanes from
    # ``used`` on and entries other than the played ones untouched (NaN stays NaN, bitwise)
    rng = np.random.default_rng(seed)
    draws = rng.standard_normal((3, LANES)) if not bernoulli else rng.random((3, LANES))
    best = rng.integers(0, arms, LANES)
    best[used:] = 2**50  # read whole, yet lanes from ``used`` on are ignored
    count = rng.integers(0, 2**20, arms * LANES)
    tile = (
        count,
        rng.normal(0, 50, arms * LANES),
        np.full(arms * LANES, np.nan),
        rng.random(arms * LANES),
    )
    rewards = (rng.random(arms), rng.random(arms), bernoulli, sigma)
    regret = rng.random(first + LANES + 2)
    expected = tuple(a.copy() for a in tile), regret.copy()
    _learn_one_by_one(draws, 1, used, best, expected[0], rewards, expected[1], first)
    _learn_together(draws, 1, used, best, tile, rewards, regret, first)
    for got, want in zip((*tile, regret), (*expected[0], expected[1]), strict=True):
        assert got.tobytes() == want.tobytes()


def test_lane_learn_refuses_wrong_arrays_when_compiling():
    tile = (np.zeros(LANES, dtype=np.int64), np.zeros(LANES), np.zeros(LANES), np.zeros(LANES))
    rewards = (np.zeros(1), np.zeros(1), True, 1.0)
    best, regret, draws = np.zeros(LANES, dtype=np.int64), np.zeros(LANES), np.zeros((1, LANES))
    with pytest.raises(TypingError, match="lane_learn"):  # counts as floats
        _learn_together(draws, 0, 1, best, (tile[1], *tile[1:]), rewards, regret, 0)
    with pytest.raises(TypingError, match="lane_learn"):  # float32 draws
        _learn_together(draws.astype(np.float32), 0, 1, best, tile, rewards, regret, 0)


# --- a small ready tile's step (small_tile_step) --------------------------------------------------


@njit(cache=False)
def _small_step(draws, row, lo, used, slots, width, part, tile, rewards, regret):
    small_tile_step(draws, row, lo, used, slots, width, part, tile, rewards, regret)


@njit(cache=False)
def _small_step_one_by_one(draws, row, lo, used, slots, width, part, tile, rewards, regret):
    """The LCC kernel's ready tile, lane by lane: the first slot of largest index, its sample."""
    lane_mean, lane_inv, count, total, arm_mean, arm_gap, table = tile
    bernoulli, sigma = rewards[2], rewards[3]
    for j in range(used):
        best, high = 0, -np.inf
        for s in range(slots):
            index = lane_mean[part, s * LANES + j] + width * lane_inv[part, s * LANES + j]
            if index > high:
                best, high = s, index
        e = best * LANES + j
        draw = draws[row, j]
        reward = np.float64(draw < arm_mean[e]) if bernoulli else arm_mean[e] + sigma * draw
        c = count[e] + 1
        count[e] = c
        total[e] += reward
        lane_mean[part, e] = total[e] / c
        lane_inv[part, e] = table[c] if c < table.size else 1.0 / math.sqrt(c)
        regret[lo + j] += arm_gap[e]


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    slots=st.integers(1, 20),  # SMALL_SET or more (0 without AVX-512: any count works)
    used=st.integers(1, LANES),
    bernoulli=st.booleans(),
    width=st.sampled_from([0.0, 0.3, 2.0]),
    lo=st.integers(0, 5),
    ties=st.booleans(),
)
def test_a_small_tile_steps_as_lane_by_lane(seed, slots, used, bernoulli, width, lo, ties):
    """Choice, reward, counts, sums, means, 1/sqrt n (from the table below its size, computed
    above it) and regret bit for bit as the scalar code; the slots past a lane's set (mean
    -inf), the lanes from ``used`` on and the other tiles' rows untouched."""
    rng = np.random.default_rng(seed)
    size = slots * LANES
    pick = (lambda shape: rng.choice([0.0, 0.5, 1.0], shape)) if ties else rng.random
    lane_mean, lane_inv = pick((3, size)), pick((3, size))
    past = rng.integers(1, slots + 1, LANES)  # each lane's set size: -inf beyond it
    for j in range(LANES):
        lane_mean[:, past[j] * LANES + j :: LANES] = -np.inf
    count = rng.integers(1, 40, size)
    total = np.floor(count * rng.random(size)) if bernoulli else rng.normal(0, 5, size)
    tile = (
        lane_mean,
        lane_inv,
        count,
        total,
        rng.random(size),
        rng.random(size),
        inv_root_table(int(rng.integers(0, 40))),  # a short table: counts past it computed
    )
    draws = rng.random((4, LANES)) if bernoulli else rng.standard_normal((4, LANES))
    rewards = (np.zeros(1), np.zeros(1), bernoulli, 1.5)
    regret = rng.random(lo + LANES + 2)
    want = tuple(a.copy() for a in tile), regret.copy()
    _small_step_one_by_one(draws, 2, lo, used, slots, width, 1, want[0], rewards, want[1])
    _small_step(draws, 2, lo, used, slots, width, 1, tile, rewards, regret)
    for got, expected in zip((*tile, regret), (*want[0], want[1]), strict=True):
        assert got.tobytes() == expected.tobytes()


def test_small_tile_step_refuses_wrong_arrays_when_compiling():
    size = 2 * LANES
    tile = (np.zeros((1, size)), np.zeros((1, size)), np.zeros(size, dtype=np.int64))
    tile += (np.zeros(size), np.zeros(size), np.zeros(size), np.ones(4))
    rewards, regret, draws = (
        (np.zeros(1), np.zeros(1), True, 1.0),
        np.zeros(LANES),
        np.zeros((1, LANES)),
    )
    _small_step(draws, 0, 0, 1, 2, 1.0, 0, tile, rewards, regret)  # as the kernel calls it
    floats = (*tile[:2], tile[3], *tile[3:])  # counts as floats
    with pytest.raises(TypingError, match="small_tile_step"):
        _small_step(draws, 0, 0, 1, 2, 1.0, 0, floats, rewards, regret)
    with pytest.raises(TypingError, match="small_tile_step"):  # float32 draws
        _small_step(draws.astype(np.float32), 0, 0, 1, 2, 1.0, 0, tile, rewards, regret)
