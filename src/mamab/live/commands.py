"""The ``mamab agent`` and ``mamab live`` commands."""

from __future__ import annotations

import os
from pathlib import Path

import click

from mamab.options import problem_config, problem_options, refused_live

MODE = click.option(
    "--sync/--async",
    "sync",
    default=False,
    show_default=True,
    help="sync: wait for the neighbours at each round (results equal mamab run's); "
    "async: never wait.",
)
TIMEOUT = click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds a sync round waits for a neighbour before marking it silent.",
)


@click.command()
@click.option(
    "--roster",
    required=True,
    type=click.Path(path_type=Path),
    help="roster.toml: every node's id, address and public key.",
)
@click.option("--id", "node_id", required=True, type=int, help="This node's id in the roster.")
@click.option(
    "--secret",
    required=True,
    type=click.Path(path_type=Path),
    help="This node's secret key file (mode 0600).",
)
@click.option(
    "--bind",
    default=None,
    metavar="tcp://HOST:PORT",
    help="Listen here instead of at this node's roster address (e.g. tcp://0.0.0.0:5000 while "
    "the roster gives a name the peers dial) [default: the roster address].",
)
@problem_options
@refused_live
@click.option(
    "--run",
    "run",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Which run's seed streams (means, graph, noise) to use.",
)
@MODE
@TIMEOUT
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write this node's result.json [default: print it].",
)
@click.option(
    "--checkpoint",
    type=click.Path(path_type=Path),
    default=None,
    help="Keep this node's checkpoint in this file (for --resume) [default: none, no checkpoints].",
)
@click.option(
    "--checkpoint-every",
    type=click.FloatRange(min=0),
    default=2.0,
    show_default=True,
    help="Seconds between checkpoints (at a step with an exchange; after any step "
    "once 4x that passed).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue from --checkpoint (after a crash or kill), as a new incarnation.",
)
def agent(
    roster: Path,
    node_id: int,
    secret: Path,
    run: int,
    sync: bool,
    timeout: float,
    out: Path | None,
    checkpoint: Path | None,
    checkpoint_every: float,
    resume: bool,
    bind: str | None = None,
    **problem,
) -> None:
    """Run one node of a live run in this process, over the roster's authenticated network."""
    from mamab.algorithms.registry import require_wire
    from mamab.live.agent_process import run_agent
    from mamab.storage import write_json

    if parent := os.environ.get("MAMAB_PARENT_PID"):  # started by `mamab live`: die with it
        from mamab.processes import die_with_parent

        die_with_parent(int(parent))
    config = problem_config(**problem, runs=1, first_run=run)
    require_wire(config.algorithm, sync)  # a plugin has no wire codec: one line, before any socket
    record = run_agent(
        config,
        run,
        roster,
        node_id,
        secret,
        sync=sync,
        timeout=timeout,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
        resume=resume,
        bind=bind,
    )
    if out is None:
        import json

        click.echo(json.dumps(record, indent=2))
    else:
        write_json(out, record)


@click.command()
@problem_options
@refused_live
@click.option(
    "--runs",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Independent runs (new means, graph, noise), one after the other.",
)
@MODE
@TIMEOUT
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Directory for summary.json and runs/ (rerunning resumes) [default: none, printed only].",
)
def live(runs: int, sync: bool, timeout: float, out: Path | None, **problem) -> None:
    """Run every agent (and DEMAB's server) as its own process over authenticated loopback."""
    from mamab.algorithms.registry import require_wire
    from mamab.live.fleet import node_count, run_live
    from mamab.processes import exit_on_signals
    from mamab.stats import percent_text
    from mamab.storage import prepare_out_dir, write_json

    config = problem_config(**problem, runs=runs)
    require_wire(config.algorithm, sync)  # a plugin has no wire codec: one line, before any process
    directory = prepare_out_dir(out) if out is not None else None
    click.echo(
        f"{runs} live runs of {node_count(config)} processes each "
        f"({'sync' if sync else 'async'}, loopback)",
        err=True,
    )
    from mamab.progress import Progress

    with Progress(runs, f"live {config.algorithm}", "runs") as bar:

        def ran(run: int, seconds: float | None) -> None:
            bar.write(f"run {run}: {'already done' if seconds is None else f'{seconds:.1f} s'}")
            bar.update(1)

        with exit_on_signals():  # SIGTERM, SIGHUP: stop the nodes, remove the keys, keep done runs
            summary = run_live(config, sync=sync, timeout=timeout, progress=ran, out=directory)
    stats = summary["statistics"]  # as mamab run's: runs without an honest finisher left out
    used, total = stats["final_regret_runs"], stats["runs"]
    if used:
        lo, hi = stats["final_regret_band"]
        click.echo(
            f"{config.algorithm}: median final regret/agent {stats['final_regret_median']:.1f} "
            f"[{lo:.1f}, {hi:.1f}] (band: {percent_text(stats['final_regret_band_coverage'])} "
            f"coverage; {used} of {total} runs)"
        )
    if used < total:
        click.echo(
            f"mamab: warning: {total - used} of {total} runs had no honest agent that finished; the "
            "median and band leave them out",
            err=True,
        )
    for r in summary["per_run"]:
        for s in r["silences"]:
            back = (
                "not back before they finished"
                if s["back_at_step"] is None
                else f"back at step {s['back_at_step']}"
            )
            click.echo(
                f"run {r['run']}: node {s['node']} was silent from step {s['from_step']}, "
                f"{back} ({s['seconds']:.1f} s; noticed by "
                f"{', '.join(map(str, s['noticed_by']))})"
            )
        for s in r["stopped"]:
            click.echo(
                f"run {r['run']}: node {s['node']} stopped answering "
                f"(noticed at step {s['noticed_at_step']})"
            )
    if directory is not None:
        write_json(directory / "summary.json", summary)
        click.echo(f"wrote {directory / 'summary.json'}")
