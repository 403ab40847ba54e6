"""fork_map (issue 23, --quick's figures drawn side by side): results in order, the costliest
items first, failures raised here, and the same results as one process."""

import os

import pytest

from mamab.errors import ConfigError
from mamab.experiments.forkmap import costliest_first, fork_map


def test_results_come_back_in_the_items_order_from_other_processes():
    items = list(range(7))
    out = fork_map(lambda x: (x * x, os.getpid()), items, jobs=2)
    assert [square for square, _ in out] == [x * x for x in items]
    assert all(pid != os.getpid() for _, pid in out)  # forked: the closure was inherited


def test_one_job_runs_here_in_order():
    seen = []
    assert fork_map(lambda x: seen.append(x) or os.getpid(), [3, 1, 2], jobs=1) == [os.getpid()] * 3
    assert seen == [3, 1, 2]


def test_the_costliest_items_are_queued_first():
    assert costliest_first([1, 5, 2, 9, 5], float) == [3, 1, 4, 2, 0]
    assert fork_map(lambda x: -x, [1, 5, 2, 9], jobs=2, cost=float) == [-1, -5, -2, -9]


def test_a_failure_is_raised_here_with_its_message():
    def work(x: int) -> int:
        if x == 2:
            raise ConfigError("item 2 is bad")
        return x

    with pytest.raises(ConfigError, match="item 2 is bad"):
        fork_map(work, [1, 2, 3], jobs=2)
