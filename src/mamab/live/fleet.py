"""``mamab live``: a whole live run on this machine, one process per node over loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mamab.algorithms.registry import central_server
from mamab.attacks import draw_malicious
from mamab.cli_types import malicious_flag
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.live.play import wire_spec
from mamab.live.roster import write_fleet
from mamab.live.transport import free_ports
from mamab.options import problem_config


def node_count(config: Config) -> int:
    """Agents, plus DEMAB's server."""
    return config.agents + (1 if central_server(config.algorithm) else 0)


def agent_command(config: Config, run: int, roster: Path, node: int, secret: Path, out: Path,
                  sync: bool, timeout: float) -> list[str]:  # fmt: skip
    """The ``mamab agent`` command line of one node (the problem flags of ``config``)."""
    command = [sys.executable, "-m", "mamab", "agent", "--roster", str(roster), "--id", str(node),
               "--secret", str(secret), "--algorithm", config.algorithm,
               "-N", str(config.agents), "-K", str(config.arms), "-T", str(config.horizon),
               "--seed", str(config.seed), "--run", str(run), "--graph", config.graph,
               "--reward", config.reward, "--sigma", repr(config.sigma),
               "--timeout", repr(timeout), "--out", str(out)]  # fmt: skip
    if config.edge_prob is not None:
        command += ["--edge-prob", repr(config.edge_prob)]
    if config.params.alpha is not None:
        command += ["--alpha", repr(config.params.alpha)]
    if config.malicious:
        command += ["--malicious", malicious_flag(config.malicious), "--attack", config.attack]
    return [*command, "--sync" if sync else "--async"]


def run_fleet(config: Config, run: int, *, sync: bool, timeout: float,
              directory: Path | None = None) -> list[dict | None]:  # fmt: skip
    """Start every node of run ``run`` as a process on free loopback ports; their records.

    A node that dies (killed, crashed) has no record (None); the others finish without it.
    Keys, logs and records go to ``directory`` (default: a private temporary directory, removed
    afterwards). Every process started is stopped, by its id, whatever happens here.
    """
    if directory is None:
        with tempfile.TemporaryDirectory(prefix="mamab-live-") as tmp:
            return run_fleet(config, run, sync=sync, timeout=timeout, directory=Path(tmp))
    m = node_count(config)
    roster = write_fleet([f"tcp://127.0.0.1:{port}" for port in free_ports(m)], directory)
    procs: list[subprocess.Popen] = []
    try:
        for node in range(m):
            with open(directory / f"agent-{node}.log", "wb") as log:
                procs.append(subprocess.Popen(
                    agent_command(config, run, roster, node, directory / f"agent-{node}.secret",
                                  directory / f"agent-{node}.json", sync, timeout),
                    stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL,
                    env={**os.environ, "MAMAB_PARENT_PID": str(os.getpid())},
                ))  # fmt: skip
        for proc in procs:
            proc.wait()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
    records: list[dict | None] = []
    for node, proc in enumerate(procs):
        path = directory / f"agent-{node}.json"
        if proc.returncode == 0 and path.is_file():
            records.append(json.loads(path.read_text()))
        elif proc.returncode == 2:  # an input error: the node said why in one line
            lines = (directory / f"agent-{node}.log").read_text().strip().splitlines()
            raise ConfigError(lines[-1].removeprefix("mamab: error: ") if lines else
                              f"node {node} refused its input")  # fmt: skip
        else:
            records.append(None)
    return records


def live_summary(config: Config, runs: list[list[dict | None]], sync: bool) -> dict:
    """``summary.json`` of a live run: the schema of ``mamab run``'s, plus the network's numbers.

    Nodes that stopped answering have null entries; ``final_regret_mean`` averages the honest
    agents that finished, ``malicious_agents`` lists the liars (when there are), and ``stopped``
    says which did not finish and when their neighbours noticed.
    """
    per_run = []
    for run, records in zip(config.run_ids, runs, strict=True):
        agents = records[: config.agents]

        def column(key: str, rows: list[dict | None] = agents) -> list:
            return [None if r is None else r[key] for r in rows]

        lies = draw_malicious(config.seed, run, config.agents, config.malicious)[0]
        liars = np.flatnonzero(lies).tolist()  # the run's draw: also for nodes that died
        finished = [r["final_regret"] for r, lied in zip(agents, lies, strict=True)
                    if r is not None and not lied]  # fmt: skip
        noticed: dict[int, int] = {}
        for record in records:
            for peer, step in (record or {}).get("silent", {}).items():
                noticed[int(peer)] = min(step, noticed.get(int(peer), step))
        stopped = sorted({i for i, r in enumerate(records) if r is None} | noticed.keys())
        per_run.append({
            "run": run,
            "final_regret_per_agent": column("final_regret"),
            "final_regret_mean": float(np.mean(finished)) if finished else None,
            **({"malicious_agents": liars} if liars else {}),
            "messages_sent_per_agent": column("messages_sent"),
            "bits_sent_per_agent": column("bits_sent"),
            "messages_received_per_agent": column("messages_received"),
            "bits_received_per_agent": column("bits_received"),
            "wire_bytes_sent_per_agent": column("wire_bytes_sent"),
            "wire_bytes_received_per_agent": column("wire_bytes_received"),
            "refused_per_node": [None if r is None else r["refused"] for r in records],
            "waits_per_agent": column("waits"),
            "seconds_per_agent": column("seconds"),
            "stopped": [{"node": i, "noticed_at_step": noticed.get(i)} for i in stopped],
        })  # fmt: skip
    return {
        "algorithm": config.algorithm,
        "agents": config.agents,
        "arms": config.arms,
        "horizon": config.horizon,
        "runs": config.runs,
        "seed": config.seed,
        "reward": config.reward,
        "graph": config.graph,
        "mode": "sync" if sync else "async",
        "per_run": per_run,
    }


def run_live(config: Config, *, sync: bool, timeout: float, progress=None) -> dict:
    """Every run of ``config`` live, one after the other; the summary."""
    wire_spec(config)  # an algorithm the wire format does not know is refused before any start
    flags = problem_config(config.algorithm, config.agents, config.arms, config.horizon,
                           config.seed, config.graph, config.edge_prob, config.reward,
                           config.sigma, config.params.alpha, runs=config.runs,
                           first_run=config.first_run, malicious=config.malicious,
                           attack=config.attack)  # fmt: skip
    if flags != config:
        raise ConfigError(
            "a live run passes its nodes only the problem flags of mamab run (algorithm, N, K, "
            "T, seed, graph file or name, edge probability, reward, sigma, alpha, malicious, "
            "attack); this "
            "configuration sets other fields"
        )
    runs = []
    for run in config.run_ids:
        start = time.monotonic()
        runs.append(run_fleet(config, run, sync=sync, timeout=timeout))
        if progress is not None:
            progress(run, time.monotonic() - start)
    return live_summary(config, runs, sync)
