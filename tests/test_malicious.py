"""Malicious agents: who lies, what a liar sends, and regret counted over honest agents only.

The engines' exact agreement under every attack is in test_engines_agree.py; each algorithm's
own tests check that its liars' forged arms reach their receivers.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mamab import Config, simulate
from mamab.algorithms.base import Message
from mamab.algorithms.registry import can_lie
from mamab.attacks import ATTACKS, FIXED, RANDOM, TRUTHFUL, attack_plan, draw_liars, liars_of
from mamab.engine.attack_kernel import forged
from mamab.errors import ConfigError
from mamab.result import Result

MEANS = np.array([0.5, 0.9, 0.1, 0.8, 0.1, 0.3])  # best 1, worst 2 (lowest index), second 3


def test_attack_plans_pick_the_named_arms() -> None:
    worst, second = attack_plan("worst", MEANS, 7), attack_plan("best-second", MEANS, 7)
    assert (worst.code, worst.fixed) == (FIXED, 2)
    assert (second.code, second.fixed) == (FIXED, 3)
    random = attack_plan("random", MEANS, 7)
    assert random.code == RANDOM and random.pool.tolist() == [0, 2, 3, 4, 5]  # all but the best
    assert attack_plan("truthful", MEANS, 7).code == TRUTHFUL
    one_arm = attack_plan("worst", np.array([0.4]), 7)
    assert one_arm.code == TRUTHFUL  # nothing to lie about with one arm


def test_a_random_liar_never_recommends_the_best_arm_and_covers_the_others() -> None:
    plan = attack_plan("random", MEANS, 12345)
    arms = {plan.arm(step, 0, 1, -1) for step in range(2000)}
    assert arms == {0, 2, 3, 4, 5}


@settings(max_examples=200, deadline=None)
@given(
    key=st.integers(0, 2**63 - 1),
    step=st.integers(0, 2**40),
    sender=st.integers(0, 999),
    receiver=st.integers(0, 999),
    attack=st.sampled_from(ATTACKS),
)
def test_the_kernels_forge_the_reference_arm(key, step, sender, receiver, attack) -> None:
    plan = attack_plan(attack, MEANS, key)
    fast = forged(plan.code, plan.fixed, plan.pool, plan.key, step, sender, receiver, 4)
    assert fast == plan.arm(step, sender, receiver, 4)


def test_who_lies_is_drawn_per_run_from_its_own_stream() -> None:
    mask, key = draw_liars(3, 0, 10, 0)
    assert not mask.any() and key == 0  # nobody lies: nothing drawn
    masks = [draw_liars(3, run, 10, 4)[0] for run in range(6)]
    assert all(m.sum() == 4 for m in masks)
    assert len({m.tobytes() for m in masks}) > 1  # a new draw every run
    assert np.array_equal(draw_liars(3, 2, 10, 4)[0], masks[2])  # and reproducible
    ids, _ = draw_liars(3, 0, 10, (1, 7))
    assert np.flatnonzero(ids).tolist() == [1, 7]


def test_liars_forge_only_their_own_messages() -> None:
    config = Config("lcc-ucb", 4, 8, 100, malicious=(2,), attack="worst")
    mask, liars = liars_of(config, 0, [*MEANS[:4].tolist(), 0.2, 0.2, 0.2, 0.2])
    assert mask.tolist() == [False, False, True, False] and liars is not None
    honest, liar = Message(0, 1, 3, 3, 10), Message(2, 1, 1, 3, 10)
    assert liars(honest) is honest
    assert liars(liar) == Message(2, 1, 2, 3, 10)  # the worst arm (mean 0.1), the same bits
    _, nobody = liars_of(dataclasses.replace(config, malicious=0), 0, MEANS)
    assert nobody is None


@pytest.mark.parametrize(
    "bad, says",
    [
        (-1, "number of agents in 0..4"),
        (5, "number of agents in 0..4"),
        (True, "number of agents"),
        (2.0, "number of agents"),
        ((0, 0), "distinct"),
        ((0, 5), "distinct agents in 0..4"),
        ((0, 1, 2, 3, 4), "at least one must be honest"),
        ("2", "number of agents"),
    ],
)
def test_bad_malicious_values_are_refused(bad, says) -> None:
    with pytest.raises(ConfigError, match=says):
        Config("lcc-ucb", 5, 10, 100, malicious=bad)


def test_unknown_attacks_and_algorithms_without_liars_are_refused() -> None:
    with pytest.raises(ConfigError, match="attack must be one of"):
        Config("lcc-ucb", 5, 10, 100, malicious=1, attack="loud")
    for algorithm in ("demab", "full-communication", "coop-ucb2", "dducb", "ucb-network"):
        assert not can_lie(algorithm)
        with pytest.raises(ConfigError, match="no model of malicious agents"):
            Config(algorithm, 5, 10, 100, malicious=1)
        Config(algorithm, 5, 10, 100, malicious=0)  # fine: nobody lies


def test_ids_are_kept_sorted_and_an_empty_list_means_nobody() -> None:
    assert Config("lcc-ucb", 5, 10, 100, malicious=[3, 1]).malicious == (1, 3)
    assert Config("lcc-ucb", 5, 10, 100, malicious=[]).malicious == 0
    config = Config("lcc-ucb", 5, 10, 100, malicious=(1, 3))
    assert Config.from_dict(json.loads(json.dumps(config.to_dict()))) == config


@pytest.mark.parametrize("engine", ["reference", "fast"])
def test_regret_means_leave_the_liars_out(engine) -> None:
    config = Config("lcc-ucb", 6, 12, 600, runs=3, malicious=2, seed=5)
    result = simulate(config, engine=engine)
    assert result.malicious.sum(axis=1).tolist() == [2, 2, 2]
    honest = ~result.malicious
    expect = [result.final_regret[i][honest[i]].mean() for i in range(3)]
    assert np.allclose(result.final_regret_mean(), expect)
    summary = result.summary()["per_run"]
    for i, run in enumerate(summary):
        assert run["malicious_agents"] == np.flatnonzero(result.malicious[i]).tolist()
        assert run["final_regret_mean"] == pytest.approx(expect[i])


def test_without_liars_the_summary_has_no_malicious_key() -> None:
    result = simulate(Config("lcc-ucb", 4, 8, 300, runs=2), engine="reference")
    assert not result.malicious.any()
    assert all("malicious_agents" not in run for run in result.summary()["per_run"])
    assert result.summary()["per_run"][0]["final_regret_mean"] == result.final_regret[0].mean()


def test_truthful_liars_leave_the_honest_agents_where_they_were() -> None:
    base = Config("gosine", 6, 12, 1500, runs=2, seed=9)
    honest = simulate(base, engine="reference")
    told = simulate(dataclasses.replace(base, malicious=3, attack="truthful"), engine="reference")
    assert np.array_equal(honest.regret, told.regret)
    for name in honest.counts:
        assert np.array_equal(honest.counts[name], told.counts[name])


def test_the_malicious_mask_survives_save_and_load(tmp_path) -> None:
    result = simulate(Config("lcc-ucb", 4, 8, 200, runs=2, malicious=(0,)), engine="reference")
    back = Result.load(result.save(tmp_path / "r.npz"))
    assert np.array_equal(back.malicious, result.malicious)
    assert np.array_equal(back.final_regret_mean(), result.final_regret_mean())


def test_ids_of_configurations_without_liars_are_unchanged() -> None:
    from mamab.experiments.tasks import KEYED_FIELDS, config_id

    assert not {"malicious", "attack"} & KEYED_FIELDS  # left out of ids at their defaults
    plain = Config("lcc-ucb", 3, 9, 100, runs=4)
    assert config_id(plain) == config_id(dataclasses.replace(plain, malicious=0))
    assert config_id(dataclasses.replace(plain, malicious=1)) != config_id(plain)


def test_a_sweep_takes_counts_and_id_lists_as_one_axis(tmp_path) -> None:
    from mamab.experiments import sweep

    spec = tmp_path / "liars.toml"
    spec.write_text(
        'name = "liars"\nruns = 2\n[[experiments]]\nname = "m"\n'
        'algorithms = ["lcc-ucb"]\nagents = 4\narms = 8\nhorizon = 300\n'
        'malicious = [0, 1, [0, 2]]\nattack = "random"\n'
    )
    rows = sweep(spec, tmp_path / "out", jobs=1).summary
    assert sorted(r["malicious"] for r in rows) == ["0", "1", "[0, 2]"]
    import pyarrow.parquet as pq

    finals = pq.read_table(tmp_path / "out" / "finals.parquet").to_pydict()
    assert sum(finals["liar"]) == 2 * 1 + 2 * 2  # runs × liars of each configuration
    assert sorted(set(finals["malicious"])) == ["0", "1", "[0, 2]"]  # the configuration column


def test_a_sweep_written_before_the_liars_existed_still_resumes(tmp_path) -> None:
    """Its metadata.json has configurations without the fields added since: same sweep."""
    from mamab.experiments import sweep

    spec = tmp_path / "old.toml"
    spec.write_text(
        'name = "old"\nruns = 2\n[[experiments]]\nname = "a"\n'
        'algorithms = ["lcc-ucb"]\nagents = 3\narms = 6\nhorizon = 200\n'
    )
    out = tmp_path / "out"
    sweep(spec, out, jobs=1)
    meta = json.loads((out / "metadata.json").read_text())
    for experiment in meta["spec"]["experiments"]:
        for config in experiment["configs"]:
            del config["malicious"], config["attack"], config["params"]["block_exponent"]
    (out / "metadata.json").write_text(json.dumps(meta))
    again = sweep(spec, out, jobs=1)
    assert again.tasks_run == 0 and again.tasks_skipped == 1


@pytest.mark.parametrize(
    "flag, says",
    [
        ("1,,2", "neither a number"),
        (",", "neither a number"),
        ("a", "neither a number"),
        ("10", "number of agents in 0..3"),
        ("0,0", "distinct"),
        ("0,4", "distinct agents in 0..3"),
    ],
)
def test_bad_malicious_flags_are_one_line(flag, says, capsys, tmp_path) -> None:
    from mamab.cli import main

    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "--algorithm",
                "lcc-ucb",
                "-N",
                "4",
                "-K",
                "8",
                "-T",
                "100",
                "--malicious",
                flag,
                "--out",
                str(out),
            ]
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and says in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_malicious_flags_name_counts_and_ids() -> None:
    from mamab.cli_types import MaliciousAgents, malicious_flag

    parse = MaliciousAgents().convert
    assert parse("2", None, None) == 2
    assert parse("0,3", None, None) == (0, 3)
    assert parse("3,", None, None) == (3,)  # agent 3 alone
    for value in (2, (0, 3), (3,)):
        assert parse(malicious_flag(value), None, None) == value  # what live nodes are given
