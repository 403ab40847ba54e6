"""sigma applies to Gaussian rewards, edge_prob to Erdős–Rényi graphs (issue 20, "Also").

Given where it does nothing, either made a configuration distinct from (and labelled apart from)
the same simulation without it. A Config and the command line refuse it in one line; a sweep
whose axis crosses such points drops it there, so they are one configuration with the id they
always had, and refuses it where it applies to no configuration of the experiment.
"""

from __future__ import annotations

import csv

import pytest

from mamab import Config, ConfigError
from mamab.cli import main
from mamab.experiments.runner import run_sweep
from mamab.experiments.spec import parse_spec
from mamab.experiments.tasks import config_id

BASE = {"algorithms": "lcc-ucb", "agents": 3, "arms": 5, "horizon": 10}


def configs(**block) -> list[Config]:
    return [c for _, c in parse_spec({"experiments": [{**BASE, **block}]}).configs]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"sigma": 0.5},
            "sigma applies to gaussian rewards only, not to bernoulli ones (got sigma = 0.5)",
        ),
        (
            {"graph": "ring", "edge_prob": 0.3},
            "an edge probability applies to the erdos-renyi graph only, not to 'ring' (got 0.3)",
        ),
        ({"edge_prob": 1.0}, "not to 'complete'"),
    ],
)
def test_config_refuses_what_does_not_apply(fields, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        Config("lcc-ucb", 3, 5, 10, **fields)
    assert "\n" not in str(err.value)


def test_config_takes_them_where_they_apply():
    assert Config("lcc-ucb", 3, 5, 10, reward="gaussian", sigma=0.5).sigma == 0.5
    assert Config("lcc-ucb", 3, 5, 10, graph="erdos-renyi", edge_prob=0.3).edge_prob == 0.3
    assert Config("lcc-ucb", 3, 5, 10, sigma=1.0).sigma == 1.0  # the default: nothing given


def test_edge_prob_on_a_graph_file_is_refused(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n")
    with pytest.raises(ConfigError, match="applies to the erdos-renyi graph only"):
        Config("lcc-ucb", 3, 5, 10, graph=str(path), edge_prob=0.5)


@pytest.mark.parametrize(
    "flags", [["--sigma", "0.5"], ["--graph", "ring", "--edge-prob", "0.3"], ["--edge-prob", "0.3"]]
)
def test_cli_refuses_them_in_one_line(flags, capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "--algorithm", "lcc-ucb", "-N", "2", "-K", "3", "-T", "5", *flags])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.splitlines()) == 1 and "applies to" in err


def test_sweep_sigma_axis_crossed_with_reward_keeps_one_bernoulli_configuration():
    """Today: four configurations, two of them the same Bernoulli simulation labelled apart."""
    found = configs(sigma=[0.5, 1.0], reward=["bernoulli", "gaussian"])
    assert [(c.reward, c.sigma) for c in found] == [
        ("bernoulli", 1.0),
        ("gaussian", 0.5),
        ("gaussian", 1.0),
    ]
    # the ids are those of the same configurations without the crossing (as before this change)
    assert [config_id(c) for c in found] == ["e9ba65f62919", "288153609530", "a8c96e137fbd"]
    assert config_id(configs()[0]) == "e9ba65f62919"  # a sweep without sigma: id unchanged


def test_sweep_edge_prob_axis_crossed_with_graph_keeps_one_ring_configuration():
    found = configs(edge_prob=[0.3, 0.5], graph=["erdos-renyi", "ring"])
    assert [(c.graph, c.edge_prob) for c in found] == [
        ("erdos-renyi", 0.3),
        ("erdos-renyi", 0.5),
        ("ring", None),
    ]
    assert [config_id(c) for c in found] == ["a2e2e5b8158e", "ab8631e204b3", "ca5b4d0b6939"]
    assert config_id(configs(graph="ring")[0]) == "ca5b4d0b6939"


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        ({"sigma": 0.5}, "experiments[0].sigma: applies only where reward = 'gaussian'"),
        ({"sigma": [0.5, 2.0], "reward": "bernoulli"}, "experiments[0].sigma: applies only"),
        (
            {"edge_prob": 0.5, "graph": ["ring", "line"]},
            "experiments[0].edge_prob: applies only where graph = 'erdos-renyi'",
        ),
        ({"edge_prob": 2.0}, "edge probability must lie in (0, 1]"),  # the value first
        (
            {"sigma": [0.5, -1.0], "reward": ["bernoulli", "gaussian"]},
            "Gaussian sigma must be a positive",
        ),
    ],
)
def test_sweep_refuses_what_applies_to_no_configuration(block, needle):
    with pytest.raises(ConfigError) as err:
        configs(**block)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_sweep_default_sigma_with_bernoulli_is_accepted():
    assert [(c.reward, c.sigma) for c in configs(sigma=1.0)] == [("bernoulli", 1.0)]


def test_crossed_sweep_runs_and_labels_each_configuration_once(tmp_path):
    spec = parse_spec(
        {
            "name": "cross",
            "runs": 1,
            "grid_points": 5,
            "experiments": [
                {
                    "algorithms": "lcc-ucb",
                    "agents": 2,
                    "arms": 3,
                    "horizon": 20,
                    "sigma": [0.5, 2.0],
                    "reward": ["bernoulli", "gaussian"],
                }
            ],
        }
    )
    outcome = run_sweep(spec, tmp_path, jobs=1, progress=False)
    assert outcome.tasks_run == 3
    with (tmp_path / "summary.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert sorted((r["reward"], float(r["sigma"])) for r in rows) == [
        ("bernoulli", 1.0),
        ("gaussian", 0.5),
        ("gaussian", 2.0),
    ]
