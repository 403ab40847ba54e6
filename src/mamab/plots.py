"""Regret and communication figures (matplotlib, headless): one panel per (N, K) of a figure."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # headless: no display needed, ever
import matplotlib.pyplot as plt
import numpy as np

from mamab import theory
from mamab.experiments.aggregate import ConfigResult
from mamab.stats import median_band

COLOURS = {
    "lcc-ucb": "tab:blue",
    "lcc-ucb-graph": "tab:cyan",
    "lcc-ucb-relay": "tab:purple",
    "full-communication": "tab:green",
    "no-communication": "tab:red",
    "demab": "tab:orange",
    "gosine": "tab:brown",
    "coop-ucb2": "tab:olive",
}


def panels(results: list[ConfigResult]) -> dict[tuple, list[ConfigResult]]:
    """Group one figure's results by panel: (agents, arms, graph, horizon)."""
    grouped: dict[tuple, list[ConfigResult]] = {}
    for r in results:
        c = r.config
        grouped.setdefault((c["agents"], c["arms"], c["graph"], c["horizon"]), []).append(r)
    return grouped


def _bound(r: ConfigResult, t: np.ndarray) -> np.ndarray | None:
    c = r.config
    if c["algorithm"] == "lcc-ucb" and c["graph"] == "complete":
        return theory.lcc_ucb_regret_bound(t, c["agents"], c["arms"])
    if c["algorithm"] == "lcc-ucb-graph":
        d, kg = int(np.median(r.diameter)), int(np.median(r.max_degree))
        return theory.lcc_ucb_graph_regret_bound(t, c["agents"], c["arms"], d, kg)
    return None


def panel_figure(results: list[ConfigResult], title: str, xlabel: str, ylabel: str,
                 draw: Callable[[Any, list[ConfigResult]], None], legend_title: str | None = None):  # fmt: skip
    """One panel per (N, K, graph, T): ``draw(ax, members)`` fills it; labels, grid and legend here."""
    grouped = panels(results)
    fig, axes = plt.subplots(1, len(grouped), figsize=(5 * len(grouped), 4), squeeze=False)
    for ax, ((n, k, graph, _), members) in zip(axes[0], grouped.items(), strict=True):
        draw(ax, members)
        ax.set_title(f"(N, K) = ({n}, {k}), {graph}")
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
        for r in members:
            algorithm = r.config["algorithm"]
            if algorithm in exclude:
                continue
            med, lo, hi = median_band(r.regret)
            colour = COLOURS.get(algorithm)
            ax.plot(r.grid, med, label=algorithm, color=colour)
            ax.fill_between(r.grid, lo, hi, alpha=0.25, color=colour, linewidth=0)
            if bounds and (b := _bound(r, r.grid[r.grid > 1].astype(float))) is not None:
                ax.plot(
                    r.grid[r.grid > 1], b, linestyle="--", color=colour, label=f"{algorithm} bound"
                )
        if bounds:
            ax.set_yscale("log")

    return panel_figure(results, title, "t", "cumulative regret per agent", draw)


def bits_figure(results: list[ConfigResult], title: str):
    """Median bits sent per agent vs t (log scale), one panel per (N, K)."""

    def draw(ax, members: list[ConfigResult]) -> None:
        for r in members:
            med = np.median(r.bits, axis=0)
            if not np.any(med > 0):
                continue  # nothing sent: nothing to draw on a log scale
            ax.plot(r.grid, np.where(med > 0, med, np.nan), label=r.config["algorithm"],
                    color=COLOURS.get(r.config["algorithm"]))  # fmt: skip
        ax.set_yscale("log")
        ax.set_xscale("log")

    return panel_figure(results, title, "t", "bits sent per agent", draw)


def frontier_points(members: list[ConfigResult]) -> list[tuple[str, float, float, float, float]]:
    """(algorithm, median bits/agent, median regret, band low, band high) of one panel."""
    points = []
    for r in members:
        med, lo, hi = median_band(r.final_mean())
        bits = float(np.median(r.counters[1].mean(axis=1)))
        points.append((r.config["algorithm"], bits, float(med), float(lo), float(hi)))
    return points


def pareto(points: list[tuple[str, float, float, float, float]]) -> set[str]:
    """Algorithms no other beats on both regret and bits (ties do not dominate)."""
    return {
        name
        for name, bits, regret, *_ in points
        if not any(b <= bits and r <= regret and (b < bits or r < regret) for _, b, r, *_ in points)
    }


def frontier_figure(results: list[ConfigResult], title: str):
    """Median final regret against median bits sent per agent, one panel per (N, K)."""

    def draw(ax, members: list[ConfigResult]) -> None:
        points = frontier_points(members)
        best = pareto(points)
        for name, bits, regret, lo, hi in points:
            ax.errorbar([bits], [regret], yerr=[[regret - lo], [hi - regret]], fmt="o", capsize=3,
                        color=COLOURS.get(name), label=name + (" *" if name in best else ""))  # fmt: skip
        ax.set_xscale("symlog", linthresh=1.0)

    return panel_figure(results, title, "bits sent per agent (0, then log scale)", "final regret per agent",
                        draw, legend_title="* on the frontier")  # fmt: skip


def loss_figure(results: list[ConfigResult], title: str):
    """Median final regret per agent against the message-loss probability, with 95% bands."""

    def draw(ax, members: list[ConfigResult]) -> None:
        for algorithm in dict.fromkeys(r.config["algorithm"] for r in members):
            series = sorted(
                (r for r in members if r.config["algorithm"] == algorithm),
                key=lambda r: r.config["loss"],
            )
            q = [r.config["loss"] for r in series]
            bands = [median_band(r.final_mean()) for r in series]
            colour = COLOURS.get(algorithm)
            ax.plot(q, [b[0] for b in bands], marker="o", label=algorithm, color=colour)
            ax.fill_between(
                q,
                [b[1] for b in bands],
                [b[2] for b in bands],
                alpha=0.25,
                color=colour,
                linewidth=0,
            )

    return panel_figure(
        results, title, "probability that a message is lost", "final regret per agent", draw
    )


def save(fig, path_stem: Path) -> list[Path]:
    """Write PNG and SVG beside each other; returns the paths."""
    paths = [path_stem.with_suffix(".png"), path_stem.with_suffix(".svg")]
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths


def draw_all(results: list[ConfigResult], out: Path, bounds: bool = False) -> dict[str, list[Path]]:
    """Every figure of a sweep into ``out/figures``: regret (with and without DEMAB), bits, frontier."""
    directory = out / "figures"
    directory.mkdir(parents=True, exist_ok=True)
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
