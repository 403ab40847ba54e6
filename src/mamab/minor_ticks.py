"""An axis's minor tick marks as one artist: what matplotlib draws, at a fraction of the cost.

matplotlib makes every minor tick an object of five artists (its two marks, its grid line and
its two labels), positions each at every layout pass and draws each in every file: mamab's
figures spent a sixth of their CPU time on minor ticks that are only short marks (a log axis
has 8 a decade). Here the marks are one line of markers, styled as matplotlib's own minor tick
(one is made, to read its style) and placed where matplotlib would place them (the minor
locator's positions off the major ticks and inside the view, tested in display space as it
does), at draw time: the same pixels (tests/test_minor_ticks.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

#: matplotlib draws a tick whose position lies within this fraction of the view's span of it
CLOSE = 1e-10
#: and drops a minor tick within this fraction of the view's span of a major one
MAJOR = 1e-5


class MinorTickMarks(Artist):
    """The minor tick marks of ``axis`` (its first side's: bottom or left)."""

    def __init__(self, axis: Any, locator: Any, tick: Any) -> None:
        super().__init__()
        self._axis = axis
        self._locator = locator
        mark = tick.tick1line
        self._line = Line2D(
            [],
            [],
            linestyle="none",
            marker=mark.get_marker(),
            markersize=mark.get_markersize(),
            markeredgewidth=mark.get_markeredgewidth(),
            color=mark.get_color(),
            markeredgecolor=mark.get_markeredgecolor(),
            transform=mark.get_transform(),
            visible=mark.get_visible(),
        )
        self._line.set_figure(axis.get_figure(root=False))
        self.set_zorder(axis.get_zorder())
        self.set_in_layout(False)

    def positions(self) -> np.ndarray:
        """The locator's positions matplotlib would draw: none where a major tick is (within
        1e-5 of the view's span, as ``Axis.get_minorticklocs``), none outside the view."""
        locs = np.asarray(self._locator(), dtype=float)
        if locs.size == 0:
            return locs
        transform = self._axis.get_transform()
        low, high = sorted(transform.transform(np.asarray(self._axis.get_view_interval())))
        placed = transform.transform(locs)
        if self._axis.remove_overlapping_locs:
            majors = transform.transform(np.asarray(self._axis.get_major_locator()(), dtype=float))
            apart = ~np.isclose(
                placed[:, None], majors[None, :], atol=MAJOR * (high - low), rtol=0
            ).any(axis=1)
            locs, placed = locs[apart], placed[apart]
        slack = CLOSE * (high - low)
        return locs[(placed >= low - slack) & (placed <= high + slack)]

    def draw(self, renderer) -> None:
        if not self.get_visible() or not self._axis.get_visible():
            return
        locs = self.positions()
        if self._axis.axis_name == "x":
            self._line.set_data(locs, np.zeros_like(locs))
        else:
            self._line.set_data(np.zeros_like(locs), locs)
        self._line.draw(renderer)
        self.stale = False


def minor_marks_as_one(axes: list) -> None:
    """Draw the minor tick marks of every axis of ``axes`` as one artist each, where they are
    marks alone: no label (the axis's minor formatter, asked now, labels none of them), no grid
    line, nothing on the second side; others are left to matplotlib. Call it last, once scales,
    locators and view limits are final (a scale set later brings matplotlib's minor ticks back
    beside these). Axes sharing an axis share its locator: all are read before any is replaced."""
    found = []
    for ax in axes:
        for axis in (ax.xaxis, ax.yaxis):
            locator = axis.get_minor_locator()
            if isinstance(locator, NullLocator):
                continue
            tick = axis.get_minor_ticks(1)[0]  # matplotlib's style for this axis's minor ticks
            marks = MinorTickMarks(axis, locator, tick)
            if tick.gridline.get_visible() or tick.tick2line.get_visible():
                continue
            if any(axis.get_minor_formatter().format_ticks(marks.positions())):
                continue
            found.append((ax, axis, marks))
    for ax, axis, marks in found:
        axis.set_minor_locator(NullLocator())
        ax.add_artist(marks)
