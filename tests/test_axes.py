"""Every configuration field is a sweep axis (issue 13): alpha, sigma, means, algorithm
parameters and faults are lists in TOML, columns in every table and labels in figures; the
Python entry point ``mamab.sweep``; start-up imports."""

import csv
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import mamab
from mamab.agents import AlgorithmParams
from mamab.cli import main
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.experiments import load_spec
from mamab.experiments.aggregate import SUMMARY_COLUMNS, read_curves
from mamab.experiments.spec import parse_spec
from mamab.experiments.tasks import config_id
from mamab.plots import labels, panel_title, panels

MEANS = [[0.1, 0.5, 0.9, 0.3], [0.2, 0.8, 0.4, 0.6]]

SPEC = f"""
name = "axes"
seed = 3
runs = 2
runs_per_task = 2
grid_points = 12

[[experiments]]
name = "noise"
algorithms = "lcc-ucb"
agents = 2
horizon = 400
reward = "gaussian"
alpha = [0.5, 4.0]
sigma = [0.2, 2.0]
means = {MEANS}
"""


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    directory = tmp_path_factory.mktemp("axes")
    spec_file = directory / "axes.toml"
    spec_file.write_text(SPEC)
    outcome = mamab.sweep(spec_file, out=directory / "out", jobs=1)
    return outcome


def test_alpha_sigma_means_axes_expand_in_order():
    spec = parse_spec(
        {
            "experiments": [
                {
                    "algorithms": "lcc-ucb",
                    "agents": 2,
                    "horizon": 400,
                    "reward": "gaussian",
                    "alpha": [0.5, 4.0],
                    "sigma": [0.2, 2.0],
                    "means": MEANS,
                }
            ]
        }
    )
    configs = [c for _, c in spec.configs]
    # configuration fields first (in Config's order), then the parameters
    assert [(c.sigma, c.means, c.params.alpha) for c in configs] == [
        (s, tuple(m), a) for s in (0.2, 2.0) for m in MEANS for a in (0.5, 4.0)
    ]
    assert {c.arms for c in configs} == {4}
    assert len({config_id(c) for c in configs}) == 8


def test_tables_carry_the_axes_and_the_numbers_follow_them(swept):
    rows = rows_of(swept.directory / "summary.csv")
    assert len(rows) == 8
    seen = {(r["alpha"], r["sigma"], r["means"]) for r in rows}
    assert seen == {
        (format(a, ".10g"), format(s, ".10g"), json.dumps(m))
        for a in (0.5, 4.0)
        for s in (0.2, 2.0)
        for m in MEANS
    }
    # every row holds the numbers of its own configuration, computed directly
    for r in rows:
        config = Config(
            "lcc-ucb",
            2,
            4,
            400,
            runs=2,
            seed=3,
            reward="gaussian",
            sigma=float(r["sigma"]),
            means=tuple(json.loads(r["means"])),
            params=AlgorithmParams(alpha=float(r["alpha"])),
            grid_points=12,
        )
        direct = mamab.simulate(config).final_regret_mean()
        assert float(r["final_regret_median"]) == pytest.approx(np.median(direct), rel=1e-12)
    finals = [float(r["final_regret_median"]) for r in rows]
    assert len(set(finals)) == 8  # alpha, sigma and means each change the results
    curves = pq.read_table(swept.directory / "curves.parquet").to_pydict()
    assert {"alpha", "sigma", "means"} <= set(curves)
    assert set(curves["alpha"]) == {0.5, 4.0} and set(curves["sigma"]) == {0.2, 2.0}


def test_figure_labels_name_the_varying_axes(swept):
    results = read_curves(swept.directory)
    grouped = panels(results)
    # alpha is the strategy: labels inside a panel; sigma and means are the setting: titles
    assert len(grouped) == 4
    across = ["sigma", "means"]
    for members in grouped.values():
        assert sorted(labels(members)) == ["LCC-UCB (α = 0.5)", "LCC-UCB (α = 4)"]
        title = panel_title(members, across)
        assert "σ = " in title and "arm means [" in title
    drawn = mamab.sweep(swept.directory.parent / "axes.toml", out=swept.directory, jobs=1)
    assert drawn.tasks_run == 0  # resumed: everything was there


def test_parameter_axis_k_prime_and_fault_axes(tmp_path):
    spec = tmp_path / "p.toml"
    spec.write_text("""
name = "params"
runs = 2
grid_points = 8
[[experiments]]
algorithms = "lcc-ucb"
agents = 3
arms = 9
horizon = 600
crash_rate = [0.0, 0.002]
recover_after = [0, 50]
loss = [0.0, 0.5]
[experiments.params]
k_prime = [5, 9]
""")
    outcome = mamab.sweep(spec, out=tmp_path / "out", jobs=1)
    rows = rows_of(tmp_path / "out" / "summary.csv")
    assert len(rows) == 16
    assert {r["k_prime"] for r in rows} == {"5", "9"}
    assert {(r["crash_rate"], r["recover_after"], r["loss"]) for r in rows} == {
        (c, b, q) for c in ("0", "0.002") for b in ("0", "50") for q in ("0", "0.5")
    }
    # K' reaches the agents: the two values give different regret, equal to a direct run
    for r in rows:
        config = Config(
            "lcc-ucb",
            3,
            9,
            600,
            runs=2,
            grid_points=8,
            crash_rate=float(r["crash_rate"]),
            recover_after=int(r["recover_after"]),
            loss=float(r["loss"]),
            params=AlgorithmParams(k_prime=int(r["k_prime"])),
        )
        result = mamab.simulate(config)
        sent = np.median(result.counts["bits_sent"].mean(axis=1))
        assert float(r["bits_sent_per_agent_median"]) == pytest.approx(sent, rel=1e-9)  # %.10g
    by_k = {k: [r["final_regret_median"] for r in rows if r["k_prime"] == k] for k in ("5", "9")}
    assert by_k["5"] != by_k["9"]
    assert outcome.tasks_run == 16


def test_means_file_is_an_axis_keyed_by_contents(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("means.txt").write_text("# two problems\n0.1, 0.9, 0.5\n0.3 0.2 0.7  # spaces too\n")
    text = (
        '[[experiments]]\nalgorithms = "no-communication"\nagents = 2\nhorizon = 50\n'
        'means_file = "means.txt"\n'
    )
    Path("s.toml").write_text(text)
    first = [c for _, c in load_spec("s.toml").configs]
    assert [c.means for c in first] == [(0.1, 0.9, 0.5), (0.3, 0.2, 0.7)]
    assert [c.arms for c in first] == [3, 3]  # arms follow the means
    Path("means.txt").write_text("0.1, 0.9, 0.5\n0.3 0.2 0.8\n")  # edit: new contents, new id
    second = [c for _, c in load_spec("s.toml").configs]
    assert config_id(first[0]) == config_id(second[0])
    assert config_id(first[1]) != config_id(second[1])


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        ({"params": {"speed": 1}}, "'speed'"),  # unknown; with plugins: "takes no parameter"
        ({"params": {"k_prime": "x"}}, "experiments[0].params.k_prime: expected int"),
        ({"params": {"k_prime": [3, 0]}}, "k_prime must be a positive integer"),
        ({"params": 3}, "experiments[0].params: expected a table"),
        ({"alpha": 1.0, "params": {"alpha": 2.0}}, "give alpha or params.alpha, not both"),
        ({"sigma": [1.0, "x"]}, "experiments[0].sigma: expected float or int, got 'x'"),
        ({"means": [[0.1, 0.2, 0.3], "x"]}, "experiments[0].means: expected"),
        ({"means": [0.1, 2.0, 0.3]}, "Bernoulli arm means must lie in [0, 1]"),
        ({"means": [0.1, 0.2]}, "2 arm means given for 3 arms"),
        (
            {"means_file": "missing.txt"},
            "experiments[0].means_file: means file missing.txt does not exist",
        ),
        ({"means": [[0.5]], "means_file": "m.txt"}, "give means or means_file, not both"),
        ({"crash_rate": [0.1, 2.0]}, "crash rate must be a probability"),
        ({"recover_after": [1, "x"]}, "experiments[0].recover_after: expected int"),
        ({"colour": "red"}, "unknown key 'colour'"),
    ],
)
def test_bad_axes_are_one_line_naming_the_key(tmp_path, capsys, block, needle):
    data = {"algorithms": "lcc-ucb", "agents": 2, "arms": 3, "horizon": 10, **block}
    if "means" in block or "means_file" in block:
        data.pop("arms") if "means_file" in block else None
    with pytest.raises(ConfigError) as err:
        parse_spec({"experiments": [data]}, "f.toml")
    assert needle in str(err.value) and str(err.value).startswith("f.toml: experiments[0]")
    lines = [f"{k} = {json.dumps(v)}" for k, v in data.items() if k != "params"]
    if isinstance(data.get("params"), dict):
        lines += [
            "[experiments.params]",
            *(f"{k} = {json.dumps(v)}" for k, v in data["params"].items()),
        ]
    elif "params" in data:
        lines.insert(0, f"params = {json.dumps(data['params'])}")
    path = tmp_path / "bad.toml"
    path.write_text("[[experiments]]\n" + "\n".join(lines) + "\n")
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(path), "--out", str(tmp_path / "out")])
    message = capsys.readouterr().err
    assert done.value.code == 2 and len(message.strip().splitlines()) == 1, message
    assert not (tmp_path / "out").exists()


def test_old_specs_keep_their_ids():
    """A spec without the new axes gives the ids it gave before issue 13 (values from main)."""
    spec = parse_spec(
        {
            "seed": 1,
            "experiments": [
                {
                    "algorithms": ["lcc-ucb", "gosine"],
                    "agents": 3,
                    "arms": 6,
                    "horizon": 100,
                    "alpha": 2,
                    "loss": [0.0, 0.5],
                }
            ],
        }
    )
    assert [config_id(c) for _, c in spec.configs] == EXPECTED_IDS


# computed with main at e1adc3b (before issue 13) from the spec above
EXPECTED_IDS = ["764dda05e65f", "4411bdf21080", "3d2326c08176", "8a1e435330e1"]


def test_summary_columns_cover_every_parameter_field():
    import dataclasses

    for f in dataclasses.fields(AlgorithmParams):
        if f.name != "extra":
            assert f.name in SUMMARY_COLUMNS


def test_sweep_from_a_dict_with_networkx_graphs(tmp_path):
    nx = pytest.importorskip("networkx")
    data = {
        "name": "nx",
        "runs": 2,
        "grid_points": 6,
        "experiments": [
            {
                "algorithms": "lcc-ucb-graph",
                "agents": 5,
                "arms": 10,
                "horizon": 200,
                "graph": [nx.cycle_graph(5), "ring"],
            }
        ],
    }
    outcome = mamab.sweep(data, out=tmp_path / "out", jobs=1)
    rows = outcome.summary
    assert [r["graph"] for r in rows] == ["networkx", "ring"]
    assert rows[0]["graph_sha256"] and not rows[1]["graph_sha256"]
    # the cycle is the ring: same numbers, different ids
    assert rows[0]["final_regret_median"] == rows[1]["final_regret_median"]
    assert rows[0]["config_id"] != rows[1]["config_id"]
    frame = outcome.curves()
    assert set(frame["graph"]) == {"networkx", "ring"}


def test_import_of_the_cli_is_light():
    """`mamab --help` must not pay for numpy, numba, matplotlib, pyarrow, networkx or zmq."""
    code = (
        "import sys, mamab.cli; heavy = ('numpy', 'numba', 'matplotlib', 'pyarrow', "
        "'networkx', 'zmq', 'pandas'); print([m for m in heavy if m in sys.modules])"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
    helped = subprocess.run(
        [sys.executable, "-m", "mamab", "--help"], capture_output=True, text=True
    )
    assert helped.returncode == 0 and "warmup" in helped.stdout and "live" in helped.stdout


def test_import_mamab_is_light_and_names_resolve():
    code = (
        "import sys, mamab; print('numpy' in sys.modules, 'networkx' in sys.modules); "
        "print(mamab.Config.__module__, mamab.sweep.__module__, mamab.simulate.__module__)"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.split("\n")[:2] == [
        "False False",
        "mamab.config mamab.experiments mamab.simulate",
    ]


def test_compile_notice_only_when_the_cache_is_cold(tmp_path, capsys, monkeypatch):
    from mamab.engine import warmup

    monkeypatch.setattr(warmup, "_said", False)
    monkeypatch.setattr(warmup, "cold", lambda algorithms: True)
    assert warmup.compile_notice(["lcc-ucb"])
    assert not warmup.compile_notice(["lcc-ucb"])  # once per process
    assert "compiling kernels (first run only" in capsys.readouterr().err
    monkeypatch.setattr(warmup, "_said", False)
    monkeypatch.setattr(warmup, "cold", lambda algorithms: False)
    assert not warmup.compile_notice(["lcc-ucb"])
    assert capsys.readouterr().err == ""


def test_kernels_compiled_from_one_source_are_warm_when_either_is_cached(monkeypatch):
    """A user whose full-communication runs all take one of the UCB baselines' kernels (by the
    faults they meet) never compiles the others: no compile notice for them on every run."""
    import mamab.algorithms.ucb.kernel as kernels
    from mamab.engine import warmup

    for cached, expected in (
        ({"ucb_chunk_faultless"}, False),
        ({"ucb_chunk"}, False),
        ({"ucb_chunk", "ucb_chunk_lossy"}, False),
        (set(), True),
    ):
        monkeypatch.setattr(
            warmup,
            "_cached",
            lambda k, cached=cached: (
                k.py_func.__module__ != kernels.__name__ or k.__name__ in cached
            ),
        )
        assert warmup.cold(["full-communication"]) is expected, cached


def test_cache_state_is_read_from_numba(tmp_path):
    """With a fresh cache directory every kernel is cold; after one run its kernel is warm."""
    code = (
        "from mamab.engine.warmup import cold; from mamab import Config, simulate; "
        "print(cold(['no-communication'])); simulate(Config('no-communication', 2, 4, 20)); "
        "print(cold(['no-communication']))"
    )
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert found.stdout.split() == ["True", "False"]


@pytest.fixture
def plugin(monkeypatch):
    """An algorithm taking plugin parameters ``epsilon`` and ``mode`` (AlgorithmParams.extra).

    With the algorithm registry (issue 13 part A) a registered plugin playing like
    no-communication; without it, a stand-in subclass of AlgorithmParams holding ``extra``.
    """
    from mamab.experiments import spec as spec_module

    if any(f.name == "extra" for f in dataclasses.fields(AlgorithmParams)):

        def make(topology, n_arms, horizon, params, rng):
            return mamab.make_agents("no-communication", topology, n_arms, horizon, None, rng)

        mamab.register_algorithm("axes-plugin", make, parameters=("epsilon", "mode"))
        yield "axes-plugin"
        mamab.unregister_algorithm("axes-plugin")
        return

    @dataclasses.dataclass(frozen=True)
    class WithExtra(AlgorithmParams):
        extra: tuple = ()

    monkeypatch.setattr(spec_module, "AlgorithmParams", WithExtra)
    monkeypatch.setattr(spec_module, "HAS_EXTRA", True)
    yield "no-communication"


def test_plugin_parameters_go_into_extra(plugin):
    """Unknown keys of [experiments.params] are a plugin's own parameters: AlgorithmParams.extra."""
    spec = parse_spec(
        {
            "experiments": [
                {
                    "algorithms": plugin,
                    "agents": 2,
                    "arms": 4,
                    "horizon": 10,
                    "params": {"epsilon": [0.1, 0.3], "mode": "greedy", "k_prime": 3},
                }
            ]
        }
    )
    params = [c.params for _, c in spec.configs]
    assert [p.extra for p in params] == [
        (("epsilon", 0.1), ("mode", "greedy")),
        (("epsilon", 0.3), ("mode", "greedy")),
    ]
    assert {p.k_prime for p in params} == {3}
    with pytest.raises(ConfigError, match=r"params\.epsilon: expected"):
        parse_spec(
            {
                "experiments": [
                    {
                        "algorithms": plugin,
                        "agents": 2,
                        "arms": 4,
                        "horizon": 10,
                        "params": {"epsilon": [[1]]},
                    }
                ]
            }
        )


def test_plugin_parameters_are_columns(plugin, tmp_path):
    """Each plugin parameter is a column ``extra.<name>`` of every table."""
    data = {
        "name": "plugin",
        "runs": 2,
        "grid_points": 5,
        "experiments": [
            {
                "algorithms": plugin,
                "agents": 2,
                "arms": 4,
                "horizon": 50,
                "params": {"epsilon": [0.1, 0.25], "mode": "greedy"},
            }
        ],
    }
    with pytest.warns(mamab.ReferenceEngineWarning):  # a plugin without a kernel of its own
        outcome = mamab.sweep(data, out=tmp_path / "out", jobs=1)
    rows = rows_of(tmp_path / "out" / "summary.csv")
    assert [(r["extra.epsilon"], r["extra.mode"]) for r in rows] == [
        ("0.1", "greedy"),
        ("0.25", "greedy"),
    ]
    header = list(rows[0])
    assert header.index("extra.epsilon") < header.index("config_id")
    curves = pq.read_table(tmp_path / "out" / "curves.parquet")
    assert curves.schema.field("extra.epsilon").type == "double"
    assert set(curves.column("extra.epsilon").to_pylist()) == {0.1, 0.25}
    assert set(
        pq.read_table(tmp_path / "out" / "finals.parquet").column("extra.mode").to_pylist()
    ) == {"greedy"}
    assert len({r["config_id"] for r in rows}) == 2 and outcome.tasks_run == 2


def test_cli_summary_names_the_varying_axes(swept, capsys):
    with pytest.raises(SystemExit) as done:
        main(
            [
                "sweep",
                str(swept.directory.parent / "axes.toml"),
                "--out",
                str(swept.directory),
                "--jobs",
                "1",
            ]
        )
    assert done.value.code == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("noise")]
    assert len(lines) == 8
    assert all("sigma=" in line and "means=[" in line and "alpha=" in line for line in lines)
    assert len(set(lines)) == 8  # every configuration's line is told apart
