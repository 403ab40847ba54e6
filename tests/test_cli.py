"""`mamab run`: outputs, determinism, and one-line errors with exit code 2 for bad input."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mamab.cli import main

BASE = [
    "run",
    "--algorithm",
    "lcc-ucb",
    "-N",
    "3",
    "-K",
    "9",
    "-T",
    "400",
    "--runs",
    "3",
    "--seed",
    "4",
]


def invoke(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def snapshot(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def test_run_writes_summary_and_is_byte_identical(tmp_path, capsys):
    code, out, err = invoke([*BASE, "--out", str(tmp_path / "a")], capsys)
    assert code == 0, err
    assert "lcc-ucb" in out and "coverage" in out and "95% band" not in out
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert set(summary) == {
        "algorithm",
        "agents",
        "arms",
        "horizon",
        "runs",
        "seed",
        "reward",
        "graph",
        "statistics",
        "per_run",
    }
    assert [r["run"] for r in summary["per_run"]] == [0, 1, 2]
    first = summary["per_run"][0]
    assert len(first["final_regret_per_agent"]) == 3 and len(first["bits_sent_per_agent"]) == 3
    assert first["final_regret_mean"] == pytest.approx(sum(first["final_regret_per_agent"]) / 3)
    assert (tmp_path / "a" / "regret.parquet").stat().st_size > 0
    invoke([*BASE, "--out", str(tmp_path / "b")], capsys)
    assert (tmp_path / "a" / "summary.json").read_bytes() == (
        tmp_path / "b" / "summary.json"
    ).read_bytes()


BAD = [
    (["-N", "0"], "agents"),
    (["-K", "-3"], "arms"),
    (["-T", "0"], "horizon"),
    (["--runs", "0"], "runs"),
    (["-N", "12", "-K", "9"], "K >= N"),
    (["--graph", "erdos-renyi", "--edge-prob", "0"], "edge probability"),
    (["--graph", "erdos-renyi", "--edge-prob", "1.5"], "edge probability"),
    (["--algorithm", "nope"], "--algorithm"),
    (["--graph", "torus"], "unknown graph"),
    (["--reward", "poisson"], "--reward"),
    (["--reward", "gaussian", "--sigma", "-1"], "sigma"),
    (["--engine", "warp"], "--engine"),
    (["--agents", "many"], "--agents"),
    (["--seed", "-1"], "seed"),
    (["--alpha", "0"], "alpha"),
    (["--bogus-flag"], "bogus"),
]


@pytest.mark.parametrize(("extra", "needle"), BAD)
def test_bad_input_is_one_line_exit_2_and_touches_nothing(tmp_path, capsys, extra, needle):
    out = tmp_path / "out"
    assert invoke([*BASE, "--out", str(out)], capsys)[0] == 0
    before = snapshot(out)
    code, _, err = invoke([*BASE, *extra, "--out", str(out)], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
    assert snapshot(out) == before


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "algorithm", "needle"),
    [
        ("0 1\n1 two\n", "lcc-ucb", "line 2"),
        ("0 1\n1 5\n", "lcc-ucb", "outside 0..2"),
        ("0 1\n", "lcc-ucb-graph", "connected"),
        ("0 1\n", "lcc-ucb-relay", "connected"),
    ],
)
def test_bad_graph_files(tmp_path, capsys, text, algorithm, needle):
    path = write(tmp_path / "g.txt", text)
    args = [
        "run",
        "--algorithm",
        algorithm,
        "-N",
        "3",
        "-K",
        "9",
        "-T",
        "50",
        "--runs",
        "1",
        "--graph",
        path,
    ]
    code, _, err = invoke(args, capsys)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_out_path_that_is_a_file(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("keep me")
    code, _, err = invoke([*BASE, "--out", str(target)], capsys)
    assert code == 2 and "is a file" in err
    assert target.read_text() == "keep me"


def test_graph_file_and_console_script(tmp_path):
    path = write(tmp_path / "g.txt", "0 1\n1 2\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mamab",
            "run",
            "--algorithm",
            "lcc-ucb-graph",
            "-N",
            "3",
            "-K",
            "9",
            "-T",
            "200",
            "--runs",
            "2",
            "--graph",
            path,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "lcc-ucb-graph" in proc.stdout
