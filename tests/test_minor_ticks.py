"""Minor tick marks drawn as one artist (mamab.minor_ticks) are matplotlib's own, mark for mark."""

from __future__ import annotations

import collections
import io
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.ticker import FixedLocator

from mamab.minor_ticks import MinorTickMarks, minor_marks_as_one


def _panels():
    """Three panels sharing y: log time axes, a symmetric log y with decades as major ticks (the
    default minor ticks fall on some of them), and a symlog x with fixed minor ticks beyond the
    view on the last panel: the cases of mamab's bits and frontier figures."""
    fig, axes = plt.subplots(1, 3, figsize=(9, 3), sharey=True, layout="constrained")
    t = np.arange(1, 20_001)
    for i, ax in enumerate(axes):
        ax.plot(t, np.sqrt(t) * 40 * (i + 1))
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1.0, linscale=0.6)
        ax.yaxis.set_major_locator(FixedLocator([0, 10, 100, 1000, 10_000]))
    last = axes[2]
    last.set_xscale("symlog", linthresh=10.0, linscale=0.5)
    last.set_xlim(-1.5, 60_000)
    last.xaxis.set_minor_locator(
        FixedLocator([m * 10.0**e for e in range(0, 6) for m in range(2, 10)])
    )
    return fig, list(axes)


def _files(fig) -> tuple[bytes, str]:
    png, svg = io.BytesIO(), io.StringIO()
    with plt.rc_context({"svg.hashsalt": "test"}):
        fig.savefig(png, format="png", dpi=100)
        fig.savefig(svg, format="svg")
    plt.close(fig)
    return png.getvalue(), svg.getvalue()


def _marks(svg: str) -> collections.Counter:
    """Every marker the SVG stamps (tick marks included): its path, style and place."""
    paths = {
        m[1]: (" ".join(m[2].split()), m[3])
        for m in re.finditer(r'<path id="(m[0-9a-f]+)" d="([^"]+)"\s*style="([^"]+)"', svg)
    }
    uses = re.finditer(r'<use xlink:href="#(m[0-9a-f]+)" x="([^"]+)" y="([^"]+)"', svg)
    return collections.Counter((paths[u[1]], u[2], u[3]) for u in uses if u[1] in paths)


def test_the_marks_are_matplotlibs_minor_ticks():
    plain_png, plain_svg = _files(_panels()[0])
    fig, axes = _panels()
    minor_marks_as_one(axes)
    replaced = [a for ax in axes for a in ax.get_children() if isinstance(a, MinorTickMarks)]
    assert len(replaced) == 6  # both axes of every panel
    png, svg = _files(fig)
    assert png == plain_png  # pixel for pixel
    # the SVG names every mark: none lost, none added where a major tick hides it in a PNG
    assert _marks(svg) == _marks(plain_svg) and sum(_marks(svg).values()) > 100


def test_labelled_minor_ticks_stay_matplotlibs():
    fig, ax = plt.subplots()
    ax.plot([2.0, 5.0], [1.0, 2.0])
    ax.set_xscale("log")  # less than a decade: matplotlib labels some minor ticks
    before = ax.xaxis.get_minor_locator()
    minor_marks_as_one([ax])
    assert ax.xaxis.get_minor_locator() is before
    assert not [a for a in ax.get_children() if isinstance(a, MinorTickMarks)]
    plt.close(fig)


@pytest.mark.parametrize("option", ["grid", "both sides"])
def test_minor_ticks_that_are_more_than_marks_stay_matplotlibs(option):
    fig, ax = plt.subplots()
    ax.plot([1.0, 1e4], [1.0, 2.0])
    ax.set_xscale("log")
    if option == "grid":
        ax.grid(which="minor")
    else:
        ax.tick_params(which="minor", top=True)
    before = ax.xaxis.get_minor_locator()
    minor_marks_as_one([ax])
    assert ax.xaxis.get_minor_locator() is before
    plt.close(fig)


def test_a_shared_axis_is_replaced_whole_or_not_at_all():
    """Axes sharing an axis share its locator: one that must keep matplotlib's minor ticks (a
    minor grid here), or one not passed, keeps them for all."""
    for keep in ("grid", "not passed"):
        fig, axes = plt.subplots(1, 2, sharex=True)
        for ax in axes:
            ax.plot([1.0, 1e4], [1.0, 2.0])
            ax.set_xscale("log")
        if keep == "grid":
            axes[1].grid(which="minor", axis="x")
        before = axes[0].xaxis.get_minor_locator()
        minor_marks_as_one(list(axes) if keep == "grid" else [axes[0]])
        assert all(ax.xaxis.get_minor_locator() is before for ax in axes), keep
        assert not [a for ax in axes for a in ax.get_children() if isinstance(a, MinorTickMarks)]
        plt.close(fig)


def test_no_marks_on_an_axes_turned_off():
    def drawn(replace: bool) -> bytes:
        fig, ax = plt.subplots()
        ax.plot([1.0, 1e4], [1.0, 2.0])
        ax.set_xscale("log")
        if replace:
            minor_marks_as_one([ax])
        ax.set_axis_off()
        return _files(fig)[0]

    assert drawn(True) == drawn(False)
