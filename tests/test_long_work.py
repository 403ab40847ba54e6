"""Issue 20, items 11-13: long work is confirmed, priced before it starts, and never runs blind."""

from __future__ import annotations

import io
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from mamab import cli, resources
from mamab import topology as topo
from mamab.cli import main
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.experiments import load_spec
from mamab.experiments.runner import run_sweep
from mamab.progress import INTERVAL_ENV, Progress, interval_seconds
from mamab.simulate import simulate

LONG_RUN = [
    "run",
    "--algorithm",
    "full-communication",
    "-N",
    "1000",
    "-K",
    "10000",
    "-T",
    "10000000",
    "--runs",
    "30",
]


def invoke(args, capsys):
    with pytest.raises(SystemExit) as done:
        main(args)
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


def one_line_error(code, err) -> bool:
    return code == 2 and err.startswith("mamab: error:") and len(err.strip().splitlines()) == 1


@pytest.fixture
def roomy(monkeypatch):
    """A machine with 1 TiB free: only the time decides."""
    monkeypatch.setattr(resources, "available_memory", lambda: 1 << 40)


# ---- item 11: work over a day needs --yes; a sweep's whole grid is priced first


class Started(Exception):
    pass


def _started(*args, **kwargs):
    raise Started


def test_a_run_of_a_month_needs_yes(roomy, monkeypatch, capsys):
    monkeypatch.setattr(cli, "simulate", _started)
    code, _, err = invoke(LONG_RUN, capsys)
    assert one_line_error(code, err), err
    assert "days" in err and "over 24 h" in err and "--yes" in err
    with pytest.raises(Started):  # with --yes it starts
        main([*LONG_RUN, "--yes"])


def test_simulate_refuses_a_month_unless_allowed(roomy, monkeypatch):
    config = Config("full-communication", agents=1000, arms=10000, horizon=10**7, runs=30)
    with pytest.raises(ConfigError, match="allow_long=True"):
        simulate(config)
    import sys

    monkeypatch.setattr(sys.modules["mamab.simulate"], "make_instance", _started)
    with pytest.raises(Started):
        simulate(config, allow_long=True)


GRID = """
name = "grid"
runs = {runs}
runs_per_task = 1
grid_points = 8

[[experiments]]
name = "small"
algorithms = "lcc-ucb"
agents = 3
arms = 6
horizon = 200

[[experiments]]
name = "{name}"
algorithms = "{algorithm}"
agents = {agents}
arms = {arms}
horizon = {horizon}
"""


def _sweep_file(tmp_path: Path, **kw) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(GRID.format(**kw))
    return path


def test_a_sweep_refuses_a_task_that_cannot_fit_before_any_task_runs(tmp_path, monkeypatch, capsys):
    spec = _sweep_file(
        tmp_path, runs=2, name="wide", algorithm="coop-ucb2", agents=100, arms=100000, horizon=10
    )
    monkeypatch.setattr(resources, "available_memory", lambda: 64 << 20)  # 64 MiB
    out = tmp_path / "out"
    code, _, err = invoke(["sweep", str(spec), "--out", str(out), "--jobs", "1"], capsys)
    assert one_line_error(code, err), err
    assert 'experiment "wide"' in err and "coop-ucb2" in err and "runs_per_task" in err
    assert "split the runs into a sweep" not in err
    assert not list((out / "tasks").glob("*.npz"))  # the small experiment did not run first


def test_a_sweep_of_a_month_needs_yes_before_any_task(tmp_path, roomy, monkeypatch, capsys):
    spec = _sweep_file(
        tmp_path,
        runs=30,
        name="long",
        algorithm="full-communication",
        agents=1000,
        arms=10000,
        horizon=10**7,
    )
    out = tmp_path / "out"
    code, _, err = invoke(["sweep", str(spec), "--out", str(out), "--jobs", "1"], capsys)
    assert one_line_error(code, err), err
    assert "this sweep" in err and "over 24 h" in err and "--yes" in err
    assert not list((out / "tasks").glob("*.npz"))
    import mamab.experiments.executors as executors

    monkeypatch.setattr(executors, "run_task", _started)
    with pytest.raises(Started):  # confirmed: the tasks start
        run_sweep(load_spec(spec), out, jobs=1, progress=False, allow_long=True)
    with pytest.raises(ConfigError, match="allow_long=True"):  # the Python API's keyword
        run_sweep(load_spec(spec), out, jobs=1, progress=False)


def test_reproduce_takes_yes(capsys):
    code, out, _ = invoke(["reproduce", "--help"], capsys)
    assert code == 0 and "--yes" in out


# ---- item 12: the exact diameter, fast; hopeless edge probabilities refused at once


def _csr(g: nx.Graph) -> tuple[np.ndarray, np.ndarray]:
    n = g.number_of_nodes()
    neighbours = [sorted(g.neighbors(v)) for v in range(n)]
    indptr = np.zeros(n + 1, np.int64)
    indptr[1:] = np.cumsum([len(nb) for nb in neighbours])
    return indptr, np.array([w for nb in neighbours for w in nb], np.int64)


def _graphs():
    rng = np.random.default_rng(20)
    yield nx.empty_graph(1)
    yield nx.empty_graph(2)  # disconnected
    yield nx.path_graph(2)
    yield nx.path_graph(300)
    yield nx.cycle_graph(301)
    yield nx.star_graph(50)
    yield nx.complete_graph(30)
    yield nx.convert_node_labels_to_integers(nx.grid_2d_graph(17, 23))
    yield nx.barbell_graph(40, 60)
    yield nx.lollipop_graph(30, 200)
    for seed in range(150):
        n = int(rng.integers(2, 600))
        kind = seed % 3
        if kind == 0:
            yield nx.gnp_random_graph(n, float(rng.uniform(0.5, 5)) / n, seed=seed)
        elif kind == 1:
            yield nx.random_labeled_tree(n, seed=seed)
        else:
            yield nx.connected_watts_strogatz_graph(max(n, 5), 4, 0.05, seed=seed)


def test_fast_diameter_matches_networkx_on_many_graphs():
    from mamab.diameter import diameter

    for g in _graphs():
        n = g.number_of_nodes()
        want = (0 if n == 1 else nx.diameter(g)) if nx.is_connected(g) else -1
        assert diameter(*_csr(g)) == want, (n, g.number_of_edges())


def test_diameter_of_a_sparse_graph_of_30000_agents_is_fast():
    """A ring plus 5 random chords per node (connected, diameter ~ 8): about 2 s under load;
    the Takes-Kosters bounds alone needed minutes (13 s at 10^4 nodes)."""
    from mamab.diameter import diameter

    n, rng = 30_000, np.random.default_rng(3)
    g = nx.cycle_graph(n)
    g.add_edges_from((int(a), int(b)) for a, b in rng.integers(0, n, (5 * n // 2, 2)) if a != b)
    indptr, indices = _csr(g)
    diameter(*_csr(nx.path_graph(3)))  # compiled (or loaded) outside the clock
    started = time.perf_counter()
    found = diameter(indptr, indices)
    assert time.perf_counter() - started < 30
    source = int(rng.integers(n))  # a BFS: the diameter is at least any eccentricity
    assert found >= nx.eccentricity(g, source) and found <= 2 * nx.eccentricity(g, source)


def test_the_estimate_prices_the_fast_diameter():
    """G(10^5, 10^-4): measured 12 s under load; the old model said 330 s per run."""
    assert resources.diameter_seconds(100_000, 500_000) < 60


def test_a_hopeless_edge_probability_is_refused_at_once(monkeypatch, capsys):
    monkeypatch.setattr(cli, "simulate", _started)
    started = time.perf_counter()
    code, _, err = invoke(
        [
            "run",
            "--algorithm",
            "lcc-ucb-graph",
            "-N",
            "100000",
            "-K",
            "100000",
            "-T",
            "10",
            "--graph",
            "erdos-renyi",
            "--edge-prob",
            "0.00002",
        ],
        capsys,
    )
    assert one_line_error(code, err), err
    assert "hopeless" in err and "at least 8.52e-05" in err
    assert time.perf_counter() - started < 5
    with pytest.raises(ConfigError, match="hopeless"):
        topo.erdos_renyi(1000, 0.001, np.random.default_rng(0))
    assert topo.min_edge_prob(20) == 0.0  # small graphs: the 1000 draws decide
    topo.check_connectable(100_000, 1e-4)  # the paper's 10/N at 10^5 agents is fine


# ---- item 13: progress, a bar on a terminal and plain lines elsewhere


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_progress_is_a_line_per_interval_with_an_eta():
    clock, stream = FakeClock(), io.StringIO()
    with Progress(
        100, "sweep", "tasks", stream=stream, tty=False, interval=30, clock=clock, background=False
    ) as bar:
        bar.update(10)
        assert stream.getvalue() == ""  # nothing due yet
        clock.now += 30
        bar.update(15)
        clock.now += 10
        bar.update(5)  # 10 s later: not due
        clock.now += 20
        bar.describe(note="lcc-ucb")
        assert bar.tick()
        clock.now += 60
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sweep: 25/100 tasks (25%), 30 s elapsed, ETA 1.5 min"
    assert lines[1] == "sweep: 30/100 tasks (30%), 1.0 min elapsed, ETA 2.3 min [lcc-ucb]"
    assert lines[2].startswith("sweep: 30/100 tasks (30%), 2.0 min elapsed") and len(lines) == 3


def test_on_a_terminal_progress_is_a_tqdm_bar():
    stream = io.StringIO()
    with Progress(10, "compiling kernels", "configs", stream=stream, tty=True) as bar:
        bar.update(4)
        bar.write("a message")
    text = stream.getvalue()
    assert "compiling kernels" in text and "4/10" in text and "a message" in text


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(INTERVAL_ENV, "0.25")
    assert interval_seconds() == 0.25
    monkeypatch.setenv(INTERVAL_ENV, "soon")
    assert interval_seconds() == 30.0
    assert not Progress(1, "x", enabled=False, stream=io.StringIO()).tick()


@pytest.fixture
def eager(monkeypatch):
    """A plain progress line at every update (the 30 s interval, shortened)."""
    monkeypatch.setenv(INTERVAL_ENV, "0.000001")


def test_run_off_a_terminal_reports_progress(eager, capsys):
    code, _, err = invoke(
        ["run", "--algorithm", "lcc-ucb", "-N", "3", "-K", "6", "-T", "20000", "--runs", "2"],
        capsys,
    )
    assert code == 0
    assert "lcc-ucb: " in err and "agent-steps" in err and ("ETA" in err or "done" in err)


def test_sweep_off_a_terminal_reports_progress(eager, tmp_path, capsys):
    spec = _sweep_file(
        tmp_path, runs=2, name="more", algorithm="no-communication", agents=3, arms=6, horizon=300
    )
    run_sweep(load_spec(spec), tmp_path / "out", jobs=1)
    err = capsys.readouterr().err
    assert "grid: " in err and "/4 tasks" in err and "agent-steps" in err


def test_warmup_and_live_off_a_terminal_report_progress(eager, monkeypatch, capsys):
    import mamab.engine.warmup as warmup
    import mamab.live.fleet as fleet

    def fake_warmup(starting, done):
        for config in warmup.warmup_configs():
            starting(config.algorithm)
            done(config.algorithm)

    monkeypatch.setattr(warmup, "warmup", fake_warmup)
    code, _, err = invoke(["warmup"], capsys)
    assert code == 0 and "compiling kernels: " in err and "steps" in err

    def fake_live(config, sync, timeout, progress, out=None):
        from mamab.stats import run_statistics

        runs = list(config.run_ids)
        for run in runs:
            progress(run, 0.5)
        counters = np.zeros((len(runs), config.agents))
        return {
            "per_run": [
                {"run": r, "final_regret_mean": 1.0, "stopped": [], "silences": []} for r in runs
            ],
            "statistics": run_statistics(runs, np.ones(len(runs)), counters, counters),
        }

    monkeypatch.setattr(fleet, "run_live", fake_live)
    code, _, err = invoke(
        ["live", "--algorithm", "lcc-ucb", "-N", "3", "-K", "6", "-T", "50", "--runs", "2"], capsys
    )
    assert code == 0 and "live lcc-ucb: " in err and "/2 runs" in err and "run 1: 0.5 s" in err


def test_diameters_on_several_threads_at_once():
    """Runs on threads each compute their graph's diameter: the BFS uses plain threads (numba's
    workqueue layer would abort the process on concurrent parallel launches)."""
    from concurrent.futures import ThreadPoolExecutor

    from mamab.diameter import diameter

    graphs = [nx.connected_watts_strogatz_graph(1500, 4, 0.02, seed=s) for s in range(4)]
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda g: diameter(*_csr(g)), graphs))
    assert found == [nx.diameter(g) for g in graphs]
