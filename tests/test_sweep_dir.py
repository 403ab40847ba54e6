"""The output directory (issue 20, items 3, 7, 10 and 14): one writer at a time, never a
directory mamab did not write, no silently replaced tables, a figures directory holding exactly
the current figures, no duplicated configurations, and every file honouring the umask."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import networkx as nx
import pytest

import mamab
from mamab.cli import main
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.experiments import Experiment, SweepSpec, load_spec
from mamab.experiments.aggregate import read_curves
from mamab.experiments.reproduce import reproduce
from mamab.experiments.runner import run_sweep
from mamab.experiments.spec import parse_spec
from mamab.outdir import LOCK_NAME, claimed
from mamab.plots import MANIFEST, Style, draw_all
from mamab.simulate import simulate

SMALL = """
name = "small"
seed = {seed}
runs = 2
runs_per_task = 2
grid_points = 6

[[experiments]]
name = "a"
algorithms = ["lcc-ucb", "no-communication"]
agents = 2
arms = 4
horizon = 60
"""

RING = "".join(f"{i} {(i + 1) % 4}\n" for i in range(4))
LINE = "".join(f"{i} {i + 1}\n" for i in range(3))


def small(tmp_path: Path, seed: int = 0, name: str = "small.toml") -> Path:
    path = tmp_path / name
    path.write_text(SMALL.format(seed=seed))
    return path


def one_line_exit_2(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


HOLD = (
    "import sys\n"
    "from mamab.outdir import claimed\n"
    "with claimed(sys.argv[1]):\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.read()\n"
)


@contextmanager
def held_by_child(directory: Path):
    """Another process holding ``directory``'s lock until the block ends; yields its pid."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "held"  # the lock is held: a state, no sleep
        yield child
    finally:
        if child.poll() is None:
            child.stdin.close()
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


# -- item 3: one writer per directory ------------------------------------------------------------


def test_a_second_sweep_process_is_refused_naming_the_holder(tmp_path):
    """`mamab sweep` in another process while this one holds the directory: one line, exit 2,
    naming the directory and the holder; nothing written."""
    out = tmp_path / "out"
    spec = small(tmp_path, seed=1)
    with claimed(out):
        before = snapshot(out)
        done = subprocess.run(
            [sys.executable, "-m", "mamab", "sweep", str(spec), "--out", str(out), "--jobs", "1"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2, done.stderr
        err = done.stderr.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert str(out) in err and "in use by another mamab process" in err
        assert f"pid {os.getpid()} on host {socket.gethostname()}" in err
        assert snapshot(out) == before  # no task, no table
    assert run_sweep(load_spec(spec), out, jobs=1, progress=False).tasks_run == 2  # released


def test_two_concurrent_sweeps_never_mix_tables(tmp_path):
    """The issue's race: two sweeps (seeds 1 and 2) started at once into one directory. Whatever
    the timing, exactly one writes (the other is refused: in use, or another sweep's directory)
    and metadata.json, summary.csv and the Parquet tables all hold the same seed."""
    out = tmp_path / "out"
    specs = [small(tmp_path, seed=s, name=f"s{s}.toml") for s in (1, 2)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "mamab", "sweep", str(s), "--out", str(out), "--jobs", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for s in specs
    ]
    results = [(*p.communicate(timeout=300), p.returncode) for p in procs]
    assert sorted(code for *_, code in results) == [0, 2], results
    refused = next(err for _, err, code in results if code == 2)
    assert len(refused.strip().splitlines()) == 1 and str(out) in refused
    seed = json.loads((out / "metadata.json").read_text())["spec"]["seed"]
    assert {r.config["seed"] for r in read_curves(out)} == {seed}
    with open(out / "summary.csv") as f:
        header, *rows = [line.split(",") for line in f.read().splitlines()]
    assert {row[header.index("seed")] for row in rows} == {str(seed)}


def test_reproduce_and_the_python_api_are_refused_while_another_process_writes(tmp_path, capsys):
    out = tmp_path / "out"
    with held_by_child(out) as child:
        err = one_line_exit_2(["reproduce", "--quick", "--out", str(out), "--jobs", "1"], capsys)
        assert str(out) in err and f"pid {child.pid}" in err
        with pytest.raises(
            ConfigError, match=f"in use by another mamab process \\(pid {child.pid}"
        ):
            mamab.sweep(small(tmp_path), out=out, jobs=1, progress=False)
        with pytest.raises(ConfigError, match="in use"):
            reproduce(load_spec(small(tmp_path)), out, jobs=1)
        err = one_line_exit_2(
            [
                "run",
                "--algorithm",
                "lcc-ucb",
                "-N",
                "2",
                "-K",
                "3",
                "-T",
                "20",
                "--runs",
                "1",
                "--out",
                str(out),
            ],
            capsys,
        )
        assert f"pid {child.pid}" in err
        assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]


def test_plot_and_frontier_are_refused_while_a_sweep_writes(tmp_path, capsys):
    out = tmp_path / "out"
    run_sweep(load_spec(small(tmp_path)), out, jobs=1, progress=False)
    with held_by_child(out) as child:
        for command in ("plot", "frontier"):
            err = one_line_exit_2([command, str(out)], capsys)
            assert f"pid {child.pid}" in err
    assert not (out / "figures").exists()


def test_a_lock_of_a_process_killed_with_sigkill_does_not_block(tmp_path):
    """A sweep killed by SIGKILL while its worker processes run: its lock dies with it (its
    forked workers never hold it), so the directory can be claimed at once."""
    spec = small(tmp_path)
    spec.write_text(
        spec.read_text() + '\n[[experiments]]\nname = "big"\nalgorithms = '
        '"no-communication"\nagents = 40\narms = 4\nhorizon = 2000000\n'
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mamab", "sweep", str(spec), "--out", str(out), "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not list((out / "tasks").glob("*.npz")):
            time.sleep(0.02)  # a small task is done: the workers run, the big task is under way
        assert proc.poll() is None, "the sweep ended before it could be killed"
        assert json.loads((out / LOCK_NAME).read_text())["pid"] == proc.pid  # held by the sweep
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    with claimed(out):  # at once: no wait for the dying workers, no refusal
        assert json.loads((out / LOCK_NAME).read_text())["pid"] == os.getpid()


def test_a_stale_lock_file_does_not_block(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    dead = {"pid": 2**22 + 1, "host": socket.gethostname(), "since": "2020-01-01T00:00:00Z"}
    (out / LOCK_NAME).write_text(json.dumps(dead))
    assert run_sweep(load_spec(small(tmp_path)), out, jobs=1, progress=False).tasks_run == 2
    assert (out / LOCK_NAME).read_text() == ""  # released: no holder recorded


def test_the_lock_is_reentrant_in_one_thread_only(tmp_path):
    import threading

    out = tmp_path / "out"
    seen = []
    with claimed(out), claimed(out):  # reproduce holds it around run_sweep
        thread = threading.Thread(target=lambda: seen.append(_try_claim(out)))
        thread.start()
        thread.join()
    assert seen and "in use" in seen[0]


def _try_claim(out: Path) -> str:
    try:
        with claimed(out):
            return "claimed"
    except ConfigError as err:
        return str(err)


# -- item 7: a value listed twice on an axis -----------------------------------------------------

BASE = {"algorithms": "lcc-ucb", "agents": 3, "arms": 4, "horizon": 50}


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"agents": [4, 4]}, "agents"),
        ({"algorithms": ["lcc-ucb", "no-communication", "lcc-ucb"]}, "algorithms"),
        ({"arms": [4, 5, 4]}, "arms"),
        ({"horizon": [50, 50]}, "horizon"),
        ({"graph": ["ring", "ring"]}, "graph"),
        ({"graph": "erdos-renyi", "edge_prob": [0.5, 0.5]}, "edge_prob"),
        ({"graph": "erdos-renyi", "edge_prob": [1, 1.0]}, "edge_prob"),
        ({"sigma": [1, 1.0], "reward": "gaussian"}, "sigma"),
        ({"reward": ["gaussian", "gaussian"]}, "reward"),
        ({"loss": [0.0, 0]}, "loss"),
        ({"delay": [0.1, 0.1]}, "delay"),
        ({"crash_rate": [0.01, 0.01]}, "crash_rate"),
        ({"crash_at": [[0, 5, 0], [0, 5, 0]]}, "crash_at"),
        ({"recover_after": [3, 3]}, "recover_after"),
        ({"malicious": [1, 1]}, "malicious"),
        ({"malicious": [[0, 1], [0, 1]]}, "malicious"),
        ({"means": [[0.9, 0.5], [0.9, 0.5]]}, "means"),
        ({"alpha": [1, 1.0]}, "params.alpha"),
        ({"params": {"k_prime": [2, 2]}}, "params.k_prime"),
        ({"grid_style": ["log", "log"]}, "grid_style"),
    ],
)
def test_a_value_listed_twice_on_any_axis_is_refused(changes, key):
    block = {**BASE, **changes}
    if "means" in changes:
        block.pop("arms")
    with pytest.raises(ConfigError, match=f"experiments\\[0\\]\\.{key}: .* is listed twice"):
        parse_spec({"experiments": [block]}, "s.toml")


def test_a_repeated_line_of_a_means_file_and_a_repeated_networkx_graph_are_refused(tmp_path):
    (tmp_path / "m.txt").write_text("0.9 0.5\n0.1 0.2\n0.9, 0.5\n")
    block = {**BASE, "means_file": str(tmp_path / "m.txt")}
    block.pop("arms")
    with pytest.raises(ConfigError, match=r"means_file: \[0.9, 0.5\] is listed twice"):
        parse_spec({"experiments": [block]}, "s.toml")
    graph = nx.cycle_graph(3)
    with pytest.raises(ConfigError, match=r"graph: .* is listed twice"):
        mamab.sweep({"experiments": [{**BASE, "graph": [graph, graph]}]}, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_duplicates_are_one_line_on_the_command_line(tmp_path, capsys):
    spec = small(tmp_path)
    spec.write_text(spec.read_text().replace("agents = 2", "agents = [2, 2]"))
    err = one_line_exit_2(["sweep", str(spec), "--out", str(tmp_path / "out")], capsys)
    assert "experiments[0].agents: 2 is listed twice" in err
    assert not (tmp_path / "out").exists()


def test_one_configuration_twice_from_python_or_two_paths_of_one_file(tmp_path, monkeypatch):
    config = Config(algorithm="lcc-ucb", agents=2, arms=3, horizon=40, runs=2, grid_points=5)
    spec = SweepSpec("twice", 0, 2, 2, 5, (Experiment("e", "e", (config, config)),))
    with pytest.raises(ConfigError, match="the same configuration appears twice"):
        mamab.sweep(spec, out=tmp_path / "o", jobs=1)
    monkeypatch.chdir(tmp_path)
    Path("g.txt").write_text(RING)
    block = {**BASE, "algorithms": "no-communication", "agents": 4, "graph": ["g.txt", "./g.txt"]}
    with pytest.raises(
        ConfigError, match=r"graph files g\.txt and \./g\.txt have the same contents"
    ):
        mamab.sweep({"experiments": [block]}, out=tmp_path / "o", jobs=1)
    assert not (tmp_path / "o").exists()
    other = {**block, "name": "other"}  # one configuration in two experiments stays allowed
    outcome = mamab.sweep(
        {"runs": 1, "experiments": [{**block, "graph": "g.txt"}, {**other, "graph": "./g.txt"}]},
        out=tmp_path / "o",
        jobs=1,
        progress=False,
    )
    assert (outcome.tasks_run, len(outcome.summary)) == (1, 2)


# -- item 10: no silently replaced tables --------------------------------------------------------

GRAPH_SPEC = """
name = "g"
runs = 2
runs_per_task = 2
grid_points = 5
[[experiments]]
algorithms = "lcc-ucb-graph"
agents = 4
arms = 5
horizon = 60
graph = "{graph}"
"""


def test_an_edited_graph_file_does_not_replace_the_tables(tmp_path, capsys):
    edges = tmp_path / "g.txt"
    edges.write_text(RING)
    spec = tmp_path / "spec.toml"
    spec.write_text(GRAPH_SPEC.format(graph=edges.as_posix()))
    out = tmp_path / "out"
    main_ok(["sweep", str(spec), "--out", str(out), "--jobs", "1"])
    before = snapshot(out)
    edges.write_text(LINE)
    err = one_line_exit_2(["sweep", str(spec), "--out", str(out), "--jobs", "1"], capsys)
    assert "graph file" in err and "g.txt" in err and "metadata.json" in err
    assert snapshot(out) == before
    with pytest.raises(ConfigError, match="contents changed"):  # the Python API alike
        mamab.sweep(spec, out=out, jobs=1)
    # the same contents under another path: the same sweep, every task reused
    moved = tmp_path / "moved.txt"
    moved.write_text(RING)
    spec.write_text(GRAPH_SPEC.format(graph=moved.as_posix()))
    assert mamab.sweep(spec, out=out, jobs=1, progress=False).tasks_run == 0


def test_an_edited_means_file_does_not_replace_the_tables(tmp_path, capsys):
    means = tmp_path / "m.txt"
    means.write_text("0.9 0.5 0.1\n")
    spec = small(tmp_path)
    spec.write_text(spec.read_text().replace("arms = 4", f"means_file = '{means.as_posix()}'"))
    out = tmp_path / "out"
    main_ok(["sweep", str(spec), "--out", str(out), "--jobs", "1"])
    before = snapshot(out)
    means.write_text("0.9 0.8 0.1\n")
    err = one_line_exit_2(["sweep", str(spec), "--out", str(out), "--jobs", "1"], capsys)
    assert "holds the tables of sweep 'small'" in err
    assert snapshot(out) == before


def main_ok(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0


@pytest.mark.parametrize("command", ["sweep", "run", "python", "reproduce"])
def test_a_directory_mamab_did_not_write_is_refused(tmp_path, capsys, command):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "summary.csv").write_text("the user's,own,table\n")
    before = snapshot(out)
    argv = {
        "sweep": ["sweep", str(small(tmp_path)), "--out", str(out)],
        "run": [
            "run",
            "--algorithm",
            "lcc-ucb",
            "-N",
            "2",
            "-K",
            "3",
            "-T",
            "20",
            "--runs",
            "1",
            "--out",
            str(out),
        ],
        "reproduce": ["reproduce", "--quick", "--out", str(out)],
    }
    if command == "python":
        with pytest.raises(ConfigError, match=r"not empty .* not written by mamab"):
            mamab.sweep(small(tmp_path), out=out, jobs=1)
    else:
        err = one_line_exit_2(argv[command], capsys)
        assert str(out) in err and "not written by mamab" in err and "summary.csv" in err
    assert snapshot(out) == before and sorted(os.listdir(out)) == ["summary.csv"]


def test_runs_and_sweeps_do_not_write_into_each_others_directories(tmp_path, capsys):
    sweep_dir, run_dir = tmp_path / "sweep", tmp_path / "run"
    run_sweep(load_spec(small(tmp_path)), sweep_dir, jobs=1, progress=False)
    main_ok(
        [
            "run",
            "--algorithm",
            "lcc-ucb",
            "-N",
            "2",
            "-K",
            "3",
            "-T",
            "20",
            "--runs",
            "1",
            "--out",
            str(run_dir),
        ]
    )
    main_ok(
        [
            "run",
            "--algorithm",
            "lcc-ucb",
            "-N",
            "2",
            "-K",
            "3",
            "-T",
            "20",
            "--runs",
            "2",
            "--out",
            str(run_dir),
        ]
    )
    before = snapshot(sweep_dir)
    err = one_line_exit_2(
        [
            "run",
            "--algorithm",
            "lcc-ucb",
            "-N",
            "2",
            "-K",
            "3",
            "-T",
            "20",
            "--out",
            str(sweep_dir),
        ],
        capsys,
    )
    assert "holds a sweep's tables" in err
    assert snapshot(sweep_dir) == before
    err = one_line_exit_2(["sweep", str(small(tmp_path)), "--out", str(run_dir)], capsys)
    assert "holds the results of `mamab run`" in err


def test_an_interrupted_sweep_of_an_older_mamab_resumes(tmp_path):
    spec = load_spec(small(tmp_path))
    out = tmp_path / "out"
    run_sweep(spec, out, jobs=1, progress=False)
    for name in os.listdir(out):  # what an older mamab left when killed: tasks only
        if name != "tasks":
            path = out / name
            path.unlink()
    assert run_sweep(spec, out, jobs=1, progress=False).tasks_skipped == 2


def figures(out: Path) -> set[str]:
    return {p.name for p in (out / "figures").iterdir()}


def test_the_figures_directory_holds_exactly_the_current_figures(tmp_path, capsys):
    spec = small(tmp_path)
    spec.write_text(
        spec.read_text() + '\n[[experiments]]\nname = "b"\nalgorithms = "lcc-ucb"\n'
        "agents = 3\narms = 4\nhorizon = 60\n"
    )
    out = tmp_path / "out"
    outcome = run_sweep(load_spec(spec), out, jobs=1, progress=False)
    draw_all(outcome.results, out, style=Style(formats=("png",)))
    (out / "figures" / "mine.png").write_bytes(b"the user's figure")
    (out / "figures" / "notes.txt").write_text("the user's notes")
    assert "a-regret.png" in figures(out) and "b-regret.png" in figures(out)
    # another format: the PNGs mamab drew go, the user's files stay
    draw_all(outcome.results, out, style=Style(formats=("pdf",)))
    drawn = {f"{f}-{k}.pdf" for f in "ab" for k in ("regret", "bits", "frontier")}
    assert figures(out) == drawn | {"mine.png", "notes.txt", MANIFEST}
    # `mamab plot` redraws in the recorded style (report.md links stay valid)
    main_ok(["plot", str(out)])
    assert figures(out) == drawn | {"mine.png", "notes.txt", MANIFEST}
    # a configuration that no longer exists: its figures go on the next drawing
    (out / "metadata.json").unlink()
    spec.write_text(spec.read_text().split('\n[[experiments]]\nname = "b"')[0])
    run_sweep(load_spec(spec), out, jobs=1, progress=False)
    main_ok(["plot", str(out)])
    assert figures(out) == {f"a-{k}.pdf" for k in ("regret", "bits", "frontier")} | {
        "mine.png",
        "notes.txt",
        MANIFEST,
    }
    assert (out / "figures" / "mine.png").read_bytes() == b"the user's figure"


def test_figures_drawn_side_by_side_are_the_ones_drawn_in_turn(tmp_path):
    """Issue 23: draw_all(jobs=2) draws each figure in a forked process, the same bytes."""
    outcome = run_sweep(load_spec(small(tmp_path)), tmp_path / "out", jobs=1, progress=False)
    style = Style(formats=("png",))
    one = draw_all(outcome.results, tmp_path / "one", style=style, jobs=1)
    two = draw_all(outcome.results, tmp_path / "two", style=style, jobs=2)
    assert list(one) == list(two) == ["a-regret", "a-bits", "a-frontier"]
    for key, paths in one.items():
        assert [p.read_bytes() for p in paths] == [p.read_bytes() for p in two[key]]
    assert figures(tmp_path / "two") == {f"a-{k}.png" for k in ("regret", "bits", "frontier")} | {
        MANIFEST
    }


def test_reproduce_in_another_format_leaves_no_stale_figures(tmp_path, monkeypatch):
    """The issue's case: `mamab reproduce --format pdf` into a directory holding its PNGs."""
    import mamab.experiments

    monkeypatch.setattr(mamab.experiments, "load_preset", lambda name: load_spec(small(tmp_path)))
    out = tmp_path / "out"
    main_ok(["reproduce", "--out", str(out), "--jobs", "1", "--format", "png"])
    assert "a-regret.png" in figures(out)
    main_ok(["reproduce", "--out", str(out), "--jobs", "1", "--format", "pdf"])
    assert figures(out) == {f"a-{k}.pdf" for k in ("regret", "bits", "frontier")} | {MANIFEST}
    assert "a-regret.pdf" in (out / "report.md").read_text()


def test_figures_of_an_older_mamab_or_a_user_are_never_removed(tmp_path):
    out = tmp_path / "out"
    outcome = run_sweep(load_spec(small(tmp_path)), out, jobs=1, progress=False)
    (out / "figures").mkdir()
    (out / "figures" / "a-regret.svg").write_text("<svg/>")  # no manifest: not known as mamab's
    (out / "figures" / MANIFEST).write_text(json.dumps({"files": ["../metadata.json", "/etc/x"]}))
    draw_all(outcome.results, out, style=Style(formats=("png",)))
    assert "a-regret.svg" in figures(out) and (out / "metadata.json").exists()


# -- item 14: every file mamab writes honours the umask ------------------------------------------


@contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_run_out_files_honour_the_umask(tmp_path, mask):
    out = tmp_path / "run"
    with umask(mask):
        main_ok(
            [
                "run",
                "--algorithm",
                "lcc-ucb",
                "-N",
                "2",
                "-K",
                "3",
                "-T",
                "20",
                "--runs",
                "1",
                "--out",
                str(out),
            ]
        )
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()}
    assert {modes[n] for n in ("regret.parquet", "metadata.json", "summary.json")} == {
        0o666 & ~mask
    }
    assert set(modes) == {"regret.parquet", "metadata.json", "summary.json", LOCK_NAME}
    assert set(modes.values()) == {0o666 & ~mask}


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_every_sweep_file_and_the_roster_honour_the_umask(tmp_path, mask):
    from mamab.live.roster import write_keys

    out = tmp_path / "out"
    with umask(mask):
        outcome = run_sweep(load_spec(small(tmp_path)), out, jobs=1, progress=False)
        draw_all(outcome.results, out)
        config = Config(algorithm="lcc-ucb", agents=2, arms=3, horizon=20)
        simulate(config).save(out / "result.npz")
        keys = write_keys(2, 47000, tmp_path / "keys")
    files = [p for p in out.rglob("*") if p.is_file()]
    assert keys.stat().st_mode & 0o777 == 0o666 & ~mask  # the roster is public: the umask rules
    assert {p.stat().st_mode & 0o777 for p in files} == {0o666 & ~mask}
    assert {p.name for p in files} >= {LOCK_NAME, MANIFEST, "summary.csv", "result.npz"}
    secrets = list((tmp_path / "keys").glob("agent-*.secret"))
    assert secrets and {p.stat().st_mode & 0o777 for p in secrets} == {0o600}  # secrets aside
