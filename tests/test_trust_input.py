"""Input and output guarantees (issue 12, items 4, 6, 7, 8): strict JSON, finite and bounded
parameters that both engines accept alike, size checks before any work, --out checked first,
graph files read once and refused line by line, workers that die with their parent."""

import errno
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from procs import alive, children

from mamab import cli, resources
from mamab import topology as topo
from mamab.agents import ALGORITHMS, AlgorithmParams
from mamab.algorithms.registry import supports_faults
from mamab.cli import main
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.experiments.executors import LocalExecutor
from mamab.instance import make_instance
from mamab.simulate import simulate
from mamab.storage import strict_json

SMALL = ["run", "--algorithm", "lcc-ucb", "-N", "3", "-K", "6", "-T", "60", "--runs", "2"]


def invoke(args, capsys):
    with pytest.raises(SystemExit) as done:
        main(args)
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


def one_line_error(code, err) -> bool:
    return code == 2 and err.startswith("mamab: error:") and len(err.strip().splitlines()) == 1


def strict_load(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity, as RFC 8259 does."""

    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


# ---- item 4: strict JSON, finite parameters, int64 bounds, one acceptance rule for both engines


def test_no_survivor_writes_null_not_nan(tmp_path, capsys):
    code, out, err = invoke([*SMALL, "--crash-rate", "1", "--out", str(tmp_path / "o")], capsys)
    assert code == 0, err
    assert "no honest agent survived" in out and "nan" not in out
    for name in ("summary.json", "metadata.json"):
        strict_load((tmp_path / "o" / name).read_text())
    summary = strict_load((tmp_path / "o" / "summary.json").read_text())
    assert all(r["final_regret_mean_survivors"] is None for r in summary["per_run"])


@given(
    st.recursive(
        st.floats() | st.integers() | st.text(max_size=3) | st.none(),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=8,
    )
)
def test_strict_json_is_rfc8259_and_keeps_finite_values(data):
    loaded = strict_load(strict_json(data))

    def same(a, b):
        if isinstance(a, float):
            return b is None if not math.isfinite(a) else b == a
        if isinstance(a, dict):
            return set(a) == set(b) and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        return a == b

    assert same(data, loaded)


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--alpha", "inf"),
        ("--alpha", "nan"),
        ("--alpha", "-inf"),
        ("--sigma", "inf"),
        ("--sigma", "nan"),
        ("--sigma", "1e308"),
        ("--edge-prob", "nan"),
        ("--edge-prob", "inf"),
        ("--loss", "nan"),
        ("--loss", "inf"),
        ("--delay", "nan"),
        ("--crash-rate", "inf"),
        ("--recover-after", "1e20"),
        ("--recover-after", str(10**20)),
        ("-T", "1e20"),
        ("-T", str(10**20)),
        ("--seed", str(2**64)),
        ("--runs", str(2**70)),
        ("--grid-points", str(2**63)),
        ("-N", str(2**63)),
    ],
)
def test_non_finite_or_unbounded_parameters_are_one_line_errors(flag, value, tmp_path, capsys):
    code, _, err = invoke(
        [*SMALL, "--reward", "gaussian", flag, value, "--out", str(tmp_path / "o")], capsys
    )
    assert one_line_error(code, err), err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["alpha", "gossip_exponent", "consensus_kappa"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_algorithm_constants_are_refused(name, value):
    with pytest.raises(ConfigError):
        Config("gosine", 2, 4, 10, params=AlgorithmParams(**{name: value}))


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_recovery_delay_at_int64_max_means_never_back(engine):
    """2**63 - 1 must not wrap: it is 'never back within T', exactly like recover_after = 0."""
    kw = dict(algorithm="lcc-ucb", agents=3, arms=6, horizon=200, runs=2, crash_rate=0.02)
    huge = simulate(Config(**kw, recover_after=2**63 - 1), engine=engine, trace=True)
    never = simulate(Config(**kw, recover_after=0), engine=engine, trace=True)
    assert (huge.crash <= 200).any()  # something crashed, so the delay mattered
    assert np.array_equal(huge.crash, never.crash)
    assert np.array_equal(huge.arms, never.arms) and np.array_equal(huge.regret, never.regret)


ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
SIGMAS = st.one_of(
    st.floats(1e-3, 1e3),
    ANY_FLOAT,
    st.sampled_from([1e100, 1e100 * (1 + 2**-52), 1e308, 5e307, 1e-300, 0.0, -1.0]),
)


@settings(max_examples=60, deadline=None)
@given(
    algorithm=st.sampled_from(ALGORITHMS),
    sigma=SIGMAS,
    alpha=st.one_of(st.none(), st.floats(0.1, 10), ANY_FLOAT),
    mean=st.one_of(st.floats(0, 1), ANY_FLOAT, st.sampled_from([1e100, -1e100, 1e101])),
    seed=st.integers(0, 2**32),
    crash_rate=st.one_of(st.just(0.0), st.floats(0, 0.2), ANY_FLOAT),
    recover_after=st.one_of(st.integers(0, 40), st.integers(-1, 2**64)),
)
def test_engines_accept_and_refuse_the_same_configs(
    algorithm, sigma, alpha, mean, seed, crash_rate, recover_after
):
    """Whatever the numbers, both engines refuse (one ConfigError) or give identical results."""
    outcome = []
    for engine in ("fast", "reference"):
        try:
            config = Config(
                algorithm,
                agents=2,
                arms=3,
                horizon=30,
                seed=seed,
                reward="gaussian",
                sigma=sigma,
                means=(mean, 0.5, 0.25),
                crash_rate=crash_rate,
                recover_after=recover_after,
                params=AlgorithmParams(alpha=alpha),
            )
            outcome.append(simulate(config, engine=engine, trace=True))
        except ConfigError as err:
            assert "\n" not in str(err)
            outcome.append("refused")
    fast, ref = outcome
    event("refused" if isinstance(fast, str) else "simulated")
    assert (fast == "refused") == (ref == "refused")
    if fast != "refused":
        assert np.array_equal(fast.arms, ref.arms) and np.array_equal(fast.regret, ref.regret)
        assert all(np.array_equal(fast.counts[k], ref.counts[k]) for k in fast.counts)


# ---- item 6: size checks before any work, no structure an algorithm never uses


@pytest.mark.parametrize(
    "extra, word",
    [
        (["-N", "1000000000", "-K", "1000000000"], "memory"),
        (["--algorithm", "no-communication", "-K", "1000000000"], "memory"),
        (["--runs", "1000000000"], "memory"),
        (["-T", "1000000000000000"], "limit"),
        (["--algorithm", "full-communication", "-N", "20000"], "memory"),
    ],
)
def test_absurd_sizes_are_refused_before_any_work(extra, word, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "simulate", lambda *a, **k: pytest.fail("simulated anyway"))
    started = time.perf_counter()
    code, _, err = invoke([*SMALL, *extra, "--out", str(tmp_path / "o")], capsys)
    assert one_line_error(code, err), err
    assert word in err and ("GiB" in err or "TiB" in err or "years" in err)
    assert time.perf_counter() - started < 5 and not (tmp_path / "o").exists()


def test_simulate_refuses_what_does_not_fit_the_memory_it_is_given(monkeypatch):
    config = Config("lcc-ucb", agents=4, arms=8, horizon=100, runs=2)
    found = resources.estimate(config)
    resources.check(found, memory=int(found.memory * 2))  # fits
    with pytest.raises(ConfigError, match="memory is available"):
        resources.check(found, memory=int(found.memory / 2))
    monkeypatch.setattr(resources, "available_memory", lambda: 1000)
    with pytest.raises(ConfigError, match="memory"):
        simulate(config)


@pytest.mark.parametrize(
    "kw",
    [
        dict(algorithm="lcc-ucb", agents=1000, arms=1000, horizon=300),
        dict(algorithm="lcc-ucb-relay", agents=300, arms=300, horizon=300),
        dict(algorithm="lcc-ucb-robust", agents=2000, arms=2000, horizon=5000, graph="ring"),
        dict(algorithm="no-communication", agents=200, arms=2000, horizon=300),
        # its blocks within the cache: 64 steps (1 MB), not 4096 (64 MB)
        dict(algorithm="no-communication", agents=2000, arms=10, horizon=5000),
        dict(algorithm="full-communication", agents=500, arms=50, horizon=50),
        dict(algorithm="gosine", agents=50, arms=100, horizon=20000, grid_points=10000),
    ],
)
def test_memory_estimate_is_within_a_factor_of_the_measured_peak(kw):
    """The model may be generous, but must not miss: estimate >= half the traced peak, and not
    absurdly above it (at most 6x)."""
    import tracemalloc

    config = Config(**kw, runs=2)
    topo.complete.cache_clear()
    simulate(Config(**{**kw, "horizon": 5}, runs=1))  # load the kernels outside the trace
    topo.complete.cache_clear()
    tracemalloc.start()
    try:
        simulate(config, jobs=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    found = resources.estimate(config, jobs=2).memory
    assert 0.5 * peak <= found <= 6 * peak, (found, peak)


def test_no_communication_builds_no_graph_for_20000_agents():
    config = Config("no-communication", agents=20000, arms=2, horizon=2, runs=1)
    started = time.perf_counter()
    instance = make_instance(config, 0)
    assert isinstance(instance.topology, topo.UnbuiltTopology)
    assert instance.topology.max_degree == 19999 and instance.topology.diameter == 1
    result = simulate(config)
    assert result.max_degree.tolist() == [19999] and result.diameter.tolist() == [1]
    assert time.perf_counter() - started < 20


@pytest.mark.parametrize("kind", ["complete", "ring", "line", "star", "grid"])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 6, 7, 9, 12])
def test_unbuilt_named_graphs_report_what_the_built_ones_do(kind, n):
    built, described = topo.build(kind, n), topo.build(kind, n, edges=False)
    assert (described.name, described.n_agents, described.diameter, described.max_degree) == (
        built.name,
        built.n_agents,
        built.diameter,
        built.max_degree,
    )


@pytest.mark.parametrize(
    "n, p, seed", [(1, 0.5, 0), (2, 1.0, 1), (7, 0.5, 2), (40, 0.2, 3), (90, 0.12, 4)]
)
def test_blocked_erdos_renyi_draws_the_same_graph_as_one_big_draw(n, p, seed, monkeypatch):
    """The sparse construction consumes the 'graph' stream exactly as rng.random(n(n-1)/2) did."""
    import networkx as nx

    rng = np.random.default_rng(seed)
    rows, cols = np.triu_indices(n, 1)
    while True:
        keep = rng.random(rows.size) < p
        g = nx.empty_graph(n)
        g.add_edges_from(zip(rows[keep].tolist(), cols[keep].tolist(), strict=True))
        if nx.is_connected(g):
            break
    monkeypatch.setattr(topo, "PAIR_BLOCK", 17)  # many blocks, rows split across none
    drawn = topo.erdos_renyi(n, p, np.random.default_rng(seed))
    assert drawn.neighbours == tuple(tuple(sorted(g.neighbors(v))) for v in range(n))


@pytest.mark.slow
def test_erdos_renyi_with_100000_agents_is_built_sparsely():
    """G(10^5, 3e-4): the dense construction needed tens of GiB; the blocked one, its edges."""
    import tracemalloc

    tracemalloc.start()
    try:
        graph = topo.erdos_renyi(100_000, 3e-4, np.random.default_rng(0), tries=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    edges = sum(map(len, graph.neighbours)) / 2
    assert abs(edges - 3e-4 * 100_000 * 99_999 / 2) < 0.01 * edges
    assert peak < 2 * 1024**3, peak
    config = Config("lcc-ucb", 100_000, 100_000, 10, graph="erdos-renyi", edge_prob=3e-4)
    assert resources.estimate(config).parts["graph"] >= 0.5 * peak


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), p=st.floats(0.05, 1.0), seed=st.integers(0, 10**6))
def test_diameter_matches_networkx(n, p, seed):
    import networkx as nx

    g = nx.gnp_random_graph(n, p, seed=seed)
    if nx.is_connected(g):
        assert topo.Topology.from_networkx(g).diameter == (0 if n == 1 else nx.diameter(g))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_smaller_noise_blocks_for_many_agents_change_nothing(algorithm, monkeypatch):
    """Blocks shrink for large N (a 4096-step block of N = 10^5 is 3 GiB): results are the same."""
    import mamab.problem

    refuses = not supports_faults(algorithm)  # dducb, ucb-network
    faults = {} if refuses else dict(crash_rate=0.002, recover_after=50, loss=0.1, delay=0.1)
    graph = "ring" if refuses else "complete"
    config = Config(algorithm, agents=4, arms=8, horizon=700, runs=1, graph=graph, **faults)
    whole = simulate(config, trace=True)
    monkeypatch.setattr(mamab.problem, "MAX_CHUNK_VALUES", 4 * 37)  # 37-step blocks
    blocks = simulate(config, trace=True)
    assert np.array_equal(whole.arms, blocks.arms) and np.array_equal(whole.regret, blocks.regret)
    assert all(np.array_equal(whole.counts[k], blocks.counts[k]) for k in whole.counts)


def test_progress_counts_every_agent_step_in_both_engines():
    config = Config("gosine", agents=3, arms=6, horizon=5000, runs=2)
    for engine in ("fast", "reference"):
        done = []
        simulate(config, engine=engine, progress=done.append)
        assert sum(done) == 2 * 3 * 5000 and len(done) >= 4


def test_long_work_is_announced(monkeypatch, capsys):
    monkeypatch.setattr(cli, "LONG_SECONDS", 0.0)
    code, _, err = invoke(SMALL, capsys)
    assert code == 0 and "estimated about" in err and "agent-steps" in err


# ---- item 7: --out checked before the work; a full disk; graph files


def _bad_out(tmp_path: Path, case: str) -> Path:
    if case == "file":
        (tmp_path / "f").write_text("x")
        return tmp_path / "f"
    if case == "file-parent":
        (tmp_path / "f").write_text("x")
        return tmp_path / "f" / "sub"
    if case == "dangling":
        (tmp_path / "d").symlink_to(tmp_path / "missing")
        return tmp_path / "d"
    if case == "loop":
        (tmp_path / "loop").symlink_to(tmp_path / "loop")
        return tmp_path / "loop" / "sub"
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["file", "file-parent", "dangling", "loop"])
def test_unusable_out_is_refused_before_the_simulation(case, tmp_path, capsys, monkeypatch):
    out = _bad_out(tmp_path, case)
    before = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.setattr(
        cli, "simulate", lambda *a, **k: pytest.fail("simulated before --out check")
    )
    code, _, err = invoke([*SMALL, "--out", str(out)], capsys)
    assert one_line_error(code, err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("nested", [False, True])
def test_read_only_out_or_parent_is_refused_first(nested, tmp_path, capsys, monkeypatch):
    locked = tmp_path / "ro"
    locked.mkdir()
    out = locked / "new" if nested else locked
    monkeypatch.setattr(
        cli, "simulate", lambda *a, **k: pytest.fail("simulated before --out check")
    )
    if os.geteuid() == 0:  # root writes anywhere: stand in for the kernel's refusal
        import mamab.storage

        def refuse(directory):
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(mamab.storage, "_probe", refuse)
    locked.chmod(0o500)
    try:
        code, _, err = invoke([*SMALL, "--out", str(out)], capsys)
    finally:
        locked.chmod(0o700)
    assert one_line_error(code, err) and "Permission denied" in err
    assert list(locked.iterdir()) == []


def test_full_disk_leaves_earlier_results_whole(tmp_path, capsys, monkeypatch):
    out = tmp_path / "o"
    code, _, _ = invoke([*SMALL, "--out", str(out)], capsys)
    assert code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(table, path):
        Path(path).write_bytes(b"PAR1 half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli, "write_table", full)
    code, _, err = invoke([*SMALL, "--seed", "9", "--out", str(out)], capsys)
    assert one_line_error(code, err) and "No space left" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporaries either


@pytest.mark.parametrize("line", ["1 ²", "١ 2", "0 1.0", "0 x", "0 1 2", "0 -1", "2 2"])
def test_graph_file_tokens_are_refused_naming_file_and_line(line, tmp_path, capsys):
    path = tmp_path / "edges.txt"
    path.write_text(f"# comment\n0 1\n{line}\n", encoding="utf-8")
    code, _, err = invoke([*SMALL, "--graph", str(path)], capsys)
    assert one_line_error(code, err), err
    assert str(path) in err and "line 3" in err


def test_graph_file_is_read_once_per_process_and_again_when_it_changes(tmp_path, monkeypatch):
    path = tmp_path / "edges.txt"
    path.write_text("0 1\n1 2\n")
    reads = []
    original = topo._parse_edge
    monkeypatch.setattr(topo, "_parse_edge", lambda *a: reads.append(a[1]) or original(*a))
    config = Config("lcc-ucb-graph", agents=3, arms=6, horizon=50, runs=4, graph=str(path))
    first = simulate(config)
    assert len(reads) == 2  # two lines, read once for four runs (and the estimate)
    path.write_text("0 1\n1 2\n0 2\n")  # edited: a triangle now
    second = simulate(config)
    assert len(reads) == 5
    assert first.diameter.tolist() == [2] * 4 and second.diameter.tolist() == [1] * 4


# ---- item 8: workers die with their parent, --jobs capped


def test_jobs_are_capped_at_the_cores_available(capsys):
    assert LocalExecutor(1000).jobs == resources.cores()
    code, _, err = invoke([*SMALL, "--jobs", "1000"], capsys)
    assert code == 0 and err.count("capped at") == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_no_worker_survives_sigkill_of_the_parent(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        'name = "k"\nruns = 8\nruns_per_task = 1\n[[experiments]]\n'
        'algorithms = "coop-ucb2"\nagents = 20\narms = 100\nhorizon = 200000\n'
    )
    parent = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mamab",
            "sweep",
            str(spec),
            "--out",
            str(tmp_path / "o"),
            "--jobs",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(workers) < 2:
            workers = [w for w in children(parent.pid) if alive(w)]
            time.sleep(0.2)
        assert len(workers) == 2, "the sweep never started its workers"
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(alive(w) for w in workers):
            time.sleep(0.1)
        assert not any(alive(w) for w in workers), "a worker outlived its parent"
    finally:
        for pid in [*workers, parent.pid]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        parent.wait(10)
