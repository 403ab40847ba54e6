"""report.md says no more than its runs show (issue 22): verdicts from bands, with their runs;
DEMAB's fitted reading kept apart from the claim; relaying that never talked; alpha per family
from the data; the paper cited by title, venue and arXiv number. Small hand-made results, no
simulation: each final regret and bit count below is given run by run."""

from types import SimpleNamespace

import numpy as np
import pytest

from mamab import AlgorithmParams, Config
from mamab.experiments.aggregate import ConfigResult
from mamab.experiments.report import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    MARKS,
    PAPER_CITATION,
    Reading,
    alphas_by_family,
    claims_by_reading,
    complete_claims,
    fidelity_section,
    render,
    silent_relays,
    sparse_claims,
)
from mamab.experiments.reproduce import _paper_notes
from mamab.experiments.tasks import config_id
from mamab.result import COUNTERS
from mamab.stats import median_summary

#: Ten runs: the 95% band of the median is ranks 2 and 9 (97.9%), here 0.85·m and 1.15·m.
SPREAD = np.array([-0.2, -0.15, -0.1, -0.05, -0.01, 0.01, 0.05, 0.1, 0.15, 0.2])


def result(
    algorithm: str,
    n: int,
    k: int,
    median: float,
    *,
    figure: str = "complete",
    graph: str = "complete",
    horizon: int = 20_000,
    bits: float = 100.0,
    runs: np.ndarray = SPREAD,
    late: bool = False,
    **params,
) -> ConfigResult:
    """One configuration whose run r ends at regret median·(1 + runs[r]) per agent and sends
    ``bits`` bits per agent in every run, half of them by T/2 (``late``: all at T)."""
    config = Config(
        algorithm, n, k, horizon, runs=len(runs), graph=graph, params=AlgorithmParams(**params)
    )
    end = median * (1 + np.asarray(runs, dtype=float))
    counters = np.zeros((len(COUNTERS), len(runs), n))
    counters[COUNTERS.index("bits_sent")] = bits
    return ConfigResult(
        experiment=figure,
        figure=figure,
        config_id=config_id(config),
        config=config.to_dict(),
        grid=np.array([1, horizon // 2, horizon]),
        regret=np.outer(end, [0.0, 0.5, 1.0]),
        bits=np.outer(np.full(len(runs), bits), [0.0, 0.0 if late else 0.5, 1.0]),
        final_regret=np.repeat(end[:, None], n, axis=1),
        counters=counters,
        diameter=np.ones(len(runs), dtype=np.int64),
        max_degree=np.full(len(runs), n - 1, dtype=np.int64),
        crash=np.full((len(runs), n), horizon + 1),
    )


def verdict(claims, start: str) -> str:
    return next(c for c in claims if c.text.startswith(start)).verdict


# -- verdicts from bands --


def test_overlapping_bands_are_inconclusive_not_a_failure():
    """The issue's case: DEMAB (c = 2) 2,850 against no communication 3,022 is not 'DEMAB below
    no communication' when the bands overlap; the old report said ❌ from the medians alone."""
    results = [result("no-communication", 20, 100, 3022), result("demab", 20, 100, 2850)]
    a, b = (median_summary(r.final_mean()) for r in reversed(results))
    assert a.median < b.median and a.high > b.low  # medians in one order, bands overlapping
    claims = complete_claims(results)
    assert verdict(claims, "DEMAB has higher") == INCONCLUSIVE
    demab = next(c for c in claims if c.text.startswith("DEMAB"))
    assert demab.reproduced is None and demab.runs == (10, 10)
    assert "2,850 [" in demab.evidence and "(bands overlap)" in demab.evidence


def test_bands_apart_decide_in_either_direction():
    apart = [
        result("no-communication", 20, 100, 3000),
        result("demab", 20, 100, 6000),
        result("lcc-ucb", 20, 100, 5000),
    ]
    claims = complete_claims(apart)
    assert verdict(claims, "DEMAB has higher") == HOLDS
    assert verdict(claims, "LCC-UCB has lower") == FAILS


def test_one_contradicting_setting_fails_the_claim_one_overlap_leaves_it_open():
    def claim(second_demab: float) -> str:
        results = [
            result("no-communication", 10, 100, 3000),
            result("demab", 10, 100, 6000),
            result("no-communication", 20, 100, 3000),
            result("demab", 20, 100, second_demab),
        ]
        return verdict(complete_claims(results), "DEMAB has higher")

    assert claim(9000) == HOLDS
    assert claim(3100) == INCONCLUSIVE
    assert claim(1000) == FAILS


def test_ratio_and_similarity_claims_use_the_bands():
    """'Closer to full when K/N ≥ 10' and 'within 25% for N = 100 and 150' are judged on the
    ranges the bands allow: ratios whose ranges overlap are inconclusive."""

    def closer(full_small: float, full_large: float) -> str:
        results = [
            result("lcc-ucb", 10, 100, 1000),
            result("full-communication", 10, 100, full_small),
            result("lcc-ucb", 20, 100, 1000),
            result("full-communication", 20, 100, full_large),
        ]
        return verdict(complete_claims(results), "LCC-UCB is closer")

    assert closer(900, 300) == HOLDS  # LCC/full 1.1 against 3.3
    assert closer(900, 800) == INCONCLUSIVE  # 1.1 against 1.25: the ranges overlap
    assert closer(300, 900) == FAILS

    def similar(second: float) -> str:
        results = [
            result(
                "lcc-ucb-graph",
                100,
                250,
                1000,
                graph="erdos-renyi",
                figure="sparse",
                runs=SPREAD / 10,
            ),
            result(
                "lcc-ucb-graph",
                150,
                250,
                second,
                graph="erdos-renyi",
                figure="sparse",
                runs=SPREAD / 10,
            ),
        ]
        return verdict(sparse_claims(results), "LCC-UCB-GRAPH's regret is similar")

    assert similar(1100) == HOLDS
    assert similar(1320) == INCONCLUSIVE  # 1/1.32 = 0.758: within 25% only for some values
    assert similar(2000) == FAILS


def test_report_matrix_has_three_marks_the_legend_and_the_runs():
    results = [
        result("no-communication", 20, 100, 3022),
        result("demab", 20, 100, 2850),
        result("lcc-ucb", 20, 100, 1000),
    ]
    text = "\n".join(fidelity_section("complete", results))
    row = next(line for line in text.splitlines() if line.startswith("| DEMAB has higher"))
    assert row.split("|")[2].strip() == f"{MARKS[INCONCLUSIVE]} n=10"
    assert f"{MARKS[INCONCLUSIVE]} inconclusive" in text  # the word in the legend
    assert "rests on 10 runs per median" in text


def test_runs_left_out_show_in_the_verdict():
    """A median over 8 of 10 runs (no honest survivor in 2) says n=8–10."""
    no_comm = result("no-communication", 10, 100, 3000)
    demab = result("demab", 10, 100, 9000)
    demab.crash[:2] = 0  # every agent of runs 0 and 1 dead from the start
    claim = next(c for c in complete_claims([no_comm, demab]) if c.text.startswith("DEMAB"))
    assert claim.runs == (10, 8) and claim.runs_text == "n=8–10"


# -- DEMAB: the fitted reading apart --


def test_demab_fit_is_called_a_fit_and_the_claim_is_judged_without_it():
    results = [
        result("no-communication", 10, 100, 3000),
        result("lcc-ucb", 10, 100, 1500),
        result("demab", 10, 100, 2000),
        result("demab", 10, 100, 30_000, demab_radius=16.0, demab_best_arm="own"),
    ]
    text = "\n".join(fidelity_section("complete", results))
    assert "closest to the paper's description" not in text
    claim_line = next(line for line in text.splitlines() if line.startswith("**DEMAB.**"))
    assert (
        "not fitted" in claim_line
        and "c = 2 with the shared best-arm rule: it does not hold" in claim_line
    )
    assert "c = 16" not in claim_line  # the fit's verdict is not the claim's
    fit = text.split(claim_line)[1]
    assert (
        "c = 16 with the own best-arm rule is a fit" in fit
        and "tests the fit, not the claim" in fit
    )


# -- relaying that sent nothing before T --


def sparse(late: bool) -> list[ConfigResult]:
    kw = dict(graph="erdos-renyi", figure="sparse", horizon=10_000)
    return [
        result("lcc-ucb-graph", 100, 250, 1000, **kw),
        result("lcc-ucb-relay", 100, 250, 1500, bits=15_000, late=late, **kw),
        result("lcc-ucb-relay", 100, 250, 1200, relay_k_prime="degree", **kw),
        result("no-communication", 100, 250, 1600, bits=0.0, **kw),
    ]


def test_a_relay_that_talked_only_at_t_is_called_no_communication():
    """Quick's relay (K' = ceil(K/N) + N - 1) sends its first bits at T: 'beats relaying' then
    compares with no communication, and the report says so (detected from the bits curves)."""
    assert silent_relays(sparse(late=False)) == []
    assert silent_relays(sparse(late=True)) == [
        "K' = ceil(K/N) + N - 1 at (N, K) = (100, 250): no bits before step 5,000 in 10 of 10 runs"
    ]
    quiet = "\n".join(fidelity_section("sparse", sparse(late=True)))
    assert "effectively no communication" in quiet and "T = 10,000" in quiet
    assert "effectively no communication" not in "\n".join(
        fidelity_section("sparse", sparse(late=False))
    )


# -- alpha per family, from the data --


def test_alpha_per_family_comes_from_the_configurations():
    complete = [
        result("lcc-ucb", 10, 100, 1000),
        result("lcc-ucb", 10, 100, 800, alpha=1.0, figure="complete-alpha1"),
    ]
    results = complete + sparse(late=False)
    assert alphas_by_family(results) == {"complete": [1.0, 2.0], "sparse": [2.0]}
    assert "in this family: alpha = 2 only." in "\n".join(
        fidelity_section("sparse", sparse(late=False))
    )
    spec = SimpleNamespace(name="paper-quick", seed=0, runs=10)
    outcome = SimpleNamespace(results=results, tasks_run=1, tasks_skipped=0, seconds=1.0)
    notes = _paper_notes(spec, outcome, None)
    assert "complete graph: alpha = 1 and 2; sparse graphs: alpha = 2 only" in notes


# -- the paper cited so a reader can find it --


def test_report_cites_the_paper_by_title_venue_and_arxiv():
    results = [result("lcc-ucb", 10, 100, 1000)]
    spec = SimpleNamespace(name="paper-quick", seed=0, runs=10)
    outcome = SimpleNamespace(results=results, tasks_run=1, tasks_skipped=0, seconds=1.0)
    notes = _paper_notes(spec, outcome, None)
    text = render(results, {}, __import__("pathlib").Path("."), "title", notes)
    assert "shared/paper" not in text
    for part in (
        "Multi-Agent Multi-Armed Bandits with Limited Communication",
        "Journal of Machine Learning Research 23(212)",
        "arXiv:2102.08462",
    ):
        assert part in PAPER_CITATION and part in text


@pytest.mark.parametrize("reading", [Reading(2.0, (16.0, "own"), None)])
def test_claims_by_reading_keep_one_demab_per_reading(reading):
    results = [
        result("no-communication", 10, 100, 3000),
        result("demab", 10, 100, 2000),
        result("demab", 10, 100, 30_000, demab_radius=16.0, demab_best_arm="own"),
    ]
    checked = dict(claims_by_reading("complete", results))
    assert verdict(checked[reading], "DEMAB has higher") == HOLDS
