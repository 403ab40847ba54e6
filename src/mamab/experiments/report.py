"""report.md: the figures, a table per figure, and the paper's qualitative claims checked."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mamab.algorithms.demab.spec import demab_radius_of
from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.registry import alpha_of, lookup
from mamab.errors import ConfigError
from mamab.experiments.aggregate import (
    CONFIG_COLUMNS,
    ConfigResult,
    field_text,
    setting_key,
    varying,
)
from mamab.stats import band_coverage, median_band, median_ci_ranks, percent_text

#: What ``mamab.plots.draw_all`` draws per figure (file name: '<figure>-<kind>').
FIGURE_KINDS = ("regret", "regret-no-demab", "bits", "frontier", "loss", "malicious")


@dataclass(frozen=True)
class Claim:
    text: str
    reproduced: bool | None  # None: the sweep lacks what the claim needs
    evidence: str


def _final(r: ConfigResult) -> float:
    """Median final regret per agent (runs without an honest survivor left out), as summary.csv."""
    return r.final_band().median


def _bits(r: ConfigResult) -> float:
    """Median over runs of the bits sent per agent, as summary.csv."""
    return r.per_agent("bits_sent")


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
        names = [p.label for i, p in enumerate(points) if i in best]
        left = [p.label for p in points if not p.band.runs]
        lines.append(f"- {panel_title(members, across)}: on the frontier (no other configuration has both "
                     f"lower median regret and fewer median bits): {', '.join(names) or 'none'}"
                     + (f"; left out, no run kept an honest agent alive: {', '.join(left)}" if left else ""))  # fmt: skip
    return lines


CLAIMS: dict[str, Callable[[list[ConfigResult]], list[Claim]]] = {
    "complete": complete_claims,
    "sparse": sparse_claims,
}


_PARAM_FIELDS = frozenset(f.name for f in dataclasses.fields(AlgorithmParams))


def applies(field: str, algorithm: str) -> bool:
    """Whether ``algorithm`` uses configuration field ``field``."""
    if field not in _PARAM_FIELDS:
        return True
    try:
        return field in lookup(algorithm).reads  # the AlgorithmParams fields its spec reads
    except ConfigError:  # a plugin not installed here: show everything
        return True


def figure_table(results: list[ConfigResult]) -> str:
    """One row per configuration; beyond (N, K), graph and algorithm, a column per varying field."""
    shown = ("experiment", "agents", "arms", "graph", "algorithm")
    extra = [k for k in varying(results, CONFIG_COLUMNS) if k not in shown]
    heads = "".join(f" {k} |" for k in extra)
    lines = [f"| (N, K) | graph |{heads} algorithm | median final regret / agent | band | coverage | runs | "
             "median bits sent / agent |",
             f"|---|---|{'---|' * len(extra)}---|---|---|---|---|---|"]  # fmt: skip
    for r in results:
        band = r.final_band()
        runs = f"{band.runs}/{r.final_regret.shape[0]}"
        cells_regret = (f"{band.median:.1f} | [{band.low:.1f}, {band.high:.1f}] | {percent_text(band.coverage)}"
                        if band.runs else "n/a | | ")  # fmt: skip
        c = r.config
        flat = r.flat
        cells = "".join(
            f" {field_text(flat[k]) if applies(k, c['algorithm']) else ''} |" for k in extra
        )
        lines.append(f"| ({c['agents']}, {c['arms']}) | {c['graph']} |{cells} {c['algorithm']} | {cells_regret} | "
                     f"{runs} | {_bits(r):.4g} |")  # fmt: skip
    return "\n".join(lines)


def statistics_note(results: list[ConfigResult]) -> str:
    """How the report's numbers are computed, with the coverage the bands actually achieve."""
    runs = sorted({r.final_regret.shape[0] for r in results})
    bands = []
    for n in runs:
        lo, hi = median_ci_ranks(n)
        bands.append(f"with {n} runs, ranks {lo} and {hi}, which cover the median with probability "
                     f"{percent_text(band_coverage(n, lo, hi))}")  # fmt: skip
    short = [r for r in results if r.final_band().runs < r.final_regret.shape[0]]
    note = (
        "Regret is the pseudo-regret of an average agent (mean over the honest agents that never "
        "crashed, within a run); lines and tables give its median over runs. Bands and brackets are "
        "the distribution-free order-statistic interval of the median"
        + (f" ({'; '.join(bands)}; exact, from the binomial)" if bands else "")
        + ": 95% or more from 6 runs on, less below (the whole range of 4 runs covers 87.5%); the "
        "tables give each band's coverage. Bits sent per agent: median over runs of a run's bits "
        "divided by its N agents."
    )
    if short:
        note += (f" {len(short)} configuration{'s' if len(short) > 1 else ''} had runs that kept no honest "
                 "agent alive to T: those runs are left out of the regret median and band (column runs).")  # fmt: skip
    return note


def render(
    results: list[ConfigResult], figures: dict[str, list[Path]], out: Path, title: str, notes: str
) -> str:
    parts = [f"# {title}", "", notes, "", statistics_note(results)]
    figures_in_order = list(dict.fromkeys(r.figure for r in results))
    for figure in figures_in_order:
        members = [r for r in results if r.figure == figure]
        parts += ["", f"## Figure: {figure}", ""]
        for key, paths in figures.items():
            if key.startswith(f"{figure}-") and key.removeprefix(f"{figure}-") in FIGURE_KINDS:
                shown = next((p for p in paths if p.suffix == ".png"), paths[0])
                parts.append(f"![{key}]({shown.relative_to(out).as_posix()})")
        parts += ["", figure_table(members), ""]
        if not varying(members, ("loss", "malicious")):
            parts += ["Regret–communication frontier:", "", *frontier_lines(members), ""]
        family = family_of(figure)
        rest = figures_in_order[figures_in_order.index(figure) + 1 :]
        if family is not None and all(family_of(f) != family for f in rest):
            parts += fidelity_section(family, [r for r in results if family_of(r.figure) == family])
    return "\n".join(parts) + "\n"


# -- fidelity to the paper's figures: readings, axes, and the claims under each reading --

#: The paper's UCB-index algorithms, whose alpha the paper states as 2 (Alg. 2).
PAPER_UCB = frozenset(
    {"lcc-ucb", "lcc-ucb-graph", "lcc-ucb-relay", "no-communication", "full-communication"}
)
#: The horizon of each family's figures in the journal version.
PAPER_HORIZON = {"complete": 100_000, "sparse": 50_000}


@dataclass(frozen=True)
class Axis:
    """One panel of a paper figure: its name, its top y tick and the step between ticks."""

    figure: str
    top: float
    step: float
    with_demab: bool


#: Only the axes of Figures 2-4 survive in the text version of the paper
#: (shared/paper/lcc-ucb-jmlr2022.txt): (family, N, K) -> the panels showing that setting.
PAPER_AXES: dict[tuple[str, int, int], tuple[Axis, ...]] = {
    ("complete", 10, 100): (Axis("Fig. 2a", 35_000, 5_000, True), Axis("Fig. 3a", 4_000, 500, False)),
    ("complete", 20, 100): (Axis("Fig. 2b", 30_000, 5_000, True), Axis("Fig. 3b", 3_500, 500, False)),
    ("complete", 10, 200): (Axis("Fig. 2c", 50_000, 10_000, True), Axis("Fig. 3c", 7_000, 1_000, False)),
    ("sparse", 100, 250): (Axis("Fig. 4a", 14_000, 2_000, True),),
    ("sparse", 150, 250): (Axis("Fig. 4b", 14_000, 2_000, True),),
    ("sparse", 100, 500): (Axis("Fig. 4c", 20_000, 2_500, True),),
}  # fmt: skip


def axis_fits(axis: Axis, band_top: float) -> bool:
    """Would matplotlib's defaults draw ``axis.top`` as the top tick for data reaching ``band_top``?

    With 5% margins the view ends at 1.05·(largest value) (the curves start at 0), and the top
    tick is the last multiple of the step inside the view: top ≤ 1.05·band_top < top + step.
    """
    return axis.top <= 1.05 * band_top < axis.top + axis.step


def family_of(figure: str) -> str | None:
    """'complete' for figures 'complete' and 'complete-…', likewise 'sparse'; else None."""
    for family in PAPER_HORIZON:
        if figure == family or figure.startswith(f"{family}-"):
            return family
    return None


@dataclass(frozen=True, order=True)
class Reading:
    """One way to read what the paper leaves open; None where the family has no such algorithm."""

    alpha: float | None  # alpha of the paper's UCB algorithms
    demab: tuple[float, str] | None  # (radius constant, best-arm rule)
    relay: str | None  # relay's K'

    def label(self) -> str:
        parts = []
        if self.alpha is not None:
            parts.append(f"alpha={self.alpha:g}")
        if self.demab is not None:
            parts.append(f"DEMAB c={self.demab[0]:g}, {self.demab[1]} best arm")
        if self.relay is not None:
            parts.append("relay K'=ceil(K/N)+" + ("N-1" if self.relay == "agents" else "K_G"))
        return "; ".join(parts) or "as run"


def _reading_parts(r: ConfigResult) -> tuple[str, object]:
    """(which part of a reading this configuration fixes, its value)."""
    algorithm = r.config["algorithm"]
    params = AlgorithmParams(**r.config["params"])
    if algorithm == "demab":
        return "demab", (demab_radius_of(params), params.demab_best_arm)
    if algorithm in PAPER_UCB:
        return "alpha", alpha_of(algorithm, params)
    return "other", None


def readings(results: list[ConfigResult]) -> list[Reading]:
    """Every combination of the alphas, DEMAB readings and relay K' readings present."""
    alphas = sorted({v for r in results for k, v in [_reading_parts(r)] if k == "alpha"})
    demabs = sorted({v for r in results for k, v in [_reading_parts(r)] if k == "demab"})
    relays = sorted(
        {AlgorithmParams(**r.config["params"]).relay_k_prime
         for r in results if r.config["algorithm"] == "lcc-ucb-relay"}
    )  # fmt: skip
    return [
        Reading(a, d, k)
        for a in alphas or [None]
        for d in demabs or [None]
        for k in relays or [None]
    ]


def under(results: list[ConfigResult], reading: Reading) -> list[ConfigResult]:
    """The configurations a reading keeps: one per algorithm and setting, as the paper drew them."""
    kept = []
    for r in results:
        part, value = _reading_parts(r)
        if part == "alpha" and value != reading.alpha:
            continue
        if part == "demab" and value != reading.demab:
            continue
        relay = AlgorithmParams(**r.config["params"]).relay_k_prime
        if r.config["algorithm"] == "lcc-ucb-relay" and relay != reading.relay:
            continue
        kept.append(r)
    return kept


@dataclass(frozen=True)
class AxisRow:
    """A paper panel against mamab's largest curve under one reading."""

    axis: Axis
    reading: Reading
    largest: str  # label of the largest curve
    median: float  # its median at T
    low: float
    high: float  # top of its band (the highest point it draws)
    fits: bool

    @property
    def ratio(self) -> float:
        """mamab's median at T over the paper's top tick."""
        return self.median / self.axis.top


def axis_rows(family: str, results: list[ConfigResult]) -> list[AxisRow]:
    """Per paper panel and reading, mamab's largest curve (median, band) against the top tick.

    A panel without DEMAB (Fig. 3) does not depend on the DEMAB reading: one row per other part.
    """
    rows = []
    for key, members in _by_panel(results).items():
        configs = list(members.values())
        for axis in PAPER_AXES.get((family, key[0], key[1]), ()):
            ways = readings(configs)
            if not axis.with_demab:
                ways = list(dict.fromkeys(Reading(w.alpha, None, w.relay) for w in ways))
            for reading in ways:
                shown = [r for r in under(configs, reading) if r.config["algorithm"] != "demab"
                         or axis.with_demab]  # fmt: skip
                if shown:
                    rows.append(_largest(axis, reading, shown))
    return rows


def _largest(axis: Axis, reading: Reading, shown: list[ConfigResult]) -> AxisRow:
    """The curve reaching highest (top of its band), its median and band at T."""
    bands = [median_band(r.regret) for r in shown]
    i = max(range(len(shown)), key=lambda j: float(bands[j][2].max()))
    med, lo, hi = bands[i]
    high = float(hi.max())
    return AxisRow(axis, reading, shown[i].config["algorithm"], float(med[-1]), float(lo[-1]), high,
                   axis_fits(axis, high))  # fmt: skip


def axis_table(rows: list[AxisRow]) -> str:
    lines = [
        "| paper panel | paper's top y tick | reading | mamab's largest curve | its median at T | band | "
        "median / top tick | axis fits |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.axis.figure} | {row.axis.top:,.0f} | {row.reading.label()} | {row.largest} | "
            f"{row.median:,.0f} | [{row.low:,.0f}, {row.high:,.0f}] | {row.ratio:.2f} | "
            f"{'yes' if row.fits else 'no'} |"
        )
    return "\n".join(lines)


def best_alpha(rows: list[AxisRow]) -> tuple[float, dict[float, list[AxisRow]]] | None:
    """The alpha whose curves fit most axes of the figures without DEMAB (ties: mean |log ratio|)."""
    by_alpha: dict[float, list[AxisRow]] = {}
    for row in rows:
        if not row.axis.with_demab and row.reading.alpha is not None:
            by_alpha.setdefault(row.reading.alpha, []).append(row)
    if not by_alpha:
        return None

    def score(alpha: float) -> tuple[int, float]:
        group = by_alpha[alpha]
        return -sum(r.fits for r in group), float(np.mean([abs(np.log(r.ratio)) for r in group]))

    return min(by_alpha, key=score), by_alpha


def alpha_verdict(rows: list[AxisRow]) -> str:
    """Which alpha matches the figures without DEMAB, with the numbers."""
    found = best_alpha(rows)
    if found is None:
        return "No figure without DEMAB to compare the exploration constant with."
    best, by_alpha = found

    def numbers(alpha: float) -> str:
        group = by_alpha[alpha]
        shown = ", ".join(
            f"{r.axis.figure} {r.largest} {r.median:,.0f} vs {r.axis.top:,.0f}" for r in group
        )
        return f"alpha = {alpha:g}: {sum(r.fits for r in group)} of {len(group)} axes fit ({shown})"

    others = "; ".join(numbers(a) for a in sorted(by_alpha) if a != best)
    return (f"**Exploration constant.** alpha = {best:g} matches the paper's figures best — "
            f"{numbers(best)}" + (f"; against {others}." if others else "."))  # fmt: skip


def paper_demab(reading_list: list[Reading]) -> tuple[float, str] | None:
    """The DEMAB reading closest to the paper's description: no shared best arm, largest radius."""
    demabs = sorted({r.demab for r in reading_list if r.demab is not None},
                    key=lambda d: (d[1] == "own", d[0]))  # fmt: skip
    return demabs[-1] if demabs else None


def claims_by_reading(
    family: str, results: list[ConfigResult]
) -> list[tuple[Reading, list[Claim]]]:
    """The family's claims checked on the configurations of each reading."""
    return [(reading, CLAIMS[family](under(results, reading))) for reading in readings(results)]


def claims_table(checked: list[tuple[Reading, list[Claim]]]) -> list[str]:
    """A matrix (claims × readings) of verdicts, then each claim's evidence, grouped by reading."""
    marks = {True: "✅", False: "❌", None: "—"}
    heads = [f"({i + 1})" for i in range(len(checked))]
    lines = [f"Readings: {'; '.join(f'{h} {r.label()}' for h, (r, _) in zip(heads, checked, strict=True))}.", "",
             f"| claim of the paper | {' | '.join(heads)} |", f"|---|{'---|' * len(heads)}"]  # fmt: skip
    texts = list(dict.fromkeys(c.text for _, claims in checked for c in claims))
    for text in texts:
        cells = []
        for _, claims in checked:
            claim = next((c for c in claims if c.text == text), None)
            cells.append(marks[claim.reproduced] if claim else "—")
        lines.append(f"| {text} | {' | '.join(cells)} |")
    lines += [
        "",
        "Evidence (median final regret per agent; readings with the same numbers together):",
        "",
    ]
    for text in texts:
        groups: dict[tuple, list[str]] = {}
        for head, (_, claims) in zip(heads, checked, strict=True):
            claim = next((c for c in claims if c.text == text), None)
            if claim is not None:
                groups.setdefault((claim.reproduced, claim.evidence), []).append(head)
        for (verdict, evidence), which in groups.items():
            lines.append(f"- {marks[verdict]} {text} under {', '.join(which)}: {evidence}")
    return lines


def _holds(verdicts: set[bool | None]) -> str:
    return {frozenset({True}): "holds", frozenset({False}): "does not hold"}.get(
        frozenset(verdicts), "holds under some readings only"
    )


def relay_verdict(checked: list[tuple[Reading, list[Claim]]]) -> list[str]:
    """'GRAPH beats relay' under each relay K' reading (whatever the other parts)."""
    text = "LCC-UCB-GRAPH beats LCC-UCB with relaying"
    relays = sorted({r.relay for r, _ in checked if r.relay is not None})
    if len(relays) < 2:
        return []
    names = {"agents": "K' = ceil(K/N) + N - 1", "degree": "K' = ceil(K/N) + K_G"}
    found = []
    for relay in relays:
        verdicts = {
            c.reproduced for r, cs in checked if r.relay == relay for c in cs if c.text == text
        }
        found.append(f"under {names.get(relay, relay)} it {_holds(verdicts)}")
    return ["", f"**Relay's K'.** The paper does not state K' for relaying; \"{text}\": "
            f"{'; '.join(found)}."]  # fmt: skip


def fidelity_section(family: str, results: list[ConfigResult]) -> list[str]:
    """report.md's comparison of one family (complete or sparse) with the paper's figures."""
    title = {
        "complete": "complete graph (paper Figures 2–3)",
        "sparse": "sparse graphs (paper Figure 4)",
    }
    parts = ["", f"## Fidelity: {title[family]}", ""]
    horizons = {r.config["horizon"] for r in results}
    if horizons == {PAPER_HORIZON[family]}:
        rows = axis_rows(family, results)
        parts += [
            "The comparison made: only the axes of the paper's figures survive in its text version, "
            "so each paper panel's top y tick is set against the top of mamab's largest curve in "
            "that panel (the median over runs and its band at T). With matplotlib's defaults "
            "(5% margins, curves from 0) the top tick is the last multiple of the tick step below "
            "1.05 × the highest point drawn: 'axis fits' says whether mamab's band top would give "
            "the paper's top tick.",
            "",
            axis_table(rows),
            "",
        ]
        if family == "complete":
            parts += [alpha_verdict(rows), ""]
    else:
        parts += [f"The horizon ({', '.join(map(str, sorted(horizons)))}) is not the paper's "
                  f"({PAPER_HORIZON[family]}): no comparison with the paper's axes.", ""]  # fmt: skip
    checked = claims_by_reading(family, results)
    parts += claims_table(checked)
    parts += relay_verdict(checked)
    paper = paper_demab([r for r, _ in checked])
    if paper is not None:
        described = [(r, cs) for r, cs in checked if r.demab == paper]
        word = _holds({c.reproduced for _, cs in described for c in cs if "DEMAB" in c.text})
        parts += ["", f"**DEMAB.** The reading closest to the paper's description (\"the agents do "
                  f"not share the knowledge of the best arm\", regret above no communication) is "
                  f"radius constant c = {paper[0]:g} with the {paper[1]} best-arm rule; under it the "
                  f"claim \"DEMAB has higher regret than no communication\" {word}. Other DEMAB "
                  f"readings in the table are documented variants (docs/algorithms/demab.md)."]  # fmt: skip
    return parts
