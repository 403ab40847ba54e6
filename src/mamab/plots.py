"""Regret and communication figures (matplotlib, headless): one panel per setting of a figure.

A panel holds one setting (every configuration field but the strategy: N, K, graph, edge_prob,
loss, ...); within it each configuration is one line or point, labelled by its algorithm and by
the strategy parameters (alpha, ...) that vary in the panel. Panel and label together name the
full configuration, so two configurations never share a line, a legend entry or a frontier mark.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import matplotlib

matplotlib.use("Agg")  # headless: no display needed, ever
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import EngFormatter, FixedLocator, MaxNLocator, NullLocator

from mamab import theory
from mamab.errors import ConfigError
from mamab.experiments.aggregate import (
    STRATEGY_FIELDS,
    ConfigResult,
    describe_fields,
    setting_key,
    varying,
)
from mamab.stats import MedianBand, band_coverage, coverage_text, median_band, median_ci_ranks
from mamab.storage import atomic_write, write_json

FORMATS = ("png", "pdf", "svg")
DPI = 200  # print resolution of PNG figures
COLUMNS = 3  # panels per row of a figure


@dataclass(frozen=True)
class Style:
    """How figures are written: formats (the first is linked from report.md), PNG dpi, log time axis."""

    formats: tuple[str, ...] = ("png", "svg")
    dpi: int = DPI
    log_x: bool = False

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
    from mamab.algorithms.registry import lookup

    try:
        return lookup(algorithm).colour
    except ConfigError:
        return None


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
    """One distinct legend label per configuration of a panel: algorithm (+ the parameters that
    vary between that algorithm's configurations)."""
    names = [r.config["algorithm"] for r in members]
    out = []
    for r, name in zip(members, names, strict=True):
        same = [m for m, other in zip(members, names, strict=True) if other == name]
        fields = [k for k in varying(same, STRATEGY_FIELDS) if k != "algorithm"]
        out.append(f"{name} ({describe_fields(r, fields)})" if len(same) > 1 and fields else name)
    if len(set(out)) < len(out):  # same strategy and setting, other config: say which
        out = [f"{label} [{r.config_id}]" for label, r in zip(out, members, strict=True)]
    return out


LINESTYLES = ("-", "--", ":", "-.")


def colour(r: ConfigResult, members: list[ConfigResult]) -> str | None:
    """The algorithm's colour (several configurations of it differ by line style)."""
    return algorithm_colour(r.config["algorithm"])


def linestyle(r: ConfigResult, members: list[ConfigResult]) -> str:
    """Solid for an algorithm's first configuration in the panel, then dashed, dotted, ..."""
    same = [m.config_id for m in members if m.config["algorithm"] == r.config["algorithm"]]
    return LINESTYLES[same.index(r.config_id) % len(LINESTYLES)]


def panel_title(members: list[ConfigResult], across: list[str]) -> str:
    """'(N, K) = (10, 100), complete' plus the setting fields that differ between panels."""
    c = members[0].config
    extra = [k for k in across if k not in ("agents", "arms", "graph")]
    suffix = f", {describe_fields(members[0], extra)}" if extra else ""
    return f"(N, K) = ({c['agents']}, {c['arms']}), {c['graph']}{suffix}"


def _bound(r: ConfigResult, t: np.ndarray) -> np.ndarray | None:
    c = r.config
    if c["algorithm"] == "lcc-ucb" and c["graph"] == "complete":
        return theory.lcc_ucb_regret_bound(t, c["agents"], c["arms"])
    if c["algorithm"] == "lcc-ucb-graph":
        d, kg = int(np.median(r.diameter)), int(np.median(r.max_degree))
        return theory.lcc_ucb_graph_regret_bound(t, c["agents"], c["arms"], d, kg)
    return None


def panel_figure(
    results: list[ConfigResult],
    title: str,
    xlabel: str,
    ylabel: str,
    draw: Callable[[Any, list[ConfigResult]], None],
    legend_title: str | None = None,
    exclude: tuple[str, ...] = (),
    banded: bool = True,
):
    """One panel per setting: ``draw(ax, members)`` fills it; titles, labels, grid and legend here.

    ``banded``: the figure draws the median's bands, and its title says what they cover.
    """
    grouped = panels(results, exclude)
    across = varying([m[0] for m in grouped.values()], tuple(k for k, _ in next(iter(grouped))))
    cols = min(COLUMNS, len(grouped))
    rows = math.ceil(len(grouped) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.2 * rows), squeeze=False)
    for ax in axes.flat[len(grouped) :]:
        ax.set_visible(False)  # the last row's empty slots
    entries = []
    for ax, members in zip(axes.flat, grouped.values(), strict=False):
        draw(ax, members)
        ax.set_title(panel_title(members, across), fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        entries.append(legend_entries(ax))
    fig.suptitle(f"{title}\n{bands_note(results)}" if banded else title)
    if len(grouped) > 1 and all(list(e) == list(entries[0]) for e in entries):
        # the same entries in every panel: one legend for the figure, below the panels
        cols = min(3, len(entries[0]))
        fig.legend(
            entries[0].values(),
            entries[0].keys(),
            loc="lower center",
            ncol=cols,
            fontsize=8,
            title=legend_title,
            title_fontsize=8,
            frameon=False,
        )
        rows_of_legend = math.ceil(len(entries[0]) / cols) + (1 if legend_title else 0)
        fig.tight_layout(rect=(0, min(0.4, 0.05 * rows_of_legend / rows + 0.02), 1, 1))
    else:
        for ax, unique in zip(axes.flat, entries, strict=False):
            ax.legend(
                unique.values(), unique.keys(), fontsize=8, title=legend_title, title_fontsize=8
            )
        fig.tight_layout()
    return fig


def legend_entries(ax) -> dict[str, Any]:
    """One legend entry per label (a line and its band, or repeated draws, share one)."""
    handles, names = ax.get_legend_handles_labels()
    return dict(zip(names, handles, strict=True))


def time_axis(ax, log_x: bool = False) -> None:
    """Engineering tick labels (20k, 200k) on the time axis; log-scaled if asked."""
    if log_x:
        ax.set_xscale("log")
    else:
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(5))


def regret_figure(
    results: list[ConfigResult],
    title: str,
    exclude: Iterable[str] = (),
    bounds: bool = False,
    log_x: bool = False,
):
    """Median per-agent regret vs t with the median's order-statistic band (its coverage in the
    title: 95.7% at 30 runs, less with 5 runs or fewer), one panel per (N, K)."""

    def draw(ax, members: list[ConfigResult]) -> None:
        for r, label in zip(members, labels(members), strict=True):
            if r.config["algorithm"] in exclude:
                continue
            med, lo, hi = median_band(r.regret)
            (line,) = ax.plot(
                r.grid, med, label=label, color=colour(r, members), linestyle=linestyle(r, members)
            )
            ax.fill_between(r.grid, lo, hi, alpha=0.25, color=line.get_color(), linewidth=0)
            if bounds and (b := _bound(r, r.grid[r.grid > 1].astype(float))) is not None:
                ax.plot(
                    r.grid[r.grid > 1],
                    b,
                    linestyle="--",
                    color=line.get_color(),
                    label=f"{label} bound",
                )
        if bounds:
            ax.set_yscale("log")
        else:
            ax.yaxis.set_major_formatter(EngFormatter(sep=""))
        time_axis(ax, log_x)

    return panel_figure(results, title, "t", "cumulative regret per agent", draw)


def bits_figure(results: list[ConfigResult], title: str):
    """Median bits sent per agent vs t (log scale), one panel per (N, K)."""

    def draw(ax, members: list[ConfigResult]) -> None:
        for r, label in zip(members, labels(members), strict=True):
            med = np.median(r.bits, axis=0)
            if not np.any(med > 0):
                continue  # nothing sent: nothing to draw on a log scale
            ax.plot(
                r.grid,
                np.where(med > 0, med, np.nan),
                label=label,
                color=colour(r, members),
                linestyle=linestyle(r, members),
            )
        ax.set_yscale("log")
        ax.set_xscale("log")

    return panel_figure(results, title, "t", "bits sent per agent", draw, banded=False)


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
    texts = [coverage_text(band_coverage(n, *median_ci_ranks(n)), n) for n in used]
    return "bands: order-statistic interval of the median, coverage " + ", ".join(texts)


def frontier_figure(results: list[ConfigResult], title: str):
    """Median final regret against median bits sent per agent, one panel per setting."""

    def draw(ax, members: list[ConfigResult]) -> None:
        points = frontier_points(members)
        best = pareto(points)
        for i, (r, p) in enumerate(zip(members, points, strict=True)):
            marker = "os^D"[LINESTYLES.index(linestyle(r, members))]
            ax.errorbar(
                [p.bits],
                [p.regret],
                yerr=[[p.regret - p.low], [p.high - p.regret]],
                fmt=marker,
                capsize=3,
                color=colour(r, members),
                label=p.label + (" *" if i in best else ""),
            )
        frontier_axis(ax, [p[1] for p in points])

    return panel_figure(
        results,
        title,
        "bits sent per agent (0, then log scale)",
        "final regret per agent",
        draw,
        legend_title="* on the frontier",
    )


def frontier_ticks(bits: list[float]) -> list[float]:
    """Ticks for bits that may span less than a decade: 0 if present, then 1-2-5 steps (or 1..9)."""
    positive = [b for b in bits if b > 0]
    ticks = [0.0] if len(positive) < len(bits) else []
    if not positive:
        return ticks
    low, high = min(positive), max(positive)
    for mantissas in ((1,), (1, 2, 5), tuple(range(1, 10))):
        steps = [
            m * 10.0**e
            for e in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
            for m in mantissas
        ]
        inside = [v for v in steps if low / 1.2 <= v <= high * 1.2]
        if len(inside) >= 3 or mantissas[-1] == 9:
            return ticks + inside
    return ticks


def frontier_axis(ax, bits: list[float]) -> None:
    """Bits on a symmetric log axis (0, then log), labelled at every scale."""
    ax.set_xscale("symlog", linthresh=1.0)
    ticks = frontier_ticks(bits)
    if ticks:
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.tick_params(axis="x", labelrotation=30)
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
    median's bands: one line per strategy, one panel per setting."""

    def draw(ax, members: list[ConfigResult]) -> None:
        strategies: dict[tuple, list[ConfigResult]] = {}
        for r in members:
            strategies.setdefault(tuple(r.flat[k] for k in STRATEGY_FIELDS), []).append(r)
        heads = [group[0] for group in strategies.values()]
        for head, label, group in zip(heads, labels(heads), strategies.values(), strict=True):
            series = sorted(group, key=lambda r: r.config[field])
            x = [r.config[field] for r in series]
            bands = [r.final_band() for r in series]
            (line,) = ax.plot(
                x,
                [b.median for b in bands],
                marker="o",
                label=label,
                color=colour(head, heads),
                linestyle=linestyle(head, heads),
            )
            ax.fill_between(
                x,
                [b.low for b in bands],
                [b.high for b in bands],
                alpha=0.25,
                color=line.get_color(),
                linewidth=0,
            )
        if integer_x:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))

    return panel_figure(results, title, xlabel, ylabel, draw, exclude=(field,))


def loss_figure(results: list[ConfigResult], title: str):
    """Median final regret per agent against the message-loss probability, with bands."""
    return against_figure(results, title, "loss", "probability that a message is lost")


def malicious_figure(results: list[ConfigResult], title: str):
    """Median final regret per honest agent against the number of malicious agents."""
    return against_figure(
        results,
        title,
        "malicious",
        "malicious agents",
        "final regret per honest agent",
        integer_x=True,
    )


def save(fig, path_stem: Path, style: Style | None = None) -> list[Path]:
    """Write the figure in each of the style's formats, each atomically; returns the paths."""
    style = style or Style()
    paths = [path_stem.with_suffix(f".{ext}") for ext in style.formats]
    try:
        for path in paths:
            atomic_write(
                path, lambda tmp, path=path: fig.savefig(tmp, dpi=style.dpi, format=path.suffix[1:])
            )
    finally:
        plt.close(fig)
    return paths


MANIFEST = "manifest.json"  # in figures/: the files mamab drew there, and their style


def draw_all(
    results: list[ConfigResult], out: Path, bounds: bool = False, style: Style | None = None
) -> dict[str, list[Path]]:
    """Every figure of a sweep into ``out/figures``: regret (with and without DEMAB), bits, frontier.

    ``out/figures`` ends holding exactly these figures: files mamab drew there before (listed in
    its ``manifest.json``) that are not redrawn now — another format, a configuration no longer
    in the tables — are removed; files it did not draw are never touched. ``style=None``
    redraws in the style recorded by the last drawing (formats, dpi, time axis), else the default.
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
    drawn = {key: save(make(), directory / key, style) for key, make in plan.items()}
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
        style = Style(tuple(given["formats"]), given["dpi"], bool(given["log_x"]))
    except (ConfigError, TypeError, KeyError):
        style = None
    return files, style


def write_manifest(directory: Path, files: list[str], style: Style) -> None:
    write_json(
        directory / MANIFEST,
        {
            "files": files,
            "style": {"formats": list(style.formats), "dpi": style.dpi, "log_x": style.log_x},
        },
    )


def figure_plan(
    results: list[ConfigResult], bounds: bool, style: Style
) -> dict[str, Callable[[], Any]]:
    """File stem -> a function drawing that figure: every figure of the results, in order."""
    plan: dict[str, Callable[[], Any]] = {}
    for figure in dict.fromkeys(r.figure for r in results):
        members = [r for r in results if r.figure == figure]
        swept = varying(members, ("loss", "malicious"))
        if "loss" in swept:  # a loss sweep: regret against q
            plan[f"{figure}-loss"] = partial(
                loss_figure, members, f"{figure}: regret under message loss"
            )
            continue
        if "malicious" in swept and all(
            isinstance(r.config["malicious"], int) for r in members
        ):  # a sweep of the number of liars
            plan[f"{figure}-malicious"] = partial(
                malicious_figure, members, f"{figure}: regret of honest agents among liars"
            )
            continue
        plan[f"{figure}-regret"] = partial(
            regret_figure, members, f"{figure}: regret", bounds=bounds, log_x=style.log_x
        )
        if any(r.config["algorithm"] == "demab" for r in members):
            plan[f"{figure}-regret-no-demab"] = partial(
                regret_figure,
                members,
                f"{figure}: regret without DEMAB",
                exclude={"demab"},
                bounds=bounds,
                log_x=style.log_x,
            )
        plan[f"{figure}-bits"] = partial(bits_figure, members, f"{figure}: communication")
        plan[f"{figure}-frontier"] = partial(
            frontier_figure, members, f"{figure}: regret against communication"
        )
    return plan
