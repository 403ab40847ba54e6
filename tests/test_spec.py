"""AlgorithmSpec: one algorithm in one place, and a plugin's spec through the built-ins' door."""

from __future__ import annotations

import dataclasses
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import mamab
from mamab import ALGORITHMS, Config, ConfigError, simulate
from mamab.algorithms import registry
from mamab.cli import main
from mamab.experiments.runner import run_sweep
from mamab.experiments.spec import parse_spec

SRC = Path(mamab.__file__).parent


@pytest.fixture
def my_lcc():
    """lcc-ucb's spec under another name, registered for the test and forgotten afterwards."""
    spec = mamab.register(dataclasses.replace(mamab.algorithm_spec("lcc-ucb"), name="my-lcc"))
    yield spec
    registry.unregister_algorithm("my-lcc")


def _same(a, b) -> None:
    np.testing.assert_array_equal(a.regret, b.regret)
    np.testing.assert_array_equal(a.bits, b.bits)
    for name, values in a.counts.items():
        np.testing.assert_array_equal(values, b.counts[name])
    if a.arms is not None:
        np.testing.assert_array_equal(a.arms, b.arms)


def test_a_renamed_builtin_spec_runs_on_the_fast_engine_identically(my_lcc):
    assert my_lcc.source != "built-in" and my_lcc.fast is not None
    settings = dict(
        agents=5,
        arms=20,
        horizon=3000,
        runs=3,
        seed=11,
        graph="ring",
        loss=0.1,
        delay=0.1,
        malicious=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ReferenceEngineWarning, nothing else
        mine = simulate(Config("my-lcc", **settings), trace=True)
    theirs = simulate(Config("lcc-ucb", **settings), trace=True)
    assert mine.engine == "fast"
    _same(mine, theirs)
    assert mine.in_force()["k_prime"] == theirs.in_force()["k_prime"]


def test_a_renamed_builtin_spec_runs_in_a_sweep_and_the_cli(my_lcc, tmp_path, capsys):
    spec = parse_spec(
        {
            "name": "mine",
            "runs": 4,
            "runs_per_task": 1,
            "grid_points": 20,
            "experiments": [
                {"algorithms": ["my-lcc", "lcc-ucb"], "agents": 4, "arms": 12, "horizon": 2000}
            ],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", mamab.ReferenceEngineWarning)
        outcome = run_sweep(spec, tmp_path / "sweep", jobs=2, progress=False)
        with pytest.raises(SystemExit) as done:
            main(["run", "--algorithm", "my-lcc", "-N", "4", "-K", "12", "-T", "500"])
    assert done.value.code == 0
    by_name = {r.config["algorithm"]: r for r in outcome.results}
    assert set(by_name) == {"my-lcc", "lcc-ucb"}
    np.testing.assert_array_equal(by_name["my-lcc"].final_regret, by_name["lcc-ucb"].final_regret)
    assert "reference" not in capsys.readouterr().err


def test_live_still_refuses_a_plugin_spec(my_lcc):
    with pytest.raises(ConfigError, match="my-lcc has no wire codec"):
        registry.require_wire("my-lcc")


def test_algorithm_spec_and_register_refuse_what_they_cannot_use():
    with pytest.raises(ConfigError, match="unknown algorithm 'nope'"):
        mamab.algorithm_spec("nope")
    with pytest.raises(ConfigError, match="already registered"):
        mamab.register(mamab.algorithm_spec("lcc-ucb"))
    old = dataclasses.replace(
        mamab.algorithm_spec("lcc-ucb"),
        name="old-lcc",
        fast=mamab.FastEngine("x:y", api=mamab.KERNEL_API + 1),
    )
    with pytest.raises(ConfigError, match="kernel API"):
        mamab.register(old)
    with pytest.raises(ConfigError, match="AlgorithmSpec"):
        mamab.register("lcc-ucb")  # type: ignore[arg-type]
    assert "old-lcc" not in registry.names()


def test_tables_are_views_of_the_specs():
    from mamab.experiments.report import applies
    from mamab.plots import algorithm_colour
    from mamab.wire import ALGORITHM_IDS

    for name in ALGORITHMS:
        spec = mamab.algorithm_spec(name)
        assert ALGORITHM_IDS[name] == spec.wire.id
        assert algorithm_colour(name) == spec.colour
        assert applies("alpha", name) == ("alpha" in spec.reads)
    assert len(set(ALGORITHM_IDS.values())) == len(ALGORITHM_IDS)


def test_the_cost_model_comes_from_the_spec(my_lcc):
    from mamab.resources import estimate

    config = Config("my-lcc", agents=50, arms=500, horizon=1000)
    base = estimate(config)
    heavy = mamab.Cost(lambda n, k, shape: (1e9, 1e3))
    mamab.register(dataclasses.replace(my_lcc, name="heavy-lcc", cost=heavy))
    try:
        assert estimate(dataclasses.replace(config, algorithm="heavy-lcc")).memory > base.memory
    finally:
        registry.unregister_algorithm("heavy-lcc")


QUOTED = "\"{0}\"|'{0}'"


@pytest.mark.parametrize(
    "name", ["ucb-network", "dducb", "coop-ucb2", "gosine-robust", "lcc-ucb-robust"]
)
def test_each_name_is_written_in_its_spec_only(name):
    pattern = re.compile(QUOTED.format(re.escape(name)))
    found = sorted(
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    )
    assert len(found) == 1 and found[0].endswith("/spec.py"), found


def test_plugin_parameters_with_defaults_and_checks():
    from mamab.algorithms.ucb.spec import make_no_communication

    seen = []

    def make(topology, n_arms, horizon, params, rng):
        seen.append(params.get("epsilon"))
        return make_no_communication(topology, n_arms, horizon, params, rng)

    epsilon = mamab.Parameter("epsilon", 0.1, "in [0, 1]", check=lambda v: 0 <= v <= 1)
    spec = mamab.register(mamab.AlgorithmSpec("eps-plugin", make, parameters=(epsilon,)))
    try:
        assert spec.parameter_names == ("epsilon",)
        mamab.make_agents("eps-plugin", mamab.topology.ring(3), 4, 10)
        mamab.make_agents(
            "eps-plugin",
            mamab.topology.ring(3),
            4,
            10,
            mamab.AlgorithmParams(extra={"epsilon": 0.5}),
        )
        assert seen == [0.1, 0.5]  # the default in force when omitted
        with pytest.raises(ConfigError, match=r"eps-plugin: parameter epsilon=2 refused \(in"):
            Config(
                "eps-plugin",
                agents=3,
                arms=4,
                horizon=10,
                params=mamab.AlgorithmParams(extra={"epsilon": 2}),
            )
        with pytest.raises(ConfigError, match="takes no parameter 'eta'"):
            Config(
                "eps-plugin",
                agents=3,
                arms=4,
                horizon=10,
                params=mamab.AlgorithmParams(extra={"eta": 2}),
            )
    finally:
        registry.unregister_algorithm("eps-plugin")
