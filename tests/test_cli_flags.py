"""The command line's flags: every one documented with its default, algorithm parameters set
through ``--param`` from the specs, typos answered with the nearest name, live commands that
refuse what they cannot do in one line (issue 22, "Command line")."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from mamab.cli import cli, main

#: A help text says its default: "[default: ...]" (click's show_default, or written by hand).
DEFAULT_NOTE = re.compile(r"\[default: [^\]]+\]")


def every_command() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli, info_name="mamab")
    return [(name, cli.get_command(ctx, name)) for name in cli.list_commands(ctx)]


def options_without_help_or_default() -> list[str]:
    """Every visible option of every command that lacks a help line, or (unless it is a plain
    on/off flag, off by default, or required) a note of its default."""
    missing = []
    for name, command in [("mamab", cli), *every_command()]:
        ctx = click.Context(command, info_name=name)
        for param in command.get_params(ctx):
            if not isinstance(param, click.Option) or param.hidden:
                continue
            record = param.get_help_record(ctx)
            text = record[1] if record else ""
            flag = param.opts[0]
            if not (param.help or "").strip():
                missing.append(f"{name} {flag}: no help")
            elif not (
                (param.is_flag and not param.secondary_opts)
                or param.required
                or DEFAULT_NOTE.search(text)
            ):
                missing.append(f"{name} {flag}: no default in {text!r}")
    return missing


def test_every_flag_has_help_and_its_default():
    assert options_without_help_or_default() == []


def test_the_walker_sees_a_missing_default():
    @click.command()
    @click.option("--out", default=None, help="Where.")
    @click.option("--reward", default="x", show_default=True)
    def probe(out, reward):
        """A probe."""

    cli.add_command(probe)
    try:
        assert options_without_help_or_default() == [
            "probe --out: no default in 'Where.'",
            "probe --reward: no help",
        ]
    finally:
        del cli.commands["probe"]


def invoke(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_top_level_help_does_not_cut_command_summaries(capsys):
    code, out, _ = invoke(["--help"], capsys)
    assert code == 0 and "..." not in out.split("Commands:")[1]
    flat = " ".join(out.split())
    assert "whether it takes faults (loss, delay, crashes) and liars (--malicious)." in flat
    assert "over the roster's authenticated network." in flat  # a lazy command's, not imported


def test_no_deprecated_click_helper():
    import mamab.cli

    assert "make_default_short_help" not in vars(mamab.cli)


# -- --param: every parameter the chosen algorithm reads --------------------------------------

#: A valid value, away from the default, of every built-in parameter.
VALUES = {
    "alpha": ("3", 3.0),
    "k_prime": ("4", 4),
    "sub_epochs": ("2", 2),
    "gossip_exponent": ("2.5", 2.5),
    "consensus_kappa": ("0.5", 0.5),
    "demab_radius": ("16", 16.0),
    "demab_best_arm": ("own", "own"),
    "relay_k_prime": ("degree", "degree"),
    "dducb_epsilon": ("0.1", 0.1),
    "dducb_index": ("per-stage", "per-stage"),
    "block_exponent": ("1.5", 1.5),
}


def read_pairs() -> list[tuple[str, str]]:
    from mamab import ALGORITHMS
    from mamab.algorithms.registry import lookup

    return [(a, name) for a in ALGORITHMS for name in lookup(a).reads]


def small(algorithm: str, params=(), **kw):
    from mamab.options import problem_config

    return problem_config(
        algorithm, 3, 9, 400, 4, "ring", None, "bernoulli", 1.0, None, params=params, **kw
    )


def test_every_built_in_parameter_has_a_test_value_and_a_listed_meaning():
    from mamab.algorithms.params import FIELD_DOCS
    from mamab.cli_params import BUILT_IN_DEFAULTS

    assert set(VALUES) == set(BUILT_IN_DEFAULTS) == set(FIELD_DOCS)
    assert {name for _, name in read_pairs()} == set(VALUES)  # each is read by some algorithm


@pytest.mark.parametrize(("algorithm", "name"), read_pairs())
def test_param_sets_each_parameter_the_algorithm_reads(algorithm, name):
    text, value = VALUES[name]
    config = small(algorithm, [f"{name}={text}"])
    assert getattr(config.params, name) == value
    assert config != small(algorithm)  # and it is a new configuration


def test_a_run_with_param_gives_the_python_results(tmp_path, capsys):
    import json

    from mamab import AlgorithmParams, Config, simulate

    args = ["run", "--algorithm", "lcc-ucb", "-N", "3", "-K", "9", "-T", "400", "--runs", "2"]
    code, _, err = invoke([*args, "--param", "k_prime=4", "--out", str(tmp_path / "r")], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    want = simulate(Config("lcc-ucb", 3, 9, 400, runs=2, params=AlgorithmParams(k_prime=4)))
    got = [r["final_regret_per_agent"] for r in summary["per_run"]]
    assert got == want.final_regret.tolist()
    default = simulate(Config("lcc-ucb", 3, 9, 400, runs=2))
    assert got != default.final_regret.tolist()


def test_runs_that_set_no_parameter_keep_their_configuration_id():
    from mamab import Config
    from mamab.experiments.tasks import config_id

    given = small("lcc-ucb")
    assert given.params == Config("lcc-ucb", 3, 9, 400).params
    assert config_id(given) == config_id(Config("lcc-ucb", 3, 9, 400, seed=4, graph="ring"))
    # a parameter given at its default is the same configuration
    assert config_id(small("gosine", ["gossip_exponent=3"])) == config_id(small("gosine"))


RUN = ["run", "--algorithm", "lcc-ucb", "-N", "3", "-K", "9", "-T", "100", "--runs", "1"]


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (
            ["--param", "demab_radius=16"],
            ["lcc-ucb does not read parameter 'demab_radius'", "it reads alpha, k_prime"],
        ),
        (["--param", "k_prme=4"], ["did you mean 'k_prime'?", "it reads alpha, k_prime"]),
        (["--param", "epsilon=0.1"], ["does not read parameter 'epsilon'"]),
        (
            ["--algorithm", "demab", "--param", "alpha=2"],
            ["demab does not read parameter 'alpha'", "it reads demab_radius, demab_best_arm"],
        ),
        (["--algorithm", "no-communication", "--param", "k_prime=2"], ["it reads alpha)"]),
        (["--param", "k_prime=x"], ["k_prime must be an integer"]),
        (["--param", "k_prime=2.5"], ["k_prime must be an integer"]),
        (["--param", "k_prime=0"], ["k_prime must be a positive integer"]),
        (["--param", "alpha=nan"], ["alpha must be a finite number"]),
        (["--param", "alpha=-1"], ["alpha must be a positive finite number"]),
        (["--param", "k_prime"], ["--param takes NAME=VALUE"]),
        (["--param", "k_prime=4", "--param", "k_prime=5"], ["--param k_prime given twice"]),
        (["--alpha", "1", "--param", "alpha=2"], ["give --alpha or --param alpha"]),
        (["--algorithm", "demab", "--param", "demab_best_arm=owm"], ["demab_best_arm must be"]),
        (["--algorithm", "demab", "--alpha", "2"], ["--param demab_radius="]),
        (["--algorithm", "coop-ucb2", "--param", "consensus_kappa=2"], ["kappa"]),
    ],
)
def test_a_refused_param_is_one_line_exit_2(args, needles, capsys):
    code, out, err = invoke([*RUN, *args], capsys)
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


def test_algorithms_parameters_lists_what_param_sets(capsys):
    from mamab import ALGORITHMS
    from mamab.algorithms.registry import lookup

    code, out, _ = invoke(["algorithms", "--parameters"], capsys)
    assert code == 0
    blocks, current = {}, None
    for line in out.splitlines()[1:]:
        if not line.startswith(" "):
            current = blocks.setdefault(line.split()[0], [])
        else:
            current.append(line.split()[0])
    for algorithm in ALGORITHMS:
        assert blocks[algorithm] == list(lookup(algorithm).reads), algorithm
    assert "ceil(K/N) + K_G" in out and "demab_radius" in out


# -- typos: the nearest valid name ----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--algorithm", "lcc-ucv"], "unknown algorithm 'lcc-ucv'; did you mean 'lcc-ucb'?"),
        ([*RUN, "--graph", "rign"], "unknown graph 'rign'; did you mean 'ring'?"),
        ([*RUN, "--reward", "gausian"], "did you mean 'gaussian'?"),
        ([*RUN, "--attack", "wrost"], "did you mean 'worst'?"),
        ([*RUN, "--engine", "refrence"], "did you mean 'reference'?"),
        (["reproduce", "--preset", "papr"], "unknown preset 'papr'; did you mean 'paper'?"),
        (["reproduce", "--format", "pfd"], "did you mean 'pdf'?"),
        (["sweep", "x.toml", "--executor", "dsak"], "did you mean 'dask'?"),
        (["run", "--algorithm", "zzz"], "unknown algorithm 'zzz'; choose one of lcc-ucb"),
    ],
)
def test_a_typo_suggests_the_nearest_name(args, needle, capsys):
    code, _, err = invoke(args, capsys)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_python_typos_suggest_too():
    from mamab import Config, ConfigError
    from mamab.algorithms.registry import lookup

    with pytest.raises(ConfigError, match="did you mean 'lcc-ucb-graph'"):
        lookup("lcc-ucb-grpah")
    with pytest.raises(ConfigError, match="did you mean 'erdos-renyi'"):
        Config("lcc-ucb", 3, 9, 100, graph="erdos-renyl")
    with pytest.raises(ConfigError, match="did you mean 'gaussian'"):
        Config("lcc-ucb", 3, 9, 100, reward="Gaussian")


# -- counts past their internal bound -----------------------------------------------------


@pytest.mark.parametrize("flag", ["--runs", "-N", "--seed", "-T"])
def test_a_huge_count_is_too_large_without_the_internal_bound(flag, capsys):
    code, _, err = invoke([*RUN, flag, str(10**20)], capsys)
    assert code == 2 and "too large" in err and len(err.strip().splitlines()) == 1, err
    assert str(2**62) not in err and str(2**63 - 1) not in err


# -- live commands: --param passes, simulated faults are refused in one line ---------------


@pytest.mark.parametrize("flag", ["--loss", "--delay", "--crash-rate", "--recover-after"])
@pytest.mark.parametrize("command", ["live", "agent"])
def test_live_commands_refuse_simulated_faults(command, flag, tmp_path, capsys):
    args = [command, "--algorithm", "lcc-ucb", flag, "1"]
    if command == "agent":
        args += ["--roster", str(tmp_path / "r.toml"), "--id", "0", "--secret", str(tmp_path)]
    code, _, err = invoke(args, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{flag} is not simulated on a live network" in err and "mamab run" in err
    assert not list(tmp_path.iterdir())


def test_live_flags_carry_the_parameters():
    from mamab.live.fleet import problem_flags

    config = small("lcc-ucb-relay", ["relay_k_prime=degree", "k_prime=4", "alpha=3"])
    flags = problem_flags(config, sync=True)
    assert flags[flags.index("--alpha") + 1] == "3.0"
    params = [flags[i + 1] for i, f in enumerate(flags) if f == "--param"]
    assert params == ["k_prime=4", "relay_k_prime=degree"]
    assert small("lcc-ucb-relay", [*params, "alpha=3"]) == config  # the same run
    assert "--param" not in problem_flags(small("lcc-ucb-relay"), sync=True)  # as before


def test_a_node_parses_back_the_configuration_of_its_flags(tmp_path):
    """`mamab live` starts `mamab agent` with problem_flags(config): parsed by the agent
    command, they give back the same configuration, parameters included."""
    from mamab.live.commands import agent
    from mamab.live.fleet import problem_flags
    from mamab.options import problem_config

    own = {"roster", "node_id", "secret", "run", "sync", "timeout", "out"}
    own |= {"checkpoint", "checkpoint_every", "resume", "bind"}
    for algorithm, params in [
        ("lcc-ucb-relay", ["relay_k_prime=degree", "k_prime=4", "alpha=3"]),
        ("demab", ["demab_radius=16", "demab_best_arm=own"]),
        ("dducb", ["dducb_epsilon=0.1", "dducb_index=per-stage"]),
        ("lcc-ucb", []),
    ]:
        config = small(algorithm, params, runs=1)
        head = ["--roster", "r", "--id", "0", "--secret", "s"]
        ctx = agent.make_context("agent", [*head, *problem_flags(config, sync=True)])
        problem = {k: v for k, v in ctx.params.items() if k not in own}
        assert problem_config(**problem, runs=1) == config, algorithm


# -- docs name only flags that exist -------------------------------------------------------

DOCS = [
    Path(__file__).parents[1] / "README.md",
    *(Path(__file__).parents[1] / "docs").rglob("*.md"),
]


def documented_commands() -> list[tuple[str, str, str]]:
    """(file, command, flag) of every ``mamab <command> ... --flag`` line in a bash block."""
    found = []
    for path in DOCS:
        for block in re.findall(r"```(?:bash|console|sh)\n(.*?)```", path.read_text(), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split("#", 1)[0].lstrip("$ ")
                match = re.match(r"mamab (?:--debug )?([a-z]+)\b(.*)", line.strip())
                if match:
                    for flag in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", match.group(2)):
                        found.append((path.name, match.group(1), flag))
    return found


def test_docs_name_only_flags_that_exist():
    ctx = click.Context(cli, info_name="mamab")
    wrong = []
    for name, command, flag in documented_commands():
        found = cli.get_command(ctx, command)
        if found is None:
            wrong.append(f"{name}: no command {command}")
            continue
        flags = {o for p in found.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        if flag not in flags:
            wrong.append(f"{name}: mamab {command} has no {flag}")
    assert len(documented_commands()) > 30
    assert wrong == []


def test_param_for_plugins_follows_their_declared_parameters(plugins):
    import mamab
    from mamab.algorithms.registry import lookup
    from mamab.algorithms.ucb.spec import make_no_communication
    from mamab.cli_params import algorithm_params

    mode = mamab.Parameter("mode", "fast", "a name")
    rate = mamab.Parameter("rate", 0.1, "a number")
    plugins("declared", make_no_communication, parameters=(mode, rate, "flag"))
    plugins("anything", make_no_communication)
    spec = lookup("declared")
    params = algorithm_params(spec, ["mode=1", "rate=2", "flag=true", "alpha=3"])
    assert params.options == {"mode": "1", "rate": 2, "flag": True}  # text stays text
    assert params.alpha == 3.0
    with pytest.raises(
        mamab.ConfigError,
        match=r"does not read parameter 'k_prime' \(it reads "
        r"alpha, mode, rate, flag\)",
    ):
        algorithm_params(spec, ["k_prime=3"])
    with pytest.raises(mamab.ConfigError, match="did you mean 'rate'"):
        algorithm_params(spec, ["rat=3"])
    free = algorithm_params(lookup("anything"), ["whatever=x"])  # it takes any of its own
    assert free.options == {"whatever": "x"}
    with pytest.raises(mamab.ConfigError, match=r"\(it reads alpha and any parameter of its own\)"):
        algorithm_params(lookup("anything"), ["k_prime=3"])


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        ({"k_prme": 3}, "unknown key 'k_prme'; did you mean 'k_prime'?"),
        ({"params": {"k_prme": 3}}, "lcc-ucb takes no parameter 'k_prme'; did you mean 'k_prime'?"),
        ({"graph": "rign"}, "unknown graph 'rign'; did you mean 'ring'?"),
        ({"algorithms": ["lcc-ucb-grpah"]}, "did you mean 'lcc-ucb-graph'?"),
    ],
)
def test_a_sweep_file_typo_suggests_the_nearest_name(block, needle):
    from mamab import ConfigError
    from mamab.experiments.spec import parse_spec

    experiment = {"name": "a", "algorithms": ["lcc-ucb"], "agents": 3, "arms": 9, "horizon": 100}
    with pytest.raises(ConfigError, match=re.escape(needle)):
        parse_spec({"name": "typo", "experiments": [{**experiment, **block}]}, "typo.toml")


def test_reproduce_log_y_draws_on_a_log_regret_axis(tmp_path, monkeypatch):
    """`reproduce --log-y` hands the drawing a log-y style (and none without the flag)."""
    import types

    from click.testing import CliRunner

    import mamab.experiments.reproduce as reproduce_module

    styles = []

    def fake(spec, out, *, style, **_):
        styles.append(style)
        return types.SimpleNamespace(summary=[], seconds=0.0)

    monkeypatch.setattr(reproduce_module, "reproduce", fake)
    for flags in (["--log-y"], []):
        got = CliRunner().invoke(cli, ["reproduce", "--quick", "--out", str(tmp_path), *flags])
        assert got.exit_code == 0, got.output
    assert [s.log_y for s in styles] == [True, False]
