"""The algorithm registry: built-ins and plugins through one door, the reference fallback."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import warnings
from importlib.metadata import EntryPoint

import networkx as nx
import numpy as np
import pytest

import mamab
from mamab import AlgorithmParams, Config, ConfigError, ReferenceEngineWarning, simulate
from mamab.agents import ALGORITHMS, registry
from mamab.algorithms.base import Agent
from mamab.cli import main
from mamab.experiments import tasks as task_files
from mamab.experiments.runner import run_sweep
from mamab.experiments.spec import parse_spec
from mamab.instance import make_instance
from mamab.problem import noise_chunks
from mamab.timegrid import time_grid
from mamab.topology import Topology, complete

LCC_MAKE = mamab.algorithm_spec("lcc-ucb").make


class RandomAgent(Agent):
    """Plays a uniform arm from its own stream; never talks."""

    def __init__(self, agent_id, n_arms, horizon, neighbours, rng):
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.rng = rng

    def select_arm(self) -> int:
        return self._chose(int(self.rng.integers(self.n_arms)))

    def observe(self, arm, reward) -> None:
        self._accept_observation(arm, reward)
        self.clock += 1

    def rounds_after(self, step: int) -> int:
        return 0


def make_random(topology, n_arms, horizon, params, rng):
    streams = rng.spawn(topology.n_agents)
    return [
        RandomAgent(i, n_arms, horizon, topology.neighbours[i], streams[i])
        for i in range(topology.n_agents)
    ]


# -- the door --------------------------------------------------------------------------------


def test_builtins_register_through_the_same_door():
    assert registry.names()[: len(ALGORITHMS)] == list(ALGORITHMS)
    for name in ALGORITHMS:
        info = registry.lookup(name)
        assert info.fast and info.wire and info.source == "built-in"
        assert info.default_alpha == (4.0 if name in ("gosine", "gosine-robust", "dducb") else 2.0)
    assert {n for n in ALGORITHMS if registry.lookup(n).needs_connected} == {
        "lcc-ucb-graph",
        "lcc-ucb-relay",
        "dducb",
    }
    assert {n for n in ALGORITHMS if registry.lookup(n).central_server} == {"demab"}


def test_codec_table_is_a_view_of_the_specs():
    from mamab.wire import ALGORITHM_IDS, KINDS

    assert {n: registry.lookup(n).wire.id for n in ALGORITHMS} == ALGORITHM_IDS
    assert {n: len(k) for n, k in KINDS.items()} == {
        n: len(registry.lookup(n).wire.kinds) for n in ALGORITHMS
    }
    assert all(registry.lookup(n).fast is not None for n in ALGORITHMS)


def test_plugin_metadata_defaults_are_safe(plugins):
    info = plugins("random-play", make_random)
    assert (info.fast, info.wire, info.needs_connected, info.splits_arms, info.central_server) == (
        None,
        None,
        False,
        False,
        False,
    )
    assert info.default_alpha is None and info.parameters is None
    assert info.source.endswith("make_random")
    assert "random-play" in registry.names()


@pytest.mark.parametrize("name", ["lcc-ucb", "random-play"])
def test_name_clash_raises(plugins, name):
    plugins("random-play", make_random)
    with pytest.raises(ConfigError, match="already registered"):
        mamab.register_algorithm(name, make_random)


@pytest.mark.parametrize(
    ("name", "make", "metadata", "message"),
    [
        ("x-fast", make_random, {"fast": True}, "no fast kernel"),
        ("x-wire", make_random, {"wire": True}, "wire codec"),
        ("x-key", make_random, {"color": "red"}, "unknown metadata 'color'"),
        ("x-flag", make_random, {"splits_arms": "yes"}, "True or False"),
        ("x-alpha", make_random, {"default_alpha": -1}, "positive"),
        ("x-call", 42, {}, "callable"),
        ("x-src", make_random, {"source": "built-in"}, "only mamab's own"),
        ("bad name", make_random, {}, "spaces"),
        ("", make_random, {}, "printable string"),
    ],
)
def test_bad_registrations_are_one_line(name, make, metadata, message):
    with pytest.raises(ConfigError, match=message):
        mamab.register_algorithm(name, make, **metadata)
    assert name not in registry.names()


def test_unknown_algorithm_lists_the_names(plugins):
    plugins("random-play", make_random)
    with pytest.raises(
        ConfigError, match=r"unknown algorithm 'nope'; choose one of lcc-ucb.*random-play"
    ):
        Config("nope", agents=2, arms=3, horizon=5)
    with pytest.raises(ConfigError, match="string"):
        registry.lookup(["lcc-ucb"])


def test_metadata_decorator_and_keywords(plugins):
    make = mamab.algorithm_metadata(description="d", splits_arms=True)(make_random)
    info = plugins("decorated", make, description="override")
    assert info.splits_arms and info.description == "override"
    with pytest.raises(ConfigError, match="K >= N"):
        Config("decorated", agents=4, arms=3, horizon=5)
    with pytest.raises(ConfigError, match="unknown metadata"):
        mamab.algorithm_metadata(speed=3)


def test_unregister_refuses_builtins():
    with pytest.raises(ConfigError, match="built in"):
        registry.unregister_algorithm("lcc-ucb")


# -- plugin parameters ----------------------------------------------------------------------


def test_extra_parameters_are_frozen_sorted_and_readable():
    params = AlgorithmParams(extra={"b": 1, "a": np.float64(0.5), "flag": np.bool_(True), "s": "x"})
    assert params.extra == (("a", 0.5), ("b", 1), ("flag", True), ("s", "x"))
    assert type(params.get("a")) is float and type(params.get("flag")) is bool
    assert params.get("missing", 7) == 7
    assert dict(params.options) == dict(params.extra)
    with pytest.raises(TypeError):
        params.options["a"] = 1  # read-only
    assert hash(params) == hash(
        AlgorithmParams(extra=[("s", "x"), ("flag", True), ("b", 1), ("a", 0.5)])
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"e": float("nan")}, "finite number"),
        ({"e": [1]}, "finite number"),
        ({"alpha": 1.0}, "identifier other than"),
        ({"2x": 1.0}, "identifier"),
        ([("e", 1), ("e", 2)], "given twice"),
        ("e=1", "mapping"),
    ],
)
def test_bad_extra_parameters_are_refused(extra, message):
    with pytest.raises(ConfigError, match=message):
        AlgorithmParams(extra=extra)


def test_declared_parameters_are_enforced(plugins):
    plugins("with-eps", make_random, parameters=["epsilon"])
    Config("with-eps", agents=2, arms=3, horizon=5, params=AlgorithmParams(extra={"epsilon": 0.1}))
    with pytest.raises(ConfigError, match="takes no parameter 'eps'"):
        Config("with-eps", agents=2, arms=3, horizon=5, params=AlgorithmParams(extra={"eps": 0.1}))
    with pytest.raises(ConfigError, match="lcc-ucb takes no parameter"):
        Config("lcc-ucb", agents=2, arms=3, horizon=5, params=AlgorithmParams(extra={"eps": 0.1}))


def test_config_ids_without_extra_are_unchanged(plugins):
    """Adding the (empty) extra field must not move the ids of existing task files."""
    plugins("random-play", make_random)
    config = Config("random-play", agents=2, arms=4, horizon=10)
    assert "extra" not in task_files.config_key(config)["params"]
    with_extra = Config(
        "random-play", agents=2, arms=4, horizon=10, params=AlgorithmParams(extra={"e": 1})
    )
    assert task_files.config_key(with_extra)["params"]["extra"] == [["e", 1]]
    assert task_files.config_id(with_extra) != task_files.config_id(config)


# -- what make() returns ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda t, k, h, p, r: make_random(t, k, h, p, r)[:-1], "list of 3 agents, got 2"),
        (lambda t, k, h, p, r: tuple(make_random(t, k, h, p, r)), "got tuple"),
        (lambda t, k, h, p, r: make_random(t, k, h, p, r)[::-1], "agent_id 0"),
        (lambda t, k, h, p, r: [*make_random(t, k, h, p, r)[:2], "x"], "item 2"),
    ],
)
def test_what_make_returns_is_checked(plugins, make, message):
    plugins("broken-make", make)
    with pytest.raises(ConfigError, match=message):
        mamab.make_agents("broken-make", complete(3), 4, 10)


def test_plugin_needing_a_connected_graph(plugins):
    plugins("connected-only", make_random, needs_connected=True)
    graph = nx.Graph([(0, 1), (2, 3)])
    with pytest.raises(ConfigError, match="needs a connected graph"):
        mamab.make_agents("connected-only", Topology.from_networkx(graph), 4, 10)


# -- the reference fallback ------------------------------------------------------------------


def test_fallback_equals_the_fast_kernel_and_is_said_once(plugins):
    """A plugin wrapping LCC-UCB's make falls back to the reference engine: same numbers."""
    plugins("wrapped-lcc", LCC_MAKE)
    kw = dict(agents=4, arms=12, horizon=3000, runs=2, seed=5, grid_points=40, loss=0.1)
    with pytest.warns(ReferenceEngineWarning, match="wrapped-lcc has no fast kernel"):
        plugin = simulate(Config("wrapped-lcc", **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per process: no second warning
        again = simulate(Config("wrapped-lcc", **kw))
    fast = simulate(Config("lcc-ucb", **kw), engine="fast")
    assert (plugin.engine, fast.engine) == ("reference", "fast")
    np.testing.assert_array_equal(plugin.regret, fast.regret)
    np.testing.assert_array_equal(plugin.bits, fast.bits)
    np.testing.assert_array_equal(again.regret, fast.regret)
    for name in fast.counts:
        np.testing.assert_array_equal(plugin.counts[name], fast.counts[name])


def _by_hand(name: str, config: Config, run: int) -> np.ndarray:
    """Drive make()'s agents with the run's noise table: (agents, grid) regret, no engine."""
    inst = make_instance(config, run)
    make = registry.lookup(name).make
    agents = make(
        inst.topology, config.arms, config.horizon, config.params, inst.algorithm_rng(config.seed)
    )
    grid = time_grid(config.horizon, config.grid_points)
    regret, recorded, t = np.zeros(config.agents), [], 0
    for noise in noise_chunks(
        inst.noise_rng(config.seed), config.reward, config.agents, config.horizon
    ):
        for row in noise:
            for agent in agents:
                arm = agent.select_arm()
                agent.observe(arm, inst.problem.reward_of(arm, float(row[agent.agent_id])))
                regret[agent.agent_id] += inst.problem.gaps[arm]
            t += 1
            while batch := [m for agent in agents for m in agent.outgoing()]:
                for message in batch:
                    agents[message.receiver].receive(message)
            if t in grid:
                recorded.append(regret.copy())
    return np.array(recorded).T


@pytest.mark.parametrize(
    ("name", "make"), [("random-play", make_random), ("wrapped-lcc", LCC_MAKE)]
)
@pytest.mark.parametrize("reward", ["bernoulli", "gaussian"])
def test_fallback_equals_the_agents_driven_by_hand(plugins, name, make, reward):
    plugins(name, make)
    config = Config(
        name, agents=3, arms=7, horizon=600, runs=2, seed=11, grid_points=30, reward=reward
    )
    with pytest.warns(ReferenceEngineWarning):
        result = simulate(config, engine="fast")
    for i, run in enumerate(result.runs):
        np.testing.assert_array_equal(result.regret[i], _by_hand(name, config, run))


def test_plugin_without_reset_cannot_recover_in_one_line(plugins):
    plugins("random-play", make_random)  # RandomAgent has no reset()
    config = Config("random-play", agents=2, arms=3, horizon=50, crash_at=(10, 0), recover_after=5)
    with pytest.raises(ConfigError, match="random-play: RandomAgent cannot recover from a crash"):
        simulate(config, engine="reference")
    simulate(dataclasses.replace(config, recover_after=0), engine="reference")


def test_cli_says_it_once_in_one_line(plugins, capsys):
    plugins("random-play", make_random)
    for _ in range(2):
        with pytest.raises(SystemExit) as exit_:
            main(
                [
                    "run",
                    "--algorithm",
                    "random-play",
                    "-N",
                    "3",
                    "-K",
                    "5",
                    "-T",
                    "50",
                    "--runs",
                    "2",
                ]
            )
        assert exit_.value.code == 0
    out, err = capsys.readouterr()
    assert "random-play" in out
    assert err.count("\n") == 1 and err.startswith("mamab: note: random-play has no fast kernel")


def test_cli_param_reaches_the_plugin(plugins, capsys):
    seen = []

    def make(topology, n_arms, horizon, params, rng):
        seen.append(dict(params.options))
        return make_random(topology, n_arms, horizon, params, rng)

    plugins("param-echo", make)
    with pytest.raises(SystemExit):
        main(
            [
                "run",
                "--algorithm",
                "param-echo",
                "-N",
                "2",
                "-K",
                "3",
                "-T",
                "5",
                "--runs",
                "1",
                "--param",
                "epsilon=0.25",
                "--param",
                "mode=greedy",
                "--param",
                "n=3",
                "--param",
                "on=true",
            ]
        )
    assert seen == [{"epsilon": 0.25, "mode": "greedy", "n": 3, "on": True}]
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--algorithm", "param-echo", "--param", "epsilon"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "mamab: error: --param takes NAME=VALUE, got 'epsilon'"
    )


def test_cli_unknown_algorithm_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--algorithm", "nope"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown algorithm 'nope'; choose one of lcc-ucb" in err


def test_live_refuses_a_plugin(plugins, capsys):
    from mamab.wire import WireSpec

    plugins("random-play", make_random)
    with pytest.raises(ConfigError, match="random-play has no wire codec"):
        WireSpec("random-play", 5, 3)
    with pytest.raises(SystemExit) as exit_:
        main(["live", "--algorithm", "random-play", "-N", "2", "-K", "3", "-T", "5", "--runs", "1"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no wire codec" in err


def test_sweep_runs_a_plugin_in_worker_processes(plugins, tmp_path, monkeypatch):
    plugins("random-play", make_random)
    spec = parse_spec(
        {
            "name": "plug",
            "runs": 4,
            "runs_per_task": 1,
            "grid_points": 20,
            "experiments": [
                {"algorithms": ["random-play", "lcc-ucb"], "agents": 3, "arms": 6, "horizon": 300}
            ],
        }
    )
    with pytest.warns(ReferenceEngineWarning, match="random-play"):
        outcome = run_sweep(spec, tmp_path, jobs=2, progress=False)
    assert outcome.tasks_run == 8
    direct = simulate(Config("random-play", agents=3, arms=6, horizon=300, runs=4, grid_points=20))
    got = next(r for r in outcome.results if r.config["algorithm"] == "random-play")
    np.testing.assert_allclose(got.final_regret, direct.final_regret)
    metas = [
        json.loads(str(np.load(p)["meta"])) for p in sorted((tmp_path / "tasks").glob("*.npz"))
    ]
    plugin_metas = [m for m in metas if m["config"]["algorithm"] == "random-play"]
    assert len(plugin_metas) == 4
    assert all(m["provenance"]["plugin"]["algorithm"] == "random-play" for m in plugin_metas)
    assert all("plugin" not in m["provenance"] for m in metas if m not in plugin_metas)
    assert run_sweep(spec, tmp_path, jobs=1, progress=False).tasks_run == 0  # resumed: all kept
    # the plugin's code changed: its task files (only) are recomputed
    changed = {"algorithm": "random-play", "source": "x", "code": "0" * 16}
    monkeypatch.setattr(
        task_files, "plugin_fingerprint", lambda name: changed if name == "random-play" else None
    )
    again = run_sweep(spec, tmp_path, jobs=1, progress=False)
    assert (again.tasks_run, again.tasks_other_code) == (4, 4)


# -- entry points ------------------------------------------------------------------------------


def _fake_entry_points(monkeypatch, *entries: tuple[str, str]) -> None:
    found: dict[str, list[EntryPoint]] = {}
    for name, value in entries:
        found.setdefault(name, []).append(EntryPoint(name, value, registry.ENTRY_POINT_GROUP))
    monkeypatch.setattr(registry, "_entry_points", lambda: found)


def test_entry_points_load_lazily_and_once(monkeypatch, plugins):
    _fake_entry_points(monkeypatch, ("ep-random", "test_registry:make_random"))
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent))
    assert "ep-random" in registry.names()
    assert "ep-random" not in registry._registry  # listed by name, not imported
    info = registry.lookup("ep-random")
    try:
        assert info.make.__name__ == "make_random" and "test_registry:make_random" in info.source
        assert registry.lookup("ep-random") is info
    finally:
        registry.unregister_algorithm("ep-random")


def test_broken_plugin_is_one_line(monkeypatch):
    _fake_entry_points(monkeypatch, ("ep-broken", "no_such_module_xyz:make"))
    with pytest.raises(ConfigError) as err:
        registry.lookup("ep-broken")
    text = str(err.value)
    assert "\n" not in text and "plugin algorithm 'ep-broken'" in text
    assert "ModuleNotFoundError" in text and "no_such_module_xyz" in text
    found, broken = registry.algorithms()
    assert "ep-broken" not in [a.name for a in found] and len(broken) == 1


def test_entry_point_clashes(monkeypatch):
    _fake_entry_points(
        monkeypatch,
        ("twice", "mamab.algorithms.coop.spec:make_coop"),
        ("twice", "mamab.algorithms.demab.spec:make_demab"),
        ("lcc-ucb", "mamab.algorithms.coop.spec:make_coop"),
    )
    with pytest.raises(ConfigError, match="provided by several plugins"):
        registry.lookup("twice")
    assert registry.lookup("lcc-ucb").source == "built-in"  # the built-in keeps its name
    _, broken = registry.algorithms()
    assert any("'lcc-ucb'" in line and "ignored" in line for line in broken)


def test_cli_help_names_every_built_in():
    from mamab.cli_types import ALGORITHM_HELP, BUILT_IN

    assert BUILT_IN == ALGORITHMS
    assert ALGORITHM_HELP.startswith(f"Algorithm every agent runs: {', '.join(ALGORITHMS)}, or a")


def test_unknown_algorithm_flag_imports_nothing_heavy():
    code = (
        "import sys\n"
        "from mamab.cli import main\n"
        "try:\n"
        "    main(['run', '--algorithm', 'nope'])\n"
        "except SystemExit as e:\n"
        "    print(e.code, 'numpy' in sys.modules, 'mamab.agents' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "False", "False"]
    assert out.stderr.startswith("mamab: error: Invalid value for '--algorithm': unknown algorithm")
    assert "choose one of lcc-ucb, lcc-ucb-graph" in out.stderr


def test_cli_start_imports_no_plugin_and_no_numba():
    code = (
        "import sys\n"
        "from mamab.cli import cli\n"
        "from mamab.agents import registry\n"
        "try:\n"
        "    cli.main(['run', '--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('numba' in sys.modules, registry._entry_points.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False 0"


def test_warmup_configurations_are_all_valid():
    from mamab.engine.warmup import warmup_configs

    configs = list(warmup_configs())
    assert {c.algorithm for c in configs} == set(ALGORITHMS)
