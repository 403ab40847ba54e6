"""The ``mamab`` command. Every input error ends as one line on stderr and exit code 2.

Start-up is kept short: this module imports only click; numpy, networkx, numba, pyarrow,
matplotlib and the live network's modules load inside the commands that need them, so
``mamab --help`` answers in about a tenth of a second (benchmarks/README.md).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mamab.cli_types import ENGINES, LazyChoice, SuggestChoice
from mamab.errors import ConfigError, PluginError
from mamab.options import fault_options, problem_config, problem_options

if TYPE_CHECKING:
    import pyarrow as pa

    from mamab.config import Config
    from mamab.result import Result


#: Commands defined in other modules: name -> (module, attribute, one-line help for the listing).
LAZY_COMMANDS = {
    "agent": (
        "mamab.live.commands",
        "agent",
        "Run one node of a live run in this process, over the roster's authenticated network.",
    ),
    "live": (
        "mamab.live.commands",
        "live",
        "Run every agent (and DEMAB's server) as its own process over authenticated loopback.",
    ),
}


class LazyGroup(click.Group):
    """A group whose listed commands from ``LAZY_COMMANDS`` are imported when invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY_COMMANDS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS and name not in self.commands:
            module, attribute, _ = LAZY_COMMANDS[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list with each command's whole summary (wrapped, never cut short), without
        importing the lazy commands for their help lines."""
        rows = []
        for name in self.list_commands(ctx):
            if name in LAZY_COMMANDS and name not in self.commands:
                rows.append((name, LAZY_COMMANDS[name][2]))
            elif not (command := self.commands[name]).hidden:
                rows.append((name, summary(command)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def summary(command: click.Command) -> str:
    """A command's short help, else the first paragraph of its help, on one line."""
    if command.short_help:
        return command.short_help
    text = inspect.cleandoc(command.help or "").split("\n\n", 1)[0]
    return " ".join(text.split())


#: Set by ``mamab --debug``: an error's traceback is printed before its one line.
DEBUG = False


@click.group(cls=LazyGroup)
@click.version_option(package_name="mamab")
@click.option(
    "--debug",
    is_flag=True,
    help="On an error (a plugin's failure, a refused input), print the traceback "
    "before the one-line message.",
)
def cli(debug: bool) -> None:
    """Cooperative multi-agent bandits under limited communication."""
    global DEBUG
    DEBUG = debug


#: ``--yes``: run work estimated at more than a day (mamab.resources.CONFIRM_SECONDS).
YES = click.option(
    "--yes", is_flag=True, help="Run work estimated at more than 24 hours (refused without it)."
)


@cli.command()
@problem_options
@click.option(
    "--runs",
    type=int,
    default=10,
    show_default=True,
    help="Independent runs (new means, graph, noise).",
)
@click.option(
    "--engine",
    type=ENGINES,
    default="fast",
    show_default=True,
    help="fast (numba) or reference (online agents); results are identical. "
    "An algorithm without a fast kernel runs on the reference engine.",
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
@fault_options
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Directory for regret.parquet, summary.json and metadata.json [default: none, the "
    "table is printed only].",
)
@YES
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
    malicious: int | tuple[int, ...],
    attack: str,
    params: tuple[str, ...],
    engine: str,
    jobs: int | None,
    grid_points: int,
    loss: float,
    delay: float,
    crash_rate: float,
    recover_after: int,
    out: Path | None,
    yes: bool,
) -> None:
    """Simulate one algorithm and print median final regret and bits per agent."""
    config = problem_config(
        algorithm,
        agents,
        arms,
        horizon,
        seed,
        graph,
        edge_prob,
        reward,
        sigma,
        alpha,
        malicious,
        attack,
        params=params,
        runs=runs,
        loss=loss,
        delay=delay,
        crash_rate=crash_rate,
        recover_after=recover_after,
        grid_points=grid_points,
    )
    if out is not None:
        from mamab.outdir import check_ours
        from mamab.storage import check_out_dir

        check_out_dir(out)  # before the work: a bad --out must not cost the whole simulation
        check_ours(out, "run")  # nor one holding the user's files, or a sweep's
    from mamab.outdir import claimed  # the input is valid: now the heavy modules
    from mamab.stats import percent_text
    from mamab.storage import regret_table, strict_json, write_files
    from mamab.versions import provenance

    jobs = cap_jobs(jobs)
    result = _simulate_with_progress(config, engine, jobs, table=out is not None, yes=yes)
    stats = result.statistics()  # agents that crashed are reported apart, in summary.json
    bits = stats["bits_sent_per_agent_median"]
    used, total = stats["final_regret_runs"], stats["runs"]
    click.echo(
        f"{'algorithm':<20} {'median final regret/agent':>26} {'band':>20} {'coverage':>13} "
        f"{'runs':>7} {'median bits/agent':>18}"
    )
    if not used:
        click.echo(
            f"{algorithm:<20} {'n/a (no honest agent survived)':>26} {'':>20} {'':>13} "
            f"{f'0/{total}':>7} {bits:>18.0f}"
        )
    else:
        lo, hi = stats["final_regret_band"]
        coverage = percent_text(stats["final_regret_band_coverage"])
        click.echo(
            f"{algorithm:<20} {stats['final_regret_median']:>26.1f} {f'[{lo:.1f}, {hi:.1f}]':>20} "
            f"{coverage:>13} {f'{used}/{total}':>7} {bits:>18.0f}"
        )
    if used < total:
        left = stats["runs_left_out"]
        which = f"run{'s' if len(left) > 1 else ''} {', '.join(map(str, left))}"
        click.echo(
            f"mamab: warning: {total - used} of {total} runs ({which}) kept no honest agent "
            f"alive to T; the regret median and band use the other {used}",
            err=True,
        )
    if out is not None:
        table, meta, summary = regret_table(result), provenance(result), result.summary()
        with claimed(out, "run") as directory:  # one writer at a time: never a mixed set
            write_files(
                {
                    directory / "regret.parquet": lambda tmp: write_table(table, tmp),
                    directory / "metadata.json": lambda tmp: tmp.write_text(strict_json(meta)),
                    directory / "summary.json": lambda tmp: tmp.write_text(strict_json(summary)),
                }
            )
        click.echo(f"wrote {directory / 'summary.json'}")


#: Work estimated to last this many seconds is announced (None: mamab.resources.LONG_SECONDS).
LONG_SECONDS: float | None = None


def simulate(config: Config, **options) -> Result:
    """:func:`mamab.simulate.simulate`, imported when a command first simulates."""
    from mamab.simulate import simulate as run

    return run(config, **options)


def _simulate_with_progress(
    config: Config, engine: str, jobs: int | None, table: bool, yes: bool = False
) -> Result:
    """Estimate first (refuse what cannot fit, or lasts over a day without ``--yes``; announce
    long work), then simulate with progress (a bar on a terminal, plain lines elsewhere)."""
    from mamab import resources
    from mamab.progress import Progress

    found = resources.estimate(config, engine, jobs, table=table)
    resources.check(found, allow_long=yes, confirm="add --yes to run it anyway")
    if engine == "fast":  # refused work compiles nothing
        from mamab.engine.warmup import compile_notice

        compile_notice([config.algorithm])
    long = found.seconds >= (resources.LONG_SECONDS if LONG_SECONDS is None else LONG_SECONDS)
    if long:
        click.echo(f"mamab: estimated {found.describe()}", err=True)
    tty = sys.stderr.isatty()
    with Progress(
        found.agent_steps, config.algorithm, "agent-steps", enabled=long or not tty
    ) as bar:
        return simulate(config, engine=engine, jobs=jobs, progress=bar.update, allow_long=True)


def cap_jobs(jobs: int | None) -> int | None:
    """``--jobs`` capped at the cores this process may use, said once on stderr."""
    from mamab.resources import cores

    available = cores()
    if jobs is not None and jobs > available:
        click.echo(f"mamab: --jobs {jobs} capped at the {available} cores available", err=True)
        return available
    return jobs


JOBS = click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes for tasks [default: all cores].",
)


#: Summary fields the table always shows, or that never tell configurations apart by themselves.
SHOWN = (
    "experiment",
    "figure",
    "algorithm",
    "agents",
    "arms",
    "horizon",
    "config_id",
    "graph_sha256",
    "runs",
    "seed",
    "grid_points",
)


def _varying_text(rows: list[dict[str, str]]) -> list[str]:
    """Per row, the other configuration fields that vary across rows ('sigma=0.5, k_prime=3')."""
    from mamab.columns import field_text

    stats = (
        "final_regret_",
        "bits_sent_",
        "messages_sent_",
        "diameter_",
        "max_degree_",
        "crashed_",
    )
    every = dict.fromkeys(k for r in rows for k in r)  # experiments may differ (extra.<name>)
    keys = [k for k in every if k not in (*SHOWN, "extra") and not k.startswith(stats)]
    varying = [k for k in keys if len({r.get(k, "") for r in rows}) > 1]

    def text(value: str) -> str:
        if not value:
            return "default"
        try:
            return field_text(float(value)) if value[0] not in "[" else field_text(value)
        except ValueError:
            return value

    return [", ".join(f"{k}={text(r.get(k, ''))}" for k in varying) for r in rows]


def _regret_cells(r: dict[str, str]) -> tuple[str, str, str, str]:
    """(median, band, coverage, runs used/runs) of a summary row, 'n/a' where no run counted."""
    from mamab.stats import percent_text

    runs = f"{r.get('final_regret_runs', r['runs'])}/{r['runs']}"
    if not r["final_regret_median"]:  # no run kept an honest agent alive
        return "n/a", "", "", runs
    band = f"[{float(r['final_regret_ci_low']):.1f}, {float(r['final_regret_ci_high']):.1f}]"
    return (
        f"{float(r['final_regret_median']):.1f}",
        band,
        percent_text(float(r["final_regret_ci_coverage"])),
        runs,
    )


def _print_summary(rows: list[dict[str, str]]) -> None:
    """One line per configuration; the fields that vary besides N, K, T close the line.

    The band's coverage is the one it achieves (87.5% with 4 runs), and runs counts the runs
    the regret median uses of all; a warning on stderr when some were left out.
    """
    settings = _varying_text(rows)
    click.echo(
        f"{'experiment':<16} {'algorithm':<20} {'N':>5} {'K':>5} {'T':>7} "
        f"{'median regret/agent':>20} {'band':>22} {'coverage':>8} {'runs':>7} {'bits/agent':>12}"
        + ("  setting" if any(settings) else "")
    )
    short = 0
    for r, setting in zip(rows, settings, strict=True):
        median, band, coverage, runs = _regret_cells(r)
        short += r.get("final_regret_runs", r["runs"]) != r["runs"]
        click.echo(
            f"{r['experiment']:<16} {r['algorithm']:<20} {r['agents']:>5} {r['arms']:>5} {r['horizon']:>7} "
            f"{median:>20} {band:>22} {coverage:>8} {runs:>7} "
            f"{float(r['bits_sent_per_agent_median']):>12.4g}" + (f"  {setting}" if setting else "")
        )
    if short:
        click.echo(
            f"mamab: warning: {short} configuration{'s' if short > 1 else ''} had runs that kept no "
            "honest agent alive to T; their regret medians and bands use fewer runs (column runs; "
            "summary.csv: final_regret_runs)",
            err=True,
        )


def executor_options(command):
    """--executor, --scheduler and --shared, shared by the commands that run sweeps."""
    command = click.option(
        "--shared",
        is_flag=True,
        help="Dask workers write task files into OUT themselves (same path on all).",
    )(command)
    command = click.option(
        "--scheduler",
        default=None,
        help="Dask scheduler address, tcp://HOST:PORT; needed with --executor dask "
        "[default: none].",
    )(command)
    command = click.option(
        "--executor",
        type=SuggestChoice(["local", "dask"], "executor"),
        default="local",
        show_default=True,
        help="Where tasks run.",
    )(command)
    return command


def write_table(table: pa.Table, path: Path) -> None:
    """The long regret table as Parquet (a seam the full-disk test replaces)."""
    import pyarrow.parquet as pq

    pq.write_table(table, path)


def make_executor(executor: str, jobs: int | None, scheduler: str | None, shared: bool):
    from mamab.experiments.executors import LocalExecutor

    if executor == "dask":
        from mamab.experiments.dask_executor import DaskExecutor

        return DaskExecutor(scheduler=scheduler, shared=shared)
    if scheduler or shared:
        raise ConfigError("--scheduler and --shared go with --executor dask")
    return LocalExecutor(cap_jobs(jobs))


@cli.command()
@click.argument("config_file", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Results directory [default: ./<sweep name>-results].",
)
@JOBS
@executor_options
@YES
@click.option(
    "--no-figures",
    "figures",
    is_flag=True,
    flag_value=False,
    default=True,
    help="Write the tables only; `mamab plot` draws the figures later [default: draw "
    "them into OUT/figures].",
)
def sweep(
    config_file: Path,
    out: Path | None,
    jobs: int | None,
    executor: str,
    scheduler: str | None,
    shared: bool,
    yes: bool,
    figures: bool,
) -> None:
    """Run every configuration of a sweep TOML file, then draw its figures; rerunning resumes."""
    from mamab.experiments import load_spec
    from mamab.experiments.runner import run_sweep

    spec = load_spec(config_file)
    runner = make_executor(executor, jobs, scheduler, shared)
    out = out or Path(f"{spec.name}-results")

    def draw(outcome) -> None:
        """Under the sweep's lock, so figures match the tables; in the style of the last drawing
        (mamab plot, reproduce --format), else PNG + SVG; figures mamab drew before and does not
        redraw now are removed (figures/manifest.json)."""
        from mamab.experiments.reproduce import drawing_jobs
        from mamab.plots import draw_all

        draw_all(outcome.results, out, jobs=drawing_jobs(executor=runner))

    outcome = run_sweep(
        spec,
        out,
        executor=runner,
        allow_long=yes,
        confirm="add --yes to run it anyway",
        after=draw if figures else None,
    )
    _print_summary(outcome.summary)
    click.echo(
        f"{outcome.tasks_run} tasks run, {outcome.tasks_skipped} already done, "
        f"{outcome.agent_steps / max(outcome.seconds, 1e-9) / 1e6:.1f}M agent-steps/s"
    )


@cli.command()
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option("--bounds", is_flag=True, help="Overlay the theory's regret bounds (log scale).")
def plot(results_dir: Path, bounds: bool) -> None:
    """Redraw every figure of a finished sweep from its stored tables, without rerunning."""
    from mamab.experiments.aggregate import read_curves
    from mamab.experiments.reproduce import drawing_jobs
    from mamab.outdir import claimed
    from mamab.plots import draw_all

    with claimed(results_dir, create=False):  # no sweep rewrites the tables meanwhile
        drawn = draw_all(read_curves(results_dir), results_dir, bounds=bounds, jobs=drawing_jobs())
    for paths in drawn.values():
        click.echo(" ".join(str(p) for p in paths))


@cli.command()
@click.argument("results_dir", type=click.Path(path_type=Path))
def frontier(results_dir: Path) -> None:
    """Regret against bits per agent for every configuration of a finished sweep (+ figures)."""
    from mamab.experiments.aggregate import read_curves, varying
    from mamab.experiments.reproduce import drawing_jobs
    from mamab.outdir import claimed
    from mamab.plots import draw_all, frontier_points, panel_title, panels, pareto
    from mamab.stats import percent_text

    # held until the command ends: no sweep rewrites the tables meanwhile
    click.get_current_context().with_resource(claimed(results_dir, create=False))
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
            f"  {'configuration':<{width}} {'bits/agent':>12} {'regret/agent':>13} {'band':>22} "
            f"{'coverage':>8} {'runs':>7}  frontier"
        )
        order = sorted(range(len(points)), key=lambda i: points[i].bits)
        for i in order:
            p = points[i]
            runs = f"{p.band.runs}/{members[i].final_regret.shape[0]}"
            if not p.band.runs:  # no value: not on the frontier, said so
                click.echo(
                    f"  {p.label:<{width}} {p.bits:>12.4g} {'n/a':>13} {'':>22} {'':>8} {runs:>7}  "
                    "left out: no run kept an honest agent alive"
                )
                continue
            band = f"[{p.low:.1f}, {p.high:.1f}]"
            mark = "yes" if i in best else ""
            click.echo(
                f"  {p.label:<{width}} {p.bits:>12.4g} {p.regret:>13.1f} {band:>22} "
                f"{percent_text(p.band.coverage):>8} {runs:>7}  {mark}"
            )
    draw_all(results, results_dir, jobs=drawing_jobs())


@cli.command()
@click.option(
    "--preset",
    type=LazyChoice("mamab.experiments.spec", "PRESET_FAMILIES", "preset"),
    default="paper",
    show_default=True,
    help="paper: the paper's evaluation; malicious: honest regret against the number "
    "of liars (docs/faults.md).",
)
@click.option(
    "--quick", is_flag=True, help="Reduced preset (10 runs, T/5): under two minutes on two cores."
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("mamab-reproduction"),
    show_default=True,
    help="Directory for the figures, summary.csv, report.md and the tasks (rerunning resumes).",
)
@JOBS
@click.option("--bounds", is_flag=True, help="Overlay the theory's regret bounds on the figures.")
@click.option(
    "--alpha",
    type=float,
    default=None,
    help="Exploration constant of the paper's UCB algorithms where the preset leaves it to the "
    "default [default: 2, the paper's stated value; its figures fit 1].",
)
@click.option(
    "--format",
    "formats",
    type=SuggestChoice(["png", "pdf", "svg"], "format"),
    multiple=True,
    help="Figure format; repeat for several [default: png and svg].",
)
@click.option("--dpi", type=int, default=200, show_default=True, help="Resolution of PNG figures.")
@click.option("--log-x", is_flag=True, help="Time on a log scale in regret figures.")
@click.option(
    "--log-y",
    is_flag=True,
    help="Regret on a log scale: every curve whole, none leaving the axis (mamab plot keeps it).",
)
@executor_options
@YES
def reproduce(
    preset: str,
    quick: bool,
    out: Path,
    jobs: int | None,
    bounds: bool,
    alpha: float | None,
    formats: tuple[str, ...],
    dpi: int,
    log_x: bool,
    log_y: bool,
    executor: str,
    scheduler: str | None,
    shared: bool,
    yes: bool,
) -> None:
    """Rerun the paper's evaluation (or another preset): figures, summary.csv, report.md in OUT."""
    import time

    start = time.perf_counter()
    from mamab.experiments import load_preset
    from mamab.experiments.reproduce import reproduce as run_reproduction
    from mamab.experiments.reproduce import with_alpha
    from mamab.plots import Style

    style = Style(formats=formats or ("png", "svg"), dpi=dpi, log_x=log_x, log_y=log_y)
    spec = load_preset(f"{preset}-quick" if quick else preset)
    if alpha is not None:
        spec = with_alpha(spec, alpha)  # a bad value is refused before any work
    runner = make_executor(executor, jobs, scheduler, shared)
    report = run_reproduction(
        spec,
        out,
        executor=runner,
        bounds=bounds,
        alpha=alpha,
        style=style,
        allow_long=yes,
        confirm="add --yes to run it anyway",
    )
    _print_summary(report.summary)
    took = time.perf_counter() - start
    click.echo(f"report: {out / 'report.md'} ({took:.0f} s, of which tasks {report.seconds:.0f} s)")


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


@cli.command()
def warmup() -> None:
    """Compile every fast kernel now (the first run otherwise spends ~20 s doing it)."""
    import time

    from mamab.engine.warmup import warmup as compile_all
    from mamab.engine.warmup import warmup_steps
    from mamab.progress import Progress

    start = time.perf_counter()
    total = sum(1 for _ in warmup_steps())
    with Progress(total, "compiling kernels", "steps") as bar:
        compile_all(
            starting=lambda label: bar.describe(note=label),
            done=lambda label: bar.update(1),
        )
    click.echo(f"kernels ready ({time.perf_counter() - start:.1f} s)")


@cli.command()
@click.option(
    "--parameters",
    is_flag=True,
    help="List instead each algorithm's parameters (what `--param NAME=VALUE` sets), "
    "with their defaults.",
)
def algorithms(parameters: bool) -> None:
    """List every algorithm: built in or plugin, its engine, whether `mamab live` runs it, whether
    it takes faults (loss, delay, crashes) and liars (--malicious)."""
    from mamab.algorithms.registry import algorithms as every_algorithm

    found, broken = every_algorithm()
    if parameters:
        _print_parameters(found)
        found = []
    width = max((len(a.name) for a in found), default=0)
    if found:
        click.echo(f"{'algorithm':<{width}}  {'engine':<9}  live  faults  liars  description")
    for a in found:
        engine = "fast" if a.fast else "reference"
        where = "" if a.source == "built-in" else f" [{a.source}]"
        live = a.wire is not None and a.source == "built-in"
        live, faults, liars = ("yes" if flag else "no" for flag in (live, a.faults, a.forge))
        click.echo(
            f"{a.name:<{width}}  {engine:<9}  {live:<4}  {faults:<6}  {liars:<5}  "
            f"{a.description}{where}"
        )
    for line in broken:
        click.echo(f"mamab: {line}", err=True)


def _print_parameters(specs) -> None:
    """Per algorithm, each parameter ``--param`` sets: its name, default and meaning."""
    from mamab.algorithms.params import FIELD_DOCS
    from mamab.algorithms.spec import Parameter

    listing = []
    for spec in specs:
        rows = []
        for name in spec.reads:
            default, doc = FIELD_DOCS.get(name, ("", ""))
            if name == spec.alpha_from and spec.default_alpha is not None:
                default = f"{spec.default_alpha:g}"
            elif name == "k_prime" and "relay_k_prime" in spec.reads:
                default = "from relay_k_prime"
            rows.append((name, default, doc))
        for p in spec.parameters or ():
            named = isinstance(p, Parameter)
            rows.append((p.name, repr(p.default), p.doc) if named else (p, "", ""))
        if spec.parameters is None:
            rows.append(("(any)", "", "a plugin parameter of its own, NAME=VALUE"))
        listing.append((spec.name, rows))
    every = [row for _, rows in listing for row in rows]
    name_width = max((len(r[0]) for r in every), default=0)
    default_width = max((len(r[1]) for r in every), default=0)
    click.echo(f"{'parameter':<{name_width + 2}}  {'default':<{default_width}}  meaning")
    for algorithm, rows in listing:
        click.echo(algorithm if rows else f"{algorithm} (no parameters)")
        for name, default, doc in rows:
            click.echo(f"  {name:<{name_width}}  {default:<{default_width}}  {doc}".rstrip())


def _one_line_warnings() -> None:
    """Show mamab's own warnings (the reference fallback) as one line on stderr."""
    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        registry = sys.modules.get("mamab.algorithms.registry")  # imported if it warned
        if registry is not None and issubclass(category, registry.ReferenceEngineWarning):
            click.echo(f"mamab: note: {message}", err=True)
        else:
            default(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def _fail(err: BaseException, message: str, code: int) -> None:
    """One line on stderr (after the traceback under ``--debug``), then exit with ``code``."""
    if DEBUG:
        import traceback

        traceback.print_exception(err, file=sys.stderr)
    click.echo(f"mamab: error: {' '.join(message.split())}", err=True)
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: turn usage and configuration errors into one line and exit code 2, a
    plugin's failure into one line and exit code 1 (tracebacks under ``--debug`` only)."""
    global DEBUG
    DEBUG = False
    os.environ.setdefault("MPLBACKEND", "Agg")  # figures are files: no display, ever
    _one_line_warnings()
    if not (sys.argv[1:] if argv is None else argv):  # bare `mamab`: the help, not an error
        click.echo(cli.get_help(click.Context(cli, info_name="mamab")))
        sys.exit(0)
    try:
        code = cli.main(args=argv, prog_name="mamab", standalone_mode=False)
    except (click.ClickException, ConfigError) as err:
        message = err.format_message() if isinstance(err, click.ClickException) else str(err)
        _fail(err, message, 2)
    except PluginError as err:  # also from a sweep's worker process: pickled with its message
        _fail(err, str(err), 1)
    except click.Abort:
        click.echo("mamab: interrupted", err=True)
        sys.exit(130)
    except MemoryError:  # the estimate missed: still one line, and nothing half-written
        click.echo(
            "mamab: error: out of memory; reduce agents, arms, runs or grid points", err=True
        )
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
