"""The kernels' calling conventions (issue 19 item 3): few named arguments, a cheap call."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

import mamab
from mamab.engine.recording import entry_point

SRC = Path(mamab.__file__).parent
MOST_PARAMETERS = 10


def _jitted(node: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in node.decorator_list)


def test_no_jitted_function_takes_more_than_ten_parameters():
    """State, constants and recording travel as named tuples, not long positional lists."""
    long_ones = sorted(
        f"{path.relative_to(SRC)}:{node.name} ({len(node.args.args)})"
        for path in SRC.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef)
        and _jitted(node)
        and len(node.args.args) + len(node.args.kwonlyargs) > MOST_PARAMETERS
    )
    assert long_ones == []


def test_no_entry_kernel_takes_more_than_ten_parameters():
    """The same for the entry kernels as loaded, jitted by a decorator or by a call (the LCC
    family's, jitted by a call, and the UCB baselines' three, made by a factory, which the
    source scan above cannot see)."""
    from mamab.algorithms.registry import builtin_names
    from mamab.engine.warmup import _entry_kernels, kernel_modules

    kernels = [k for m in kernel_modules(list(builtin_names())) for k in _entry_kernels(m)]
    names = {k.__name__ for k in kernels}
    ucb = {"ucb_chunk", "ucb_chunk_faultless", "ucb_chunk_lossy"}
    assert {"run_chunk"} | ucb <= names
    long_ones = [k.__name__ for k in kernels if k.py_func.__code__.co_argcount > MOST_PARAMETERS]
    assert long_ones == []


def test_entry_point_is_the_compiled_overload_or_the_kernel_itself():
    from numba import njit

    @njit
    def add(a, b):
        return a + b

    def plain(a, b):
        return a + b

    ints = (np.arange(3), 1)
    assert entry_point(plain, *ints) is plain  # not a dispatcher
    assert entry_point(add, *ints) is add  # nothing compiled for these types yet
    assert add(*ints).tolist() == [1, 2, 3]
    fast = entry_point(add, *ints)
    assert fast is not add and fast(*ints).tolist() == [1, 2, 3]
    assert entry_point(add, np.arange(3.0), 1.5) is add  # other types: the dispatcher decides
    # just called with these types, and its only overload: taken without typing them
    assert entry_point(add, *ints, called=True) is fast
    assert add(np.arange(3.0), 1.5).tolist() == [1.5, 2.5, 3.5]  # a second overload
    floats = entry_point(add, np.arange(3.0), 1.5, called=True)  # typed: two to choose from
    assert floats is not fast and floats(np.arange(3.0), 1.5).tolist() == [1.5, 2.5, 3.5]
    assert entry_point(add, *ints, called=True) is fast
