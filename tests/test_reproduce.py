"""`mamab reproduce --quick` end to end: figures, report, and a deterministic summary.csv."""

import csv
import re
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    proc = subprocess.run(
        [sys.executable, "-m", "mamab", "reproduce", "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def test_report_and_figures(quick):
    out, stdout = quick
    report = (out / "report.md").read_text()
    assert "LCC-UCB-GRAPH beats LCC-UCB with relaying" in report
    assert report.count("✅") >= 5
    assert "## Fidelity: complete graph" in report and "## Fidelity: sparse graphs" in report
    # quick's relay (K' = ceil(K/N) + N - 1) first talks at T; the sparse family runs alpha = 2 only
    sparse = report.split("## Fidelity: sparse graphs")[1]
    assert "effectively no communication" in sparse and "alpha = 2 only" in sparse
    assert "arXiv:2102.08462" in report and "shared/paper" not in report
    for figure in (
        "complete-regret",
        "complete-alpha1-regret",
        "complete-bits",
        "sparse-regret",
        "sparse-bits",
        "frontier-frontier",
        "loss-loss",
    ):
        assert (out / "figures" / f"{figure}.png").is_file() and (
            out / "figures" / f"{figure}.svg"
        ).is_file()
        assert f"figures/{figure}.png" in report
    assert "lcc-ucb-relay" in stdout
    # the time the user waited, and the tasks' share of it (the rest, figures mostly, was two
    # fifths of --quick's)
    last = re.fullmatch(
        r"report: (.+) \((\d+) s, of which tasks (\d+) s\)", stdout.splitlines()[-1]
    )
    assert last and last[1] == str(out / "report.md") and int(last[3]) <= int(last[2])


def test_summary_rows(quick):
    out, _ = quick
    lines = (out / "summary.csv").read_text().splitlines()
    assert lines[0].startswith("experiment,figure,algorithm,agents,arms,horizon")
    # complete: 3 panels × (3 algorithms + 2 DEMAB readings) in each of 2 alpha readings; sparse:
    # 3 panels × (4 algorithms + relay's 2nd K' + 2 DEMAB readings); 6 frontier; 4 × 6 loss rates
    assert len(lines) == 1 + 30 + 21 + 6 + 24


@pytest.mark.slow  # a second whole quick reproduction on one worker (~1.5 min); the same bytes
# across worker counts is also held in the default suite (test_engines_agree: simulate with
# jobs=2; test_dask: local jobs=2 against Dask)
def test_a_rerun_on_one_worker_is_byte_identical(quick, tmp_path):
    out, _ = quick
    second = tmp_path / "again"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mamab",
            "reproduce",
            "--quick",
            "--out",
            str(second),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (second / "summary.csv").read_bytes() == (out / "summary.csv").read_bytes()
    # figures drawn in turn (--jobs 1) and side by side (issue 23): the same PNG bytes
    pngs = sorted(p.name for p in (out / "figures").glob("*.png"))
    assert pngs == sorted(p.name for p in (second / "figures").glob("*.png")) and pngs
    for name in pngs:
        assert (second / "figures" / name).read_bytes() == (out / "figures" / name).read_bytes()


def _claim_row(report: str, section: str, claim: str) -> list[str]:
    """The verdict marks of one claim in a fidelity section's matrix, one per reading."""
    part = report.split(f"## Fidelity: {section}")[1].split("\n## ")[0]
    row = next(line for line in part.splitlines() if line.startswith(f"| {claim} |"))
    return [cell.split()[0] for cell in row.strip("|").split("|")[1:]]  # '✅ n=10' -> '✅'


def _verdict(pairs: list[tuple[dict, dict]]) -> str:
    """'better below worse' in every panel, from summary.csv's bands: ❌ if some band pair is
    apart the wrong way, ✅ if all are apart the right way, ❔ (overlap) otherwise."""

    def one(a: dict, b: dict) -> str:
        if float(a["final_regret_ci_high"]) < float(b["final_regret_ci_low"]):
            return "✅"
        return "❌" if float(a["final_regret_ci_low"]) > float(b["final_regret_ci_high"]) else "❔"

    marks = [one(a, b) for a, b in pairs]
    return "❌" if "❌" in marks else ("✅" if set(marks) == {"✅"} else "❔")


def test_report_claims_recomputed_from_summary(quick):
    """'LCC-UCB beats no communication' and 'DEMAB is worse than no communication', per reading,
    recomputed from summary.csv's bands, match report.md's matrix."""
    out, _ = quick
    rows = list(csv.DictReader((out / "summary.csv").open()))
    complete = [r for r in rows if r["figure"] in ("complete", "complete-alpha1")]
    row = {}
    for r in complete:
        alpha = float(r["alpha"] or 2)
        radius = float(r["demab_radius"] or 2)
        key = (
            r["algorithm"],
            radius if r["algorithm"] == "demab" else alpha,
            r["agents"],
            r["arms"],
        )
        row[key] = r
    panels = sorted({(r["agents"], r["arms"]) for r in complete})
    # readings in the report's order: alpha 1 then 2, DEMAB c = 2 (shared) then 16 (own)
    readings = [(a, c) for a in (1.0, 2.0) for c in (2.0, 16.0)]
    lcc = [
        _verdict([(row["lcc-ucb", a, *p], row["no-communication", a, *p]) for p in panels])
        for a, _ in readings
    ]
    demab = [
        _verdict([(row["no-communication", a, *p], row["demab", c, *p]) for p in panels])
        for a, c in readings
    ]
    report = (out / "report.md").read_text()
    assert (
        _claim_row(report, "complete graph", "LCC-UCB has lower regret than no communication")
        == lcc
    )
    assert (
        _claim_row(report, "complete graph", "DEMAB has higher regret than no communication")
        == demab
    )
    assert "n=10" in report and "inconclusive" in report


def test_the_malicious_preset_draws_regret_against_the_number_of_liars(tmp_path):
    """The preset, shrunk (T = 2000, 3 runs): one panel per attack, every algorithm a line."""
    import tomllib
    from importlib import resources

    from mamab.experiments.reproduce import reproduce
    from mamab.experiments.spec import parse_spec

    text = resources.files("mamab.experiments").joinpath("presets/malicious-quick.toml").read_text()
    data = tomllib.loads(text)
    data.update(runs=3, runs_per_task=3)
    data["experiments"][0]["horizon"] = 2000
    outcome = reproduce(parse_spec(data, "test"), tmp_path, jobs=1)
    algorithms = data["experiments"][0]["algorithms"]
    assert {"lcc-ucb-robust", "gosine-robust", "no-communication"} <= set(algorithms)
    rows = outcome.summary
    assert len(rows) == len(algorithms) * 6 * 3  # m = 0..5, three attacks
    assert {r["malicious"] for r in rows} == {str(m) for m in range(6)}
    report = (tmp_path / "report.md").read_text()
    assert "figures/malicious-malicious.png" in report and "honest agents" in report
    assert (tmp_path / "figures" / "malicious-malicious.svg").is_file()


def test_an_unknown_preset_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mamab", "reproduce", "--preset", "nope", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "nope" in proc.stderr and "Traceback" not in proc.stderr
