"""report.md: the figures, a table per figure, and the paper's qualitative claims checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mamab.experiments.aggregate import (
    CONFIG_COLUMNS,
    ConfigResult,
    field_text,
    setting_key,
    varying,
)
from mamab.stats import median_band, median_ci_ranks


@dataclass(frozen=True)
class Claim:
    text: str
    reproduced: bool | None  # None: the sweep lacks what the claim needs
    evidence: str


def _final(r: ConfigResult) -> float:
    return float(np.median(r.final_mean()))


def _bits(r: ConfigResult) -> float:
    return float(np.median(r.counters[1].mean(axis=1)))


def _panel_key(r: ConfigResult) -> tuple:
    """(N, K, the rest of the setting): claims compare algorithms within one setting only."""
    rest = tuple(item for item in setting_key(r) if item[0] not in ("agents", "arms"))
    return r.config["agents"], r.config["arms"], rest


def _by_panel(results: list[ConfigResult]) -> dict[tuple, dict[str, ConfigResult]]:
    """Per setting, its configurations by algorithm name.

    An algorithm with several configurations in one setting (other parameters) is keyed by
    '<name> [<config id>]' for each, so that no claim silently picks one of them.
    """
    grouped: dict[tuple, dict[str, ConfigResult]] = {}
    for r in results:
        grouped.setdefault(_panel_key(r), {}).setdefault(r.config_id, r)
    panels: dict[tuple, dict[str, ConfigResult]] = {}
    for key, members in grouped.items():
        names = [r.config["algorithm"] for r in members.values()]
        panels[key] = {
            (name if names.count(name) == 1 else f"{name} [{r.config_id}]"): r
            for name, r in zip(names, members.values(), strict=True)
        }
    return panels


def _nk(key: tuple) -> str:
    return f"({key[0]}, {key[1]})"


def _less(results, better: str, worse: str, text: str) -> Claim:
    """``better`` has lower median final regret than ``worse`` in every panel holding both."""
    pairs = [
        (key, p[better], p[worse])
        for key, p in _by_panel(results).items()
        if better in p and worse in p
    ]
    if not pairs:
        return Claim(text, None, f"needs {better} and {worse}")
    evidence = "; ".join(
        f"(N,K)={_nk(key)}: {_final(a):.0f} vs {_final(b):.0f}" for key, a, b in pairs
    )
    return Claim(text, all(_final(a) < _final(b) for _, a, b in pairs), evidence)


def complete_claims(results: list[ConfigResult]) -> list[Claim]:
    claims = [
        _less(
            results, "lcc-ucb", "no-communication", "LCC-UCB has lower regret than no communication"
        ),
        _less(
            results,
            "full-communication",
            "lcc-ucb",
            "Full communication (every step) has lower regret than LCC-UCB",
        ),
        _less(
            results, "no-communication", "demab", "DEMAB has higher regret than no communication"
        ),
    ]
    panels = _by_panel(results)
    ratios = {key: _final(p["lcc-ucb"]) / _final(p["full-communication"])
              for key, p in panels.items() if "lcc-ucb" in p and "full-communication" in p}  # fmt: skip
    small = {key: v for key, v in ratios.items() if key[1] / key[0] >= 10}
    large = {key: v for key, v in ratios.items() if key[1] / key[0] < 10}
    text = "LCC-UCB is closer to full communication when N ≪ K (K/N ≥ 10) than when N is larger"
    if small and large:
        evidence = ", ".join(
            f"(N,K)={_nk(k)}: LCC/full = {v:.2f}" for k, v in sorted(ratios.items(), key=str)
        )
        claims.append(Claim(text, max(small.values()) < min(large.values()), evidence))
    else:
        claims.append(Claim(text, None, "needs panels with K/N ≥ 10 and K/N < 10"))
    bits = [(key, _bits(p["lcc-ucb"]), _bits(p["full-communication"]))
            for key, p in panels.items() if "lcc-ucb" in p and "full-communication" in p]  # fmt: skip
    text = "LCC-UCB sends at least 1000× fewer bits than full communication"
    if bits:
        evidence = "; ".join(f"(N,K)={_nk(k)}: {a:.0f} vs {b:.3g} bits" for k, a, b in bits)
        claims.append(Claim(text, all(1000 * a <= b for _, a, b in bits), evidence))
    return claims


def sparse_claims(results: list[ConfigResult]) -> list[Claim]:
    claims = [
        _less(results, "lcc-ucb-graph", "lcc-ucb-relay", "LCC-UCB-GRAPH beats LCC-UCB with relaying"),
        _less(results, "lcc-ucb-graph", "no-communication", "LCC-UCB-GRAPH beats no communication"),
        _less(results, "lcc-ucb-graph", "full-communication",
              "LCC-UCB-GRAPH ends below full communication (neighbours only) at T"),
        _less(results, "no-communication", "demab", "DEMAB has higher regret than no communication"),
    ]  # fmt: skip
    panels = _by_panel(results)
    same_k = [(a, b) for a in panels for b in panels if a[1:] == b[1:] and a[0] < b[0]]
    text = "LCC-UCB-GRAPH's regret is similar (within 25%) for N=100 and N=150 at the same K"
    graph = [
        (a, b) for a, b in same_k if "lcc-ucb-graph" in panels[a] and "lcc-ucb-graph" in panels[b]
    ]
    if graph:
        vals = [
            (a, b, _final(panels[a]["lcc-ucb-graph"]), _final(panels[b]["lcc-ucb-graph"]))
            for a, b in graph
        ]
        evidence = "; ".join(f"{_nk(a)}: {x:.0f}, {_nk(b)}: {y:.0f}" for a, b, x, y in vals)
        claims.append(
            Claim(text, all(abs(x - y) <= 0.25 * max(x, y) for *_, x, y in vals), evidence)
        )
    same_n = [
        (a, b) for a in panels for b in panels if a[0] == b[0] and a[2] == b[2] and a[1] < b[1]
    ]
    text = "Doubling K raises LCC-UCB-GRAPH's regret by a smaller factor than full or no communication's"
    others = ("full-communication", "no-communication")
    rows = []
    for a, b in same_n:
        names = ("lcc-ucb-graph", *others)
        if all(alg in panels[a] and alg in panels[b] for alg in names):
            rows.append({alg: _final(panels[b][alg]) / _final(panels[a][alg]) for alg in names})
    if rows:
        evidence = "; ".join(
            ", ".join(f"{alg} ×{g:.2f}" for alg, g in growth.items()) for growth in rows
        )
        claims.append(
            Claim(text, all(g["lcc-ucb-graph"] < min(g[o] for o in others) for g in rows), evidence)
        )
    return claims


def frontier_lines(results: list[ConfigResult]) -> list[str]:
    """Per panel, the configurations on the regret–communication frontier (a finding, not a claim)."""
    from mamab.plots import frontier_points, panel_title, panels, pareto

    lines = []
    grouped = panels(results)
    across = varying([m[0] for m in grouped.values()], tuple(k for k, _ in next(iter(grouped), ())))
    for members in grouped.values():
        points = frontier_points(members)
        best = pareto(points)
        names = [label for i, (label, *_) in enumerate(points) if i in best]
        lines.append(f"- {panel_title(members, across)}: on the frontier (no other configuration has both "
                     f"lower median regret and fewer median bits): {', '.join(names)}")  # fmt: skip
    return lines


CLAIMS: dict[str, Callable[[list[ConfigResult]], list[Claim]]] = {
    "complete": complete_claims,
    "sparse": sparse_claims,
}


def figure_table(results: list[ConfigResult]) -> str:
    """One row per configuration; beyond (N, K), graph and algorithm, a column per varying field."""
    shown = ("experiment", "agents", "arms", "graph", "algorithm")
    extra = [k for k in varying(results, CONFIG_COLUMNS) if k not in shown]
    heads = "".join(f" {k} |" for k in extra)
    lines = [f"| (N, K) | graph |{heads} algorithm | median final regret / agent | 95% band | median bits sent / agent |",
             f"|---|---|{'---|' * len(extra)}---|---|---|---|"]  # fmt: skip
    for r in results:
        med, lo, hi = median_band(r.final_mean())
        c = r.config
        flat = r.flat
        cells = "".join(f" {field_text(flat[k])} |" for k in extra)
        lines.append(f"| ({c['agents']}, {c['arms']}) | {c['graph']} |{cells} {c['algorithm']} | {med:.1f} | "
                     f"[{lo:.1f}, {hi:.1f}] | {_bits(r):.4g} |")  # fmt: skip
    return "\n".join(lines)


def render(
    results: list[ConfigResult], figures: dict[str, list[Path]], out: Path, title: str, notes: str
) -> str:
    runs = results[0].final_regret.shape[0] if results else 0
    lo, hi = median_ci_ranks(runs) if runs else (0, 0)
    parts = [
        f"# {title}",
        "",
        notes,
        "",
        f"Regret is the pseudo-regret of an average agent (mean over agents within a run). Lines are the "
        f"median over {runs} runs; bands and brackets are the distribution-free 95% confidence interval "
        f"of the median from order statistics (ranks {lo} and {hi} of {runs}).",
    ]
    verdicts = {True: "✅ reproduced", False: "❌ not reproduced", None: "— not checked"}
    for figure in dict.fromkeys(r.figure for r in results):
        members = [r for r in results if r.figure == figure]
        parts += ["", f"## Figure: {figure}", ""]
        for key, paths in figures.items():
            if key.startswith(f"{figure}-"):
                png = next(p for p in paths if p.suffix == ".png")
                parts.append(f"![{key}]({png.relative_to(out).as_posix()})")
        parts += ["", figure_table(members), ""]
        if len({r.config.get("loss", 0.0) for r in members}) == 1:
            parts += ["Regret–communication frontier:", "", *frontier_lines(members), ""]
        claims = CLAIMS.get(figure, lambda _: [])(members)
        if claims:
            parts += ["Claims of the paper, checked on these numbers:", ""]
            parts += [f"- {verdicts[c.reproduced]}: {c.text} — {c.evidence}" for c in claims]
    return "\n".join(parts) + "\n"
