import numpy as np
import pytest

from mamab.schedule import (
    base_length,
    block_size,
    index_bits,
    initial_block,
    k_prime,
    n_epochs,
    phase_lengths,
)


def test_epochs_double_and_last_is_cut():
    kp = k_prime(100, 10, 9)  # ceil(100/10) + N - 1 = 19
    assert kp == 19
    base = base_length(kp)
    assert base == 19 * 20
    lengths = phase_lengths(100_000, base)
    full = [base * 2**j for j in range(len(lengths) - 1)]
    assert lengths[:-1].tolist() == full
    assert lengths.sum() == 100_000
    assert 0 < lengths[-1] <= base * 2 ** (len(lengths) - 1)
    # J epochs: the smallest J with sum_{j<J} base 2^j >= T
    assert n_epochs(100_000, base) == int(np.ceil(np.log2(100_000 / base + 1)))


def test_sub_epochs_repeat_each_epoch_length():
    lengths = phase_lengths(5_000, 12, sub_epochs=3)
    expected = []
    j = 0
    while sum(expected) < 5_000:
        for _ in range(3):
            expected.append(min(12 * 2**j, 5_000 - sum(expected)))
            if sum(expected) == 5_000:
                break
        j += 1
    assert lengths.tolist() == expected
    assert n_epochs(5_000, 12, 3) == j


def test_exact_fit_has_no_empty_phase():
    assert phase_lengths(6, 2).tolist() == [2, 4]
    assert phase_lengths(7, 2).tolist() == [2, 4, 1]


def test_initial_blocks_cover_all_arms_and_wrap():
    assert block_size(10, 3) == 4
    blocks = [initial_block(n, 10, 3) for n in range(3)]
    assert blocks == [(0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 8, 9)]
    assert set().union(*blocks) == set(range(10))


@pytest.mark.parametrize(
    ("k", "bits"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (100, 7), (128, 7), (129, 8)]
)
def test_index_bits(k, bits):
    assert index_bits(k) == bits


def test_bad_schedule_arguments():
    with pytest.raises(ValueError):
        phase_lengths(0, 2)
