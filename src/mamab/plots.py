"""Regret and communication figures (matplotlib, headless): one panel per setting of a figure.

A panel holds one setting (every configuration field but the strategy: N, K, graph, edge_prob,
loss, ...); within it each configuration is one line or point, labelled by its algorithm and by
the strategy parameters that vary in the panel, in the words of its spec ("DEMAB (c = 16, own
best arm)"). Panel and label together name the full configuration, so two configurations never
share a line, a legend entry or a frontier mark. The figure's title says the setting its panels
share (graph, T, α, ...) in words (:mod:`mamab.figure_text`); panels share their y range; one
legend sits below the panels, never over the data. Nothing here names an algorithm.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.ticker import (
    EngFormatter,
    FixedLocator,
    LogLocator,
    MaxNLocator,
    NullFormatter,
)

from mamab.errors import ConfigError
from mamab.experiments.aggregate import (
    STRATEGY_FIELDS,
    ConfigResult,
    setting_key,
    varying,
)
from mamab.experiments.forkmap import fork_map
from mamab.figure_text import (
    alpha_note,
    figure_setting,
    setting_words,
    spec_of,
    strategy_label,
)
from mamab.minor_ticks import minor_marks_as_one
from mamab.stats import MedianBand, band_coverage, median_band, median_ci_ranks, percent_text
from mamab.storage import atomic_write, write_json

FORMATS = ("png", "pdf", "svg")
DPI = 200  # print resolution of PNG figures
COLUMNS = 3  # panels per row of a figure
PANEL_SIZE = (4.4, 3.4)  # inches per panel: a three-panel figure is 13.2 in wide
SINGLE_PANEL_SIZE = (7.0, 4.2)  # a figure of one panel
#: Font sizes (points): legend, titles and labels at least the tick labels' size.
FONTS = {
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "legend.title_fontsize": 10,
    "figure.titlesize": 12,
}
#: A curve whose peak exceeds this many times the median peak of a figure's curves leaves the
#: top of a linear axis (said in the caption) rather than squeezing the others to its bottom.
OUTLIER = 2.5
#: A zoomed regret figure's axis ends at this many times the median curve's peak: the lower
#: curves (the paper's comparison of LCC-UCB, full and no communication) fill it.
ZOOM = 1.25
#: In a figure of final regret against a swept field, a line this many times above the median
#: line turns the y axis to log scale (a flat line cannot leave the top and stay visible).
FLAT_OUTLIER = 2.0
#: A panel's title sits on its top edge (``y`` given): matplotlib then skips its search for
#: decorations above the panel, which there are none of (tick labels below, no offset text), a
#: search that measured every tick of the y axis again at each layout pass and each draw.
TITLE_Y = 1.0
BAND_ALPHA = 0.18
COINCIDE = 0.03  # two curves within 3% of the larger's peak everywhere are said to coincide


@dataclass(frozen=True)
class Style:
    """How figures are written: formats (the first is linked from report.md), PNG dpi, log time
    axis, log regret axis (every curve whole; else a curve far above the others leaves the top)."""

    formats: tuple[str, ...] = ("png", "svg")
    dpi: int = DPI
    log_x: bool = False
    log_y: bool = False

    def __post_init__(self) -> None:
        if not self.formats or any(f not in FORMATS for f in self.formats):
            raise ConfigError(
                f"figure formats must be among {', '.join(FORMATS)}, got {self.formats!r}"
            )
        if (
            isinstance(self.dpi, bool)
            or not isinstance(self.dpi, int)
            or not 50 <= self.dpi <= 1200
        ):
            raise ConfigError(f"dpi must be an integer in 50..1200, got {self.dpi!r}")


def algorithm_colour(algorithm: str) -> str | None:
    """The colour its spec gives ``algorithm`` (None: matplotlib's cycle, e.g. an unknown plugin)."""
    spec = spec_of(algorithm)
    return spec.colour if spec else None


def panels(
    results: list[ConfigResult], exclude: tuple[str, ...] = ()
) -> dict[tuple, list[ConfigResult]]:
    """Group one figure's results by setting (all fields but the strategy and ``exclude``).

    A configuration serving several experiments of the figure appears once.
    """
    grouped: dict[tuple, dict[str, ConfigResult]] = {}
    for r in results:
        grouped.setdefault(setting_key(r, exclude), {}).setdefault(r.config_id, r)
    return {key: list(members.values()) for key, members in grouped.items()}


def labels(members: list[ConfigResult]) -> list[str]:
    """One distinct legend label per configuration of a panel: the algorithm's label (+ the
    parameters it uses that vary between its configurations, in its spec's words)."""
    out = [strategy_label(r, members) for r in members]
    if len(set(out)) < len(out):  # same strategy and setting, other config: say which
        out = [f"{label} [{r.config_id}]" for label, r in zip(out, members, strict=True)]
    return out


LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D")


def colour(r: ConfigResult, members: list[ConfigResult]) -> str | None:
    """The algorithm's colour (several configurations of it differ by line style and marker)."""
    return algorithm_colour(r.config["algorithm"])


def rank(r: ConfigResult, members: list[ConfigResult]) -> int:
    """0 for an algorithm's first configuration in the panel, then 1, 2, ..."""
    same = [m.config_id for m in members if m.config["algorithm"] == r.config["algorithm"]]
    return same.index(r.config_id)


def linestyle(r: ConfigResult, members: list[ConfigResult]) -> str:
    """Solid for an algorithm's first configuration in the panel, then dashed, dotted, ..."""
    return LINESTYLES[rank(r, members) % len(LINESTYLES)]


def line_style(r: ConfigResult, members: list[ConfigResult], points: int) -> dict[str, Any]:
    """Colour, dashes and (from an algorithm's second configuration on) sparse markers, so two
    configurations of one algorithm stay apart even where their curves coincide."""
    k = rank(r, members)
    style: dict[str, Any] = {"color": colour(r, members), "linestyle": linestyle(r, members)}
    if k:
        step = max(1, points // 8)
        style.update(marker=MARKERS[k % len(MARKERS)], markevery=((k * step) // 3, step), ms=5)
    return style


def panel_title(members: list[ConfigResult], across: list[str], said: Iterable[str] = ()) -> str:
    """'N = 10, K = 100, complete graph' plus the setting fields that differ between panels;
    fields in ``said`` (the figure's title says them) are left out."""
    said = set(said)
    fields = [k for k in ("agents", "arms", "graph", *across) if k not in said]
    if "graph" in fields:
        fields = [k for k in fields if k != "edge_prob"]  # the graph's words say p
    return ", ".join(setting_words(members[0], list(dict.fromkeys(fields))))


def _bound(r: ConfigResult, t: np.ndarray) -> np.ndarray | None:
    """The theory's regret bound of the configuration's algorithm, from its spec (None: none)."""
    spec = spec_of(r.config["algorithm"])
    if spec is None or spec.regret_bound is None:
        return None
    d, kg = int(np.median(r.diameter)), int(np.median(r.max_degree))
    return spec.regret_bound(t, r.config, d, kg)


class Figure(NamedTuple):
    """A figure being drawn: its matplotlib figure, panel axes and the notes for its caption."""

    fig: Any
    axes: list[Any]
    notes: list[str]


def panel_figure(
    results: list[ConfigResult],
    title: str,
    xlabel: str,
    ylabel: str,
    draw: Callable[[Any, list[ConfigResult]], None],
    legend_title: str | None = None,
    exclude: tuple[str, ...] = (),
    banded: bool = True,
    finish: Callable[[Figure], None] | None = None,
):
    """One panel per setting: ``draw(ax, members)`` fills it; titles, labels, grid and legend here.

    The title says the setting every panel shares, in words; panels share the y axis; one legend
    (every label of every panel) sits below the panels. ``finish(figure)`` adjusts the drawn
    panels (axis ranges) and adds caption notes. ``banded``: the caption says what bands cover.
    """
    grouped = panels(results, exclude)
    across = varying([m[0] for m in grouped.values()], tuple(k for k, _ in next(iter(grouped))))
    cols = min(COLUMNS, len(grouped))
    rows = math.ceil(len(grouped) / cols)
    size = PANEL_SIZE if cols > 1 else SINGLE_PANEL_SIZE
    setting = figure_setting(results, [*across, *exclude])
    said = [k for k, _ in next(iter(grouped)) if k not in across]
    with plt.rc_context(FONTS):
        fig, grid = plt.subplots(
            rows,
            cols,
            figsize=(size[0] * cols, size[1] * rows + 0.6),
            squeeze=False,
            sharey=True,
            layout="constrained",
        )
        for ax in grid.flat[len(grouped) :]:
            ax.set_visible(False)  # the last row's empty slots
        axes = list(grid.flat[: len(grouped)])
        entries: dict[str, Any] = {}
        panel_chars = chars(size[0], FONTS["axes.titlesize"])
        for ax, members in zip(axes, grouped.values(), strict=True):
            draw(ax, members)
            heading = "\n".join(wrap(panel_title(members, across, said), panel_chars))
            ax.set_title(heading, y=TITLE_Y)
            ax.set_xlabel(xlabel)
            ax.grid(alpha=0.3, which="major")
            ax.tick_params(which="both", labelleft=True)
            frame_out_of_layout(ax)
            for name, handle in legend_entries(ax).items():
                entries.setdefault(name, handle)
        for ax in grid[:, 0]:
            ax.set_ylabel(ylabel)
        notes: list[str] = []
        if finish:
            finish(Figure(fig, axes, notes))
        if banded:
            notes.insert(0, bands_note(results))
        if note := alpha_note(results):
            notes.append(note)
        if len(axes) > 1:
            notes.append("panels share the y axis")
        caption = "; ".join(notes)
        width = chars(size[0] * cols, FONTS["figure.titlesize"])
        head = f"{title}: {setting}" if setting else title
        lines = [*wrap(head, width), *wrap(caption, width)]
        fig.suptitle("\n".join(lines), fontsize=FONTS["figure.titlesize"])
        ncol = min(3 if cols > 1 else 2, len(entries))
        fig.legend(
            list(entries.values()),
            list(entries.keys()),
            loc="outside lower center",
            ncol=ncol,
            title=legend_title,
            frameon=False,
        )
    return fig


def frame_out_of_layout(ax) -> None:
    """Leave the panel's frame (its four spines) out of what the layout measures of the panel.

    The frame lies on the panel's edge, which the layout counts anyway, and its tick marks reach
    less far out than the tick labels beyond them (every panel labels both axes), so the places
    stay the same (to 1e-16 of the figure); but measuring a spine recomputed every tick of its
    axis, four times per panel at each of the layout's passes.
    """
    for spine in ax.spines.values():
        spine.set_in_layout(False)


def chars(width_in: float, points: float) -> int:
    """About how many characters of a ``points``-size font fit in ``width_in`` inches."""
    return max(30, int(width_in * 72 / (points * 0.6)))


def wrap(text: str, width: int) -> list[str]:
    """``text`` in as few lines of at most ``width`` characters as :func:`textwrap.wrap` makes,
    of even lengths: no word left alone on a last line (a title read "... panels share the"
    over "y axis"). An equation ("T = 20,000") stays on one line."""
    glued = text.replace(" = ", "\u00a0=\u00a0")  # textwrap breaks at ASCII spaces alone
    lines = textwrap.wrap(glued, width)
    if len(lines) > 1:
        for narrower in range(math.ceil(len(glued) / len(lines)), width):
            even = textwrap.wrap(glued, narrower)
            if len(even) == len(lines):
                lines = even
                break
    return [line.replace("\u00a0=\u00a0", " = ") for line in lines]


def legend_entries(ax) -> dict[str, Any]:
    """One legend entry per label (a line and its band, or repeated draws, share one)."""
    handles, names = ax.get_legend_handles_labels()
    return {n: h for n, h in zip(names, handles, strict=True) if not n.startswith("_")}


def time_axis(ax, log_x: bool = False) -> None:
    """Engineering tick labels (20k, 200k) on the time axis; log-scaled if asked."""
    if log_x:
        ax.set_xscale("log")
    else:
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.xaxis.set_major_locator(MaxNLocator(5))


class Curve(NamedTuple):
    """A drawn median curve: where, its label and colour, and its values (for the axis range)."""

    ax: Any
    label: str
    colour: str
    x: np.ndarray
    median: np.ndarray
    high: np.ndarray


def robust_top(peaks: list[float], outlier: float = OUTLIER) -> float | None:
    """The top of a linear axis that leaves out curves peaking above ``OUTLIER`` times the median
    peak (None: no curve is that far above the others, or the others would still fill less than
    the axis's lower 60%: the axis shows everything)."""
    finite = [p for p in peaks if math.isfinite(p) and p > 0]
    if len(finite) < 3:
        return None
    kept = [p for p in finite if p <= outlier * float(np.median(finite))]
    if len(kept) == len(finite) or 1.08 * max(kept) > 0.6 * max(finite):
        return None  # no outlier, or leaving it out would gain little room
    return 1.08 * max(kept)


def peaks(curves: list[Curve]) -> list[float]:
    """Each curve's highest value (band included)."""
    return [float(np.nanmax(c.high)) for c in curves if np.isfinite(c.high).any()]


def zoom_top(highs: list[float]) -> float | None:
    """The top of a zoomed axis: ``ZOOM`` times the median curve's peak (None: every curve fits
    under it, a zoom would show nothing more)."""
    finite = [p for p in highs if math.isfinite(p) and p > 0]
    if len(finite) < 3:
        return None
    top = ZOOM * float(np.median(finite))
    return top if max(finite) > top * 1.05 else None


def clip_outliers(
    figure: Figure, curves: list[Curve], what: str = "final median", top: float | None = None
) -> None:
    """Set the shared linear y range to ``top`` (default: :func:`robust_top`); mark each curve
    that leaves the top with an arrow and its last value, and say so in the caption."""
    top = top if top is not None else robust_top(peaks(curves))
    if top is None:
        return
    lowest = min(float(np.nanmin(c.median)) for c in curves)
    bottom = -0.03 * top if lowest >= 0 else figure.axes[0].get_ylim()[0]
    for ax in figure.axes:
        ax.set_ylim(bottom=bottom, top=top)
    above = []
    stacked: dict[int, int] = {}  # arrows already written per panel: the next goes below
    for c in curves:
        beyond = np.flatnonzero(c.median > top)
        if not beyond.size:
            continue
        x = c.x[beyond[0]]
        late = c.ax.transLimits.transform((x, top))[0] > 0.7  # near the right edge: text leftwards
        row = stacked.get(id(c.ax), 0)
        stacked[id(c.ax)] = row + 1
        c.ax.annotate(
            f"↑ {float(c.median[-1]):,.0f}",
            xy=(x, top),
            xytext=(-3 if late else 3, -2 - 1.3 * FONTS["xtick.labelsize"] * row),
            textcoords="offset points",
            ha="right" if late else "left",
            va="top",
            color=c.colour,
            fontsize=FONTS["xtick.labelsize"],
            bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 0.5},
        )
        if c.label not in above:
            above.append(c.label)
    figure.notes.append(
        f"{', '.join(above)} {'runs' if len(above) == 1 else 'run'} above the axis (↑: {what})"
    )


def coincide_note(curves: list[Curve]) -> str:
    """'A and B coincide (within 3%)' for curves of one panel that lie on top of each other
    (within ``COINCIDE`` of the larger at 90% of the times or more)."""
    pairs = []
    for i, a in enumerate(curves):
        for b in curves[i + 1 :]:
            if a.ax is not b.ax or len(a.median) != len(b.median):
                continue
            scale = np.maximum(np.abs(a.median), np.abs(b.median))
            close = np.abs(a.median - b.median) <= COINCIDE * scale
            if np.any(scale > 0) and np.mean(close) >= 0.9:
                pair = f"{a.label} and {b.label}"
                if pair not in pairs:
                    pairs.append(pair)
    if not pairs:
        return ""
    return f"{'; '.join(pairs)} coincide (within {COINCIDE:.0%}; markers tell them apart)"


def regret_figure(
    results: list[ConfigResult],
    title: str = "Cumulative regret per agent",
    exclude: Iterable[str] = (),
    bounds: bool = False,
    log_x: bool = False,
    log_y: bool = False,
    zoom: bool = False,
):
    """Median per-agent regret vs t with the median's order-statistic band (its coverage in the
    caption: 95.7% at 30 runs, less with 5 runs or fewer), one panel per (N, K).

    On a linear axis a curve far above the others (DEMAB's fitted c = 16) leaves the top with
    an arrow and its final value, so the others keep the axis; ``log_y`` shows every curve whole.
    ``zoom``: the axis ends at :data:`ZOOM` times the median curve's peak (the lower curves fill
    it; every curve above leaves it with an arrow). ``exclude``: algorithms left out.
    """
    curves: list[Curve] = []
    log_y = log_y or bounds

    def draw(ax, members: list[ConfigResult]) -> None:
        for r, label in zip(members, labels(members), strict=True):
            if r.config["algorithm"] in exclude:
                continue
            med, lo, hi = median_band(r.regret)
            (line,) = ax.plot(r.grid, med, label=label, **line_style(r, members, len(r.grid)))
            ax.fill_between(r.grid, lo, hi, alpha=BAND_ALPHA, color=line.get_color(), lw=0)
            curves.append(Curve(ax, label, line.get_color(), r.grid, med, hi))
            if bounds and (b := _bound(r, r.grid[r.grid > 1].astype(float))) is not None:
                ax.plot(
                    r.grid[r.grid > 1],
                    b,
                    linestyle=(0, (1, 1)),
                    color=line.get_color(),
                    label=f"{label}: bound",
                )
        if log_y:
            ax.set_yscale("log")
        else:
            ax.yaxis.set_major_formatter(EngFormatter(sep=""))
        time_axis(ax, log_x)

    def finish(figure: Figure) -> None:
        if zoom:
            clip_outliers(figure, curves, "final median", zoom_top(peaks(curves)))
        elif not log_y:
            clip_outliers(figure, curves, "final median")
        if note := coincide_note(curves):
            figure.notes.append(note)

    return panel_figure(
        results,
        title,
        "t",
        "cumulative regret per agent" + (" (log scale)" if log_y else ""),
        draw,
        finish=finish,
    )


ZERO_FLOOR = 0.4  # the bits axis starts this far below 0, so a 0-bit line shows above the spine


def bits_figure(results: list[ConfigResult], title: str = "Bits sent per agent"):
    """Median bits sent per agent vs t, one panel per (N, K). The y axis is 0, then log scale
    (symlog), so an algorithm that sends nothing is a line at 0, said in its legend entry."""
    curves: list[Curve] = []

    def draw(ax, members: list[ConfigResult]) -> None:
        zeros = 0
        for r, label in zip(members, labels(members), strict=True):
            med = np.median(r.bits, axis=0)
            style = line_style(r, members, len(r.grid))
            if not np.any(med > 0):
                label += " (0 bits)"
            elif not np.any(med[r.grid < r.config["horizon"]] > 0):
                label += " (nothing before T)"
            if not np.any(med[r.grid < r.config["horizon"]] > 0):
                step = max(1, len(r.grid) // 8)  # lines at 0 overlap: interleaved markers
                style.update(
                    marker=MARKERS[zeros % len(MARKERS)], markevery=(zeros * 3 % step, step)
                )
                zeros += 1
            (line,) = ax.plot(r.grid, med, label=label, **style)
            curves.append(Curve(ax, label, line.get_color(), r.grid, med, med))
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1.0, linscale=0.6)

    def finish(figure: Figure) -> None:
        top = max((float(np.nanmax(c.median)) for c in curves), default=1.0)
        decades = [0.0] + [
            10.0**e for e in range(1, max(1, math.ceil(math.log10(max(top, 1)))) + 1)
        ]
        for ax in figure.axes:
            ax.set_ylim(-ZERO_FLOOR, max(top * 2, 10))
            ax.yaxis.set_major_locator(
                FixedLocator(decades[:: max(1, len(decades) // 7)] if len(decades) > 8 else decades)
            )
            ax.yaxis.set_major_formatter(EngFormatter(sep=""))
            ax.yaxis.set_minor_formatter(NullFormatter())
        talking = [c for c in curves if np.any(c.median[:-1] > 0)]  # silent ones are said
        if note := coincide_note(talking):
            figure.notes.append(note)

    return panel_figure(
        results,
        title,
        "t (log scale)",
        "bits sent per agent (0, then log)",
        draw,
        banded=False,
        finish=finish,
    )


class FrontierPoint(NamedTuple):
    """One configuration of a panel: median bits/agent, median final regret and its band."""

    label: str
    bits: float
    regret: float  # NaN when no run kept an honest agent alive
    low: float
    high: float
    band: MedianBand  # runs used and the band's coverage


def frontier_points(members: list[ConfigResult]) -> list[FrontierPoint]:
    """One point per configuration of a panel (labels distinct within the panel)."""
    points = []
    for r, label in zip(members, labels(members), strict=True):
        band = r.final_band()
        points.append(
            FrontierPoint(label, r.per_agent("bits_sent"), band.median, band.low, band.high, band)
        )
    return points


def pareto(points: list[tuple]) -> set[int]:
    """Indices of the points no other point beats on both regret and bits (ties do not dominate).

    Keyed by position, not by name: two configurations of one algorithm are two points. A point
    without a regret (NaN: no run kept an honest agent alive) is left out: it is neither on the
    frontier nor dominates anything.
    """
    known = [
        (i, b, r) for i, (_, b, r, *_) in enumerate(points) if math.isfinite(b) and math.isfinite(r)
    ]
    return {
        i
        for i, bits, regret in known
        if not any(b <= bits and r <= regret and (b < bits or r < regret) for _, b, r in known)
    }


def bands_note(results: list[ConfigResult]) -> str:
    """What the shaded bands and error bars of a figure are, with the coverage they achieve.

    The band is the order-statistic interval of the median (ranks l and n+1-l); with few runs it
    covers less than 95% (the whole range of 4 runs: 87.5%), so the figure says how much.
    """
    used = sorted({r.final_band().runs for r in results} - {0})
    if not used:
        return "no run kept an honest agent alive"
    texts = [f"{percent_text(band_coverage(n, *median_ci_ranks(n)))} with {n} runs" for n in used]
    return "bands: order-statistic interval of the median, coverage " + ", ".join(texts)


def frontier_figure(results: list[ConfigResult], title: str = "Final regret against bits sent"):
    """Median final regret against median bits sent per agent, one panel per setting. Each point
    carries its number (the legend's); * marks the points on the frontier."""
    numbers: dict[str, int] = {}
    every_bits: list[float] = []
    marks: list[tuple[Any, float, float, str]] = []

    def draw(ax, members: list[ConfigResult]) -> None:
        points = frontier_points(members)
        best = pareto(points)
        for i, (r, p) in enumerate(zip(members, points, strict=True)):
            n = numbers.setdefault(p.label, len(numbers) + 1)
            ax.errorbar(
                [p.bits],
                [p.regret],
                yerr=[[p.regret - p.low], [p.high - p.regret]],
                fmt=MARKERS[rank(r, members) % len(MARKERS)],
                capsize=3,
                color=colour(r, members),
                label=f"{n}: {p.label}",
            )
            if math.isfinite(p.regret):
                marks.append((ax, p.bits, p.regret, f"{n}{'*' if i in best else ''}"))
            every_bits.append(p.bits)
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))
        ax.set_ymargin(0.12)  # room for the numbers of the top and bottom points

    def finish(figure: Figure) -> None:
        for ax in figure.axes:
            frontier_axis(ax, every_bits)
        settle(figure.fig)  # final limits: place the numbers where they overlap nothing
        number_points(marks)

    return panel_figure(
        results,
        title,
        "bits sent per agent (0, then log scale)",
        "final regret per agent",
        draw,
        legend_title="* on the frontier: no other point has both fewer bits and lower regret",
        finish=finish,
    )


def settle(fig) -> None:
    """Give ``fig``'s panels their final place and view limits, as drawing it would, without
    rendering a pixel: its layout engine and autoscaling only (a third of a draw's time)."""
    for ax in fig.axes:
        ax.apply_aspect()
    if (engine := fig.get_layout_engine()) is not None:
        engine.execute(fig)
    for ax in fig.axes:
        ax.get_xlim(), ax.get_ylim()  # autoscaling done


#: Where a point's number goes (offset in points), tried in order until it overlaps no other.
NUMBER_OFFSETS = ((5, 3), (5, -13), (-14, 3), (-14, -13), (5, 12), (5, -22))


def number_points(marks: list[tuple[Any, float, float, str]]) -> None:
    """Write each point's number beside it, at the first offset whose box is clear of the
    numbers and points already placed in its panel."""
    placed: dict[int, list[tuple[float, float]]] = {}
    for ax, x, y, text in marks:
        px, py = ax.transData.transform((x, y))
        scale = ax.figure.dpi / 72
        taken = placed.setdefault(id(ax), [])
        points = [ax.transData.transform((bx, by)) for a, bx, by, _ in marks if a is ax]
        size = FONTS["xtick.labelsize"] * scale
        chosen = NUMBER_OFFSETS[0]
        for dx, dy in NUMBER_OFFSETS:
            cx, cy = px + dx * scale, py + dy * scale
            box = (cx, cy, cx + size * 0.6 * len(text), cy + size)
            clear = all(
                not (box[0] < ox + size and ox < box[2] and box[1] < oy + size and oy < box[3])
                for ox, oy in taken
            ) and all(
                not (box[0] - 3 < qx < box[2] + 3 and box[1] - 3 < qy < box[3] + 3)
                for qx, qy in points
            )
            if clear:
                chosen = (dx, dy)
                break
        taken.append((px + chosen[0] * scale, py + chosen[1] * scale))
        ax.annotate(
            text,
            (x, y),
            xytext=chosen,
            textcoords="offset points",
            fontsize=FONTS["xtick.labelsize"],
        )


def frontier_ticks(bits: list[float]) -> list[float]:
    """Ticks for bits: 0 if present, then every decade from the smallest to the largest (at
    most 9 labelled: every other decade beyond), or 1-2-5 steps within less than two decades."""
    positive = [b for b in bits if b > 0]
    ticks = [0.0] if len(positive) < len(bits) else []
    if not positive:
        return ticks
    low, high = min(positive), max(positive)
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    decades = [10.0**e for e in range(first, last + 1)]
    if len(decades) >= 3:
        step = math.ceil(len(decades) / 9)
        return ticks + decades[::step]
    for mantissas in ((1, 2, 5), tuple(range(1, 10))):
        steps = [m * 10.0**e for e in range(first - 1, last + 1) for m in mantissas]
        inside = [v for v in steps if low / 1.2 <= v <= high * 1.2]
        if len(inside) >= 3 or mantissas[-1] == 9:
            return ticks + inside
    return ticks


def frontier_axis(ax, bits: list[float]) -> None:
    """Bits on a symmetric log axis (0, then log, with a break mark between), labelled at every
    decade with minor ticks between, reaching past the largest value."""
    positive = [b for b in bits if b > 0]
    ticks = frontier_ticks(bits)
    zero = len(positive) < len(bits)
    if positive:
        low = min(positive)
        linthresh = 10.0 ** math.floor(math.log10(low))  # linear from 0 to the first decade
        ax.set_xscale("symlog", linthresh=linthresh, linscale=0.5)
        left = -0.15 * linthresh if zero else low / 2
        ax.set_xlim(left, max(positive) * 3)
        minors = [
            m * 10.0**e
            for e in range(
                math.floor(math.log10(low)) - 1, math.ceil(math.log10(max(positive))) + 1
            )
            for m in range(2, 10)
        ]
        ax.xaxis.set_minor_locator(FixedLocator([m for m in minors if m > linthresh]))
        if zero:  # a break mark where the linear part (0) meets the log part
            ax.annotate(
                "//",
                xy=(0.6 * linthresh, 0),
                xycoords=("data", "axes fraction"),
                ha="center",
                va="center",
                fontsize=FONTS["xtick.labelsize"],
                annotation_clip=False,
            )
    if ticks:
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(EngFormatter(sep=""))


def against_figure(
    results: list[ConfigResult],
    title: str,
    field: str,
    xlabel: str,
    ylabel: str = "final regret per agent",
    integer_x: bool = False,
):
    """Median final regret per (honest, surviving) agent against a configuration field, with the
    median's band as an error bar (side by side, not overlapping shades): one line per strategy,
    one panel per setting. A line far above the others leaves the top (said in the caption)."""
    curves: list[Curve] = []

    def draw(ax, members: list[ConfigResult]) -> None:
        strategies: dict[tuple, list[ConfigResult]] = {}
        for r in members:
            strategies.setdefault(tuple(r.flat[k] for k in STRATEGY_FIELDS), []).append(r)
        heads = [group[0] for group in strategies.values()]
        xs = sorted({r.config[field] for r in members})
        gap = min((b - a for a, b in itertools.pairwise(xs)), default=1.0)
        for i, (head, label, group) in enumerate(
            zip(heads, labels(heads), strategies.values(), strict=True)
        ):
            series = sorted(group, key=lambda r: r.config[field])
            shift = gap * 0.08 * (i - (len(heads) - 1) / 2)  # side by side: bars do not overlap
            x = np.array([r.config[field] for r in series], dtype=float) + shift
            bands = [r.final_band() for r in series]
            med = np.array([b.median for b in bands])
            ax.errorbar(
                x,
                med,
                yerr=[med - [b.low for b in bands], [b.high for b in bands] - med],
                marker=MARKERS[rank(head, heads) % len(MARKERS)],
                ms=4,
                capsize=2,
                label=label,
                color=colour(head, heads),
                linestyle=linestyle(head, heads),
            )
            curves.append(
                Curve(
                    ax,
                    label,
                    colour(head, heads) or "black",
                    x,
                    med,
                    np.array([b.high for b in bands]),
                )
            )
        if integer_x:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))

    def finish(figure: Figure) -> None:
        # a line far above the others: log scale, so every line stays whole and readable (a
        # flat line clipped off a linear axis would leave its legend entry with nothing drawn)
        highs = [float(np.nanmax(c.high)) for c in curves if np.isfinite(c.high).any()]
        if robust_top(highs, FLAT_OUTLIER) is not None:
            for ax in figure.axes:
                ax.set_yscale("log")
                ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
                ax.yaxis.set_major_formatter(EngFormatter(sep=""))
                ax.yaxis.set_minor_formatter(NullFormatter())
            figure.notes.append("log scale: one line lies far above the others")

    return panel_figure(results, title, xlabel, ylabel, draw, exclude=(field,), finish=finish)


def loss_figure(results: list[ConfigResult], title: str = "Final regret under message loss"):
    """Median final regret per agent against the message-loss probability, with bands."""
    return against_figure(results, title, "loss", "probability q that a message is lost")


def malicious_figure(
    results: list[ConfigResult], title: str = "Final regret of honest agents among liars"
):
    """Median final regret per honest agent against the number of malicious agents."""
    return against_figure(
        results,
        title,
        "malicious",
        "malicious agents",
        "final regret per honest agent",
        integer_x=True,
    )


#: rc settings under which ``set_layout_engine(None)`` leaves a figure with no layout engine
NO_LAYOUT = {"figure.autolayout": False, "figure.constrained_layout.use": False}


#: No date in the files, ids from a fixed salt: one drawing gives the same bytes every time
UNDATED = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}


def _savefig(fig, target, fmt: str, style: Style) -> None:
    with plt.rc_context({"svg.hashsalt": "mamab"}):
        fig.savefig(target, dpi=style.dpi, format=fmt, metadata=UNDATED.get(fmt))


@contextmanager
def at_dpi(fig, dpi: float):
    """``fig`` at ``dpi`` for the block: its Agg renderer measures text as a PNG file's would."""
    before = fig.dpi
    fig.dpi = dpi
    try:
        yield fig
    finally:
        fig.dpi = before


def place_for_png(fig, style: Style) -> bool:
    """Compute ``fig``'s layout as saving it as the style's PNG would, without drawing it; False
    (nothing done) unless the first format is PNG and the canvas matplotlib's plain Agg one.

    ``savefig`` draws the whole figure once, unseen, only to run its layout engine (at the
    file's dpi, with the canvas's Agg renderer): the layout alone, with that renderer at that dpi,
    gives the same places (the same bytes) without the draw. Another canvas (a GUI's, whose
    window a dpi change would resize) or another first format keeps ``savefig``'s own way.
    """
    if style.formats[0] != "png" or type(fig.canvas) is not FigureCanvasAgg:
        return False
    with at_dpi(fig, style.dpi):
        settle(fig)
    return True


def keep_places(fig) -> None:
    """Leave ``fig`` without a layout engine: its panels stay where the last layout put them."""
    with plt.rc_context(NO_LAYOUT):  # None would fall back to the rc's engine
        fig.set_layout_engine(None)


def save(fig, path_stem: Path, style: Style | None = None) -> list[Path]:
    """Write the figure in each of the style's formats, each atomically; returns the paths.

    The layout is computed once, for the first format: the others keep its panels' places
    (recomputing it per format moved them by under a point and cost a seventh of the drawing).
    For a PNG it is computed without drawing (:func:`place_for_png`, a tenth of the CPU time).
    Then the figure has no layout engine at all: with one, even a placeholder, matplotlib draws
    a figure twice per file (once unseen, for the layout): a tenth of a redraw's CPU time.
    Unlabelled minor tick marks are drawn as one artist per axis first
    (:mod:`mamab.minor_ticks`): the same pixels, and the figure is closed here anyway.
    """
    style = style or Style()
    paths = [path_stem.with_suffix(f".{ext}") for ext in style.formats]
    try:
        minor_marks_as_one(fig.axes)
        if place_for_png(fig, style):
            keep_places(fig)
        for path in paths:
            atomic_write(path, lambda tmp, path=path: _savefig(fig, tmp, path.suffix[1:], style))
            keep_places(fig)  # the places just computed stay
    finally:
        plt.close(fig)
    return paths


MANIFEST = "manifest.json"  # in figures/: the files mamab drew there, and their style


def draw_all(
    results: list[ConfigResult],
    out: Path,
    bounds: bool = False,
    style: Style | None = None,
    jobs: int = 1,
) -> dict[str, list[Path]]:
    """Every figure of a sweep into ``out/figures``: regret, bits and frontier (or regret against
    the loss or the number of liars swept).

    ``out/figures`` ends holding exactly these figures: files mamab drew there before (listed in
    its ``manifest.json``) that are not redrawn now — another format, a configuration no longer
    in the tables — are removed; files it did not draw are never touched. ``style=None``
    redraws in the style recorded by the last drawing (formats, dpi, time axis), else the default.
    ``jobs``: figures drawn at once, in forked processes (:func:`mamab.experiments.forkmap.fork_map`); the
    files are the same whatever the number.
    """
    directory = out / "figures"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create {directory}: {err.strerror or err}") from None
    before, recorded = read_manifest(directory)
    style = style or recorded or Style()
    plan = figure_plan(results, bounds, style)
    names = [f"{key}.{ext}" for key in plan for ext in style.formats]
    # listed before drawing: a drawing interrupted halfway leaves no file unaccounted for
    write_manifest(directory, sorted({*before, *names}), style)
    keys = list(plan)
    paths = fork_map(
        lambda key: save(plan[key](), directory / key, style), keys, jobs, cost=drawing_cost
    )
    drawn = dict(zip(keys, paths, strict=True))
    for stale in sorted(set(before) - set(names)):
        path = directory / stale
        if path.is_file() and not path.is_symlink() and path.parent == directory:
            try:
                path.unlink()
            except OSError as err:
                raise ConfigError(
                    f"cannot remove stale figure {path}: {err.strerror or err}"
                ) from None
    write_manifest(directory, sorted(names), style)
    return drawn


#: Rough relative cost of drawing each kind of figure (measured: bits and frontier figures, with
#: their symlog axes and numbered points, take about twice a regret figure's time).
KIND_COST = {"bits": 2.0, "frontier": 2.0}


def drawing_cost(key: str) -> float:
    """A guess of a figure's drawing time from its file stem ('<figure>-<kind>'), for ordering."""
    return KIND_COST.get(key.rsplit("-", 1)[-1], 1.0)


def read_manifest(directory: Path) -> tuple[list[str], Style | None]:
    """(file names mamab drew in ``directory``, their style) from its manifest; an unreadable or
    absent manifest lists nothing (so nothing is ever removed on its word)."""
    import json

    try:
        data = json.loads((directory / MANIFEST).read_text())
        files = [
            f
            for f in data["files"]
            if isinstance(f, str) and "/" not in f and f not in ("", ".", "..", MANIFEST)
        ]
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError):
        return [], None
    try:
        given = data["style"]
        style = Style(
            tuple(given["formats"]),
            given["dpi"],
            bool(given["log_x"]),
            bool(given.get("log_y", False)),
        )
    except (ConfigError, TypeError, KeyError):
        style = None
    return files, style


def write_manifest(directory: Path, files: list[str], style: Style) -> None:
    write_json(
        directory / MANIFEST,
        {
            "files": files,
            "style": {
                "formats": list(style.formats),
                "dpi": style.dpi,
                "log_x": style.log_x,
                "log_y": style.log_y,
            },
        },
    )


def figure_plan(
    results: list[ConfigResult], bounds: bool, style: Style
) -> dict[str, Callable[[], Any]]:
    """File stem -> a function drawing that figure: every figure of the results, in order.

    A figure sweeping the loss or the number of liars gets one figure of final regret against
    it; any other gets regret against time, bits against time and the regret-bits frontier.
    """
    plan: dict[str, Callable[[], Any]] = {}
    for figure in dict.fromkeys(r.figure for r in results):
        members = [r for r in results if r.figure == figure]
        swept = varying(members, ("loss", "malicious"))
        if "loss" in swept:  # a loss sweep: regret against q
            plan[f"{figure}-loss"] = partial(loss_figure, members)
            continue
        if "malicious" in swept and all(
            isinstance(r.config["malicious"], int) for r in members
        ):  # a sweep of the number of liars
            plan[f"{figure}-malicious"] = partial(malicious_figure, members)
            continue
        plan[f"{figure}-regret"] = partial(
            regret_figure, members, bounds=bounds, log_x=style.log_x, log_y=style.log_y
        )
        if not (style.log_y or bounds) and zoom_top(
            [float(median_band(r.regret)[2].max()) for r in members]
        ):
            plan[f"{figure}-regret-zoom"] = partial(
                regret_figure,
                members,
                "Cumulative regret per agent, the lower curves",
                bounds=bounds,
                log_x=style.log_x,
                zoom=True,
            )
        plan[f"{figure}-bits"] = partial(bits_figure, members)
        plan[f"{figure}-frontier"] = partial(frontier_figure, members)
    return plan


def plot(
    source: Any,
    out: str | Path | None = None,
    *,
    bounds: bool = False,
    style: Style | None = None,
    figure: str = "results",
) -> dict[str, Any]:
    """The figures ``mamab plot`` draws, from Python: regret, bits and frontier (or regret
    against the loss or the number of liars when a sweep varies them).

    ``source``: a sweep directory (its stored tables), a :class:`mamab.Result`, a list of
    Results (one panel per setting, one line per strategy; named ``figure``) or what
    :func:`mamab.sweep` returns. With ``out``, the figures are written into ``out/figures`` in
    ``style`` (as ``mamab plot``: formats, dpi, log axes; stale figures mamab drew there are
    removed) and the paths are returned by figure; without, the matplotlib figures are returned
    by name (``fig.savefig(...)``, or displayed as a notebook cell's value; they are closed in
    pyplot, so ``plt.show()`` does not list them) and nothing is written. The backend is the
    caller's (``mamab``'s command line alone sets Agg).
    """
    results = _config_results(source, figure)
    if not results:
        raise ConfigError("nothing to plot: no result given")
    if out is not None:
        return draw_all(results, Path(out), bounds=bounds, style=style)
    style = style or Style()
    figures = {key: make() for key, make in figure_plan(results, bounds, style).items()}
    for fig in figures.values():
        plt.close(fig)  # the caller holds them; pyplot need not (no "more than 20 figures")
    return figures


def _config_results(source: Any, figure: str) -> list[ConfigResult]:
    from mamab.result import Result

    if isinstance(source, str | Path):
        from mamab.experiments.aggregate import read_curves

        return read_curves(Path(source))
    if hasattr(source, "results") and not isinstance(source, Result):
        source = source.results  # a sweep's outcome
    items = [source] if isinstance(source, Result | ConfigResult) else list(source)
    out = []
    for item in items:
        if isinstance(item, Result):
            out.append(ConfigResult.from_result(item, figure))
        elif isinstance(item, ConfigResult):
            out.append(item)
        else:
            raise ConfigError(
                f"cannot plot {type(item).__name__}: give Results or a sweep directory"
            )
    return out
