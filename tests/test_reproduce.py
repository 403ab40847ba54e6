"""`mamab reproduce --quick` end to end: figures, report, and a deterministic summary.csv."""

import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    proc = subprocess.run([sys.executable, "-m", "mamab", "reproduce", "--quick", "--out", str(out)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def test_report_and_figures(quick):
    out, stdout = quick
    report = (out / "report.md").read_text()
    assert "LCC-UCB-GRAPH beats LCC-UCB with relaying" in report
    assert report.count("✅ reproduced") >= 5
    for figure in (
        "complete-regret",
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


def test_summary_rows_and_rerun_is_byte_identical(quick, tmp_path):
    out, _ = quick
    lines = (out / "summary.csv").read_text().splitlines()
    assert lines[0].startswith("experiment,figure,algorithm,agents,arms,horizon")
    # 3 complete panels × 4 algorithms + 3 sparse panels × 5 + 6 frontier + 4 algorithms × 6 loss rates
    assert len(lines) == 1 + 12 + 15 + 6 + 24
    second = tmp_path / "again"
    proc = subprocess.run([sys.executable, "-m", "mamab", "reproduce", "--quick", "--out", str(second), "--jobs", "1"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (second / "summary.csv").read_bytes() == (out / "summary.csv").read_bytes()
