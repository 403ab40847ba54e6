"""Arrays whose first entry starts a cache line, for the kernels' vector loads (issue 23).

numpy hands out a large array 16 bytes past a page boundary (the allocator's header), and a
small one wherever the heap has room, so a 64-byte vector load from it spans two cache lines,
every time or by luck. An array made here starts on a 64-byte boundary; a row whose length is
a multiple of 64 bytes (a tile's lanes, a group of 16 slots) then starts on one too. Measured
with the kernels' state on it (``benchmarks/compare.py``, 2 rounds): no-communication 0.91-0.94
times the time, full communication on the sparse panels 0.95-0.96, the relay 0.93-0.95, DEMAB
(no vector state) 1.00.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

#: bytes of a cache line, and of a 512-bit vector
LINE = 64


def aligned_full(
    shape: int | tuple[int, ...], value: float, dtype: DTypeLike = np.float64
) -> np.ndarray:
    """A C-contiguous array of ``shape`` filled with ``value``, its data on a LINE boundary
    unless it is empty (a view into a buffer a line longer, which it keeps alive)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    buffer = np.empty(size + LINE, dtype=np.uint8)
    start = -buffer.ctypes.data % LINE
    array = buffer[start : start + size].view(dtype).reshape(shape)
    array.fill(value)
    return array


def aligned_zeros(shape: int | tuple[int, ...], dtype: DTypeLike = np.float64) -> np.ndarray:
    """:func:`aligned_full` of zeros."""
    return aligned_full(shape, 0, dtype)
