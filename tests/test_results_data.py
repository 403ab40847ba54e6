"""Results as labelled data (issue 13): Result.to_dataframe / to_xarray / save / load, networkx
graphs in Config, and metadata that records the values actually used."""

import dataclasses
import json

import numpy as np
import pytest

from mamab import Config, ConfigError, Result, simulate
from mamab.agents import AlgorithmParams
from mamab.cli import main
from mamab.columns import CONFIG_COLUMNS

nx = pytest.importorskip("networkx")


@pytest.fixture(scope="module")
def result() -> Result:
    config = Config(
        "lcc-ucb-graph",
        5,
        10,
        300,
        runs=3,
        seed=4,
        graph="erdos-renyi",
        edge_prob=0.6,
        crash_rate=0.002,
        recover_after=40,
        grid_points=15,
    )
    return simulate(config, trace=True)


def assert_same(a: Result, b: Result) -> None:
    for f in dataclasses.fields(Result):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), f.name
        elif isinstance(x, dict):
            assert list(x) == list(y), f.name
            for k in x:
                assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), k
        else:
            assert x == y, f.name


def test_dataframe_is_long_and_round_trips(result):
    pytest.importorskip("pandas")
    frame = result.to_dataframe()
    runs, agents, points = result.regret.shape
    assert len(frame) == runs * agents * points
    assert list(frame.columns[:5]) == ["run", "agent", "t", "regret", "bits"]
    assert set(CONFIG_COLUMNS) <= set(frame.columns)
    assert set(frame["edge_prob"]) == {0.6} and set(frame["algorithm"]) == {"lcc-ucb-graph"}
    back = frame.pivot_table(index=["run", "agent"], columns="t", values="regret").to_numpy()
    assert np.array_equal(back.reshape(runs, agents, points), result.regret)
    bits = frame.set_index(["run", "agent", "t"])["bits"].to_numpy().reshape(runs, agents, points)
    assert np.array_equal(bits, result.bits)
    assert set(frame["t"]) == set(result.grid.tolist()) and frame["t"].max() == 300


def test_dataframes_of_several_results_concatenate(result):
    pd = pytest.importorskip("pandas")
    other = simulate(dataclasses.replace(result.config, params=AlgorithmParams(alpha=1.0)))
    both = pd.concat([result.to_dataframe(), other.to_dataframe()])
    finals = both[both["t"] == 300].groupby("alpha", dropna=False)["regret"].mean()
    assert len(finals) == 2  # None (the default) and 1.0 are told apart


def test_xarray_has_run_agent_t_and_round_trips(result):
    pytest.importorskip("xarray")
    ds = result.to_xarray()
    assert ds["regret"].dims == ("run", "agent", "t")
    assert ds.sizes == {"run": 3, "agent": 5, "t": result.grid.size, "arm": 10}
    assert np.array_equal(ds["regret"].values, result.regret)
    assert np.array_equal(ds["bits"].values, result.bits)
    assert np.array_equal(ds["crash"].values, result.crash)
    assert np.array_equal(ds["t"].values, result.grid)
    for name, counts in result.counts.items():
        assert np.array_equal(ds[name].values, counts)
    assert Config.from_dict(json.loads(ds.attrs["config"])) == result.config
    final = ds["regret"].sel(t=300).mean("agent").values
    assert np.array_equal(final, result.regret[:, :, -1].mean(axis=1))


def test_missing_optional_dependency_is_one_clear_line(result, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_xarray(name, *args, **kwargs):
        if name == "xarray":
            raise ImportError("No module named 'xarray'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_xarray)
    monkeypatch.delitem(__import__("sys").modules, "xarray", raising=False)
    with pytest.raises(ImportError, match=r"pip install '\.\[xarray\]'"):
        result.to_xarray()


def test_save_load_is_exact(result, tmp_path):
    path = result.save(tmp_path / "r.npz")
    assert_same(result, Result.load(path))
    assert result.arms is not None and (result.crash <= 300).any()  # traced, and something crashed


def test_result_equality_is_exact_and_survives_a_round_trip(result, tmp_path):
    """``r == Result.load(r.save(p))`` raised (numpy arrays in a dataclass eq), though the docs
    promise an equal result."""
    back = Result.load(result.save(tmp_path / "r.npz"))
    assert back == result and (back != result) is False and result == result
    with pytest.raises(TypeError):
        hash(result)
    assert result != "result" and result.__eq__(None) is NotImplemented
    changes = {
        "regret": lambda r: r.regret.__setitem__((0, 0, -1), r.regret[0, 0, -1] + 1e-12),
        "bits dtype": lambda r: setattr(r, "bits", r.bits.astype(np.float64)),
        "counts": lambda r: r.counts["messages_sent"].__setitem__((0, 0), -1),
        "counter gone": lambda r: r.counts.pop("rounds"),
        "arms": lambda r: setattr(r, "arms", None),
        "crash shape": lambda r: setattr(r, "crash", r.crash[:1]),
        "config": lambda r: setattr(r, "config", dataclasses.replace(r.config, seed=5)),
        "engine": lambda r: setattr(r, "engine", "reference"),
        "runs": lambda r: setattr(r, "runs", r.runs[::-1]),
    }
    for what, change in changes.items():
        other = Result.load(tmp_path / "r.npz")
        change(other)
        assert other != result and result != other, what
    nan = Result.load(tmp_path / "r.npz")
    nan.regret[0, 0, 0] = np.nan
    twin = Result.load(tmp_path / "r.npz")
    twin.regret[0, 0, 0] = np.nan
    assert nan == twin  # NaN where the other has NaN: the same stored result


def test_run_results_compare_exactly(result):
    from mamab.engine.reference import run_reference
    from mamab.instance import make_instance
    from mamab.timegrid import time_grid

    config = result.config
    grid = time_grid(config.horizon, config.grid_points, config.grid_style)
    a, b = (run_reference(config, make_instance(config, 0), grid, trace=True) for _ in range(2))
    assert a == b
    b.arms[0, 0] += 1
    assert a != b


def test_save_load_networkx_and_untraced(tmp_path):
    config = Config(
        "lcc-ucb-graph",
        6,
        12,
        200,
        runs=2,
        graph=nx.cycle_graph(6),
        params=AlgorithmParams(alpha=1.5, sub_epochs=2),
        means=tuple(np.linspace(0, 1, 12)),
    )
    result = simulate(config)
    assert_same(result, Result.load(result.save(tmp_path / "nx.npz")))


@pytest.mark.parametrize(
    ("content", "needle"),
    [(b"not a zip", "is not a saved mamab result"), (None, "does not exist")],
)
def test_load_refuses_other_files(tmp_path, content, needle):
    path = tmp_path / "x.npz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match=needle):
        Result.load(path)


def test_load_refuses_a_task_file(tmp_path):
    np.savez(tmp_path / "t.npz", meta=np.array(json.dumps({"format": 1})), grid=np.arange(3))
    with pytest.raises(ConfigError, match="not a saved mamab result"):
        Result.load(tmp_path / "t.npz")


def test_networkx_graph_in_config_runs_like_the_named_graph():
    ring = simulate(Config("lcc-ucb-graph", 7, 14, 400, runs=2, graph="ring"))
    cycle = simulate(Config("lcc-ucb-graph", 7, 14, 400, runs=2, graph=nx.cycle_graph(7)))
    assert np.array_equal(ring.regret, cycle.regret)
    assert np.array_equal(ring.counts["bits_sent"], cycle.counts["bits_sent"])
    config = Config("lcc-ucb", 3, 6, 10, graph=nx.Graph([(2, 0), (1, 2), (0, 2)]))
    assert config.graph == "networkx" and config.edges == ((0, 2), (1, 2))
    hash(config)  # plain, hashable data


@pytest.mark.parametrize(
    ("graph", "needle"),
    [
        (lambda: nx.cycle_graph(8), "the networkx graph has 8 nodes but agents = 10"),
        (lambda: nx.relabel_nodes(nx.cycle_graph(10), {0: "a"}), "must be the integers 0..9"),
        (lambda: nx.DiGraph(nx.cycle_graph(10)), "is directed"),
        (lambda: nx.Graph([(0, 0), *((i, i + 1) for i in range(9))]), "self-loop on agent 0"),
        (lambda: 3.5, "graph must be a name, an edge-list file or a networkx graph"),
    ],
)
def test_bad_networkx_graphs_are_one_line(graph, needle):
    with pytest.raises(ConfigError, match=needle) as err:
        Config("lcc-ucb", 10, 20, 100, graph=graph())
    assert "\n" not in str(err.value)


def test_metadata_records_values_in_force(tmp_path, capsys):
    main_args = [
        "run",
        "--algorithm",
        "lcc-ucb-graph",
        "-N",
        "6",
        "-K",
        "12",
        "-T",
        "300",
        "--runs",
        "2",
        "--graph",
        "ring",
        "--out",
        str(tmp_path),
    ]
    with pytest.raises(SystemExit) as done:
        main(main_args)
    assert done.value.code == 0
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["config"]["params"]["alpha"] is None  # what was asked: the default
    # what ran: alpha 2, K' = ceil(12/6) + K_G = 2 + 2, D = 3 sub-epochs on the 6-ring
    assert meta["in_force"] == {
        "alpha": 2.0,
        "k_prime": [4, 4],
        "sub_epochs": [3, 3],
        "diameter": [3, 3],
        "max_degree": [2, 2],
    }


def test_in_force_reports_given_values():
    result = simulate(Config("gosine", 4, 8, 100, params=AlgorithmParams()))
    assert result.in_force()["alpha"] == 4.0 and "k_prime" not in result.in_force()
    result = simulate(Config("lcc-ucb", 4, 8, 100, params=AlgorithmParams(alpha=1.0, k_prime=5)))
    assert result.in_force()["alpha"] == 1.0 and result.in_force()["k_prime"] == [5]
