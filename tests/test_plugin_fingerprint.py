"""A plugin's fingerprint covers everything that defines it (issue 20, item 2).

Defined in a script or a notebook, registered, swept; then only the agent's ``select_arm``
changes and the sweep is run again: its task files must be recomputed, not reused.
"""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import mamab
from mamab.agents import registry
from mamab.algorithms.base import Agent

SPEC = {
    "name": "plug",
    "runs": 2,
    "runs_per_task": 1,
    "grid_points": 10,
    "experiments": [{"algorithms": "my-plugin", "agents": 2, "arms": 5, "horizon": 200}],
}

#: A notebook cell: the agent and its make, exec'd (no source file, inspect.getsource fails).
CELL = """
from mamab.algorithms.base import Agent

class CellAgent(Agent):
    def select_arm(self):
        return self._chose(ARM)

    def observe(self, arm, reward):
        self._accept_observation(arm, reward)
        self.clock += 1

    def rounds_after(self, step):
        return 0

def make(topology, n_arms, horizon, params, rng):
    return [CellAgent(i, n_arms, horizon, topology.neighbours[i])
            for i in range(topology.n_agents)]
"""


def define(choose):
    """A plugin as a script defines it: an agent class and a ``make`` naming it. Only
    ``select_arm`` depends on ``choose``; ``make``'s own source is the same every time."""

    class ScriptAgent(Agent):
        def select_arm(self) -> int:
            return self._chose(choose(self))

        def observe(self, arm, reward) -> None:
            self._accept_observation(arm, reward)
            self.clock += 1

        def rounds_after(self, step: int) -> int:
            return 0

    def make(topology, n_arms, horizon, params, rng):
        return [
            ScriptAgent(i, n_arms, horizon, topology.neighbours[i])
            for i in range(topology.n_agents)
        ]

    return make


def exec_cell(cell: str, arm: int, name: str | None = "__main__"):
    namespace = {"ARM": arm} if name is None else {"__name__": name, "ARM": arm}
    exec(compile(cell, "<notebook cell>", "exec"), namespace)
    return namespace["make"]


@pytest.fixture
def register():
    """Register ``my-plugin`` (again: the old registration is dropped first); forget it after."""

    def add(make):
        if "my-plugin" in registry._registry:
            registry.unregister_algorithm("my-plugin")
        mamab.register_algorithm("my-plugin", make)

    yield add
    if "my-plugin" in registry._registry:
        registry.unregister_algorithm("my-plugin")


def sweep(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", registry.ReferenceEngineWarning)
        return mamab.sweep(SPEC, out=tmp_path / "out", jobs=1, progress=False)


def test_a_changed_select_arm_recomputes_the_sweep(register, tmp_path):
    register(define(lambda agent: 0))  # always the first arm
    first = sweep(tmp_path)
    assert first.tasks_run == 2
    register(define(lambda agent: agent.n_arms - 1))  # only select_arm differs
    second = sweep(tmp_path)
    assert (second.tasks_run, second.tasks_other_code) == (2, 2)  # today: ran 0, skipped 2
    before, after = first.results[0].final_regret, second.results[0].final_regret
    assert not np.array_equal(before, after)
    assert sweep(tmp_path).tasks_run == 0  # unchanged: reused


def test_a_plugin_without_source_is_fingerprinted_by_its_code(register, tmp_path):
    """exec'd code (a notebook) has no source file: its code objects are hashed instead."""
    import inspect

    make = exec_cell(CELL, 0)
    with pytest.raises(OSError):
        inspect.getsource(make)
    register(make)
    first = registry.plugin_fingerprint("my-plugin")
    assert sweep(tmp_path).tasks_run == 2
    register(exec_cell(CELL, 0))  # the cell run again, unchanged
    assert registry.plugin_fingerprint("my-plugin") == first
    assert sweep(tmp_path).tasks_run == 0
    register(exec_cell(CELL.replace("self._chose(ARM)", "self._chose(ARM + 1)"), 0))
    assert registry.plugin_fingerprint("my-plugin") != first
    assert sweep(tmp_path).tasks_run == 2
    register(exec_cell(CELL, 3))  # a global the agent reads
    assert registry.plugin_fingerprint("my-plugin") != first


def test_code_exec_without_a_module_name_counts(register):
    """exec() into a bare namespace: functions have no __module__, classes say 'builtins'."""
    make = exec_cell(CELL, 0, name=None)
    assert make.__globals__["CellAgent"].__module__ == "builtins"
    register(make)
    first = registry.plugin_fingerprint("my-plugin")
    register(exec_cell(CELL.replace("self._chose(ARM)", "self._chose(ARM + 1)"), 0, name=None))
    assert registry.plugin_fingerprint("my-plugin") != first


def test_redefining_without_registering_again_counts_too(register):
    """The fingerprint is not remembered per name: a class changed in place changes it."""
    make = exec_cell(CELL, 0)
    register(make)
    first = registry.plugin_fingerprint("my-plugin")
    make.__globals__["CellAgent"].select_arm = lambda self: self._chose(1)
    assert registry.plugin_fingerprint("my-plugin") != first


def test_a_callable_object_as_make_counts_its_class_and_state(register):
    class Maker:
        def __init__(self, arm):
            self.arm = arm

        def __call__(self, topology, n_arms, horizon, params, rng):
            return exec_cell(CELL, self.arm)(topology, n_arms, horizon, params, rng)

    register(Maker(0))
    first = registry.plugin_fingerprint("my-plugin")
    register(Maker(0))
    assert registry.plugin_fingerprint("my-plugin") == first
    register(Maker(1))
    assert registry.plugin_fingerprint("my-plugin") != first


def test_the_fingerprint_is_the_same_in_every_process():
    """Workers and the main process must agree: no ids, no hash-seed dependent order."""
    code = (
        "import json, sys, mamab\n"
        "ns = {'__name__': '__main__', 'ARM': frozenset({'a', 'b', 'c'})}\n"
        "exec(compile(sys.argv[1], '<cell>', 'exec'), ns)\n"
        "mamab.register_algorithm('my-plugin', ns['make'], parameters=['x'])\n"
        "from mamab.algorithms.registry import plugin_fingerprint\n"
        "print(json.dumps(plugin_fingerprint('my-plugin')))\n"
    )
    seen = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code, CELL], capture_output=True, text=True, env=env, check=True
        )
        seen.add(done.stdout.strip())
    assert len(seen) == 1
    assert json.loads(seen.pop())["algorithm"] == "my-plugin"


def test_an_installed_plugin_counts_its_package_files(tmp_path, monkeypatch, register):
    package = tmp_path / "myplug"
    package.mkdir()
    (package / "__init__.py").write_text("from myplug.agent import make\n")
    (package / "agent.py").write_text(CELL.replace("ARM", "0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import myplug

    register(myplug.make)
    first = registry.plugin_fingerprint("my-plugin")
    (package / "helpers.py").write_text("X = 1\n")  # a file of the package that make does not name
    assert registry.plugin_fingerprint("my-plugin") != first
    monkeypatch.delitem(sys.modules, "myplug")
    monkeypatch.delitem(sys.modules, "myplug.agent")


def test_a_module_the_plugin_reads_is_named_not_walked():
    """A plugin reading ``np.…`` named numpy's whole namespace, whose order (``numpy.__all__``)
    changes with the hash seed: every process got another fingerprint (found by the tutorial)."""
    code = (
        "import json, sys, mamab\n"
        "import numpy as np\n"
        "ns = {'__name__': '__main__', 'np': np}\n"
        "exec(compile(sys.argv[1], '<cell>', 'exec'), ns)\n"
        "mamab.register_algorithm('np-plugin', ns['make'])\n"
        "from mamab.algorithms.registry import plugin_fingerprint\n"
        "print(json.dumps(plugin_fingerprint('np-plugin')))\n"
    )
    cell = CELL.replace("ARM", "int(np.zeros(1)[0])")
    assert "np.zeros" in cell
    seen = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code, cell], capture_output=True, text=True, env=env, check=True
        )
        seen.add(done.stdout.strip())
    assert len(seen) == 1
