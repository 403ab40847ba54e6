"""A plugin's faults are one line naming it (issue 20 item 4 and "Also"): arms out of range,
exceptions and exits from its code, bad parameter values, messages to non-neighbours, also from
sweep worker processes; the traceback only under ``mamab --debug``."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

import mamab
from mamab import Config, ConfigError, PluginError, simulate
from mamab.agents import registry
from mamab.algorithms.base import Agent
from mamab.cli import main
from mamab.experiments import executors
from mamab.experiments.runner import run_sweep
from mamab.experiments.spec import parse_spec

pytestmark = pytest.mark.filterwarnings("ignore::mamab.ReferenceEngineWarning")
RUN = ["run", "-N", "3", "-K", "4", "-T", "30", "--runs", "2"]


class Scripted(Agent):
    """Plays ``arm`` of ``plan`` (a function of agent id and step); never talks."""

    def __init__(self, agent_id, n_arms, horizon, neighbours, plan):
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.plan = plan

    def select_arm(self):
        return self._chose(self.plan(self.agent_id, self.clock + 1))

    def observe(self, arm, reward) -> None:
        self._accept_observation(arm, reward)
        self.clock += 1

    def rounds_after(self, step: int) -> int:
        return 0


def scripted(plan):
    """A ``make`` whose agents play ``plan(agent_id, step)``."""

    def make(topology, n_arms, horizon, params, rng):
        return [
            Scripted(i, n_arms, horizon, topology.neighbours[i], plan)
            for i in range(topology.n_agents)
        ]

    return make


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    return done.value.code, out, err


def _errors(err: str) -> list[str]:
    """stderr without the reference-engine note."""
    return [line for line in err.splitlines() if not line.startswith("mamab: note:")]


# -- item 4: every arm an agent returns is checked --------------------------------------------


BAD_ARMS = [-1, 4, 1.0, float("nan"), None, True, np.int64(-1), np.int64(4), "1", np.float64(2)]


@pytest.mark.parametrize("bad", BAD_ARMS, ids=repr)
def test_an_arm_out_of_range_stops_the_run_naming_agent_and_step(plugins, bad):
    """-1 used to run to exit 0 (numpy wraps it to arm K-1: wrong regret); the others died in
    numpy with a traceback naming neither the plugin nor the agent."""
    plugins("bad-arm", scripted(lambda i, t: bad if (i, t) == (2, 7) else 0))
    with pytest.raises(PluginError) as err:
        simulate(Config("bad-arm", agents=3, arms=4, horizon=30), engine="reference")
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("plugin algorithm 'bad-arm' (")
    assert f"failed at step 7: agent 2 returned arm {bad!r}; arms are 0..3" in text


def test_numpy_integers_in_range_are_arms(plugins):
    """np.int64, np.int32, np.uint8 arms in range play exactly as the Python ints."""

    def plan(kind):
        return lambda i, t: kind((i + t) % 4)

    results = []
    for name, kind in (
        ("py-int", int),
        ("np-int64", np.int64),
        ("np-int32", np.int32),
        ("np-uint8", np.uint8),
    ):
        plugins(name, scripted(plan(kind)))
        results.append(simulate(Config(name, agents=3, arms=4, horizon=40, runs=2), trace=True))
    for other in results[1:]:
        np.testing.assert_array_equal(other.regret, results[0].regret)
        np.testing.assert_array_equal(other.arms, results[0].arms)


def test_cli_arm_out_of_range_is_one_line_and_exit_1(plugins, capsys):
    plugins("minus-one", scripted(lambda i, t: -1 if t == 3 else 0))
    code, out, err = _cli([*RUN[:1], "--algorithm", "minus-one", *RUN[1:]], capsys)
    assert code == 1
    assert "Traceback" not in err and "median" not in out
    assert _errors(err) == [
        "mamab: error: plugin algorithm 'minus-one' (test_plugin_failures:scripted.<locals>.make) "
        "failed at step 3: agent 0 returned arm -1; arms are 0..3"
    ]


# -- exceptions and exits from a plugin's code ------------------------------------------------


class Faulty(Scripted):
    """Raises (or exits) in ``where`` at step 5 of agent 1."""

    where = ""
    fault: BaseException = ZeroDivisionError("boom")

    def select_arm(self):
        self._strike("select_arm")
        return super().select_arm()

    def observe(self, arm, reward) -> None:
        self._strike("observe")
        super().observe(arm, reward)

    def _strike(self, where: str) -> None:
        if where == self.where and self.agent_id == 1 and self.clock + 1 == 5:
            raise self.fault


class Stranger(Scripted):
    """Agent 0 messages agent 2 at step 4, on a line graph where they are not neighbours."""

    def observe(self, arm, reward) -> None:
        super().observe(arm, reward)
        if self.agent_id == 0 and self.clock == 4:
            self._outbox.append(self._message(2, ("hi",), 8))

    def rounds_after(self, step: int) -> int:
        return 1


def faulty(where: str, fault: BaseException):
    def make(topology, n_arms, horizon, params, rng):
        if where == "make":
            raise fault
        agents = [
            Faulty(i, n_arms, horizon, topology.neighbours[i], lambda i, t: 0)
            for i in range(topology.n_agents)
        ]
        for agent in agents:
            agent.where, agent.fault = where, fault
        return agents

    return make


def stranger(topology, n_arms, horizon, params, rng):
    return [
        Stranger(i, n_arms, horizon, topology.neighbours[i], lambda i, t: 0)
        for i in range(topology.n_agents)
    ]


FAULTS = [
    ("make", ZeroDivisionError("boom"), "failed in make(): ZeroDivisionError: boom"),
    (
        "select_arm",
        ZeroDivisionError("boom"),
        "failed at step 5 in Faulty.select_arm (agent 1): ZeroDivisionError: boom",
    ),
    ("observe", KeyError("k"), "failed at step 5 in Faulty.observe (agent 1): KeyError: 'k'"),
    ("make", SystemExit(0), "failed in make(): it called sys.exit(0)"),
    ("make", SystemExit(), "failed in make(): it called sys.exit(None)"),
    (
        "select_arm",
        SystemExit(3),
        "failed at step 5 in Faulty.select_arm (agent 1): it called sys.exit(3)",
    ),
    ("observe", GeneratorExit(), "failed at step 5 in Faulty.observe (agent 1): GeneratorExit"),
]


@pytest.mark.parametrize(("where", "fault", "expected"), FAULTS, ids=lambda v: repr(v)[:30])
def test_cli_plugin_fault_is_one_line_exit_1(plugins, capsys, where, fault, expected):
    """Today: 40-66 lines of traceback; sys.exit(0) in make ended `mamab run` with exit 0 and
    no output."""
    plugins("faulty", faulty(where, fault))
    code, out, err = _cli(["run", "--algorithm", "faulty", *RUN[1:]], capsys)
    assert (code, out) == (1, "")
    lines = _errors(err)
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith("mamab: error: plugin algorithm 'faulty' (")
    assert lines[0].endswith(expected)


def test_message_to_a_non_neighbour_is_one_line_exit_1(plugins, capsys):
    plugins("stranger", stranger)
    code, _, err = _cli(["run", "--algorithm", "stranger", *RUN[1:], "--graph", "line"], capsys)
    assert code == 1
    assert _errors(err) == [
        "mamab: error: plugin algorithm 'stranger' (test_plugin_failures:stranger) failed at "
        "step 4: agent 0 messaged non-neighbour 2"
    ]


def test_debug_shows_the_plugins_traceback_then_the_line(plugins, capsys):
    plugins("faulty", faulty("select_arm", ZeroDivisionError("boom")))
    code, _, err = _cli(["--debug", "run", "--algorithm", "faulty", *RUN[1:]], capsys)
    assert code == 1
    assert "Traceback" in err and "raise self.fault" in err  # the plugin's own frame
    assert err.splitlines()[-1].startswith("mamab: error: plugin algorithm 'faulty'")
    code, _, err = _cli(["run", "--algorithm", "faulty", *RUN[1:]], capsys)  # not sticky
    assert code == 1 and "Traceback" not in err


def test_debug_also_traces_an_input_error(capsys):
    code, _, err = _cli(["--debug", "run", "--algorithm", "lcc-ucb", "-N", "0"], capsys)
    assert code == 2 and "Traceback" in err and err.splitlines()[-1].startswith("mamab: error:")


def test_python_api_keeps_the_cause(plugins):
    plugins("faulty", faulty("observe", KeyError("k")))
    with pytest.raises(PluginError) as err:
        simulate(Config("faulty", agents=2, arms=3, horizon=10))
    assert isinstance(err.value.__cause__, KeyError)


def test_builtin_failures_are_not_blamed_on_a_plugin(monkeypatch):
    """A built-in's exception is mamab's bug: it keeps its type and traceback."""
    from mamab.algorithms.lcc.agent import LccUcbAgent

    def broken(self):
        raise ZeroDivisionError("ours")

    monkeypatch.setattr(LccUcbAgent, "select_arm", broken)
    with pytest.raises(ZeroDivisionError, match="ours"):
        simulate(Config("lcc-ucb", agents=2, arms=3, horizon=10), engine="reference")


# -- a bad --param value: the user's input, exit 2 --------------------------------------------


def eps_make(topology, n_arms, horizon, params, rng):
    epsilon = params.get("epsilon", 0.1)
    if not 0 <= epsilon <= 1:
        raise ConfigError(f"eps: epsilon must lie in [0, 1], got {epsilon}")
    return scripted(lambda i, t: 0)(topology, n_arms, horizon, params, rng)


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        (
            "epsilon=abc",
            "mamab: error: eps: parameter epsilon = 'abc' must be a number (its default is 0.1)",
        ),
        (
            "epsilon=true",
            "mamab: error: eps: parameter epsilon = True must be a number (its default is 0.1)",
        ),
        ("epsilon=2", "mamab: error: eps: epsilon must lie in [0, 1], got 2"),
    ],
)
def test_a_bad_param_value_is_one_line_exit_2(plugins, capsys, param, expected):
    """`--param epsilon=abc` used to end in a TypeError traceback from the plugin's comparison."""
    plugins("eps", eps_make)
    code, _, err = _cli(["run", "--algorithm", "eps", *RUN[1:], "--param", param], capsys)
    assert code == 2
    assert _errors(err) == [expected]


def test_param_get_checks_the_defaults_kind():
    params = mamab.AlgorithmParams(extra={"n": 3, "x": 1, "on": True, "mode": "a", "f": 2.5})
    assert params.get("x", 0.5) == 1 and params.get("n", 7) == 3 and params.get("on", False)
    assert (
        params.get("mode", "b") == "a" and params.get("f") == 2.5 and params.get("f", None) == 2.5
    )
    for name, default, kind in (
        ("f", 7, "an integer"),
        ("on", 1.0, "a number"),
        ("n", "s", "text"),
        ("mode", False, "true or false"),
    ):
        with pytest.raises(ConfigError, match=f"parameter {name} = .* must be {kind}"):
            params.get(name, default)


# -- sys.exit at import ---------------------------------------------------------------------


@pytest.fixture
def exiting_entry_point(tmp_path, monkeypatch):
    """An installed plugin whose module calls sys.exit(0) when imported."""
    (tmp_path / "exits_at_import.py").write_text(
        textwrap.dedent("""
            import sys
            sys.exit(0)
            def make(*args):
                return []
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from importlib.metadata import EntryPoint

    found = {
        "ep-exits": [EntryPoint("ep-exits", "exits_at_import:make", registry.ENTRY_POINT_GROUP)]
    }
    monkeypatch.setattr(registry, "_entry_points", lambda: found)
    yield
    sys.modules.pop("exits_at_import", None)


def test_sys_exit_at_import_does_not_empty_the_listing(exiting_entry_point, capsys):
    """`mamab algorithms` used to print nothing and exit 0."""
    code, out, err = _cli(["algorithms"], capsys)
    assert code == 0
    assert "lcc-ucb" in out and "ep-exits" not in out
    assert err.splitlines() == [
        "mamab: plugin algorithm 'ep-exits' (exits_at_import:make (unknown distribution)) failed "
        "to load: SystemExit: 0"
    ]


def test_sys_exit_at_import_is_one_line_for_run(exiting_entry_point, capsys):
    """`mamab run` used to exit 0 with no output."""
    code, out, err = _cli(["run", "--algorithm", "ep-exits", *RUN[1:]], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "'ep-exits'" in err and "SystemExit: 0" in err


# -- sweeps: the one line survives the worker processes ---------------------------------------


def _sweep_toml(tmp_path, algorithm: str) -> str:
    path = tmp_path / "s.toml"
    path.write_text(
        f'name = "s"\nruns = 4\nruns_per_task = 1\ngrid_points = 5\n[[experiments]]\n'
        f'algorithms = "{algorithm}"\nagents = 3\narms = 4\nhorizon = 30\n'
    )
    return str(path)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [(ZeroDivisionError("boom"), "ZeroDivisionError: boom"), (SystemExit(0), "sys.exit(0)")],
)
def test_sweep_worker_failure_is_one_line(plugins, tmp_path, capsys, monkeypatch, fault, expected):
    """Today a _RemoteTraceback (an exception) or a silent exit (sys.exit in a worker)."""
    monkeypatch.setattr(executors, "cores", lambda: 2)  # a pool of two, whatever the machine
    plugins("faulty", faulty("select_arm", fault))
    toml = _sweep_toml(tmp_path, "faulty")
    code, _, err = _cli(["sweep", toml, "--out", str(tmp_path / "out"), "--jobs", "2"], capsys)
    assert code == 1
    assert "Traceback" not in err and "_RemoteTraceback" not in err
    lines = _errors(err)
    assert len(lines) == 1 and lines[0].startswith("mamab: error: plugin algorithm 'faulty'")
    assert "at step 5 in Faulty.select_arm (agent 1)" in lines[0] and expected in lines[0]
    code, _, err = _cli(
        ["--debug", "sweep", toml, "--out", str(tmp_path / "out"), "--jobs", "2"], capsys
    )
    assert code == 1 and "raise self.fault" in err  # the worker's traceback, under --debug


def test_sweep_in_process_failure_is_a_plugin_error(plugins, tmp_path):
    plugins("faulty", faulty("observe", KeyError("k")))
    spec = parse_spec(
        {
            "name": "s",
            "runs": 2,
            "runs_per_task": 1,
            "experiments": [{"algorithms": "faulty", "agents": 2, "arms": 3, "horizon": 10}],
        }
    )
    with pytest.raises(PluginError, match="plugin algorithm 'faulty'"):
        run_sweep(spec, tmp_path / "out", jobs=1, progress=False)
