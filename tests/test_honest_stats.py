"""Statistics that say what they are (issue 20, items 5, 6, 8, 9): how many runs each median
uses, the coverage a band actually achieves, one definition of bits per agent, and no NaN in
the tables or on the frontier; the tables carry a schema version."""

import contextlib
import csv
import io
import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats as sps

from mamab.cli import main
from mamab.experiments import aggregate, load_spec, report
from mamab.experiments.aggregate import read_curves
from mamab.experiments.report import figure_table, frontier_lines
from mamab.experiments.runner import run_sweep
from mamab.plots import pareto
from mamab.stats import median_ci_ranks

# names that exist since issue 20, looked up per test so that each test fails by itself on
# older code (rather than the whole file failing to import)


def band_coverage(n, lo, hi):
    from mamab.stats import band_coverage as coverage

    return coverage(n, lo, hi)


def median_summary(x):
    from mamab.stats import median_summary as summary

    return summary(x)


def bands_note(results):
    from mamab.plots import bands_note as note

    return note(results)


def statistics_note(results):
    return report.statistics_note(results)


# The configuration of the issue: run 2 keeps no honest agent alive to T (crash_rate 0.0003);
# crash_rate 0.01 kills every agent of every run.
RUN = [
    "run",
    "--algorithm",
    "lcc-ucb",
    "-N",
    "8",
    "-K",
    "40",
    "-T",
    "3000",
    "--runs",
    "4",
    "--malicious",
    "2",
    "--crash-rate",
    "0.0003",
    "--seed",
    "1",
]
SPEC = """
name = "drop"
seed = 1
runs = 4
runs_per_task = 4
[[experiments]]
name = "e"
algorithms = ["lcc-ucb", "no-communication"]
agents = 8
arms = 40
horizon = 3000
malicious = 2
crash_rate = [0.0003, 0.01]
"""


def invoke(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


@pytest.fixture(scope="module")
def run_out(tmp_path_factory):
    """`mamab run` of the issue's configuration: (stdout, stderr, summary.json), captured by
    hand (capsys is per test)."""
    out = tmp_path_factory.mktemp("run")
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        pytest.raises(SystemExit) as done,
    ):
        main([*RUN, "--out", str(out)])
    assert done.value.code == 0, stderr.getvalue()
    return stdout.getvalue(), stderr.getvalue(), json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp("sweep")
    (base / "s.toml").write_text(SPEC)
    run_sweep(load_spec(base / "s.toml"), base / "out", jobs=1, progress=False)
    return base / "out"


def summary_rows(out):
    with (out / "summary.csv").open() as handle:
        return list(csv.DictReader(handle))


# -- item 5: runs left out are counted and announced ---------------------------------------------


def test_run_counts_the_runs_its_regret_uses_and_warns(run_out):
    out, err, summary = run_out
    stats = summary["statistics"]
    assert stats["final_regret_runs"] == 3 and stats["runs"] == 4 and stats["runs_left_out"] == [2]
    assert "3/4" in out.splitlines()[1]
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "1 of 4 runs (run 2)" in warning[0] and "other 3" in warning[0]


def test_sweep_summary_counts_the_runs_each_median_uses(sweep_dir):
    rows = summary_rows(sweep_dir)
    assert [r["final_regret_runs"] for r in rows] == ["3", "0", "3", "0"]
    assert all(r["runs"] == "4" for r in rows)


def test_sweep_table_and_report_say_runs_were_left_out(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(SPEC)
    code, out, err = invoke(
        ["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")], capsys
    )
    assert code == 0, err
    assert "3/4" in out and "0/4" in out
    assert len([line for line in err.splitlines() if "warning" in line]) == 1
    results = read_curves(tmp_path / "o")
    table = figure_table(results)
    assert "3/4" in table and "0/4" in table and "nan" not in table.lower()
    assert "left out" in statistics_note(results)


# -- item 6: the coverage a band achieves, exact and checked -------------------------------------


@pytest.mark.parametrize(
    ("n", "coverage"), [(1, 0.0), (2, 0.5), (3, 0.75), (4, 0.875), (5, 0.9375)]
)
def test_whole_range_of_few_runs_covers_less_than_95(n, coverage):
    lo, hi = median_ci_ranks(n)
    assert (lo, hi) == (1, n)
    assert band_coverage(n, lo, hi) == coverage


@pytest.mark.parametrize("n", [6, 10, 17, 30, 31, 100])
def test_coverage_is_the_binomial_sum(n):
    lo, hi = median_ci_ranks(n)
    exact = sps.binom.cdf(hi - 1, n, 0.5) - sps.binom.cdf(lo - 1, n, 0.5)  # P(lo <= Bin < hi)
    assert band_coverage(n, lo, hi) == pytest.approx(exact, abs=1e-12)
    assert band_coverage(n, lo, hi) >= 0.95


@pytest.mark.parametrize("n", [4, 30])
def test_order_statistic_band_covers_the_true_median_as_stated(n):
    """Monte Carlo, fixed seed: 40 000 samples of n exponentials (true median ln 2); the share of
    bands [x_(l), x_(n+1-l)] holding ln 2 is within 0.006 of the exact coverage (0.9572 for ranks
    10 and 21 of 30, 0.875 for the range of 4); the standard error is 0.0010 and 0.0017, so the
    tolerance is over 3.5 of them."""
    lo, hi = median_ci_ranks(n)
    assert n != 30 or (lo, hi) == (10, 21)
    x = np.sort(np.random.default_rng(20).exponential(size=(40_000, n)), axis=1)
    covered = (x[:, lo - 1] <= math.log(2)) & (math.log(2) <= x[:, hi - 1])
    assert abs(covered.mean() - band_coverage(n, lo, hi)) < 0.006


def test_median_summary_leaves_out_nan_and_labels_the_coverage():
    band = median_summary(np.array([3.0, np.nan, 1.0, 2.0, 5.0]))
    assert (band.median, band.low, band.high, band.runs) == (2.5, 1.0, 5.0, 4)
    assert band.label == "87.5% (n=4)"
    assert median_summary(np.array([np.nan])).runs == 0


def test_no_label_claims_95_percent_for_four_runs(run_out, sweep_dir, capsys):
    out, _, summary = run_out
    assert "95%" not in out and "75%" in out.splitlines()[1]  # 3 runs used: the range covers 75%
    assert summary["statistics"]["final_regret_band_coverage"] == 0.75
    assert [r["final_regret_ci_coverage"] for r in summary_rows(sweep_dir)] == [
        "0.75",
        "",
        "0.75",
        "",
    ]
    code, text, err = invoke(["frontier", str(sweep_dir)], capsys)
    assert code == 0, err
    assert "95%" not in text and "75%" in text
    results = read_curves(sweep_dir)
    assert "75% with 3 runs" in bands_note(results)
    assert "87.5%" in statistics_note(results) and "95% confidence" not in statistics_note(results)


# -- item 8: one definition of bits per agent ----------------------------------------------------


def test_bits_per_agent_is_one_statistic_in_run_and_sweep(run_out, sweep_dir):
    """Median over runs of the per-run mean over agents (not the median over runs × agents)."""
    out, _, summary = run_out
    row = next(
        r
        for r in summary_rows(sweep_dir)
        if r["algorithm"] == "lcc-ucb" and r["crash_rate"] == "0.0003"
    )
    per_run = [np.mean(p["bits_sent_per_agent"]) for p in summary["per_run"]]
    assert summary["statistics"]["bits_sent_per_agent_median"] == np.median(per_run) == 139.125
    assert float(row["bits_sent_per_agent_median"]) == 139.125
    assert out.splitlines()[1].split()[-1] == "139"  # was 126: the median over runs × agents


# -- item 9: no NaN in the tables, none on the frontier ------------------------------------------


def test_no_nan_text_in_summary_and_null_in_curves(sweep_dir):
    text = (sweep_dir / "summary.csv").read_text()
    assert "nan" not in text.lower()
    dead = [r for r in summary_rows(sweep_dir) if r["crash_rate"] == "0.01"]
    assert dead and all(r["final_regret_median"] == r["final_regret_ci_low"] == "" for r in dead)
    regret = pq.read_table(sweep_dir / "curves.parquet").column("regret")
    assert regret.null_count > 0
    values = regret.drop_null().to_numpy()
    assert not np.isnan(values).any()


def test_configurations_without_a_value_are_not_on_the_frontier(sweep_dir, capsys):
    nan = float("nan")
    assert pareto([("dead", 0.0, nan, nan, nan), ("b", 5.0, 4.0, 4.0, 4.0)]) == {1}
    assert pareto([("dead", nan, nan, nan, nan)]) == set()
    code, out, err = invoke(["frontier", str(sweep_dir)], capsys)
    assert code == 0, err
    dead = out[out.index("crash rate 0.01") :].splitlines()[2:4]
    assert len(dead) == 2 and all("yes" not in line and "left out" in line for line in dead)
    lines = frontier_lines(read_curves(sweep_dir))
    assert "left out" in lines[1] and "none" in lines[1]


# -- the tables' schema version ------------------------------------------------------------------


def test_tables_record_their_schema(sweep_dir):
    assert (
        json.loads((sweep_dir / "metadata.json").read_text())["table_schema"]
        == aggregate.TABLE_SCHEMA
        == 2
    )
    for name in ("curves", "finals"):
        meta = pq.read_schema(sweep_dir / f"{name}.parquet").metadata
        assert meta[b"mamab.table_schema"] == b"2"


def test_old_tables_are_read_and_a_rerun_rewrites_them(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(SPEC)
    out = tmp_path / "o"
    run_sweep(load_spec(tmp_path / "s.toml"), out, jobs=1, progress=False)
    meta = json.loads((out / "metadata.json").read_text())
    del meta["table_schema"]  # as written before schema versions
    (out / "metadata.json").write_text(json.dumps(meta))
    code, _, err = invoke(["frontier", str(out)], capsys)
    assert code == 0, err
    outcome = run_sweep(load_spec(tmp_path / "s.toml"), out, jobs=1, progress=False)
    assert outcome.tasks_run == 0  # the task files are reused
    assert json.loads((out / "metadata.json").read_text())["table_schema"] == 2


def test_tables_of_an_unknown_schema_are_refused_in_one_line(sweep_dir, tmp_path, capsys):
    import shutil

    out = tmp_path / "o"
    shutil.copytree(sweep_dir, out)
    meta = json.loads((out / "metadata.json").read_text())
    (out / "metadata.json").write_text(json.dumps({**meta, "table_schema": 99}))
    for command in ("plot", "frontier"):
        code, _, err = invoke([command, str(out)], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "schema 99" in err
