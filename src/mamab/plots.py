"""Regret and communication figures (matplotlib, headless): one panel per setting of a figure.

A panel holds one setting (every configuration field but the strategy: N, K, graph, edge_prob,
loss, ...); within it each configuration is one line or point, labelled by its algorithm and by
the strategy parameters (alpha, ...) that vary in the panel. Panel and label together name the
full configuration, so two configurations never share a line, a legend entry or a frontier mark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # headless: no display needed, ever
import matplotlib.pyplot as plt
import numpy as np

from mamab import theory
from mamab.errors import ConfigError
from mamab.experiments.aggregate import (
    STRATEGY_FIELDS,
    ConfigResult,
    describe_fields,
    setting_key,
    varying,
)
from mamab.stats import median_band
from mamab.storage import atomic_write

COLOURS = {
    "lcc-ucb": "tab:blue",
    "lcc-ucb-graph": "tab:cyan",
    "lcc-ucb-relay": "tab:purple",
    "full-communication": "tab:green",
    "no-communication": "tab:red",
    "demab": "tab:orange",
    "gosine": "tab:brown",
    "coop-ucb2": "tab:olive",
    "dducb": "tab:pink",
}


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
    """One distinct legend label per configuration of a panel: algorithm (+ varying parameters)."""
    fields = [k for k in varying(members, STRATEGY_FIELDS) if k != "algorithm"]
    names = [r.config["algorithm"] for r in members]
    out = []
    for r, name in zip(members, names, strict=True):
        shared = names.count(name) > 1
        out.append(f"{name} ({describe_fields(r, fields)})" if shared and fields else name)
    if len(set(out)) < len(out):  # same strategy and setting, other config: say which
        out = [f"{label} [{r.config_id}]" for label, r in zip(out, members, strict=True)]
    return out


def colour(r: ConfigResult, members: list[ConfigResult]) -> str | None:
    """The algorithm's colour, unless several configurations of it share the panel (then cycle)."""
    algorithm = r.config["algorithm"]
    alone = sum(m.config["algorithm"] == algorithm for m in members) == 1
    return COLOURS.get(algorithm) if alone else None


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


def panel_figure(results: list[ConfigResult], title: str, xlabel: str, ylabel: str,
                 draw: Callable[[Any, list[ConfigResult]], None], legend_title: str | None = None,
                 exclude: tuple[str, ...] = ()):  # fmt: skip
    """One panel per setting: ``draw(ax, members)`` fills it; titles, labels, grid and legend here."""
    grouped = panels(results, exclude)
    across = varying([m[0] for m in grouped.values()], tuple(k for k, _ in next(iter(grouped))))
    fig, axes = plt.subplots(1, len(grouped), figsize=(5 * len(grouped), 4), squeeze=False)
    for ax, members in zip(axes[0], grouped.values(), strict=True):
        draw(ax, members)
        ax.set_title(panel_title(members, across), fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, title=legend_title, title_fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def regret_figure(
    results: list[ConfigResult], title: str, exclude: Iterable[str] = (), bounds: bool = False
):
    """Median per-agent regret vs t with the order-statistic 95% band, one panel per (N, K)."""

    def draw(ax, members: list[ConfigResult]) -> None:
        for r, label in zip(members, labels(members), strict=True):
            if r.config["algorithm"] in exclude:
                continue
            med, lo, hi = median_band(r.regret)
            (line,) = ax.plot(r.grid, med, label=label, color=colour(r, members))
            ax.fill_between(r.grid, lo, hi, alpha=0.25, color=line.get_color(), linewidth=0)
            if bounds and (b := _bound(r, r.grid[r.grid > 1].astype(float))) is not None:
                ax.plot(r.grid[r.grid > 1], b, linestyle="--", color=line.get_color(),
                        label=f"{label} bound")  # fmt: skip
        if bounds:
            ax.set_yscale("log")

    return panel_figure(results, title, "t", "cumulative regret per agent", draw)


def bits_figure(results: list[ConfigResult], title: str):
    """Median bits sent per agent vs t (log scale), one panel per (N, K)."""

    def draw(ax, members: list[ConfigResult]) -> None:
        for r, label in zip(members, labels(members), strict=True):
            med = np.median(r.bits, axis=0)
            if not np.any(med > 0):
                continue  # nothing sent: nothing to draw on a log scale
            ax.plot(r.grid, np.where(med > 0, med, np.nan), label=label, color=colour(r, members))
        ax.set_yscale("log")
        ax.set_xscale("log")

    return panel_figure(results, title, "t", "bits sent per agent", draw)


def frontier_points(members: list[ConfigResult]) -> list[tuple[str, float, float, float, float]]:
    """(label, median bits/agent, median regret, band low, band high) per configuration of a panel."""
    points = []
    for r, label in zip(members, labels(members), strict=True):
        med, lo, hi = median_band(r.final_mean())
        bits = float(np.median(r.counters[1].mean(axis=1)))
        points.append((label, bits, float(med), float(lo), float(hi)))
    return points


def pareto(points: list[tuple[str, float, float, float, float]]) -> set[int]:
    """Indices of the points no other point beats on both regret and bits (ties do not dominate).

    Keyed by position, not by name: two configurations of one algorithm are two points.
    """
    return {
        i
        for i, (_, bits, regret, *_) in enumerate(points)
        if not any(b <= bits and r <= regret and (b < bits or r < regret) for _, b, r, *_ in points)
    }


def frontier_figure(results: list[ConfigResult], title: str):
    """Median final regret against median bits sent per agent, one panel per setting."""

    def draw(ax, members: list[ConfigResult]) -> None:
        points = frontier_points(members)
        best = pareto(points)
        for i, (r, (label, bits, regret, lo, hi)) in enumerate(zip(members, points, strict=True)):
            ax.errorbar([bits], [regret], yerr=[[regret - lo], [hi - regret]], fmt="o", capsize=3,
                        color=colour(r, members), label=label + (" *" if i in best else ""))  # fmt: skip
        ax.set_xscale("symlog", linthresh=1.0)

    return panel_figure(results, title, "bits sent per agent (0, then log scale)", "final regret per agent",
                        draw, legend_title="* on the frontier")  # fmt: skip


def loss_figure(results: list[ConfigResult], title: str):
    """Median final regret per agent against the message-loss probability, with 95% bands."""

    def draw(ax, members: list[ConfigResult]) -> None:
        strategies: dict[tuple, list[ConfigResult]] = {}
        for r in members:
            strategies.setdefault(tuple(r.flat[k] for k in STRATEGY_FIELDS), []).append(r)
        heads = [group[0] for group in strategies.values()]
        for head, label, group in zip(heads, labels(heads), strategies.values(), strict=True):
            series = sorted(group, key=lambda r: r.config["loss"])
            q = [r.config["loss"] for r in series]
            bands = [median_band(r.final_mean()) for r in series]
            (line,) = ax.plot(
                q, [b[0] for b in bands], marker="o", label=label, color=colour(head, heads)
            )
            ax.fill_between(q, [b[1] for b in bands], [b[2] for b in bands], alpha=0.25,
                            color=line.get_color(), linewidth=0)  # fmt: skip

    return panel_figure(
        results, title, "probability that a message is lost", "final regret per agent", draw,
        exclude=("loss",),
    )  # fmt: skip


def save(fig, path_stem: Path) -> list[Path]:
    """Write PNG and SVG beside each other, each atomically; returns the paths."""
    paths = [path_stem.with_suffix(".png"), path_stem.with_suffix(".svg")]
    try:
        for path in paths:
            atomic_write(
                path, lambda tmp, path=path: fig.savefig(tmp, dpi=120, format=path.suffix[1:])
            )
    finally:
        plt.close(fig)
    return paths


def draw_all(results: list[ConfigResult], out: Path, bounds: bool = False) -> dict[str, list[Path]]:
    """Every figure of a sweep into ``out/figures``: regret (with and without DEMAB), bits, frontier."""
    directory = out / "figures"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create {directory}: {err.strerror or err}") from None
    drawn: dict[str, list[Path]] = {}
    for figure in dict.fromkeys(r.figure for r in results):
        members = [r for r in results if r.figure == figure]
        if len({r.config.get("loss", 0.0) for r in members}) > 1:  # a loss sweep: regret against q
            drawn[f"{figure}-loss"] = save(loss_figure(members, f"{figure}: regret under message loss"),
                                           directory / f"{figure}-loss")  # fmt: skip
            continue
        drawn[f"{figure}-regret"] = save(regret_figure(members, f"{figure}: regret", bounds=bounds),
                                         directory / f"{figure}-regret")  # fmt: skip
        if any(r.config["algorithm"] == "demab" for r in members):
            drawn[f"{figure}-regret-no-demab"] = save(
                regret_figure(
                    members, f"{figure}: regret without DEMAB", exclude={"demab"}, bounds=bounds
                ),
                directory / f"{figure}-regret-no-demab",
            )
        drawn[f"{figure}-bits"] = save(
            bits_figure(members, f"{figure}: communication"), directory / f"{figure}-bits"
        )
        drawn[f"{figure}-frontier"] = save(
            frontier_figure(members, f"{figure}: regret against communication"),
            directory / f"{figure}-frontier",
        )
    return drawn
