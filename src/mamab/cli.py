"""The ``mamab`` command. Every input error ends as one line on stderr and exit code 2."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import numpy as np

from mamab.agents import ALGORITHMS, AlgorithmParams
from mamab.config import ENGINES, Config
from mamab.errors import ConfigError
from mamab.problem import REWARD_MODELS
from mamab.simulate import simulate
from mamab.stats import median_band
from mamab.storage import prepare_out_dir, regret_table, write_json, write_parquet
from mamab.versions import provenance


@click.group()
@click.version_option(package_name="mamab")
def cli() -> None:
    """Cooperative multi-agent bandits under limited communication."""


@cli.command()
@click.option(
    "--algorithm", required=True, type=click.Choice(ALGORITHMS), help="Algorithm every agent runs."
)
@click.option(
    "--agents", "-N", "agents", type=int, default=10, show_default=True, help="Number of agents N."
)
@click.option(
    "--arms", "-K", "arms", type=int, default=100, show_default=True, help="Number of arms K."
)
@click.option(
    "--horizon", "-T", "horizon", type=int, default=10_000, show_default=True, help="Steps T."
)
@click.option(
    "--runs",
    type=int,
    default=10,
    show_default=True,
    help="Independent runs (new means, graph, noise).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Root seed of every run.")
@click.option(
    "--graph",
    default="complete",
    show_default=True,
    help="complete, erdos-renyi, ring, line, star, grid, or an edge-list file path.",
)
@click.option(
    "--edge-prob", type=float, default=None, help="Erdős–Rényi edge probability [default: 10/N]."
)
@click.option("--reward", type=click.Choice(REWARD_MODELS), default="bernoulli", show_default=True)
@click.option(
    "--sigma", type=float, default=1.0, show_default=True, help="Gaussian noise standard deviation."
)
@click.option(
    "--alpha",
    type=float,
    default=None,
    help="UCB exploration constant [default: 2; 4: gosine, dducb]",
)
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="fast",
    show_default=True,
    help="fast (numba) or reference (online agents); results are identical.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Threads for runs [default: all cores].",
)
@click.option(
    "--grid-points", type=int, default=200, show_default=True, help="Log-spaced regret records."
)
@click.option("--loss", type=float, default=0.0, show_default=True,
              help="Probability that each message is lost, independently.")  # fmt: skip
@click.option("--delay", type=float, default=0.0, show_default=True,
              help="Probability that a message (not lost) arrives one exchange late.")  # fmt: skip
@click.option("--crash-rate", type=float, default=0.0, show_default=True,
              help="Probability per agent and step of crashing (stops playing and talking).")  # fmt: skip
@click.option("--recover-after", type=int, default=0, show_default=True,
              help="Steps a crashed agent stays down before restarting with fresh state (0: never).")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Directory for results.")
def run(
    algorithm: str,
    agents: int,
    arms: int,
    horizon: int,
    runs: int,
    seed: int,
    graph: str,
    edge_prob: float | None,
    reward: str,
    sigma: float,
    alpha: float | None,
    engine: str,
    jobs: int | None,
    grid_points: int,
    loss: float,
    delay: float,
    crash_rate: float,
    recover_after: int,
    out: Path | None,
) -> None:
    """Simulate one algorithm and print median final regret and bits per agent."""
    config = Config(
        algorithm=algorithm,
        agents=agents,
        arms=arms,
        horizon=horizon,
        runs=runs,
        seed=seed,
        reward=reward,
        sigma=sigma,
        graph=graph,
        edge_prob=edge_prob,
        params=AlgorithmParams(alpha=alpha),
        loss=loss,
        delay=delay,
        crash_rate=crash_rate,
        recover_after=recover_after,
        grid_points=grid_points,
    )
    if out is not None and out.exists() and not out.is_dir():
        raise ConfigError(f"output path {out} is a file, not a directory")
    result = simulate(config, engine=engine, jobs=jobs)
    per_run = result.final_regret_mean()  # agents that crashed are reported apart, in summary.json
    med, lo, hi = median_band(per_run)
    bits = float(np.median(result.counts["bits_sent"]))
    click.echo(
        f"{'algorithm':<20} {'median final regret/agent':>26} {'95% band':>22} {'median bits/agent':>18}"
    )
    click.echo(f"{algorithm:<20} {med:>26.1f} {f'[{lo:.1f}, {hi:.1f}]':>22} {bits:>18.0f}")
    if out is not None:
        directory = prepare_out_dir(out)
        write_parquet(directory / "regret.parquet", regret_table(result))
        write_json(directory / "metadata.json", provenance(result))
        write_json(directory / "summary.json", result.summary())
        click.echo(f"wrote {directory / 'summary.json'}")


JOBS = click.option("--jobs", type=click.IntRange(min=1), default=None,
                    help="Worker processes for tasks [default: all cores].")  # fmt: skip


def _print_summary(rows: list[dict[str, str]]) -> None:
    click.echo(f"{'experiment':<16} {'algorithm':<20} {'N':>5} {'K':>5} {'T':>7} "
               f"{'median regret/agent':>20} {'95% band':>22} {'bits/agent':>12}")  # fmt: skip
    for r in rows:
        band = f"[{float(r['final_regret_ci_low']):.1f}, {float(r['final_regret_ci_high']):.1f}]"
        click.echo(f"{r['experiment']:<16} {r['algorithm']:<20} {r['agents']:>5} {r['arms']:>5} {r['horizon']:>7} "
                   f"{float(r['final_regret_median']):>20.1f} {band:>22} "
                   f"{float(r['bits_sent_per_agent_median']):>12.4g}")  # fmt: skip


def executor_options(command):
    """--executor, --scheduler and --shared, shared by the commands that run sweeps."""
    command = click.option("--shared", is_flag=True,
                           help="Dask workers write task files into OUT themselves (same path on all).")(command)  # fmt: skip
    command = click.option(
        "--scheduler", default=None, help="Dask scheduler address, tcp://HOST:PORT."
    )(command)
    command = click.option("--executor", type=click.Choice(["local", "dask"]), default="local",
                           show_default=True, help="Where tasks run.")(command)  # fmt: skip
    return command


def make_executor(executor: str, jobs: int | None, scheduler: str | None, shared: bool):
    from mamab.experiments.executors import LocalExecutor

    if executor == "dask":
        from mamab.experiments.dask_executor import DaskExecutor

        return DaskExecutor(scheduler=scheduler, shared=shared)
    if scheduler or shared:
        raise ConfigError("--scheduler and --shared go with --executor dask")
    return LocalExecutor(jobs)


@cli.command()
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Results directory [default: ./<sweep name>-results].")  # fmt: skip
@JOBS
@executor_options
def sweep(config_file: Path, out: Path | None, jobs: int | None, executor: str, scheduler: str | None,
          shared: bool) -> None:  # fmt: skip
    """Run every configuration of a sweep TOML file; rerunning resumes where it stopped."""
    from mamab.experiments import load_spec
    from mamab.experiments.runner import run_sweep

    spec = load_spec(config_file)
    runner = make_executor(executor, jobs, scheduler, shared)
    outcome = run_sweep(spec, out or Path(f"{spec.name}-results"), executor=runner)
    _print_summary(outcome.summary)
    click.echo(f"{outcome.tasks_run} tasks run, {outcome.tasks_skipped} already done, "
               f"{outcome.agent_steps / max(outcome.seconds, 1e-9) / 1e6:.1f}M agent-steps/s")  # fmt: skip


@cli.command()
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option("--bounds", is_flag=True, help="Overlay the theory's regret bounds (log scale).")
def plot(results_dir: Path, bounds: bool) -> None:
    """Redraw every figure of a finished sweep from its stored tables, without rerunning."""
    from mamab.experiments.aggregate import read_curves
    from mamab.plots import draw_all

    drawn = draw_all(read_curves(results_dir), results_dir, bounds=bounds)
    for paths in drawn.values():
        click.echo(" ".join(str(p) for p in paths))


@cli.command()
@click.argument("results_dir", type=click.Path(path_type=Path))
def frontier(results_dir: Path) -> None:
    """Regret against bits per agent for every configuration of a finished sweep (+ figures)."""
    from mamab.experiments.aggregate import read_curves, varying
    from mamab.plots import draw_all, frontier_points, panel_title, panels, pareto

    results = read_curves(results_dir)
    grouped = panels(results)  # one panel per setting; a config serving several figures once
    across = varying([m[0] for m in grouped.values()], tuple(k for k, _ in next(iter(grouped), ())))
    for members in grouped.values():
        points = frontier_points(members)  # one point per configuration, labelled distinctly
        best = pareto(points)
        width = max(20, *(len(p[0]) for p in points))
        title = panel_title(members, [k for k in across if k != "horizon"])
        click.echo(f"{title}, T = {members[0].config['horizon']}")
        click.echo(
            f"  {'configuration':<{width}} {'bits/agent':>12} {'regret/agent':>13} {'95% band':>22}  frontier"
        )
        order = sorted(range(len(points)), key=lambda i: points[i][1])
        for i in order:
            label, bits, regret, lo, hi = points[i]
            band = f"[{lo:.1f}, {hi:.1f}]"
            mark = "yes" if i in best else ""
            click.echo(f"  {label:<{width}} {bits:>12.4g} {regret:>13.1f} {band:>22}  {mark}")
    draw_all(results, results_dir)


@cli.command()
@click.option(
    "--quick", is_flag=True, help="Reduced preset (10 runs, T/5): under two minutes on two cores."
)
@click.option(
    "--out", type=click.Path(path_type=Path), default=Path("mamab-reproduction"), show_default=True
)
@JOBS
@click.option("--bounds", is_flag=True, help="Overlay the theory's regret bounds on the figures.")
@executor_options
def reproduce(quick: bool, out: Path, jobs: int | None, bounds: bool, executor: str, scheduler: str | None,
              shared: bool) -> None:  # fmt: skip
    """Rerun the paper's evaluation: figures, summary.csv and report.md in OUT."""
    from mamab.experiments import load_preset
    from mamab.experiments.reproduce import reproduce as run_reproduction

    runner = make_executor(executor, jobs, scheduler, shared)
    report = run_reproduction(
        load_preset("paper-quick" if quick else "paper"), out, executor=runner, bounds=bounds
    )
    _print_summary(report.summary)
    click.echo(f"report: {out / 'report.md'} ({report.seconds:.0f} s)")


@cli.command()
@click.option("--agents", "-N", type=int, required=True, help="Number of agents (nodes 0..N-1).")
@click.option("--port-base", type=int, required=True, help="Node i listens on port P+i.")
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Directory for the keys."
)
@click.option("--server", is_flag=True, help="Add DEMAB's central server as node N.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Host of every address.")
@click.option("--force", is_flag=True, help="Replace key files already in OUT.")
def keys(agents: int, port_base: int, out: Path, server: bool, host: str, force: bool) -> None:
    """Write a fleet roster (OUT/roster.toml) and one secret key per node (OUT/agent-<i>.secret)."""
    from mamab.live.roster import write_keys

    if agents < 1:
        raise ConfigError(f"--agents must be at least 1 (got {agents})")
    nodes = agents + int(server)
    roster = write_keys(nodes, port_base, out, host=host, force=force)
    click.echo(f"roster: {roster} ({nodes} nodes); secrets: {out}/agent-<i>.secret (mode 0600)")


from mamab.live.commands import agent, live  # noqa: E402  (the live network's commands)

cli.add_command(agent)
cli.add_command(live)


def main(argv: list[str] | None = None) -> None:
    """Entry point: turn usage and configuration errors into one line and exit code 2."""
    if not (sys.argv[1:] if argv is None else argv):  # bare `mamab`: the help, not an error
        click.echo(cli.get_help(click.Context(cli, info_name="mamab")))
        sys.exit(0)
    try:
        code = cli.main(args=argv, prog_name="mamab", standalone_mode=False)
    except (click.ClickException, ConfigError) as err:
        message = err.format_message() if isinstance(err, click.ClickException) else str(err)
        click.echo(f"mamab: error: {' '.join(message.split())}", err=True)
        sys.exit(2)
    except click.Abort:
        click.echo("mamab: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
