"""An axis's minor tick marks as one artist: what matplotlib draws, at a fraction of the cost.

matplotlib makes every minor tick an object of five artists (its two marks, its grid line and
its two labels), positions each at every layout pass and draws each in every file: mamab's
figures spent about a fifth of their CPU time on minor ticks that are only short marks (a log
axis has 8 a decade). Here the marks are one line of markers, styled as matplotlib's own minor tick
(one is made, to read its style) and placed where matplotlib would place them (the minor
locator's positions off the major ticks and inside the view, tested in the scale's coordinates
as it does), at draw time: the same pixels (tests/test_minor_ticks.py). For figures drawn into
files only (:func:`mamab.plots.save`): the axis no longer has minor ticks of its own, so a
figure a user adjusts (a minor grid, ``tick_params``, another scale) keeps matplotlib's.
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
        self._line.set_figure(axis.axes.figure)  # (get_figure(root=...) is matplotlib 3.10+)
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
        if not (self.get_visible() and self._axis.get_visible() and self._axis.axes.axison):
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
    line, nothing on the second side; others are left to matplotlib. Axes sharing an axis share
    its locator: a shared axis is replaced only if it qualifies on every axes sharing it, all of
    them in ``axes``. Call it last, once scales, locators and view limits are final (a scale set
    later brings matplotlib's minor ticks back beside these)."""
    alone = {}  # (axes, "x" or "y") -> (its axis, the marks standing for its minor ticks)
    for ax in axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            marks = _marks_alone(axis)
            if marks is not None:
                alone[ax, name] = (axis, marks)
    chosen = [
        (ax, axis, marks)
        for (ax, name), (axis, marks) in alone.items()
        if all((other, name) in alone for other in _sharing(ax, name))
    ]
    for ax, axis, marks in chosen:
        axis.set_minor_locator(NullLocator())
        ax.add_artist(marks)


def _sharing(ax: Any, name: str) -> list:
    """The axes sharing ``ax``'s x or y axis (``ax`` among them)."""
    shared = ax.get_shared_x_axes() if name == "x" else ax.get_shared_y_axes()
    return shared.get_siblings(ax)


def _marks_alone(axis: Any) -> MinorTickMarks | None:
    """The marks standing for ``axis``'s minor ticks, if these are marks alone; else None."""
    locator = axis.get_minor_locator()
    if isinstance(locator, NullLocator):
        return None
    tick = axis.get_minor_ticks(1)[0]  # matplotlib's style for this axis's minor ticks
    if tick.gridline.get_visible() or tick.tick2line.get_visible():
        return None
    marks = MinorTickMarks(axis, locator, tick)
    if any(axis.get_minor_formatter().format_ticks(marks.positions())):
        return None
    return marks
