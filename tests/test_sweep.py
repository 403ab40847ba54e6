"""Sweeps: TOML validation, resumable and corruption-proof task files, deterministic tables."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mamab.cli import main
from mamab.errors import ConfigError
from mamab.experiments import load_preset, load_spec
from mamab.experiments.aggregate import read_curves, tasks_of
from mamab.experiments.runner import run_sweep

SPEC = """
name = "tiny"
seed = 3
runs = 6
runs_per_task = 2
grid_points = 20

[[experiments]]
name = "complete"
algorithms = ["lcc-ucb", "no-communication"]
agents = [2, 3]
arms = 9
horizon = 600

[[experiments]]
name = "ring"
figure = "complete"
algorithms = "lcc-ucb-graph"
agents = 5
arms = 10
horizon = 500
graph = "ring"
"""


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(SPEC)
    return path


def test_spec_expands_the_grid(spec_file):
    spec = load_spec(spec_file)
    assert [(e, c.algorithm, c.agents) for e, c in spec.configs] == [
        ("complete", "lcc-ucb", 2),
        ("complete", "lcc-ucb", 3),
        ("complete", "no-communication", 2),
        ("complete", "no-communication", 3),
        ("ring", "lcc-ucb-graph", 5),
    ]
    tasks = tasks_of(spec)
    assert len(tasks) == 5 * 3
    assert [(t.config.first_run, t.config.runs) for t in tasks[:3]] == [(0, 2), (2, 2), (4, 2)]


def test_presets_load():
    paper = load_preset("paper")
    figures = {e.name: e for e in paper.experiments}
    assert {
        (c.agents, c.arms, c.horizon)
        for name, c in paper.configs
        if name not in ("frontier", "loss")
    } == {
        (10, 100, 100_000),
        (20, 100, 100_000),
        (10, 200, 100_000),
        (100, 250, 50_000),
        (150, 250, 50_000),
        (100, 500, 50_000),
    }
    assert paper.runs == 30
    assert {c.graph for _, c in paper.configs if c.agents >= 100} == {"erdos-renyi"}
    assert {c.loss for c in figures["loss"].configs} == {0.0, 0.1, 0.3, 0.5, 0.7, 0.9}
    in_complete = {
        c.algorithm for e in paper.experiments if e.figure == "complete" for c in e.configs
    }
    assert "demab" in in_complete


def test_resume_after_interruption_and_corruption_is_byte_identical(spec_file, tmp_path):
    spec = load_spec(spec_file)
    whole = tmp_path / "whole"
    first = run_sweep(spec, whole, jobs=1, progress=False)
    assert first.tasks_run == 15
    reference = (whole / "summary.csv").read_bytes()

    broken = tmp_path / "broken"
    run_sweep(spec, broken, jobs=1, progress=False)
    files = sorted((broken / "tasks").glob("*.npz"))
    files[0].unlink()  # an unfinished task
    files[1].write_bytes(files[1].read_bytes()[:100])  # a truncated one
    files[2].write_bytes(b"garbage")  # a corrupt one
    (broken / "summary.csv").unlink()
    again = run_sweep(spec, broken, jobs=2, progress=False)
    assert (again.tasks_run, again.tasks_skipped) == (3, 12)
    assert (broken / "summary.csv").read_bytes() == reference
    assert run_sweep(spec, broken, jobs=1, progress=False).tasks_run == 0


def test_killed_sweep_resumes(spec_file, tmp_path):
    out = tmp_path / "killed"
    code = f"from mamab.cli import main; main(['sweep', {str(spec_file)!r}, '--out', {str(out)!r}, '--jobs', '1'])"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 60
    while time.time() < deadline and len(list((out / "tasks").glob("*.npz"))) < 2:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list((out / "tasks").glob("*.npz")))
    outcome = run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    assert (
        outcome.tasks_skipped >= min(done_before, 15) - 1
    )  # a task being renamed may be lost, not more
    clean = run_sweep(load_spec(spec_file), tmp_path / "clean", jobs=1, progress=False)
    assert (out / "summary.csv").read_bytes() == (tmp_path / "clean" / "summary.csv").read_bytes()
    assert clean.tasks_run == 15


def test_plots_and_redraw(spec_file, tmp_path, capsys):
    out = tmp_path / "res"
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(spec_file), "--out", str(out), "--jobs", "1"])
    assert done.value.code == 0
    assert "lcc-ucb-graph" in capsys.readouterr().out
    curves = read_curves(out)
    assert len(curves) == 5 and curves[0].regret.shape == (6, curves[0].grid.size)
    with pytest.raises(SystemExit) as done:
        main(["plot", str(out), "--bounds"])
    assert done.value.code == 0
    for name in ("complete-regret.png", "complete-regret.svg", "complete-bits.png"):
        assert (out / "figures" / name).stat().st_size > 1000


def test_sweep_draws_its_figures_and_a_rerun_removes_stale_ones(spec_file, tmp_path, capsys):
    """`mamab sweep` ends with what `mamab plot` draws (README: a sweep directory holds
    figures/); figures of a configuration no longer in the tables go; --no-figures draws none."""
    extra = '\n[[experiments]]\nname = "extra"\nalgorithms = "lcc-ucb"\nagents = 2\narms = 4\nhorizon = 60\n'
    spec_file.write_text(SPEC + extra)
    out = tmp_path / "res"
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(spec_file), "--out", str(out), "--jobs", "1"])
    assert done.value.code == 0
    drawn = {p.name for p in (out / "figures").iterdir()}
    assert {
        "complete-regret.png",
        "complete-regret.svg",
        "complete-bits.png",
        "extra-regret.png",
        "manifest.json",
    } <= drawn
    (out / "metadata.json").unlink()  # the same directory, the sweep without "extra"
    spec_file.write_text(SPEC)
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(spec_file), "--out", str(out), "--jobs", "1"])
    assert done.value.code == 0
    left = {p.name for p in (out / "figures").iterdir()}
    assert "complete-regret.png" in left and not any(n.startswith("extra-") for n in left)
    bare = tmp_path / "bare"
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(spec_file), "--out", str(bare), "--jobs", "1", "--no-figures"])
    assert done.value.code == 0
    assert (bare / "summary.csv").is_file() and not (bare / "figures").exists()


BAD_SPECS = [
    ("colour = 3\n", "unknown key 'colour'"),
    ("runs = 'ten'\n", "runs must be int"),
    ("runs = 0\n", "runs must be at least 1"),
    (
        "[[experiments]]\nalgorithms = 'lcc-ucb'\nagents = 2\narms = 5\nhorizon = 10\nspeed = 1\n",
        "unknown key 'speed'",
    ),
    (
        "[[experiments]]\nalgorithms = 'lcc-ucb'\nagents = 2\narms = 5\n",
        "missing required key 'horizon'",
    ),
    (
        "[[experiments]]\nalgorithms = 'lcc-ucb'\nagents = [2, 'x']\narms = 5\nhorizon = 10\n",
        "agents: expected int",
    ),
    ("[[experiments]]\nalgorithms = 'lcc-ucb'\nagents = 9\narms = 5\nhorizon = 10\n", "K >= N"),
    (
        "[[experiments]]\nalgorithms = 'warp'\nagents = 2\narms = 5\nhorizon = 10\n",
        "unknown algorithm",
    ),
    ("[[experiments]]\nalgorithms = 'lcc-ucb'\nagents = 2\narms = 5\nhorizon = -1\n", "horizon"),
    (
        "[[experiments]]\nalgorithms = 'lcc-ucb'\nagents = 2\narms = 5\nhorizon = 10\nedge_prob = 2.0\n",
        "edge probability",
    ),
    ("name = \n", "not valid TOML"),
    ("", "at least one [[experiments]]"),
]


@pytest.mark.parametrize(("text", "needle"), BAD_SPECS)
def test_bad_toml_is_one_line_exit_2(tmp_path, capsys, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        load_spec(path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("keep")
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(path), "--out", str(out)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_missing_sweep_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(tmp_path / "nope.toml")])
    assert done.value.code == 2 and "does not exist" in capsys.readouterr().err


def test_plot_of_a_directory_without_results(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["plot", str(tmp_path)])
    assert done.value.code == 2 and "no readable sweep results" in capsys.readouterr().err


def test_pareto_frontier():
    from mamab.plots import pareto

    points = [
        ("a", 0.0, 10.0, 0, 0),
        ("b", 5.0, 4.0, 0, 0),
        ("c", 6.0, 5.0, 0, 0),
        ("d", 100.0, 1.0, 0, 0),
        ("e", 5.0, 4.0, 0, 0),
    ]
    assert pareto(points) == {0, 1, 3, 4}  # by position: e ties b, c is dominated by b


def test_frontier_command(spec_file, tmp_path, capsys):
    out = tmp_path / "res"
    run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    with pytest.raises(SystemExit) as done:
        main(["frontier", str(out)])
    text = capsys.readouterr().out
    assert done.value.code == 0
    assert "N = 2, K = 9, complete graph" in text and "frontier" in text
    rows = [
        line
        for line in text.splitlines()
        if line.strip().startswith(("LCC-UCB ", "no communication"))
    ]
    assert rows and all(
        line.rstrip().endswith("yes") for line in rows if "no communication" in line
    )
    assert (out / "figures" / "complete-frontier.png").is_file()
